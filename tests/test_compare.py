"""bayeval.compare: several classifiers on the same label draws (paired gaps, P(better), P(best))."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bayeval as be
from bayeval.compare.comparison import _fit_joint
from bayeval.core import metrics as M
from bayeval.core.evaluate import MetricEvaluator
from bayeval.models.joint import JointCalibration, joint_data

FIT = dict(draws=200, chains=2, random_seed=0, model="logistic")


def _pool(seed=0, n=1500, n_vetted=60, strong=2.0, weak=0.8):
    """Two classifiers of one pool: ``a`` separates the classes better than ``b``; they share noise."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.25
    shared = rng.normal(0, 1, n)
    a = strong * y + 0.6 * shared + 0.8 * rng.normal(0, 1, n)
    b = weak * y + 0.6 * shared + 0.8 * rng.normal(0, 1, n)
    lab = np.full(n, np.nan)
    idx = rng.choice(n, n_vetted, replace=False)
    lab[idx] = y[idx]
    return a, b, lab, y


@pytest.fixture(scope="module")
def pair():
    a, b, lab, y = _pool()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return be.compare({"a": a, "b": b, "copy": a.copy()}, lab, **FIT), y


def test_identical_classifiers_have_a_gap_of_exactly_zero(pair):
    cmp, _ = pair
    gap = cmp.difference("a", "copy")
    assert float(np.abs(gap).max()) == 0.0
    assert cmp.prob_better("a", "copy") == 0.5
    assert cmp.rope("a", "copy", width=0.001) == 1.0
    assert cmp.decided("a", "copy", width=0.01) == "equivalent"
    best = cmp.prob_best()
    assert best["a"] == pytest.approx(best["copy"]) and best.sum() == pytest.approx(1.0)


def test_the_gap_is_paired_on_the_same_label_draws(pair):
    """Each draw's gap is metric(a) - metric(b) on that one draw of the labels."""
    cmp, _ = pair
    ev_a = MetricEvaluator(be.EvalData(cmp.data.features[:, 0]), "average_precision")
    ev_b = MetricEvaluator(be.EvalData(cmp.data.features[:, 1]), "average_precision")
    gap = cmp.difference("a", "b").values
    for chain, draws, z in cmp.posterior.label_arrays():
        np.testing.assert_allclose(gap[chain, draws], ev_a(z) - ev_b(z), rtol=0, atol=1e-12)
    m = cmp.metric("average_precision")
    assert m.dims == ("chain", "draw", "model") and list(m["model"].values) == ["a", "b", "copy"]
    assert cmp.metric("average_precision") is m  # kept


def test_a_known_better_classifier_wins_with_high_probability(pair):
    cmp, y = pair
    z = y[None].astype(np.int8)
    true_gap = float(M.average_precision(z, cmp.data.features[:, 0])[0]
                     - M.average_precision(z, cmp.data.features[:, 1])[0])
    assert true_gap > 0.15
    assert cmp.prob_better("a", "b") > 0.95
    assert cmp.decided("a", "b") == "a" and cmp.decided("b", "a") == "a"
    s = cmp.difference_summary("a", "b", width=0.01)
    assert s["hdi_5%"] < true_gap < s["hdi_95%"]
    assert s["p_better"] == pytest.approx(cmp.prob_better("a", "b"))
    assert 0 <= s["p_rope"] < 0.05
    table = cmp.ranking()
    assert table.index[-1] == "b" and table.loc["b", "p_best"] < 0.05
    pairs = cmp.summary()
    assert len(pairs) == 3 and set(pairs.columns) >= {"better", "worse", "mean", "p_better"}
    assert (pairs["p_better"] >= 0.5).all()


def test_metric_options_thresholds_per_classifier_and_extra_dims(pair):
    cmp, _ = pair
    pk = cmp.metric("precision_at_k", k=[10, 100])
    assert pk.dims == ("chain", "draw", "model", "k")
    p = cmp.prob_better("a", "b", "precision_at_k", k=[10, 100])
    assert p.dims == ("k",)
    f1 = cmp.metric("f_score", threshold={"a": 1.0, "b": 0.5, "copy": 1.0})
    np.testing.assert_array_equal(f1.sel(model="a").values, f1.sel(model="copy").values)
    with pytest.raises(ValueError, match="missing"):
        cmp.metric("f_score", threshold={"a": 1.0})
    with pytest.raises(ValueError, match="extra dims"):
        cmp.prob_best("precision_at_k", k=[10, 100])


def test_select_picks_unvetted_items_that_move_the_gap(pair):
    cmp, _ = pair
    from bayeval.compare import expected_change

    gap = cmp.difference("a", "b").values
    for target, g in (("gap", gap), ("prob", (gap > 0) + 0.5 * (gap == 0))):
        ids = cmp.select(20, "a", "b", target=target)
        idx = cmp.data.index_of(ids)
        assert len(set(ids.tolist())) == 20 and np.isnan(cmp.data.labels[idx]).all()
        # the chosen items are the 20 that would move the gap (or P(a better)) most
        ec = expected_change(cmp.posterior, g.astype(float))
        assert ec[idx].min() >= np.sort(ec[~cmp.data.vetted])[-20] - 1e-15
        assert (ec[cmp.data.vetted] == 0).all()  # a vetted label is known
    # the default: P(a better) without a width of equivalence, the gap with one
    np.testing.assert_array_equal(cmp.select(20, "a", "b"), cmp.select(20, "a", "b", target="prob"))
    np.testing.assert_array_equal(cmp.select(20, "a", "b", width=0.01), cmp.select(20, "a", "b", target="gap"))
    with pytest.raises(ValueError, match="target"):
        cmp.select(5, "a", "b", target="labels")
    with pytest.raises(ValueError, match="width"):
        cmp.select(5, "a", "b", width=-0.01)


def test_expected_change_goes_through_the_label_probabilities(pair):
    """The covariance with the gap is taken through P(z_i = 1 | theta) in each draw: exactly
    the moments of those probabilities (not of the drawn labels, whose Bernoulli noise the
    earlier estimate carried)."""
    from bayeval.compare import expected_change

    cmp, _ = pair
    post = cmp.posterior
    g = cmp.difference("a", "b").values
    p = np.concatenate([post._probabilities(c, d) for c, d in post._chunk_plan(None)])
    gf = g.reshape(-1)  # the chunk plan runs chain by chain, draws in order
    cov = ((gf - gf.mean())[:, None] * p).mean(axis=0)
    pbar = p.mean(axis=0)
    want = np.where(pbar * (1 - pbar) > 0, cov ** 2 / (pbar * (1 - pbar)), 0.0)
    want[cmp.data.vetted] = 0.0
    got = expected_change(post, g)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)


def test_same_seed_same_comparison():
    a, b, lab, _ = _pool(seed=1, n=400, n_vetted=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        one = be.compare({"a": a, "b": b}, lab, **FIT).difference("a", "b").values
        two = be.compare(pd.DataFrame({"a": a, "b": b}), be.EvalData(a, lab), **FIT).difference("a", "b").values
    np.testing.assert_array_equal(one, two)


def test_the_pairs_table_names_as_better_the_more_probably_better_one():
    """Breast cancer, logistic regression against naive Bayes (true AP 0.9943 and 0.9922), 30
    random labels: a skewed posterior puts naive Bayes first by mean (P(best) 0.48). The pairs'
    table used to follow the order by mean and called it better with p_better below 0.5.
    The regression is fitted by Newton steps to its exact optimum (L-BFGS on the unscaled
    features took about 2,700 iterations a fold: 25 CPU seconds)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_predict
    from sklearn.naive_bayes import GaussianNB

    X, y = load_breast_cancer(return_X_y=True)
    lr = cross_val_predict(LogisticRegression(solver="newton-cholesky"), X, y, cv=5, method="predict_proba")[:, 1]
    nb = cross_val_predict(GaussianNB(), X, y, cv=5, method="predict_proba")[:, 1]
    labels = np.full(len(y), np.nan)
    v = np.random.default_rng(61).choice(len(y), 30, replace=False)
    labels[v] = y[v]
    cmp = be.compare({"lr": lr, "nb": nb}, labels, random_seed=0, draws=300)
    ranking = cmp.ranking()
    assert ranking.index[0] == "nb" and ranking["p_best"].iloc[0] < 0.5  # the case: first by mean, less probably best
    (row,) = cmp.summary().to_dict("records")
    assert (row["better"], row["worse"]) == ("lr", "nb") and row["p_better"] == pytest.approx(ranking.loc["lr", "p_best"])
    assert row["p_better"] > 0.5 and row["mean"] == pytest.approx(-cmp.difference_summary("nb", "lr")["mean"])


def test_a_comparison_with_categories_says_how_to_ask_for_one_value():
    """With categories every metric has a ``category`` dim; the tables, the stopping rule and the
    selection need one value per draw. Their errors used to suggest ``k=10``."""
    rng = np.random.default_rng(0)
    n = 300
    truth = rng.random(n) < 0.3
    a = np.clip(truth * 0.4 + rng.random(n) * 0.6, 0, 1)
    b = np.clip(truth * 0.3 + rng.random(n) * 0.7, 0, 1)
    labels = np.full(n, np.nan)
    v = rng.choice(n, 40, replace=False)
    labels[v] = truth[v]
    data = be.EvalData(a, labels, categories=np.where(np.arange(n) % 2, "x", "y"))
    cmp = be.compare({"a": a, "b": b}, data, random_seed=0, draws=100)
    for call in (cmp.summary, lambda: cmp.decided("a", "b"), lambda: cmp.select(5, "a", "b"),
                 lambda: cmp.difference_summary("a", "b")):
        with pytest.raises(ValueError, match=r"\['category'\]: pass category='mean' .* or category='pooled'") as err:
            call()
        assert "k=10" not in str(err.value)
    assert cmp.summary(category="mean")["better"].tolist() == ["a"]
    assert cmp.decided("a", "b", category="pooled") in ("a", "b", None)
    # the report's comparison reads every item pooled, as the report's metrics table does (it failed,
    # after computing the rest), and says which reading it is
    from bayeval.report import report

    rep = report(cmp, title="t", metrics=["average_precision"])
    pd.testing.assert_frame_equal(rep.tables["comparison_ranking"], cmp.ranking(category="pooled"))
    assert not rep.tables["comparison_ranking"].equals(cmp.ranking(category="mean"))
    (said,) = [t for t in rep.text if t.startswith("On the same label draws")]
    assert "has the higher average_precision over all items pooled" in said
    rep = report(cmp, title="t", metrics=["average_precision"], comparison_metric=("average_precision",
                                                                                  {"category": "mean"}))
    pd.testing.assert_frame_equal(rep.tables["comparison_ranking"], cmp.ranking(category="mean"))


def test_plot_draws_the_gaps_and_p_best(pair):
    import matplotlib

    matplotlib.use("Agg")
    cmp, _ = pair
    fig = cmp.plot()
    assert len(fig.axes) == 2 and len(fig.axes[1].patches) == 3


def test_joint_model_weights_the_informative_classifier():
    a, b, lab, _ = _pool(seed=2, n=600, n_vetted=80, strong=3.0, weak=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        post = JointCalibration("logistic").fit(joint_data({"a": a, "b": b}, lab), draws=200, random_seed=0)
    w = post.weights()
    assert w["a"] > 0.8 and w["a"] + w["b"] == pytest.approx(1.0)


def test_signed_weights_subtract_a_shared_error_the_simplex_cannot():
    # b is the shared error alone (no signal): the label is told best by a minus part of b
    a, b, lab, _ = _pool(seed=2, n=600, n_vetted=120, strong=3.0, weak=0.0)
    d = joint_data({"a": a, "b": b}, lab)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        signed = JointCalibration("logistic").fit(d, draws=200, random_seed=0)
        simplex = JointCalibration("logistic", weights="simplex").fit(d, draws=200, random_seed=0)
    w = signed.idata.posterior["w"].values.reshape(-1, 2)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
    assert (w[:, 1] < 0).mean() > 0.95 and w[:, 0].mean() > 1.0
    assert simplex.idata.posterior["w"].values.min() >= 0.0
    # the signed model predicts the vetted labels better (log-likelihood at the posterior mean draws)
    assert signed.label_loglik().mean(axis=(0, 1)).sum() > simplex.label_loglik().mean(axis=(0, 1)).sum()
    assert "weights='simplex'" in repr(JointCalibration(weights="simplex"))
    with pytest.raises(ValueError, match="weights"):
        JointCalibration(weights="positive")


def test_the_intercept_prior_is_wide_enough_for_uncalibrated_scores():
    """Probabilities far from calibrated, a base rate of 0.2: the true intercept is about -2.3.

    An intercept prior of scale 1 (the one-score curve's) holds ``a`` near 0 and the weights
    make up for it (the weaker classifier's weight pulled towards the equal weights); the
    default (5) lets ``a`` go where the labels put it.
    """
    rng = np.random.default_rng(3)
    n = 2000
    y = (rng.random(n) < 0.2).astype(int)
    shared = rng.normal(0, 1, n)
    la = 3.0 * y + 0.8 * shared + 0.6 * rng.normal(0, 1, n) - 1.5
    lb = 1.3 * y + 0.8 * shared + 0.6 * rng.normal(0, 1, n) - 1.5
    lab = np.full(n, np.nan)
    idx = rng.choice(n, 150, replace=False)
    lab[idx] = y[idx]
    d = joint_data({"a": 1 / (1 + np.exp(-la)), "b": 1 / (1 + np.exp(-lb))}, lab)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        wide = JointCalibration("logistic").fit(d, draws=200, random_seed=0)
        narrow = JointCalibration("logistic", intercept_sd=1.0).fit(d, draws=200, random_seed=0)
    a_wide, a_narrow = (float(p.idata.posterior["a"].mean()) for p in (wide, narrow))
    w_wide, w_narrow = (p.weights()["b"] for p in (wide, narrow))
    assert a_wide < a_narrow - 0.2 and a_wide < -1.5  # seeded: -1.68 against -1.38
    assert w_wide < w_narrow  # the shared error subtracted more (truth: w_b = -0.4; seeded: -0.20, -0.13)
    assert "intercept_sd=1.0" in repr(JointCalibration(intercept_sd=1.0)) and "intercept_sd" not in repr(
        JointCalibration())
    with pytest.raises(ValueError, match="intercept_sd"):
        JointCalibration(intercept_sd=0.0)


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "scores, labels, error, match",
    [
        ({"a": [0.1, 0.5, 0.9]}, [1, 0, np.nan], ValueError, "at least two classifiers"),
        ({"a": [0.1, 0.5, 0.9], "b": [0.2, 0.4]}, [1, 0, np.nan], ValueError, "lengths differ"),
        ({"a": [0.1, 0.5, 0.9], "b": [0.2, np.nan, 0.4]}, [1, 0, np.nan], ValueError, "'b' hold NaN"),
        ({"a": [0.1, 0.5, 0.9], "b": [0.2, 0.3, 0.4]}, [1, 0], ValueError, "one label"),
        ({"a": [0.1, 0.5, 0.9], "b": [0.2, 0.3, 0.4]}, be.EvalData([0.1, 0.2], [1, 0]), ValueError, "same items"),
        ([[0.1, 0.5], [0.2, 0.3]], [1, 0], TypeError, "dict"),
        ({"a": [0.1, 0.5, 0.9], "b": [0.2, 0.3, np.inf]}, [1, 0, np.nan], ValueError, "finite"),
    ],
)
def test_bad_input_is_an_error_that_says_what_to_do(scores, labels, error, match):
    with pytest.raises(error, match=match):
        be.compare(scores, labels, **FIT)


def test_bad_arguments_of_the_comparison(pair):
    cmp, _ = pair
    with pytest.raises(ValueError, match="Unknown classifier 'c'.*'a', 'b', 'copy'"):
        cmp.difference("a", "c")
    with pytest.raises(ValueError, match="width"):
        cmp.rope("a", "b", width=-0.1)
    with pytest.raises(ValueError, match="model"):
        be.compare({"a": [0.1, 0.9], "b": [0.2, 0.8]}, [1, 0], model="gbm")
    with pytest.raises(ValueError, match="features"):
        JointCalibration().fit(be.EvalData([0.1, 0.9], [1, 0]))


def test_cli_compare_prints_the_ranking_and_the_gap(tmp_path, capsys):
    from bayeval.cli import main

    a, b, lab, _ = _pool(seed=3, n=400, n_vetted=40)
    path = tmp_path / "scores.csv"
    pd.DataFrame({"item": [f"i{j}" for j in range(400)], "new": a, "prod": b, "y": lab}).to_csv(path, index=False)
    out_csv = tmp_path / "pairs.csv"
    code = main(["compare", str(path), "--score", "prod", "new", "--label", "y", "--id", "item", "--draws", "100",
                 "--width", "0.01", "--no-progress", "--out", str(out_csv)])
    out = capsys.readouterr().out
    assert code == 0 and "p_best" in out and "p_rope" in out
    pairs = pd.read_csv(out_csv)
    assert pairs.loc[0, "better"] == "new" and pairs.loc[0, "p_better"] > 0.9


# ------------------------------------------------------------------ the active loop


def test_active_session_decides_a_comparison_with_its_stopping_rule(tmp_path):
    from bayeval.active import ActiveSession
    from bayeval.compare import ComparisonModel

    rng = np.random.default_rng(3)
    y = rng.random(500) < 0.3
    data = joint_data({"good": 3 * y + rng.normal(0, 1, 500), "weak": 0.3 * y + rng.normal(0, 1, 500)})
    model = ComparisonModel("good", "weak", model="logistic")
    s = ActiveSession(data, model, batch_size=15, store=tmp_path / "s.sqlite", random_seed=0,
                      fit_kwargs={"draws": 150}, progressbar=False)
    assert s.decided() is None  # nothing vetted yet
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for rounds in range(6):
            ids = s.next_batch()
            if rounds == 1:  # the batch past the designed one: the items that move the gap most
                assert ids == model.comparison(s.posterior).select(15, "good", "weak").tolist()
            s.record(ids, y[data.index_of(ids)].astype(int))
            if rounds >= 1 and s.decided() is not None:
                break
        assert s.decided() == "good"
    strategies = s.store.batches()["strategy"].tolist()
    assert strategies[0] == "design" and set(strategies[1:]) <= {"ComparisonModel"}
    s.close()
    plain = ActiveSession(be.EvalData(np.linspace(1, 0, 10)), lambda d: None, store=tmp_path / "p.sqlite")
    with pytest.raises(TypeError, match="no stopping rule"):
        plain.decided()
    plain.close()
    with pytest.raises(ValueError, match="two different"):
        ComparisonModel("good", "good")
    with pytest.raises(ValueError, match="Unknown classifier"):
        ComparisonModel("good", "other").fit(data)


def test_active_session_estimate_on_joint_data_is_the_gap_or_refused(tmp_path):
    """estimate() on joint data measured the first score column alone, under the metric's bare name: with a
    ComparisonModel it is now the gap a - b (the vetting page's table), with another joint model refused."""
    from bayeval.active import ActiveSession
    from bayeval.compare import Comparison, ComparisonModel

    a, b, lab, _ = _pool(seed=4, n=300, n_vetted=40)
    data = joint_data({"a": a, "b": b}, lab)  # "a", the first column, is the data's `scores`
    model = ComparisonModel("b", "a", model="logistic", width=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        s = ActiveSession(data, model, store=tmp_path / "s.sqlite", random_seed=0, fit_kwargs={"draws": 100},
                          progressbar=False)
        table = s.estimate()
    assert table.index.tolist() == ["average_precision: b - a"]
    assert table.columns.tolist() == ["mean", "sd", "hdi_5%", "hdi_95%", "p_better", "p_rope", "decided"]
    cmp = Comparison(s.posterior)
    gap = cmp.difference("b", "a").values
    assert table["mean"].iloc[0] == pytest.approx(gap.mean()) and table["mean"].iloc[0] < 0  # a is the better
    assert table["p_better"].iloc[0] == pytest.approx(cmp.prob_better("b", "a"))
    assert table["decided"].iloc[0] == model.decided(s.posterior)
    hist = s.history()
    assert hist["metric"].tolist() == ["average_precision: b - a"]
    assert hist["mean"].iloc[0] == pytest.approx(gap.mean())
    s.close()
    # another model of the joint data: its metric would be the first column's alone, so refused, naming the ways
    plain = ActiveSession(data, JointCalibration("logistic"), store=tmp_path / "p.sqlite", random_seed=0,
                          fit_kwargs={"draws": 100, "warn": False}, progressbar=False)
    with pytest.raises(ValueError, match=r"joint model of 2 classifiers.*'a'.*ComparisonModel.*ranking"):
        plain.estimate()
    plain.close()
    # and so are its batches, which were chosen for the first column's metric
    plain = ActiveSession(data, JointCalibration("logistic"), store=tmp_path / "q.sqlite", random_seed=0,
                          strategy="expected_change", fit_kwargs={"draws": 100, "warn": False}, progressbar=False)
    with pytest.raises(ValueError, match=r"the batch would be chosen for 'average_precision' of the first column"):
        plain.next_batch()
    assert plain.store.batches().empty  # nothing proposed
    plain.close()


def test_report_has_a_comparison_section(pair):
    from bayeval.report import report

    cmp, _ = pair
    rep = report(cmp, title="a against b", metrics=["average_precision"], rope_width=0.01)
    assert list(rep.tables["comparison_ranking"].index) == list(cmp.ranking().index)
    gaps = rep.tables["comparison_gaps"]
    assert len(gaps) == 3 and "p_rope" in gaps.columns and "comparison" in rep.figures
    top = gaps.iloc[0]
    said = [t for t in rep.text if t.startswith("On the same label draws")]
    assert len(said) == 1 and f"{top['better']} has the higher average_precision" in said[0]
    assert f"probability {top['p_better']:.2f}" in said[0]
    assert "Which classifier is better" in rep.to_markdown()
    same = report(cmp.posterior, title="t", metrics=["average_precision"], comparison=cmp,
                  comparison_metric=("precision_at_k", {"k": 20}))
    assert same.tables["comparison_gaps"]["mean"].abs().max() <= 1.0
    assert "comparison_gaps" not in report(cmp.posterior, title="t", metrics=["average_precision"]).tables
    with pytest.raises(TypeError, match="Comparison"):
        report(cmp.posterior, title="t", comparison="not one")


def test_the_reports_comparison_says_a_threshold_that_flags_no_item_or_every_item(pair):
    """Comparison.summary/ranking carry a threshold that flags no item or every item of a classifier's
    scores in attrs["caveats"] (the other methods warn it), but the report's comparison section boxed only
    Comparison.caveats(): with comparison_metric=("precision", {"threshold": 50}) on scores below 50 it
    said nothing of the threshold, read "a has the higher precision with probability nan ... the gap is
    +nan", and its figure warned (a ThresholdWarning, and NumPy's "invalid value encountered in divide")."""
    from bayeval.core.summary import ThresholdWarning
    from bayeval.report import report

    cmp, _ = pair
    low = float(cmp.data.features[:, 1].min()) - 1.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rep = report(cmp, title="t", metrics=["average_precision"],
                     comparison_metric=("precision", {"threshold": {"a": 0.5, "b": low, "copy": 0.5}}))
    assert not [w for w in caught if issubclass(w.category, ThresholdWarning | RuntimeWarning)], \
        [str(w.message) for w in caught]
    boxed = rep.warnings["comparison"]
    (flag,) = [w for w in boxed if "threshold" in w]
    assert flag.startswith(f"Read this comparison with care: precision of b at threshold={low!r}: the threshold ") \
        and "flags every item: it lies at or below every score" in flag, flag
    assert any(flag.split("care: ")[1][:60] in t for t in rep.text)  # and at the top of the reading
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rep = report(cmp, title="t", metrics=["average_precision"], comparison_metric=("precision", {"threshold": 1e3}))
    assert not [w for w in caught if issubclass(w.category, ThresholdWarning | RuntimeWarning)], \
        [str(w.message) for w in caught]
    boxed = rep.warnings["comparison"]
    assert sum("at threshold=1000: the threshold 1000 flags no item" in w for w in boxed) == 3, boxed
    assert any("precision is undefined in 100.0% of the posterior draws" in w for w in boxed), boxed
    (read,) = [t for t in rep.text if t.startswith("On the same label draws")]
    assert "nan" not in read and "undefined in every draw" in read, read


def test_a_comparison_says_what_its_labels_and_scores_cannot_tell(pair, tmp_path, capsys):
    """Two vetted positives, one classifier's probabilities saturated at 0/1 and another's
    squeezed: ``caveats()`` says each (naming the classifier), ``summary`` and ``ranking``
    carry them, ``bayeval compare`` prints them on stderr and the report boxes them in the
    comparison section; a comparison with enough labels and margins has none."""
    from bayeval.cli import main
    from bayeval.report import report

    assert pair[0].caveats() == [] and pair[0].summary().attrs["caveats"] == []
    rng = np.random.default_rng(8)
    n = 400
    y = rng.random(n) < 0.2
    p = np.clip(0.2 + 0.5 * y + rng.normal(0, 0.15, n), 0.01, 0.99)
    sat = np.where(rng.random(n) < 0.3, y.astype(float), p)  # 30% exactly 0 or 1
    squeezed = 0.3 + 0.1 * p  # in [0.30, 0.40]
    lab = np.full(n, np.nan)
    lab[np.flatnonzero(~y)[:28]] = 0
    lab[np.flatnonzero(y)[:2]] = 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cmp = be.compare({"plain": p, "sat": sat, "squeezed": squeezed}, lab, draws=100, random_seed=0,
                         model="logistic")
    said = cmp.caveats()
    assert said[0].startswith("only 2 of the 30 vetted labels are positive") and "select()" in said[0]
    share = f"{np.mean((sat == 0) | (sat == 1)):.0%}"
    assert len(said) == 3 and said[1].startswith(f"{share} of sat's scores are exactly 0 or 1")
    assert said[2].startswith("squeezed's probabilities are squeezed into [0.3")
    assert cmp.summary().attrs["caveats"] == said and cmp.ranking().attrs["caveats"] == said
    md = report(cmp, title="t", metrics=["average_precision"]).to_markdown()
    assert all(c[:60] in md for c in said) and "Read this comparison with care" in md
    path = tmp_path / "s.csv"
    pd.DataFrame({"a": p, "b": sat, "y": lab}).to_csv(path, index=False)
    assert main(["compare", str(path), "--score", "a", "b", "--label", "y", "--draws", "100", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "caveat: only 2 of the 30 vetted labels are positive" in err and f"caveat: {share} of b's scores" in err


def test_the_joint_posteriors_caveats_name_every_classifier_they_are_about():
    """The joint posterior's own caveats (its summary's ``attrs["caveats"]``, the report's metrics section)
    read only the first score column, unnamed and in one classifier's words: a squeezed second classifier
    went unsaid, a saturated first one was "the scores" with the advice to refit with bayeval.fit. They are
    now the comparison's, each naming its classifier, for every classifier."""
    from bayeval.models import Stack
    from bayeval.report import report

    rng = np.random.default_rng(8)
    n = 300
    y = rng.random(n) < 0.2
    p = np.clip(0.2 + 0.5 * y + rng.normal(0, 0.15, n), 0.01, 0.99)
    sat = np.where(rng.random(n) < 0.3, y.astype(float), p)  # 30% exactly 0 or 1
    squeezed = 0.3 + 0.1 * p  # in [0.30, 0.40]
    lab = np.full(n, np.nan)
    lab[np.flatnonzero(~y)[:28]] = 0
    lab[np.flatnonzero(y)[:2]] = 1
    scores = {"a_sat": sat, "b_squeezed": squeezed}  # sorted: a_sat is the fit's first column
    d = joint_data(scores, lab)
    share = f"{np.mean((sat == 0) | (sat == 1)):.0%}"
    for model in (JointCalibration("logistic"), Stack([JointCalibration("logistic"), JointCalibration("monotone")])):
        said = d.caveats(model)
        assert said[0].startswith("only 2 of the 30 vetted labels are positive: which classifier"), said
        assert said[1].startswith(f"{share} of a_sat's scores are exactly 0 or 1")
        assert said[2].startswith("b_squeezed's probabilities are squeezed into [0.3") and len(said) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for model in ("logistic", "default"):
            cmp = be.compare(scores, lab, draws=100, random_seed=0, model=model)
            post = cmp.posterior
            assert post.data.caveats(post) == cmp.caveats()
            assert post.summary(["average_precision"]).attrs["caveats"] == cmp.caveats()
    md = report(post, title="t", metrics=["average_precision"]).to_markdown()
    assert "Read these intervals with care: b_squeezed's probabilities are squeezed" in md
    assert "of the scores are exactly 0 or 1" not in md


def test_shared_segment_slopes_keep_the_monotone_curve_small(monkeypatch):
    """``slopes="shared"``: one slope multiplier per segment for every classifier (4 values,
    not 4 per classifier); the posterior's probabilities use them for each classifier's
    own features; ``compare`` shares them from three classifiers on."""
    a, b, lab, _ = _pool(seed=4, n=600, n_vetted=80)
    rng = np.random.default_rng(5)
    c = 0.5 * a + rng.normal(0, 1, a.size)
    d = joint_data({"a": a, "b": b, "c": c}, lab)
    shared, each = JointCalibration("monotone", slopes="shared"), JointCalibration("monotone")
    n_free = {m.slopes: sum(v.size for v in m.build(d).initial_point().values()) for m in (shared, each)}
    assert n_free == {"shared": 2 + 2 + 4, "each": 2 + 2 + 3 * 4}
    assert shared._structure(d) != each._structure(d)
    assert "slopes='shared'" in repr(shared) and "slopes" not in repr(each)
    assert "slopes" not in repr(JointCalibration("logistic", slopes="shared"))  # no segments to share
    with pytest.raises(ValueError, match="slopes"):
        JointCalibration(slopes="per_classifier")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        post = shared.fit(d, draws=100, random_seed=0, progressbar=False)
    delta = post.idata.posterior["delta"].values.reshape(-1, 4)
    assert delta.shape == (200, 4)
    # the probabilities: each classifier's features times the shared multipliers
    params = post._flat_params()
    f = post.features  # (items, classifier, segment)
    w = params["w"].reshape(-1, 3)
    eta = params["a"][:, None] + params["b"][:, None] * np.einsum("mk,iks,ms->mi", w, f, np.exp(delta))
    np.testing.assert_allclose(post._eta(params), eta, rtol=1e-10, atol=1e-10)
    for k, want in ((2, "each"), (3, "shared")):
        names = ["a", "b", "c"][:k]
        calls = []

        def spy(self, data, calls=calls, **kw):
            calls.append(self.slopes)
            raise RuntimeError("stop")

        monkeypatch.setattr(JointCalibration, "fit", spy)
        with pytest.raises(RuntimeError, match="stop"):
            _fit_joint(joint_data(dict(zip(names, (a, b, c), strict=False)), lab), "monotone", draws=10,
                       chains=1, random_seed=0, progressbar=False, warn=False)
        assert calls == [want]


def test_the_weights_prior_centre_on_standardized_features_ignores_each_classifiers_scale(monkeypatch):
    """``weight_centre="standardized"`` centres the signed weights on equal weights per
    standardized feature: the centre's coefficients times each feature's spread are equal,
    whatever the scale of one classifier's log-odds (with ``"equal"`` they follow the
    scale); the built model's ``w`` is centred there; two copies get exactly 1/K; old saved fits
    (no ``weight_centre``) reload as ``"equal"``; ``compare`` passes ``WEIGHT_CENTRE``."""
    from bayeval.compare import comparison
    from bayeval.models.joint import standardized_centre
    from bayeval.persist import _decode, _encode, _make_model

    a, b, lab, _ = _pool(seed=6, n=800, n_vetted=40)
    # log-odds taken as they are (the default standardizes raw scores, which would hide the scale)
    std, eq = JointCalibration(transform="logodds", weight_centre="standardized"), JointCalibration(transform="logodds")
    for scale in (1.0, 0.3, 4.0):
        d = joint_data({"a": scale * a, "b": b}, lab)
        feats, _ = std.features(d)
        sd = feats[:, :, 0].std(axis=0)
        c_std, c_eq = std._prepared(d)["centre"], eq._prepared(d)["centre"]
        assert c_std.sum() == pytest.approx(1.0) and c_eq.tolist() == [0.5, 0.5]
        assert c_std[0] * sd[0] / (c_std[1] * sd[1]) == pytest.approx(1.0, rel=1e-12)
        if scale != 1.0:  # the old centre weighs the standardized features by their spreads
            assert c_eq[0] * sd[0] / (c_eq[1] * sd[1]) == pytest.approx(sd[0] / sd[1], rel=1e-12)
    # the built model's weights are that centre plus a zero-sum normal deviation
    model = std.build(d)
    assert abs(c_std[0] - 0.5) > 0.2
    np.testing.assert_allclose(model["w_centre"].get_value(), c_std, rtol=1e-12)
    assert model["u"].owner.op.__class__.__name__.startswith("ZeroSumNormal")
    assert std._structure(d) != eq._structure(d)
    assert std._data_values(d)["w_centre"].tolist() == c_std.tolist()
    # the monotone curve's centre uses its whole feature (the segments summed)
    fm, _ = JointCalibration("monotone", transform="logodds").features(d)
    mono = JointCalibration("monotone", transform="logodds", weight_centre="standardized")
    np.testing.assert_allclose(mono._prepared(d)["centre"],
                               standardized_centre(fm.sum(axis=2)), rtol=1e-12)
    # two copies: exactly 1/K, the one-score curve's model
    same = joint_data({"a": a, "b": a.copy(), "c": a.copy()}, lab)
    assert std._prepared(same)["centre"].tolist() == [1 / 3] * 3
    assert "weight_centre='standardized'" in repr(std) and "weight_centre" not in repr(eq)
    assert "weight_centre" not in repr(JointCalibration(weights="simplex", weight_centre="standardized"))
    with pytest.raises(ValueError, match="weight_centre"):
        JointCalibration(weight_centre="spread")
    old = _make_model("bayeval.models.joint:JointCalibration", {"curve": "logistic", "weights": "signed"})
    assert old.weight_centre == "equal"
    assert _decode(_encode(std, "m")).weight_centre == "standardized"
    calls = []

    def spy(self, data, **kw):
        calls.append(self.weight_centre)
        raise RuntimeError("stop")

    monkeypatch.setattr(JointCalibration, "fit", spy)
    for centre in ("equal", "standardized"):
        monkeypatch.setattr(comparison, "WEIGHT_CENTRE", centre)
        with pytest.raises(RuntimeError, match="stop"):
            _fit_joint(joint_data({"a": a, "b": b}, lab), "logistic", draws=10, chains=1, random_seed=0,
                       progressbar=False, warn=False)
    assert calls == ["equal", "standardized"]


def test_compare_gives_its_joint_candidates_the_tighter_weights_prior(monkeypatch):
    """``compare``'s joint candidates of two classifiers take ``WEIGHT_SD`` (0.25) as the scale of
    the signed weights' deviations from their centre, whatever the class's own default (1), and
    ``WEIGHT_SD_MANY`` (1) from three classifiers on; the built model's
    prior of ``w_a - w_b`` has standard deviation ``sqrt(2) * weight_sd`` around the centre
    (a zero-sum normal of two entries), so a smaller scale holds two classifiers nearer the
    centre's weights until the labels move them."""
    import pymc as pm

    from bayeval.compare import comparison

    assert comparison.WEIGHT_SD == 0.25 and JointCalibration().weight_sd == 1.0
    a, b, lab, _ = _pool(seed=6, n=300, n_vetted=30)
    d = joint_data({"a": a, "b": b}, lab)
    for sd in (1.0, 0.25):
        with JointCalibration(weight_sd=sd, weight_centre="standardized").build(d):
            w = pm.draw(pm.modelcontext(None)["w"], draws=4000, random_seed=1)
        diff = w[:, 0] - w[:, 1]
        # 4000 draws: the sample sd's relative standard error is about 1.1%
        assert diff.std() == pytest.approx(np.sqrt(2) * sd, rel=0.05)
        assert np.allclose(w.sum(axis=1), 1.0)
    seen = []

    def spy(self, data, **kw):
        seen.append(self.weight_sd)
        raise RuntimeError("stop")

    monkeypatch.setattr(JointCalibration, "fit", spy)
    for sd in (0.25, 0.7):
        monkeypatch.setattr(comparison, "WEIGHT_SD", sd)
        with pytest.raises(RuntimeError, match="stop"):
            _fit_joint(d, "logistic", draws=10, chains=1, random_seed=0, progressbar=False, warn=False)
    assert seen == [0.25, 0.7]
    # from three classifiers on, the scale the pairs' rules did not decide: WEIGHT_SD_MANY (1)
    assert comparison.WEIGHT_SD_MANY == 1.0
    with pytest.raises(RuntimeError, match="stop"):
        _fit_joint(joint_data({"a": a, "b": b, "c": a + b}, lab), "logistic", draws=10, chains=1, random_seed=0,
                   progressbar=False, warn=False)
    assert seen == [0.25, 0.7, 1.0]


def test_a_student_t_weights_prior_lives_on_the_same_zero_sum_vectors():
    """``weight_df=nu`` gives the signed weights' deviations Student-t coordinates of scale
    ``weight_sd`` in an orthonormal basis of the zero-sum vectors (normal coordinates there are
    exactly ``ZeroSumNormal``): the weights still sum to one, ``|w_a - w_b|`` has the median of
    ``sqrt(2) * weight_sd * |t_nu|``, and the tails are heavier than the normal's; the option is
    in the structure key and the repr, survives saving, and an old saved model reloads without it."""
    import pymc as pm
    from scipy import stats

    from bayeval.models.joint import zero_sum_basis
    from bayeval.persist import _decode, _encode, _make_model

    for k in (2, 3, 5):
        h = zero_sum_basis(k)
        assert h.shape == (k, k - 1)
        np.testing.assert_allclose(h.sum(axis=0), 0.0, atol=1e-12)
        np.testing.assert_allclose(h.T @ h, np.eye(k - 1), atol=1e-12)
    a, b, lab, _ = _pool(seed=6, n=300, n_vetted=30)
    d = joint_data({"a": a, "b": b}, lab)
    gaps = {}
    for df in (None, 3.0):
        m = JointCalibration(weight_sd=0.25, weight_df=df).build(d)
        assert ("u_basis" in {v.name for v in m.free_RVs}) == (df is not None)
        w = pm.draw(m["w"], draws=20000, random_seed=2)
        np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
        gaps[df] = np.abs(w[:, 0] - w[:, 1])
    # 20,000 draws: a median's relative standard error is about 1%
    want = np.sqrt(2) * 0.25 * stats.t(3).ppf(0.75)
    assert np.median(gaps[3.0]) == pytest.approx(want, rel=0.04)
    assert np.median(gaps[None]) == pytest.approx(np.sqrt(2) * 0.25 * stats.norm.ppf(0.75), rel=0.04)
    assert np.quantile(gaps[3.0], 0.99) > 1.8 * np.quantile(gaps[None], 0.99)
    t3 = JointCalibration(weight_sd=0.25, weight_df=3.0)
    assert "weight_df=3.0" in repr(t3) and "weight_df" not in repr(JointCalibration())
    assert t3._structure(d) != JointCalibration(weight_sd=0.25)._structure(d)
    assert _decode(_encode(t3, "m")).weight_df == 3.0
    old = _make_model("bayeval.models.joint:JointCalibration", {"curve": "logistic", "weights": "signed"})
    assert old.weight_df is None
    with pytest.raises(ValueError, match="weight_df"):
        JointCalibration(weight_df=0)


def test_the_jeffreys_penalty_adds_half_the_log_determinant_of_the_coefficients_fisher_information():
    """``penalty="jeffreys"`` adds ``0.5 log det(X' W X)`` (X: 1 and each classifier's feature over
    the vetted items, W: p(1 - p) at the curve's log-odds) to the log-density, exactly; the
    default adds nothing; it is finite for two copies of one classifier (a singular
    information, kept apart by a small ridge); it is in the structure key and the repr; a
    saved fit without it reloads without it."""
    from bayeval.models.penalty import JEFFREYS_RIDGE as _JEFFREYS_RIDGE
    from bayeval.persist import _decode, _encode, _make_model

    a, b, lab, _ = _pool(seed=3, n=300, n_vetted=30)
    d = joint_data({"a": a, "b": b}, lab)
    jef, none = JointCalibration(transform="logodds", penalty="jeffreys"), JointCalibration(transform="logodds")
    mj, mn = jef.build(d), none.build(d)
    assert len(mj.potentials) == 1 and not mn.potentials
    point = {"a": 0.3, "b_log__": np.log(1.7), "u_zerosum__": np.array([0.4])}

    def at(model, var):  # var's value at ``point`` (a function of the free variables' values)
        out = model.replace_rvs_by_values([var])[0]
        # a value only: PyTensor's Python mode, no C module compiled for this check
        return model.compile_fn(out, inputs=model.value_vars, point_fn=True, on_unused_input="ignore",
                                mode="FAST_COMPILE")(point)

    feats, _ = jef.features(d)
    x = np.column_stack([np.ones(int(d.vetted.sum())), feats[d.vetted][:, :, 0]])
    w = at(mj, mj["w"])
    p = 1 / (1 + np.exp(-(0.3 + 1.7 * x[:, 1:] @ w)))
    info = (x * (p * (1 - p))[:, None]).T @ x + _JEFFREYS_RIDGE * np.eye(3)
    assert float(at(mj, mj.potentials[0])) == pytest.approx(0.5 * np.linalg.slogdet(info)[1], rel=1e-9)
    # two copies: the information is singular without the ridge, the penalty stays finite
    same = JointCalibration(transform="logodds", penalty="jeffreys").build(joint_data({"a": a, "b": a.copy()}, lab))
    assert np.isfinite(float(at(same, same.potentials[0])))
    assert jef._structure(d) != none._structure(d)
    assert "penalty='jeffreys'" in repr(jef) and "penalty" not in repr(none)
    with pytest.raises(ValueError, match="penalty"):
        JointCalibration(penalty="firth")
    old = _make_model("bayeval.models.joint:JointCalibration", {"curve": "logistic", "weights": "signed"})
    assert old.penalty == "none"
    assert _decode(_encode(jef, "m")).penalty == "jeffreys"


def test_the_jeffreys_penalty_compiles_vectorized_without_a_rewrite_failure(caplog):
    """The penalty's log-determinant, vectorized over draws as importance sampling compiles it,
    equals the one-point log-density and logs no PyTensor rewrite failure (``log(det(...))``
    logged a ``slogdet_specialization`` traceback on every such compile)."""
    import logging

    from bayeval.core.sampling import _vectorize

    a, b, lab, _ = _pool(seed=3, n=300, n_vetted=30)
    m = JointCalibration(transform="logodds", penalty="jeffreys").build(joint_data({"a": a, "b": b}, lab))
    pts = {"a": np.array([0.3, -0.2, 1.0]), "b_log__": np.log([1.7, 0.5, 3.0]),
           "u_zerosum__": np.array([[0.4], [-0.1], [0.9]])}
    with caplog.at_level(logging.ERROR, logger="pytensor"):
        batch = _vectorize(m, m.value_vars, [], "logp")(*[pts[v.name] for v in m.value_vars])
    assert not [r for r in caplog.records if "Rewrite failure" in r.getMessage()]
    logp = m.compile_logp(mode="FAST_COMPILE")  # the one-point reference: Python mode, no C module
    one = [float(logp({k: v[i] for k, v in pts.items()})) for i in range(3)]
    np.testing.assert_allclose(batch, one, rtol=1e-10)


def test_separation_finds_a_separating_feature_or_line_and_nothing_else():
    from bayeval.models.joint import separation

    y = np.array([0, 0, 1, 1])
    assert separation(np.array([[-3.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [1.5, 0.0]]), y) == "0"
    assert separation(np.array([[0.0, 4.0], [0.0, 3.0], [0.0, 1.0], [0.0, -2.0]]), y) == "1"  # reversed
    assert separation(np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [2.0, 2.0]]), y) == "0"  # a tie: quasi
    assert separation(np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.6, 0.6]]), y) == "linear"
    assert separation(np.array([[0.0, 0.0], [3.0, 3.0], [1.0, 1.0], [2.0, 2.0]]), y) is None
    assert separation(np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.4, 0.4]]), y) is None
    assert separation(np.array([[0.0], [1.0]]), np.array([1, 1])) is None  # one class: nothing to separate
    with pytest.raises(ValueError, match="one entry per row of `z`"):
        separation(np.zeros((4, 2)), [0, 1, 1])
    with pytest.raises(ValueError, match="must be 1 or 0, got \\[2.0\\]"):
        separation(np.zeros((4, 2)), [0, 1, 2, 1])
    with pytest.raises(ValueError, match="NaN or infinite"):
        separation(np.array([[1.0, np.nan], [2.0, 3.0]]), [0, 1])


def _auto_pools():
    """A seeded pool whose 20 vetted labels a threshold on the strong classifier's score
    separates, and one whose 40 vetted labels no line separates."""
    a, b, lab, _ = _pool(seed=1, n=300, n_vetted=20, strong=6.0)
    a2, b2, lab2, _ = _pool(seed=1, n=300, n_vetted=40)
    return joint_data({"a": a, "b": b}, lab), joint_data({"a": a2, "b": b2}, lab2)


def test_auto_penalty_applies_jeffreys_only_where_the_vetted_labels_are_separable():
    """``penalty="auto"``: on the separable pool the model is the Jeffreys-penalized one (a
    potential; the same structure key, so the same compiled model and draws), on the other the
    unpenalized one (no potential, the same key as ``penalty="none"``)."""
    sep, mixed = _auto_pools()
    auto = JointCalibration(penalty="auto")
    assert auto.penalty_for(sep) == "jeffreys" and auto.penalty_for(mixed) == "none"
    assert JointCalibration("monotone", penalty="auto").penalty_for(sep) == "jeffreys"
    assert JointCalibration(penalty="jeffreys").penalty_for(mixed) == "jeffreys"
    assert JointCalibration().penalty_for(sep) == "none"
    assert len(auto.build(sep).potentials) == 1 and not auto.build(mixed).potentials
    jef, none = JointCalibration(penalty="jeffreys"), JointCalibration()
    assert auto._structure(sep) == jef._structure(sep) != none._structure(sep)
    assert auto._structure(mixed) == none._structure(mixed) != jef._structure(mixed)
    assert "penalty='auto'" in repr(auto)


@pytest.mark.slow
def test_auto_penalty_fits_draw_for_draw_as_jeffreys_or_none():
    """The fits themselves (seconds each): ``penalty="auto"`` gives the Jeffreys fit's draws on
    the separable pool and the unpenalized fit's on the other, and differs from the other choice."""
    fit = dict(draws=150, chains=2, random_seed=0, progressbar=False, warn=False)
    sep, mixed = _auto_pools()
    jef, none = JointCalibration(penalty="jeffreys"), JointCalibration()
    for data, same, other in ((sep, jef, none), (mixed, none, jef)):
        b_auto = JointCalibration(penalty="auto").fit(data, **fit).idata.posterior["b"].values
        np.testing.assert_array_equal(b_auto, same.fit(data, **fit).idata.posterior["b"].values)
        assert not np.array_equal(b_auto, other.fit(data, **fit).idata.posterior["b"].values)


def test_a_metric_undefined_in_some_draws_is_summarized_over_the_draws_where_it_is_defined():
    """ROC AUC with no vetted positive is undefined (NaN) in the draws with no positive: the
    ranking's mean, sd, HDI and p_best were NaN, the gap's summary NaN beside a p_better that
    counted the NaN draws as 'not better' (p_better(a, b) + p_better(b, a) = 0.88), and the plot
    had an empty P(best) panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    n = 200
    y = rng.random(n) < 0.02
    lab = np.full(n, np.nan)
    lab[np.flatnonzero(~y)[:20]] = 0
    cmp = be.compare({"a": 2 * y + rng.normal(0, 1, n), "b": y + rng.normal(0, 1, n)}, lab, random_seed=0,
                     draws=200)
    undefined = float(np.isnan(cmp.metric("roc_auc").values).any(axis=-1).mean())
    assert 0.05 < undefined < 0.95
    rank = cmp.ranking("roc_auc")
    assert np.isfinite(rank.to_numpy()).all() and rank["p_best"].sum() == pytest.approx(1.0)
    assert rank.attrs["undefined"] == pytest.approx(undefined)
    assert any(c.startswith("roc_auc is undefined in") for c in rank.attrs["caveats"])
    assert cmp.prob_better("a", "b", "roc_auc") + cmp.prob_better("b", "a", "roc_auc") == pytest.approx(1.0)
    gap = cmp.difference("a", "b", "roc_auc").values.ravel()
    defined = gap[np.isfinite(gap)]
    s = cmp.difference_summary("a", "b", "roc_auc", width=0.05)
    assert np.isfinite(s.to_numpy()).all() and s["mean"] == pytest.approx(defined.mean())
    assert s["p_rope"] == pytest.approx(np.mean(np.abs(defined) <= 0.05))
    assert cmp.rope("a", "b", "roc_auc", width=0.05) == pytest.approx(s["p_rope"])
    table = cmp.summary("roc_auc")
    assert table["p_better"].iloc[0] >= 0.5 and any("undefined" in c for c in table.attrs["caveats"])
    fig = cmp.plot("roc_auc")
    assert sum(p.get_width() for p in fig.axes[1].patches) == pytest.approx(1.0)  # P(best) as horizontal bars
    plt.close(fig)
    _, one = plt.subplots()
    with pytest.raises(ValueError, match="two panels.*pass two Axes"):
        cmp.plot("roc_auc", ax=one)
    plt.close("all")


def test_flat_ends_of_the_joint_curve_floor_every_items_probability_and_score_the_labels_as_fitted():
    """``asymptotes``: ``True`` adds the floor ``lo`` and ceiling factor ``u_hi``; ``"auto"`` adds
    them only where the vetted labels are separable and hold 10 or more of each class (a
    different structure key there, the plain curve's elsewhere: also on separable labels with
    5 positives). Fitted on the separable pool, every item's probability lies in
    ``[lo, lo + (1 - lo) u_hi]`` of its draw (the plain curve puts extreme items within 1e-6 of 0
    and 1 on this pool), the stored log-likelihood of the vetted labels is the model's own (PyMC's
    pointwise log-likelihood at the same draws), and the option survives a save."""
    import pymc as pm

    from bayeval.persist import _decode, _encode, _make_model

    few, mixed = _auto_pools()  # separable with 5 vetted positives; not separable
    a, b, lab, _ = _pool(seed=2, n=300, n_vetted=50, strong=6.0)
    sep = joint_data({"a": a, "b": b}, lab)  # separable, with 16 vetted positives and 34 negatives
    flat, auto, plain = JointCalibration(asymptotes=True), JointCalibration(asymptotes="auto"), JointCalibration()
    assert plain.penalty_for(few) == "none" and JointCalibration(penalty="auto").penalty_for(few) == "jeffreys"
    assert auto.asymptotes_for(sep) and not auto.asymptotes_for(few) and not auto.asymptotes_for(mixed)
    assert {"lo", "u_hi"} <= {v.name for v in flat.build(mixed).free_RVs}
    assert {"lo", "u_hi"} <= {v.name for v in auto.build(sep).free_RVs}
    assert not {"lo", "u_hi"} & {v.name for v in auto.build(mixed).free_RVs}
    assert auto._structure(sep) == flat._structure(sep) != plain._structure(sep)
    assert auto._structure(mixed) == plain._structure(mixed)
    assert "asymptotes='auto'" in repr(auto) and "asymptotes" not in repr(plain)
    with pytest.raises(ValueError, match="asymptotes"):
        JointCalibration(asymptotes="yes")
    assert _decode(_encode(auto, "m")).asymptotes == "auto"
    assert _make_model("bayeval.models.joint:JointCalibration", {"curve": "logistic"}).asymptotes is False

    fit = dict(draws=100, chains=2, random_seed=0, progressbar=False, warn=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = auto.fit(sep, **fit)
    params = post._flat_params()
    p = post._prob(params)
    lo, top = params["lo"][:, None], params["lo"][:, None] + (1 - params["lo"][:, None]) * params["u_hi"][:, None]
    assert np.all(p >= lo - 1e-12) and np.all(p <= top + 1e-12)
    assert p.min() > 1e-4 and p.max() < 1 - 1e-4  # no item's label is drawn for sure (the plain curve: within 1e-6)
    with auto.build(sep) as m:
        ll = pm.compute_log_likelihood(post.idata.copy(), var_names=["label"], model=m, progressbar=False,
                                       extend_inferencedata=False)["label"].values
    np.testing.assert_allclose(post.label_loglik(), ll, rtol=1e-8, atol=1e-10)
