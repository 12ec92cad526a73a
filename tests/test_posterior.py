import re

import arviz as az
import numpy as np
import pytest
import xarray as xr

from bayeval import EvalData, Posterior, hdi, naive, vetted_only
from bayeval.core import metrics
from bayeval.core.summary import ThresholdWarning, threshold_caveats


def _data(n=200, seed=0, categories=False):
    rng = np.random.default_rng(seed)
    s = rng.normal(size=n)
    p = 1 / (1 + np.exp(-2 * s))
    truth = (rng.random(n) < p).astype(float)
    labels = np.where(rng.random(n) < 0.2, truth, np.nan)
    kw = {}
    if categories:
        kw["categories"] = np.array(["cat", "dog", "eel"])[rng.integers(0, 3, n)]
    return EvalData(s, labels, noisy_labels=truth.astype(int) ^ (rng.random(n) < 0.1), predictions=(s > 0).astype(int), **kw), p


def test_label_draws_fix_vetted_items_and_are_reproducible():
    data, p = _data()
    post = Posterior.from_probabilities(data, p, draws=50, chains=2, random_seed=4)
    chunks = list(post.label_draws(chunk_size=7))
    assert all(c.dtype == np.int8 and c.dims == ("chain", "draw", "item") for c in chunks)
    z = np.concatenate([c.values[0] for c in chunks])  # chain 0 then chain 1
    assert z.shape == (100, data.n_items)
    np.testing.assert_array_equal(z[:, data.vetted], np.broadcast_to(data.labels[data.vetted], (100, data.n_vetted)))
    # independent of chunking, equal for the same seed, different for another seed
    z2 = np.concatenate([c.values[0] for c in post.label_draws(chunk_size=50)])
    np.testing.assert_array_equal(z, z2)
    again = Posterior.from_probabilities(data, p, draws=50, chains=2, random_seed=4)
    np.testing.assert_array_equal(z, np.concatenate([c.values[0] for c in again.label_draws()]))
    other = Posterior.from_probabilities(data, p, draws=50, chains=2, random_seed=5)
    assert not np.array_equal(z, np.concatenate([c.values[0] for c in other.label_draws()]))


def test_label_draw_frequencies_follow_probabilities():
    data, p = _data(n=300)
    post = Posterior.from_probabilities(data, p, draws=4000, random_seed=1)
    freq = np.concatenate([c.values[0] for c in post.label_draws()]).mean(axis=0)
    un = ~data.vetted
    se = np.sqrt(p[un] * (1 - p[un]) / 4000)
    z = (freq[un] - p[un]) / np.maximum(se, 1e-12)
    assert np.abs(z).max() < 5  # 240 items, 5 sigma
    np.testing.assert_allclose(post.item_probability().values[un], p[un])


def test_metric_equals_kernel_on_the_label_draws():
    data, p = _data()
    post = Posterior.from_probabilities(data, p, draws=30, chains=2, random_seed=2)
    z = np.stack([np.concatenate([c.values[0] for c in post.label_draws() if int(c.chain[0]) == ch]) for ch in range(2)])
    ap = post.metric("average_precision", chunk_size=4)
    assert ap.dims == ("chain", "draw") and ap.shape == (2, 30)
    np.testing.assert_allclose(ap.values, metrics.average_precision(z, data.scores))
    f = post.metric(metrics.f_score, beta=2.0)  # the kernel function itself works too
    np.testing.assert_allclose(f.values, metrics.f_score(z, data.predictions, beta=2.0))
    f_thr = post.metric("f_score", threshold=0.5)
    np.testing.assert_allclose(f_thr.values, metrics.f_score(z, (data.scores >= 0.5).astype(int)))
    par = post.metric("precision_at_recall", recall=[0.1, 0.5, 0.9])
    assert par.dims == ("chain", "draw", "recall") and par["recall"].values.tolist() == [0.1, 0.5, 0.9]
    pr = post.metric("precision_recall_curve", thresholds=[0.0, 1.0])
    assert pr.dims == ("chain", "draw", "threshold", "curve")
    assert pr.sel(curve="recall").shape == (2, 30, 2)
    custom = post.metric(lambda z, s: z[:, s > 1].mean(axis=1))
    np.testing.assert_allclose(custom.values, z[..., data.scores > 1].mean(axis=-1))


def test_per_category_and_mean():
    data, p = _data(categories=True)
    post = Posterior.from_probabilities(data, p, draws=40, random_seed=3)
    each = post.metric("precision_at_k", k=[5, 10])
    assert each.dims == ("chain", "draw", "category", "k")
    assert each["category"].values.tolist() == ["cat", "dog", "eel"]
    z = np.concatenate([c.values[0] for c in post.label_draws()])
    for c in ("cat", "dog", "eel"):
        m = data.categories == c
        np.testing.assert_allclose(each.sel(category=c).values[0], metrics.precision_at_k(z[:, m], data.scores[m], k=[5, 10]))
    mean = post.metric("precision_at_k", k=[5, 10], category="mean")
    np.testing.assert_allclose(mean.values, each.mean("category").values)
    pooled = post.metric("precision_at_k", k=5, category="pooled")
    np.testing.assert_allclose(pooled.values[0], metrics.precision_at_k(z, data.scores, k=5))


def test_summary_and_hdi():
    data, p = _data()
    post = Posterior.from_probabilities(data, p, draws=400, random_seed=0)
    table = post.summary(["average_precision", ("precision_at_k", {"k": [5, 10]})], hdi_prob=0.9)
    assert table.index.tolist() == ["average_precision", "precision_at_k[k=5]", "precision_at_k[k=10]"]
    assert table.columns.tolist() == ["mean", "sd", "hdi_5%", "hdi_95%"]
    ap = post.metric("average_precision").values.ravel()
    assert table.loc["average_precision", "mean"] == pytest.approx(ap.mean())
    assert table.loc["average_precision", "sd"] == pytest.approx(ap.std(ddof=1))
    named = post.summary({"AP": "average_precision"})
    assert named.index.tolist() == ["AP"]


def test_summary_of_a_metric_undefined_in_some_draws_summarizes_the_others_and_says_so():
    """ROC AUC needs a negative: where the drawn labels have none it is NaN. One NaN draw used to
    make the whole row NaN (mean, sd and interval), with no word."""
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.2])
    post = Posterior.from_probabilities(EvalData(s, [1, 1, 1, np.nan, np.nan]), [1, 1, 1, 0.5, 0.3], draws=2000,
                                        random_seed=0, check=False)
    auc = post.metric("roc_auc").values.ravel()
    undefined = np.isnan(auc).mean()
    assert 0.12 < undefined < 0.18  # both unvetted items drawn positive: 0.5 x 0.3
    table = post.summary(["roc_auc", "average_precision"])
    defined = auc[np.isfinite(auc)]
    assert table.loc["roc_auc", "mean"] == pytest.approx(defined.mean())
    assert table.loc["roc_auc", "sd"] == pytest.approx(defined.std(ddof=1))
    assert table.loc["roc_auc", ["hdi_5%", "hdi_95%"]].tolist() == hdi(defined, 0.9).tolist()
    assert table.attrs["undefined"] == {"roc_auc": pytest.approx(undefined)}
    (said,) = [c for c in table.attrs["caveats"] if c.startswith("roc_auc is undefined")]
    assert f"{undefined:.1%} of the posterior draws" in said
    assert "average_precision" not in table.attrs["undefined"]


def test_from_probabilities_with_no_rows_says_so():
    data = EvalData(np.linspace(0, 1, 100))
    with pytest.raises(ValueError, match=r"`p` has shape \(0, 100\): no probabilities"):
        Posterior.from_probabilities(data, np.empty((0, 100)))


def test_to_inference_data_refuses_a_label_netcdf_cannot_write():
    data = EvalData(np.linspace(0, 1, 50), np.r_[np.ones(5), np.zeros(5), np.full(40, np.nan)])
    post = Posterior.from_probabilities(data, np.linspace(0, 1, 50), draws=20, random_seed=0, check=False)
    with pytest.raises(ValueError, match=r"\['a/b'\] hold '/'"):
        post.to_inference_data({"ap": "average_precision", "a/b": ("accuracy", {"threshold": 0.5})})
    assert "a_b" in post.to_inference_data({"a_b": ("accuracy", {"threshold": 0.5})}).metrics


@pytest.mark.parametrize("metrics, renamed", [
    ([("recall", {"threshold": 0.5}), ("precision_at_recall", {"recall": [0.5, 0.9]})],
     {"precision_at_recall": ("recall", "precision_at_recall_recall")}),
    ([("precision_at_recall", {"recall": [0.5, 0.9]}), ("recall", {"threshold": 0.5})],  # either order
     {"precision_at_recall": ("recall", "precision_at_recall_recall")}),
    ({"k": "average_precision", "p@k": ("precision_at_k", {"k": [10, 50]})}, {"p@k": ("k", "p_k_k")}),
    ({"threshold": ("recall", {"threshold": 0.5}), "pr": "precision_recall_curve"},
     {"pr": ("threshold", "pr_threshold")}),
])
def test_to_inference_data_keeps_a_metric_named_as_another_metrics_dim(metrics, renamed, tmp_path):
    """A metric's variable named as another metric's dim (``recall`` beside
    ``precision_at_recall``'s ``recall`` grid) was dropped: the grid took its place."""
    rng = np.random.default_rng(0)
    s = np.linspace(0.01, 0.99, 200)
    lab = np.full(200, np.nan)
    lab[::10] = rng.random(20) < s[::10]
    post = Posterior.from_probabilities(EvalData(s, lab), s, draws=50, random_seed=0)
    idata = post.to_inference_data(metrics)
    items = metrics.items() if isinstance(metrics, dict) else [(m, (m, o)) for m, o in metrics]
    path = tmp_path / "m.nc"
    idata.to_netcdf(str(path))
    for got in (idata.metrics, az.from_netcdf(path).metrics):
        assert sorted(got.data_vars) == sorted(label for label, _ in items)
        for label, (name, options) in ((lab_, m if isinstance(m, tuple) else (m, {})) for lab_, m in items):
            want = post.metric(name, **options)
            old, new = renamed.get(label, (None, None))
            assert got[label].dims == tuple(new if d == old else d for d in want.dims)
            np.testing.assert_array_equal(got[label].values, want.values)
            if old:
                np.testing.assert_array_equal(got[new].values, want[old].values)  # the grid, under its new name


def test_to_inference_data_refuses_the_draws_dims_as_labels():
    data = EvalData(np.linspace(0, 1, 50), np.r_[np.ones(5), np.zeros(5), np.full(40, np.nan)])
    post = Posterior.from_probabilities(data, np.linspace(0, 1, 50), draws=20, random_seed=0, check=False)
    with pytest.raises(ValueError, match=r"\['chain'\] are the names of the draws' own dims"):
        post.to_inference_data({"chain": "average_precision"})


def test_the_contradiction_warning_says_what_the_test_found():
    """0/1 probabilities with as many positives as they expect, on the wrong items: the warning
    quoted the matching count as its evidence."""
    rng = np.random.default_rng(0)
    s = rng.random(100)
    y = np.full(100, np.nan)
    y[:20] = rng.random(20) < s[:20]
    with pytest.warns(UserWarning, match=r"as many vetted items are positive as the probabilities expect "
                                         r"\(12 of 20 against 12\.0\), but not the items they expect; 6 of them "
                                         r"given probability 0 or 1 have the other label"):
        Posterior.from_probabilities(EvalData(s, y), s > 0.5)
    y2 = np.full(100, np.nan)
    y2[:30] = 1
    with pytest.warns(UserWarning, match=r"30 of 30 vetted items are positive where the probabilities expect 3\.0, "
                                         r"and a recalibration test"):
        Posterior.from_probabilities(EvalData(np.full(100, 0.1), y2), np.full(100, 0.1))


def test_hdi_matches_arviz():
    rng = np.random.default_rng(0)
    x = rng.gamma(2.0, size=(3, 1000))
    ours = hdi(x, 0.8, axis=1)
    for i in range(3):
        np.testing.assert_allclose(ours[i], az.hdi(x[i], hdi_prob=0.8))
    assert np.isnan(hdi(np.array([1.0, np.nan, 2.0]), 0.5)).all()


def test_baselines():
    s = np.array([0.9, 0.8, 0.7, 0.2, 0.1])
    data = EvalData(s, [1, np.nan, 0, np.nan, 1], noisy_labels=[1, 1, 1, 0, 0])
    assert float(vetted_only(data, "average_precision")) == pytest.approx(metrics.average_precision(np.array([1, 0, 1]), s[[0, 2, 4]]))
    assert float(naive(data, "precision_at_k", k=3)) == pytest.approx(2 / 3)  # 1, 1 (noisy), 0
    with pytest.raises(ValueError, match="noisy labels"):
        naive(EvalData(s), "average_precision")
    with pytest.raises(ValueError, match="No item is vetted"):
        vetted_only(EvalData(s), "average_precision")
    # P@K of the vetted items alone is not defined until k items are vetted
    assert float(vetted_only(data, "precision_at_k", k=3)) == pytest.approx(2 / 3)
    assert np.isnan(float(vetted_only(data, "precision_at_k", k=4)))
    both = vetted_only(data, "precision_at_k", k=[2, 4])
    assert both.sel(k=2) == 0.5 and np.isnan(both.sel(k=4))
    cat = EvalData(s, [1, np.nan, 0, np.nan, np.nan], categories=["a", "a", "a", "b", "b"])
    per_k = vetted_only(cat, "precision_at_k", k=2)
    assert per_k.sel(category="a") == 0.5 and np.isnan(per_k.sel(category="b"))
    per = vetted_only(cat, "average_precision")
    assert per.dims == ("category",) and np.isnan(per.sel(category="b"))


def test_vetted_only_is_nan_where_the_vetted_labels_leave_it_undefined():
    # 4 vetted, all negative: AP, recall, recall@k and precision at a recall level have no
    # positive to count; the kernels' 0 for a draw without positives is no estimate of the pool
    s = np.linspace(0.95, 0.05, 10)
    neg = EvalData(s, [0, np.nan, 0, 0, np.nan, 0, np.nan, np.nan, np.nan, np.nan])
    for metric, kw in [("average_precision", {}), ("recall", {"threshold": 0.5}), ("recall_at_k", {"k": 2}),
                       ("precision_at_recall", {"recall": 0.5}), ("roc_auc", {})]:
        assert np.isnan(vetted_only(neg, metric, **kw)).all(), metric
    # still defined without a positive: P@K (k <= 4), and precision and F of flagged items
    assert float(vetted_only(neg, "precision_at_k", k=2)) == 0.0
    assert float(vetted_only(neg, "precision", threshold=0.5)) == 0.0
    assert float(vetted_only(neg, "f_score", threshold=0.5)) == 0.0
    assert float(vetted_only(neg, "recall", threshold=0.5, zero_division=0.0)) == 0.0  # asked for: kept
    # per category: the category without a vetted positive is NaN, and so is their mean
    cat = EvalData(s, [1, 0, np.nan, 0, 0, 1, 0, 0, 1, 0], categories=list("ababababab"))
    per = vetted_only(cat, "average_precision")
    assert per.sel(category="a") == 0.75 and per.sel(category="b") == pytest.approx(1 / 3)
    neg_cat = EvalData(s, [1, 0, np.nan, 0, 0, 0, 0, 0, 1, 0], categories=list("ababababab"))
    assert np.isnan(vetted_only(neg_cat, "average_precision").sel(category="b"))
    assert np.isnan(float(vetted_only(neg_cat, "average_precision", category="mean")))


def test_vetted_only_of_an_all_vetted_pool_is_the_pools_own_value():
    # every item vetted: P@K with k beyond the pool is the pool's P@K (missing positions
    # count as non-relevant), the value bayeval.metrics gives on all items
    s = np.linspace(0.95, 0.05, 10)
    y = np.array([1, 0, 1, 0, 0, 1, 0, 0, 0, 0])
    full = EvalData(s, y)
    np.testing.assert_allclose(vetted_only(full, "precision_at_k", k=[5, 20]).values,
                               metrics.precision_at_k(y, s, k=[5, 20]))
    assert float(vetted_only(full, "recall_at_k", k=20)) == 1.0
    # a category vetted in full gets its value; one that is not stays NaN until k are vetted
    cat = EvalData(s, [1, 0, np.nan, 0, 0, 1, 0, 0, 1, 0], categories=list("ababababab"))
    p6 = vetted_only(cat, "precision_at_k", k=6)
    assert np.isnan(p6.sel(category="a")) and p6.sel(category="b") == pytest.approx(1 / 6)


def test_errors_at_the_boundary():
    data, p = _data()
    post = Posterior.from_probabilities(data, p, draws=5, random_seed=0)
    with pytest.raises(ValueError, match="Unknown metric"):
        post.metric("auc")
    with pytest.raises(ValueError, match="needs hard predictions"):
        Posterior.from_probabilities(EvalData(data.scores), p, draws=2).metric("precision")
    with pytest.raises(ValueError, match="threshold"):
        post.metric("average_precision", threshold=0.3)
    with pytest.raises(ValueError, match="categories"):
        post.metric("average_precision", category="each")
    with pytest.raises(ValueError, match="probabilities in"):
        Posterior.from_probabilities(data, p * 2, draws=2)
    with pytest.raises(ValueError, match="shape"):
        Posterior.from_probabilities(data, p[:-1], draws=2)
    with pytest.raises(TypeError, match="EvalData"):
        Posterior.from_probabilities(p, p)


def test_posterior_from_a_model_probability_function():
    """A model supplies parameter draws and P(z=1 | theta); labels follow each draw's theta."""
    data = EvalData(np.linspace(-2, 2, 100))
    prevalence = np.array([[0.0, 1.0, 0.3]])  # one chain, three draws of a toy parameter
    idata = az.InferenceData(posterior=xr.Dataset({"pi": (("chain", "draw"), prevalence)}))
    post = Posterior(data, idata, lambda params: np.repeat(params["pi"][:, None], data.n_items, axis=1), random_seed=0)
    z = np.concatenate([c.values[0] for c in post.label_draws()])
    assert z[0].sum() == 0 and z[1].sum() == 100 and 10 < z[2].sum() < 50
    bad = Posterior(data, idata, lambda params: np.ones(3))
    with pytest.raises(ValueError, match="returned shape"):
        bad.metric("average_precision")


def test_posterior_from_2d_probabilities_uses_one_row_per_draw():
    data = EvalData([0.5, 0.4])
    p = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    post = Posterior.from_probabilities(data, p, random_seed=0)
    z = np.concatenate([c.values[0] for c in post.label_draws()])
    np.testing.assert_array_equal(z, p.astype(np.int8))


def test_default_threshold_grid_is_dense_among_the_top_scores():
    from bayeval.core.evaluate import default_thresholds

    s = np.random.default_rng(0).random(20_000)
    t = default_thresholds(s)
    top = np.sort(s)[::-1]
    # every one of the 10 highest scores is a candidate, and the top 1% (where the
    # thresholds of a 0.5%-prevalence problem lie) holds dozens of them
    assert set(top[:10]) <= set(t)
    assert (t >= top[199]).sum() >= 50
    # the evenly spaced quantiles are still there, and the grid stays small
    assert np.all(np.isin(np.quantile(s, [0.1, 0.5, 0.9], method="inverted_cdf"), t))
    assert t.size <= 402 and np.all(np.diff(t) > 0)
    # few distinct scores: all of them
    np.testing.assert_array_equal(default_thresholds(np.array([0.3, 0.1, 0.3, 0.2])), [0.1, 0.2, 0.3])


def test_curves_through_the_posterior_use_a_shared_threshold_grid():
    data, p = _data(n=500)
    post = Posterior.from_probabilities(data, p, draws=20, random_seed=6)
    roc = post.metric("roc_curve")
    t = roc["threshold"].values
    assert np.isinf(t[0]) and np.all(np.diff(t[1:]) < 0) and t.size <= 403  # inf + 201 quantiles + 201 ranks
    z = np.concatenate([c.values[0] for c in post.label_draws()])
    fpr, tpr, _ = metrics.roc_curve(z, data.scores, thresholds=t)
    np.testing.assert_allclose(roc.sel(curve="fpr").values[0], fpr)
    np.testing.assert_allclose(roc.sel(curve="tpr").values[0], tpr)
    auc = post.metric("roc_auc").values[0]
    np.testing.assert_allclose(auc, metrics.roc_auc(z, data.scores))


def test_label_draws_are_cached_as_bits_and_equal_the_regenerated_ones(monkeypatch):
    import bayeval.core.posterior as module

    data, p = _data(n=301)  # not a multiple of 8: the packed rows are padded
    post = Posterior.from_probabilities(data, p, draws=37, chains=2, random_seed=11)
    assert post._bits is not None and not post._bits_filled.any()
    first = np.concatenate([c.values for c in post.label_draws(chunk_size=5)], axis=1)
    assert post._bits_filled.all()
    # second pass comes from the cache: same labels, whatever the chunking
    second = np.concatenate([c.values for c in post.label_draws(chunk_size=8)], axis=1)
    np.testing.assert_array_equal(first, second)
    assert second.dtype == np.int8 and set(np.unique(second)) <= {0, 1}
    # vetted items keep their label in the cached draws too
    vet = data.vetted
    assert (second[..., vet] == data.labels[vet].astype(np.int8)).all()
    # without a cache (too big for the budget) the draws are the same
    monkeypatch.setattr(module, "_CACHE_BYTES", 0)
    nocache = Posterior.from_probabilities(data, p, draws=37, chains=2, random_seed=11)
    assert nocache._bits is None
    again = np.concatenate([c.values for c in nocache.label_draws(chunk_size=37)], axis=1)
    np.testing.assert_array_equal(first, again)
    # a metric computed from the cache equals the one computed while drawing
    np.testing.assert_array_equal(post.metric("average_precision").values, nocache.metric("average_precision").values)


def test_fit_memory_check_counts_the_items_and_the_vetted_labels(monkeypatch):
    """The check of bayeval.fit was chains x draws x 2 KB whatever the data: `bayeval threshold
    --max-memory-gb 0.5` on 100,000 items ran and peaked at 1.16 GB (peak RSS). The estimate is now
    the process's peak: PyMC, one chunk of label draws, the vetted labels' weighing and what is kept."""
    import bayeval as be
    from bayeval.core._validate import MAX_MEMORY_ENV, check_job_size, fit_memory_gb

    monkeypatch.delenv(MAX_MEMORY_ENV, raising=False)
    # close to the peaks measured with /usr/bin/time -v (bayeval.fit then recalibrate, 2 chains x 1000
    # draws, docs/guide.md), the estimate a little above: 0.93 GB at 10^4 items (100 vetted), 1.06-1.16 GB
    # at 10^5 (150-200 vetted), 1.20 GB at 10^4 items with 5,000 vetted
    for (items, vetted), peak in (((10**4, 100), 0.93), ((10**5, 200), 1.16), ((10**4, 5000), 1.20)):
        est = fit_memory_gb(items, vetted, 2, 1000, candidates=2, bytes_per_draw=2048)["total"]
        assert peak <= est < peak + 0.1, (items, vetted, est)
    data = EvalData(np.linspace(0.001, 0.999, 20_000), np.r_[np.tile([1.0, 0.0], 50), np.full(19_900, np.nan)])
    with pytest.raises(ValueError, match=r"^bayeval.fit: 2 chains x 200 draws of 20,000 items \(100 vetted\) would "
                                         r"need about 0\.71 GB of memory \(0\.55 GB for Python and PyMC.*above "
                                         r"the limit of 0\.65 GB\. Raise the limit to 0\.8 GB or more \(pass "
                                         r"max_memory_gb=, or the environment variable BAYEVAL_MAX_MEMORY_GB\)"):
        be.fit(data, draws=200, max_memory_gb=0.65, progressbar=False)
    # where fewer draws are enough, the error says how many fit
    with pytest.raises(ValueError, match=r"2 chains x 4000 draws of 10,000 items \(2,000 vetted\).*Use fewer draws: "
                                         r"up to ([0-9]{4}) per chain fit \(--draws \1; 1000-4000") as said:
        check_job_size(2, 4000, bytes_per_draw=2048, what="t", items=10**4, vetted=2000, candidates=2,
                       max_memory_gb=1.4, how_to_raise="--max-memory-gb", draws_option="--draws ")
    fit = int(re.search(r"up to (\d+) per chain", str(said.value)).group(1))
    size = [fit_memory_gb(10**4, 2000, 2, d, candidates=2, bytes_per_draw=2048)["total"] for d in (fit, fit + 1)]
    assert size[0] <= 1.4 < size[1]


def test_from_probabilities_refuses_a_huge_job_up_front(monkeypatch):
    import time

    from bayeval import EvalData, Posterior
    from bayeval.core._validate import MAX_MEMORY_ENV

    monkeypatch.delenv(MAX_MEMORY_ENV, raising=False)
    data = EvalData([0.9, 0.5, 0.1])
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"1 chains x 1000000000 draws would need about 64.0 GB.*max_memory_gb="):
        Posterior.from_probabilities(data, [0.9, 0.5, 0.1], draws=10**9)
    assert time.perf_counter() - t0 < 1  # refused before allocating anything
    with pytest.raises(ValueError, match="above the limit of 0.001 GB"):
        Posterior.from_probabilities(data, [0.9, 0.5, 0.1], draws=100_000, max_memory_gb=0.001)
    monkeypatch.setenv(MAX_MEMORY_ENV, "0.001")
    with pytest.raises(ValueError, match="BAYEVAL_MAX_MEMORY_GB"):
        Posterior.from_probabilities(data, [0.9, 0.5, 0.1], draws=100_000)
    post = Posterior.from_probabilities(data, [0.9, 0.5, 0.1], draws=100_000, max_memory_gb=1)
    assert post.n_draws == 100_000


def test_precision_of_a_rule_that_flags_nothing_is_nan_as_vetted_only():
    """`fit --metric precision --threshold 2` (no score reaches 2) printed 0.0000 [0, 0] beside a NaN
    vetted-only value: precision is undefined when no item is flagged, in every draw."""
    s = np.linspace(0.05, 0.95, 10)
    data = EvalData(s, [1, np.nan, 0, np.nan, 1, np.nan, np.nan, 0, np.nan, 1], categories=list("aabbaabbab"))
    post = Posterior.from_probabilities(data, s, draws=50, random_seed=0, check=False)
    with pytest.warns(ThresholdWarning, match="flags no item"):
        assert np.isnan(post.metric("precision", threshold=2, category="pooled")).all()
    with pytest.warns(ThresholdWarning, match="flags no item"):
        assert np.isnan(float(vetted_only(data, "precision", threshold=2, category="pooled")))
    # a category the rule flags nothing in: NaN there, and in the mean over categories, as vetted_only
    flagged_b = bool((s[np.array(list("aabbaabbab")) == "b"] >= 0.9).any())
    each = post.metric("precision", threshold=0.9, category="each")
    assert flagged_b and np.isfinite(each.sel(category="b")).all() and np.isnan(each.sel(category="a")).all()
    assert np.isnan(post.metric("precision", threshold=0.9, category="mean")).all()
    # asked for: the kernel's convention is kept; a rule that flags some item is unchanged
    with pytest.warns(ThresholdWarning, match="flags no item"):
        assert (post.metric("precision", threshold=2, zero_division=0.0, category="pooled") == 0).all()
    some = post.metric("precision", threshold=0.5, category="pooled").values
    assert np.isfinite(some).all() and (some > 0).any()
    # the summary's row is NaN and its caveat says why: the rule flags no item (not "no positive drawn")
    table = post.summary({"precision[t=2]": ("precision", {"threshold": 2})}, category="pooled")
    assert table.loc["precision[t=2]"].isna().all() and table.attrs["undefined"] == {"precision[t=2]": 1.0}
    (said,) = [c for c in table.attrs["caveats"] if c.startswith("precision[t=2] is undefined")]
    assert "flags no item" in said and "no positive" not in said
    (where,) = [c for c in table.attrs["caveats"] if c.startswith("precision[t=2]: the threshold 2 flags no item")]
    assert "above every score (max 0.95)" in where  # and the threshold's own caveat


def test_summary_at_a_threshold_above_every_score_says_so_for_every_metric():
    """`post.summary(["f_score", "recall"], threshold=50)` on scores in [0, 1] gave rows of 0 with no
    caveat (only precision, undefined there, had one). Each such threshold is named with its rows, the
    top score and, for a percent of a probability, the threshold likely meant; one below every score
    (the rule flags every item) is said too."""
    s = np.linspace(0.05, 0.95, 10)
    data = EvalData(s, [1, np.nan, 0, np.nan, 1, np.nan, np.nan, 0, np.nan, 1])
    post = Posterior.from_probabilities(data, s, draws=50, random_seed=0, check=False)
    table = post.summary(["f_score", "recall", "accuracy"], threshold=50)
    assert (table["mean"].loc[["f_score", "recall"]] == 0).all()
    (said,) = [c for c in table.attrs["caveats"] if "threshold" in c]
    assert said.startswith("f_score, recall and accuracy: the threshold 50 flags no item: it lies above every "
                           "score (max 0.95)") and said.endswith("The scores lie in [0, 1]: did you mean 0.5?")
    low = post.summary({"recall at 0": ("recall", {"threshold": 0.0})}).attrs["caveats"]
    assert any(c.startswith("recall at 0: the threshold 0 flags every item: it lies at or below every score "
                            "(min 0.05)") for c in low)
    assert not [c for c in post.summary(["recall"], threshold=0.5).attrs["caveats"] if "threshold" in c]


def test_metric_and_vetted_only_at_a_threshold_outside_the_scores_warn_as_summary_says():
    """`post.metric("recall", threshold=1.5)` and `vetted_only(data, "recall", threshold=1.5)` on scores in
    [0, 1] returned 0.0 silently; only summary said why. And its caveat asked "did you mean 0.015?" of 1.5,
    which reads as a typo or another scale as much as a percent."""
    import warnings

    s = np.linspace(0.05, 0.95, 10)
    data = EvalData(s, [1, np.nan, 0, np.nan, 1, np.nan, np.nan, 0, np.nan, 1])
    post = Posterior.from_probabilities(data, s, draws=50, random_seed=0, check=False)
    (caveat,) = [c for c in post.summary({"r": ("recall", {"threshold": 1.5})}).attrs["caveats"] if "threshold" in c]
    said = caveat.removeprefix("r: ")
    assert said.startswith("the threshold 1.5 flags no item") and "did you mean" not in said
    with pytest.warns(ThresholdWarning) as w:
        assert (post.metric("recall", threshold=1.5) == 0).all()
    assert str(w[0].message) == "bayeval: recall at threshold=1.5: " + said
    assert w[0].filename == __file__  # points at the caller's line, not inside bayeval
    with pytest.warns(ThresholdWarning) as w:
        assert float(vetted_only(data, "recall", threshold=1.5)) == 0
    assert str(w[0].message) == "bayeval: recall at threshold=1.5: " + said
    with pytest.warns(ThresholdWarning, match="flags every item"):
        post.metric("recall", threshold=-1)
    # summary says it among its caveats, and does not warn it as well; an operating point says nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        post.summary(["recall"], threshold=50)
        post.metric("recall", threshold=0.5)
        vetted_only(data, "recall", threshold=0.5)
    # the percent reading: 2 to 100, and an operating point once divided by 100
    hint = "The scores lie in [0, 1]: did you mean"
    for t, meant in ((50, "0.5"), (2, None), (10, "0.1"), (100, None), (1.5, None), (1000, None)):
        (c,) = threshold_caveats(s, [("r", t)])
        assert (f"{hint} {meant}?" in c) if meant else hint not in c, (t, c)


def test_a_metrics_draws_say_which_options_made_them_and_a_netcdf_file_keeps_them(tmp_path):
    """``post.metric("f_score", threshold=0.7, beta=2)`` had no threshold or beta anywhere (a one-value
    option is not a coordinate), and ``to_inference_data(...).to_netcdf`` kept no attrs: a saved file
    could not tell F2 at 0.7 from F1 at 0.5."""
    rng = np.random.default_rng(0)
    s = rng.random(200)
    post = Posterior.from_probabilities(EvalData(s, np.where(np.arange(200) < 40, rng.random(200) < s, np.nan)), s,
                                        draws=40, random_seed=0)
    assert post.metric("f_score", threshold=0.7, beta=2).attrs == {"metric": "f_score", "threshold": 0.7, "beta": 2}
    assert post.metric("precision_at_k", k=[5, 10]).attrs == {"metric": "precision_at_k"}  # k is a coordinate
    idata = post.to_inference_data({"p@20": ("precision_at_k", {"k": 20}), "f2": ("f_score", {"threshold": 0.7,
                                    "beta": 2}), "pr": ("precision_at_recall", {"recall": 0.5, "interpolate": True})})
    path = tmp_path / "m.nc"
    idata.to_netcdf(path)
    back = az.from_netcdf(path).metrics
    assert dict(back["p@20"].attrs) == {"metric": "precision_at_k", "k": 20}
    assert dict(back["f2"].attrs) == {"metric": "f_score", "threshold": 0.7, "beta": 2}
    assert dict(back["pr"].attrs) == {"metric": "precision_at_recall", "recall": 0.5, "interpolate": "True"}
