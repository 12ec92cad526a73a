"""The identified set of the true accuracy without gold items (``post.identified_accuracy()``):
the range over every overlap of the errors, and how the fit's tables report it. Fast: no
sampling (the posteriors are built from given class probabilities)."""

import itertools

import arviz as az
import numpy as np
import pytest

from bayeval import EvalData
from bayeval.annotators import AnnotatorError, AnnotatorPosterior, IdentifiedAccuracy
from bayeval.annotators._checks import observe
from bayeval.annotators._identified import accuracy_range, gold_to_width, identified_sentence, joint_floors
from bayeval.annotators.gold import gold_only_accuracy_interval
from bayeval.core.summary import hdi


def _brute_force(pred, refs, floors, k):
    """min and max accuracy of ``pred`` over every truth with each reference column right on
    at least ``floors[j]`` of its labelled items."""
    n = pred.size
    seen = ~np.isnan(refs)
    best = [np.inf, -np.inf]
    for z in itertools.product(range(k), repeat=n):
        z = np.asarray(z)
        ok = all(((refs[seen[:, j], j] == z[seen[:, j]]).mean() >= floors[j] - 1e-12) for j in range(refs.shape[1]))
        if ok:
            a = (pred == z).mean()
            best = [min(best[0], a), max(best[1], a)]
    return best


@pytest.mark.parametrize("seed,k,n_refs", [(0, 2, 1), (1, 2, 2), (2, 2, 3), (3, 3, 2)])
def test_range_equals_brute_force_enumeration(seed, k, n_refs):
    rng = np.random.default_rng(seed)
    n = 10 if k == 2 else 7
    z = rng.integers(0, k, n)
    pred = np.where(rng.random(n) < 0.7, z, rng.integers(0, k, n))
    refs = np.where(rng.random((n, n_refs)) < 0.75, z[:, None], rng.integers(0, k, (n, n_refs))).astype(float)
    if n_refs > 1:
        refs[rng.random((n, n_refs)) < 0.15] = np.nan
        refs[np.isnan(refs).all(axis=1), 0] = z[np.isnan(refs).all(axis=1)]
    floors = [0.6] * n_refs
    obs = observe(pred, refs, None, k)
    lo, hi = accuracy_range(obs.patterns, obs.counts, obs.pattern_gold, floors, k)
    b_lo, b_hi = _brute_force(pred, refs, floors, k)
    # the linear programme's range holds the integer one, and is within one item per column of it
    assert lo <= b_lo + 1e-9 and hi >= b_hi - 1e-9
    assert b_lo - lo <= n_refs / n + 1e-9 and hi - b_hi <= n_refs / n + 1e-9


def test_one_reference_gives_the_closed_form_bounds():
    rng = np.random.default_rng(4)
    n = 1000
    z = rng.integers(0, 2, n)
    pred = np.where(rng.random(n) < 0.8, z, 1 - z)
    ref = np.where(rng.random(n) < 0.9, z, 1 - z).astype(float)
    a_m = (pred == ref).mean()
    obs = observe(pred, ref, None, 2)
    for floor in (0.95, 0.9, 0.8):
        lo, hi = accuracy_range(obs.patterns, obs.counts, obs.pattern_gold, [floor], 2)
        assert lo == pytest.approx(a_m - (1 - floor), abs=1e-6)
        assert hi == pytest.approx(a_m + (1 - floor), abs=1e-6)


def test_gold_items_keep_their_class_in_the_range():
    pred = np.array([1, 1, 0, 0, 1, 0, 1, 0])
    ref = np.array([1, 0, 0, 1, 1, 0, 1, 0], dtype=float)
    gold = np.array([1, 0, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan])  # item 1: the classifier is wrong
    obs = observe(pred, ref, gold, 2)
    lo, hi = accuracy_range(obs.patterns, obs.counts, obs.pattern_gold, [0.5], 2)
    free = observe(pred, ref, None, 2)
    f_lo, f_hi = accuracy_range(free.patterns, free.counts, free.pattern_gold, [0.5], 2)
    assert hi < f_hi  # item 1 can no longer be one the classifier got right
    assert lo >= f_lo


def test_joint_floors_hold_together_with_the_probability():
    rng = np.random.default_rng(5)
    acc = rng.normal([0.8, 0.7, 0.9], 0.02, size=(4000, 3))
    floors = joint_floors(acc, 0.9)
    assert np.mean(np.all(acc >= floors, axis=1)) >= 0.9
    assert np.all(floors <= np.quantile(acc, 0.1, axis=0) + 1e-12)  # lower than the marginal quantiles
    assert np.mean(np.all(acc >= floors, axis=1)) < 0.93  # and no lower than needed
    one = rng.normal(0.8, 0.02, size=(4000, 1))
    assert joint_floors(one, 0.9)[0] == pytest.approx(np.quantile(one, 0.1))


def test_gold_to_width_is_the_smallest_number_that_reaches_the_width():
    n_items, acc, prob = 800, 0.8, 0.9
    n = gold_to_width(acc, n_items, 0.1, prob)

    def width(m):
        lo, hi = gold_only_accuracy_interval(int(round(acc * m)), m, n_items, prob, "equal-tailed")
        return hi - lo

    assert width(n) <= 0.1 < width(n - 1)
    # the normal approximation: (2 * 1.645)^2 * 0.16 / 0.1^2 = 173 gold items, 142 with the finite-population factor
    assert 130 < n < 160
    assert gold_to_width(acc, n_items, 1e-6, prob) == n_items


def _posterior(pred, refs, p1, seed=0, draws=400):
    """A two-class annotator posterior with item probabilities ``p1`` of class 1 and the
    data of a fit (what ``identified_accuracy`` reads)."""
    idata = az.from_dict(posterior={"x": np.zeros((2, draws))})
    post = AnnotatorPosterior(EvalData(pred.astype(float), predictions=pred), idata, lambda params: p1,
                              random_seed=seed)
    post._observed = observe(pred, refs, None, 2)
    post.model_spec = AnnotatorError()
    return post


def _crowd(seed=6, n=400):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 2, n)
    pred = np.where(rng.random(n) < 0.8, z, 1 - z)
    ref = np.where(rng.random(n) < 0.85, z, 1 - z)
    # the posterior's class probabilities: leaning on the reference, unsure where the two disagree
    p1 = np.where(ref == 1, 0.9, 0.1)
    p1 = np.where(pred != ref, 0.5, p1)
    return pred, ref.astype(float), p1


def test_identified_set_is_the_bounds_at_the_reference_floor_of_the_draws():
    pred, ref, p1 = _crowd()
    post = _posterior(pred, ref, p1)
    r = post.identified_accuracy(prob=0.9, diagnosis="prior-dominated")
    acc, ref_acc = [], []
    for _, _, z in post.label_arrays():
        acc.append((z == pred).mean(axis=1))
        ref_acc.append((z == ref).mean(axis=1))
    acc, ref_acc = np.concatenate(acc), np.concatenate(ref_acc)
    floor = np.quantile(ref_acc, 0.1)
    a_m = (pred == ref).mean()
    assert r.reference_floor[0] == pytest.approx(floor)
    assert (r.set_lower, r.set_upper) == pytest.approx((a_m - (1 - floor), a_m + (1 - floor)), abs=1e-6)
    p_lo, p_hi = hdi(acc, 0.9)
    assert (r.posterior_lower, r.posterior_upper) == pytest.approx((p_lo, p_hi))
    assert (r.lower, r.upper) == (min(p_lo, r.set_lower), max(p_hi, r.set_upper))
    assert r.reported and r.reason == "prior-dominated"
    assert r.gold_to_halve == gold_to_width(acc.mean(), pred.size, (r.upper - r.lower) / 2, 0.9)
    # without gold items the set is reported whatever the sensitivity check says
    quiet = post.identified_accuracy(prob=0.9, diagnosis="")
    assert quiet.reported and quiet.reason == "" and (quiet.lower, quiet.upper) == (r.lower, r.upper)


def test_metric_table_reports_the_identified_interval_without_gold(monkeypatch):
    pred, ref, p1 = _crowd()
    post = _posterior(pred, ref, p1)
    monkeypatch.setattr(AnnotatorPosterior, "_accuracy_diagnosis", lambda self: "prior-dominated")
    table = post.summary(["accuracy"])
    r = post.identified_accuracy(diagnosis="prior-dominated")
    assert tuple(table.loc["accuracy"].iloc[2:4]) == pytest.approx((r.lower, r.upper))
    assert any("prior-dominated" in c and "gold items" in c for c in table.attrs["caveats"])
    assert r.lower < r.posterior_lower - 0.05  # wider than the posterior's own interval
    monkeypatch.setattr(AnnotatorPosterior, "_accuracy_diagnosis", lambda self: "")
    unflagged = post.summary(["accuracy"])  # not flagged: still the identified interval
    assert tuple(unflagged.loc["accuracy"].iloc[2:4]) == pytest.approx((r.lower, r.upper))
    assert not any("flags it" in c for c in unflagged.attrs["caveats"])
    assert post.reported_interval("accuracy", {"zero_division": 0.0}, 0.9) is None  # another metric call


def test_plot_without_gold_draws_the_interval_summary_reports(monkeypatch):
    """Without gold items the figure drew the posterior alone, while summary(["accuracy"]) and the
    report give the posterior's interval joined with the identified set: it draws both now."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayeval.annotators.bounds import plot_true_accuracy

    pred, ref, p1 = _crowd()
    post = _posterior(pred, ref, p1)
    monkeypatch.setattr(AnnotatorPosterior, "_accuracy_diagnosis", lambda self: "prior-dominated")
    ax = plot_true_accuracy(post, measured=float((pred == ref).mean()), annotator_accuracy=0.85)
    bars = {c.get_label(): c.get_segments()[0][:, 0] for c in ax.collections
            if c.get_label().startswith(("posterior ", "reported"))}
    (rep,) = [v for k, v in bars.items() if k.startswith("reported 90% (with the identified set)")]
    (pst,) = [v for k, v in bars.items() if k.startswith("posterior 90%")]
    row = post.summary(["accuracy"]).loc["accuracy"]
    np.testing.assert_allclose(rep, [row.iloc[2], row.iloc[3]])
    np.testing.assert_allclose(pst, hdi(post.metric("accuracy").values.ravel(), 0.9))
    assert rep[0] < pst[0] - 0.05  # the reported interval is the wider one here
    lo, hi = ax.get_xlim()
    assert lo < rep[0] and hi > rep[1]  # all of it in view
    plt.close(ax.figure)


def test_identified_accuracy_needs_the_fits_data():
    idata = az.from_dict(posterior={"x": np.zeros((1, 10))})
    post = AnnotatorPosterior(EvalData([1.0, 0.0], predictions=[1, 0]), idata, lambda p: [0.9, 0.1])
    with pytest.raises(ValueError, match="needs the fit's annotations"):
        post.identified_accuracy()
    assert isinstance(IdentifiedAccuracy._fields, tuple)


def test_report_shows_the_reported_interval_and_says_why():
    from bayeval.report import report

    pred, ref, p1 = _crowd()
    post = _posterior(pred, ref, p1)
    r = post.identified_accuracy(diagnosis="")
    rep = report(post, title="annotators", metrics=["accuracy"])
    row = rep.tables["metrics"].loc["accuracy"]
    assert (row.iloc[2], row.iloc[3]) == pytest.approx((r.lower, r.upper))
    assert any("Reported instead" in t for t in rep.text)


def _lift_brute_force(pred, ref, floor, low, high):
    """min and max accuracy of ``pred`` over every truth with the reference right on at least
    ``floor`` of the items and the classifier's error rate on the reference's errors ``low``
    to ``high`` times its overall rate."""
    best = [np.inf, -np.inf]
    for z in itertools.product((0, 1), repeat=pred.size):
        z = np.asarray(z)
        wrong_ref, wrong_pred = ref != z, pred != z
        if (ref == z).mean() < floor - 1e-12:
            continue
        e = wrong_pred.mean()
        share = wrong_pred[wrong_ref].sum() / pred.size  # both wrong, over all items
        if not (low * e * wrong_ref.mean() - 1e-12 <= share <= high * e * wrong_ref.mean() + 1e-12):
            continue
        best = [min(best[0], 1 - e), max(best[1], 1 - e)]
    return best


def test_lift_band_narrows_the_set_as_the_algebra_says():
    # 100 items, classifier and reference agree on 80; reference right on at least 90%. Any
    # overlap: 0.8 -+ 0.1. Errors shared at most twice as often as by chance, never less
    # than by chance: the classifier's error e and the reference's w meet e = 0.2 - w + 2b,
    # b (both wrong) between e*w and 2*e*w; at w = 0.1 the independent b gives e = 0.125
    # (the highest accuracy 0.875); the lowest is e = 0.2 (w = 0: the agreement itself).
    pat = np.array([[1, 1], [1, 0], [0, 0], [0, 1]])
    cnt, gold = np.array([40.0, 10.0, 40.0, 10.0]), np.full(4, -1)
    assert accuracy_range(pat, cnt, gold, [0.9], 2) == pytest.approx((0.7, 0.9), abs=1e-6)
    assert accuracy_range(pat, cnt, gold, [0.9], 2, lift=(1, 2)) == pytest.approx((0.8, 0.875), abs=2e-4)
    # a band wide enough to allow every overlap changes nothing
    assert accuracy_range(pat, cnt, gold, [0.9], 2, lift=(0, 1e6)) == pytest.approx((0.7, 0.9), abs=2e-4)
    # a ceiling: the reference right on at most 92% (w >= 0.08). The most errors the cap on
    # sharing allows, e = (0.2 - w) / (1 - 4w), fall with w: at w = 0.08, e = 0.12 / 0.68
    lo, hi = accuracy_range(pat, cnt, gold, [0.9], 2, lift=(1, 2), ceilings=[0.92])
    assert (lo, hi) == pytest.approx((1 - 0.12 / 0.68, 0.875), abs=2e-4)


@pytest.mark.parametrize("seed", [0, 1])
def test_lift_band_range_holds_the_integer_range(seed):
    rng = np.random.default_rng(seed)
    n = 12
    z = rng.integers(0, 2, n)
    pred = np.where(rng.random(n) < 0.75, z, 1 - z)
    ref = np.where(rng.random(n) < 0.8, z, 1 - z)
    obs = observe(pred, ref.astype(float), None, 2)
    lo, hi = accuracy_range(obs.patterns, obs.counts, obs.pattern_gold, [0.7], 2, lift=(1, 2))
    b_lo, b_hi = _lift_brute_force(pred, ref, 0.7, 1, 2)
    assert lo <= b_lo + 1e-9 and hi >= b_hi - 1e-9  # every truth the assumption allows is inside
    f_lo, f_hi = accuracy_range(obs.patterns, obs.counts, obs.pattern_gold, [0.7], 2)
    assert f_lo - 1e-9 <= lo and hi <= f_hi + 1e-9  # and it is inside the set without it


def test_error_lift_in_the_fits_table_and_its_caveat(monkeypatch):
    pred, ref, p1 = _crowd()
    post = _posterior(pred, ref, p1)
    monkeypatch.setattr(AnnotatorPosterior, "_accuracy_diagnosis", lambda self: "prior-dominated")
    free = post.identified_accuracy(diagnosis="prior-dominated")
    assumed = post.identified_accuracy(diagnosis="prior-dominated", error_lift=(1, 2))
    assert assumed.error_lift == (1.0, 2.0) and free.error_lift is None
    assert (assumed.lower, assumed.upper) == pytest.approx((free.assumed_lower, free.assumed_upper))
    assert free.lower <= assumed.lower and assumed.upper <= free.upper
    assert assumed.upper < free.upper - 0.02  # the assumption narrows this one
    assert assumed.lower <= assumed.posterior_lower and assumed.upper >= assumed.posterior_upper
    # the generic table and the fit's table agree at the defaults; the caveat names the assumption
    table = post.summary(["accuracy"])
    assert tuple(table.loc["accuracy"].iloc[2:4]) == pytest.approx((free.lower, free.upper))
    assert any("times its overall rate" in c and f"{free.assumed_upper:.3f}" in c for c in table.attrs["caveats"])
    with pytest.raises(ValueError, match="0 <= low <= 1 <= high"):
        post.identified_accuracy(error_lift=(1.5, 2))
    with pytest.raises(TypeError, match="pair"):
        post.identified_accuracy(error_lift=2)
    with pytest.raises(TypeError, match="error_lift"):
        post.summary(["accuracy"], error_lift=(1, 2))


def test_an_assumption_the_annotations_contradict_gives_the_set_without_it(monkeypatch):
    import bayeval.annotators.posterior as posterior_module

    pred, ref, p1 = _crowd()
    post = _posterior(pred, ref, p1)
    free = post.identified_accuracy(diagnosis="")
    real = posterior_module.accuracy_range

    def contradicted(*args, lift=None, **kwargs):  # no assignment meets any assumption
        return (float("nan"), float("nan")) if lift is not None else real(*args, **kwargs)

    monkeypatch.setattr(posterior_module, "accuracy_range", contradicted)
    r = post.identified_accuracy(diagnosis="", error_lift=(1, 2))
    assert r.error_lift is None  # not the posterior's narrow interval: the set without the assumption
    assert (r.lower, r.upper) == pytest.approx((free.lower, free.upper))
    assert r.upper - r.lower > r.posterior_upper - r.posterior_lower + 0.1


def test_a_set_with_no_width_names_no_gold_count_and_says_what_gold_items_would_check(monkeypatch):
    """Classifier and both annotators agree on every item: the floors take the annotators to be
    right everywhere and the set is [1, 1]. Half of no width is no count of gold items (it was
    "about 143 random gold items give an interval half as wide"), nor does an assumption narrow it."""
    rng = np.random.default_rng(2)
    z = (rng.random(150) < 0.4).astype(int)
    refs = np.c_[z, z].astype(float)
    post = _posterior(z, refs, z.astype(float))
    monkeypatch.setattr(AnnotatorPosterior, "_accuracy_diagnosis", lambda self: "prior-data conflict")
    r = post.identified_accuracy(diagnosis="prior-data conflict")
    assert r.upper - r.lower < 1e-6 and r.reference_floor == pytest.approx((1.0, 1.0))
    assert r.gold_to_halve == 0
    (caveat,) = [c for c in post.summary(["accuracy"]).attrs["caveats"] if c.startswith("true_accuracy")]
    assert "half as wide" not in caveat and "narrow" not in caveat
    assert "no width" in caveat and "share their errors" in caveat and "gold items would check" in caveat.lower()
    assert "fit's posterior" in caveat  # the floors are the model's, not the annotations' alone
    lifted = post.identified_accuracy(diagnosis="", error_lift=(1, 2))
    assert lifted.gold_to_halve == 0
    assert "half as wide" not in identified_sentence(lifted)


def test_the_caveat_does_not_say_an_assumption_narrows_the_set_when_it_does_not():
    """Where the range under the stated overlap assumption is the set itself (to the three
    decimals shown), the caveat says it does not narrow it, not "narrows it to" the same range."""
    same = IdentifiedAccuracy(0.805, 0.41666666666, 1.0, 0.67, 0.917, 0.41666666666, 1.0, (0.72, 0.64), 0.9,
                              True, 17, "prior-dominated", None, 0.4166666667, 1.0)
    text = identified_sentence(same)
    assert "narrows it to" not in text and "does not narrow it here" in text
    assert "about 17 random gold items give an interval half as wide" in text
    narrower = same._replace(assumed_lower=0.52, assumed_upper=0.95)
    assert "narrows it to [0.520, 0.950]" in identified_sentence(narrower)


def test_metric_table_says_the_other_metrics_are_not_widened_without_gold():
    """Without gold items only the accuracy row is widened to the identified set; precision, recall and
    f_score kept the posterior's narrow intervals with no word (on a real crowd recall read [0.970, 0.995]
    against a true 0.936). They stay the posterior's, and a caveat names them and quotes how far the
    accuracy's own posterior interval sits inside the set."""
    pred, ref, p1 = _crowd()
    post = _posterior(pred, ref, p1)
    r = post.identified_accuracy(diagnosis="")
    table = post.summary(["accuracy", "precision", "recall", "f_score"])
    for m in ("precision", "recall", "f_score"):  # not widened: the posterior's HDI
        assert tuple(table.loc[m].iloc[2:4]) == pytest.approx(hdi(post.metric(m).values.ravel(), 0.9))
    (caveat,) = [c for c in table.attrs["caveats"] if "not widened" in c]
    assert caveat.startswith("precision, recall, f_score: not widened")
    assert f"[{r.posterior_lower:.3f}, {r.posterior_upper:.3f}]" in caveat and f"[{r.lower:.3f}, {r.upper:.3f}]" in caveat
    assert f"About {r.gold_to_halve} random gold items" in caveat
    (alone,) = [c for c in post.summary(["recall"]).attrs["caveats"] if "not widened" in c]
    assert alone.startswith("recall: not widened")
    assert not any("not widened" in c for c in post.summary(["accuracy"]).attrs["caveats"])


def test_metric_table_carries_no_caveats_of_other_models():
    """The annotator posterior's EvalData has no vetted labels and the 0/1 predictions for scores, so
    EvalData's caveats (worded for a calibration curve: "no vetted labels ... Vet some items",
    "100% of the scores are exactly 0 or 1 ... calibration curve ... Vet a few of the tied items")
    came with summary(["accuracy"]) and the report; they do not apply to this model and are left out."""
    from bayeval import Posterior
    from bayeval.core.data import data_caveats
    from bayeval.report import report

    pred, ref, p1 = _crowd()
    post = _posterior(pred, ref, p1)
    foreign = ("saturated", "calibration curve", "no vetted labels", "Vet ")
    caveats = post.summary(["accuracy"]).attrs["caveats"]
    assert caveats and not any(w in c for c in caveats for w in foreign)
    assert any(c.startswith("true_accuracy") for c in caveats)  # its own stays
    rep = report(post, title="annotators", metrics=["accuracy"])
    assert not any(w in m for msgs in rep.warnings.values() for m in msgs for w in foreign)
    # other posteriors keep them; a model names the kinds that apply to it
    plain = Posterior.from_probabilities(post.data, p1, draws=20, random_seed=0)
    assert [c.split(":")[0] for c in post.data.caveats(plain)][0] == "no vetted labels"
    assert any("saturated" in c for c in post.data.caveats(plain))

    class ScoresOnly:
        data_caveat_kinds = ("scores",)

    only = data_caveats(post.data, ScoresOnly())
    assert len(only) == 1 and "saturated" in only[0]
    ScoresOnly.data_caveat_kinds = ("labels", "calibration")
    with pytest.raises(ValueError, match=r"names \['calibration'\].*subset of \('labels', 'scores'\)"):
        data_caveats(post.data, ScoresOnly())


def test_metric_table_says_the_other_metrics_are_not_guarded_with_gold():
    """With gold items the accuracy row is guarded (widened to hold the gold items' own interval) but
    precision, recall and f_score kept the posterior's intervals with no word; a caveat now names them,
    says only the accuracy is guarded, and quotes its posterior interval beside the gold items' own."""
    from bayeval.annotators.gold import guarded_reading

    pred, ref, p1 = _crowd()
    post = _posterior(pred, ref, p1)
    post.gold_check = {"right": 24, "n_gold": 30, "n_items": pred.size, "weight": 0.5, "p_value": 0.5}
    g = guarded_reading(post.metric("accuracy").values.ravel(), 24, 30, pred.size, 0.9, "hdi")
    assert g.gold_upper - g.gold_lower > 2 * (g.posterior_upper - g.posterior_lower)  # the guard widens
    table = post.summary(["accuracy", "precision", "recall", "f_score"])
    assert tuple(table.loc["accuracy"].iloc[2:4]) == pytest.approx((g.lower, g.upper))
    for m in ("precision", "recall", "f_score"):  # not widened: the posterior's HDI
        assert tuple(table.loc[m].iloc[2:4]) == pytest.approx(hdi(post.metric(m).values.ravel(), 0.9))
    (caveat,) = [c for c in table.attrs["caveats"] if "not widened" in c]
    assert caveat.startswith("precision, recall, f_score: not widened. With gold items only the accuracy is guarded")
    assert "these rows are the posterior's own intervals" in caveat
    assert f"posterior interval [{g.posterior_lower:.3f}, {g.posterior_upper:.3f}]" in caveat
    assert f"the 30 gold items alone allow [{g.gold_lower:.3f}, {g.gold_upper:.3f}]" in caveat
    (alone,) = [c for c in post.summary(["recall"]).attrs["caveats"] if "not widened" in c]
    assert alone.startswith("recall: not widened") and "this row is the posterior's own interval, which rests" in alone
    assert not any("not widened" in c for c in post.summary(["accuracy"]).attrs["caveats"])


@pytest.mark.parametrize("gold", [False, True])
def test_report_says_beside_the_metric_table_which_rows_are_not_widened(gold):
    """The report's metric table showed the widened accuracy beside precision, recall and f_score, the
    posterior's own intervals, with no word beside the table (only summary() said so); a note now does,
    with and without gold items."""
    from bayeval.report import report

    pred, ref, p1 = _crowd()
    post = _posterior(pred, ref, p1)
    if gold:
        post.gold_check = {"right": 24, "n_gold": 30, "n_items": pred.size, "weight": 0.5, "p_value": 0.5}
    rep = report(post, title="annotators", metrics=["accuracy", "precision", "recall", "f_score"])
    (note,) = [m for m in rep.notes["metrics"] if "not widened" in m]
    assert note.startswith("precision, recall, f_score: not widened -- the posterior's own intervals.")
    assert "Only the accuracy row is widened" in note
    assert note in rep.to_markdown() and rep.notes["metrics"].index(note) == 1  # right after the draws' note
    for m in ("precision", "recall", "f_score"):  # the rows it speaks of are the posterior's HDI
        assert tuple(rep.tables["metrics"].loc[m].iloc[2:4]) == pytest.approx(hdi(post.metric(m).values.ravel(), 0.9))
    alone = report(post, title="annotators", metrics=["accuracy"])
    assert not any("not widened" in m for m in alone.notes["metrics"])
    from bayeval._report_text import unwidened_note

    assert unwidened_note(["accuracy"], ["recall"]).startswith("recall: not widened -- the posterior's own interval.")
    assert unwidened_note([], ["recall"]) is None and unwidened_note(["accuracy"], []) is None


@pytest.mark.parametrize("gold", [False, True])
def test_report_reads_the_widened_accuracy_as_what_it_is_not_as_a_probability_interval(gold):
    """The report read the identified set (no gold items) and the guarded interval (gold items) as
    "With 90% probability the accuracy on these 400 items lies between 0.482 and 0.953", and its
    table note said the 90% HDI of every row is over the posterior draws: neither interval is a
    posterior probability interval. The accuracy row is now read as what it is; the other rows keep
    their posterior reading, and the note names the widened row as the exception."""
    from bayeval.report import report

    pred, ref, p1 = _crowd()
    post = _posterior(pred, ref, p1)
    if gold:
        post.gold_check = {"right": 24, "n_gold": 30, "n_items": pred.size, "weight": 0.5, "p_value": 0.5}
    rep = report(post, title="annotators", metrics=["accuracy", "precision"])
    lo, hi = rep.tables["metrics"].loc["accuracy"].iloc[2:4]
    (acc,) = [t for t in rep.text if "the accuracy on these 400 items" in t]
    assert "probability the accuracy" not in acc and f"between {lo:.3f} and {hi:.3f}" in acc, acc
    if gold:
        assert acc.startswith("Guarded by the 30 gold items, the accuracy on these 400 items lies between")
        assert "not a posterior probability interval" in acc
    else:
        assert acc.startswith("The annotations allow the accuracy on these 400 items to lie anywhere between")
        assert "an identified set, not a probability interval" in acc
    assert any(t.startswith("With 90% probability the precision on these 400 items lies between") for t in rep.text)
    (draws,) = [m for m in rep.notes["metrics"] if m.startswith("mean, sd and the 90% highest-density interval")]
    assert "The accuracy row is the exception: its interval is not the draws' highest-density interval" in draws
    alone = report(post, title="annotators", metrics=["precision"])  # nothing widened: the note as it was
    assert "exception" not in alone.notes["metrics"][0]
    assert not any("probability the accuracy" in t for t in rep.to_markdown().splitlines())
