"""Tests of bayeval.fscore.study: replaying F-score estimators on a labeled pool."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import math

import numpy as np
import pandas as pd
import pytest
from _figures import assert_axis_labels_inside
from sklearn.metrics import fbeta_score

from bayeval.fscore import FScoreStudy, acis, simulate_fscore, uniform_sampling
from bayeval.fscore.study import summarize_runs


def pool(n=8000, prevalence=0.02, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < prevalence).astype(int)
    scores = np.clip(0.6 * y + rng.normal(0.2, 0.15, n), 0, 1)
    return scores, (scores > 0.5).astype(int), y


@pytest.fixture(scope="module")
def study():
    scores, predictions, y = pool()
    return simulate_fscore(
        scores, predictions, y, methods=["acis", "uniform", "top_k"], budgets=[30, 120], trials=12, random_seed=5
    )


def test_pandas_inputs_are_paired_by_index():
    """``y_true`` (or the predictions) as a Series with the scores' ids in another order is put
    in the scores' order: the study is the one with plain arrays (by position, the truth and
    every run's labels belonged to other items); ids that do not match raise a ValueError."""
    scores, predictions, y = pool(n=3000)
    ids = np.arange(scores.size) * 3 + 17
    kw = dict(methods=["acis", "uniform"], budgets=[30], trials=3, random_seed=1)
    ref = simulate_fscore(scores, predictions, y, **kw)
    s = pd.Series(scores, index=ids)
    got = simulate_fscore(s, pd.Series(predictions, index=ids).sample(frac=1, random_state=0),
                          pd.Series(y, index=ids).sample(frac=1, random_state=1), **kw)
    np.testing.assert_array_equal(got.runs["estimate"], ref.runs["estimate"])  # NaN: undefined in both
    assert got.truth == ref.truth
    with pytest.raises(ValueError, match="indexes name different items"):
        simulate_fscore(s, predictions, pd.Series(y), **kw)


def test_truth_is_the_pools_f_score():
    scores, predictions, y = pool()
    for alpha in (0.5, 0.8):
        st = simulate_fscore(scores, predictions, y, methods=["top_k"], budgets=[20], trials=2, alpha=alpha)
        beta = math.sqrt((1 - alpha) / alpha)
        assert st.truth == pytest.approx(fbeta_score(y, predictions, beta=beta))


def test_runs_are_paired_and_reproducible(study):
    scores, predictions, y = pool()
    runs = study.runs
    assert len(runs) == 3 * 2 * 12
    assert set(runs["method"]) == {"acis", "uniform", "top_k"}
    # trial t of every method used the same seed: rerun two of them by hand
    seeds = np.random.SeedSequence(5).generate_state(12)
    for method, name in ((acis, "acis"), (uniform_sampling, "uniform")):
        row = runs[(runs["method"] == name) & (runs["budget"] == 120) & (runs["trial"] == 7)].iloc[0]
        r = method(scores, predictions, lambda i: y[i], budget=120, random_seed=int(seeds[7]))
        assert row["estimate"] == r.estimate and row["ci_low"] == r.interval[0]
    again = simulate_fscore(
        scores, predictions, y, methods=["acis", "uniform", "top_k"], budgets=[30, 120], trials=12, random_seed=5
    )
    np.testing.assert_array_equal(again.runs["estimate"].to_numpy(), runs["estimate"].to_numpy())


def test_summary_matches_a_direct_computation(study):
    summ = study.summary()
    g = study.runs[(study.runs["method"] == "acis") & (study.runs["budget"] == 120)]
    err = g["estimate"].to_numpy() - study.truth
    row = summ.loc[("acis", 120)]
    assert row["mse"] == pytest.approx(np.mean(err**2))
    assert row["bias"] == pytest.approx(err.mean())
    assert row["mse_se"] == pytest.approx(np.std(err**2, ddof=1) / np.sqrt(12))
    assert row["var_ratio"] == pytest.approx(g["variance"].mean() / g["estimate"].var(ddof=1))
    covered = (g["ci_low"] <= study.truth) & (study.truth <= g["ci_high"])
    assert row["coverage"] == pytest.approx(covered.mean())
    # top-K is deterministic: no spread, no variance ratio
    assert math.isnan(summ.loc[("top_k", 120), "var_ratio"])
    # ACIS beats uniform sampling on this rare pool at 120 labels (MSE 0.003 vs 0.05 here)
    assert summ.loc[("acis", 120), "mse"] < summ.loc[("uniform", 120), "mse"]


def test_undefined_runs_are_scored_as_zero_with_full_interval():
    s = summarize_runs([np.nan, 0.5], [np.nan, 0.01], [0.0, 0.4], [1.0, 0.6], truth=0.5)
    assert s["undefined"] == 0.5
    assert s["mse"] == pytest.approx((0.25 + 0.0) / 2)
    assert s["coverage"] == 1.0
    assert s["var_ratio"] == pytest.approx(((1 / 12 + 0.01) / 2) / np.var([0.0, 0.5], ddof=1))


def test_custom_methods_and_their_keywords():
    scores, predictions, y = pool()
    seen = []

    def my_method(scores, predictions, oracle, *, budget, alpha, random_seed, interval_prob, flag):
        seen.append(flag)
        return acis(scores, predictions, oracle, budget=budget, alpha=alpha, random_seed=random_seed,
                    interval_prob=interval_prob, top_k_prior=False)

    st = simulate_fscore(
        scores, predictions, y, methods={"no domain": my_method, "acis": acis}, budgets=[40], trials=3,
        method_kwargs={"no domain": {"flag": "x"}},
    )
    assert seen == ["x"] * 3
    assert list(st.summary().index.get_level_values("method")) == ["no domain", "acis"]
    assert "FScoreStudy(" in repr(st)


def test_plot_draws_one_line_per_method(study):
    ax = study.plot()
    assert len(ax.get_lines()) == 3
    assert ax.get_yscale() == "log"
    ax = study.plot(kind="variance")  # top-K has no spread: left out
    lines = ax.get_lines()
    assert len(lines) == 4
    g = study.runs[(study.runs["method"] == "acis")]
    np.testing.assert_allclose(lines[0].get_ydata(), g.groupby("budget")["estimate"].var(ddof=1).to_numpy())
    np.testing.assert_allclose(lines[1].get_ydata(), g.groupby("budget")["variance"].mean().to_numpy())
    with pytest.raises(ValueError, match="kind"):
        study.plot(kind="bias")


@pytest.mark.parametrize("kind", ["mse", "variance"])
def test_plot_keeps_its_axis_labels_inside_the_figure(study, kind):
    # the new figure had no layout: "labels (budget)" was cut off at the bottom when saved
    import matplotlib.pyplot as plt

    ax = study.plot(kind=kind)
    assert_axis_labels_inside(ax)
    fig, ax0 = plt.subplots()  # a figure passed in keeps its own layout
    study.plot(ax0, kind=kind)
    assert fig.get_layout_engine() is None
    plt.close("all")


@pytest.mark.parametrize(
    "change,error,match",
    [
        (dict(y_true=np.r_[np.nan, np.zeros(7999)]), ValueError, "true label, 0 or 1"),
        (dict(y_true=np.zeros(10)), ValueError, "10 labels"),
        (dict(trials=1), ValueError, "trials"),
        (dict(trials=2.5), TypeError, "trials"),
        (dict(methods=["acis", "magic"]), ValueError, "Unknown method"),
        (dict(methods={"a": "acis"}), TypeError, "function like"),
        (dict(method_kwargs={"sawade": {}}), ValueError, "not in `methods`"),
        (dict(budgets=[20, 9000]), ValueError, "exceeds the number of items"),
        (dict(budgets=[50, 5]), ValueError, "smaller than `first_batch`"),
        (dict(budgets=100), TypeError, "budgets"),
        (dict(random_seed="x"), TypeError, "random_seed"),
    ],
)
def test_bad_input_is_rejected(change, error, match):
    scores, predictions, y = pool()
    kw = dict(y_true=y, methods=["acis"], budgets=[20], trials=2)
    kw.update(change)
    with pytest.raises(error, match=match):
        simulate_fscore(scores, predictions, **kw)


def test_study_result_type(study):
    assert isinstance(study, FScoreStudy)
    assert study.alpha == 0.5 and study.interval_prob == 0.95


def test_simulate_fscore_reports_progress_when_asked():
    scores, predictions, y = pool()
    said = []
    simulate_fscore(scores, predictions, y, methods=["uniform", "top_k"], budgets=[20, 40], trials=2,
                    random_seed=1, progress=said.append)
    assert len(said) == 3 and said[0].startswith("simulate_fscore: 1/4 (method, budget) cells done")
    assert said[-1].endswith("now top_k at budget 40")
    with pytest.raises(TypeError, match="progress"):
        simulate_fscore(scores, predictions, y, methods=["top_k"], budgets=[20], trials=2, progress=1)
