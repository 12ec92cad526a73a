"""Thresholds a team can deploy: ``min_flagged``, what the threshold flags, and a plain verdict.

Every test here fails on the behaviour before ``min_flagged`` existed, when a threshold that
flagged 1-2 items could be recommended as meeting a precision floor.
"""

import re

import numpy as np
import pandas as pd
import pytest

from bayeval import EvalData, Posterior, recalibrate
from bayeval.cli import main
from bayeval.recalibrate import default_min_flagged


def _weak_top(n=2699, n_sure=3, seed=0):
    """A classifier whose top ``n_sure`` items are surely positive and the rest a coin flip
    (P(positive) 0.6): only thresholds flagging at most ``n_sure`` items reach precision 0.9."""
    s = np.linspace(0, 1, n)
    p = np.full(n, 0.6)
    p[-n_sure:] = 0.9999
    return Posterior.from_probabilities(EvalData(s), p, draws=400, random_seed=seed)


def test_a_threshold_flagging_a_handful_is_refused_and_said_plainly():
    post = _weak_top()
    rec = recalibrate(post, min_precision=0.9, prob=0.9)
    # the old rule picked a threshold flagging <= 3 of 2699 items and called it met
    assert rec.min_flagged == 27  # the larger of 10 and 1% of 2699 (expected positives ~1620)
    assert not rec.met
    assert rec.flagged >= rec.min_flagged
    assert rec.verdict.startswith("No threshold meets precision >= 0.9 with probability 0.9 while flagging at least 27")
    assert "pass min_flagged=0" in rec.verdict and rec.refused_thresholds.size >= 1
    assert "no threshold meets" in repr(rec) and "flags " in repr(rec)
    assert str(rec).splitlines()[0] == rec.verdict
    # asked for: min_flagged=0 gives the tiny threshold back, and says how few it flags
    tiny = recalibrate(post, min_precision=0.9, prob=0.9, min_flagged=0)
    assert tiny.met and tiny.flagged <= 3 and f"flags {tiny.flagged} of 2699 items" in repr(tiny)


def test_each_surface_says_how_to_allow_a_threshold_that_flags_few_in_its_own_words(tmp_path, capsys, monkeypatch):
    """`bayeval threshold` (stdout, and its warning on stderr) said "pass min_flagged=0 to allow them",
    a Python keyword, where its option is `--min-flagged 0`; the report said the same where a model
    card's key is `min_flagged = 0` under [constraints]."""
    import bayeval.cli as cli
    from bayeval.report import report

    s = np.linspace(0, 1, 2699)
    y = np.full(s.size, np.nan)
    y[:3], y[-3:] = 0, 1
    path = tmp_path / "scores.csv"
    pd.DataFrame({"s": s, "y": y}).to_csv(path, index=False)
    p = np.full(s.size, 0.6)
    p[-3:] = 0.9999  # as _weak_top: only the 3 top items reach precision 0.9
    monkeypatch.setattr(cli, "_fit", lambda args, data: Posterior.from_probabilities(
        data, p, draws=400, random_seed=0, check=False))
    argv = ["threshold", str(path), "--score", "s", "--label", "y", "--min-precision", "0.9", "--prob", "0.9",
            "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr()
    for said in (out.out, out.err):
        assert "too few to deploy; give --min-flagged 0 to allow them." in said, said
        assert "min_flagged" not in said
    rec = recalibrate(_weak_top(), min_precision=0.9, prob=0.9)  # Python: the keyword
    assert "too few to deploy; pass min_flagged=0 to allow them." in rec.verdict
    note = " ".join(report(_weak_top(n=600, n_sure=3), title="t", metrics=["average_precision"],
                           constraints={"min_precision": 0.9, "prob": 0.9}).notes["constraints"])
    assert ("to allow any: min_flagged = 0 under [constraints] in the model card, or "
            'constraints={"min_flagged": 0} of bayeval.report') in note
    assert "pass min_flagged=0" not in note


def test_the_most_probable_rule_also_respects_min_flagged():
    post = _weak_top()
    rec = recalibrate(post, min_precision=0.9)  # prob=None: the highest probability
    assert rec.flagged >= 27
    eligible = rec.table()[lambda t: t["eligible"]]
    assert rec.probability_at_threshold == pytest.approx(eligible["p_constraint"].max())
    assert (rec.table()["n_flagged"] >= 27).equals(rec.table()["eligible"])


def test_at_threshold_reports_flagged_items_recall_and_precision_with_intervals():
    rng = np.random.default_rng(1)
    s = np.sort(rng.uniform(0, 1, 600))
    post = Posterior.from_probabilities(EvalData(s), s**3, draws=300, random_seed=1)
    rec = recalibrate(post, min_precision=0.8, prob=0.9)
    at = rec.at_threshold()
    assert at.index.tolist() == ["flagged", "true positives flagged", "precision", "recall"]
    assert at.columns.tolist() == ["mean", "sd", "hdi_5%", "hdi_95%"]
    k = int((s >= rec.threshold).sum())
    assert rec.flagged == k and at.loc["flagged", "mean"] == k and at.loc["flagged", "hdi_5%"] == k
    row = rec.table().loc[rec.threshold]
    assert at.loc["precision", "mean"] == pytest.approx(row["precision_mean"])
    assert at.loc["recall", "mean"] == pytest.approx(row["recall_mean"])
    assert at.loc["recall", "hdi_5%"] == pytest.approx(row["recall_hdi_5%"])
    assert at.loc["true positives flagged", "mean"] == pytest.approx(row["precision_mean"] * k, abs=1e-9)
    assert 0 < at.loc["recall", "hdi_5%"] <= at.loc["recall", "hdi_95%"] <= 1


def test_print_keeps_the_decimals_of_a_counts_posterior_mean():
    """print(rec) said "true positives flagged: mean 1, HDI [0, 1]" for a mean of 0.66: the
    mean of a count is no whole number; its HDI bounds are (each draw's count is)."""
    s = np.linspace(0, 1, 60)
    p = np.full(60, 0.2)
    p[-1] = 0.66  # the one item the threshold flags is positive in about two thirds of the draws
    post = Posterior.from_probabilities(EvalData(s), p, draws=400, random_seed=0)
    rec = recalibrate(post, min_precision=0.5, thresholds=[1.0], min_flagged=0)
    mean = float(rec.at_threshold().loc["true positives flagged", "mean"])
    assert rec.flagged == 1 and 0.55 < mean < 0.75
    (line,) = [x for x in str(rec).splitlines() if "true positives flagged" in x]
    assert line == f"  true positives flagged: mean {mean:.1f}, HDI [0, 1]"
    from bayeval.recalibrate import _count_mean

    assert (_count_mean(0.04), _count_mean(0.0), _count_mean(245.34)) == ("0.04", "0.0", "245.3")


def test_default_min_flagged_on_the_bundled_sizes():
    # breast cancer (569 items, 212 positive), digits (1797, 174), rare fraud (40000, 200)
    assert default_min_flagged(569, 212.0) == 10
    assert default_min_flagged(1797, 174.0) == 18
    # 1% of 40000 would be 400: more than the 200 positives, so no threshold could reach
    # precision 0.8; a tenth of the positives (20) is the cap
    assert default_min_flagged(40000, 200.0) == 20
    assert default_min_flagged(50, 0.0) == 10


def test_min_flagged_is_checked_at_the_boundary():
    post = _weak_top(n=200)
    with pytest.raises(ValueError, match=">= 0"):
        recalibrate(post, min_precision=0.9, min_flagged=-1)
    with pytest.raises(TypeError, match="min_flagged"):
        recalibrate(post, min_precision=0.9, min_flagged=2.5)
    with pytest.raises(ValueError, match="more than the 200 items"):
        recalibrate(post, min_precision=0.9, min_flagged=201)
    with pytest.raises(ValueError, match="flags at least min_flagged=10"):
        recalibrate(post, min_precision=0.9, thresholds=[0.999, 0.9999])


def test_cli_threshold_says_plainly_when_none_meets(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 300
    y = (rng.random(n) < 0.3).astype(int)
    s = np.where(y == 1, rng.gamma(8, 0.1, n), rng.gamma(2, 0.1, n))
    label = np.full(n, np.nan)
    label[:40] = y[:40]
    path = tmp_path / "scores.csv"
    pd.DataFrame({"s": s, "y": label}).to_csv(path, index=False)
    fast = ["--draws", "150", "--tune", "150", "--chains", "2", "--no-progress", "--random-seed", "0"]
    args = ["threshold", str(path), "--score", "s", "--label", "y", "--min-precision", "0.9", "--prob", "0.9"]
    # flagging all 300 items (30% positive) cannot reach precision 0.9
    assert main([*args, "--min-flagged", "300", *fast]) == 0
    out = capsys.readouterr()
    assert "No threshold meets precision >= 0.9 with probability 0.9 while flagging at least 300 items" in out.out
    assert "does NOT meet the constraint" in out.out and "flagged: 300 of 300 items" in out.out
    assert "recall: mean" in out.out and "No threshold meets" in out.err
    assert main([*args, "--min-flagged", "-1", *fast]) == 2
    assert "--min-flagged" in capsys.readouterr().err
    # without --prob, a constraint no draw meets anywhere (precision and recall both 1) is said plainly too
    most = ["threshold", str(path), "--score", "s", "--label", "y", "--min-precision", "1", "--min-recall", "1"]
    assert main([*most, *fast]) == 0
    out = capsys.readouterr()
    assert "no posterior draw meets it at any threshold" in out.err and "does NOT meet the constraint" in out.out


def _top_block(n_top=500, n_near=260, n_low=1000, seed=0):
    """Scores like a saturated naive Bayes: a block of exact 1.0s at P(positive) 0.35, near-1s
    at 0.01 and the rest at 0.004: no threshold reaches precision 0.6, the 1.0s come closest."""
    s = np.r_[np.linspace(0, 0.5, n_low), 1 - np.geomspace(1e-7, 1e-12, n_near), np.ones(n_top)]
    p = np.r_[np.full(n_low, 0.004), np.full(n_near, 0.01), np.full(n_top, 0.35)]
    return Posterior.from_probabilities(EvalData(s), p, draws=400, random_seed=seed), s


def test_when_no_threshold_meets_a_precision_floor_the_best_available_is_the_closest_not_flag_everything():
    post, s = _top_block()
    rec = recalibrate(post, min_precision=0.6, prob=0.9)
    assert not rec.met and rec.probability.max() == 0  # every threshold: P(precision >= 0.6) = 0
    # the best available is the threshold of highest expected precision (the block of 1.0s),
    # not the lowest threshold (which flags every item at the base rate, precision ~0.1)
    assert rec.threshold == 1.0 and rec.flagged == 500
    expected = rec.table().loc[rec.eligible.values, "precision_mean"]
    assert rec.table().loc[rec.threshold, "precision_mean"] == pytest.approx(expected.max())
    assert rec.verdict.startswith("No threshold meets precision >= 0.6") and "flags 500 of 1760" in rec.verdict
    # both floors, neither reachable: the threshold whose worse expected shortfall is smallest
    # (precision 0.35 short of 0.9 at the 1.0s, against 0.8 short when flagging every item)
    both = recalibrate(post, min_recall=1.0, min_precision=0.9, prob=0.9)
    assert not both.met and both.threshold == 1.0


def test_the_most_probable_rule_when_no_draw_meets_the_floor_names_the_closest_and_says_so():
    post, s = _top_block()
    rec = recalibrate(post, min_precision=0.6)  # prob=None: the SPE paper's most-probable rule
    assert rec.probability.max() == 0
    # the old tie-break (lowest threshold) flagged all 1760 items at the base rate (precision ~0.1)
    assert rec.threshold == 1.0 and rec.flagged == 500
    # met was True with prob=None while the verdict said "No threshold meets" (docs/guide.md: "False
    # when no threshold meets it"): now False whenever no draw meets it at any eligible threshold
    assert rec.no_draw_meets and not rec.met
    assert "no posterior draw meets the constraint at any threshold" in repr(rec)
    reachable = recalibrate(post, min_precision=0.3)  # the block of 1.0s reaches 0.3 in most draws
    assert not reachable.no_draw_meets and reachable.met and reachable.verdict.startswith("Threshold ")
    expected = rec.table().loc[rec.eligible.values, "precision_mean"]
    assert rec.table().loc[rec.threshold, "precision_mean"] == pytest.approx(expected.max())
    assert rec.verdict.startswith("No threshold meets precision >= 0.6: no posterior draw meets it")
    assert "with probability 0.00" not in rec.verdict and "flags 500 of 1760" in rec.verdict
    assert "expected precision 0.35 (needed: 0.6)" in rec.verdict
    assert str(rec).splitlines()[0] == rec.verdict and "no posterior draw meets" in repr(rec)
    # a reachable floor keeps the documented rule: the highest probability, lowest among ties
    ok = recalibrate(post, min_precision=0.3)
    assert not ok.no_draw_meets and ok.verdict.startswith("Threshold ") and "most probably holds" in ok.verdict
    ties = ok.table()[lambda t: t["eligible"] & (t["p_constraint"] == t["p_constraint"][t["eligible"]].max())]
    assert ok.threshold == ties.index.min()


def test_a_threshold_that_flags_nothing_never_meets_a_precision_floor():
    """With min_flagged=0 a threshold above every score flagged 0 items and was said to meet
    precision >= 0.99 "with probability 1.00" (the empty rule's precision counted as 1)."""
    s = np.linspace(0, 1, 200)
    post = Posterior.from_probabilities(EvalData(s), s, draws=200, random_seed=0)
    for prob in (0.9, None):
        r = recalibrate(post, min_precision=0.99, prob=prob, thresholds=[0.5, 0.9, 1.5], min_flagged=0)
        assert r.threshold == 0.9 and "flags 0 of" not in r.verdict
        assert float(r.probability.sel(threshold=1.5)) == 0.0
    assert not recalibrate(post, min_precision=0.99, prob=0.9, thresholds=[0.5, 0.9, 1.5], min_flagged=0).met
    # a recall floor alone is unchanged: flagging nothing has recall 0, which a floor above 0 refuses anyway
    r = recalibrate(post, min_recall=0.05, prob=0.9, thresholds=[0.5, 0.9, 1.5], min_flagged=0)
    assert r.met and r.threshold == 0.9


# ------------------------------------------- the threshold as printed flags what it says


def _saturated(seed=0):
    """Scores as a boosted model gives them: 60 items within 4e-7 of 1 (surely positive), the rest
    spread below 0.99. Every candidate threshold among the top items prints as "1" to 6 digits."""
    rng = np.random.default_rng(seed)
    top = 1.0 - rng.uniform(1e-9, 4e-7, 60)
    rest = rng.uniform(0.0, 0.99, 340)
    s = np.concatenate([top, rest])
    p = np.concatenate([np.full(60, 0.97), rest * 0.5])
    return s, Posterior.from_probabilities(EvalData(s), p, draws=300, random_seed=seed)


def test_threshold_text_is_the_shortest_decimal_that_flags_the_same_items():
    from decimal import ROUND_HALF_EVEN, Decimal

    from bayeval.recalibrate import threshold_text

    rng = np.random.default_rng(3)
    s = np.concatenate([1 - rng.uniform(1e-9, 1e-6, 50), -1.0 - rng.uniform(0, 0.05, 50), rng.normal(0, 3, 50)])
    for t in np.concatenate([s, rng.normal(0, 2, 50)]):  # every score, and thresholds between them
        text = threshold_text(t, s)
        assert np.sum(s >= float(text)) == np.sum(s >= t), (t, text)
        digits = len(text.lstrip("-").split("e")[0].replace(".", "").lstrip("0"))
        assert digits <= 17
        d = Decimal(float(t))
        assert float(text) == float(d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1),
                                               rounding=ROUND_HALF_EVEN)) or digits < 3  # rounded to nearest
        if digits > 3:  # with one digit fewer, rounded to nearest, other items are flagged
            step = Decimal(1).scaleb(d.adjusted() - digits + 2)
            assert np.sum(s >= float(d.quantize(step, rounding=ROUND_HALF_EVEN))) != np.sum(s >= t), (t, text)
    assert threshold_text(0.5, s) == "0.5" and threshold_text(0.25, [0.1, 0.9]) == "0.25"
    assert threshold_text(float(np.max(s)), s) != "1"  # "1" flags none of the scores below 1


def test_the_printed_threshold_flags_the_items_it_says_it_flags():
    """Scores near 1 (a boosted model): the recommended threshold printed as "score >= 1" flagged
    none of the items while the same lines said it flagged 21 (sweep: m/sat.csv)."""
    s, post = _saturated()
    rec = recalibrate(post, min_precision=0.95, prob=0.9)
    assert rec.flagged >= 10 and rec.threshold > 0.9999995  # printed to 6 digits: "1"
    rule = next(line for line in str(rec).splitlines() if "rule: positive where score >= " in line)
    printed = rule.split(">= ")[1]
    assert np.sum(s >= float(printed)) == rec.flagged
    assert printed == rec.threshold_text and f"{printed} (flags {rec.flagged} of 400 items" in rec.verdict
    assert f"threshold {printed} holds" in repr(rec)
    assert rec.table().index[rec.table().index.get_loc(rec.threshold)] == rec.threshold  # the float, in full


def test_the_report_shows_the_threshold_that_flags_what_it_says(tmp_path):
    from bayeval.report import report

    s, post = _saturated()
    r = report(post, title="saturated", metrics=["average_precision"],
               constraints={"min_precision": 0.95, "prob": 0.9})
    c = r.tables["constraints"]
    t, k = float(c["threshold"].iloc[-1]), int(c["flagged items"].iloc[-1])
    md = r.to_markdown()
    shown = next(line for line in md.splitlines() if line.startswith("| precision &gt;= 0.95 |")).split("|")[2].strip()
    assert t > 0.9999995 and np.sum(s >= float(shown)) == k == np.sum(s >= t)  # the table keeps the float
    assert c.attrs["cell_text"]["threshold"][-1] == shown and f">{shown}</td>" in r.to_html()
    said = [x for x in r.text + r.warnings.get("constraints", []) + r.notes["constraints"] if "t = " in x
            or x.startswith("Threshold ")]
    assert said and all(f"t = {shown}" in x or f"Threshold {shown} " in x for x in said)
    assert f"precision at t={shown}" in r.tables["at_threshold"].index


def test_cli_threshold_prints_a_threshold_that_flags_the_stated_count(tmp_path, capsys):
    s, post = _saturated()
    rng = np.random.default_rng(0)
    y = (rng.uniform(size=s.size) < post.item_probability().values).astype(float)
    y[rng.permutation(s.size)[:320]] = np.nan  # 80 vetted
    path = tmp_path / "sat.csv"
    pd.DataFrame({"score": s, "label": y}).to_csv(path, index=False)
    argv = ["threshold", str(path), "--score", "score", "--label", "label", "--min-precision", "0.95",
            "--prob", "0.9", "--draws", "150", "--tune", "150", "--chains", "2", "--no-progress", "--table"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    printed = next(line for line in out.splitlines() if line.startswith("threshold: ")).split()[1]
    flagged = int(next(line for line in out.splitlines() if "flagged: " in line).split()[1])
    assert np.sum(s >= float(printed)) == flagged
    rule = next(line for line in out.splitlines() if "rule: positive where score >= " in line)
    assert rule.split(">= ")[1] == printed
    assert main([*argv, "--format", "csv"]) == 0  # csv keeps the float in full
    out = capsys.readouterr().out
    table = pd.read_csv(pd.io.common.StringIO(out[out.index("threshold,"):]), index_col=0)
    assert table.index.dtype.kind == "f" and np.isin(table.index.values, s).all()


def _inside_axes(ax, artist) -> bool:
    ax.figure.canvas.draw()
    r = ax.figure.canvas.get_renderer()
    a, b = artist.get_window_extent(r), ax.get_window_extent(r)
    return a.x0 >= b.x0 - 1 and a.x1 <= b.x1 + 1 and a.y0 >= b.y0 - 1 and a.y1 <= b.y1 + 1


def test_threshold_figure_labels_only_what_it_shows_and_keeps_its_note_inside():
    """The legend listed 'flags < 10 items (not recommended)' for a grey band of no visible width
    (models/breast_cancer_logreg's report), and the 't=/P=' note, 25 points below its point, sat on
    the tick labels where P was near 0."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayeval.plots import threshold_probability

    n = 3000
    s = np.linspace(0, 1, n)
    post = Posterior.from_probabilities(EvalData(s), np.clip(s, 0.01, 0.99), draws=300, random_seed=0)
    rec = recalibrate(post, min_precision=0.9, prob=0.9, min_flagged=10)
    assert 0 < (1 - rec.eligible.values).sum() < 0.005 * n  # a band of a few thousandths of the axis
    ax = threshold_probability(rec)
    assert not any("not recommended" in t.get_text() for t in ax.get_legend().get_texts())
    assert _inside_axes(ax, ax.texts[0])
    rec = recalibrate(post, min_precision=0.9, prob=0.9, min_flagged=600)
    ax = threshold_probability(rec)
    assert any("not recommended" in t.get_text() for t in ax.get_legend().get_texts())
    # a constraint no threshold meets: P near 0 at the threshold shown
    post = Posterior.from_probabilities(EvalData(s), np.full(n, 0.3), draws=300, random_seed=0)
    rec = recalibrate(post, min_precision=0.9, prob=0.9)
    assert rec.probability_at_threshold < 0.05
    ax = threshold_probability(rec)
    assert _inside_axes(ax, ax.texts[0])
    plt.close("all")


def _drawn_value(line, x: float) -> float:
    """The value a reader takes off a drawn line at ``x``, by its drawstyle."""
    xs, ys = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    style = line.get_drawstyle()
    if style == "steps-pre":  # y[i] on (x[i-1], x[i]]
        return float(ys[np.searchsorted(xs, x, side="left")])
    if style == "steps-post":  # y[i] on [x[i], x[i+1])
        return float(ys[np.searchsorted(xs, x, side="right") - 1])
    return float(np.interp(x, xs, ys))


def test_threshold_figure_reads_the_rule_between_two_candidate_thresholds():
    """Between two candidates, ``score >= t`` flags the upper one's items; the curve was drawn
    steps-post and read the lower one's probability (0.17 at t = 0.5, where it is 0.62)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = np.array([0.2, 0.4, 0.6, 0.8] * 10)
    post = Posterior.from_probabilities(EvalData(s), s, draws=400, random_seed=0)
    rec = recalibrate(post, min_precision=0.7, min_flagged=0)
    line = rec.plot().lines[0]
    for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):  # the same draws as the figure's: equal, not close
        truth = float((post.metric("precision", threshold=t) >= 0.7).mean())
        assert _drawn_value(line, t) == truth, t
    assert _drawn_value(line, 0.5) == 0.62
    plt.close("all")


def _note_cases():
    s = np.array([0.2, 0.4, 0.6, 0.8] * 10)
    small = Posterior.from_probabilities(EvalData(s), s, draws=400, random_seed=0)
    yield recalibrate(small, min_precision=0.7, min_flagged=0)
    yield recalibrate(small, min_precision=0.7, min_flagged=0, prob=0.95)  # "(does not meet it)"
    n = 3000
    s = np.linspace(0, 1, n)
    post = Posterior.from_probabilities(EvalData(s), np.clip(s, 0.01, 0.99), draws=300, random_seed=0)
    yield recalibrate(post, min_precision=0.9, prob=0.9, min_flagged=10)
    yield recalibrate(post, min_precision=0.9, min_flagged=10)
    yield recalibrate(post, min_precision=0.9, prob=0.9, min_flagged=600)
    yield recalibrate(post, min_recall=0.5, prob=0.9)
    flat = Posterior.from_probabilities(EvalData(s), np.full(n, 0.3), draws=300, random_seed=0)
    yield recalibrate(flat, min_precision=0.9, prob=0.9)
    yield recalibrate(_weak_top(), min_precision=0.9, prob=0.9)


def test_threshold_figure_note_covers_no_data():
    """The 't = / P =' note was set next to its point, over the curve where it rises steeply
    (models' reports: 'P = 0.88 (does not meet it)' on the curve); it sits where the curve is not."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.cbook import pts_to_prestep
    from matplotlib.figure import Figure
    from matplotlib.path import Path

    from bayeval.plots import threshold_probability

    for rec in _note_cases():
        report_like = Figure(figsize=(6, 3.6), layout="constrained")  # as the report draws it
        for ax in (plt.subplots(figsize=(6, 4))[1], report_like.subplots()):
            threshold_probability(rec, ax=ax)
            ax.figure.canvas.draw()
            curve, note = ax.lines[0], ax.texts[0]
            assert "P = " in note.get_text()
            xs, ys = (pts_to_prestep(curve.get_xdata(), curve.get_ydata())
                      if curve.get_drawstyle() == "steps-pre" else (curve.get_xdata(), curve.get_ydata()))
            path = Path(ax.transData.transform(np.column_stack([xs, ys])))
            box = note.get_window_extent()
            assert not path.intersects_bbox(box, filled=False), (rec.constraint_text, note.get_text())
            fig_box = ax.figure.bbox
            assert fig_box.x0 <= box.x0 and box.x1 <= fig_box.x1 and fig_box.y0 <= box.y0 and box.y1 <= fig_box.y1
        plt.close("all")


def test_cli_min_flagged_above_the_items_is_refused_before_the_fit(tmp_path, capsys, monkeypatch):
    """``--min-flagged 5000`` on 3,000 items was refused only after the whole fit."""
    import bayeval.cli as cli

    path = tmp_path / "scores.csv"
    pd.DataFrame({"s": np.linspace(0, 1, 300), "y": [1.0, 0.0] * 20 + [np.nan] * 260}).to_csv(path, index=False)

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before refusing --min-flagged")

    monkeypatch.setattr(cli, "_fit", no_fit)
    argv = ["threshold", str(path), "--score", "s", "--label", "y", "--min-precision", "0.9", "--no-progress"]
    assert main([*argv, "--min-flagged", "301"]) == 2
    err = capsys.readouterr().err
    assert f"--min-flagged 301 is more than the 300 items in {path}" in err
    assert "Give --min-flagged 300 or less (0 allows any threshold). Nothing was fitted." in err


def test_a_missed_probability_is_never_printed_as_the_required_one():
    """0.989 of a required 0.99 was printed "reaches 0.99" in a verdict that says no threshold meets it."""
    s = np.sort(np.random.default_rng(0).random(300))
    post = Posterior.from_probabilities(EvalData(s), s, draws=1000, random_seed=0)
    rec = recalibrate(post, min_precision=0.906, prob=0.99)
    p = rec.probability_at_threshold
    assert not rec.met and 0.985 <= p < 0.99  # rounds to the required 0.99 at two decimals
    shown = re.search(r"reaches ([0-9.]+[0-9])", rec.verdict).group(1)
    assert float(shown) < 0.99 and shown == "0.989", rec.verdict  # before: "reaches 0.99"
    assert "holds with probability 0.989;" in repr(rec)
    # met: never printed below the required probability
    from bayeval.recalibrate import probability_text

    assert probability_text(0.9541, 0.9541) == "0.9541" and probability_text(0.96, 0.954) == "0.96"
    for req in (0.9, 0.95, 0.954, 0.99, 0.999):
        for k in range(1001):
            text = probability_text(k / 1000, req)
            assert (float(text) >= req) == (k / 1000 >= req), (k, req, text)


def test_a_probability_short_of_certainty_is_never_printed_as_certain():
    """0.9996 printed "1.00" (and 0.0004 "0.00"): a probability that is not exactly 1 (or 0) read as
    certain. It gets more decimals, still never on the wrong side of a required probability."""
    from bayeval.recalibrate import probability_text

    assert probability_text(0.9996) == "0.9996" and probability_text(0.0004) == "0.0004"
    assert probability_text(0.9996, 0.9) == "0.9996" and probability_text(0.9996, 0.95, 3) == "0.9996"
    assert probability_text(0.0004, 0.5) == "0.0004"
    assert probability_text(1.0, 0.9) == "1.00" and probability_text(0.0, 0.5) == "0.00"  # certain: as before
    assert probability_text(1 - 4e-7) == "0.999999" and probability_text(4e-7, 0.5) == "0.000001"
    for req in (None, 0.5, 0.9, 0.99, 0.999):
        for digits in (2, 3):
            for k in range(0, 100001, 7):
                p = k / 100000
                shown = float(probability_text(p, req, digits))
                assert (shown == 1) == (p == 1) and (shown == 0) == (p == 0), (p, req, digits, shown)
                if req is not None:
                    assert (shown >= req) == (p >= req), (p, req, digits, shown)


@pytest.mark.parametrize("cons", [{"min_precision": 0.9, "prob": 0.9}, {"min_precision": 0.9},
                                  {"min_recall": 0.5, "prob": 0.9}, {"min_precision": 0.999, "prob": 0.9}])
def test_with_every_item_vetted_the_best_of_all_distinct_scores_is_recommended(cons):
    """With every item vetted the default grid (201 quantiles and 201 top ranks of 3,000 distinct
    scores) skipped the threshold with the highest recall at precision 0.9, while the report said
    the recommended one had the highest expected recall."""
    from bayeval.core.evaluate import default_thresholds

    rng = np.random.default_rng(1)
    s = rng.random(3000)
    y = (rng.random(3000) < s**2).astype(float)
    post = Posterior.from_probabilities(EvalData(s, y), np.clip(s, 0.01, 0.99), draws=20, random_seed=0, check=False)
    rec = recalibrate(post, **cons)
    every = recalibrate(post, **cons, thresholds=np.unique(s))
    assert rec.all_vetted and rec.probability.size <= default_thresholds(s).size + 1
    assert (rec.threshold, rec.met) == (every.threshold, every.met)
    if cons == {"min_precision": 0.9, "prob": 0.9}:  # the case the grid missed
        assert rec.threshold not in default_thresholds(s)
        f = s >= rec.threshold
        assert y[f].mean() >= 0.9
        better = [t for t in np.unique(s) if (s >= t).sum() >= rec.min_flagged and y[s >= t].mean() >= 0.9
                  and y[s >= t].sum() > y[f].sum()]
        assert not better
