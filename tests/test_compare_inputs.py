"""bayeval.compare: what a comparison keys, orders and aligns on (QA sweep D).

The cache of ``Comparison.metric`` keyed on ``id(metric)`` and ``repr(options)``, so a
second lambda and a long threshold grid got another request's draws; ``select`` returned
file order once the comparison was decided; the dict's order changed the draws; a dict of
pandas Series was read by position whatever the index; long names ran off the plot.
"""

from __future__ import annotations

import gc
import warnings
import weakref

import numpy as np
import pandas as pd
import pytest
from _figures import assert_axis_labels_inside

import bayeval as be
from bayeval.compare import Comparison, ComparisonModel
from bayeval.models.joint import JointCalibration, joint_data

FIT = dict(random_seed=0, draws=100, model="logistic")


def _pool(n=300, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    a, b = 2 * y + rng.normal(0, 1, n), 0.7 * y + rng.normal(0, 1, n)
    return a, b, np.where(np.arange(n) < 40, y, np.nan), rng


@pytest.fixture(scope="module")
def pool():
    a, b, lab, _ = _pool()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return a, b, lab, be.compare({"a": a, "b": b}, lab, **FIT)


def test_a_second_callable_metric_gets_its_own_draws(pool):
    """The cache keyed on id(metric): the second lambda, made where the first was freed, got its draws."""
    *_, cmp = pool
    assert cmp.prob_better("a", "b", lambda z, s: z[..., s > 1].mean(-1)) == 1.0
    assert cmp.prob_better("a", "b", lambda z, s: -z[..., s > 1].mean(-1)) == 0.0

    def share(z, s):
        return z[..., s > 0.5].mean(-1)

    first = cmp.metric(share)
    ref = weakref.ref(share)
    del share
    gc.collect()
    assert ref() is not None  # the cache holds the callable: its id cannot go to another object
    assert cmp.metric(ref()) is first


def test_long_array_options_are_keyed_on_their_values(pool):
    """repr() abbreviates arrays of more than 1,000 values: a grid with one middle value changed was a hit."""
    *_, cmp = pool
    t = np.linspace(-3, 3, 2001)
    t2 = t.copy()
    t2[1000] += 1e-3
    m1 = cmp.metric("precision_recall_curve", thresholds=t)
    m2 = cmp.metric("precision_recall_curve", thresholds=t2)
    assert m2 is not m1 and float(m2.threshold[1000]) == t2[1000]
    assert cmp.metric("precision_recall_curve", thresholds=t.copy()) is m1  # equal values: kept
    assert cmp.metric("precision_recall_curve", thresholds=t.astype(np.float32)) is not m1  # another dtype


def test_select_of_a_decided_comparison_ranks_by_the_gap_not_by_file_order(pool):
    *_, cmp = pool
    assert cmp.prob_better("a", "b") == 1.0  # decided in every draw: no label can move P(a better)
    first_free = cmp.data.item_ids[np.flatnonzero(~cmp.data.vetted)[:5]]
    by_gap = cmp.select(5, "a", "b", target="gap")
    for args in (("a", "b"), ("b", "a"), ()):
        with pytest.warns(UserWarning, match=r"in every posterior draw.*target='gap'"):
            ids = cmp.select(5, *args)
        assert not np.array_equal(ids, first_free)
        np.testing.assert_array_equal(ids, by_gap)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cmp.select(5, "a", "b", target="gap")  # asked for: no warning
    model = ComparisonModel("a", "b", model="logistic")
    with pytest.warns(UserWarning, match="target='gap'"):
        pos = model.choose(cmp.posterior, 5)
    np.testing.assert_array_equal(cmp.data.item_ids[pos], by_gap)


def test_select_where_the_gap_is_the_same_in_every_draw_ranks_by_the_metric(pool):
    """Two copies of one classifier: the gap is 0 in every draw, so select() gave every item 0, returned the first
    unvetted items in file order and warned that the comparison was decided (P(a better) = 0.5, undecided)."""
    from bayeval.compare import expected_change

    a, _, lab, _ = pool
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cmp = be.compare({"a": a, "b": a.copy()}, lab, **FIT)
    assert cmp.prob_better("a", "b") == 0.5 and cmp.decided("a", "b") is None
    free = np.flatnonzero(~cmp.data.vetted)
    own = expected_change(cmp.posterior, cmp.metric().sel(model="a").values)
    by_metric = cmp.data.item_ids[free[np.argsort(-own[free], kind="stable")][:5]]
    assert not np.array_equal(by_metric, cmp.data.item_ids[free[:5]])  # not file order
    for target in ("prob", "gap"):
        with pytest.warns(UserWarning, match=r"gap a - b is 0 in every posterior draw.*'equivalent'") as rec:
            ids = cmp.select(5, "a", "b", target=target)
        assert not any("is decided" in str(w.message) for w in rec)
        np.testing.assert_array_equal(ids, by_metric)
    with pytest.warns(UserWarning, match="in every posterior draw"):
        pos = ComparisonModel("a", "b", model="logistic").choose(cmp.posterior, 5)
    np.testing.assert_array_equal(cmp.data.item_ids[pos], by_metric)


def test_the_dict_order_does_not_change_the_draws(pool):
    """The same seed gave gaps 0.5013 and 0.4956 for {"good", "weak"} and {"weak", "good"}."""
    a, b, lab, cmp = pool
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        rev = be.compare({"b": b, "a": a}, lab, **FIT)
    np.testing.assert_array_equal(rev.difference("a", "b").values, cmp.difference("a", "b").values)
    # the outputs keep the order given
    assert rev.names == ["b", "a"] and list(rev.metric().model.values) == ["b", "a"]
    np.testing.assert_array_equal(rev.data.features, np.column_stack([b, a]))
    assert list(rev.data.feature_names) == ["b", "a"]
    assert rev.posterior.data.feature_names.tolist() == ["a", "b"]  # fitted in sorted order


def test_comparison_model_fits_the_same_draws_whatever_the_columns_order(pool):
    """ComparisonModel.fit kept the data's column order: {a, b} and {b, a} gave other draws for one seed."""
    from bayeval.models.joint import joint_data

    a, b, lab, cmp = pool
    model = ComparisonModel("a", "b", model="logistic")
    fit = {k: v for k, v in FIT.items() if k != "model"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        rev = model.fit(joint_data({"b": b, "a": a}, lab), **fit)
        fwd = model.fit(joint_data({"a": a, "b": b}, lab), **fit)
    m_rev, m_fwd = model.comparison(rev).metric(), model.comparison(fwd).metric()
    for name in ("a", "b"):
        np.testing.assert_array_equal(m_rev.sel(model=name).values, m_fwd.sel(model=name).values)
        # and they are compare()'s draws for the same seed
        np.testing.assert_array_equal(m_fwd.sel(model=name).values, cmp.metric().sel(model=name).values)
    assert rev.data.feature_names.tolist() == ["a", "b"]  # fitted in sorted order, as compare() fits
    np.testing.assert_array_equal(rev.data.features, np.column_stack([a, b]))


def test_series_are_matched_by_their_index(pool):
    a, b, lab, cmp = pool
    rng = np.random.default_rng(1)
    ids = pd.Index([f"img{i}" for i in range(a.size)])
    sa = pd.Series(a, index=ids)
    sb = pd.Series(b, index=ids).iloc[rng.permutation(a.size)]
    sl = pd.Series(lab, index=ids).iloc[rng.permutation(a.size)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        aligned = be.compare({"a": sa, "b": sb}, sl, **FIT)
    np.testing.assert_array_equal(aligned.data.features, np.column_stack([a, b]))
    np.testing.assert_array_equal(aligned.data.labels, lab)
    np.testing.assert_array_equal(aligned.difference("a", "b").values, cmp.difference("a", "b").values)
    with pytest.raises(ValueError, match=r"`scores\['a'\]` and `scores\['b'\]` are pandas objects whose "
                                         r"indexes name different items: 1 of the 300 ids"):
        be.compare({"a": sa, "b": sb.iloc[1:]}, lab)
    other = pd.Series(lab, index=[f"x{i}" for i in range(a.size)])
    with pytest.raises(ValueError, match=r"`scores\['a'\]` and `labels` are pandas objects whose indexes name "
                                         r"different items: 300 of the 300"):
        be.compare({"a": sa, "b": sb}, other)
    twice = pd.Series(b, index=ids[:1].append(ids[:-1]))
    with pytest.raises(ValueError, match="index repeats ids"):
        be.compare({"a": sa, "b": twice}, lab)
    with pytest.raises(ValueError, match=r"`scores` and `labels` are pandas objects whose indexes name different"):
        be.compare(pd.DataFrame({"a": sa, "b": sb}), other)


def test_the_first_classifier_given_sets_the_item_order_whatever_the_names(pool):
    """The fit sees the classifiers sorted by name; the items stay in the order of the first one given."""
    a, b, lab, _ = pool
    rng = np.random.default_rng(2)
    ids = pd.Index([f"img{i}" for i in range(a.size)])
    perm = rng.permutation(a.size)
    zb = pd.Series(b, index=ids).iloc[perm]  # named "z_b": sorted after "a", but given first
    sa = pd.Series(a, index=ids)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cmp = be.compare({"z_b": zb, "a": sa}, pd.Series(lab, index=ids), **FIT)
    np.testing.assert_array_equal(cmp.data.features, np.column_stack([b[perm], a[perm]]))
    np.testing.assert_array_equal(cmp.data.labels, lab[perm])
    np.testing.assert_array_equal(cmp.posterior.data.features, np.column_stack([a[perm], b[perm]]))


def test_a_reordered_series_beside_a_plain_array_is_refused():
    """Which order the plain array follows cannot be told (the rule of EvalData and joint_data)."""
    from bayeval.compare.comparison import _aligned

    s = pd.Series([0.1, 0.2, 0.3], index=["z", "y", "x"])
    same = _aligned({"a": s, "b": np.array([0.3, 0.2, 0.1])}, pd.Series([1.0, np.nan, 0.0], index=["z", "y", "x"]),
                    None)
    assert same[1].index.tolist() == ["z", "y", "x"]  # one order throughout: nothing moved
    with pytest.raises(ValueError, match=r"plain array with no index"):
        be.compare({"a": s, "b": np.array([0.3, 0.2, 0.1])}, pd.Series([1.0, np.nan, 0.0], index=["x", "y", "z"]))


def test_plot_keeps_long_names_inside_the_figure():
    """Three names of ~40 characters: the legend ran past the figure's left edge over the histograms and the
    y-label, and the rotated bar labels took most of the figure's height."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    a, b, lab, rng = _pool(seed=3)
    names = {"gradient_boosting_v2_calibrated_isotonic": a, "logistic_regression_baseline_production": b,
             "mid model (new, 2024-05-01 checkpoint)": 0.6 * a + rng.normal(0, 1, a.size)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cmp = be.compare(names, lab, **FIT)
    fig = cmp.plot()
    try:
        ax0, ax1 = fig.axes
        for ax in (ax0, ax1):
            assert_axis_labels_inside(ax)
        box = fig.bbox
        legend = ax0.get_legend().get_window_extent()
        assert box.x0 <= legend.x0 and legend.x1 <= box.x1 and box.y0 <= legend.y0
        assert legend.y1 <= ax0.get_window_extent().y0  # below the panel: covers neither histograms nor labels
        for text in ax1.get_yticklabels():
            t = text.get_window_extent()
            assert box.x0 <= t.x0 and t.x1 <= box.x1, text.get_text()
        assert ax0.get_window_extent().height > 0.4 * box.height  # the names do not squeeze the panels
        assert [t.get_text() for t in ax0.get_legend().get_texts()] == [n for n in cmp.ranking().index[1:]]
    finally:
        plt.close(fig)


# ------------------------------------------------------ QA sweep of session 33 (fix C)


def test_pandas_inputs_name_the_items_and_select_returns_their_ids(pool):
    """The joint data dropped the index: select() returned row positions (120, 161, ...) as the "item ids"
    of Series indexed 1000 .. 1299, so a person's labels went to other items."""
    a, b, lab, _ = pool
    ids = np.arange(1000, 1000 + a.size)
    p = np.random.default_rng(4).permutation(a.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        named = be.compare({"a": pd.Series(a[p], index=ids[p]), "b": pd.Series(b, index=ids)},
                           pd.Series(lab, index=ids), **FIT)
        plain = be.compare({"a": a[p], "b": b[p]}, lab[p], **FIT)  # the same items by position
        sel, pos = named.select(5), plain.select(5)
    np.testing.assert_array_equal(named.data.item_ids, ids[p])  # the first classifier's order
    np.testing.assert_array_equal(plain.data.item_ids, np.arange(a.size))
    np.testing.assert_array_equal(sel, ids[p][pos])  # the same items, named by their ids
    # docs/compare.md's loop: `labels[ids] = ask_a_person(ids)`, with a labels Series and with an array
    labels = pd.Series(lab, index=ids)
    assert labels[sel].isna().all()
    labels[sel] = 1.0
    assert labels.notna().sum() == np.isfinite(lab).sum() + 5 and (labels.loc[sel] == 1.0).all()
    arr = lab[p].copy()
    assert np.isnan(arr[pos]).all()
    arr[pos] = 1.0
    assert np.isfinite(arr).sum() == np.isfinite(lab).sum() + 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        frame = be.compare(pd.DataFrame({"a": a[p], "b": b[p]}, index=ids[p]), pd.Series(lab, index=ids), **FIT)
    np.testing.assert_array_equal(frame.data.item_ids, ids[p])
    np.testing.assert_array_equal(frame.difference("a", "b").values, named.difference("a", "b").values)
    with pytest.raises(ValueError, match=r"`scores\['a'\]`'s index repeats ids \(e.g. 1000\)"):
        be.compare({"a": pd.Series(a, index=np.r_[1000, ids[:-1]]), "b": b}, lab, **FIT)


def test_select_with_one_classifier_given_pairs_it_with_the_best_ranked_other(pool):
    """select(n, "c") ignored "c" and chose for the two classifiers ranked first."""
    a, b, lab, _ = pool
    c = b + np.random.default_rng(5).normal(0, 1, a.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cmp = be.compare({"a": a, "b": b, "c": c}, lab, **FIT)
        first, second, last = cmp.ranking().index
        top = cmp.select(5)
        np.testing.assert_array_equal(top, cmp.select(5, first, second))
        paired = cmp.select(5, last)
        assert not np.array_equal(paired, top)
        np.testing.assert_array_equal(paired, cmp.select(5, last, first))
        np.testing.assert_array_equal(cmp.select(5, b=last), cmp.select(5, first, last))
        np.testing.assert_array_equal(cmp.select(5, first), top)  # the best-ranked: paired with the second
    with pytest.raises(ValueError, match=f"two different classifiers; got '{last}' twice"):
        cmp.select(5, last, last)
    with pytest.raises(ValueError, match="Unknown classifier 'd'"):
        cmp.select(5, "d")


def test_an_option_given_as_one_value_is_one_value_per_draw(pool):
    """recall=0.5 left a dim of size 1: every table said "choose one value of recall"."""
    *_, cmp = pool
    kw = dict(metric="precision_at_recall", recall=0.5)
    m = cmp.metric(**kw)
    assert m.dims == ("chain", "draw", "model") and float(m.recall) == 0.5
    summary = cmp.difference_summary("a", "b", **kw)
    gap = cmp.difference("a", "b", **kw).values.ravel()
    assert summary["mean"] == pytest.approx(gap[np.isfinite(gap)].mean(), rel=1e-12)
    assert isinstance(cmp.prob_better("a", "b", **kw), float)
    assert cmp.ranking(**kw).index.tolist() == ["a", "b"]
    assert cmp.summary(**kw)[["better", "worse"]].values.tolist() == [["a", "b"]]
    assert cmp.decided("a", "b", **kw) in ("a", "b", None)
    assert cmp.prob_best(**kw).sum() == pytest.approx(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert len(cmp.select(3, "a", "b", **kw)) == 3
    assert cmp.metric("precision_at_recall", recall=[0.5]).dims == ("chain", "draw", "model", "recall")
    with pytest.raises(ValueError, match="extra dims \\['recall'\\]: choose one value of recall"):
        cmp.difference_summary("a", "b", "precision_at_recall", recall=[0.5, 0.8])


def test_compare_reads_each_classifier_by_its_transform(pool, tmp_path):
    """A log-odds column was always read as "auto" (standardized): compare had no way to say otherwise."""
    from bayeval.compare.comparison import ColumnTransforms

    a, b, lab, _ = pool
    prob, logodds = 1 / (1 + np.exp(-a)), 3 * b
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mixed = be.compare({"p": prob, "nb": logodds}, lab, transform={"nb": "logodds"}, **FIT)
        auto = be.compare({"p": prob, "nb": logodds}, lab, **FIT)
        both = be.compare({"p": logodds, "nb": logodds}, lab, transform="logodds", **FIT)
    # fitted with the columns sorted by name: nb, p
    assert [i["scale"] for i in mixed.posterior.infos] == ["logodds", "logit"]
    assert [i["scale"] for i in auto.posterior.infos] == ["standardize", "logit"]
    assert isinstance(mixed.posterior.joint, ColumnTransforms)
    assert mixed.difference_summary("p", "nb")["mean"] != auto.difference_summary("p", "nb")["mean"]
    assert type(both.posterior.joint) is JointCalibration and both.posterior.joint.transform == "logodds"
    path = tmp_path / "mixed.nc"
    be.save(mixed.posterior, path)
    again = be.load(path)
    assert again.model_spec.transforms == {"p": "auto", "nb": "logodds"}
    np.testing.assert_array_equal(Comparison(again).difference("p", "nb").values,
                                  mixed.difference("p", "nb").values)
    for transform, match in (({"zz": "logodds"}, r"not compared: \['zz'\]"), ("logx", "`transform` must be one"),
                             ({"nb": "x"}, r"`transform\['nb'\]` must be one")):
        with pytest.raises(ValueError, match=match):
            be.compare({"p": prob, "nb": logodds}, lab, transform=transform, **FIT)


@pytest.mark.parametrize("scores, match", [
    (lambda a, b: {"prob": 1 / (1 + np.exp(-a)), "hard": (b > 0.5) * 1.0},
     r"scores of 'hard' are all exactly 0 or 1 \(\d+ ones, \d+ zeros\): hard decisions.*vetted_only"),
    (lambda a, b: {"prob": 1 / (1 + np.exp(-a)), "zero": np.zeros(a.size)},
     r"scores of 'zero' are all exactly 0 or 1 \(0 ones, 300 zeros\): one value throughout"),
    (lambda a, b: pd.DataFrame({"id": [f"i{j}" for j in range(a.size)], "a": a, "b": b}),
     r"column 'id' holds str values \(e.g. 'i0'\).*df.set_index\('id'\)"),
    (lambda a, b: pd.DataFrame(np.c_[a, b], columns=["a", "a"]), r"the name\(s\) \['a'\] occur more than once"),
    (lambda a, b: {"a": np.c_[a, a], "b": b}, r"scores of 'a' have the shape \(300, 2\): one 1-D array"),
    (lambda a, b: {"a": a, "b": ["x"] * a.size}, r"scores of 'b' must be numbers, one per item"),
])
def test_errors_at_the_boundary_name_the_classifier_and_the_fix(pool, scores, match):
    """A 0/1 column said "transform='logit' needs ..." (a transform never set, a one-classifier fix), a text
    column "could not convert string to float", a repeated column name "needs at least two classifiers",
    2-D scores that the lengths differ."""
    a, b, lab, _ = pool
    with pytest.raises(ValueError, match=match):
        be.compare(scores(a, b), lab, **FIT)


def test_the_joint_model_names_the_classifier_whose_scores_it_cannot_read(pool):
    a, *_ = pool
    d = joint_data({"prob": 1 / (1 + np.exp(-a)), "hard": (a > 0) * 1.0})
    with pytest.raises(ValueError, match=r"Classifier 'hard': transform='logit' needs"):
        JointCalibration().features(d)


def test_logit_on_a_classifiers_margins_is_refused_before_the_fit_naming_it_in_compare_s_words(pool):
    """compare({"zz": probabilities, "aa": margins}, transform="logit") failed after trying every candidate, with
    "Classifier 'aa' (score column 0)" (its place among the names sorted, not as given) and Calibration's advice
    ("Use Calibration('logistic') ... with transform='standardize'"), which compare does not take."""
    a, b, lab, _ = pool
    for transform in ("logit", {"zz": "logit", "aa": "logit"}, {"aa": "logit"}):
        with pytest.raises(ValueError) as info:
            be.compare({"zz": 1 / (1 + np.exp(-a)), "aa": 3 * b}, lab, transform=transform, **FIT)
        text = str(info.value)
        assert "classifier 'aa'" in text and "'zz'" not in text and "score column" not in text, text
        assert "transform={'aa': 'standardize'}" in text and "Calibration(" not in text, text
    # logit on the probabilities alone is read, not refused
    cmp = be.compare({"zz": 1 / (1 + np.exp(-a)), "aa": 3 * b}, lab, transform={"zz": "logit"}, **FIT)
    assert cmp.names == ["zz", "aa"]


def test_cli_compare_checks_width_before_the_fit(tmp_path, capsys, monkeypatch):
    """--width -1 failed only after the whole fit, with "`width` must lie in (0, inf)"."""
    from bayeval.cli import main
    from bayeval.compare import comparison

    a, b, lab, _ = _pool()
    path = tmp_path / "s.csv"
    pd.DataFrame({"A": a, "B": b, "y": lab}).to_csv(path, index=False)

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before --width was checked")

    monkeypatch.setattr(comparison, "compare", no_fit)
    assert main(["compare", str(path), "--score", "A", "B", "--label", "y", "--width", "-1"]) == 2
    assert "--width must be a positive half-width of the gap (e.g. 0.01), got -1" in capsys.readouterr().err


def test_a_threshold_outside_a_classifiers_scores_warns_once_per_call_naming_it(pool):
    """`Posterior.metric(..., threshold=t)` and `vetted_only` warned where t flags no item or every item
    (recall 0 or 1 whatever the labels); the comparison's methods at such a threshold were silent. Each
    now warns once per call, naming the classifier(s) whose scores t lies outside; `summary` and
    `ranking` say it among their caveats, as a posterior's summary does."""
    from bayeval.core.summary import ThresholdWarning

    a, b, _, cmp = pool
    between = float(a.max() + b.max()) / 2  # above every score of b, below a's largest: flags some of a's items

    def said(call):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = call()
        return out, [str(w.message) for w in caught if issubclass(w.category, ThresholdWarning)]

    calls = {"metric": lambda t: cmp.metric("recall", threshold=t),
             "difference": lambda t: cmp.difference("a", "b", "recall", threshold=t),
             "prob_better": lambda t: cmp.prob_better("a", "b", "recall", threshold=t),
             "rope": lambda t: cmp.rope("a", "b", "recall", threshold=t),
             "prob_best": lambda t: cmp.prob_best("recall", threshold=t),
             "difference_summary": lambda t: cmp.difference_summary("a", "b", "recall", threshold=t),
             "decided": lambda t: cmp.decided("a", "b", "recall", width=0.01, threshold=t),
             "select": lambda t: cmp.select(3, metric="recall", threshold=t)}
    for name, call in calls.items():
        _, msgs = said(lambda: call(between))
        assert len(msgs) == 1, (name, msgs)
        assert msgs[0].startswith(f"bayeval: recall of b at threshold={between!r}: the threshold") and \
            "flags no item: it lies above every score" in msgs[0] and "of a at" not in msgs[0], (name, msgs)
        assert said(lambda: call(between))[1] == msgs, name  # again: the kept draws warn as well
        assert said(lambda: call(0.5))[1] == [], name  # inside both classifiers' scores: nothing said
    _, msgs = said(lambda: cmp.metric("precision", threshold={"a": float(a.min()), "b": 0.5}))
    assert len(msgs) == 1 and "precision of a at threshold=" in msgs[0] and "flags every item" in msgs[0]
    _, msgs = said(lambda: cmp.difference("a", "b", "recall", threshold=100.0))
    assert len(msgs) == 1 and "recall of a at threshold=100:" in msgs[0] and "recall of b at threshold=100:" in msgs[0]
    for table in ("summary", "ranking"):  # among the caveats, not warned
        out, msgs = said(lambda: getattr(cmp, table)("recall", threshold=between))
        assert msgs == [], table
        assert [c.split(":")[0] for c in out.attrs["caveats"] if "threshold" in c] == \
            [f"recall of b at threshold={between!r}"], table
        assert not [c for c in said(lambda: getattr(cmp, table)("recall", threshold=0.5))[0].attrs["caveats"]
                    if "threshold" in c], table


def test_compare_checks_its_memory_in_its_own_words():
    """bayeval.compare was refused by bayeval.fit's memory check, which named "bayeval.fit" and told the
    user to "pass max_memory_gb=", a keyword compare did not take (TypeError). compare now takes
    ``max_memory_gb`` and checks the estimate itself, before anything is sampled, in its own words."""
    a, b, lab, _ = _pool()
    with pytest.raises(ValueError, match=r"^bayeval\.compare: 2 chains x 10000000 draws of 300 items \(40 vetted\)") \
            as err:
        be.compare({"a": a, "b": b}, lab, draws=10_000_000)
    assert "pass max_memory_gb=" in str(err.value) and "bayeval.fit" not in str(err.value)
    with pytest.raises(ValueError, match=r"above the limit of 0\.5 GB"):
        be.compare({"a": a, "b": b}, lab, draws=100, max_memory_gb=0.5)  # the keyword sets the limit
    with pytest.raises(ValueError, match=r"`max_memory_gb` must be a positive number of GB, got -1"):
        be.compare({"a": a, "b": b}, lab, draws=100, max_memory_gb=-1)
    with pytest.raises(ValueError, match=r"above the limit of 0\.5 GB"):
        be.compare({"a": a, "b": b}, lab, draws=100, max_memory_gb=0.5, model="logistic")  # one model too
