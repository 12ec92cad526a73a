"""Bad calls to the Python API: NaN/inf options refused, messages that never name a private function.

Issue 36, point 3: ``post.metric("precision", threshold=np.nan)`` returned 0.0; an unknown
option's error named the internal ``_prepare_ap()``; a label list mixing "yes" with NaN
reported every empty row as bad.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import bayeval
from bayeval import EvalData, Posterior, metrics
from bayeval.active import ActiveSession, LabelStore, expected_change, select

PRIVATE = re.compile(r"(?<![\w.])_[a-z][a-z0-9_]*\(")  # `_prepare_ap()`, `_check(`...


@pytest.fixture(scope="module")
def post():
    rng = np.random.default_rng(0)
    n = 60
    s = rng.random(n)
    lab = np.full(n, np.nan)
    lab[:20] = s[:20] > 0.5
    d = EvalData(s, labels=lab, predictions=(s > 0.5).astype(int), item_ids=[f"i{j}" for j in range(n)])
    return Posterior.from_probabilities(d, s, draws=50, random_seed=0, check=False)


BAD_CALLS = {
    "threshold nan": lambda p, t: p.metric("precision", threshold=np.nan),
    "threshold -inf": lambda p, t: p.metric("recall", threshold=-np.inf),
    "threshold inf in summary": lambda p, t: p.summary({"x": ("precision", {"threshold": np.inf})}),
    "threshold nan vetted_only": lambda p, t: bayeval.vetted_only(p.data, "f_score", threshold=np.nan),
    "k nan": lambda p, t: p.metric("precision_at_k", k=np.nan),
    "k inf": lambda p, t: p.metric("recall_at_k", k=np.inf),
    "beta nan": lambda p, t: p.metric("f_score", beta=np.nan),
    "beta inf": lambda p, t: metrics.METRICS["f_score"](np.ones((2, 60)), np.ones(60, dtype=int), beta=np.inf),
    "recall nan": lambda p, t: p.metric("precision_at_recall", recall=np.nan),
    "thresholds nan": lambda p, t: p.metric("precision_recall_curve", thresholds=[0.5, np.nan]),
    "hdi_prob nan": lambda p, t: p.summary("average_precision", hdi_prob=np.nan),
    "unknown option": lambda p, t: p.metric("average_precision", foo=1),
    "unknown option summary": lambda p, t: p.summary({"x": ("recall_at_k", {"kk": 2})}),
    "unknown option spec": lambda p, t: metrics.METRICS["roc_auc"](np.ones((2, 60)), np.ones(60), bar=1),
    "unknown option vetted_only": lambda p, t: bayeval.vetted_only(p.data, "roc_auc", foo=1),
    "unknown option select": lambda p, t: select(p, metric="average_precision", size=2, foo=1),
    "unknown option expected_change": lambda p, t: expected_change(p, "average_precision", zz=1),
    "k nan expected_change": lambda p, t: expected_change(p, "precision_at_k", k=np.nan),
    "unknown option session": lambda p, t: ActiveSession(p.data, lambda d: p, store=t / "a.db",
                                                         metric_kwargs={"foo": 1}),
    "nan option session": lambda p, t: ActiveSession(p.data, lambda d: p, store=t / "b.db",
                                                     metric="precision_at_k", metric_kwargs={"k": np.nan}),
    "store timeout inf": lambda p, t: LabelStore(t / "c.db", timeout=np.inf),
    "store typo": lambda p, t: (lambda st: (st.register_items(["a", "b"]), st.add(["c"], [1])))(
        LabelStore(t / "d.db")),
    "labels yes and nan": lambda p, t: EvalData([0.1, 0.2, 0.3, 0.4], labels=["yes", np.nan, 1, np.nan]),
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_call_is_refused_without_private_names(name, post, tmp_path):
    with pytest.raises((ValueError, TypeError)) as exc:
        BAD_CALLS[name](post, tmp_path)
    msg = str(exc.value)
    assert not PRIVATE.search(msg), msg
    assert "_prepare" not in msg


def test_nan_threshold_no_longer_gives_zero(post):
    with pytest.raises(ValueError, match="`threshold` must be a finite score cut-off, got nan"):
        post.metric("precision", threshold=np.nan)


def test_unknown_option_names_the_metric_and_its_options(post):
    with pytest.raises(TypeError) as exc:
        post.metric("recall_at_k", kk=5)
    assert str(exc.value) == ("Metric 'recall_at_k' has no option `kk`; it takes `k`, `zero_division` "
                              "(see bayeval.metrics.recall_at_k). Did you mean `k`?")


def test_a_metric_without_the_option_it_needs_says_which_up_front(post):
    """post.metric("recall_at_k") used to fail with `_prepare_topk() missing 1 required keyword-only argument`."""
    with pytest.raises(TypeError) as exc:
        post.metric("recall_at_k")
    assert str(exc.value) == ("Metric 'recall_at_k' needs the option `k`, and none was given (got no options). "
                              "Pass it with the metric: post.metric('recall_at_k', k=10).")
    with pytest.raises(TypeError, match=r"'precision_at_recall' needs the option `recall`.*\(got \['interpolate'\]\)"
                                        r".*post\.metric\('precision_at_recall', recall=0\.8\)"):
        post.metric("precision_at_recall", interpolate=True)
    for call in (lambda: post.metric("precision_at_k", category=None), lambda: post.summary("precision_at_k"),
                 lambda: bayeval.vetted_only(post.data, "precision_at_k"),
                 lambda: select(post, metric="precision_at_k", size=2)):
        with pytest.raises(TypeError, match=r"'precision_at_k' needs the option `k`"):
            call()
    assert metrics.METRICS["precision_at_k"].required() == ["k"]
    assert metrics.METRICS["average_precision"].required() == []


def test_a_missing_option_is_shown_in_the_form_of_the_call_that_raised(post):
    """`post.summary(["precision_at_k"])` said to pass it as `post.metric('precision_at_k', k=10)`,
    a call that `summary` does not take: the hint shows the entry as the call takes it."""
    from bayeval.report import report

    head = "Metric 'precision_at_k' needs the option `k`, and none was given (got no options). Pass it with the metric: "
    for call, form in [
        (lambda: post.summary(["average_precision", "precision_at_k"]), "post.summary([('precision_at_k', {'k': 10})])"),
        (lambda: post.summary("precision_at_k", category=None), "post.summary([('precision_at_k', {'k': 10})])"),
        (lambda: post.summary({"P@k": "precision_at_k"}), "post.summary({'P@k': ('precision_at_k', {'k': 10})})"),
        (lambda: post.to_inference_data(["precision_at_k"]), "post.to_inference_data([('precision_at_k', {'k': 10})])"),
        (lambda: report(post, title="t", metrics=["precision_at_k"]),
         "report(post, title=..., metrics=[('precision_at_k', {'k': 10})])"),
    ]:
        with pytest.raises(TypeError) as exc:
            call()
        assert str(exc.value) == head + form + "."
    with pytest.raises(TypeError, match=re.escape("post.summary([('precision_at_recall', {'recall': 0.8})])")):
        post.summary([("precision_at_recall", {"interpolate": True})])
    # the form it names works, and so does an option given to every metric
    assert post.summary([("precision_at_k", {"k": 10})]).index.tolist() == ["precision_at_k"]
    assert post.summary(["precision_at_k"], k=10).index.tolist() == ["precision_at_k"]


def test_documented_non_finite_options_still_work(post):
    assert np.isnan(metrics.recall(np.zeros(3), np.zeros(3, dtype=int), zero_division=np.nan))
    curve = post.metric("roc_curve", thresholds=[np.inf, 0.5, -np.inf])  # inf: predict none / all
    assert curve.sizes["threshold"] == 3


def test_a_label_list_mixing_text_and_nan_reports_only_the_bad_row():
    labels = ["yes"] + [np.nan] * 269 + [1.0] * 30  # one bad row among 270 empty ones
    with pytest.raises(ValueError) as exc:
        EvalData(np.linspace(0, 1, 300), labels=labels)
    assert "1 value(s) are other values: position 0: 'yes'." in str(exc.value)
    assert "'nan'" not in str(exc.value)
    d = EvalData(np.linspace(0, 1, 4), labels=["1", np.nan, "0", None])  # empty is "not vetted"
    assert d.n_vetted == 2


def test_vetting_curve_with_an_unknown_estimator_lists_the_valid_ones():
    # it raised xarray's raw KeyError "not all values found in index 'estimator'"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayeval.active import simulate
    from bayeval.plots import vetting_curve

    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, 30)
    data = EvalData(rng.random(30), noisy_labels=truth)
    model = lambda d: Posterior.from_probabilities(d, np.full(30, 0.5), draws=50, random_seed=0)  # noqa: E731
    ds = simulate(data, truth, model, k=5, budget=10, batch_size=5, trials=1, strategies=("random",),
                  random_seed=0)
    with pytest.raises(ValueError, match=r"\['vetted_only', 'naive', 'learned'\], got 'naïve'"):
        vetting_curve(ds, estimators=["naïve"])
    ax = vetting_curve(ds, estimators="naive")  # one name, not its letters
    assert {line.get_label() for line in ax.lines} == {"random + naive"}
    plt.close("all")


def test_range_errors_say_what_arrived_and_how_to_fix_it():
    """recalibrate(post, min_precision=90) said only "must lie in [0, 1], got 90.0" (the command
    line adds "did you mean 0.9?"); from_probabilities(d, logits) did not say what arrived; hard
    predictions given as probabilities were told to map classes to 0/1."""
    rng = np.random.default_rng(0)
    s = rng.random(50)
    d = EvalData(s)
    post = Posterior.from_probabilities(d, s, draws=50, random_seed=0)
    with pytest.raises(ValueError, match=r"got 90\.0\. Did you mean 0\.9 "):
        bayeval.recalibrate(post, min_precision=90)
    with pytest.raises(ValueError, match=r"got -0\.5\.$"):  # no percentage hint below 0
        bayeval.recalibrate(post, min_precision=-0.5)
    logits = np.log(s / (1 - s))
    with pytest.raises(ValueError, match=r"got values from -?\d.* to \d.*\. Log-odds\? Map them with "
                                         r"scipy\.special\.expit"):
        Posterior.from_probabilities(d, logits)
    with pytest.raises(ValueError, match=r"Percentages\? Divide by 100"):
        Posterior.from_probabilities(d, 100 * s)
    with pytest.raises(ValueError, match=r"got 1 NaN or infinite value"):
        Posterior.from_probabilities(d, np.r_[s[:-1], np.nan])
    with pytest.raises(ValueError, match=r"threshold them first, e\.g\. `\(scores >= t\)") as err:
        EvalData(s, predictions=s)
    assert "Map your classes" not in str(err.value)
    with pytest.raises(ValueError, match="Map your classes to 0/1"):  # class codes 1/2 are still classes
        EvalData(s, predictions=rng.integers(1, 3, 50))


def test_unclear_errors_say_how_to_fix_the_call(post):
    """Review of the Python API's errors: each said what was wrong but not what to write instead, or was
    a raw TypeError ("'NoneType' object is not iterable"), or no error at all (an empty table)."""
    with pytest.raises(ValueError) as exc:  # a threshold for every metric, one of which takes none
        post.summary(["average_precision", "precision"], threshold=0.5)
    assert "not to 'average_precision'" in str(exc.value)
    assert 'post.summary(["average_precision", ("precision", {"threshold": 0.5})])' in str(exc.value)
    with pytest.raises(TypeError, match=r"`metrics` must be a metric name, a list of metrics or a dict naming "
                                        r"them .*got NoneType None\. Leave it out for the default\."):
        post.summary(None)
    for empty in ([], {}, ()):
        with pytest.raises(ValueError, match=r"`metrics` is empty: name at least one metric"):
            post.summary(empty)
    with pytest.raises(TypeError, match=r"`metrics` must be .*got int 5"):
        post.to_inference_data(5)
    assert list(post.summary().index) == ["average_precision"]  # left out: the default
    with pytest.raises(TypeError) as exc:  # several thresholds as one
        post.metric("recall", threshold=[0.3, 0.5])
    said = str(exc.value)
    assert said.startswith("`threshold` must be one number, got [0.3, 0.5].")
    assert 'post.summary([("recall", {"threshold": 0.3}), ("recall", {"threshold": 0.5})])' in said
    assert 'post.metric("precision_recall_curve", thresholds=[0.3, 0.5])' in said
    with pytest.raises(TypeError) as exc:
        post.metric("recall", threshold="0.5")
    assert str(exc.value) == "`threshold` must be one number, got '0.5'."  # one value: no advice on several


def test_text_labels_get_a_python_recipe_and_swapped_arguments_are_named():
    s = np.linspace(0.05, 0.95, 6)
    with pytest.raises(ValueError) as exc:
        EvalData(s, np.array(["yes", "no", None, "yes", "no", None], dtype=object))
    said = str(exc.value)
    assert said.startswith("`labels` must hold 1 (positive), 0 (negative) or NaN/None (not vetted)")
    assert "4 value(s) are other values: position 0: 'yes', position 1: 'no', position 3: 'yes'" in said
    assert 'np.where(l == "yes", 1.0, np.where(l == "no", 0.0, np.nan))' in said
    assert "leave a cell empty" not in said  # a file's words, not a Python array's
    with pytest.raises(ValueError, match=r"`predictions` must hold 1 or 0 for every item.*fix any -1 left"):
        EvalData(s, predictions=["yes", "no", "yes", "no", "yes", "no"])
    # EvalData(labels, scores): the labels' NaN were refused as NaN scores, with no word of the order
    lab = np.full(560, np.nan)
    lab[:40] = np.r_[np.ones(10), np.zeros(30)]
    scores = np.random.default_rng(0).random(560)
    with pytest.raises(ValueError) as exc:
        EvalData(lab, scores)
    said = str(exc.value)
    assert said.startswith("`scores` must be finite, but 520 value(s) are NaN")
    assert "The arguments look swapped" in said and "EvalData(scores, labels)" in said
    with pytest.raises(ValueError) as exc:  # NaN scores, but the labels have NaN too: no such guess
        EvalData(lab, lab)
    assert "swapped" not in str(exc.value)
