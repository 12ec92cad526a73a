"""The report's reading says only what its tables say.

Each sentence about the data, the metrics, the threshold and the diagnostics is checked
against the table it reads: no threshold meeting the constraint -> the reading says so
(and never "Threshold t meets"); a calibration candidate whose worst Pareto k is above
0.7 -> the reading says so, and never calls the diagnostics fine without it.
"""

import math

import numpy as np
import pytest

from bayeval import EvalData, Posterior
from bayeval._report_text import fmt as _fmt
from bayeval.recalibrate import probability_text
from bayeval.report import report

K_OK = 0.7


def check_reading(r):
    """Assert every sentence of ``r.text`` against ``r.tables``; returns the sentences checked."""
    text = r.text
    checked = []
    # the data sentence
    counts = r.tables["data"]
    total = counts.iloc[-1]
    data_s = [s for s in text if s.startswith("The evaluation set has")]
    assert len(data_s) == 1
    assert f"has {int(total['items'])} items; {int(total['vetted'])} are vetted" in data_s[0]
    checked += data_s
    # the metric sentences: the interval and mean of each row
    m = r.tables["metrics"]
    lo, hi = m.columns[2], m.columns[3]
    metric_s = [s for s in text if s.startswith("With ") and "probability the" in s]
    assert len(metric_s) == min(len(m), 8)
    for s, (_, row) in zip(metric_s, m.iterrows()):
        assert f"(posterior mean {_fmt(row['mean'])})" in s
        if row[lo] == row[hi]:
            assert f"is exactly {_fmt(row[lo])}" in s
        else:
            assert f"between {_fmt(row[lo])} and {_fmt(row[hi])}" in s
        checked.append(s)
    # the threshold
    if "constraints" in r.tables:
        c = r.tables["constraints"]
        row = c.iloc[-1]
        p, req = row["probability"], row["required probability"]
        t = c.attrs["cell_text"]["threshold"][-1]  # the threshold as shown: the decimal that flags the same items
        flags = f"flags {int(row['flagged items'])} of {int(row['items'])} items"
        meets = [s for s in text if s.startswith("Threshold ") and " meets " in s]
        none = [s for s in text if s.startswith("No threshold meets")]
        if math.isnan(req) and p == 0:  # the most probable rule, and no draw meets it anywhere
            assert not meets, "a threshold no draw supports is said to meet the constraint"
            nodraw = [s for s in text if s.startswith("No posterior draw meets the constraint")]
            assert len(nodraw) == 1
            s = nodraw[0]
            assert f"t = {t}" in s and flags in s
            assert s in r.warnings["constraints"]
        elif math.isnan(req) or p >= req:
            assert len(meets) == 1 and not none
            s = meets[0]
            assert s.startswith(f"Threshold {t} meets") and flags in s
            for name, q in c["probability"].items():  # on the side of the required one that it lies
                assert f"with probability {probability_text(q, None if math.isnan(req) else req)}" in s, name
            if not math.isnan(req):
                assert f"at least the required {req:g}" in s
        else:
            assert not meets, "a threshold that does not meet the constraint is said to meet it"
            assert len(none) == 1
            s = none[0]
            assert s.startswith(f"No threshold meets the constraint with probability {req:g}")
            assert f"t = {t}" in s and flags in s and f"probability {probability_text(p, req)}" in s
            assert float(probability_text(p, req)) < req
            assert s in r.warnings["constraints"]
        checked.append(s)
    else:
        assert not any(s.startswith(("Threshold ", "No threshold")) for s in text)
    # the diagnostics: the calibration candidates' Pareto k, and the sampler's table
    cal = r.tables.get("calibration")
    high = [] if cal is None else [(n, k) for n, k in cal["worst Pareto k"].items() if k > K_OK]
    approx = [s for s in text if s.startswith("The leave-one-out scores that weigh the candidates are approximate")]
    fine = [s for s in text if "diagnostics look fine" in s]
    if high:
        assert len(approx) == 1
        for name, k in high:
            assert f"{name} {k:.2f}" in approx[0]
        weight = cal["weight"]
        worst = max(high, key=lambda h: (weight[h[0]], h[1]))  # the one that carries the most weight
        for s in fine:
            assert f"do not: worst Pareto k {worst[1]:.2f}" in s and f"for {worst[0]} (weight" in s
        checked += approx
    else:
        assert not approx and not any("Pareto k" in s and "do not" in s for s in fine)
    diag = r.tables.get("diagnostics")
    if diag is not None and "importance sampling: Pareto k" in diag.index:
        ok = diag.loc["importance sampling: Pareto k", "value"] < K_OK
        for s in fine:
            assert ok and f"Pareto k {_fmt(diag.loc['importance sampling: Pareto k', 'value'])}" in s
    checked += fine
    return checked


@pytest.fixture(scope="module")
def plain():
    rng = np.random.default_rng(0)
    n = 500
    s = np.sort(rng.uniform(0, 1, n))
    p = s**2
    y = np.full(n, np.nan)
    idx = rng.choice(n, 40, replace=False)
    y[idx] = (rng.random(40) < p[idx]).astype(float)
    return Posterior.from_probabilities(EvalData(s, y), p, draws=400, random_seed=0)


@pytest.mark.parametrize(
    "cons",
    [
        {"min_precision": 0.99, "prob": 0.9},  # nothing flagging >= 10 items reaches it
        {"min_precision": 0.7, "prob": 0.9},  # met
        {"min_precision": 0.7, "min_recall": 0.5},  # the most probable rule
        {"min_precision": 0.75, "min_recall": 0.8},  # the most probable, and below one half (0.005)
        {"min_precision": 0.99, "min_recall": 0.99},  # the most probable, and no draw meets it anywhere
    ],
)
def test_threshold_sentences_match_the_constraints_table(plain, cons):
    r = report(plain, title="t", constraints=cons)
    checked = check_reading(r)
    assert any(s.startswith(("Threshold", "No threshold", "No posterior draw")) for s in checked)


def test_no_threshold_is_said_even_where_a_tiny_one_would_meet_it(plain):
    # the report used to say "Threshold t meets precision >= 0.99 with probability 0.59"
    r = report(plain, title="t", constraints={"min_precision": 0.99, "prob": 0.9})
    row = r.tables["constraints"].iloc[-1]
    assert row["probability"] < 0.9 and row["flagged items"] >= row["fewest allowed"] == 10
    assert any(s.startswith("No threshold meets the constraint with probability 0.9 while flagging at least 10")
               for s in r.text)
    assert not any(s.startswith("Threshold") for s in r.text)
    check_reading(r)
    # asked for: any threshold, and the reading says how few items it flags
    r0 = report(plain, title="t", constraints={"min_precision": 0.99, "prob": 0.9, "min_flagged": 0})
    check_reading(r0)
    assert r0.tables["constraints"].iloc[-1]["fewest allowed"] == 0


@pytest.fixture(scope="module")
def stacked():
    import bayeval as be

    rng = np.random.default_rng(3)
    q = rng.beta(1, 3, 400)
    truth = (rng.random(400) < q).astype(int)
    lab = np.full(400, np.nan)
    lab[:40] = truth[:40]
    return be.fit(EvalData(q, lab), random_seed=0, draws=300)


def test_a_candidate_with_a_high_pareto_k_is_said(stacked):
    comp = stacked.comparison
    saved = comp["pareto_k_max"].copy()
    try:
        comp["pareto_k_max"] = 0.3  # every candidate fine: the reading says nothing about LOO
        r = report(stacked, title="t", constraints={"min_precision": 0.3})
        check_reading(r)
        assert not any("approximate" in s for s in r.text)
        assert any("diagnostics look fine" in s for s in r.text)
        best = comp.index[0]
        comp.loc[best, "pareto_k_max"] = 1.21  # the winning candidate, as in the issue
        r = report(stacked, title="t", constraints={"min_precision": 0.3})
        checked = check_reading(r)
        assert any(f"{best} 1.21" in s for s in checked)
        fine = [s for s in r.text if "diagnostics look fine" in s]
        assert fine and all("do not: worst Pareto k 1.21" in s for s in fine)
    finally:
        comp["pareto_k_max"] = saved
    r = report(stacked, title="t")  # as fitted
    check_reading(r)


def test_no_threshold_meeting_the_constraint_is_the_summary_lines_news():
    """The page's summary line and the top of the reading say that no threshold meets the
    constraint, not only the threshold section further down."""
    s = np.linspace(0, 1, 300)
    lab = np.full(300, np.nan)
    lab[::10] = (np.random.default_rng(0).random(30) < s[::10] * 0.5).astype(float)
    post = Posterior.from_probabilities(EvalData(s, lab), s * 0.5, draws=200, random_seed=0, check=False)
    r = report(post, title="t", constraints={"min_precision": 0.95, "prob": 0.9})
    check_reading(r)
    (problem,) = r.warnings["constraints"]
    assert problem.startswith("No threshold meets the constraint with probability 0.9")
    assert r.text[1] == problem  # read first, after the data sentence
    summary = r.to_html().split('id="warning-summary">', 1)[1].split("</div>", 1)[0]
    assert "No threshold meets the constraint with probability 0.9 while flagging at least" in summary
    assert "No threshold meets the constraint with probability 0.9" in r.to_markdown().split("## Reading")[0]


def test_a_metric_undefined_in_every_draw_is_said_to_have_no_interval_not_to_miss_the_truth():
    """Every draw gives the one unvetted item a positive label, so no draw has a negative and ROC
    AUC has no interval; the truth (the item is negative) has one. The reading used to say the
    truth lay OUTSIDE an interval of NaN bounds."""
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.2])
    data = EvalData(s, [1, 1, 1, 1, np.nan])
    post = Posterior.from_probabilities(data, [1, 1, 1, 1, 1], draws=100, random_seed=0, check=False)
    r = report(post, title="t", metrics={"ROC AUC": "roc_auc", "AP": "average_precision"},
               truth=np.array([1, 1, 1, 1, 0]))
    text = " ".join(r.text)
    assert "OUTSIDE" not in text
    assert "The ROC AUC on these 5 items is undefined in every posterior draw" in text
    assert "(inside the interval)" in text  # AP's sentence is read as before
    assert "ROC AUC is undefined in 100.0% of the posterior draws" in r.to_markdown()


def test_a_miss_that_rounding_would_hide_is_said_with_more_digits():
    """Every draw puts the accuracy at 0.9303 where the truth is 0.9300: both print as 0.930, and the
    reading said "exactly 0.930 ... the true value ... is 0.930 (OUTSIDE the interval)"."""
    n = 10_000
    s = np.linspace(0, 1, n)
    p = (np.arange(n) < 9303).astype(float)  # 9,303 positives in every draw
    truth = (np.arange(n) < 9300).astype(int)  # 9,300 in truth
    post = Posterior.from_probabilities(EvalData(s), p, draws=20, random_seed=0, check=False)
    r = report(post, title="t", metrics={"accuracy": ("accuracy", {"threshold": -1.0})}, truth=truth)
    (said,) = [x for x in r.text if "accuracy" in x and "true value" in x]
    assert "is 0.9300 (OUTSIDE the interval, just below its lower end 0.9303)" in said


def test_a_probability_is_never_printed_on_the_other_side_of_the_required_one():
    """0.989 of a required 0.99 was printed "with probability 0.99" in a sentence saying no threshold
    meets 0.99; 0.9541 of a required 0.9541 was printed 0.95 in one saying it is met."""
    import pandas as pd

    from bayeval.report import _constraint_sentences

    def table(p, required):
        return pd.DataFrame({"threshold": [0.978], "probability": [p], "required probability": [required],
                             "flagged items": [11], "fewest allowed": [10], "items": [300]},
                            index=pd.Index(["precision >= 0.906"], name="constraint"))

    _, problem = _constraint_sentences(table(0.989, 0.99), 1000)
    assert problem.startswith("No threshold meets the constraint with probability 0.99")
    assert "holds precision ≥ 0.906 with probability 0.989;" in problem, problem  # before: 0.99
    (met,), problem = _constraint_sentences(table(0.9541, 0.9541), 1000)
    assert problem is None and "with probability 0.9541, at least the required 0.9541" in met, met
    _, problem = _constraint_sentences(table(0.498, np.nan), 1000)  # the most probable rule, below one half
    assert "reaches 0.498)" in problem, problem  # before: "above one half (... reaches 0.50)"
