"""True accuracy under annotator error: the closed forms (bounds, independence formula)
and the generative model (likelihood against a brute-force sum, agreement with a
Dawid--Skene EM reference, coverage on simulated data with known truth, what gold
labels buy)."""

import matplotlib

matplotlib.use("Agg")

import arviz as az  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytensor  # noqa: E402
import pytest  # noqa: E402
from _figures import assert_axis_labels_inside  # noqa: E402
from scipy.special import ndtr, ndtri  # noqa: E402

from bayeval import EvalData, Posterior  # noqa: E402
from bayeval.annotators import (  # noqa: E402
    AnnotationData,
    AnnotatorError,
    AnnotatorPosterior,
    CategoricalPosterior,
)
from bayeval.annotators._checks import observe as _observe  # noqa: E402
from bayeval.annotators._likelihood import ClassProbability as _ClassProbability  # noqa: E402
from bayeval.annotators.bounds import plot_true_accuracy, true_accuracy_bounds  # noqa: E402
from bayeval.core.summary import hdi  # noqa: E402

FIT = dict(draws=200, tune=200, chains=2, progressbar=False, warn=False)
#: for tests that only read a built graph's values or shapes (not the fits' compiled code):
#: PyTensor's Python implementations, with no C module to compile (several CPU s each on a
#: fresh compile cache)
FAST = "FAST_COMPILE"


# ----------------------------------------------------------------------------- helpers


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _simulate(seed, n, *, model, annotators, prevalence=(0.6, 0.4), missing=0.0):
    """Truth and ratings; ``model`` and each annotator are (skill, loading) pairs.

    Rater r is right with probability logistic(skill - loading * d_i), d_i ~ N(0, 1);
    when wrong it picks a wrong class uniformly.
    """
    rng = np.random.default_rng(seed)
    k = len(prevalence)
    z = rng.choice(k, size=n, p=prevalence)
    d = rng.normal(size=n)

    def rate(skill, loading):
        right = rng.random(n) < _sigmoid(skill - loading * d)
        return np.where(right, z, (z + rng.integers(1, k, size=n)) % k)

    pred = rate(*model)
    ann = np.column_stack([rate(*a) for a in annotators]).astype(float)
    ann[rng.random(ann.shape) < missing] = np.nan
    return z, pred, ann


def dawid_skene(predictions, annotations, n_classes, *, gold=None, n_iter=2000, tol=1e-10):
    """Dawid--Skene EM with the classifier as one more rater (reference implementation).

    Returns class prevalences, confusion matrices ``theta[r, true, observed]`` (rater 0
    is the classifier) and each item's posterior class probabilities.
    """
    obs = np.column_stack([predictions, annotations])
    onehot = np.stack([obs == c for c in range(n_classes)], axis=-1).astype(float)  # NaN: all 0
    known = np.zeros(len(obs), bool) if gold is None else ~np.isnan(gold)
    post = onehot[:, 1:].sum(axis=1) + 1e-3  # start from the annotators' votes
    post /= post.sum(axis=1, keepdims=True)
    last = -np.inf
    for _ in range(n_iter):
        if known.any():
            post[known] = np.eye(n_classes)[gold[known].astype(int)]
        prev = post.mean(axis=0)
        theta = np.einsum("ik,irl->rkl", post, onehot) + 1e-6
        theta /= theta.sum(axis=2, keepdims=True)
        log_post = np.log(prev) + np.einsum("irl,rkl->ik", onehot, np.log(theta))
        top = log_post.max(axis=1, keepdims=True)
        loglik = float((top[:, 0] + np.log(np.exp(log_post - top).sum(axis=1))).sum())
        post = np.exp(log_post - top)
        post /= post.sum(axis=1, keepdims=True)
        if loglik - last < tol:
            break
        last = loglik
    if known.any():
        post[known] = np.eye(n_classes)[gold[known].astype(int)]
    return prev, theta, post


def _brute_force(params, pred, ann, gold, n_classes, nodes, weights):
    """log-likelihood and P(z_i = k | obs) by explicit loops over items, classes, nodes, raters.

    Rater r is right with probability Phi((probit(a[r, k]) - rho[r] d) / sqrt(1 - rho[r]^2)).
    """
    n, k = len(pred), n_classes
    obs = np.column_stack([pred, ann])
    acc = np.vstack([params["model_class_accuracy"], params["annotator_class_accuracy"]])
    rho = np.r_[0.95 * (2 * params["model_difficulty_u"] - 1), 0.95 * params["annotator_difficulty_u"]]
    total, post = 0.0, np.zeros((n, k))
    for i in range(n):
        for c in range(k):
            if not np.isnan(gold[i]) and gold[i] != c:
                continue
            for node, w in zip(nodes, weights, strict=True):
                p = params["prevalence"][c] * w
                for r in range(obs.shape[1]):
                    if np.isnan(obs[i, r]):
                        continue
                    right = ndtr((ndtri(acc[r, c]) - rho[r] * node) / np.sqrt(1 - rho[r] ** 2))
                    if obs[i, r] == c:
                        p *= right
                    else:
                        others = [o for o in range(k) if o != c]
                        pick = params["wrong_class"][r, c, others.index(obs[i, r])] if k > 2 else 1.0
                        p *= (1 - right) * pick
                post[i, c] += p
        total += np.log(post[i].sum())
        post[i] /= post[i].sum()
    return total, post


def _random_params(rng, k, n_ann):
    """Free parameters of AnnotatorError(k) at a random point."""
    params = {
        "prevalence": rng.dirichlet(np.ones(k)),
        "model_class_accuracy": rng.uniform(0.55, 0.95, k),
        "annotator_class_accuracy": rng.uniform(0.6, 0.99, (n_ann, k)),
        "model_difficulty_u": rng.uniform(0.05, 0.95),
        "annotator_difficulty_u": rng.uniform(0.05, 0.95, n_ann),
    }
    if k > 2:
        params["wrong_class"] = rng.dirichlet(np.ones(k - 1), size=(1 + n_ann, k))
    return params


def _with_deterministics(model, params):
    """params plus the model's deterministics at that point (one draw: leading axis 1)."""
    names = ["rater_skill", "rater_loading", "model_accuracy", "annotator_accuracy", "error_correlation"]
    fn = pytensor.function([model[n] for n in params], [model[n] for n in names], on_unused_input="ignore", mode="FAST_COMPILE")
    out = dict(params, **dict(zip(names, fn(*params.values()), strict=True)))
    return {n: np.asarray(v)[None] for n, v in out.items()}


# ------------------------------------------------------------------------ closed forms


def test_article_example_exactly():
    b = true_accuracy_bounds(0.90, 0.96)
    assert b.lower == pytest.approx(0.86, abs=1e-12)
    assert b.upper == pytest.approx(0.94, abs=1e-12)
    # (0.90 + 0.96 - 1) / (2 * 0.96 - 1) = 0.86 / 0.92 = 0.93478..., the article's "93.5%"
    assert b.independent == pytest.approx(0.86 / 0.92, abs=1e-12)
    assert round(b.independent, 3) == 0.935
    assert isinstance(b.lower, float) and b == (b.lower, b.independent, b.upper)


def test_multiclass_formula_reduces_to_binary_and_is_vectorized():
    a_m, a_gt = np.meshgrid(np.linspace(0.3, 0.95, 14), np.linspace(0.55, 1.0, 10))
    binary = (a_m + a_gt - 1) / (2 * a_gt - 1)
    got = true_accuracy_bounds(a_m, a_gt, n_classes=2).independent
    valid = (binary >= 0) & (binary <= 1)
    np.testing.assert_allclose(got[valid], binary[valid], rtol=0, atol=1e-12)
    assert np.isnan(got[~valid]).all() and (~valid).any()
    # array result equals the scalar results, for K > 2 as well
    vec = true_accuracy_bounds(a_m, a_gt, n_classes=5)
    for idx in [(0, 0), (3, 7), (9, 13)]:
        one = true_accuracy_bounds(float(a_m[idx]), float(a_gt[idx]), n_classes=5)
        for field in range(3):
            np.testing.assert_equal(vec[field][idx], one[field])
    # the bounds are the article's, clipped to [0, 1]
    np.testing.assert_allclose(vec.lower, np.clip(a_m - (1 - a_gt), 0, 1))
    np.testing.assert_allclose(vec.upper, np.clip(a_m + (1 - a_gt), 0, 1))


def test_bounds_pair_series_by_label_and_keep_the_labels():
    """Series in another order are paired by label (not position) and the bounds are Series on
    the first one's labels; other labels, or a plain array beside a reordered Series, are
    refused; a number applies to every item."""
    import pandas as pd

    a_m = pd.Series([0.9, 0.7], index=["cats", "dogs"])
    a_gt = pd.Series([0.8, 0.99], index=["dogs", "cats"])
    b = true_accuracy_bounds(a_m, a_gt)
    ref = true_accuracy_bounds(np.array([0.9, 0.7]), np.array([0.99, 0.8]))
    for got, want in zip(b, ref, strict=True):
        assert isinstance(got, pd.Series) and got.index.tolist() == ["cats", "dogs"]
        np.testing.assert_array_equal(got.to_numpy(), want)
    assert b.lower.round(2).tolist() == [0.89, 0.5]
    counts = pd.Series([20, 27], index=["dogs", "cats"])
    gi = true_accuracy_bounds(a_m, counts, n_gold=30)
    gref = true_accuracy_bounds(np.array([0.9, 0.7]), np.array([27, 20]), n_gold=30)
    np.testing.assert_array_equal(gi.lower.to_numpy(), gref.lower)
    np.testing.assert_array_equal(gi.annotator_accuracy[0].to_numpy(), gref.annotator_accuracy[0])
    assert gi.independent_interval[1].index.tolist() == ["cats", "dogs"]
    one = true_accuracy_bounds(a_m, 0.9)
    np.testing.assert_array_equal(one.upper.to_numpy(), true_accuracy_bounds([0.9, 0.7], 0.9).upper)
    with pytest.raises(ValueError, match=r"annotator_accuracy\.loc\[model_accuracy\.index\]"):
        true_accuracy_bounds(a_m, a_gt.rename(index={"cats": "cows"}))
    with pytest.raises(ValueError, match="plain array"):
        true_accuracy_bounds(a_m, a_gt, n_gold=np.array([30, 40]))
    assert true_accuracy_bounds(0.9, 0.96) == pytest.approx((0.86, 0.86 / 0.92, 0.94))


@pytest.mark.parametrize("k", [2, 3, 6])
def test_independence_formula_matches_simulation(k):
    rng = np.random.default_rng(k)
    n, a_true, a_gt = 400_000, 0.8, 0.9
    z = rng.integers(0, k, n)
    model_right = rng.random(n) < a_true
    ann_right = rng.random(n) < a_gt  # independent of the model's errors
    pred = np.where(model_right, z, (z + rng.integers(1, k, n)) % k)
    ann = np.where(ann_right, z, (z + rng.integers(1, k, n)) % k)
    measured = (pred == ann).mean()
    realized_true, realized_gt = (pred == z).mean(), (ann == z).mean()
    b = true_accuracy_bounds(measured, realized_gt, n_classes=k)
    # delta-method sd of the estimate is about sqrt(measured (1 - measured) / n) / (A_gt - ...)
    sd = np.sqrt(measured * (1 - measured) / n) / (realized_gt - (1 - realized_gt) / (k - 1))
    assert abs(b.independent - realized_true) < 4 * sd + 1e-4
    assert b.lower <= realized_true <= b.upper
    if k > 2:  # the binary formula would be wrong here
        binary = true_accuracy_bounds(measured, realized_gt, n_classes=2).independent
        assert abs(binary - realized_true) > 8 * sd


def test_bounds_are_attained_by_overlapping_and_disjoint_errors():
    n = 1000
    z = np.zeros(n, int)
    ann = z.copy()
    ann[:40] = 1  # annotator 96% right
    same = z.copy()
    same[:40] = 1  # classifier wrong on the same items, the same way
    same[40:100] = 1  # and on 60 more
    disjoint = z.copy()
    disjoint[40:140] = 1  # classifier wrong only where the annotator is right
    for pred, field in [(same, "lower"), (disjoint, "upper")]:
        measured = (pred == ann).mean()
        b = true_accuracy_bounds(measured, (ann == z).mean())
        assert getattr(b, field) == pytest.approx((pred == z).mean(), abs=1e-12)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((1.2, 0.9), {}, "model_accuracy.*in \\[0, 1\\]"),
        ((0.9, 96), {}, "not percentages"),
        ((0.9, np.nan), {}, "annotator_accuracy"),
        ((-0.1, 0.9), {}, "model_accuracy"),
        ((0.9, 0.9), {"n_classes": 1}, "n_classes"),
        (([0.9, 0.8], [0.9, 0.8, 0.7]), {}, "broadcast"),
        ((0.9, 0.9), {"n_gold": 30}, "count.*27 of 30"),
        ((0.9, 31), {"n_gold": 30}, "0..n_gold"),
        ((0.9, 20.5), {"n_gold": 30}, "whole number"),
        ((0.9, 20), {"n_gold": 0}, "n_gold"),
        ((0.9, 20), {"n_gold": 30, "prob": 1.0}, "prob"),
        (([0.9, 0.8], [20, 21, 22]), {"n_gold": 30}, "broadcast"),
    ],
)
def test_bounds_errors(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        true_accuracy_bounds(*args, **kwargs)


def test_bounds_type_errors():
    with pytest.raises(TypeError, match="n_classes"):
        true_accuracy_bounds(0.9, 0.9, n_classes=2.5)
    with pytest.raises(TypeError, match="model_accuracy"):
        true_accuracy_bounds("0.9", 0.9)


def test_chance_level_annotators_give_bounds_and_an_undefined_independent_value():
    b = true_accuracy_bounds(0.62, 0.5)
    assert (b.lower, b.upper) == pytest.approx((0.12, 1.0))
    assert np.isnan(b.independent) and b.independent_defined is False
    vec = true_accuracy_bounds(0.4, [0.9, 0.5, 0.25], n_classes=4)
    assert vec.independent_defined.tolist() == [True, True, False]
    np.testing.assert_allclose(vec.lower, [0.3, 0.0, 0.0])


def test_bounds_never_return_negative_zero():
    b = true_accuracy_bounds(0.6, 0.4)  # (0.6 + 0.4 - 1) / (0.8 - 1) = 0 / -0.2
    assert b.independent == 0.0 and not np.signbit(b.independent)
    vec = true_accuracy_bounds([0.6, 0.3], [0.4, 0.7])
    for field in vec:
        assert not np.signbit(np.asarray(field)).any()


def test_bounds_with_a_measured_annotator_accuracy():
    from scipy.stats import beta

    b = true_accuracy_bounds(0.85, 27, n_gold=30, prob=0.9)
    a_lo, a_hi = beta(28, 4).ppf([0.05, 0.95])
    assert b.annotator_accuracy == pytest.approx((a_lo, a_hi))
    assert b.lower == pytest.approx(0.85 - (1 - a_lo)) and b.upper == 1.0
    indep = [(0.85 + a - 1) / (2 * a - 1) for a in (a_lo, a_hi)]
    assert b.independent_interval == pytest.approx((min(indep), min(1.0, max(indep))))
    assert b.independent == pytest.approx((0.85 + beta(28, 4).median() - 1) / (2 * beta(28, 4).median() - 1))
    # wider than the bounds that treat 27/30 as exact, and a larger n_gold narrows it
    exact = true_accuracy_bounds(0.85, 0.9)
    more = true_accuracy_bounds(0.85, 270, n_gold=300)
    assert b.lower < more.lower < exact.lower
    # an annotator accuracy that may be at chance level: bounds, no independent interval
    weak = true_accuracy_bounds(0.7, 16, n_gold=30)
    assert not weak.independent_defined and np.isfinite(weak.lower)
    # vectorized like the exact version
    vec = true_accuracy_bounds([0.85, 0.7], [27, 16], n_gold=30)
    assert vec.independent_defined.tolist() == [True, False]
    assert vec.lower[0] == pytest.approx(b.lower)


def test_measured_bounds_cover_the_true_bounds_at_least_at_the_nominal_rate():
    # repeated gold samples of 30 items from annotators 85% right: the lower end lies
    # below the lower bound at the true annotator accuracy in >= 90% of the samples (one
    # tail of a 90% interval, so 95% nominally; the Beta(1, 1) prior makes it approximate)
    rng = np.random.default_rng(3)
    counts = rng.binomial(30, 0.85, size=4000)
    lower = true_accuracy_bounds(0.8, counts, n_gold=30).lower
    hit = (lower <= 0.8 - 0.15 + 1e-12).mean()
    assert hit >= 0.9, hit


def test_independent_value_is_nan_when_independence_is_impossible():
    # agreeing with 96%-right labels 99% of the time cannot happen with independent errors
    assert np.isnan(true_accuracy_bounds(0.99, 0.96).independent)
    assert true_accuracy_bounds(0.96, 0.96).independent == pytest.approx(1.0)


def test_plot_marks_measured_bounds_and_independence():
    rng = np.random.default_rng(0)
    draws = rng.normal(0.91, 0.01, 500)
    ax = plot_true_accuracy(draws, measured=0.90, annotator_accuracy=0.96)
    xs = {round(float(line.get_xdata()[0]), 6) for line in ax.lines if len(line.get_xdata()) == 2}
    assert {0.9, round(0.86 / 0.92, 6)} <= xs
    span = ax.patches[0]  # the shaded band between the bounds
    xs_band = span.get_patch_transform().transform(span.get_path().vertices)[:, 0]
    np.testing.assert_allclose([xs_band.min(), xs_band.max()], [0.86, 0.94])
    plt.close(ax.figure)
    # a Posterior works too (its accuracy draws are plotted) and an axes can be given
    data = EvalData([0.0, 1.0, 1.0, 0.0], predictions=[0, 1, 1, 0])
    post = Posterior.from_probabilities(data, [0.1, 0.9, 0.8, 0.3], draws=200, random_seed=0)
    fig, ax0 = plt.subplots()
    assert plot_true_accuracy(post, measured=0.75, annotator_accuracy=0.9, ax=ax0) is ax0
    plt.close(fig)
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        plot_true_accuracy([0.5, 1.5], measured=0.9, annotator_accuracy=0.9)


def test_plot_error_names_the_measured_argument():
    draws = np.full(50, 0.9)
    # the error named `model_accuracy`, an argument of another function
    with pytest.raises(ValueError, match=r"`measured` must be an accuracy .*\(e.g. nan\)\. NaN") as err:
        plot_true_accuracy(draws, measured=float("nan"), annotator_accuracy=0.96)
    assert "model_accuracy" not in str(err.value)
    with pytest.raises(ValueError, match="`measured` must be one accuracy"):
        plot_true_accuracy(draws, measured=[0.8, 0.9], annotator_accuracy=0.96)
    # several annotator accuracies: numpy's "truth value of an array is ambiguous" before
    with pytest.raises(ValueError, match=r"`annotator_accuracy` must be one accuracy .*2 values \[0.9, 0.95\]"):
        plot_true_accuracy(draws, measured=0.88, annotator_accuracy=[0.9, 0.95])
    plt.close("all")
    ax = plot_true_accuracy(draws, measured=0.88, annotator_accuracy=[0.9])  # one value in a list is one
    assert f"independent {true_accuracy_bounds(0.88, 0.9).independent:.3g}" in [
        t.get_text() for t in ax.get_legend().get_texts()]
    plt.close("all")


def test_plot_error_counts_the_non_finite_draws():
    # it said "got values from 0.9 to 0.9", hiding the NaN
    with pytest.raises(ValueError, match=r"finite.*1 of 2 are not \(1 NaN, 0 infinite\)"):
        plot_true_accuracy([0.9, np.nan], measured=0.9, annotator_accuracy=0.96)
    with pytest.raises(ValueError, match=r"2 of 3 are not \(1 NaN, 1 infinite\)"):
        plot_true_accuracy([0.9, np.nan, np.inf], measured=0.9, annotator_accuracy=0.96)
    with pytest.raises(ValueError, match=r"1 of 2 do not .*percentages"):
        plot_true_accuracy([0.9, 90.0], measured=0.9, annotator_accuracy=0.96)
    plt.close("all")


def test_plot_of_lattice_draws_has_no_false_dip():
    # the accuracy of 300 items moves in steps of 1/300: bins that held one or two lattice
    # points by turns drew a false dip at the mode (heights 20.1 24.9 10.3 26.1 21.9)
    n = 300
    draws = np.random.default_rng(0).binomial(n, 0.89, size=400) / n
    ax = plot_true_accuracy(draws, measured=0.873, annotator_accuracy=0.96)
    (bars,) = ax.containers
    lefts = np.array([b.get_x() for b in bars])
    widths = np.array([b.get_width() for b in bars])
    counts = np.array([b.get_height() for b in bars]) * draws.size * widths
    lattice = np.arange(n + 1) / n
    per_bin = [np.sum((lattice >= a) & (lattice < a + w)) for a, w in zip(lefts, widths, strict=True)]
    assert len(set(per_bin)) == 1, per_bin  # each bin holds as many lattice points
    np.testing.assert_allclose(counts.sum(), draws.size)
    for i in range(1, len(counts) - 1):  # unimodal up to Monte Carlo noise
        shoulder = min(counts[:i].max(), counts[i + 1:].max())
        assert counts[i] > shoulder - 3 * np.sqrt(shoulder), (i, np.round(counts, 1))
    plt.close(ax.figure)


def test_plot_keeps_its_axis_labels_inside_the_figure():
    # the new figure had no layout: "true accuracy" was cut off at the bottom when saved
    draws = np.random.default_rng(0).normal(0.91, 0.01, 400)
    ax = plot_true_accuracy(draws, measured=0.90, annotator_accuracy=0.96)
    assert_axis_labels_inside(ax)
    plt.close(ax.figure)
    fig, ax0 = plt.subplots()  # a figure passed in keeps its own layout
    plot_true_accuracy(draws, measured=0.90, annotator_accuracy=0.96, ax=ax0)
    assert fig.get_layout_engine() is None
    plt.close(fig)


def test_plot_of_a_fit_with_gold_items_shows_the_reported_interval():
    z, pred, ann, gold = _shared_errors(6, n=200, n_gold=40)
    spec = AnnotatorError()
    good = _fake_idata(ndtri([[0.85, 0.85], [0.9, 0.9]]), [0.5, 0.5], [0.5, 0.5], draws=50)
    post = spec._wrap(_observe(pred, ann, gold, 2), good, pred.astype(float), 1)
    g = post.guarded_accuracy()
    ax = plot_true_accuracy(post, measured=float((pred == ann).mean()), annotator_accuracy=0.9)
    bars = {c.get_label(): c.get_segments()[0][:, 0] for c in ax.collections
            if c.get_label().startswith(("posterior", "reported"))}
    assert len(bars) == 2
    (rep,) = [v for k, v in bars.items() if k.startswith("reported 90% (guarded)")]
    (pst,) = [v for k, v in bars.items() if k.startswith("posterior 90%")]
    np.testing.assert_allclose(rep, [g.lower, g.upper])
    np.testing.assert_allclose(pst, [g.posterior_lower, g.posterior_upper])
    lo, hi = ax.get_xlim()
    assert lo < g.lower and hi > g.upper  # the whole reported interval is in view
    plt.close(ax.figure)
    # a posterior without the fit's annotations (no identified set): summary reports the
    # posterior's interval, so no bars (a fit without gold items: test_annotator_identified.py)
    ax = plot_true_accuracy(spec._wrap(_observe(pred, ann, None, 2), good, pred.astype(float), 1),
                            measured=0.8, annotator_accuracy=0.9)
    assert not [c for c in ax.collections if c.get_label().startswith(("posterior ", "reported"))]
    plt.close(ax.figure)


# ------------------------------------------------------------- the model without sampling


@pytest.mark.parametrize(("k", "n_ann", "independent"), [(2, 1, False), (2, 3, False), (3, 2, False), (3, 2, True)])
def test_likelihood_and_class_probabilities_equal_brute_force(k, n_ann, independent):
    rng = np.random.default_rng(k + n_ann)
    n = 40
    pred = rng.integers(0, k, n)
    ann = rng.integers(0, k, (n, n_ann)).astype(float)
    ann[rng.random(ann.shape) < 0.3] = np.nan
    gold = np.where(rng.random(n) < 0.25, rng.integers(0, k, n), np.nan)
    spec = AnnotatorError(k, n_nodes=5, independent=independent)
    model = spec.build(AnnotationData(pred, ann, gold=gold))
    params = _random_params(rng, k, n_ann)
    if independent:
        nodes, weights = [0.0], [1.0]
        params["model_difficulty_u"], params["annotator_difficulty_u"] = 0.5, np.zeros(n_ann)
        free = {n: v for n, v in params.items() if "difficulty" not in n}
    else:
        nodes, weights = np.polynomial.hermite_e.hermegauss(5)
        weights = weights / weights.sum()
        free = params
    expected, expected_post = _brute_force(params, pred, ann, gold, k, nodes, weights)
    loglik = pytensor.function([model[n] for n in free], model.potentials[0], on_unused_input="ignore", mode="FAST_COMPILE")
    assert float(loglik(*free.values())) == pytest.approx(expected, rel=1e-7)  # probit in C: ~1e-9
    probs = _ClassProbability(spec, _observe(pred, ann, gold, k))(_with_deterministics(model, free))
    np.testing.assert_allclose(probs[0], expected_post, atol=1e-8)
    assert np.all(probs[0][~np.isnan(gold), gold[~np.isnan(gold)].astype(int)] == 1)


def test_probit_is_scipys_ndtri_compiled_to_c_with_its_gradient():
    """The model's probit runs in C (PyTensor's erfinv ran as a Python call on every gradient)
    and equals SciPy's ndtri from the tails to the centre, where 2p - 1 would lose digits."""
    import pytensor.tensor as pt
    from pytensor.gradient import verify_grad

    from bayeval.annotators._probit import probit

    rng = np.random.default_rng(0)
    p = np.concatenate([
        rng.uniform(0, 1, 20000), 10.0 ** rng.uniform(-300, -1, 5000), 1 - 10.0 ** rng.uniform(-15, -1, 5000),
        0.5 + rng.uniform(-1e-12, 1e-12, 100), [0.25, 0.75, np.nextafter(0.5, 0), np.nextafter(0.5, 1)]])
    x = pt.dvector("x")
    f = pytensor.function([x], probit(x))
    assert all(hasattr(t, "cthunk") for t in f.vm.thunks)
    np.testing.assert_allclose(f(p), ndtri(p), rtol=1e-14, atol=0)
    np.testing.assert_array_equal(f(np.array([0.0, 1.0, 0.5, -0.1, 1.1, np.nan])), [-np.inf, np.inf, 0, *[np.nan] * 3])
    verify_grad(probit, [rng.uniform(0.001, 0.999, 30)], rng=rng)
    # the model's log density: every step in C (the gradient adds the op's own, above)
    model = AnnotatorError().build(AnnotationData(rng.integers(0, 2, 30), rng.integers(0, 2, (30, 2)).astype(float)))
    fn = model.compile_logp().f
    python_steps = [str(n.op) for n, t in zip(fn.maker.fgraph.toposort(), fn.vm.thunks) if not hasattr(t, "cthunk")]
    assert python_steps == []


def test_reported_accuracies_match_the_accuracy_parameters():
    """The population accuracies (on the quadrature nodes) equal prevalence-weighted a[r, k]."""
    rng = np.random.default_rng(0)
    pred, ann = rng.integers(0, 2, 50), rng.integers(0, 2, (50, 2)).astype(float)
    model = AnnotatorError().build(AnnotationData(pred, ann))
    for _ in range(5):
        params = _random_params(rng, 2, 2)
        det = _with_deterministics(model, params)
        prev = params["prevalence"]
        nominal = np.r_[prev @ params["model_class_accuracy"], params["annotator_class_accuracy"] @ prev]
        got = np.r_[det["model_accuracy"][0], det["annotator_accuracy"][0]]
        np.testing.assert_allclose(got, nominal, atol=0.01)


def test_missing_annotations_are_skipped_not_read_as_a_class():
    rng = np.random.default_rng(3)
    pred = np.array([1, 0, 1, 1])
    ann = np.array([[1, np.nan], [0, 1], [np.nan, 0], [1, 1]])
    spec = AnnotatorError()
    params = _random_params(rng, 2, 2)

    def probs(p, a, prm):
        model = spec.build(AnnotationData(p, a))
        return _ClassProbability(spec, _observe(p, a, None, 2))(_with_deterministics(model, prm))

    full = probs(pred, ann, params)
    # an item rated by annotator 0 only has the posterior of a one-annotator item
    one = dict(params, annotator_class_accuracy=params["annotator_class_accuracy"][:1],
               annotator_difficulty_u=params["annotator_difficulty_u"][:1])
    np.testing.assert_allclose(full[0, 0], probs(pred[:1], ann[:1, :1], one)[0, 0], atol=1e-12)
    assert not np.allclose(full[0, 0], probs(pred, np.nan_to_num(ann), params)[0, 0])


@pytest.mark.parametrize(
    ("pred", "ann", "gold", "k", "error", "match"),
    [
        ([0, 1, np.nan], [0, 1, 1], None, 2, ValueError, "predictions.*NaN"),
        ([0, 1, 3], [0, 1, 1], None, 2, ValueError, "n_classes=4"),
        ([0, 1, 1], [0, 1, 0.5], None, 2, ValueError, "whole class indices"),
        ([0, 1, 1], [[0, 1, 1], [1, 1, 0]], None, 2, ValueError, "transposed"),
        ([0, 1, 1], [[0, np.nan], [1, np.nan], [1, np.nan]], None, 2, ValueError, "column.*\\[1\\].*all NaN"),
        ([0, 1, 1], [0, 1], None, 2, ValueError, "2 row"),
        ([0, 1, 1], [0, 1, 1], [0, 2, np.nan], 2, ValueError, "gold"),
        ([0, 1, 1], [0, 1, 1], [0, 1], 2, ValueError, "gold"),
        ([0, 1, 1], ["cat", "dog", "dog"], None, 2, TypeError, "Map class names"),
        ([[0, 1]], [0, 1], None, 2, ValueError, "1-D"),
        ([], [], None, 2, ValueError, "empty"),
        ([0, 1, 1], [0, 1, -1], None, 2, ValueError, "outside 0..1.*use NaN"),
        ([0, 1, 1], [0, 1, 1], [0, -1, -1], 2, ValueError, "gold.*NaN"),
        ([0, 1, -1], [0, 1, 1], None, 2, ValueError, "-1 is not a class"),
        ([1, 2, 2], [1, 2, 1], None, 2, ValueError, "coded 1..2: shift them to 0..1"),
        ([1, 2, 3], [1, 3, 1], None, 3, ValueError, "coded 1..3: shift them to 0..2"),
    ],
)
def test_input_errors(pred, ann, gold, k, error, match):
    with pytest.raises(error, match=match):
        AnnotatorError(k).build(AnnotationData(pred, ann, gold=gold))


def test_an_annotator_who_labelled_nothing_is_named_by_column():
    import pandas as pd

    ann = pd.DataFrame({"ann1": [0, 1, 1], "nobody": [np.nan] * 3})
    with pytest.raises(ValueError, match=r"column\(s\) \['nobody'\] hold no label at all"):
        AnnotatorError(2).build(AnnotationData([0, 1, 1], ann))


def test_constructor_errors():
    with pytest.raises(ValueError, match="n_classes"):
        AnnotatorError(1)
    with pytest.raises(ValueError, match="> 0"):
        AnnotatorError(model_difficulty=(1.0, 0.0))
    with pytest.raises(ValueError, match="2 finite"):
        AnnotatorError(annotator_accuracy=0.96)
    with pytest.raises(TypeError, match="independent"):
        AnnotatorError(independent="yes")


def test_categorical_label_draws_follow_probabilities_keep_gold_and_do_not_depend_on_chunks():
    rng = np.random.default_rng(0)
    n, k = 30, 4
    p = rng.dirichlet(np.ones(k), size=n)
    gold = np.full(n, np.nan)
    gold[:5] = [0, 1, 2, 3, 3]
    idata = az.from_dict(posterior={"x": np.zeros((2, 2000))})
    post = CategoricalPosterior(rng.integers(0, k, n), idata, lambda params: p, gold=gold, n_classes=k, random_seed=1)
    z = np.concatenate([c.values.reshape(-1, n) for c in post.label_draws(chunk_size=333)])
    z_other = np.concatenate([c.values.reshape(-1, n) for c in post.label_draws()])
    np.testing.assert_array_equal(z, z_other)
    assert (z[:, :5] == gold[:5]).all()
    freq = np.stack([(z[:, 5:] == c).mean(axis=0) for c in range(k)], axis=1)
    sd = np.sqrt(p[5:] * (1 - p[5:]) / z.shape[0])
    assert np.all(np.abs(freq - p[5:]) < 4.5 * sd + 1e-3)
    # metrics equal a direct computation from the draws
    acc = post.metric("accuracy").values.reshape(-1)
    np.testing.assert_allclose(acc, (z == post.predictions).mean(axis=1))
    rec = post.metric("recall").values.reshape(-1, k)
    for c in range(k):
        true_c = z == c
        expect = np.where(true_c.sum(1) > 0, (true_c & (post.predictions == c)).sum(1) / np.maximum(true_c.sum(1), 1), 0)
        np.testing.assert_allclose(rec[:, c], expect)
    prob = post.item_probability()
    np.testing.assert_allclose(prob.values[5:], p[5:])
    assert prob.dims == ("item", "class")


# ----------------------------------------------------------------------- sampled fits


@pytest.fixture(scope="module")
def independent_fit():
    """Independent errors (no difficulty effect), three annotators with missing labels."""
    z, pred, ann = _simulate(
        11, 500, model=(2.0, 0.0), annotators=[(1.5, 0.0), (2.0, 0.0), (2.5, 0.0)], missing=0.25
    )
    post = AnnotatorError().fit(AnnotationData(pred, ann), random_seed=5, **FIT)
    return z, pred, ann, post


def test_agrees_with_dawid_skene_em_when_errors_are_independent(independent_fit):
    z, pred, ann, post = independent_fit
    prev, theta, item_post = dawid_skene(pred, ann, 2)
    ds_acc = np.array([(prev * np.diag(t)).sum() for t in theta])  # rater 0 = classifier
    par = post.idata.posterior
    bayes = np.r_[par["model_accuracy"].mean().item(), par["annotator_accuracy"].mean(("chain", "draw")).values]
    sds = np.r_[par["model_accuracy"].std().item(), par["annotator_accuracy"].std(("chain", "draw")).values]
    np.testing.assert_array_less(np.abs(bayes - ds_acc), 2 * sds)
    # the true accuracy on these items: DS's expected sample accuracy vs the label draws
    acc = post.metric("accuracy")
    ds_sample = item_post[np.arange(len(pred)), pred].mean()
    assert abs(float(acc.mean()) - ds_sample) < 2 * float(acc.std())
    # and both are near the truth (the reference itself is sound)
    assert abs(ds_sample - (pred == z).mean()) < 0.03
    # errors independent given the class (the classifier's loading is 0 in the
    # simulation, so the population error correlation is exactly 0): 0 lies inside the
    # posterior's central 95% for every annotator, and the prior's pull is modest
    corr = par["error_correlation"]
    lo, hi = corr.quantile([0.025, 0.975], ("chain", "draw")).values
    assert np.all(lo <= 0) and np.all(hi >= 0), (lo, hi)
    assert np.all(corr.mean(("chain", "draw")).values < 0.2)


def test_summary_and_population(independent_fit):
    _, pred, _, post = independent_fit
    table = post.summary()
    assert {"model_accuracy", "true_accuracy", "error_correlation[annotator=0]", "annotator_accuracy[annotator=2]"} <= set(table.index)
    np.testing.assert_allclose(post.population("accuracy").values, post.idata.posterior["model_accuracy"].values)
    assert post.population("recall").dims == ("chain", "draw")
    assert post.data.predictions.tolist() == pred.tolist()
    assert post.diagnostics()["r_hat"].max() < 1.1


def test_the_posterior_reports_the_fit_without_metrics_and_the_metrics_with_them():
    rng = np.random.default_rng(0)
    idata = az.from_dict(posterior={
        "model_accuracy": rng.uniform(0.8, 0.9, (2, 50)),
        "annotator_accuracy": rng.uniform(0.9, 1, (2, 50, 1)),
        "error_correlation": rng.uniform(0, 0.3, (2, 50, 1))})
    data = EvalData([0.9, 0.2, 0.7], [1, np.nan, np.nan], predictions=[1, 0, 1])
    post = AnnotatorPosterior(data, idata, lambda p: [1.0, 0.3, 0.6], random_seed=0)
    plain = Posterior(data, idata, lambda p: [1.0, 0.3, 0.6], random_seed=0)
    fit_table = post.summary()
    assert fit_table.index[:2].tolist() == ["model_accuracy", "true_accuracy"]
    assert fit_table.loc["true_accuracy", "mean"] == pytest.approx(float(post.metric("accuracy").mean()))
    assert fit_table["prior_sensitivity"].isna().all()  # no model_spec: the priors are unknown
    metrics = post.summary(["accuracy", "precision"], hdi_prob=0.8)
    assert metrics.equals(plain.summary(["accuracy", "precision"], hdi_prob=0.8))
    assert post.summary().index.tolist() == fit_table.index.tolist()
    with pytest.raises(TypeError, match="metric options apply with `metrics`"):
        post.summary(threshold=0.5)
    with pytest.raises(TypeError, match="`sensitivity`, `guard` and `error_lift` apply to the fit.s table"):
        post.summary(["accuracy"], guard=False)
    cat = CategoricalPosterior([0, 1, 2], az.from_dict(posterior={"x": np.zeros((1, 20))}),
                               lambda params: np.full((3, 3), 1 / 3), n_classes=3, random_seed=0)
    assert isinstance(cat, AnnotatorPosterior)
    assert cat.summary(["accuracy"]).index.tolist() == ["accuracy"]
    with pytest.raises(ValueError, match=r"not produced by AnnotatorError.*summary\(\['accuracy'\]\)"):
        cat.summary()
    with pytest.raises(ValueError, match="gold items"):
        cat.guarded_accuracy()


@pytest.fixture(scope="module")
def correlated_fits():
    """Strongly correlated errors, one annotator; with and without 200 gold labels."""
    z, pred, ann = _simulate(21, 600, model=(3.0, 2.5), annotators=[(4.0, 2.5)])
    gold = np.full(len(z), np.nan)
    pick = np.random.default_rng(0).choice(len(z), 200, replace=False)
    gold[pick] = z[pick]
    fits = {g: AnnotatorError().fit(AnnotationData(pred, ann, gold=None if g == 0 else gold), random_seed=7, **FIT) for g in (0, 200)}
    return z, pred, ann, gold, fits


def test_interval_covers_the_truth_and_correlation_pulls_below_independence(correlated_fits):
    z, pred, ann, _, fits = correlated_fits
    truth = (pred == z).mean()
    acc = fits[200].metric("accuracy").values.ravel()
    lo, hi = np.quantile(acc, [0.05, 0.95])
    assert lo <= truth <= hi
    # the independence formula, even with the annotator's true accuracy, overshoots here;
    # the posterior (which learns the correlation from the gold items) does not
    indep = true_accuracy_bounds((pred == ann[:, 0]).mean(), (ann[:, 0] == z).mean()).independent
    assert indep > hi
    corr = fits[200].idata.posterior["error_correlation"].values.ravel()
    assert np.quantile(corr, 0.05) > 0


def test_gold_labels_narrow_the_posterior(correlated_fits):
    z, pred, _, gold, fits = correlated_fits
    sd = {g: float(f.metric("accuracy").std()) for g, f in fits.items()}
    assert sd[200] < 0.7 * sd[0]
    # gold items keep their label in every draw
    first = next(fits[200].label_draws())
    known = ~np.isnan(gold)
    assert (first.values[..., known] == gold[known]).all()
    # without gold, the loading (hence the correlation) is barely updated by the data
    par = {g: f.idata.posterior for g, f in fits.items()}
    assert float(par[0]["model_difficulty_corr"].std()) > 1.3 * float(par[200]["model_difficulty_corr"].std())


def test_multiclass_fit_agrees_with_dawid_skene_and_returns_class_metrics():
    z, pred, ann = _simulate(
        31, 400, model=(2.0, 0.0), annotators=[(1.5, 0.0), (2.5, 0.0)], prevalence=(0.5, 0.3, 0.2), missing=0.1
    )
    gold = np.where(np.arange(400) < 30, z, np.nan)
    post = AnnotatorError(3, independent=True).fit(AnnotationData(pred, ann, gold=gold), random_seed=3, **FIT)
    assert isinstance(post, CategoricalPosterior) and post.n_classes == 3
    prev, theta, item_post = dawid_skene(pred, ann, 3, gold=gold)
    ds_acc = np.array([(prev * np.diag(t)).sum() for t in theta])
    par = post.idata.posterior
    bayes = np.r_[par["model_accuracy"].mean().item(), par["annotator_accuracy"].mean(("chain", "draw")).values]
    sds = np.r_[par["model_accuracy"].std().item(), par["annotator_accuracy"].std(("chain", "draw")).values]
    np.testing.assert_array_less(np.abs(bayes - ds_acc), 2 * sds)
    acc = post.metric("accuracy")
    assert acc.dims == ("chain", "draw")
    # one seeded trial: a 99% interval (a 90% one misses by design in 1 of 10 seeds)
    lo, hi = np.quantile(acc.values, [0.005, 0.995])
    assert lo <= (pred == z).mean() <= hi
    for name in ("precision", "recall", "f_score", "class_accuracy"):
        assert post.metric(name).dims == ("chain", "draw", "class")
    table = post.summary(["accuracy", "recall"])
    assert table.shape[0] == 4
    assert post.population("precision").dims == ("chain", "draw", "class")
    # the guarded reading with K classes: right or wrong on the gold items is all it needs
    g = post.guarded_accuracy()
    assert g.right == int((pred == z)[:30].sum()) and g.n_gold == 30
    rows = post.summary(sensitivity=False)
    assert tuple(rows.loc["true_accuracy", ["hdi_5%", "hdi_95%"]]) == pytest.approx((g.lower, g.upper))
    assert g.lower <= g.gold_lower and g.upper >= g.gold_upper


# ------------------------------------------------------- gold items: stacking and check


def _fake_idata(skill, loading, prevalence, draws=400, chains=2):
    """Posterior draws fixed at given probit skills (R, K), loadings (R,) and prevalences."""
    skill, loading, prevalence = (np.asarray(v, dtype=float) for v in (skill, loading, prevalence))
    rep = (chains, draws)
    return az.from_dict(
        posterior={
            "rater_skill": np.broadcast_to(skill, rep + skill.shape).copy(),
            "rater_loading": np.broadcast_to(loading, rep + loading.shape).copy(),
            "prevalence": np.broadcast_to(prevalence, rep + prevalence.shape).copy(),
        }
    )


def _shared_errors(seed, n=400, n_gold=150):
    """The annotator is 90% right; the classifier errs on the same items, and on 5% more."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 2, n)
    ann_wrong = rng.random(n) < 0.10
    pred_wrong = ann_wrong | (rng.random(n) < 0.05)
    ann = np.where(ann_wrong, 1 - z, z).astype(float)
    pred = np.where(pred_wrong, 1 - z, z)
    gold = np.full(n, np.nan)
    pick = rng.choice(n, n_gold, replace=False)
    gold[pick] = z[pick]
    return z, pred, ann, gold


def test_gold_check_flags_a_model_whose_errors_are_wrong_and_stacking_moves_to_gold():
    from bayeval.annotators.gold import gold_stacking as _gold_stacking

    z, pred, ann, gold = _shared_errors(0)
    obs = _observe(pred, ann, gold, 2)
    spec = AnnotatorError()
    # a model that believes the errors are independent (loading 0), accuracies as realized
    wrong = _fake_idata(ndtri([[0.85, 0.85], [0.9, 0.9]]), [0.0, 0.0], [0.5, 0.5])
    check = _gold_stacking(spec, obs, wrong, random_seed=1)
    assert check["contradicts"] and check["p_value"] < 0.01
    assert check["right"] == int((pred == z)[~np.isnan(gold)].sum())
    assert check["right"] < check["range_90"][0] <= check["expected"]
    # each gold item's leave-one-out probability of a right classifier, summing to the expectation
    n_gold = int((~np.isnan(gold)).sum())
    q_right = np.asarray(check["q_right"])
    assert q_right.shape == (n_gold,) and np.all((q_right >= 0) & (q_right <= 1))
    assert q_right.sum() == pytest.approx(check["expected"])
    assert check["weight"] < 0.8
    assert "contradict" in check["message"]
    # the stacked posterior covers the truth; the structured one alone does not
    truth = (pred == z).mean()
    stacked = spec._wrap(obs, wrong, pred.astype(float), 1, gold_fallback="stack")
    alone = spec._wrap(obs, wrong, pred.astype(float), 1, gold_fallback="off")
    lo, hi = np.quantile(stacked.metric("accuracy").values, [0.05, 0.95])
    assert lo <= truth <= hi
    assert np.quantile(alone.metric("accuracy").values, 0.05) > truth
    assert alone.gold_check["weight"] == 1.0 and stacked.gold_check["weight"] == check["weight"]
    # the mixture: the share of structured draws per chain is the weight
    comp = stacked.idata.posterior["structured_component"].values
    np.testing.assert_allclose(comp.mean(axis=1), round(check["weight"] * 400) / 400)


def test_bootstrap_stacking_weight_hedges_only_when_the_gold_items_do_not_decide():
    from bayeval.annotators.gold import _bootstrap_stacking_weight, _stacking_weight

    rng = np.random.default_rng(3)
    n = 60
    # the structured model predicts every gold item far better: every replicate says w = 1
    clear_s, clear_g = np.log(rng.uniform(0.85, 0.95, n)), np.log(rng.uniform(0.4, 0.6, n))
    assert _stacking_weight(clear_s, clear_g) == 1.0
    assert _bootstrap_stacking_weight(clear_s, clear_g, 0) == 1.0
    # two models that predict each gold item about equally well (log scores differing by
    # noise of s.d. 0.1): the plain weight jumps to whichever end this sample favours, the
    # bootstrap average says how firmly the gold items favour it
    gold_only = np.log(rng.uniform(0.5, 0.9, n))
    noise = rng.normal(0, 0.1, n)
    noise -= noise.mean()
    even = _bootstrap_stacking_weight(gold_only + noise, gold_only, 0)
    assert 0.35 < even < 0.65
    tilted = gold_only + noise + 0.01  # favoured by 0.6 in total, about 0.8 s.e.
    assert _stacking_weight(tilted, gold_only) == 1.0
    w_boot = _bootstrap_stacking_weight(tilted, gold_only, 0)
    assert 0.6 < w_boot < 0.9
    firmly = gold_only + noise + 0.05  # favoured by 4 s.e.
    assert _bootstrap_stacking_weight(firmly, gold_only, 0) > 0.99
    # seeded: the same seed gives the same weight; another seed differs by Monte Carlo
    # error only (1000 replicates: s.e. at most 0.5 / sqrt(1000) = 0.016)
    assert _bootstrap_stacking_weight(tilted, gold_only, 0) == w_boot
    assert abs(_bootstrap_stacking_weight(tilted, gold_only, 1) - w_boot) < 0.05


def test_stacking_keeps_a_model_that_fits_the_gold_items():
    from bayeval.annotators.gold import gold_stacking as _gold_stacking

    rng = np.random.default_rng(1)
    n = 400
    z = rng.integers(0, 2, n)
    pred = np.where(rng.random(n) < 0.85, z, 1 - z)
    ann = np.where(rng.random(n) < 0.9, z, 1 - z).astype(float)  # independent errors
    gold = np.where(np.arange(n) < 150, z, np.nan)
    good = _fake_idata(ndtri([[0.85, 0.85], [0.9, 0.9]]), [0.0, 0.0], [0.5, 0.5])
    check = _gold_stacking(AnnotatorError(), _observe(pred, ann, gold, 2), good)
    assert not check["contradicts"] and check["p_value"] > 0.05
    assert check["weight"] > 0.9
    assert check["elpd_loo_structured"] > check["elpd_loo_gold_only"]


def test_gold_only_draws_follow_the_gold_confusion_table():
    z, pred, ann, gold = _shared_errors(2)
    obs = _observe(pred, ann, gold, 2)
    spec = AnnotatorError()
    idata = _fake_idata(ndtri([[0.85, 0.85], [0.9, 0.9]]), [0.0, 0.0], [0.5, 0.5], draws=1000)
    post = spec._wrap(obs, idata, pred.astype(float), 3, gold_fallback="stack")
    par = post.idata.posterior
    go = par["structured_component"].values == 0
    known = ~np.isnan(gold)
    right, n_g = int((pred == z)[known].sum()), int(known.sum())
    acc = post.metric("accuracy").values[go]
    # gold-only draws: accuracy on the unlabelled items ~ Beta(1 + right, 1 + wrong) (stratified
    # by predicted class, which this data barely distinguishes): mean within Monte Carlo error
    unl = (acc * len(z) - right) / (len(z) - n_g)
    expect = (1 + right) / (2 + n_g)
    sd = np.sqrt(expect * (1 - expect) / (n_g + 3))
    assert abs(unl.mean() - expect) < 0.25 * sd + 4 * unl.std() / np.sqrt(go.sum())
    # population accuracy of the gold-only draws: P(pred = c) P(z = c | pred = c) summed
    pop = post.population("accuracy").values
    share = np.bincount(pred, minlength=2) / len(pred)
    conf = par["gold_only_confusion"].values
    np.testing.assert_allclose(pop[go], (share * np.diagonal(conf, axis1=-2, axis2=-1)).sum(-1)[go])


def test_fit_takes_sampler_options_and_reports_convergence():
    z, pred, ann = _simulate(41, 200, model=(2.0, 1.0), annotators=[(2.5, 1.0)])
    gold = np.where(np.arange(200) < 40, z, np.nan)
    spec = AnnotatorError()
    with pytest.warns(UserWarning, match="sampler diagnostics are bad.*ESS"):
        post = spec.fit(
            AnnotationData(pred, ann, gold=gold), draws=30, tune=30, random_seed=2, progressbar=False,
            target_accept=0.95, init="adapt_diag",
        )
    conv = post.convergence
    assert set(conv) == {"max_rhat", "min_ess_bulk", "divergences", "ok", "messages", "sampler", "pareto_k", "ess", "data_messages"}
    assert conv["sampler"] == "pymc"
    assert not conv["ok"] and conv == post.check(warn=False)
    # a fit with gold items is not told that "without gold items the error correlation is weakly identified"
    from bayeval.annotators._likelihood import GOLD_RHAT_ADVICE, RHAT_ADVICE, rhat_advice

    assert rhat_advice(post) == GOLD_RHAT_ADVICE and not any(RHAT_ADVICE in m for m in conv["messages"])
    table = post.summary()
    assert table.loc["structured_weight", "mean"] == pytest.approx(post.gold_check["weight"])
    # with gold items the accuracies' intervals are guarded: they hold the posterior's own
    # (rows *_posterior) and the gold items' own; guard=False reports the posterior's
    g = post.guarded_accuracy()
    cols = ["hdi_5%", "hdi_95%"]
    assert tuple(table.loc["true_accuracy", cols]) == pytest.approx((g.lower, g.upper))
    assert tuple(table.loc["true_accuracy_posterior", cols]) == pytest.approx((g.posterior_lower, g.posterior_upper))
    assert table.loc["true_accuracy", "mean"] == table.loc["true_accuracy_posterior", "mean"]
    plain = post.summary(guard=False, sensitivity=False)
    assert "true_accuracy_posterior" not in plain.index and "model_accuracy_posterior" not in plain.index
    assert tuple(plain.loc["true_accuracy", cols]) == pytest.approx((g.posterior_lower, g.posterior_upper))
    assert tuple(plain.loc["model_accuracy", cols]) == tuple(table.loc["model_accuracy_posterior", cols])
    right, n_gold = post.gold_check["right"], post.gold_check["n_gold"]
    from bayeval.annotators.gold import beta_hdi as _beta_hdi

    b_lo, b_hi = _beta_hdi(1 + right, 1 + n_gold - right, 0.9)
    assert table.loc["model_accuracy", "hdi_5%"] == min(plain.loc["model_accuracy", "hdi_5%"], b_lo)
    assert table.loc["model_accuracy", "hdi_95%"] == max(plain.loc["model_accuracy", "hdi_95%"], b_hi)
    with pytest.raises(TypeError, match="guard"):
        post.summary(guard="yes")
    assert 0 <= table.loc["gold_check_p", "mean"] <= 1
    rect = post.rectified_accuracy()
    assert tuple(table.loc["true_accuracy_rectified"].iloc[:4]) == pytest.approx(
        (rect.estimate, rect.std_error, rect.lower, rect.upper)
    )
    assert "structured_component" in post.idata.posterior


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"target_accept": 1.5}, ValueError, "target_accept"),
        ({"warn": "yes"}, TypeError, "warn"),
        ({"gold_fallback": "gold"}, TypeError, "takes no option .gold_fallback"),
        ({"sample_kwargs": {"draws": 9}}, TypeError, "takes no option .sample_kwargs"),
        ({"nuts_sampler": "numpyro"}, TypeError, "takes no option .nuts_sampler"),
    ],
)
def test_fit_argument_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        AnnotatorError().fit(AnnotationData([0, 1, 1], [0, 1, 1]), **kwargs)


def test_data_must_be_one_annotation_data():
    pred, ann, gold = [0, 1, 1, 0], [[0], [1], [1], [1]], [0, np.nan, np.nan, np.nan]
    with pytest.raises(TypeError, match="one AnnotationData"):
        AnnotatorError().build(pred, ann, gold=gold)
    with pytest.raises(TypeError, match="one AnnotationData"):
        AnnotatorError().fit(np.array(pred))


# ------------------------------------------------------------------- long-format input


def test_annotations_from_long_by_annotator_and_by_slot():
    import pandas as pd

    from bayeval.annotators import annotations_from_long

    long = pd.DataFrame(
        {
            "task": [3, 3, 1, 2, 2, 2, 1],
            "worker": ["x", "y", "x", "x", "y", "z", "z"],
            "answer": [1, 1, 0, 0, 1, np.nan, 1],
        }
    )
    wide = annotations_from_long(long, item="task", annotator="worker", label="answer", items=[1, 2, 3, 4])
    assert wide.index.tolist() == [1, 2, 3, 4] and wide.columns.tolist() == ["x", "y", "z"]
    np.testing.assert_array_equal(
        wide.to_numpy(), [[0, np.nan, 1], [0, 1, np.nan], [1, 1, np.nan], [np.nan] * 3]
    )
    slots = annotations_from_long(long, item="task", annotator="worker", label="answer", pool="slot")
    np.testing.assert_array_equal(slots.to_numpy(), [[0, 1], [0, 1], [1, 1]])
    assert slots.columns.tolist() == ["label_0", "label_1"]
    one = annotations_from_long(long, item="task", annotator="worker", label="answer", pool="slot", max_labels=1)
    assert one.shape == (3, 1)
    # the matrix goes straight into the model (items without a label: all-NaN rows are fine)
    model = AnnotatorError().build(AnnotationData([0, 1, 1], slots))
    assert list(model.coords["annotator"]) == ["label_0", "label_1"]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"data": [[1, "x", 0]]}, TypeError, "DataFrame"),
        ({"label": "answer"}, ValueError, "lacks the column.*answer"),
        ({"pool": "worker"}, ValueError, "pool"),
        ({"items": ["a"]}, ValueError, "not in `items`.*b"),
        ({"items": ["a", "a", "b"]}, ValueError, "duplicate"),
        ({"data": "dup"}, ValueError, r"more than once.*\('a', 'x'\).*drop_duplicates"),
        ({"data": "dup", "pool": "slot"}, ValueError, r"more than once.*\('a', 'x'\).*one answer per annotator"),
        ({"data": "int and str ids"}, ValueError, r"ids \[1, '1'\] \(int, str\).*one column name '1'.*astype\(str\)"),
        ({"max_labels": 0, "pool": "slot"}, ValueError, "max_labels"),
    ],
)
def test_annotations_from_long_errors(kwargs, error, match):
    import pandas as pd

    from bayeval.annotators import annotations_from_long

    data = pd.DataFrame({"item": ["a", "b"], "annotator": ["x", "x"], "label": [0, 1]})
    named = {
        "dup": {"item": ["a", "a"], "annotator": ["x", "x"], "label": [0, 1]},
        # would be two columns both named "1"
        "int and str ids": {"item": ["a", "a", "b"], "annotator": [1, "1", 1], "label": [0, 1, 1]},
    }
    if isinstance(kwargs.get("data"), str) and kwargs["data"] in named:
        kwargs["data"] = pd.DataFrame(named[kwargs["data"]])
    kwargs.setdefault("data", data)
    with pytest.raises(error, match=match):
        annotations_from_long(**kwargs)


def test_annotation_columns_named_alike_are_refused():
    """Two annotator columns with one name (as text: 1 and "1") would give the fit duplicate
    annotator coordinates and colliding summary rows: refused, naming the clash."""
    import pandas as pd

    ann = pd.DataFrame([[1, 0], [1, 1], [0, np.nan]], columns=[1, "1"])
    with pytest.raises(ValueError, match="column name.*used twice.*'1'.*Rename"):
        AnnotatorError().build(AnnotationData([1, 1, 0], ann))
    model = AnnotatorError().build(AnnotationData([1, 1, 0], ann.set_axis(["1", "2"], axis=1)))
    assert list(model.coords["annotator"]) == ["1", "2"]


def test_check_reports_disagreeing_chains_and_divergences():
    rng = np.random.default_rng(0)
    acc = np.stack([rng.normal(0.80, 0.01, (300, 2)), rng.normal(0.90, 0.01, (300, 2))])  # two modes
    diverging = np.zeros((2, 300), dtype=bool)
    diverging[0, :3] = True
    idata = az.from_dict(posterior={"model_class_accuracy": acc}, sample_stats={"diverging": diverging})
    post = AnnotatorPosterior(EvalData([0.0, 1.0], predictions=[0, 1]), idata, lambda p: [0.1, 0.9])
    with pytest.warns(UserWarning, match="r_hat up to .*chains disagree.*gold subset.*3 divergent"):
        out = post.check()
    assert out["max_rhat"] > 1.5 and out["divergences"] == 3 and not out["ok"]
    assert len(out["messages"]) == 3  # r_hat, ESS (two modes: a few effective draws), divergences


# ------------------------------------------------------------------ prior sensitivity


def test_power_scaled_weights_turn_prior_draws_into_the_scaled_prior():
    """Draws from the priors themselves (a flat likelihood): reweighting by p^(s - 1)
    must give the power-scaled prior, Beta(a, b)^s = Beta(s (a - 1) + 1, s (b - 1) + 1)."""
    from bayeval.annotators._sensitivity import power_scaling as _power_scaling

    rng = np.random.default_rng(3)
    chains, draws = 2, 4000
    spec = AnnotatorError()
    pred = rng.integers(0, 2, 50)
    ann = pred[:, None].astype(float)
    rep = (chains, draws)
    idata = _fake_idata(ndtri([[0.85, 0.85], [0.9, 0.9]]), [0.0, 0.0], [0.5, 0.5], draws=draws, chains=chains)
    prior_draws = {
        "prevalence": rng.dirichlet([1.0, 1.0], size=rep),
        "model_class_accuracy": rng.beta(3.0, 1.0, size=rep + (2,)),
        "annotator_class_accuracy": rng.beta(6.0, 1.0, size=rep + (1, 2)),
        "model_difficulty_u": rng.beta(3.0, 1.0, size=rep),
        "annotator_difficulty_u": rng.beta(2.0, 1.0, size=rep + (1,)),
    }
    idata.posterior = idata.posterior.assign(
        {k: (("chain", "draw") + tuple(f"{k}_dim_{i}" for i in range(v.ndim - 2)), v) for k, v in prior_draws.items()}
    )
    post = spec._wrap(_observe(pred, ann, None, 2), idata, pred.astype(float), 1, gold_fallback="off")
    ps = _power_scaling(spec, post)
    x = prior_draws["model_class_accuracy"][..., 0].ravel()
    for s in (0.5, 2.0):
        w, k = ps.weights(s)
        assert k < 0.7
        ess = 1 / np.sum(w**2)
        mean = np.sum(w * x)
        sd = np.sqrt(np.sum(w * (x - mean) ** 2))
        expected = (s * 2 + 1) / (s * 2 + 2)  # mean of Beta(2 s + 1, 1)
        assert abs(mean - expected) < 4 * sd / np.sqrt(ess), (s, mean, expected)
    # the fitted prior (scale 1) is the draws themselves
    w, _ = ps.weights(1.0)
    np.testing.assert_allclose(w, 1 / w.size)


def test_prior_sensitivity_says_when_the_priors_decide(correlated_fits):
    import warnings

    from bayeval.annotators._sensitivity import add_log_prior as _add_log_prior

    *_, fits = correlated_fits
    spec = AnnotatorError()
    no_gold, gold = (fits[g].prior_sensitivity() for g in (0, 200))
    # one annotator, no gold: only the agreement rate is observed; the priors decide
    assert no_gold.loc[("true_accuracy", 1.0), "diagnosis"] == "prior-dominated"
    assert gold.loc[("true_accuracy", 1.0), "diagnosis"] == ""
    assert (no_gold.loc[("true_accuracy", 1.0), "prior_sensitivity"]
            > 2 * gold.loc[("true_accuracy", 1.0), "prior_sensitivity"])
    # scale 1 is the fitted posterior; the other scales move the interval (and say how reliably)
    acc = fits[0].metric("accuracy").values.ravel()
    assert no_gold.loc[("true_accuracy", 1.0), "mean"] == pytest.approx(acc.mean())
    assert list(no_gold.loc["true_accuracy"].index) == [0.5, 1.0, 2.0]
    k = no_gold.loc[("true_accuracy", 2.0), "pareto_k"]
    assert np.isfinite(k) and (k >= 0.7 or np.isfinite(no_gold.loc[("true_accuracy", 2.0), "mean"]))
    # the summary carries the indices; the fit stored the log prior ArviZ reads
    table = fits[0].summary()
    assert table.loc["true_accuracy", "diagnosis"] == "prior-dominated"
    # prior-dominated without gold: the reported interval is the identified set joined with
    # the posterior's, which holds the truth here (errors shared strongly); the metric table agrees
    z, pred, ann, *_ = correlated_fits
    ident = table.attrs["identified"]
    cols = ["hdi_5%", "hdi_95%"]
    assert ident.reported and tuple(table.loc["true_accuracy", cols]) == pytest.approx((ident.lower, ident.upper))
    assert tuple(table.loc["true_accuracy_posterior", cols]) == pytest.approx(
        (ident.posterior_lower, ident.posterior_upper))
    assert ident.set_lower <= (pred == z).mean() <= ident.set_upper
    assert ident.reference_floor[0] <= (ann[:, 0] == z).mean()
    assert tuple(fits[0].summary(["accuracy"]).loc["accuracy", cols]) == pytest.approx((ident.lower, ident.upper))
    assert "true_accuracy_identified" not in fits[200].summary().index  # gold items: the guarded reading
    # a stated overlap assumption narrows the set (the range the caveat quotes); gold items refuse it
    narrowed = fits[0].summary(error_lift=(1, 2))
    assumed = narrowed.attrs["identified"]
    assert assumed.error_lift == (1.0, 2.0)
    assert (assumed.lower, assumed.upper) == pytest.approx((ident.assumed_lower, ident.assumed_upper))
    assert ident.lower <= assumed.lower and assumed.upper <= ident.upper
    assert tuple(narrowed.loc["true_accuracy", cols]) == pytest.approx((assumed.lower, assumed.upper))
    assert any("times its overall rate" in c for c in table.attrs["caveats"])
    with pytest.raises(ValueError, match="without gold items"):
        fits[200].summary(error_lift=(1, 2))
    assert np.isnan(table.loc["prevalence[class=0]", "prior_sensitivity"])
    assert "log_prior" in fits[0].idata.groups()
    assert set(fits[0].idata.log_prior.data_vars) == {
        "prevalence", "model_accuracy", "annotator_accuracy", "model_difficulty", "annotator_difficulty"}
    res = az.psens(fits[0].idata, component="prior", var_names=["model_accuracy"])
    assert float(res["model_accuracy"] if hasattr(res, "data_vars") else res) > 0
    # the fit warns (when warn=True) that the interval rests on the priors
    with pytest.warns(UserWarning, match="depends on the priors .prior-dominated.*prior_sensitivity"):
        spec._after_fit(fits[0], warn=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec._after_fit(fits[200], warn=True)  # gold items: no such warning
    _add_log_prior(spec, fits[0].idata)  # idempotent
    with pytest.raises(ValueError, match="scales"):
        fits[0].prior_sensitivity(scales=(0.0,))
    with pytest.raises(TypeError, match="sensitivity"):
        fits[0].summary(sensitivity="no")
    assert "diagnosis" not in fits[0].summary(sensitivity=False).columns


def test_exchangeable_annotators_share_one_set_of_parameters():
    """Slot columns of a crowd (each a random worker): one accuracy and one difficulty
    correlation for all of them; the likelihood is the separate model's with equal parameters."""
    z, pred, ann = _simulate(5, 300, model=(2.0, 1.0), annotators=[(1.5, 1.0)] * 3, missing=0.2)
    data = AnnotationData(pred, ann)
    shared, separate = AnnotatorError(annotators="exchangeable"), AnnotatorError()
    m_sh, m_sep = shared.build(data), separate.build(data)
    # values of the built graphs only: FAST (Python) mode, no C module compiled for them
    assert m_sh["annotator_class_accuracy"].eval(mode=FAST).shape == (2,)
    assert m_sh["annotator_difficulty_u"].eval(mode=FAST).shape == ()
    assert m_sh["annotator_difficulty_corr"].eval(mode=FAST).shape == (3,)
    # same point, same log density (the priors differ: one Beta per class instead of three)
    point_sh = {"prevalence_simplex__": np.array([0.3]), "model_class_accuracy_logodds__": np.array([1.2, 0.8]),
                "annotator_class_accuracy_logodds__": np.array([0.9, 1.1]),
                "model_difficulty_u_logodds__": np.array(0.4), "annotator_difficulty_u_logodds__": np.array(-0.2)}
    point_sep = dict(point_sh, annotator_class_accuracy_logodds__=np.tile([0.9, 1.1], (3, 1)),
                     annotator_difficulty_u_logodds__=np.full(3, -0.2))
    lik_sh = m_sh.compile_logp(vars=m_sh.potentials, mode=FAST)(point_sh)
    lik_sep = m_sep.compile_logp(vars=m_sep.potentials, mode=FAST)(point_sep)
    assert lik_sh == pytest.approx(lik_sep, rel=1e-10)
    post = shared.fit(data, random_seed=3, **FIT)
    assert post.idata.posterior["annotator_class_accuracy"].dims == ("chain", "draw", "class")
    acc = post.idata.posterior["annotator_accuracy"]
    np.testing.assert_allclose(acc.isel(annotator=0), acc.isel(annotator=2))
    lo, hi = np.quantile(post.metric("accuracy").values, [0.02, 0.98])
    assert lo <= (pred == z).mean() <= hi
    assert "annotators='exchangeable'" in repr(shared)
    assert AnnotatorError(**shared.get_params()).annotators == "exchangeable"
    with pytest.raises(ValueError, match="annotators"):
        AnnotatorError(annotators="pooled")
    # K > 2: one confusion row set for the annotators, one for the classifier
    m3 = AnnotatorError(3, annotators="exchangeable").build(AnnotationData([0, 1, 2, 2], [[0, 1], [1, 1], [1, 2], [2, 2]]))
    w = m3["wrong_class"].eval(mode=FAST)
    assert w.shape == (3, 3, 2)
    np.testing.assert_allclose(w[1], w[2])


def test_prior_sensitivity_when_stacking_gives_the_structured_model_no_weight():
    """All draws from the gold-only model: the priors move nothing, and nothing fails."""
    from bayeval.annotators._sensitivity import power_scaling as _power_scaling
    from bayeval.annotators.gold import mix_gold_only as _mix_gold_only

    z, pred, ann, gold = _shared_errors(4)
    obs = _observe(pred, ann, gold, 2)
    spec = AnnotatorError()
    rng = np.random.default_rng(0)
    idata = _fake_idata(ndtri([[0.85, 0.85], [0.9, 0.9]]), [0.0, 0.0], [0.5, 0.5], draws=200)
    rep = (2, 200)
    idata.posterior = idata.posterior.assign(
        prevalence=(("chain", "draw", "p"), rng.dirichlet([1.0, 1.0], size=rep)),
        model_class_accuracy=(("chain", "draw", "c"), rng.beta(3.0, 1.0, size=rep + (2,))),
        annotator_class_accuracy=(("chain", "draw", "a", "c"), rng.beta(6.0, 1.0, size=rep + (1, 2))),
        model_difficulty_u=(("chain", "draw"), rng.beta(3.0, 1.0, size=rep)),
        annotator_difficulty_u=(("chain", "draw", "a"), rng.beta(2.0, 1.0, size=rep + (1,))),
    )
    mixed = _mix_gold_only(idata, obs, 0.0, 2, 1)
    post = spec._wrap(obs, mixed, pred.astype(float), 1, gold_fallback="off")
    assert not post.idata.posterior["structured_component"].values.any()
    w, k = _power_scaling(spec, post).weights(2.0)
    np.testing.assert_allclose(w, 1 / w.size)
    assert np.isnan(k)
    table = post.prior_sensitivity()
    acc = table.loc["true_accuracy"]
    assert acc.loc[2.0, "mean"] == pytest.approx(acc.loc[1.0, "mean"])
    assert acc.loc[0.5, "hdi_5%"] == pytest.approx(acc.loc[1.0, "hdi_5%"], abs=0.01)


def test_fit_draws_2000_per_chain_without_gold_and_1000_with(monkeypatch):
    from bayeval.core.model import Model

    seen = []
    monkeypatch.setattr(Model, "fit", lambda self, data, **kw: seen.append(kw["draws"]))
    pred, ann = np.array([0, 1, 1, 0]), np.array([[0.0], [1.0], [0.0], [0.0]])
    AnnotatorError().fit(AnnotationData(pred, ann))
    AnnotatorError().fit(AnnotationData(pred, ann, gold=[np.nan] * 4))
    AnnotatorError().fit(AnnotationData(pred, ann, gold=[0, np.nan, np.nan, np.nan]))
    AnnotatorError().fit(AnnotationData(pred, ann), draws=300)
    assert seen == [2000, 2000, 1000, 300]


# ------------------------------------------------ the prediction-powered reading


def test_guarded_residual_variance_never_collapses_to_zero():
    from bayeval.annotators.gold import _guarded_residual_variance

    # every gold item right and predicted right with q = 0.97: the plain variance is 0
    flat = np.full(30, 0.03)
    v = _guarded_residual_variance(flat, 0.97)
    # half a right (residual 0.03) and half a wrong (-0.97) item beside them, total weight 31
    vals, w = np.r_[flat, 0.03, -0.97], np.r_[np.ones(30), 0.5, 0.5]
    mu = np.dot(w, vals) / 31
    assert v == pytest.approx(np.dot(w, (vals - mu) ** 2) / 30)
    assert v > 0.01  # a Bernoulli variance of an accuracy near 0.98, not 0
    # with errors among the gold items the guard changes the variance little
    rng = np.random.default_rng(0)
    resid = np.where(rng.random(200) < 0.2, -0.8, 0.2) + rng.normal(0, 0.05, 200)
    assert _guarded_residual_variance(resid, 0.8) == pytest.approx(resid.var(ddof=1), rel=0.05)
    assert np.isnan(_guarded_residual_variance(np.array([0.1]), 0.9))


@pytest.fixture(scope="module")
def wrong_model_on_random_gold():
    """The 150 posteriors of :func:`_wrong_model_on_random_gold`, made once for the two tests
    that read them (about 2.7 CPU s each time): ``(truth, right, [(post, pick), ...])``."""
    truth, right, fits = _wrong_model_on_random_gold()
    return truth, right, list(fits)


def _wrong_model_on_random_gold(n_trials=150, n_gold=60):
    """Fits, without sampling, of a structured model that believes the errors independent
    (they are shared) to one data set with ``n_trials`` random gold subsets: yields
    ``(post, pick)``. Returns the true accuracy, which items the classifier got right,
    and that generator."""
    z, pred, ann, _ = _shared_errors(5, n=400, n_gold=0)
    spec = AnnotatorError()
    wrong = _fake_idata(ndtri([[0.85, 0.85], [0.9, 0.9]]), [0.0, 0.0], [0.5, 0.5], draws=50)
    rng = np.random.default_rng(11)

    def fits():
        for _ in range(n_trials):
            gold = np.full(z.size, np.nan)
            pick = rng.choice(z.size, n_gold, replace=False)
            gold[pick] = z[pick]
            yield spec._wrap(_observe(pred, ann, gold, 2), wrong, pred.astype(float), 1, gold_fallback="off"), pick

    return (pred == z).mean(), (pred == z), fits()


def test_rectified_accuracy_covers_where_the_model_is_wrong(wrong_model_on_random_gold):
    """A structured model that believes the errors independent (they are shared) puts the
    accuracy far off; over random gold subsets the prediction-powered interval covers the
    true accuracy at about its nominal 90%, and is unbiased."""
    truth, _, fits = wrong_model_on_random_gold
    hits, ests, alone = [], [], []
    for post, _ in fits:
        r = post.rectified_accuracy()
        hits.append(r.lower <= truth <= r.upper)
        ests.append(r.estimate)
        alone.append(np.quantile(post.metric("accuracy").values, [0.05, 0.95]))
        assert r.n_gold == 60 and r.prob == 0.9 and r.lower < r.estimate < r.upper
    cover = np.mean(hits)
    assert cover >= 0.9 - 2 * np.sqrt(0.09 / 150)  # nominal 0.9 within 2 Monte Carlo s.e.
    assert abs(np.mean(ests) - truth) < 3 * np.std(ests) / np.sqrt(150)  # unbiased
    lo, hi = np.array(alone).T
    assert np.mean((lo <= truth) & (truth <= hi)) < 0.5  # the model alone misses


def test_rectified_accuracy_formula_and_errors():
    z, pred, ann, gold = _shared_errors(6, n=200, n_gold=40)
    spec = AnnotatorError()
    good = _fake_idata(ndtri([[0.85, 0.85], [0.9, 0.9]]), [0.5, 0.5], [0.5, 0.5], draws=50)
    post = spec._wrap(_observe(pred, ann, gold, 2), good, pred.astype(float), 1)
    r = post.rectified_accuracy(prob=0.8)
    wider = post.rectified_accuracy(prob=0.95)
    assert wider.lower < r.lower and wider.upper > r.upper and wider.estimate == r.estimate
    # the estimate is mean(q) over all items plus the gold items' mean residual
    check = post.gold_check
    assert r.estimate == pytest.approx(check["q_mean_all"] + check["residual_mean"])
    q_right = np.asarray(check["q_right"])
    known = ~np.isnan(gold)
    assert check["residual_mean"] == pytest.approx(((pred == z)[known] - q_right).mean())
    with pytest.raises(ValueError, match="gold items"):
        spec._wrap(_observe(pred, ann, None, 2), good, pred.astype(float), 1).rectified_accuracy()
    post.gold_check = {k: v for k, v in check.items() if k != "q_mean_all"}  # saved by an older version
    with pytest.raises(ValueError, match="earlier bayeval.*fit the data again"):
        post.rectified_accuracy()
    post.gold_check = check
    with pytest.raises(ValueError, match="prob"):
        post.rectified_accuracy(prob=1.0)
    one = np.where(np.arange(z.size) == 3, z, np.nan)
    single = spec._wrap(_observe(pred, ann, one, 2), good, pred.astype(float), 1).rectified_accuracy()
    assert (single.lower, single.upper) == (0.0, 1.0) and np.isnan(single.std_error)



# ------------------------------------------------ the guarded reading (never below the gold items)


def test_guarded_accuracy_covers_whenever_the_gold_items_do(wrong_model_on_random_gold):
    """A structured model that believes the errors independent (they are shared) puts its
    interval far from the truth; the guarded interval contains both the posterior's and
    the gold items' own interval in every trial, so it covers whenever the gold items'
    interval does, and at least at the nominal 90% over random gold subsets."""
    truth, right, fits = wrong_model_on_random_gold
    hits = {"guarded": [], "posterior": [], "gold": []}
    for post, pick in fits:
        g = post.guarded_accuracy()
        draws = post.metric("accuracy").values.ravel()
        assert g.estimate == pytest.approx(draws.mean())
        assert (g.posterior_lower, g.posterior_upper) == pytest.approx(tuple(hdi(draws, 0.9)))
        assert g.right == int(right[pick].sum()) and g.n_gold == 60 and g.interval == "hdi"
        assert (g.lower, g.upper) == (min(g.posterior_lower, g.gold_lower), max(g.posterior_upper, g.gold_upper))
        for name, (lo, hi) in (("guarded", (g.lower, g.upper)), ("posterior", (g.posterior_lower, g.posterior_upper)),
                               ("gold", (g.gold_lower, g.gold_upper))):
            hits[name].append(lo <= truth <= hi)
    guarded, gold_only = np.array(hits["guarded"]), np.array(hits["gold"])
    assert np.all(guarded[gold_only])  # never misses where the gold items' interval covers
    assert guarded.mean() >= 0.9 - 2 * np.sqrt(0.09 / 150)
    assert gold_only.mean() >= 0.9 - 2 * np.sqrt(0.09 / 150)  # the gold items' interval holds its level
    assert np.mean(hits["posterior"]) < 0.5  # the model alone misses


def test_gold_items_interval_is_the_exact_beta_binomial():
    from scipy.stats import betabinom

    from bayeval.annotators.gold import _discrete_interval
    from bayeval.annotators.gold import beta_hdi as _beta_hdi
    from bayeval.annotators.gold import gold_only_accuracy_interval as _gold_only_accuracy_interval

    # equal-tailed: the 5% and 95% quantiles of right + BetaBinomial(rest, 1 + right, 1 + wrong)
    right, n_gold, n = 25, 30, 800
    lo, hi = _gold_only_accuracy_interval(right, n_gold, n, 0.9, "equal-tailed")
    dist = betabinom(n - n_gold, 1 + right, 1 + n_gold - right)
    assert (lo, hi) == ((right + dist.ppf(0.05)) / n, (right + dist.ppf(0.95)) / n)
    # ... and agrees with Monte Carlo draws of that model within their error (1/800 per item)
    rng = np.random.default_rng(3)
    acc = (right + rng.binomial(n - n_gold, rng.beta(1 + right, 1 + n_gold - right, 200_000))) / n
    np.testing.assert_allclose(np.quantile(acc, [0.05, 0.95]), (lo, hi), atol=2 / n)
    # highest density: narrower than equal-tailed for this skewed count, mass >= 0.9, and
    # every value inside at least as probable as any outside
    h_lo, h_hi = _gold_only_accuracy_interval(right, n_gold, n, 0.9, "hdi")
    assert h_hi - h_lo < hi - lo
    k = np.arange(n - n_gold + 1)
    inside = (k >= h_lo * n - right - 1e-9) & (k <= h_hi * n - right + 1e-9)
    pmf = dist.pmf(k)
    assert pmf[inside].sum() >= 0.9 and pmf[inside].min() >= pmf[~inside].max()
    # small cases by hand: a pmf of 0.1, 0.2, 0.4, 0.3
    pmf = np.array([0.1, 0.2, 0.4, 0.3])
    assert _discrete_interval(pmf, 0.6, "hdi") == (2, 3)  # 0.4 + 0.3
    assert _discrete_interval(pmf, 0.8, "hdi") == (1, 3)
    assert _discrete_interval(pmf, 0.8, "equal-tailed") == (0, 3)  # cdf 0.1, 0.3, 0.7: the 10% quantile is 0
    assert _discrete_interval(pmf, 0.7, "equal-tailed") == (1, 3)
    # all gold items right: the interval reaches 1
    assert _gold_only_accuracy_interval(30, 30, 100, 0.9, "hdi")[1] == 1.0
    # the population reading: Beta(1 + right, 1 + wrong), narrowest interval of mass 0.9
    from scipy.stats import beta

    b_lo, b_hi = _beta_hdi(26.0, 6.0, 0.9)
    assert beta.cdf(b_hi, 26, 6) - beta.cdf(b_lo, 26, 6) == pytest.approx(0.9, abs=1e-8)
    assert beta.pdf(b_lo, 26, 6) == pytest.approx(beta.pdf(b_hi, 26, 6), rel=1e-4)
    assert _beta_hdi(31.0, 1.0, 0.9) == pytest.approx((0.1 ** (1 / 31), 1.0))


def test_guarded_accuracy_errors():
    z, pred, ann, gold = _shared_errors(6, n=200, n_gold=40)
    spec = AnnotatorError()
    good = _fake_idata(ndtri([[0.85, 0.85], [0.9, 0.9]]), [0.5, 0.5], [0.5, 0.5], draws=50)
    post = spec._wrap(_observe(pred, ann, gold, 2), good, pred.astype(float), 1)
    tails = post.guarded_accuracy(prob=0.8, interval="equal-tailed")
    draws = post.metric("accuracy").values.ravel()
    assert (tails.posterior_lower, tails.posterior_upper) == pytest.approx(tuple(np.quantile(draws, [0.1, 0.9])))
    assert tails.prob == 0.8 and tails.interval == "equal-tailed"
    with pytest.raises(ValueError, match="gold items"):
        spec._wrap(_observe(pred, ann, None, 2), good, pred.astype(float), 1).guarded_accuracy()
    with pytest.raises(ValueError, match="interval.*'hdi', 'equal-tailed'"):
        post.guarded_accuracy(interval="central")
    with pytest.raises(ValueError, match="prob"):
        post.guarded_accuracy(prob=0.0)


def test_chains_start_at_a_dawid_skene_estimate():
    """The starting point is the Dawid--Skene EM estimate (binary: the same model), with
    the gold items fixed; its shapes follow the model's variables in every layout."""
    from bayeval.annotators.model import _dawid_skene_start
    from bayeval.core.sampling import _value_space

    z, pred, ann = _simulate(21, 3000, model=(1.5, 0.0), annotators=[(1.0, 0.0), (2.0, 0.0), (0.5, 0.0)],
                             prevalence=(0.7, 0.3), missing=0.2)
    gold = np.full(z.size, np.nan)
    gold[:200] = z[:200]
    spec = AnnotatorError()
    data = AnnotationData(pred, ann, gold=gold)
    start = spec._start(data)
    prev, theta, _ = dawid_skene(pred, ann, 2, gold=gold)
    # the priors add a few pseudo-counts to ~1,000-2,000 items per class
    np.testing.assert_allclose(start["prevalence"], prev, atol=0.005)
    np.testing.assert_allclose(start["model_class_accuracy"], np.diag(theta[0]), atol=0.01)
    np.testing.assert_allclose(start["annotator_class_accuracy"], [np.diag(t) for t in theta[1:]], atol=0.01)
    # the truth is near (independent errors, as the EM assumes)
    assert abs(start["prevalence"][1] - 0.3) < 0.03
    assert abs(start["model_class_accuracy"] @ start["prevalence"] - (pred == z).mean()) < 0.03
    # exchangeable columns: one pooled row; K = 3: one accuracy per class; the model's
    # log density is finite at every start
    for k, kw in [(2, {"annotators": "exchangeable"}), (3, {}), (3, {"annotators": "exchangeable"}), (2, {"independent": True})]:
        zk, pk, ak = _simulate(4, 300, model=(1.5, 0.5), annotators=[(1.0, 0.5)] * 2,
                               prevalence=(0.6, 0.4) if k == 2 else (0.5, 0.3, 0.2), missing=0.3)
        sp = AnnotatorError(k, **kw)
        dk = AnnotationData(pk, ak)
        st = _dawid_skene_start(sp, _observe(pk, ak, None, k))
        model = sp.build(dk)
        for name, val in st.items():
            assert np.shape(val) == model[name].eval(mode=FAST).shape, (k, kw, name)
        point = {**model.initial_point(), **_value_space(model, st)}
        assert np.isfinite(model.compile_logp(mode=FAST)(point)), (k, kw)
        assert np.all((st["model_class_accuracy"] > 0) & (st["model_class_accuracy"] < 1))


@pytest.mark.slow
def test_a_real_crowd_fit_without_gold_keeps_every_chain_in_the_main_mode():
    """(Slow: four chains of 1,000 iterations; the fast check of the same start is
    test_chains_start_at_a_dawid_skene_estimate.) Temporal ordering, the classifier a majority of three crowd labels, three other
    crowd labels as references, no gold (one trial of benchmarks/annotator_real.py).
    Started at the priors' means, one of four chains stays in a minor mode (accuracy
    ~0.6 against ~0.81, log density ~7 lower; r_hat 1.56 with these settings); from the
    Dawid--Skene start all four agree."""
    import pathlib
    import sys

    bench = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(bench))
    import annotator_real

    labels, z = annotator_real.load("temp")
    rng = np.random.default_rng([27, annotator_real.DATASETS.index("temp"), 3, 0])
    slots = np.stack([rng.permutation(lab) for lab in labels])
    pred = annotator_real.majority(slots[:, :3], rng)
    post = AnnotatorError().fit(AnnotationData(pred, slots[:, 3:6].astype(float)), random_seed=27, draws=300,
                                tune=700, progressbar=False, warn=False)
    per_chain = post.metric("accuracy").mean("draw").values
    assert per_chain.max() - per_chain.min() < 0.02, per_chain
    assert abs(per_chain.mean() - (pred == z).mean()) < 0.05


def test_smc_fit_agrees_with_nuts_and_carries_everything_a_fit_has(independent_fit):
    """``sampler="smc"``: the same posterior as NUTS (the accuracies within Monte Carlo
    error of the two), and the fit's extras -- label draws, log-likelihood, convergence
    over the independent runs, prior sensitivity -- work on its draws."""
    z, pred, ann, nuts = independent_fit
    post = AnnotatorError().fit(AnnotationData(pred, ann), random_seed=5, sampler="smc", draws=600, chains=2,
                                cores=1, progressbar=False, warn=False)
    assert post.sampling.sampler == "smc" and post.convergence["sampler"] == "smc"
    assert len(post.sampling.extra["stages"]) == 2 and post.convergence["divergences"] == 0
    a, b = post.idata.posterior, nuts.idata.posterior
    for v in ("model_accuracy", "annotator_accuracy"):
        x, y = a[v].mean(("chain", "draw")).values, b[v].mean(("chain", "draw")).values
        sd = b[v].std(("chain", "draw")).values
        # SMC's 1,200 particles (resampled: an ESS of a few hundred) and NUTS's draws
        np.testing.assert_array_less(np.abs(x - y), 4 * sd * np.sqrt(1 / 300 + 1 / 400))
    acc = post.metric("accuracy")
    assert abs(float(acc.mean()) - float(nuts.metric("accuracy").mean())) < 3 * float(acc.std())
    assert post.idata.log_likelihood["observations"].shape == (2, 600, len(pred))
    sens = post.prior_sensitivity()
    assert np.isfinite(sens.loc[("true_accuracy", 1.0), "prior_sensitivity"])
