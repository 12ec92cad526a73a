"""The numbers and defaults quoted in docs/ are what the code gives.

The quick start of ``docs/index.md`` is run as written, and the numbers the user guide
quotes from it (the summary table, the true values and where they fall, the
thresholds) are parsed from the Markdown and compared with that run. Quoted defaults
are compared with the code, and quoted benchmark figures with the committed results.
When a test here fails after a deliberate change, the message gives the new numbers
to write into the doc.
"""

from __future__ import annotations

import importlib
import inspect
import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# Same dependency versions (constraints.txt) give the same numbers; other versions differ
# by Monte Carlo error. A summary cell moves by well under 0.005 across versions; the
# old guide's quick-start threshold was off by 0.017.
TOL = 0.005


def _module(name):
    """A bayeval module by its short name, wherever the package keeps it."""
    for full in (f"bayeval.core.{name}", f"bayeval.{name}"):
        try:
            return importlib.import_module(full)
        except ImportError:
            continue
    raise ImportError(name)


def _read(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _section(md: str, heading: str) -> str:
    start = md.index(heading)
    nxt = re.search(r"^#{1,3} ", md[start + len(heading):], flags=re.M)
    return md[start:start + len(heading) + (nxt.start() if nxt else len(md))]


def _blocks(md: str, lang: str = "") -> list[str]:
    """The fenced blocks of language ``lang`` ("": no language), each fence paired with its own close."""
    fences = re.finditer(r"^```(\w*)\n(.*?)^```[ \t]*$", md, flags=re.S | re.M)
    return [m.group(2) for m in fences if m.group(1) == lang]


def _flat(md: str) -> str:
    return re.sub(r"\s+", " ", md)


@pytest.fixture(scope="module")
def quick_start():
    """docs/index.md's quick start, run as written; its namespace."""
    code = _blocks(_section(_read("index.md"), "## Quick start"), "python")
    assert len(code) == 1, "the quick start should be one python block"
    ns: dict = {}
    with redirect_stdout(io.StringIO()):
        exec(compile(code[0], "docs/index.md (quick start)", "exec"), ns)
    return ns


def test_index_opens_with_the_default_model():
    qs = _section(_read("index.md"), "## Quick start")
    code = _blocks(qs, "python")[0]
    assert "be.fit(data" in code and "ScoreMixture(" not in code
    assert "`bayeval.fit`" in qs


def test_quick_start_data_is_as_described(quick_start):
    data = quick_start["data"]
    text = _flat(_section(_read("index.md"), "## Quick start"))
    n, v = map(int, re.search(r"scores for (\d+) tumours, (\d+) of them vetted", text).groups())
    assert (n, v) == (data.n_items, data.n_vetted)


def test_guide_summary_table_is_the_quick_start_fit(quick_start):
    post = quick_start["post"]
    sec = _section(_read("guide.md"), "## Reading a summary table")
    flat = _flat(sec)
    chains, draws = map(int, re.search(r"(\d+) chains x (\d+) draws", flat).groups())
    assert (chains, draws) == (post.n_chains, post.n_draws)
    table_txt = [b for b in _blocks(sec) if "hdi_5%" in b][0]
    quoted = pd.read_csv(io.StringIO(table_txt), sep=r"\s+", skiprows=2, header=None, index_col=0,
                         names=["metric", "mean", "sd", "hdi_5%", "hdi_95%"])
    actual = post.summary(["average_precision", ("precision_at_k", {"k": 100}), "f_score"])
    assert quoted.index.tolist() == actual.index.tolist()
    diff = (quoted - actual[quoted.columns]).abs().to_numpy().max()
    assert diff <= TOL, f"docs/guide.md's summary table is out of date; the quick start gives:\n{actual}"


def test_guide_summary_table_shows_its_data_and_tells_it_from_the_card(quick_start):
    """The guide quoted a fit of `data` without saying where it came from (40 vetted labels),
    while the README's card of the same scores has 30: two breast-cancer examples, two answers."""
    from bayeval.cards import load_card

    sec = _section(_read("guide.md"), "## Reading a summary table")
    (code,) = _blocks(sec, "python")
    ns: dict = {}
    with redirect_stdout(io.StringIO()):
        exec(compile(code, "docs/guide.md (reading a summary table)", "exec"), ns)
    data = ns["data"]
    assert "load_breast_cancer_scores()" in code and "be.fit(data, random_seed=0)" in code
    assert ns["post"].summary().equals(quick_start["post"].summary())  # the fit the table quotes
    flat = _flat(sec)
    said = re.search(r"`load_breast_cancer_scores\(\)` has (\d+) vetted labels\. The model card "
                     r"`(models/[\w]+)` .*? with (\d+) vetted labels", flat)
    assert said, "the guide should say how many labels the example has, and the card"
    card_data, _ = load_card(ROOT / said.group(2)).load_data()
    assert (int(said.group(1)), int(said.group(3))) == (data.n_vetted, card_data.n_vetted)
    assert np.array_equal(card_data.scores, data.scores)  # "the same 569 scores"


def test_guide_true_values_and_where_they_fall(quick_start):
    from bayeval import metrics as M
    from bayeval import vetted_only
    from bayeval.datasets import load_breast_cancer_scores

    post, data = quick_start["post"], quick_start["data"]
    truth = load_breast_cancer_scores(as_frame=True)["true_label"].to_numpy()
    summ = post.summary(["average_precision", ("precision_at_k", {"k": 100}), "f_score"])
    true = {
        "AP": (M.average_precision(truth, data.scores), "average_precision"),
        "P@100": (M.precision_at_k(truth, data.scores, k=100), "precision_at_k"),
        "F1": (M.f_score(truth, data.predictions), "f_score"),
    }
    flat = _flat(_section(_read("guide.md"), "## Reading a summary table"))
    said = re.search(r"true values \(.*?\) are AP (\S+) \((.*?)\), P@100 (\S+) \((.*?)\) and F1 of the "
                     r"0\.5-threshold predictions (\S+) \((.*?)\)", flat)
    assert said, "the guide should state the true AP, P@100 and F1 and where each falls"
    for (name, (value, row)), (num, where) in zip(true.items(), zip(said.groups()[::2], said.groups()[1::2], strict=True),
                                                  strict=True):
        assert float(num) == pytest.approx(float(value), abs=5e-4), name
        lo, hi = summ.loc[row, "hdi_5%"], summ.loc[row, "hdi_95%"]
        fact = "inside" if lo - 1e-9 <= value <= hi + 1e-9 else ("above" if value > hi else "below")
        assert where.startswith(fact), f"{name}: the guide says {where!r}, the fit puts it {fact} [{lo}, {hi}]"
    vo = re.search(r"The (\d+) vetted items alone give AP (\S+) and F1 (\S+) ", flat)
    assert int(vo.group(1)) == data.n_vetted
    assert float(vo.group(2)) == pytest.approx(float(vetted_only(data, "average_precision")), abs=5e-4)
    assert float(vo.group(3)) == pytest.approx(float(vetted_only(data, "f_score")), abs=5e-4)


def test_guide_thresholds_are_the_quick_start_fit(quick_start):
    from bayeval import recalibrate

    post = quick_start["post"]
    flat = _flat(_section(_read("guide.md"), "## Choosing a threshold under constraints"))
    m = re.search(r"`recalibrate\(post, min_precision=([\d.]+), min_recall=([\d.]+)\)` finds no threshold .*? "
                  r"the best, `t = ([\d.]+)`, holds with probability ([\d.]+)\.", flat)
    assert m, "the guide should quote the quick start's two-sided threshold"
    rec = recalibrate(post, min_precision=float(m.group(1)), min_recall=float(m.group(2)))
    msg = f"docs/guide.md's thresholds are out of date; the quick start gives {rec!r}"
    # the threshold as printed (the shortest decimal flagging the same items): 0.452 flags others than 0.4516
    assert m.group(3) == rec.threshold_text, msg
    assert float(m.group(4)) == pytest.approx(rec.probability_at_threshold, abs=TOL), msg
    assert rec.probability_at_threshold < 0.5  # "no threshold where both hold with a useful probability"
    m = re.search(r"`recalibrate\(post, min_precision=([\d.]+), prob=([\d.]+)\)`, recommends `t = ([\d.]+)`: it "
                  r"holds with probability ([\d.]+) and flags (\d+) of the (\d+) items, with recall ([\d.]+) "
                  r"\[([\d.]+), ([\d.]+)\] \(90% HDI\)", flat)
    assert m, "the guide should quote the quick start's model-card threshold"
    rec = recalibrate(post, min_precision=float(m.group(1)), prob=float(m.group(2)))
    msg = f"docs/guide.md's thresholds are out of date; the quick start gives {rec!r}"
    assert rec.met
    assert m.group(3) == rec.threshold_text, msg  # the guide said 0.864 where the code prints 0.8639
    assert float(m.group(4)) == pytest.approx(rec.probability_at_threshold, abs=TOL), msg
    assert (int(m.group(5)), int(m.group(6))) == (rec.flagged, post.data.n_items), msg
    at = rec.at_threshold()
    got = at.loc["recall", ["mean", "hdi_5%", "hdi_95%"]].to_numpy(dtype=float)
    np.testing.assert_allclose([float(m.group(i)) for i in (7, 8, 9)], got, atol=0.01, err_msg=msg)


def test_guide_arviz_reading_is_what_arviz_and_the_default_fit_give(quick_start):
    """The guide showed ``az.summary(idata, group="metrics")`` without saying that ArviZ's HDI
    is 94% (bayeval's 90%), nor that the default fit's ``post.idata`` holds no parameters."""
    import arviz as az

    from bayeval.core._defaults import HDI_PROB

    flat = _flat(_read("guide.md"))
    m = re.search(r"ArviZ's HDI is (\d+)% unless told otherwise \(`hdi_(\d+)%` / `hdi_(\d+)%`\), bayeval's (\d+)% "
                  r"\(`hdi_(\d+)%` / `hdi_(\d+)%`\): pass `hdi_prob=([\d.]+)`", flat)
    assert m, "the guide should say ArviZ's default HDI next to bayeval's"
    post = quick_start["post"]
    idata = post.to_inference_data(["average_precision"])
    arviz_cols = az.summary(idata, group="metrics", kind="stats").columns
    assert float(m.group(1)) / 100 == az.rcParams["stats.ci_prob"]
    assert [f"hdi_{m.group(2)}%", f"hdi_{m.group(3)}%"] == [c for c in arviz_cols if c.startswith("hdi_")]
    assert float(m.group(4)) / 100 == HDI_PROB == float(m.group(7))
    assert [f"hdi_{m.group(5)}%", f"hdi_{m.group(6)}%"] == [c for c in post.summary(["average_precision"]).columns
                                                           if c.startswith("hdi_")]
    said = re.search(r"the posterior group of `post.idata` holds only `(\w+)` and `(\w+)`", flat)
    assert said and sorted(post.idata.posterior.data_vars) == sorted(said.groups())
    assert "post.candidates[name].idata" in flat
    assert {"a", "b"} <= set(post.candidates["calibration/logistic"].idata.posterior.data_vars)


def test_guide_min_flagged_default_is_the_code():
    from bayeval import recalibrate
    from bayeval.recalibrate import default_min_flagged

    flat = _flat(_read("guide.md"))
    m = re.search(r"by default the larger of (\d+) and (\d+)% of the items, at most a tenth of the expected "
                  r"number of positives", flat)
    assert m and inspect.signature(recalibrate).parameters["min_flagged"].default is None
    lo, pct = int(m.group(1)), int(m.group(2))
    for n, pos in [(569, 212.0), (2699, 400.0), (40000, 200.0), (50, 5.0), (10**6, 10**5)]:
        assert default_min_flagged(n, pos) == max(lo, min(-(-n * pct // 100), -(-int(pos) // 10)))


def test_guide_quoted_defaults_are_the_code():
    from bayeval import acis
    from bayeval.active.select import select

    guide = _flat(_read("guide.md"))
    acis_defaults = inspect.signature(acis).parameters
    m = re.search(r"5% of every batch \(`rest_share=([\d.]+)`\)", guide)
    assert float(m.group(1)) == acis_defaults["rest_share"].default == 0.05
    assert '(`interval="jeffreys"`)' in guide and acis_defaults["interval"].default == "jeffreys"
    assert "(`model_assist=True`)" in guide and acis_defaults["model_assist"].default is True
    assert 'The default strategy, `"expected_change"`' in guide
    assert inspect.signature(select).parameters["strategy"].default == "expected_change"
    m = re.search(r"HDI, (\d+)% by default", guide)
    assert int(m.group(1)) / 100 == _module("_defaults").HDI_PROB
    m = re.search(r"about (\d+) MiB each by default", guide)
    assert int(m.group(1)) * 2**20 == _module("posterior").CHUNK_BYTES
    m = re.search(r"more memory than (\d+) GB is refused", guide)
    assert float(m.group(1)) == _module("_validate")._DEFAULT_MAX_MEMORY_GB


def test_guide_cli_default_model_is_bayeval_fit(tmp_path, monkeypatch, capsys):
    """`fit`, `threshold` and `select` fit bayeval.fit's model unless told otherwise."""
    from bayeval import cli
    from bayeval.models import Stack

    flat = _flat(_read("guide.md"))
    assert ("`fit`, `threshold` and `select` use the default model (`bayeval.fit`: calibration curves "
            "stacked by leave-one-out) unless `--model` names another") in flat

    class Chosen(Exception):
        pass

    def fake_fit(self, data, **kw):
        raise Chosen(type(self).__name__)

    monkeypatch.setattr(Stack, "fit", fake_fit)
    path = tmp_path / "s.csv"
    pd.DataFrame({"s": np.linspace(0, 1, 30), "y": [1, 0] * 5 + [np.nan] * 20}).to_csv(path, index=False)
    base = [str(path), "--score", "s", "--label", "y"]
    for args in (["fit", *base], ["threshold", *base, "--min-precision", "0.8"], ["select", *base, "--size", "2"]):
        with pytest.raises(Chosen, match="Stack"):
            cli.main(args)
    capsys.readouterr()


def test_card_template_lists_every_model_and_its_defaults():
    cards = importlib.import_module("bayeval.cards")
    doc = cards.__doc__
    line = re.search(r'\[model\].*?\n\s*name = "(\w+)"\s*# (.*)\n', doc)
    assert line.group(1) == "default"
    assert sorted(re.findall(r'"(\w+)"', line.group(2))) == sorted(cards.MODELS)
    for key, value in cards._SAMPLING_DEFAULTS.items():
        assert re.search(rf"\n\s*{key} = {value}\s", doc), key
    assert re.search(rf"\n\s*hdi_prob = {cards._REPORT_DEFAULTS['hdi_prob']:g}\s", doc)


def test_models_readme_documents_every_card_key_the_parser_accepts(tmp_path):
    """models/README.md's card.toml reference is valid TOML whose tables and keys are exactly
    those the parser accepts, with the parser's model names and defaults, and it loads."""
    import tomllib

    cards = importlib.import_module("bayeval.cards")
    text = (ROOT / "models" / "README.md").read_text(encoding="utf-8")
    sec = text[text.index("## `card.toml`"):]
    block = re.search(r"```toml\n(.*?)```", sec, flags=re.S).group(1)
    doc = tomllib.loads(block)
    allowed = {"data": cards._DATA_KEYS, "sampling": cards._SAMPLING_KEYS, "report": cards._REPORT_KEYS,
               "constraints": cards._CONSTRAINT_KEYS, "vet": cards._VET_KEYS}
    assert sorted(doc) == sorted(cards._TOP_KEYS)
    for table, keys in allowed.items():
        documented = set(doc[table]) | set(re.findall(r"\n# (\w+) = ", block.split(f"[{table}]")[1].split("\n[")[0]))
        assert documented == set(keys), (table, sorted(set(keys) - documented), sorted(documented - set(keys)))
    for table, defaults in (("sampling", cards._SAMPLING_DEFAULTS), ("report", cards._REPORT_DEFAULTS),
                            ("vet", cards._VET_DEFAULTS)):
        for key, value in defaults.items():
            assert doc[table][key] == value, (table, key)
    line = re.search(r'\[model\].*?\n\s*name = "(\w+)"\s*# required: (.*)\n', block)
    assert sorted(re.findall(r'"(\w+)"', line.group(2))) == sorted(cards.MODELS)
    for name in cards.MODELS:  # each model's constructor keys are listed under its name
        cls = getattr(importlib.import_module(cards.MODELS[name][0]), cards.MODELS[name][1])
        listed = re.search(rf"#   {name} +\(.*?(?=\n#   \w|\n# e\.g\.)", block, flags=re.S).group(0)
        for key in inspect.signature(cls).parameters:
            assert re.search(rf"\b{key}\b", listed), (name, key)
    # the documented card loads (given its columns and a metric the [vet] table names)
    cols = ["score", "label", "noisy", "prediction", "category", "id", "truth", "f1", "f2", "image", "text"]
    frame = pd.DataFrame({c: [0.9, 0.2, 0.6, 0.4] if c in ("score", "f1", "f2") else [1, 0, 1, 0] for c in cols})
    frame["id"], frame["category"] = ["a", "b", "c", "d"], ["x", "x", "y", "y"]
    frame["image"], frame["text"] = "i.png", "t"
    frame.to_csv(tmp_path / "scores.csv", index=False)
    (tmp_path / "card.toml").write_text(block, encoding="utf-8")
    card = cards.load_card(tmp_path)
    assert card.constraints["min_flagged"] == 0 and card.vet["budget"] == 200


def test_guide_coverage_quotes_match_the_committed_benchmarks():
    def default_rows(name):
        text = (ROOT / "benchmarks" / "results" / name).read_text(encoding="utf-8")
        sec = text[text.index("## Every model"):]
        sec = sec[:sec.index("\n## ", 3)]
        return {int(b): float(c) for b, c in re.findall(r"^\| default \| (\d+) \| ([\d.]+) \|", sec, flags=re.M)}

    flat = _flat(_read("guide.md"))
    m = re.search(r"covered the truth in (\d+)--(\d+)% of cases pooled \(on the six pools held out from every "
                  r"choice, ([\d.]+)% / ([\d.]+)% with 30 / 100 labels\)", flat)
    assert m
    main, held = default_rows("real_scores.md"), default_rows("real_scores_heldout.md")
    assert [int(m.group(1)), int(m.group(2))] == [round(100 * min(main.values())), round(100 * max(main.values()))]
    assert [float(m.group(3)), float(m.group(4))] == [round(100 * held[30], 1), round(100 * held[100], 1)]


def test_models_doc_quotes_the_committed_rare_fraud_report():
    flat = _flat(_read("models.md"))
    m = re.search(r"\(the `rare_fraud_gbm` card: AP [\d.]+ \[[\d.]+, [\d.]+\] standardized, ([\d.]+) "
                  r"\[([\d.]+), ([\d.]+)\] as log-odds, true ([\d.]+)\)", flat)
    assert m
    report = (ROOT / "models" / "rare_fraud_gbm" / "report" / "report.md").read_text(encoding="utf-8")
    # the columns mean, sd, HDI lower, HDI upper, vetted_only, vetted_only_n, truth
    row = re.search(r"^\| average_precision \| ([\d.]+) \| [\d.]+ \| ([\d.]+) \| ([\d.]+) \| [^|]+ \| \d+ \| "
                    r"([\d.]+) \|", report, flags=re.M)
    assert [m.group(i) for i in (1, 2, 3, 4)] == [row.group(i) for i in (1, 2, 3, 4)]


def test_guide_acis_interval_is_the_rare_category_notebooks():
    """docs/guide.md quoted ACIS's interval on the rare-category notebook's pool as [0.003, 0.776]
    where the notebook computes [0.0039, 0.776]. The notebook's prose is checked against what its
    cells print (tests/test_notebooks.py, PROSE_CHECKED); the guide must quote the same ends."""
    import json

    nb = json.loads((ROOT / "notebooks" / "rare_category_fscore.ipynb").read_text(encoding="utf-8"))
    prose = _flat(" ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"))
    m = re.search(r"share the upper end, (\d\.\d{3}), and differ in the lower end, from (\d\.\d{3}) \(`jeffreys`\)",
                  prose)
    assert m, "the notebook no longer states the jeffreys interval's ends as this test reads them"
    g = re.search(r"ACIS's \[(\d\.\d{3}), (\d\.\d{3})\]", _flat(_read("guide.md")))
    assert g and (g.group(1), g.group(2)) == (m.group(2), m.group(1)), (
        f"docs/guide.md quotes ACIS's [{g.group(1)}, {g.group(2)}]; the notebook's is [{m.group(2)}, {m.group(1)}]")


def test_models_readme_snippet_loads_the_labels_the_fit_uses(tmp_path):
    """models/README.md's snippet read `card.load_data()` (the scores file alone: 40 vetted) while
    `card.fit()` uses the card's label store too (47): the two must agree."""
    import shutil

    from bayeval.active.store import LabelStore
    from bayeval.cards import load_card

    text = (ROOT / "models" / "README.md").read_text(encoding="utf-8")
    snippet = re.search(r"```python\n(.*?)```", text, flags=re.S).group(1)
    lines = [ln for ln in snippet.splitlines() if ln.startswith(("from bayeval.cards", "card =", "data, truth ="))]
    assert len(lines) == 3, lines
    folder = shutil.copytree(ROOT / "models" / "digits_svm", tmp_path / "digits_svm")
    plain = load_card(folder).load_data()[0]
    unvetted = plain.item_ids[~plain.vetted][:5].tolist()
    with LabelStore(load_card(folder).store_file) as st:
        st.add(unvetted, [0] * 5, annotator="ana")
    scope: dict = {}
    exec("\n".join(lines).replace('"models/digits_svm"', repr(str(folder))), scope)
    assert scope["data"].n_vetted == scope["card"].fit_task()[1].n_vetted == plain.n_vetted + 5
