"""One posterior family: BasePosterior, the shared label-draw engine, the report hooks.

The pinned values below were computed with the code as it was before the K-class
posterior shared :class:`bayeval.Posterior`'s engine; the same seed must keep giving
the same draws and summaries.
"""

import arviz as az
import numpy as np
import pandas as pd
import pytest

from bayeval import EvalData, Posterior
from bayeval.annotators import CategoricalPosterior
from bayeval.core.posterior import BasePosterior
from bayeval.core.summary import summary_columns
from bayeval.rankings.model import RankingPosterior


def _binary():
    rng = np.random.default_rng(3)
    s = rng.random(40)
    y = np.full(40, np.nan)
    y[:6] = [1, 0, 1, 0, 0, 1]
    return rng, Posterior.from_probabilities(EvalData(s, y), s, draws=30, chains=2, random_seed=11)


def _categorical(rng, **kw):
    p = rng.dirichlet(np.ones(3), size=25)
    idata = az.from_dict(posterior={"x": np.zeros((2, 40))})
    pred = rng.integers(0, 3, 25)
    gold = np.full(25, np.nan)
    gold[:4] = [0, 2, 1, 1]
    return CategoricalPosterior(pred, idata, lambda params: p, gold=gold, n_classes=3, random_seed=5, **kw)


def _rows(post, n, chunk_size):
    return np.concatenate([c.values.reshape(-1, n) for c in post.label_draws(chunk_size=chunk_size)])


BINARY_ROWS = {
    0: "1010010000001111100001001111001011010100",
    5: "1010011010010111111101001111011011010110",
    33: "1010010000110111010101001010010001011100",
    59: "1010011010001101000001000011010011010010",
}
CATEGORICAL_ROWS = {
    0: "0211010022222101112210001",
    7: "0211210001122111102210021",
    41: "0211010221122221110212001",
    79: "0211210221212121101010000",
}


def _as_string(row):
    return "".join(map(str, row.tolist()))


def test_binary_draws_and_summary_are_the_pinned_ones():
    _, post = _binary()
    z = _rows(post, 40, 7)
    assert {i: _as_string(z[i]) for i in BINARY_ROWS} == BINARY_ROWS
    table = post.summary(["average_precision", ("precision_at_k", {"k": 5})])
    np.testing.assert_allclose(
        table.values,
        [[0.8262921488, 0.0714359468, 0.7003978186, 0.9243241484], [0.9466666667, 0.1032795559, 0.8, 1.0]],
        atol=1e-9,
    )


def test_categorical_draws_summary_and_item_probability_are_the_pinned_ones():
    rng, _ = _binary()
    post = _categorical(rng)
    z = _rows(post, 25, 9)
    assert {i: _as_string(z[i]) for i in CATEGORICAL_ROWS} == CATEGORICAL_ROWS
    np.testing.assert_allclose(
        post.summary(["accuracy", "recall"]).values,
        [
            [0.382, 0.0755469508, 0.24, 0.48],
            [0.2401984127, 0.1191480455, 0.1111111111, 0.5],
            [0.3950456141, 0.097041742, 0.2727272727, 0.5454545455],
            [0.4861924534, 0.1173606754, 0.2857142857, 0.6363636364],
        ],
        atol=1e-9,
    )
    np.testing.assert_allclose(
        post.item_probability().values[:6],
        [[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 0],
         [0.6628664336, 0.0265684071, 0.3105651593], [0.1428022557, 0.5872062046, 0.2699915398]],
        atol=1e-9,
    )


@pytest.mark.parametrize("k", [2, 3, 5, 9])
def test_categorical_draws_are_cached_bit_planes_and_equal_fresh_draws(k):
    rng = np.random.default_rng(k)
    n = 37  # not a multiple of 8
    p = rng.dirichlet(np.ones(k), size=n)
    idata = az.from_dict(posterior={"x": np.zeros((2, 15))})
    gold = np.full(n, np.nan)
    gold[[0, 5]] = [k - 1, 0]
    post = CategoricalPosterior(rng.integers(0, k, n), idata, lambda params: p, gold=gold, n_classes=k,
                                random_seed=1)
    assert post._bits is not None and not post._bits_filled.any()
    assert post._bits.shape[-1] == max(1, int(np.ceil(np.log2(k)))) * ((n + 7) // 8)
    first = _rows(post, n, 4)
    assert post._bits_filled.all()
    again = _rows(post, n, 6)  # unpacked from the cache
    np.testing.assert_array_equal(first, again)
    assert first.max() == k - 1 and first.min() == 0
    assert (first[:, 0] == k - 1).all() and (first[:, 5] == 0).all()
    fresh = CategoricalPosterior(post.predictions, idata, lambda params: p, gold=gold, n_classes=k, random_seed=1)
    fresh._bits = None  # no cache: every pass draws again
    np.testing.assert_array_equal(_rows(fresh, n, 15), first)


def test_categorical_posterior_uses_the_one_engine():
    assert "_label_chunks" not in CategoricalPosterior.__dict__
    assert CategoricalPosterior._label_chunks is Posterior._label_chunks


def test_every_posterior_is_a_base_posterior_and_the_ranking_one_draws_no_labels():
    rng, post = _binary()
    cat = _categorical(rng)
    votes = np.array([[1, 1, 1, -1], [0, 1, 0, 0], [1, 0, 1, 0]])
    ranking = RankingPosterior.from_draws(np.random.default_rng(0).beta(2, 2, size=(2, 50, 3)), votes)
    for p in (post, cat, ranking):
        assert isinstance(p, BasePosterior)
        assert p.sampling is None and p.model_spec is None and p.convergence is None
        assert p.n_chains == 2
        assert p.to_inference_data() is not p.idata
    assert not hasattr(ranking, "label_draws") and not hasattr(ranking, "metric")
    assert ranking.n_draws == 50 and ranking.report_sections() == ()
    # a ranking's Q is a posterior-predictive percentile: one value and its numerical bracket, no HDI
    assert list(ranking.summary([1, 0, 1]).columns[:4]) == ["Q", "Q_lower", "Q_upper", "p_value"]
    assert list(post.summary().columns) == summary_columns() == ["mean", "sd", "hdi_5%", "hdi_95%"]
    assert summary_columns(0.5) == ["mean", "sd", "hdi_25%", "hdi_75%"]


def test_base_posterior_checks_its_idata():
    with pytest.raises(TypeError, match="InferenceData"):
        BasePosterior(np.zeros(3))
    bad = az.InferenceData(posterior=az.from_dict(posterior={"x": np.zeros((2, 5))}).posterior.rename(draw="d"))
    with pytest.raises(ValueError, match="chain and draw"):
        BasePosterior(bad)
    with pytest.raises(NotImplementedError, match="summary"):
        BasePosterior(az.from_dict(posterior={"x": np.zeros((1, 5))})).summary()


def test_check_convergence_hook():
    _, plug_in = _binary()
    assert plug_in.check_convergence() is None  # no sampler ran
    idata = az.from_dict(posterior={"a": np.random.default_rng(0).normal(size=(2, 300))},
                         sample_stats={"diverging": np.zeros((2, 300), dtype=bool)})
    post = Posterior(EvalData([0.2, 0.8]), idata, lambda params: np.array([0.3, 0.6]), random_seed=0)
    d = post.check_convergence(warn=False)
    assert d["sampler"] == "pymc" and d["ok"] and d["divergences"] == 0
    post.convergence = {"ok": False, "messages": ["x"]}
    assert post.check_convergence() == {"ok": False, "messages": ["x"]}
    assert isinstance(post.diagnostics_table(), pd.DataFrame)


def test_report_hooks_of_the_models():
    from bayeval.models.calibration import CalibrationPosterior
    from bayeval.models.label_flip import LabelFlipPosterior
    from bayeval.models.score_mixture import SPEPosterior
    from bayeval.models.stacking import StackedPosterior

    assert CalibrationPosterior.report_sections(None) == ("calibration",)
    assert StackedPosterior.report_sections(None) == ("calibration",)
    assert SPEPosterior.report_sections(None) == ("fit",)
    assert LabelFlipPosterior.report_sections(None) == ()
    assert CalibrationPosterior.has_curves and StackedPosterior.has_curves
    assert not SPEPosterior.has_curves and not Posterior.has_curves


def _small_plug_in(cls=Posterior):
    s = np.linspace(0.05, 0.95, 30)
    y = np.full(30, np.nan)
    y[[2, 20, 27]] = [0, 1, 1]
    return cls.from_probabilities(EvalData(s, y), s, draws=100, random_seed=0, check=False)


def test_report_picks_sections_by_the_hooks_not_by_attributes():
    from bayeval.report import report

    def boom(*args, **kwargs):
        raise AssertionError("the report must not call this")

    class Lookalike(Posterior):  # the attributes of other posteriors, none of their hooks
        ppc = density = curve_draws = check = staticmethod(boom)

    r = report(_small_plug_in(Lookalike), title="t")
    assert "fit" not in r.tables and "calibration_curve" not in r.figures and "diagnostics" not in r.tables
    assert any("No sampler was run" in m for m in r.notes["diagnostics"])

    class BadFit(Posterior):
        def check_convergence(self, *, warn=True):
            return {"ok": False, "messages": ["chains disagree."], "sampler": "pymc", "max_rhat": 1.2,
                    "min_ess_bulk": 50.0, "divergences": 3}

    r = report(_small_plug_in(BadFit), title="t")
    assert r.warnings["diagnostics"] == ["chains disagree."]
    assert r.tables["diagnostics"]["value"].tolist() == [1.2, 50.0, 3]
    assert r.text[1].startswith("The sampler diagnostics are bad: chains disagree.")

    class Curved(Posterior):
        def report_sections(self):
            return ("calibration",)

    with pytest.raises(TypeError, match="calibration curve"):  # the section asks for a curve it lacks
        report(_small_plug_in(Curved), title="t")
