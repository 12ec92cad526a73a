"""The designed first batch (bayeval.active.design) and fits on designed labels."""

import numpy as np
import pytest

import bayeval as be
from bayeval.active import design
from bayeval.active.design import RANK_STRATA, design_strata
from bayeval.models._scales import rank_weights, vetted_prevalence


def test_rank_weights_sum_to_one_and_follow_density():
    s = np.arange(100.0)
    w = rank_weights(s, np.isin(np.arange(100), [0, 1, 2, 3, 99]))
    assert w.sum() == pytest.approx(1.0)
    # the items at the edges of the gap each stand for half of it; the crowded ones for little each
    assert w[3] == pytest.approx(0.485) and w[4] == pytest.approx(0.485) and w[:3].max() < 0.03


def test_vetted_prevalence_does_not_follow_an_oversampled_top():
    rng = np.random.default_rng(0)
    n = 20_000
    s = rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(4 * s - 6)))).astype(float)  # ~5% positives
    lab = np.full(n, np.nan)
    idx = design(s, 200, random_seed=1)
    lab[idx] = y[idx]
    vetted = ~np.isnan(lab)
    raw = np.nanmean(lab)
    est = vetted_prevalence(s, vetted, lab)
    assert raw > 3 * y.mean()  # the design over-samples the positives at the top
    assert abs(est - y.mean()) < 0.4 * y.mean()


def test_design_strata_cover_the_pool_once():
    s = np.random.default_rng(2).normal(size=777)
    for metric, thr in (("average_precision", None), ("precision", 0.5), ("recall", -0.2)):
        st = design_strata(s, metric=metric, threshold=thr)
        allpos = np.concatenate(st)
        assert np.array_equal(np.sort(allpos), np.arange(777))
        assert min(x.size for x in st) >= 2
    # ranking strata: the top 1% first
    st = design_strata(s)
    assert len(st) == len(RANK_STRATA) - 1
    assert set(st[0]) == set(np.argsort(-s)[:8])


def test_design_allocates_equally_and_skips_vetted_and_excluded():
    s = np.linspace(0, 1, 1000)
    pos = design(s, 70, random_seed=0)
    assert pos.size == 70 and np.unique(pos).size == 70
    counts = [np.isin(pos, st).sum() for st in design_strata(s)]
    assert counts == [10] * 7
    lab = np.full(1000, np.nan)
    lab[990:] = 1
    d = be.EvalData(s, lab)
    pos2 = design(d, 30, exclude=np.arange(980, 990), random_seed=0)
    assert not np.isin(pos2, np.arange(980, 1000)).any()
    # a full stratum passes its share on; never more than the pool
    assert design(np.arange(5.0), 50, random_seed=0).size == 5


def test_design_same_seed_same_batch_and_errors():
    s = np.random.default_rng(3).random(500)
    assert np.array_equal(design(s, 25, random_seed=4), design(s, 25, random_seed=4))
    with pytest.raises(ValueError, match="threshold="):
        design(s, 10, metric="precision")
    with pytest.raises(ValueError, match="metric"):
        design(s, 10, metric="apk")
    with pytest.raises(ValueError, match="size"):
        design(s, 0)


def test_default_fit_on_a_designed_batch_covers_separated_margins():
    """Margins that separate the classes, labels from a top-heavy design: the standardized
    score's centre must not follow the vetted labels' inflated share of positives (with the
    raw share the AP interval sat 0.15 below the truth, 0 of 8 label sets covered)."""
    rng = np.random.default_rng(5)
    n = 1500
    y = (rng.random(n) < 0.1).astype(float)
    s = np.where(y == 1, rng.normal(1.0, 0.35, n), rng.normal(-0.6, 0.45, n))
    truth = float(be.Posterior.from_probabilities(be.EvalData(s, y), y, draws=1, random_seed=0)
                  .metric("average_precision").values.ravel()[0])
    covered = 0
    for rep in range(3):
        lab = np.full(n, np.nan)
        idx = design(s, 30, random_seed=rep)
        lab[idx] = y[idx]
        post = be.fit(be.EvalData(s, lab), random_seed=rep, warn=False, draws=500)
        lo, hi = be.hdi(post.metric("average_precision").values.ravel(), 0.9)
        covered += lo <= truth <= hi
    assert covered >= 2


def test_a_loop_designs_for_any_metric_it_is_given():
    """ActiveSession's first batch: a metric at a threshold without one, or a custom metric,
    falls back to the ranking's strata instead of failing the loop."""
    import tempfile, os
    from bayeval.active import ActiveSession
    from bayeval.active.design import design_target

    assert design_target("recall", 0.3) == ("recall", 0.3)
    assert design_target("f_score") == ("average_precision", None)
    s = np.linspace(0, 1, 300)
    data = be.EvalData(s, predictions=(s > 0.5).astype(int))
    store = os.path.join(tempfile.mkdtemp(), "s.sqlite")
    sess = ActiveSession(data, be.fit, metric="f_score", store=store, batch_size=14, random_seed=0)
    batch = sess.next_batch()
    assert len(batch) == 14
    assert sess.store.batches()["strategy"].iloc[-1] == "design"
    sess.close()


def test_explore_fills_the_least_vetted_strata_first():
    from bayeval.active import explore

    s = np.linspace(1, 0, 1000)  # best first: position = rank
    strata = design_strata(s)
    lab = np.full(1000, np.nan)
    lab[:40] = 1                  # the top 4%: strata 0-2 hold 10, 10, 20 vetted
    lab[600:605] = 0              # 5 vetted in the lower half
    data = be.EvalData(s, lab)
    pos = explore(data, 12, random_seed=0)
    counts = [int(np.isin(pos, st).sum()) for st in strata]
    # the strata with none vetted (5-10%, 10-20%, 20-50%) are brought to the lower half's 5 first
    assert counts[:3] == [0, 0, 0] and counts[3:6] == [4, 4, 4] and counts[6] == 0
    assert not data.vetted[pos].any() and np.unique(pos).size == 12
    assert np.array_equal(pos, explore(data, 12, random_seed=0))
    assert explore(data, 5, exclude=np.arange(40, 200), random_seed=0).min() >= 200
    with pytest.raises(TypeError, match="EvalData"):
        explore(s, 3)


def test_equal_scores_fall_into_strata_whatever_the_order_of_the_file():
    """A tied group straddling a stratum boundary: which of its items go to the higher
    stratum (vetted at a higher rate) must not follow the order of the file -- in a file
    sorted by label that would be the group's positives, and the fitted P(y | score) at
    that score would see a biased sample. Without ties the strata are the plain ranking."""
    s = np.r_[np.ones(100), np.linspace(0.9, 0.0, 900)]  # 100 tied at the top, then distinct
    top = design_strata(s)[0]  # the top 1%: 10 of the 100 tied items
    assert top.size == 10 and (top < 100).all()
    assert sorted(top.tolist()) != list(range(10))  # not the first ten of the file
    # over the two top strata (20 of the tied 100), the first and second half of the file are
    # about equally represented (a fixed pseudo-random order: 7 to 13 of 20 from each half)
    first_two = np.concatenate(design_strata(s)[:2])
    assert 7 <= int((first_two < 50).sum()) <= 13
    # the same strata on every call; distinct scores keep their exact ranks
    assert all((a == b).all() for a, b in zip(design_strata(s), design_strata(s), strict=True))
    distinct = np.linspace(1, 0, 1000)
    assert (np.concatenate(design_strata(distinct)) == np.arange(1000)).all()


def test_auto_designs_the_first_batch_with_categories_and_covers_every_category(tmp_path):
    """With categories and no noisy labels, "auto" went straight to expected change on a fit
    with no vetted label (it warned "Vet a first batch ... first"): the first batch is designed,
    each category stratified on its own with the same share, and no model is fitted for it."""
    from bayeval.active import ActiveSession
    from bayeval.active.design import resolve_auto

    rng = np.random.default_rng(0)
    n = 600
    cats = np.r_[np.repeat(["a", "b"], 285), np.repeat(["rare"], 30)]  # a category of 5%
    s = np.where(cats == "rare", rng.uniform(0, 0.2, n), rng.random(n))  # its scores all low
    data = be.EvalData(s, categories=cats)
    assert resolve_auto("auto", data, 20) == "design"
    assert resolve_auto("auto", data.with_labels(list(range(20)), [0] * 20), 20) == "expected_change"
    assert resolve_auto("auto", be.EvalData(s, noisy_labels=(s > 0.5).astype(int), categories=cats), 20) \
        == "expected_change"

    def no_fit(d):
        raise AssertionError("a designed batch needs no fit")

    sess = ActiveSession(data, no_fit, store=tmp_path / "c.sqlite", batch_size=21, random_seed=0)
    batch = np.asarray(data.index_of(sess.next_batch()))
    assert sess.store.batches()["strategy"].tolist() == ["design"]
    sess.close()
    # 7 of each category, spread evenly over that category's own rank strata (7 strata in "a"
    # and "b"; 4 in "rare", whose 30 items make strata of under 2 items at the top, merged)
    assert {c: int((cats[batch] == c).sum()) for c in ("a", "b", "rare")} == {"a": 7, "b": 7, "rare": 7}
    for c, expect in (("a", [1] * 7), ("b", [1] * 7), ("rare", [2, 2, 2, 1])):
        idx = np.flatnonzero(cats == c)
        assert [int(np.isin(batch, idx[st]).sum()) for st in design_strata(s[idx])] == expect
    # a batch smaller than the categories' strata still reaches every category; a full one passes its share on
    assert set(cats[design(data, 3, random_seed=1)]) == {"a", "b", "rare"}
    assert int((cats[design(data, 90, random_seed=1)] == "rare").sum()) == 30
    # without categories the batch is the one it was (the same draws for the same seed)
    assert np.array_equal(design(be.EvalData(s), 21, random_seed=0), design(s, 21, random_seed=0))
