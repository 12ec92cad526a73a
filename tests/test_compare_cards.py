"""Comparing model cards: `cards.join_cards` (item ids, pooled labels, clear errors) and
`bayeval compare CARD_A CARD_B ...`."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayeval as be
from bayeval.cards import CardError, join_cards, load_card
from bayeval.cli import main

ROOT = Path(__file__).resolve().parents[1] / "models"


def write_card(folder: Path, df: pd.DataFrame, *, vet: str = "", columns: str = 'label = "label"\ntruth = "truth"'):
    """A small card folder: ``df`` (id, score, label, truth, ...) as its scores file."""
    folder.mkdir(parents=True)
    df.to_csv(folder / "scores.csv", index=False)
    (folder / "card.toml").write_text(f'''title = "{folder.name}"
description = "a test card"
[data]
file = "scores.csv"
score = "score"
id = "id"
{columns}
[model]
name = "calibration"
[sampling]
draws = 100
tune = 100
chains = 2
random_seed = 0
{vet}''')
    return folder


def pair(tmp_path: Path, n: int = 120, *, vet: str = '[vet]\ntext = "text"\nbatch_size = 8\n'):
    """Two cards of the same n items (the second's rows shuffled): "good" ranks the positives better."""
    rng = np.random.default_rng(3)
    truth = (rng.random(n) < 0.3).astype(int)
    ids = [f"x{j:03d}" for j in range(n)]
    good = pd.DataFrame({"id": ids, "score": np.round(2.5 * truth + rng.normal(0, 1, n), 5),
                         "label": pd.array([pd.NA] * n, dtype="Int64"), "truth": truth,
                         "text": [f"item {j}" for j in range(n)]})
    weak = pd.DataFrame({"id": ids, "score": np.round(0.5 * truth + rng.normal(0, 1, n), 5),
                         "label": pd.array([pd.NA] * n, dtype="Int64"), "truth": truth})
    a = write_card(tmp_path / "good", good, vet=vet)
    b = write_card(tmp_path / "weak", weak.sample(frac=1.0, random_state=0))
    return a, b, dict(zip(ids, truth.tolist(), strict=True))


def test_join_aligns_on_ids_and_pools_the_vetted_labels(tmp_path):
    a, b, truth = pair(tmp_path, n=20)
    fa, fb = pd.read_csv(a / "scores.csv"), pd.read_csv(b / "scores.csv")
    fa.loc[fa.id == "x003", "label"] = truth["x003"]  # vetted in one card ...
    fb.loc[fb.id == "x007", "label"] = truth["x007"]  # ... and another in the other
    fb.loc[fb.id == "x003", "label"] = truth["x003"]  # the same label twice: fine
    fa.to_csv(a / "scores.csv", index=False)
    fb.to_csv(b / "scores.csv", index=False)
    j = join_cards([a, b])
    assert j.names == ("good", "weak") and j.data.item_ids.tolist() == fa.id.tolist()
    by_id = dict(zip(fb.id, fb.score, strict=True))
    np.testing.assert_array_equal(j.scores["weak"], [by_id[i] for i in fa.id])  # aligned on the ids, not rows
    np.testing.assert_array_equal(j.scores["good"], fa.score.to_numpy())
    assert sorted(j.data.item_ids[j.data.vetted].tolist()) == ["x003", "x007"]
    assert j.truth.tolist() == [truth[i] for i in fa.id]


def test_join_refuses_item_sets_that_differ_and_says_how_many_and_which():
    with pytest.raises(CardError) as exc:
        join_cards([ROOT / "digits_vet", ROOT / "digits_svm"])
    msg = str(exc.value)
    assert "do not score the same items" in msg and "898 id(s) only in 'digits_svm'" in msg
    assert "'digit-0001'" in msg and "drop the items" in msg and "digits_vet/card.toml" in msg


def test_join_refuses_labels_that_disagree_and_other_mistakes(tmp_path):
    a, b, truth = pair(tmp_path, n=20)
    fb = pd.read_csv(b / "scores.csv")
    fb.loc[fb.id == "x005", "label"] = 1
    fb.to_csv(b / "scores.csv", index=False)
    fa = pd.read_csv(a / "scores.csv")
    fa.loc[fa.id == "x005", "label"] = 0
    fa.to_csv(a / "scores.csv", index=False)
    with pytest.raises(CardError, match=r"label columns disagree on 1 item\(s\) \('x005': good 0, weak 1\)"):
        join_cards([a, b])
    with pytest.raises(CardError, match="two or more cards, got 1"):
        join_cards([a])
    with pytest.raises(CardError, match="the folder name 'good'"):
        join_cards([a, a])
    c = write_card(tmp_path / "noid", pd.DataFrame({"score": [0.1, 0.2]}), columns="")
    (c / "card.toml").write_text((c / "card.toml").read_text().replace('id = "id"\n', ""))
    with pytest.raises(CardError, match=r"\[data\] id: a comparison joins cards on their item ids"):
        join_cards([a, c])
    with pytest.raises(CardError, match="card.toml"):
        join_cards([a, tmp_path / "no-such-card"])


@pytest.mark.xdist_group("tests/test_compare.py")  # after test_compare.py's fits: the joint model is compiled
def test_compare_cli_on_two_cards_equals_compare_on_the_joined_cards(tmp_path, capsys):
    a, b, truth = pair(tmp_path, n=80)
    fa = pd.read_csv(a / "scores.csv")
    vetted = fa.id.iloc[:30]
    fa.loc[fa.id.isin(vetted), "label"] = [truth[i] for i in vetted]
    fa.to_csv(a / "scores.csv", index=False)
    out = tmp_path / "pairs.csv"
    assert main(["compare", str(a), str(b), "--draws", "100", "--no-progress", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Comparison(good, weak: 80 items, 30 vetted, 200 draws)" in printed
    j = join_cards([load_card(a), load_card(b)])
    direct = be.compare(j.scores, j.data, draws=100, chains=2, random_seed=0).summary()
    got = pd.read_csv(out)
    assert got[["better", "worse"]].values.tolist() == direct[["better", "worse"]].values.tolist()
    np.testing.assert_allclose(got[["mean", "p_better"]], direct[["mean", "p_better"]], rtol=1e-12)


def test_the_bundled_digits_pair_scores_the_same_items_and_its_script_reproduces_it(tmp_path, monkeypatch):
    import importlib.util
    import sys

    from sklearn.metrics import average_precision_score

    j = join_cards([ROOT / "digits_vet", ROOT / "digits_vet_nb"])
    assert (j.data.n_items, j.data.n_vetted, int(j.truth.sum())) == (899, 0, 87)
    ap = {n: average_precision_score(j.truth, s) for n, s in j.scores.items()}
    assert ap["digits_vet"] - ap["digits_vet_nb"] > 0.1  # a gap the page can decide (0.861 vs 0.722)
    spec = importlib.util.spec_from_file_location("_make_digits_vet_nb", ROOT / "digits_vet_nb" / "make_scores.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    fresh = pd.read_csv(module.main(tmp_path / "scores.csv"))
    stored = pd.read_csv(ROOT / "digits_vet_nb" / "scores.csv")
    pd.testing.assert_frame_equal(fresh.drop(columns="score"), stored.drop(columns="score"))
    np.testing.assert_allclose(fresh["score"], stored["score"], rtol=1e-6, atol=2e-4)


@pytest.mark.xdist_group("tests/test_compare.py")  # after test_compare.py's fits: the joint model is compiled
def test_compare_cli_on_two_cards_uses_the_labels_vetted_for_their_comparison(tmp_path, capsys):
    """`bayeval compare A B` read the cards' scores files alone: the labels given on the
    comparison's vetting page (`bayeval vet A B`, its store vet-compare-B.sqlite in A's folder)
    were ignored."""
    from bayeval.active.store import LabelStore
    from bayeval.cards import comparison_store_file

    a, b, truth = pair(tmp_path, n=80)
    fa = pd.read_csv(a / "scores.csv")
    vetted = fa.id.iloc[:30]
    fa.loc[fa.id.isin(vetted), "label"] = [truth[i] for i in vetted]
    fa.to_csv(a / "scores.csv", index=False)
    store = comparison_store_file(join_cards([load_card(a), load_card(b)]))
    assert store == a / "vet-compare-weak.sqlite"
    more = list(fa.id.iloc[30:40])
    with LabelStore(store) as st:
        st.add(more, [truth[i] for i in more], annotator="ana")
    assert main(["compare", str(a), str(b), "--draws", "100", "--no-progress"]) == 0
    out = capsys.readouterr()
    assert "Comparison(good, weak: 80 items, 40 vetted, 200 draws)" in out.out
    assert "10 label(s) from the comparison's label store vet-compare-weak.sqlite" in out.err
    with LabelStore(store) as st:
        st.add(["nope"], [1], annotator="ana")
    assert main(["compare", str(a), str(b), "--draws", "100", "--no-progress"]) == 2
    assert "holds labels of 1 item(s) that are not in the scores files of the cards (" in capsys.readouterr().err


def test_a_typo_in_the_comparisons_store_is_refused_with_a_repair_command_that_works(tmp_path, capsys):
    """`bayeval compare A B` on a comparison store holding a typo'd id advised exporting the store,
    fixing it and importing it into a new store: a store `compare` and `vet A B` never read (they
    find the comparison's store by its name). It now names the `bayeval repair-store` command for
    that store and the cards' items, as does the vetting page (`bayeval vet A B`); the command runs,
    and the comparison then runs on every other label."""
    import shlex

    from bayeval.active.store import LabelStore
    from bayeval.cards import comparison_store_file
    from bayeval.vet import open_compare

    a, b, truth = pair(tmp_path, n=80)
    fa = pd.read_csv(a / "scores.csv")
    fa.loc[:29, "label"] = [truth[i] for i in fa.id.iloc[:30]]
    fa.to_csv(a / "scores.csv", index=False)
    store = comparison_store_file(join_cards([a, b]))
    more = list(fa.id.iloc[30:40])
    with LabelStore(store) as st:  # made by `bayeval label` before vetting: it does not know its items
        st.add([*more, "x0077 "], [*[truth[i] for i in more], 1], annotator="ana")
    command = (f"bayeval repair-store {store} --scores {load_card(a).data_file} --score score --id id")
    assert main(["compare", str(a), str(b), "--draws", "100", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"`{command}`" in err and "export-labels" not in err
    with pytest.raises(ValueError, match=re.escape(f"`{command}`")):
        open_compare([a, b])
    assert main(shlex.split(command)[1:]) == 0
    assert "set aside 1 label row(s) of 1 unknown item(s): 'x0077 '" in capsys.readouterr().out.lower()
    assert main(["compare", str(a), str(b), "--draws", "100", "--no-progress"]) == 0
    out = capsys.readouterr()
    assert "40 vetted" in out.out and "10 label(s) from the comparison's label store" in out.err


def test_compare_cli_refuses_cards_with_no_vetted_label_and_says_how_to_vet(tmp_path, capsys):
    """`bayeval compare models/digits_vet models/digits_vet_nb` (the documented command) printed a
    ranking, P(best) and a gap from the prior alone, with a raw UserWarning on stderr."""
    import warnings

    dv, nb = ROOT / "digits_vet", ROOT / "digits_vet_nb"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["compare", str(dv), str(nb), "--draws", "100", "--no-progress"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and not caught
    err = " ".join(out.err.split())
    assert err.startswith("bayeval: error: No item is vetted") and err.count("\n") == 0
    assert f"bayeval vet {dv} {nb}" in err and "vet-compare-digits_vet_nb.sqlite" in err
    assert "which `bayeval compare` reads" in err and "(not made yet)" in err
    assert not list(dv.glob("vet-compare-*"))  # nothing written
    a, b, _ = pair(tmp_path, n=40)
    c = write_card(tmp_path / "third", pd.read_csv(b / "scores.csv"))
    assert main(["compare", str(a), str(b), str(c), "--draws", "100", "--no-progress"]) == 2
    assert "No item is vetted in the cards' label columns (good: column 'label' of scores.csv" in capsys.readouterr().err


@pytest.mark.xdist_group("tests/test_compare.py")  # after test_compare.py's fits: the joint model is compiled
def test_compare_cli_says_the_comparisons_warnings_as_lines_not_python_warnings(tmp_path, capsys, monkeypatch):
    import importlib
    import warnings

    comparison = importlib.import_module("bayeval.compare.comparison")  # bayeval.compare is the function
    a, b, truth = pair(tmp_path, n=60)
    fa = pd.read_csv(a / "scores.csv")
    fa.loc[:19, "label"] = [truth[i] for i in fa.id.iloc[:20]]
    fa.to_csv(a / "scores.csv", index=False)
    real = comparison.compare

    def warning_compare(*args, **kw):
        warnings.warn("bayeval: something the fit wants said", UserWarning, stacklevel=2)
        return real(*args, **kw)

    monkeypatch.setattr(comparison, "compare", warning_compare)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["compare", str(a), str(b), "--draws", "60", "--no-progress"]) == 0
    assert not caught
    err = capsys.readouterr().err
    assert "warning: something the fit wants said\n" in err and "UserWarning" not in err


def test_compare_cli_on_cards_with_categories_reads_every_item_pooled_or_the_mean(tmp_path, capsys):
    """Cards with a category column: the CLI failed after the fit, telling the user to pass a Python
    keyword (``category='mean'``); it now reads the metric as the cards' reports do (pooled), or the
    mean over categories with ``--category-mode mean``, and says which."""
    a, b, truth = pair(tmp_path, n=90, vet="")
    for folder in (a, b):
        df = pd.read_csv(folder / "scores.csv")
        df["category"] = [("p", "q", "r")[int(i[1:]) % 3] for i in df.id]
        vetted = df.id.isin([f"x{j:03d}" for j in range(36)])
        df.loc[vetted, "label"] = df.id[vetted].map(truth)
        df.to_csv(folder / "scores.csv", index=False)
        toml = (folder / "card.toml").read_text().replace('truth = "truth"', 'truth = "truth"\ncategory = "category"')
        (folder / "card.toml").write_text(toml)
    j = join_cards([load_card(a), load_card(b)])
    direct = be.compare(j.scores, j.data, draws=100, chains=2, random_seed=0)
    for mode, said in (("pooled", "average_precision over all items pooled:"),
                       ("mean", "average_precision (mean over categories):")):
        out = tmp_path / f"pairs_{mode}.csv"
        args = ["compare", str(a), str(b), "--draws", "100", "--no-progress", "--out", str(out)]
        assert main(args + (["--category-mode", mode] if mode == "mean" else [])) == 0
        assert said in capsys.readouterr().out
        got = pd.read_csv(out)
        np.testing.assert_allclose(got[["mean", "p_better"]], direct.summary(category=mode)[["mean", "p_better"]],
                                   rtol=1e-12)


def test_compare_cli_finds_the_comparison_store_in_either_order_and_under_its_older_name(tmp_path, capsys):
    """`bayeval compare B A` (the cards in the order other than `bayeval vet A B`'s) looked for
    B/vet-compare-A.sqlite alone, so the labels vetted for the comparison were ignored without a
    word. The store's name is now the same for either order, and a store named after the order
    given (as earlier versions named it) is still read, and said."""
    from bayeval.active.store import LabelStore
    from bayeval.cards import comparison_store_file

    a, b, truth = pair(tmp_path, n=80)
    canonical = comparison_store_file(join_cards([load_card(b), load_card(a)]))
    assert canonical == comparison_store_file(join_cards([load_card(a), load_card(b)])) == a / "vet-compare-weak.sqlite"
    ids = sorted(truth)
    with LabelStore(canonical) as st:
        st.add(ids[:10], [truth[i] for i in ids[:10]], annotator="ana")

    def run(order, code=0):
        assert main(["compare", *map(str, order), "--draws", "100", "--no-progress"]) == code
        out = capsys.readouterr()
        return out.out, " ".join(out.err.split())

    for order, names in (((a, b), "good, weak"), ((b, a), "weak, good")):
        out, err = run(order)
        assert f"Comparison({names}: 80 items, 10 vetted" in out
        assert "10 label(s) from the comparison's label store vet-compare-weak.sqlite" in err
    canonical.unlink()
    older = b / "vet-compare-good.sqlite"  # what `bayeval vet weak good` wrote before
    with LabelStore(older) as st:
        st.add(ids[10:16], [truth[i] for i in ids[10:16]], annotator="ana")
    for order, names in (((a, b), "good, weak"), ((b, a), "weak, good")):
        out, err = run(order)
        assert f"Comparison({names}: 80 items, 6 vetted" in out
        assert f"6 label(s) from the comparison's label store {older} (named after the order weak good" in err
    with LabelStore(canonical) as st:  # both names: both read, pooled
        st.add(ids[:10], [truth[i] for i in ids[:10]], annotator="ana")
    out, _ = run((a, b))
    assert "Comparison(good, weak: 80 items, 16 vetted" in out
    with LabelStore(canonical) as st:  # ... and an item they label differently is refused, naming both
        st.add([ids[10]], [1 - truth[ids[10]]], annotator="bo")
    out, err = run((b, a), code=2)
    assert f"two label stores {canonical} and {older}" in err and f"1 item(s) differently: {ids[10]!r}" in err


def test_compare_cli_reads_each_card_by_its_declared_transform(tmp_path, capsys, monkeypatch):
    """`[model] transform = "logodds"` was ignored: the card's log-odds were read as "auto" (standardized)."""
    from bayeval._cli_compare import card_transforms
    from bayeval.compare import comparison

    bundled = join_cards([ROOT / "digits_vet", ROOT / "digits_vet_nb"])
    assert card_transforms(bundled) == {"digits_vet": "auto", "digits_vet_nb": "logodds"}
    a, b, truth = pair(tmp_path, n=60)
    toml = b / "card.toml"
    toml.write_text(toml.read_text().replace('name = "calibration"', 'name = "calibration"\ntransform = "logodds"'))
    fa = pd.read_csv(a / "scores.csv")
    fa.loc[:19, "label"] = [truth[i] for i in fa.id[:20]]
    fa.to_csv(a / "scores.csv", index=False)
    seen = []

    def spy(*args, **kwargs):
        seen.append(kwargs.get("transform"))
        raise RuntimeError("stop after the inputs")

    monkeypatch.setattr(comparison, "compare", spy)
    with pytest.raises(RuntimeError, match="stop after the inputs"):
        main(["compare", str(a), str(b), "--draws", "50", "--no-progress"])
    assert seen == [{"good": "auto", "weak": "logodds"}]
    toml.write_text(toml.read_text().replace('name = "calibration"', 'name = "score_mixture"').replace(
        'transform = "logodds"', 'transform = "identity"'))  # a score mixture's map: not a joint transform
    with pytest.raises(RuntimeError, match="stop after the inputs"):
        main(["compare", str(a), str(b), "--draws", "50", "--no-progress"])
    assert seen[-1] == {"good": "auto", "weak": "auto"}
    assert "note: weak's card declares transform = 'identity'" in capsys.readouterr().err


def test_compare_cli_on_cards_reads_each_cards_label_store_and_says_why_its_numbers_differ(tmp_path, capsys):
    """`bayeval compare A B` read the cards' scores files alone: the labels typed into a card's
    own store (which `bayeval report CARD` reads) were dropped silently, --store was ignored, and
    the joint model's per-classifier values were shown with no word on why they differ from
    each card's report."""
    from bayeval.active.store import LabelStore

    a, b, truth = pair(tmp_path, n=60)
    fa = pd.read_csv(a / "scores.csv")
    fa.loc[:19, "label"] = [truth[i] for i in fa.id[:20]]
    fa.to_csv(a / "scores.csv", index=False)
    typed = list(fa.id[20:27])  # 7 more typed into good's store, 1 correcting the file
    fixed = fa.id[0]
    with LabelStore(load_card(a).store_file) as st:
        st.add(typed + [fixed], [truth[i] for i in typed] + [1 - truth[fixed]], annotator="ana")
    assert load_card(a).load_data(store=True)[0].n_vetted == 27
    assert join_cards([a, b]).data.n_vetted == 27 and join_cards([a, b], store=False).data.n_vetted == 20
    assert main(["compare", str(a), str(b), "--store", str(load_card(a).store_file), "--draws", "50",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--store" in err and "goes with a scores file" in err and "each card's own label store" in err
    assert main(["compare", str(a), str(b), "--draws", "100", "--no-progress"]) == 0
    out = capsys.readouterr()
    assert "Comparison(good, weak: 60 items, 27 vetted, 200 draws)" in out.out
    said = re.search(r"good: 8 label\(s\) from its label store (\S+) \(7 of items its scores file leaves unvetted, "
                     r"1 replacing the file's label: (\S+) \(file (\d), store (\d)\)\), pooled with the other "
                     r"cards' labels: 27 vetted in all\.", out.err)
    assert said and said[1] == str(load_card(a).store_file)  # the replaced item is named, as report names it
    item, file_label, store_label = said[2], int(said[3]), int(said[4])
    assert file_label != store_label
    assert load_card(a).load_data(store=True)[0].labels[list(map(str, load_card(a).load_data()[0].item_ids)).index(item)] \
        == store_label
    assert "caveat: each classifier's value here comes from one joint model of all the cards' scores" in out.err
    assert "can differ from that card's own report" in out.err


@pytest.mark.xdist_group("tests/test_compare.py")  # after test_compare.py's fits: the joint model is compiled
def test_compare_cli_checks_each_cards_transform_in_the_cards_words(tmp_path, capsys):
    """`bayeval report CARD` checks a card's `[model] transform` against its scores in the card's words
    (Card.check_scale); `bayeval compare CARD_A CARD_B` did not: `transform = "logodds"` on probabilities
    got the joint model's Python words ("transform='logodds' ... use transform='logit'"), and `"logit"` on
    margins failed after the fit began, with "Calibration(curve='logistic', transform='logit') needs scores
    in [0, 1]". Both are now said before the fit, naming the card's key, as the report says them."""
    import warnings

    a, b, truth = pair(tmp_path, n=60)
    fa = pd.read_csv(a / "scores.csv")
    fa.loc[:19, "label"] = [truth[i] for i in fa.id[:20]]
    fa.to_csv(a / "scores.csv", index=False)
    toml = b / "card.toml"
    toml.write_text(toml.read_text().replace('name = "calibration"', 'name = "calibration"\ntransform = "logit"'))
    assert main(["compare", str(a), str(b), "--draws", "50", "--no-progress"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith(f'bayeval: error: {toml}: [model] transform = "logit" reads the scores as probabilities, '
                          "in [0, 1], but column 'score' ([data] score) holds scores from"), err
    assert 'Set transform = "logodds" under [model]' in err and "Nothing was fitted" in err
    assert "Calibration(" not in err and "transform=" not in err
    fb = pd.read_csv(b / "scores.csv")
    fb["score"] = np.round(1 / (1 + np.exp(-fb["score"])), 5)  # probabilities, read as log-odds
    fb.to_csv(b / "scores.csv", index=False)
    toml.write_text(toml.read_text().replace('transform = "logit"', 'transform = "logodds"'))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["compare", str(a), str(b), "--draws", "50", "--no-progress"]) == 0
    out = capsys.readouterr()
    said = f'warning: {toml}: [model] transform = "logodds" reads the scores as log-odds, but column \'score\' ' \
           "([data] score) holds scores from"
    assert said in out.err and 'If they are, set transform = "logit" under [model]' in out.err
    assert "Comparison(good, weak: 60 items, 20 vetted" in out.out
    assert "transform=" not in out.err and not [w for w in caught if "logodds" in str(w.message)]  # not again


def test_the_comparison_page_checks_each_cards_transform_in_the_cards_words(tmp_path):
    """`bayeval vet CARD_A CARD_B` (open_compare) did not check the cards' `[model] transform` against their
    scores as `bayeval vet CARD` and `bayeval compare` do: `"logit"` on margins failed in the background
    refit, in the joint model's words; it is refused now before the store is touched, naming the card's key,
    and `"logodds"` on probabilities is warned in the card's words."""
    import warnings

    from bayeval.vet import open_compare

    a, b, _ = pair(tmp_path, n=60)
    toml = b / "card.toml"
    toml.write_text(toml.read_text().replace('name = "calibration"', 'name = "calibration"\ntransform = "logit"'))
    store = tmp_path / "c.sqlite"
    with pytest.raises(CardError, match=r'\[model\] transform = "logit" reads the scores as probabilities'):
        open_compare([a, b], store=store)
    assert not store.exists()
    fb = pd.read_csv(b / "scores.csv")
    fb["score"] = np.round(1 / (1 + np.exp(-fb["score"])), 5)  # probabilities, read as log-odds
    fb.to_csv(b / "scores.csv", index=False)
    toml.write_text(toml.read_text().replace('transform = "logit"', 'transform = "logodds"'))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v = open_compare([a, b], store=store, draws=50)
        v.close()
    said = [str(w.message) for w in caught if "logodds" in str(w.message)]
    assert said and said[0].startswith(f'{toml}: [model] transform = "logodds" reads the scores as log-odds'), said


def test_a_score_mixture_cards_transform_is_checked_against_its_scores_in_the_cards_words(tmp_path, capsys,
                                                                                          monkeypatch):
    """A card whose [model] is a score mixture with `transform = "logit"` on margins: `bayeval compare` failed in
    the joint model's Python words (`transform={'weak': 'standardize'}`, `bayeval.compare(scores, labels, ...)`)
    and `bayeval report` after "fitting score_mixture" in the mixture's (`transform='logit' needs scores in
    [0, 1] ... Use 'identity'`); with `transform = "log"` on scores below 0, `bayeval compare` ran on with a note
    while `bayeval report` failed. Card.check_scale knew only the default, calibration and label_flip keys: both
    are now refused before the fit, naming the card's key, the scores' range and what to set."""
    from bayeval.compare import comparison

    a, b, truth = pair(tmp_path, n=60)
    fa = pd.read_csv(a / "scores.csv")
    fa.loc[:19, "label"] = [truth[i] for i in fa.id[:20]]
    fa.to_csv(a / "scores.csv", index=False)
    toml = b / "card.toml"
    text = toml.read_text()
    lo, hi = pd.read_csv(b / "scores.csv")["score"].agg(["min", "max"])
    assert lo < 0 < 1 < hi  # margins
    fitted = []
    real = comparison.compare
    monkeypatch.setattr(comparison, "compare", lambda *args, **kw: fitted.append(1) or real(*args, **kw))
    for transform, fix in (("logit", 'Set transform = "identity" under [model] for log-odds or margins, '
                                     '"minmax" for other scores, or remove the key (auto).'),
                           ("log", 'Set transform = "minmax" under [model] (it maps any scores into (0, 1)), '
                                   "or remove the key (auto).")):
        toml.write_text(text.replace('name = "calibration"', f'name = "score_mixture"\ntransform = "{transform}"'))
        where = f"column 'score' ([data] score) holds scores from {lo:g} to {hi:g}"
        for argv in (["compare", str(a), str(b), "--draws", "50", "--no-progress"],
                     ["report", str(b), "--draws", "40", "--tune", "40", "--chains", "1", "--no-progress",
                      "--out", str(tmp_path / "out")]):
            assert main(argv) == 2
            err = " ".join(capsys.readouterr().err.split())
            assert f'bayeval: error: {toml}: [model] transform = "{transform}" reads the scores as ' in err, err
            assert where in err and fix in err and "Nothing was fitted" in err, err
            assert "transform='" not in err and "transform={" not in err and "fitting" not in err, err
    assert fitted == []
    for fine in ("identity", "minmax", "auto"):  # maps that read margins: nothing said
        toml.write_text(text.replace('name = "calibration"', f'name = "score_mixture"\ntransform = "{fine}"'))
        assert load_card(b).check_scale(pd.read_csv(b / "scores.csv")["score"]) is None
    toml.write_text(text.replace('name = "calibration"', 'name = "score_mixture"\ntransform = "logit"'))
    assert load_card(b).check_scale([0.1, 0.9]) is None  # probabilities: read as such
    toml.write_text(text.replace('name = "calibration"', 'name = "score_mixture"\ntransform = "log"'))
    assert load_card(b).check_scale([0.1, 3.0]) is None  # positive scores: their logarithm is defined
