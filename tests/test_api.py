"""The public surface: sub-modules and names reachable from ``import bayeval`` (imported
on first use), one reading of a seed, and the ACIS keywords."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import bayeval

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> subprocess.CompletedProcess:
    # a fresh interpreter: the test session has imported every sub-module already,
    # which would hide a missing lazy import
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)


def test_submodules_reachable_after_plain_import():
    code = (
        "import sys; import bayeval as be\n"
        "assert 'bayeval.plots' not in sys.modules and 'bayeval.cards' not in sys.modules\n"
        "be.models.ScoreMixture; be.active.select; be.plots.pr_curve; be.ranking_percentile\n"
        "be.datasets.load_breast_cancer_scores; be.cards.load_card; be.Report\n"
        "assert {'plots', 'datasets', 'cards', 'models', 'active'} <= set(dir(be))\n"
        "print(be.__file__)"
    )
    out = _run(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(ROOT / "bayeval" / "__init__.py")


def test_bayeval_metrics_imports_as_the_docs_and_messages_name_it():
    """README and error messages say 'see bayeval.metrics.precision_at_k', but only the
    attribute ``be.metrics`` worked: ``import bayeval.metrics`` raised ModuleNotFoundError.
    Each spelling, in either order, gives the one module, bayeval.core.metrics."""
    for code in (
        "from bayeval.metrics import precision_at_k\nimport bayeval as be\n"
        "assert precision_at_k is be.metrics.precision_at_k\n",
        "import bayeval as be\nfirst = be.metrics\nimport bayeval.metrics\n"
        "assert bayeval.metrics is first\n",
    ):
        code += ("import sys, bayeval.core.metrics as core\n"
                 "assert sys.modules['bayeval.metrics'] is core and be.metrics is core\nprint('ok')")
        out = _run(code)
        assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_unknown_attribute_raises_attribute_error():
    with pytest.raises(AttributeError, match="module 'bayeval' has no attribute 'not_a_module'"):
        bayeval.not_a_module  # noqa: B018
    assert callable(bayeval.report)  # the face's function wins over its module's name


def test_plain_import_is_light_and_names_come_on_first_use():
    """``import bayeval`` loads none of the heavy libraries; a name loads what it needs, and
    importing the modules ``bayeval.report`` / ``bayeval.recalibrate`` first does not hide
    the face's functions of the same names."""
    code = (
        "import sys; import bayeval as be\n"
        "heavy = ('numpy', 'pandas', 'xarray', 'scipy', 'arviz', 'pymc', 'pytensor', 'matplotlib')\n"
        "assert not [m for m in heavy if m in sys.modules], [m for m in heavy if m in sys.modules]\n"
        "assert sorted(m for m in sys.modules if m.startswith('bayeval')) == ['bayeval', 'bayeval._version']\n"
        "import bayeval.report, bayeval.recalibrate\n"
        "assert callable(be.report) and callable(be.recalibrate) and be.Report.__module__ == 'bayeval.report'\n"
        "from bayeval import report, save, load, EvalData, AnnotatorError, HumanRanking\n"
        "assert report is be.report and be.metrics.__name__ == 'bayeval.core.metrics'\n"
        "print('ok')"
    )
    out = _run(code)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_eager_names_still_there():
    for name in bayeval.__all__:
        assert getattr(bayeval, name) is not None


# ------------------------------------------------------------------ random_seed

import numpy as np  # noqa: E402

from bayeval import EvalData, Posterior  # noqa: E402
from bayeval.active import ActiveSession, select  # noqa: E402
from bayeval.fscore import acis, sawade, simulate_fscore, top_k, uniform_sampling  # noqa: E402
from bayeval.models import simulate_tags  # noqa: E402

_DATA = EvalData(np.linspace(0.95, 0.05, 30), [1, 0] + [np.nan] * 28)
_P = np.linspace(0.9, 0.1, 30)


def _draws(seed):
    post = Posterior.from_probabilities(_DATA, _P, draws=40, random_seed=seed, check=False)
    return post.metric("precision_at_k", k=10).values


def test_same_int_seed_same_draws_other_int_other_draws():
    np.testing.assert_array_equal(_draws(3), _draws(3))
    assert not np.array_equal(_draws(3), _draws(4))


def test_generator_and_seed_sequence_accepted_and_reproducible():
    a = _draws(np.random.default_rng(7))
    np.testing.assert_array_equal(a, _draws(np.random.default_rng(7)))  # same generator state
    gen = np.random.default_rng(7)
    post = Posterior.from_probabilities(_DATA, _P, draws=40, random_seed=gen, check=False)
    # the generator was read once; the posterior keeps the int that reproduces its draws
    assert isinstance(post.random_seed, int)
    np.testing.assert_array_equal(post.metric("precision_at_k", k=10).values, _draws(post.random_seed))
    np.testing.assert_array_equal(_draws(np.random.SeedSequence(3)), _draws(3))
    # spawned children are independent streams, not copies of their parent's entropy
    c1, c2 = np.random.SeedSequence(3).spawn(2)
    assert not np.array_equal(_draws(c1), _draws(c2))


_ORACLE_Y = (np.arange(200) % 7 == 0).astype(int)
_SCORES = np.clip(0.6 * _ORACLE_Y + np.linspace(0, 0.3, 200), 0, 1)


def _oracle(idx):
    return _ORACLE_Y[idx]


@pytest.mark.parametrize(
    "call",
    [
        lambda seed: Posterior.from_probabilities(_DATA, _P, draws=5, random_seed=seed, check=False),
        lambda seed: select(Posterior.from_probabilities(_DATA, _P, draws=5, random_seed=0, check=False),
                            size=2, strategy="random", random_seed=seed),
        lambda seed: acis(_SCORES, _SCORES > 0.5, _oracle, budget=20, random_seed=seed),
        lambda seed: uniform_sampling(_SCORES, _SCORES > 0.5, _oracle, budget=20, random_seed=seed),
        lambda seed: simulate_fscore(_SCORES, _SCORES > 0.5, _ORACLE_Y, methods=["uniform"], budgets=[20],
                                     trials=2, random_seed=seed),
        lambda seed: simulate_tags(2, items_per_category=10, random_seed=seed),
        lambda seed: ActiveSession(_DATA, lambda d: None, store=Path(tempfile.mkdtemp()) / "labels.sqlite",
                                   random_seed=seed).close(),
    ],
    ids=["Posterior", "select", "acis", "uniform_sampling", "simulate_fscore", "simulate_tags", "ActiveSession"],
)
def test_every_seed_taker_reads_seeds_one_way(call):
    with pytest.raises(TypeError, match=r"`random_seed` must be None, a non-negative integer, a numpy SeedSequence"):
        call(0.5)
    with pytest.raises(ValueError, match="`random_seed` must be >= 0"):
        call(-1)
    call(np.random.default_rng(0))
    call(np.random.SeedSequence(0))


def test_acis_same_seed_same_items_generator_accepted():
    a = acis(_SCORES, _SCORES > 0.5, _oracle, budget=30, random_seed=5)
    b = acis(_SCORES, _SCORES > 0.5, _oracle, budget=30, random_seed=5)
    assert a.labeled["item"].tolist() == b.labeled["item"].tolist()
    c = acis(_SCORES, _SCORES > 0.5, _oracle, budget=30, random_seed=np.random.SeedSequence(5))
    assert c.labeled["item"].tolist() == a.labeled["item"].tolist()


# ------------------------------------------------------------------ ACIS keywords


@pytest.mark.parametrize("fn", [acis, sawade, uniform_sampling, top_k])
def test_acis_interval_prob(fn):
    new = fn(_SCORES, _SCORES > 0.5, _oracle, budget=30, random_seed=1, interval_prob=0.8)
    assert new.interval_prob == 0.8
    wide = fn(_SCORES, _SCORES > 0.5, _oracle, budget=30, random_seed=1, interval_prob=0.95)
    assert wide.interval[1] - wide.interval[0] >= new.interval[1] - new.interval[0]


@pytest.mark.parametrize("fn", [acis, sawade])
def test_acis_proposal_floor(fn):
    new = fn(_SCORES, _SCORES > 0.5, _oracle, budget=30, random_seed=1, proposal_floor=0.1)
    other = fn(_SCORES, _SCORES > 0.5, _oracle, budget=30, random_seed=1, proposal_floor=0.4)
    assert other.labeled["item"].tolist() != new.labeled["item"].tolist()  # the keyword does something
    with pytest.raises(ValueError, match="`proposal_floor` must lie in"):
        fn(_SCORES, _SCORES > 0.5, _oracle, budget=30, proposal_floor=0.6)


def test_simulate_fscore_passes_interval_prob_to_the_methods():
    kw = dict(methods=["uniform"], budgets=[20], trials=2, random_seed=0)
    study = simulate_fscore(_SCORES, _SCORES > 0.5, _ORACLE_Y, interval_prob=0.8, **kw)
    assert study.interval_prob == 0.8

    def mine(scores, predictions, oracle, *, budget, alpha, random_seed, interval_prob):
        return uniform_sampling(scores, predictions, oracle, budget=budget, alpha=alpha,
                                random_seed=random_seed, interval_prob=interval_prob)

    own = simulate_fscore(_SCORES, _SCORES > 0.5, _ORACLE_Y, methods={"mine": mine}, interval_prob=0.8,
                          budgets=[20], trials=2, random_seed=0)
    np.testing.assert_allclose(own.runs["ci_low"], study.runs["ci_low"])


# ------------------------------------------------------------------ summary columns


def test_summary_tables_name_the_same_quantities_alike():
    import arviz as az
    import xarray as xr

    from bayeval import recalibrate
    from bayeval.annotators import CategoricalPosterior
    from bayeval.rankings import RankingPosterior
    from bayeval.rankings.plots import percentile_table

    ref = ["mean", "sd", "hdi_5%", "hdi_95%"]
    post = Posterior.from_probabilities(_DATA, _P, draws=50, random_seed=0, check=False)
    assert post.summary().columns.tolist() == ref
    assert post.summary(hdi_prob=0.5).columns.tolist() == ["mean", "sd", "hdi_25%", "hdi_75%"]
    cat = CategoricalPosterior([0, 1, 2], az.from_dict(posterior={"x": np.zeros((1, 20))}),
                               lambda params: np.full((3, 3), 1 / 3), n_classes=3, random_seed=0)
    assert cat.summary("accuracy").columns.tolist() == ref
    draws = np.random.default_rng(3).beta([5, 1, 2], [1, 3, 2], size=(2, 100, 3))
    ranking = RankingPosterior.from_draws(draws, np.array([[1, 1, 1], [0, 0, 1], [1, 0, 1]]))
    # a ranking's Q is a posterior-predictive percentile, one value without an interval
    assert ranking.summary([1, 0, 1]).columns.tolist()[:4] == ["Q", "Q_lower", "Q_upper", "p_value"]
    q = xr.DataArray(np.random.default_rng(0).beta(2, 5, size=(2, 50, 1, 1)),
                     dims=("chain", "draw", "attribute", "system"),
                     coords={"attribute": ["a"], "system": ["s"]})
    assert percentile_table(q, wide=False).columns.tolist()[:4] == ref
    table = recalibrate(post, min_precision=0.5).table()
    for quantity in ("precision", "recall"):
        assert [c for c in table.columns if c.startswith(quantity)] == [f"{quantity}_{c}" for c in ref]


def test_warnings_point_at_the_callers_line():
    """A warning raised inside bayeval (here in core/) points at the first line outside the
    package, wherever in the package's folders it was raised."""
    import warnings

    import arviz as az

    from bayeval.core._diagnostics import check_convergence
    from bayeval.core.sampling import SamplingInfo

    idata = az.from_dict(posterior={"x": np.zeros((2, 50))})
    # a caller in another folder of the package (as models/ calls core/): its frame is skipped too
    ns = {"check_convergence": check_convergence}
    inside = str(Path(bayeval.__file__).parent / "models" / "a_model.py")
    exec(compile("def fit(idata, info):\n    check_convergence(idata, info, ['x'], warn=True)\n", inside, "exec"), ns)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ns["fit"](idata, SamplingInfo("importance", pareto_k=0.9, ess=500.0))
    assert [w.filename for w in caught] == [__file__]
    assert "Pareto k = 0.90" in str(caught[0].message)


def test_summary_rows_of_close_thresholds_have_distinct_names():
    """Rows were named at 4 significant digits: thresholds 0.123401 and 0.123449 (or the
    many scores between 0.99 and 0.999999 of a confident classifier) shared one name."""
    scores = np.array([0.123401, 0.123449, 0.99, 0.999, 0.9999, 0.99999, 0.2, 0.3])
    data = EvalData(scores, labels=[0, 1, 1, 1, np.nan, np.nan, 0, np.nan])
    post = Posterior.from_probabilities(data, scores, draws=50, random_seed=0, check=False)
    sm = post.summary(["precision_recall_curve"])
    assert sm.index.is_unique, sm.index[sm.index.duplicated()].tolist()
    assert "precision_recall_curve[threshold=0.1234, curve=precision]" in sm.index
    assert "precision_recall_curve[threshold=0.12345, curve=precision]" in sm.index
