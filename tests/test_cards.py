"""Model cards: every card in models/ loads and is consistent; broken cards fail with
messages that name the card file and the key; metrics parse; a real (tiny) fit."""

import importlib.util
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeval import Posterior
from bayeval.cards import MODELS, Card, CardError, list_cards, load_card
from bayeval.cli import main
from bayeval.models import Stack

ROOT = Path(__file__).resolve().parents[1] / "models"

# What each card's make_scores.py docstring documents (items, vetted, vetted positives).
DOCUMENTED = {
    "breast_cancer_logreg": {"items": 569, "vetted": 30, "positives": 212},
    "digits_svm": {"items": 1797, "vetted": 30, "positives": 174},
    "noisy_tags_digits": {"items": 17970, "vetted": 50, "positives": 1797},
    "rare_fraud_gbm": {"items": 40000, "vetted": 100, "positives": 200},
}


def _has_label_flip() -> bool:
    try:
        return importlib.util.find_spec("bayeval.models.label_flip") is not None
    except ImportError:
        return False


# ------------------------------------------------------------- the real cards


@pytest.fixture(scope="module")
def cards() -> dict[str, Card]:
    return {c.path.name: c for c in list_cards(ROOT)}


@pytest.fixture(scope="module")
def loaded(cards):
    return {name: card.load_data() for name, card in cards.items()}


def test_the_documented_cards_are_all_there(cards):
    assert set(DOCUMENTED) <= set(cards)


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_card_data_is_consistent(name, cards, loaded):
    card = cards[name]
    data, truth = loaded[name]
    doc = DOCUMENTED[name]
    assert card.title and card.description
    assert card.data_file.stat().st_size < 1.5e6
    script = card.path / "make_scores.py"
    assert script.is_file() and '"""' in script.read_text()[:10]
    assert (data.n_items, data.n_vetted) == (doc["items"], doc["vetted"])
    assert truth is not None and truth.shape == (data.n_items,)
    assert int(truth.sum()) == doc["positives"]
    vetted = data.vetted
    # the vetted labels are the true labels of the vetted items
    np.testing.assert_array_equal(data.labels[vetted], truth[vetted])
    # the report's metrics parse, and the model can be built (label_flip once it exists)
    assert card.metrics()
    if card.model_name != "label_flip" or _has_label_flip():
        assert card.build_model() is not None


def test_breast_cancer_and_digits_vet_at_random_with_some_positives(loaded):
    for name in ("breast_cancer_logreg", "digits_svm"):
        data, _ = loaded[name]
        assert 0 < data.n_vetted_positive < data.n_vetted


def test_noisy_tags_card_vets_the_top_of_each_category(loaded):
    data, truth = loaded["noisy_tags_digits"]
    assert data.category_names.size == 10
    assert data.counts()["vetted"].drop("total").tolist() == [5] * 10
    for c in range(10):
        members = np.flatnonzero(data.category_codes == c)
        top = members[np.argsort(-data.scores[members], kind="stable")[:5]]
        assert data.vetted[top].all()
    # the simulated tags follow the documented rates (38% / 1%); binomial 4-sigma bounds
    noisy = data.noisy_labels
    n1, n0 = int(truth.sum()), int((1 - truth).sum())
    assert abs(noisy[truth == 1].mean() - 0.38) < 4 * np.sqrt(0.38 * 0.62 / n1)
    assert abs(noisy[truth == 0].mean() - 0.01) < 4 * np.sqrt(0.01 * 0.99 / n0)


def test_fraud_card_vets_uniform_items_and_the_top_of_the_ranking(loaded):
    data, truth = loaded["rare_fraud_gbm"]
    assert abs(truth.mean() - 0.005) < 1e-9
    top = np.argsort(-data.scores, kind="stable")[:50]
    assert data.vetted[top].all()
    rest = np.setdiff1d(np.flatnonzero(data.vetted), top)
    assert rest.size == 50


def test_card_fields_of_a_real_card(cards):
    card = cards["digits_svm"]
    assert card.model_name == "default"
    assert card.columns == {"score": "score", "label": "label", "id": "id", "truth": "truth"}
    assert card.sampling == {"draws": 2000, "tune": 1000, "chains": 2, "random_seed": 1}
    assert card.report_options["hdi_prob"] == 0.9
    assert card.constraints == {"min_precision": 0.8, "min_recall": 0.8}
    assert isinstance(card.build_model(), Stack)
    assert load_card(card.card_file) == card  # folder or card.toml: the same card


# noisy_tags_digits (~10 s) and rare_fraud_gbm (~1 min) are left out to keep the file fast.
@pytest.mark.parametrize("name", ["breast_cancer_logreg", "digits_svm"])
def test_make_scores_is_deterministic(name, tmp_path, monkeypatch):
    """Re-running the (fast) scripts into a temporary file reproduces scores.csv."""
    spec = importlib.util.spec_from_file_location(f"_make_{name}", ROOT / name / "make_scores.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "OUT", tmp_path / "scores.csv")
    out = module.main()
    # same rows, ids and labels; scores equal up to the last written decimal (another
    # scikit-learn or BLAS build may move the 6th decimal; the vetting does not use scores)
    fresh, stored = pd.read_csv(out), pd.read_csv(ROOT / name / "scores.csv")
    pd.testing.assert_frame_equal(fresh.drop(columns="score"), stored.drop(columns="score"))
    np.testing.assert_allclose(fresh["score"], stored["score"], rtol=0, atol=2e-6)


# ------------------------------------------------------------- broken cards

GOOD = """
title = "toy"
description = "a toy card"

[data]
file = "scores.csv"
score = "score"
label = "label"
truth = "truth"

[model]
name = "score_mixture"
negative = "normal"
positive = "normal"

[sampling]
draws = 10
tune = 10
chains = 1
random_seed = 3

[report]
hdi_prob = 0.9
metrics = ["average_precision", { name = "precision_at_k", k = 2 }]

[constraints]
min_precision = 0.9
"""

CSV = "score,label,truth\n0.9,1,1\n0.8,,1\n0.4,,0\n0.3,0,0\n0.1,,0\n0.6,,1\n"


def make_card(folder: Path, toml: str = GOOD, csv: str = CSV, **replace) -> Path:
    for old, new in replace.items():
        assert old in toml, old
        toml = toml.replace(old, new)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "card.toml").write_text(textwrap.dedent(toml))
    if csv is not None:
        (folder / "scores.csv").write_text(csv)
    return folder


def fails(folder: Path, *fragments: str) -> str:
    """Loading (and reading the data of) the card fails, naming the card file and fragments."""
    with pytest.raises(CardError) as info:
        load_card(folder).load_data()
    msg = str(info.value)
    assert str(folder / "card.toml") in msg, msg
    for f in fragments:
        assert f in msg, (f, msg)
    return msg


def test_good_toy_card_loads(tmp_path):
    card = load_card(make_card(tmp_path / "cards" / "toy"))
    data, truth = card.load_data()
    assert data.labels[[0, 3]].tolist() == [1.0, 0.0] and data.n_vetted == 2
    assert truth.tolist() == [1, 1, 0, 0, 0, 1] and truth.dtype == np.int8
    assert card.model_options == {"negative": "normal", "positive": "normal"}
    assert card.constraints == {"min_precision": 0.9}
    assert list_cards(tmp_path / "cards") == [card]


def test_missing_card_file(tmp_path):
    with pytest.raises(CardError, match="card.toml.*no such card file"):
        load_card(tmp_path)
    with pytest.raises(CardError, match="does not exist"):
        load_card(tmp_path / "nope")
    with pytest.raises(CardError, match="not a folder"):
        list_cards(tmp_path / "nope")
    (tmp_path / "other.toml").write_text(GOOD)
    with pytest.raises(CardError, match="other.toml: not a card file"):
        load_card(tmp_path / "other.toml")


def test_invalid_toml(tmp_path):
    fails(make_card(tmp_path, GOOD + "\nthis is not toml\n"), "not valid TOML")


@pytest.mark.parametrize(
    ("old", "new", "key", "allowed"),
    [
        ("[sampling]", "[sampeling]", "(top level)", "'sampling'"),
        ('label = "label"', 'lable = "label"', "[data]", "'noisy_label'"),
        ("draws = 10", "draw = 10", "[sampling]", "'draws'"),
        ("hdi_prob = 0.9", "hdi = 0.9", "[report]", "'hdi_prob'"),
        ("min_precision = 0.9", "min_precison = 0.9", "[constraints]", "'min_recall'"),
        ('negative = "normal"', 'negativ = "normal"', "[model]", "'negative'"),
    ],
)
def test_unknown_keys_list_the_allowed_ones(tmp_path, old, new, key, allowed):
    msg = fails(make_card(tmp_path, **{old: new}), key, "unknown", "allowed keys")
    assert allowed in msg


def test_missing_required_keys(tmp_path):
    fails(make_card(tmp_path / "a", **{'title = "toy"': ""}), "title: missing")
    fails(make_card(tmp_path / "b", **{'score = "score"': ""}), "[data] score: missing")
    fails(make_card(tmp_path / "c", **{'name = "score_mixture"': ""}), "[model] name: missing")


def test_missing_or_unreadable_data_file(tmp_path):
    fails(make_card(tmp_path / "a", csv=None), "[data] file", "not found")
    fails(
        make_card(tmp_path / "b", **{'file = "scores.csv"': 'file = "scores.txt"'}), "[data] file"
    )
    (tmp_path / "b" / "scores.txt").write_text(CSV)
    fails(tmp_path / "b", "[data] file", ".csv or .parquet")


def test_missing_columns_name_the_file_and_its_columns(tmp_path):
    folder = make_card(tmp_path, **{'truth = "truth"': 'truth = "true_label"'})
    fails(folder, "[data] truth", "'true_label'", "scores.csv", "['score', 'label', 'truth']")


def test_unknown_model_and_bad_model_options(tmp_path):
    fails(
        make_card(tmp_path / "a", **{'"score_mixture"': '"spe"'}),
        "[model] name",
        "'spe'",
        "label_flip",
    )
    fails(
        make_card(tmp_path / "b", **{'negative = "normal"': 'negative = "gauss"'}),
        "[model]",
        "gauss",
    )
    # label_flip needs noisy labels, whether or not its module exists yet
    msg = fails(
        make_card(
            tmp_path / "c",
            **{
                'name = "score_mixture"\nnegative = "normal"\npositive = "normal"': 'name = "label_flip"'
            },
        ),
        "[data] noisy_label",
    )
    assert "label_flip" in msg


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("draws = 10", "draws = 0", "[sampling] draws"),
        ("draws = 10", "draws = true", "[sampling] draws"),
        ("tune = 10", 'tune = "many"', "[sampling] tune"),
        ("tune = 10", "tune = -1", "[sampling] tune"),
        ("chains = 1", "chains = 1.5", "[sampling] chains"),
        ("random_seed = 3", "random_seed = -2", "[sampling] random_seed"),
        ("random_seed = 3", "random_seed = 3.5", "[sampling] random_seed"),
        ("random_seed = 3", "random_seed = 3\ntarget_accept = 1.2", "[sampling] target_accept"),
        ("hdi_prob = 0.9", "hdi_prob = 1.0", "[report] hdi_prob"),
        ("min_precision = 0.9", "min_precision = 1.5", "[constraints] min_precision"),
        ("min_precision = 0.9", "", "[constraints]"),
        ("min_precision = 0.9", "min_precision = 0.9\nprob = 1.0", "[constraints] prob"),
        ("min_precision = 0.9", "min_precision = 0.9\nprob = 0", "[constraints] prob"),
    ],
)
def test_bad_values_name_the_key(tmp_path, old, new, key):
    fails(make_card(tmp_path, **{old: new}), key)


def test_bad_metrics(tmp_path):
    m = 'metrics = ["average_precision", { name = "precision_at_k", k = 2 }]'
    fails(
        make_card(tmp_path / "a", **{m: 'metrics = ["avg_precision"]'}),
        "[report] metrics[0]",
        "unknown metric",
    )
    fails(
        make_card(tmp_path / "b", **{m: "metrics = [{ k = 2 }]"}),
        "[report] metrics[0]",
        "needs `name`",
    )
    fails(make_card(tmp_path / "c", **{m: "metrics = [3]"}), "[report] metrics[0]")
    fails(make_card(tmp_path / "d", **{m: "metrics = []"}), "[report] metrics", "non-empty")
    fails(
        make_card(
            tmp_path / "e", **{m: 'metrics = ["roc_auc", { name = "roc_auc", label = "roc_auc" }]'}
        ),
        "[report] metrics[1]",
        "used twice",
    )
    # a metric's own options are checked when the card is read, not after the fit
    fails(make_card(tmp_path / "f", **{m: 'metrics = [{ name = "precision_at_k", k = 0 }]'}),
          "[report] metrics[0]", "`k` must be >= 1, got 0")
    fails(make_card(tmp_path / "g", **{m: 'metrics = [{ name = "precision_at_k", kk = 5 }]'}),
          "[report] metrics[0]", "Did you mean `k`")
    fails(make_card(tmp_path / "h", **{m: 'metrics = ["precision_at_k"]'}),
          "[report] metrics[0]", 'needs `k`: write it as an inline table, e.g. { name = "precision_at_k", k = 50 }')
    fails(make_card(tmp_path / "i", **{m: 'metrics = [{ name = "f_score", beta = -1 }]'}),
          "[report] metrics[0]", "`beta` must be a number >= 0")


def test_label_values_other_than_1_0_empty_list_the_rows(tmp_path):
    csv = "score,label,truth\n0.9,1,1\n0.8,yes,1\n0.4,NA,0\n0.3,0,0\n0.1,2,0\n0.6, ,1\n"
    msg = fails(
        make_card(tmp_path, csv=csv), "[data] label", "3 row(s)", "line 3: 'yes'", "line 4: 'NA'"
    )
    assert "line 6: '2'" in msg and "line 7" not in msg  # whitespace-only = empty = not vetted


def test_truth_must_be_complete(tmp_path):
    csv = "score,label,truth\n0.9,1,1\n0.8,,\n0.4,,0\n0.3,0,0\n0.1,,0\n0.6,,1\n"
    fails(make_card(tmp_path, csv=csv), "[data] truth", "1 or 0 for every item", "line 3")


def test_scores_and_ids_are_validated_with_the_key(tmp_path):
    csv = "score,label,truth\n0.9,1,1\nhigh,,1\n0.4,,0\n0.3,0,0\n0.1,,0\n0.6,,1\n"
    fails(make_card(tmp_path / "a", csv=csv), "[data] score", "'score'")
    csv = "score,label,truth,id\n0.9,1,1,a\n0.8,,1,a\n0.4,,0,b\n0.3,0,0,c\n0.1,,0,d\n0.6,,1,e\n"
    folder = make_card(tmp_path / "b", csv=csv, **{'truth = "truth"': 'truth = "truth"\nid = "id"'})
    fails(folder, "[data] id", "unique")


def test_parquet_data(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    folder = make_card(tmp_path, csv=None, **{'"scores.csv"': '"scores.parquet"'})
    frame = pd.DataFrame(
        {
            "score": [0.9, 0.8, 0.4, 0.3],
            "label": pd.array([1, None, None, 0], dtype="Int64"),
            "truth": [True, True, False, False],
        }
    )
    frame.to_parquet(folder / "scores.parquet")
    data, truth = load_card(folder).load_data()
    assert np.array_equal(data.labels, [1, np.nan, np.nan, 0], equal_nan=True)
    assert truth.tolist() == [1, 1, 0, 0]
    frame.assign(label=[1.0, 3.0, np.nan, 0.0]).to_parquet(folder / "scores.parquet")
    fails(folder, "[data] label", "row 1: 3.0", "(0-based)")

    def no_engine(*args, **kwargs):
        raise ImportError("Unable to find a usable engine")

    monkeypatch.setattr(pd, "read_parquet", no_engine)
    fails(folder, "[data] file", "pip install pyarrow")


# ------------------------------------------------------------------- metrics


def test_metrics_parsing(tmp_path):
    m = 'metrics = ["average_precision", { name = "precision_at_k", k = 2 }]'
    new = (
        'metrics = ["roc_auc", { name = "precision_at_k", k = 2 }, '
        '{ name = "precision_at_recall", recall = [0.5, 0.9], interpolate = true }, '
        '{ name = "recall", threshold = 0.5, label = "recall at 0.5" }]'
    )
    card = load_card(make_card(tmp_path, **{m: new}))
    assert card.metrics() == {
        "roc_auc": "roc_auc",
        "precision_at_k[k=2]": ("precision_at_k", {"k": 2}),
        "precision_at_recall[recall=[0.5, 0.9], interpolate=True]": (
            "precision_at_recall",
            {"recall": [0.5, 0.9], "interpolate": True},
        ),
        "recall at 0.5": ("recall", {"threshold": 0.5}),
    }
    # the parsed form is what Posterior.summary takes
    data, truth = card.load_data()
    post = Posterior.from_probabilities(data, truth.astype(float), draws=3, random_seed=0)
    table = post.summary(card.metrics(), hdi_prob=card.report_options["hdi_prob"])
    assert table.loc["recall at 0.5", "mean"] == 1.0
    assert table.loc["precision_at_k[k=2]", "mean"] == 1.0
    assert {"precision_at_recall[recall=[0.5, 0.9], interpolate=True][recall=0.5]"} <= set(
        table.index
    )


def test_defaults_when_optional_tables_are_absent(tmp_path):
    toml = GOOD.split("[sampling]")[0]
    card = load_card(make_card(tmp_path, toml))
    assert card.sampling == {"draws": 1000, "tune": 1000, "chains": 2, "random_seed": 0}
    assert card.report_options == {"hdi_prob": 0.9, "metrics": ["average_precision"]}
    assert card.metrics() == {"average_precision": "average_precision"}
    assert card.constraints is None


def test_registry_names_the_two_models():
    assert set(MODELS) == {"default", "calibration", "score_mixture", "label_flip"}


# ------------------------------------------------------------------ real fits

# PyMC's sampler on one core: its compiled model is cached on disk across runs, so a
# tiny fit costs seconds once warm (nutpie recompiles in every process).
TINY = {"draws": 60, "tune": 60, "chains": 1, "sampler": "pymc", "cores": 1, "progressbar": False}


@pytest.mark.filterwarnings("ignore:bayeval. sampler diagnostics are bad:UserWarning")
def test_fit_of_the_smallest_card_returns_a_posterior(cards):
    card = cards["breast_cancer_logreg"]
    post = card.fit(**TINY)
    assert isinstance(post, Posterior)
    assert (post.n_chains, post.n_draws) == (1, 60)
    assert post.random_seed == card.sampling["random_seed"]
    comp = post.comparison  # the default model: a stack of calibration curves, named in post.model
    assert all(name in post.model for name in comp.index[comp["weight"] >= 0.005])
    table = post.summary(card.metrics(), hdi_prob=card.report_options["hdi_prob"])
    assert list(table.index) == list(card.metrics())
    assert table["mean"].between(0, 1).all()
    with pytest.raises(CardError, match=r"fit\(\): \[sampling\] draws"):
        card.fit(progressbar=False, draws=0)
    with pytest.raises(TypeError, match="takes no option 'nonsense'"):
        card.fit(progressbar=False, nonsense=1)


@pytest.mark.skipif(not _has_label_flip(), reason="bayeval.models.label_flip is not written yet")
@pytest.mark.filterwarnings("ignore:bayeval. sampler diagnostics are bad:UserWarning")
def test_a_label_flip_card_fits(tmp_path, cards):
    """The label_flip path of Card.fit, on a slice of the noisy-tags card (2 tags, 300 items)."""
    frame = pd.read_csv(cards["noisy_tags_digits"].data_file)
    frame = frame[frame["category"].isin(["digit 3", "digit 8"])].head(300)
    frame.to_csv(tmp_path / "scores.csv", index=False)
    toml = (cards["noisy_tags_digits"].card_file).read_text()
    (tmp_path / "card.toml").write_text(toml)
    card = load_card(tmp_path)
    assert card.model_name == "label_flip" and card.model_options == {"pooling": "partial"}
    post = card.fit(**TINY)
    assert isinstance(post, Posterior)
    table = post.summary(card.metrics())
    assert "mean average precision" in table.index
    assert table["mean"].between(0, 1).all()


# ------------------------------------------------- new-user faults: paths, sizes, labels, ids


@pytest.mark.parametrize("where", ["../outside.csv", "ABS"])
def test_a_card_reads_only_files_in_its_folder(tmp_path, where):
    outside = tmp_path / "outside.csv"
    outside.write_text(CSV)
    name = str(outside) if where == "ABS" else where
    folder = make_card(tmp_path / "card", **{'file = "scores.csv"': f"file = {name!r}"})
    with pytest.raises(CardError, match=r"\[data\] file.*outside the card folder.*--allow-outside"):
        load_card(folder)
    card = load_card(folder, allow_outside=True)  # explicitly allowed
    assert card.data_file == outside.resolve() and card.load_data()[0].n_items == 6


def test_cli_report_refuses_a_card_reading_outside_its_folder(tmp_path, capsys):
    from bayeval.cli import main

    (tmp_path / "x.csv").write_text(CSV)
    folder = make_card(tmp_path / "card", **{'file = "scores.csv"': 'file = "../x.csv"'})
    assert main(["report", str(folder), "--no-progress"]) == 2
    assert "outside the card folder" in capsys.readouterr().err


def test_huge_draws_in_a_card_are_refused_at_load(tmp_path, monkeypatch):
    from bayeval.core._validate import MAX_MEMORY_ENV

    monkeypatch.delenv(MAX_MEMORY_ENV, raising=False)
    folder = make_card(tmp_path, **{"draws = 10": "draws = 100000000"})
    with pytest.raises(CardError, match=r"\[sampling\] draws.*GB of memory.*above the limit"):
        load_card(folder)
    monkeypatch.setenv(MAX_MEMORY_ENV, "1000")
    assert load_card(folder).sampling["draws"] == 100000000


def test_min_flagged_above_the_items_is_refused_before_the_fit(tmp_path, capsys, monkeypatch):
    """A card's ``min_flagged = 5000`` on fewer items was refused only after the whole fit, by a
    message naming neither the card file nor the key."""
    from bayeval.cards import Card
    from bayeval.cli import main

    folder = make_card(tmp_path, **{"min_precision = 0.9": "min_precision = 0.9\nmin_flagged = 7"})
    fails(folder, "[constraints] min_flagged", "7, but scores.csv holds 6 items", "min_flagged = 6 or less")

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before refusing min_flagged")

    monkeypatch.setattr(Card, "fit", no_fit)
    assert main(["report", str(folder), "--no-progress", "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err
    assert f"{folder / 'card.toml'}: [constraints] min_flagged: 7, but scores.csv holds 6 items" in err
    ok = make_card(tmp_path / "ok", **{"min_precision = 0.9": "min_precision = 0.9\nmin_flagged = 6"})
    assert load_card(ok).load_data()[0].n_items == 6  # as many as the items: allowed


def test_card_labels_use_the_shared_parser_and_ids_are_text(tmp_path):
    csv = "id,score,label,truth\n007,0.9,TRUE,1\n7,0.8,,1\n0.40,0.4,false,0\n3,0.3,0,0\n"
    folder = make_card(tmp_path, csv=csv, **{'truth = "truth"': 'truth = "truth"\nid = "id"'})
    data, _ = load_card(folder).load_data()
    assert data.item_ids.tolist() == ["007", "7", "0.40", "3"]
    assert data.labels[[0, 2, 3]].tolist() == [1.0, 0.0, 0.0] and np.isnan(data.labels[1])
    bad = make_card(tmp_path / "b", csv=csv.replace("TRUE", "null"), **{'truth = "truth"': 'truth = "truth"\nid = "id"'})
    fails(bad, "[data] label", "line 2: 'null'")


def _committed_metrics(md: str) -> dict[str, tuple[float, float]]:
    """{metric: (mean, sd)} from the Metrics table of a committed report.md."""
    section = md.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 3 and cells[0] not in ("metric", "---"):
            try:
                out[cells[0]] = (float(cells[1]), float(cells[2]))
            except ValueError:
                continue
    return out


def test_re_rendered_card_matches_the_committed_report_within_monte_carlo_error():
    """A fresh fit of the breast-cancer card gives the committed report's numbers.

    The committed means are compared with a fresh fit at the card's own settings, with a
    tolerance of four Monte Carlo standard errors (sd / sqrt(ESS), ESS taken as a
    conservative 400 of the 2000 draws) plus the table's rounding.
    """
    from bayeval.report import report

    folder = Path(__file__).resolve().parents[1] / "models" / "breast_cancer_logreg"
    md = (folder / "report" / "report.md").read_text(encoding="utf-8")
    committed = _committed_metrics(md)
    assert {"average_precision", "roc_auc", "recall at 0.5"} <= set(committed)
    card = load_card(folder)
    post = card.fit(progressbar=False, warn=False)
    table = post.summary(card.metrics(), hdi_prob=card.report_options["hdi_prob"])
    for name, (mean, sd) in committed.items():
        tol = 4 * max(sd, 1e-3) / np.sqrt(400) + 0.0015
        assert table.loc[name, "mean"] == pytest.approx(mean, abs=tol), (name, table.loc[name, "mean"], mean)
    # the verdict near the PPC cut-off is read with its Monte Carlo error, not as a cliff
    r = report(post, title=card.title, metrics=card.metrics(), constraints=card.constraints)
    from bayeval.report import _mc_se

    import re

    found = re.search(r"\| PPC p-value \| ([0-9.]+)", md)
    if found is not None or "fit" in r.tables:  # a score-mixture card: compare its PPC too
        assert found is not None and "fit" in r.tables
        fit = r.tables["fit"]["value"]
        p, n = float(fit["PPC p-value"]), int(fit["PPC draws"])
        committed_p = float(found.group(1))
        assert abs(p - committed_p) <= 4 * _mc_se(committed_p, n) + 0.0005, (p, committed_p)


def test_a_cards_fit_and_report_use_the_labels_vetted_into_its_store(tmp_path, capsys):
    """`bayeval report CARD` read the scores file alone: after three items were vetted on the
    vetting page (`bayeval vet CARD`, which writes the card's label store) the report said
    "300 items, 0 vetted"."""
    from bayeval.active.store import LabelStore
    from bayeval.cli import _open_card

    csv = "id,score,label,truth\na,0.9,1,1\nb,0.8,,1\nc,0.4,,0\nd,0.3,0,0\ne,0.1,,0\nf,0.6,,1\n"
    folder = make_card(tmp_path / "c", csv=csv, **{'truth = "truth"': 'truth = "truth"\nid = "id"'})
    card = load_card(folder)
    assert card.store_labels() is None and card.fit_task()[1].n_vetted == 2  # no store yet
    with LabelStore(card.store_file) as st:
        st.add(["b", "e"], [1, 0], annotator="ana")
        st.add(["d"], [1], annotator="ana")  # a correction of the file's label
    data = card.fit_task()[1]
    assert np.array_equal(data.labels, [1, 1, np.nan, 1, 0, np.nan], equal_nan=True)
    assert np.isnan(card.load_data()[0].labels[1])  # without store=True: the file's labels alone

    class Args:
        allow_outside, out, chains, draws = False, None, None, None

    _, opened, *_, store = _open_card(Args, folder)
    assert opened.n_vetted == 4 and store == (Path("vet.sqlite"), 2, 1)
    assert "3 label(s) from its label store vet.sqlite (2 of items the scores file leaves unvetted, " \
           "1 replacing the file's label: d (file 0, store 1)): 4 vetted in all" in capsys.readouterr().err
    with LabelStore(card.store_file) as st:
        st.add(["zz"], [1], annotator="ana")  # an id the scores file does not have
    with pytest.raises(CardError, match=r"holds labels of 1 item\(s\) that are not in scores.csv \('zz'\)") as err:
        card.fit_task()
    # the documented one-step fix, for this card (was: export, fix, import into a new store)
    assert f"`bayeval repair-store {card.store_file} --scores {card.data_file} --score score --id id`" in str(err.value)


def test_a_cards_report_records_its_label_store_in_its_provenance(tmp_path, capsys):
    """`bayeval report CARD` used the labels of the card's store but its report did not say so:
    the provenance named the scores file alone."""
    from bayeval.active.store import LabelStore

    csv = "id,score,label,truth\na,0.9,1,1\nb,0.8,,1\nc,0.4,,0\nd,0.3,0,0\ne,0.1,,0\nf,0.6,,1\n"
    folder = make_card(tmp_path / "c", csv=csv, **{'truth = "truth"': 'truth = "truth"\nid = "id"'})
    with LabelStore(load_card(folder).store_file) as st:
        st.add(["b", "e"], [1, 0], annotator="ana")
        st.add(["d"], [1], annotator="ana")
    out = tmp_path / "rep"
    assert main(["report", str(folder), "--out", str(out), "--draws", "50", "--tune", "50", "--chains", "1",
                 "--no-progress", "--quiet"]) == 0
    md = (out / "report.md").read_text()
    assert "vetted labels also read from the label store vet.sqlite (2 added to the file's, 1 replacing the " \
           "file's label)" in md


def test_a_cards_report_says_its_vetted_only_numbers_are_no_estimates_after_chosen_labels(tmp_path):
    """After labels chosen by `bayeval vet` (batches recorded in the card's store as designed or by
    expected change), the report still read "the vetted-only estimate from 79 labels ... uncertain by up to
    about ±0.11", as if the vetted items were a random sample of the pool."""
    from bayeval.active.store import LabelStore

    csv = "id,score,label,truth\na,0.9,1,1\nb,0.8,,1\nc,0.4,,0\nd,0.3,0,0\ne,0.1,,0\nf,0.6,,1\n"
    folder = make_card(tmp_path / "c", csv=csv, **{'truth = "truth"': 'truth = "truth"\nid = "id"'})
    with LabelStore(load_card(folder).store_file) as st:
        batch = st.new_batch(["b", "e"], strategy="design")
        st.add(["b", "e"], [1, 0], annotator="ana", batch=batch)
    out = tmp_path / "rep"
    assert main(["report", str(folder), "--out", str(out), "--draws", "50", "--tune", "50", "--chains", "1",
                 "--no-progress", "--quiet"]) == 0
    md = (out / "report.md").read_text()
    assert "not an estimate of this pool's: 2 of the 4 vetted items were chosen on purpose (design: 2)" in md
    assert "uncertain by up to" not in md and "| vetted_only | vetted_only_n |" in md


def test_a_cards_store_settles_labels_of_one_item_typed_as_text_and_as_int_by_its_conflict_rule(tmp_path):
    """A card without an id column (its items are the row numbers) whose store holds an item's labels
    under both kinds of its id ('4' typed by `bayeval label` before the store knew its items, 4 written
    by the vetting page) stopped with "Item 4 is given conflicting labels in one call"; they are one
    item's labels, settled by the store's conflict rule (each annotator's latest, a majority, a tie to
    the latest)."""
    from bayeval.active.store import LabelStore

    card = load_card(make_card(tmp_path / "c"))  # GOOD: no id column, six rows
    with LabelStore(card.store_file) as st:
        st.add(["1"], [0], annotator="ana")
        st.add([1], [1], annotator="bob")  # a tie: the latest, 1
        st.add([2], [1], annotator="ana")
        st.add(["2"], [0], annotator="bob")  # a tie: the latest, 0
        st.add(["4", 4, "4"], [1, 0, 0], annotator=None)  # written under one annotator: its latest, 0
        st.add(["4"], [1], annotator="bob")
        st.add([4], [1], annotator="cai")  # None's 0 against bob's and cai's 1: 1
        st.add(["5"], [1], annotator="ana")
        st.add([5], [0], annotator="ana")  # ana corrects herself under the other kind of the id
    data = card.fit_task()[1]
    assert np.array_equal(data.labels, [1, 1, 0, 0, 1, 0], equal_nan=True)
    assert card.load_data(store=True)[0].n_vetted == 6
    # Card.store_labels() lists them the same way: one entry per item, keyed as the card's data has it
    # (it listed '1' and 1, '2' and 2... as two entries each, each by its own annotators)
    listed = card.store_labels()
    assert listed.to_dict() == {1: 1, 2: 0, 4: 1, 5: 0}
    with LabelStore(card.store_file) as st:
        st.add(["0005", "zz"], [1, 0], annotator="ana")  # ids that are no row: listed as stored
    assert card.store_labels().to_dict() == {1: 1, 2: 0, 4: 1, 5: 0, "0005": 1, "zz": 0}


def test_a_decision_metric_without_threshold_or_prediction_column_is_refused_when_the_card_is_read(tmp_path):
    """`{ name = "recall" }` with no threshold and no [data] prediction passed the card check and
    failed only after the whole fit, with the Python API's wording."""
    toml = GOOD.replace('metrics = ["average_precision", { name = "precision_at_k", k = 2 }]',
                        'metrics = ["average_precision", { name = "recall" }]')
    folder = make_card(tmp_path / "r", toml=toml)
    with pytest.raises(CardError) as info:
        load_card(folder)
    msg = str(info.value)
    assert str(folder / "card.toml") in msg and "[report] metrics[1]" in msg
    assert "no `threshold`" in msg and "[data] prediction" in msg and 'threshold = 0.5' in msg
    ok = make_card(tmp_path / "t", toml=toml.replace('{ name = "recall" }', '{ name = "recall", threshold = 0.5 }'))
    assert load_card(ok).metrics()["recall[threshold=0.5]"] == ("recall", {"threshold": 0.5})


def test_precision_at_k_above_the_number_of_items_is_refused_in_the_card_and_in_python(tmp_path):
    """k = 5000 on 1,797 items was accepted: the report read "precision at 5000 ... between 0.061 and
    0.099", the missing places counted as negatives."""
    import bayeval as be
    from bayeval.core.data import EvalData

    toml = GOOD.replace("k = 2 }", "k = 7 }")  # the toy card has 6 items
    msg = fails(make_card(tmp_path / "k", toml=toml), "[report] metrics[1]", "k = 7", "6 items", "k = 6 or less")
    assert "negatives" in msg
    make_card(tmp_path / "k6", toml=GOOD.replace("k = 2 }", "k = 6 }"))
    assert load_card(tmp_path / "k6").load_data()[0].n_items == 6
    data = EvalData(np.array([0.9, 0.8, 0.4, 0.3]), np.array([1, np.nan, 0, np.nan]))
    post = Posterior.from_probabilities(data, [1, 0.5, 0.5, 0], draws=20, random_seed=0)
    with pytest.raises(ValueError, match=r"`k` = 5 is more than the 4 items.*k <= 4"):
        post.metric("precision_at_k", k=[2, 5])
    assert post.metric("precision_at_k", k=4).dims == ("chain", "draw")
    cmp = be.compare({"a": data.scores, "b": data.scores[::-1]}, data, draws=20, random_seed=0, progressbar=False)
    with pytest.raises(ValueError, match=r"`k` = 6 is more than the 4 items"):
        cmp.metric("precision_at_k", k=6)


def test_a_top_k_above_a_categorys_items_or_a_recall_at_k_above_the_items_is_refused(tmp_path):
    """k = 5 on data whose category 'b' holds 2 items was accepted per category (only the 10 items in
    all were checked): 'b''s P@5 counted 3 missing places as negatives (at most 0.4); and recall_at_k
    with k above the items was accepted (1 in every draw) where precision_at_k was refused."""
    import bayeval as be
    from bayeval import EvalData, vetted_only

    s = np.linspace(0.95, 0.05, 10)
    data = EvalData(s, [1, 0, np.nan, 0, 0, 1, 0, 0, 1, 0], categories=list("aaaaaaaabb"))
    post = Posterior.from_probabilities(data, np.full(10, 0.5), draws=20, random_seed=0)
    said = (r"precision_at_k: `k` = 5 is more than the items of 1 category: 'b' \(2 items\); .*in category 'b' "
            r"the top 5 would count 3 missing items as negatives.* Give k <= 2 .*or category=\"pooled\" for the top "
            r"of all 10 items")
    for call in (lambda: post.metric("precision_at_k", k=5), lambda: post.summary([("precision_at_k", {"k": 5})]),
                 lambda: post.metric("precision_at_k", k=[1, 5], category="mean")):
        with pytest.raises(ValueError, match=said):
            call()
    assert post.metric("precision_at_k", k=5, category="pooled").dims == ("chain", "draw")
    assert post.metric("precision_at_k", k=2).sizes["category"] == 2
    with pytest.raises(ValueError, match=r"recall_at_k: `k` = 11 is more than the 10 items.*recall would be 1.*k <= 10"):
        post.metric("recall_at_k", k=11, category="pooled")
    with pytest.raises(ValueError, match=r"recall_at_k: `k` = 3 .*'b' \(2 items\).*recall would be 1"):
        post.summary([("recall_at_k", {"k": 3})])
    assert float(post.metric("recall_at_k", k=10, category="pooled").min()) == 1.0  # k = every item: allowed
    # vetted_only ranks the 9 vetted items alone: NaN until k are vetted, not refused
    assert np.isnan(float(vetted_only(data, "recall_at_k", k=10, category="pooled")))
    cmp = be.compare({"a": s, "b": s[::-1]}, EvalData(s, data.labels), draws=20, random_seed=0, progressbar=False,
                     warn=False)
    with pytest.raises(ValueError, match=r"recall_at_k: `k` = 11 is more than the 10 items"):
        cmp.metric("recall_at_k", k=11)

    # a card: per category where the report computes the entry per category (no `category`, or "each"/"mean")
    csv = "score,label,truth,cat\n0.9,1,1,a\n0.8,,1,a\n0.4,,0,a\n0.3,0,0,b\n0.1,,0,b\n0.6,,1,a\n"
    for entry, fragments in [
        ('{ name = "precision_at_k", k = 3 }', ("'b' (2 items)", "Give k <= 2", 'category = "pooled"',
                                              "table by category")),
        ('{ name = "precision_at_k", k = 3, category = "mean" }', ("'b' (2 items)", "Give k <= 2")),
        ('{ name = "recall_at_k", k = 7 }', ("recall_at_k with k = 7", "6 items", "recall would be 1",
                                            "k = 6 or less"))]:
        folder = make_card(tmp_path / str(len(list(tmp_path.iterdir()))), csv=csv, **{
            'truth = "truth"': 'truth = "truth"\ncategory = "cat"',
            '{ name = "precision_at_k", k = 2 }': entry})
        msg = fails(folder, "[report] metrics[1]", *fragments)
        assert ("table by category" in msg) == (entry == '{ name = "precision_at_k", k = 3 }')
    ok = make_card(tmp_path / "pooled", csv=csv, **{
        'truth = "truth"': 'truth = "truth"\ncategory = "cat"',
        '{ name = "precision_at_k", k = 2 }': '{ name = "precision_at_k", k = 3, category = "pooled" }'})
    assert load_card(ok).load_data()[0].n_items == 6


def test_posterior_metric_refuses_precision_at_k_above_the_number_of_items(small_default_fit):
    post, _ = small_default_fit("all")
    with pytest.raises(ValueError, match=r"precision_at_k: `k` = 500 is more than the 120 items"):
        post.metric("precision_at_k", k=500)
    assert float(post.metric("precision_at_k", k=120).mean()) == pytest.approx(post.data.labels.mean())


# ------------------------------------------------- how the vetted labels were chosen

RANDOM = {'label = "label"': 'label = "label"\nlabel_strategy = "random"'}


def test_a_card_may_say_its_vetted_labels_were_drawn_at_random(tmp_path):
    """A card could not say that its scores file's vetted labels were drawn at random: the report
    called every vetted-only ± conditional ("if the vetted items were drawn at random")."""
    card = load_card(make_card(tmp_path / "c", **RANDOM))
    assert card.label_strategy == "random" and card.vetted_selection() == {"random": 2}
    assert load_card(make_card(tmp_path / "plain")).vetted_selection() is None  # not said: not known
    fails(make_card(tmp_path / "typo", **{'label = "label"': 'label = "label"\nlabel_strategy = "randon"'}),
          "[data] label_strategy", "expected 'random'", "got 'randon'", "Leave the key out")
    fails(make_card(tmp_path / "nolabel", **{'label = "label"': 'label_strategy = "random"'}),
          "[data] label_strategy", "names no `label` column")


def test_a_random_cards_report_gives_its_vetted_only_numbers_unconditionally(tmp_path, capsys):
    """With `label_strategy = "random"` the report reads the vetted-only numbers as estimates of the
    pool's; a batch of the card's store chosen on purpose that proposed one of the file's vetted items
    wins over the card's claim, with a warning, and the report says "chosen on purpose"."""
    from bayeval.active.store import LabelStore

    csv = "id,score,label,truth\na,0.9,1,1\nb,0.8,,1\nc,0.4,,0\nd,0.3,0,0\ne,0.1,,0\nf,0.6,,1\n"
    folder = make_card(tmp_path / "c", csv=csv, **{'truth = "truth"': 'truth = "truth"\nid = "id"'}, **RANDOM)
    out, fit = tmp_path / "rep", tmp_path / "fit.nc"
    assert main(["report", str(folder), "--out", str(out), "--draws", "50", "--tune", "50", "--chains", "1",
                 "--no-progress", "--quiet", "--save", str(fit)]) == 0
    md = (out / "report.md").read_text()
    assert "the vetted items were drawn at random, and from 2 it is uncertain by up to about ±0.71 (1/√2)" in md
    assert "if the vetted items were drawn at random" not in md
    assert "it estimates the pool's metric (uncertain by up to about 1/√vetted_only_n) only if" not in md
    assert "label_strategy" not in capsys.readouterr().err  # (a sampler's warning of 50 draws is said, not this)
    with LabelStore(load_card(folder).store_file) as st:  # the store says item d was chosen by design
        batch = st.new_batch(["d"], strategy="design")
        st.add(["d"], [0], annotator="ana", batch=batch)
    with pytest.warns(UserWarning, match=r"label_strategy = 'random' says .* 1 of the scores file's vetted items "
                                         r"were proposed by its batches chosen on purpose \(design: 1\), and the "
                                         r"store's record wins over the card's claim"):
        assert load_card(folder).vetted_selection() == {"random": 1, "design": 1}
    assert main(["report", str(folder), "--out", str(out), "--from-fit", str(fit), "--no-progress", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "warning: " in err and "the store's record wins over the card's claim" in err
    md = (out / "report.md").read_text()
    assert "not an estimate of this pool's: 1 of the 2 vetted items were chosen on purpose (design: 1)" in md
    assert "uncertain by up to" not in md


def test_a_random_card_warns_when_its_store_adds_labels_chosen_on_purpose(tmp_path):
    from bayeval.active.store import LabelStore

    csv = "id,score,label\na,0.9,1\nb,0.8,\nc,0.4,\nd,0.3,0\ne,0.1,\nf,0.6,\n"
    card = load_card(make_card(tmp_path / "c", csv=csv, **{'truth = "truth"': 'id = "id"'}, **RANDOM))
    with LabelStore(card.store_file) as st:
        st.add(["c"], [0], annotator="ana")  # typed without a batch: its choice is not known
    assert card.vetted_selection() == {"random": 2, None: 1}
    with LabelStore(card.store_file) as st:
        batch = st.new_batch(["b", "e"], strategy="expected_change")
        st.add(["b", "e"], [1, 0], annotator="ana", batch=batch)
    with pytest.warns(UserWarning, match=r"it adds 2 vetted item\(s\) chosen on purpose \(expected_change: 2\)"):
        assert card.vetted_selection() == {"random": 2, None: 1, "expected_change": 2}
