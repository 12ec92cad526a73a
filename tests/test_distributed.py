"""Fan-out of fits and chunked metric passes on Dask (bayeval.core.distributed).

Cheap on purpose: an in-process LocalCluster (processes=False) of one or two workers,
tiny data, a few hundred draws. The benchmark (benchmarks/scale.py) measures speed.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest
import xarray as xr

from bayeval import EvalData, Posterior
from bayeval.core.distributed import (
    FanOut,
    FanOutError,
    WorkerSetup,
    fan_out,
    fit_categories,
    label_array,
    open_client,
    task_seeds,
    warn_without_workers,
)
from bayeval.models import Calibration

pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with open_client(workers=2, processes=False) as c:
        yield c


def _tagged(n_per=40, cats=("cat", "dog", "eel"), seed=0):
    rng = np.random.default_rng(seed)
    n = n_per * len(cats)
    s = rng.uniform(size=n)
    truth = (rng.uniform(size=n) < s).astype(float)
    y = np.where(np.arange(n) % 2 == 0, truth, np.nan)
    return EvalData(s, y, categories=np.repeat(cats, n_per))


def _inverse(x):
    if x == 0:
        raise ZeroDivisionError(f"no inverse of {x}")
    return 1 / x


def _warns(x):
    warnings.warn(f"careful with {x}", UserWarning, stacklevel=1)
    return x


# ------------------------------------------------------------------ serial, no Dask


def test_serial_paths_need_no_dask():
    # as if Dask were not installed: the serial paths work, asking for a cluster says how to install it
    code = (
        "import sys\n"
        "sys.modules['dask'] = sys.modules['distributed'] = None\n"
        "import numpy as np\n"
        "from bayeval import EvalData, Posterior\n"
        "from bayeval.core.distributed import fan_out, fit_categories, open_client\n"
        "post = Posterior.from_probabilities(EvalData([0.9, 0.1, 0.5]), [0.9, 0.1, 0.5], draws=20, random_seed=0)\n"
        "post.summary(['average_precision'])\n"
        "with open_client() as c:\n"
        "    assert c is None\n"
        "assert dict(fan_out(pow, {'a': (2, 2)})) == {'a': 4}\n"
        "try:\n"
        "    with open_client(workers=1):\n"
        "        pass\n"
        "except ImportError as exc:\n"
        "    assert \"pip install 'bayeval[dask]'\" in str(exc), exc\n"
        "else:\n"
        "    raise AssertionError('no ImportError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_serial_paths_start_no_dask_distributed():
    code = (
        "import sys\n"
        "from bayeval import EvalData, Posterior\n"
        "from bayeval.core.distributed import fan_out\n"
        "post = Posterior.from_probabilities(EvalData([0.9, 0.1, 0.5]), [0.9, 0.1, 0.5], draws=20, random_seed=0)\n"
        "post.summary(['average_precision'])\n"
        "fan_out(pow, {'a': (2, 2)})\n"
        "assert 'distributed' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_task_seeds_follow_names_and_seed():
    a, b = task_seeds(5, ["x", "y"]), task_seeds(5, ["x", "y"])
    assert [s.generate_state(2).tolist() for s in a.values()] == [s.generate_state(2).tolist() for s in b.values()]
    assert a["x"].generate_state(1)[0] != a["y"].generate_state(1)[0]
    assert task_seeds(6, ["x"])["x"].generate_state(1)[0] != a["x"].generate_state(1)[0]


def test_failures_are_named_and_the_others_kept_serially():
    with pytest.raises(FanOutError, match=r"1 of 3 category task\(s\) failed: \['b'\].*ZeroDivisionError") as err:
        fan_out(_inverse, {"a": (1,), "b": (0,), "c": (4,)}, what="category")
    assert dict(err.value.results) == {"a": 1.0, "c": 0.25}
    assert "no inverse of 0" in err.value.failures["b"]
    kept = fan_out(_inverse, {"a": (1,), "b": (0,)}, errors="keep")
    assert isinstance(kept, FanOut) and dict(kept) == {"a": 1.0} and list(kept.failures) == ["b"]


def test_bad_calls_say_what_was_expected():
    with pytest.raises(TypeError, match="dask.distributed Client"):
        fan_out(pow, {"a": (1, 1)}, client="tcp://nowhere:1")
    with pytest.raises(TypeError, match="mapping"):
        fan_out(pow, [(1, 1)])
    with pytest.raises(ValueError, match="errors"):
        fan_out(pow, {"a": (1, 1)}, errors="ignore")
    with pytest.raises(ValueError, match="not both"), open_client(scheduler="tcp://x:1", workers=1):
        pass
    data = _tagged()
    with pytest.raises(TypeError, match="bayeval model"):
        fit_categories("calibration", data)
    with pytest.raises(ValueError, match="no categories"):
        EvalData([0.1, 0.2]).split_categories()
    post = Posterior.from_probabilities(EvalData([0.2, 0.7]), [0.2, 0.7], draws=5, random_seed=0)
    with pytest.raises(TypeError, match="Client"):
        post.metric("average_precision", client=4)


def test_split_categories_keeps_every_column():
    data = EvalData([0.1, 0.5, 0.9, 0.3], [1, np.nan, 0, np.nan], noisy_labels=[1, 0, 0, 1],
                    categories=["b", "a", "b", "a"], item_ids=["w", "x", "y", "z"])
    parts = data.split_categories()
    assert list(parts) == ["a", "b"]
    assert parts["b"].item_ids.tolist() == ["w", "y"] and parts["b"].labels.tolist() == [1, 0]
    assert parts["a"].noisy_labels.tolist() == [0, 1] and not parts["a"].has_categories


# ------------------------------------------------------------------- on a cluster


def test_fan_out_on_a_client_keeps_results_failures_and_warnings(client):
    with pytest.raises(FanOutError, match=r"\['b'\]") as err:
        fan_out(_inverse, {"a": (2,), "b": (0,), "c": (5,)}, client=client, what="card")
    assert dict(err.value.results) == {"a": 0.5, "c": 0.2}
    with pytest.warns(UserWarning, match="category q: careful with 3"):
        out = fan_out(_warns, {"q": (3,)}, client=client, what="category")
    assert dict(out) == {"q": 3}


def test_worker_setup_sets_one_thread(monkeypatch):
    for key in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
        monkeypatch.delenv(key, raising=False)
    WorkerSetup().setup()
    import os

    assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["NUMBA_NUM_THREADS"] == "1"


def _freeze_count_after_teardown(status: str, queue) -> None:
    """In a daemonic process (as a nanny's worker): the registered plugin's teardown on a worker
    in ``status``; puts the garbage collector's frozen-object count before and after."""
    import gc
    from types import SimpleNamespace

    from distributed.core import Status

    from bayeval.core import distributed as D

    plugins = []

    class _Client:
        def register_plugin(self, plugin, name=None):
            plugins.append(plugin)

    D._register(_Client())
    before = gc.get_freeze_count()
    plugins[0].teardown(SimpleNamespace(status=Status[status]))
    queue.put((before, gc.get_freeze_count()))


def test_a_closing_worker_process_freezes_the_garbage_collector_so_it_exits_in_time():
    """docs/distributed.md's example logged distributed's "Worker process still alive after 4.0
    seconds, killing" at shutdown: a worker process that had fitted a model spent longer than the
    nanny's 4 s in the garbage collections of Python's exit. The plugin's teardown now freezes the
    collector in a closing worker process, and only there."""
    import gc
    import multiprocessing
    from types import SimpleNamespace

    from distributed.core import Status

    ctx = multiprocessing.get_context("fork")
    got = {}
    for status in ("closing", "running"):  # a worker closing; a plugin removed from a running worker
        queue = ctx.Queue()
        proc = ctx.Process(target=_freeze_count_after_teardown, args=(status, queue), daemon=True)
        proc.start()
        got[status] = queue.get(timeout=120)
        proc.join(timeout=60)
    assert got["closing"][0] == 0 and got["closing"][1] > 1000
    assert got["running"][1] == got["running"][0]
    # the user's own process (a threaded worker) is not a nanny's: its collector is left alone
    before = gc.get_freeze_count()
    try:
        WorkerSetup().teardown(SimpleNamespace(status=Status.closing))
        assert gc.get_freeze_count() == before
    finally:
        if gc.get_freeze_count() != before:
            gc.unfreeze()


def test_category_fits_on_a_client_equal_the_serial_ones(client):
    from bayeval.models import Calibration

    data = _tagged(n_per=30, cats=("cat", "dog"))
    kw = dict(draws=100, chains=1, progressbar=False, sampler="importance", warn=False)
    serial = fit_categories(Calibration(), data, random_seed=3, **kw)
    fanned = fit_categories(Calibration(), data, client=client, random_seed=3, **kw)
    assert list(serial) == list(fanned) == ["cat", "dog"]
    for name in serial:
        a, b = serial[name], fanned[name]
        for var in a.idata.posterior.data_vars:
            np.testing.assert_allclose(a.idata.posterior[var].values, b.idata.posterior[var].values,
                                       rtol=1e-10, atol=0)
        # the label draws come from the same seed: the same labels, the same metric draws
        za, zb = next(a.label_arrays())[2], next(b.label_arrays())[2]
        assert np.array_equal(za, zb)
        assert b.sampling.sampler == a.sampling.sampler and b.model_spec.get_params() == a.model_spec.get_params()
    # the categories got different seeds
    assert serial["cat"].random_seed != serial["dog"].random_seed


def test_a_failing_category_is_named_and_the_others_kept(client):
    from bayeval.models import Calibration

    data = _tagged(n_per=30, cats=("ok", "bad"))
    data = data.subset(np.arange(31))  # "bad" keeps one item: a calibration model needs two
    with pytest.raises(FanOutError, match=r"category fit\(s\) failed: \['bad'\]") as err:
        fit_categories(Calibration(), data, client=client, random_seed=0, draws=100, chains=1,
                       progressbar=False, sampler="importance", warn=False)
    assert "at least 2 items" in err.value.failures["bad"]
    assert list(err.value.results) == ["ok"] and err.value.results["ok"].data.n_items == 30


# ------------------------------------------------------------ metric passes on Dask


@pytest.mark.parametrize("chunk_size", [1, 7, 64])
def test_metric_on_a_client_is_the_serial_one_for_any_chunking(client, chunk_size):
    rng = np.random.default_rng(4)
    n = 300
    s = rng.uniform(size=n)
    y = np.where(rng.uniform(size=n) < 0.1, (rng.uniform(size=n) < s).astype(float), np.nan)
    data = EvalData(s, y, categories=np.repeat(["a", "b", "c"], n // 3))
    post = Posterior.from_probabilities(data, s, draws=40, chains=2, random_seed=9, check=False)
    serial = Posterior.from_probabilities(data, s, draws=40, chains=2, random_seed=9, check=False)
    for metric, kw in [("average_precision", {}), ("precision_at_k", {"k": [5, 20]})]:
        want = serial.metric(metric, **kw)
        got = post.metric(metric, client=client, chunk_size=chunk_size, **kw)
        assert got.dims == want.dims and np.array_equal(got.values, want.values)
    table = post.summary(["average_precision"], client=client, category="mean")
    assert table.equals(serial.summary(["average_precision"], category="mean"))


def test_one_and_two_workers_give_the_same_numbers(client):
    data = EvalData(np.linspace(0, 1, 101))
    post = Posterior.from_probabilities(data, np.linspace(0.05, 0.95, 101), draws=30, random_seed=2)
    with open_client(workers=1, processes=False) as one:
        a = post.metric("average_precision", client=one, chunk_size=4)
    b = post.metric("average_precision", client=client, chunk_size=11)
    assert np.array_equal(a.values, b.values)


def test_a_closed_client_is_said_to_be_closed():
    """A client used after its `with open_client(...)` block failed deep in Dask ("IOLoop is
    closed", or "'NoneType' object has no attribute 'register_worker_plugin'")."""
    post = Posterior.from_probabilities(EvalData([0.1, 0.5, 0.9], [0, np.nan, 1]), [0.1, 0.5, 0.9], draws=20,
                                        random_seed=0)
    with open_client(workers=1, processes=False) as gone:
        pass
    with pytest.raises(ValueError, match="`client` is closed .*open_client"):
        post.metric("average_precision", client=gone)
    with pytest.raises(ValueError, match="is closed"):
        fit_categories(Calibration(), EvalData([0.2, 0.8], [0, 1], categories=["a", "b"]), client=gone)


@pytest.fixture
def no_workers():
    """A cluster with no worker connected (as a SLURM cluster whose jobs are still queued) and
    its client; a watchdog closes the client after 30 s, so a call that would wait for ever fails."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster, Client(cluster) as c0:
        watchdog = threading.Timer(30, c0.close)
        watchdog.start()
        try:
            yield cluster, c0
        finally:
            watchdog.cancel()


def _waiting(record):
    return [str(w.message) for w in record if "cannot start until a worker connects" in str(w.message)]


def test_a_client_without_workers_is_said_to_wait(no_workers):
    """A client with no worker made post.metric and fit_categories wait with no message."""
    _, c0 = no_workers
    with pytest.warns(UserWarning, match=r"no worker is connected to `client` \(0 workers.*the metric pass "
                      r"cannot start until a worker connects.*cluster\.scale.*squeue.*client=None"):
        warn_without_workers(c0, "the metric pass")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_without_workers(None)


@pytest.mark.parametrize("path", ["metric", "fan_out"])
def test_a_call_on_a_client_without_workers_warns_once_and_runs_when_one_connects(no_workers, path):
    """The warning comes once per call, though the metric pass checks its client twice, and the
    call then runs when a worker connects (added here from a thread, after the call has begun)."""
    cluster, c0 = no_workers
    post = Posterior.from_probabilities(EvalData([0.1, 0.5, 0.9], [0, np.nan, 1]), [0.1, 0.5, 0.9], draws=20,
                                        random_seed=0)
    threading.Timer(0.3, cluster.scale, args=(1,)).start()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        if path == "metric":
            out = post.metric("average_precision", client=c0)
            assert np.array_equal(out.values, post.metric("average_precision").values)
        else:
            assert dict(fan_out(pow, {"a": (2, 3), "b": (3, 2)}, client=c0, what="category fit")) == {"a": 8, "b": 9}
    said = _waiting(record)
    assert len(said) == 1, said
    assert ("the metric pass" if path == "metric" else "the 2 category fit(s)") in said[0]
    with warnings.catch_warnings(record=True) as record:  # a worker is connected now: no warning
        warnings.simplefilter("always")
        fan_out(pow, {"a": (2, 3)}, client=c0)
    assert not _waiting(record)


def test_the_workers_get_the_posterior_without_ids_and_the_metric_as_a_recipe(client):
    """What a metric pass sends: the posterior without its item ids (never read by a label
    draw or a metric) and the evaluator's arguments, not its prepared per-item arrays; the
    numbers stay the serial ones and the user's posterior keeps its ids."""
    import cloudpickle

    from bayeval.core.distributed import _for_workers, _Recipe
    from bayeval.core.evaluate import MetricEvaluator

    n = 2000
    s = np.linspace(0, 1, n)
    data = EvalData(s, item_ids=[f"item-{i:06d}" for i in range(n)])
    post = Posterior.from_probabilities(data, s, draws=12, random_seed=3)
    slim = _for_workers(post)
    assert slim.data.item_ids is None and post.data.item_ids[0] == "item-000000"
    assert np.array_equal(slim.data.scores, s) and slim.n_draws == post.n_draws
    assert len(cloudpickle.dumps(slim)) < 0.7 * len(cloudpickle.dumps(post))
    ev = MetricEvaluator(data, "average_precision")
    recipe = _Recipe(ev.args)
    assert len(cloudpickle.dumps(recipe)) < 2_000 < len(cloudpickle.dumps(ev))
    assert np.array_equal(recipe.evaluator(slim)(np.ones((1, n), dtype=np.int8)), [1.0])
    got = post.metric("average_precision", client=client, chunk_size=5)
    assert np.array_equal(got.values, post.metric("average_precision").values)


def test_a_study_on_a_client_equals_the_serial_one(client):
    """simulate(client=): every trial of every strategy is one task with the seeds the
    serial loop gives it, and its records land in their place: the same Dataset."""
    from bayeval.active import simulate

    rng = np.random.default_rng(6)
    n = 80
    s = rng.uniform(size=n)
    truth = (rng.uniform(size=n) < s).astype(int)
    data = EvalData(s, noisy_labels=np.where(rng.uniform(size=n) < 0.8, truth, 1 - truth))

    def model(d):
        return Posterior.from_probabilities(d, np.clip(s, 0.05, 0.95), draws=60, random_seed=int(d.vetted.sum()),
                                            check=False)

    kw = dict(metric="precision_at_k", k=10, budget=12, batch_size=4, trials=3,
              strategies=("random", "expected_change"), random_seed=5)
    serial = simulate(data, truth, model, **kw)
    lines = []
    fanned = simulate(data, truth, model, client=client, progress=lines.append, **kw)
    xr.testing.assert_identical(fanned, serial)
    assert len(lines) == 6 and lines[-1].startswith("simulate: 6/6 runs")
    assert not np.array_equal(serial["n_vetted"].sel(trial=0).values, np.zeros_like(serial["n_vetted"].sel(trial=0)))
    with pytest.raises(TypeError, match="client"):
        simulate(data, truth, model, client="tcp://nowhere:1", **kw)


def test_stacked_candidates_on_a_client_equal_the_serial_fit(client):
    """bayeval.fit(client=) fits each candidate as a task: the same weights and the same
    label draws as the fit in this process; a non-bayeval candidate is refused."""
    import bayeval as be

    rng = np.random.default_rng(8)
    n = 400
    s = rng.uniform(size=n)
    y = np.where(np.arange(n) < 60, (rng.uniform(size=n) < s).astype(float), np.nan)
    data = EvalData(s, y)
    kw = dict(random_seed=3, draws=200, progressbar=False, warn=False)
    serial = be.fit(data, **kw)
    fanned = be.fit(data, client=client, **kw)
    assert list(fanned.comparison.index) == list(serial.comparison.index)
    assert np.array_equal(fanned.weights, serial.weights)
    assert np.array_equal(fanned.metric("average_precision").values, serial.metric("average_precision").values)

    class Outside:
        name = "outside"

        def fit(self, data, **kw):
            return serial

    with pytest.raises(TypeError, match="bayeval model"):
        be.fit(data, candidates=[Outside()], client=client, **kw)


def test_compare_hands_its_client_to_the_stacked_fit(monkeypatch):
    """compare(client=) fits the default model's two candidates through the stacked fit
    above, with the client (checked here without fitting)."""
    import bayeval as be
    from bayeval.compare import comparison

    seen = {}

    def stack_fit(data, **kw):
        seen.update(kw)
        raise RuntimeError("stop here")

    monkeypatch.setattr(comparison, "stack_fit", stack_fit)
    marker = object()
    with pytest.raises(RuntimeError, match="stop here"):
        be.compare({"a": [0.1, 0.9, 0.4], "b": [0.2, 0.8, 0.3]}, [0, 1, np.nan], client=marker)
    assert seen["client"] is marker and [c.curve for c in seen["candidates"]] == ["logistic", "monotone"]


def test_a_report_on_a_client_has_the_serial_tables(client, monkeypatch):
    """report(client=) computes its metric tables on the client: every table (overall, per
    category, at the chosen threshold) equals the report made in this process."""
    from bayeval.report import report

    rng = np.random.default_rng(12)
    n = 240
    s = rng.uniform(size=n)
    y = np.where(np.arange(n) % 6 == 0, (rng.uniform(size=n) < s).astype(float), np.nan)
    data = EvalData(s, y, categories=np.repeat(["a", "b"], n // 2))
    post = Posterior.from_probabilities(data, s, draws=80, random_seed=4, check=False)
    kw = dict(title="On a client", constraints={"min_precision": 0.6})
    serial = report(post, **kw)
    from bayeval.core import distributed

    passes = []
    on_client = distributed.metric_on_client
    monkeypatch.setattr(distributed, "metric_on_client", lambda *a, **k: passes.append(1) or on_client(*a, **k))
    fanned = report(post, client=client, **kw)
    assert len(passes) >= 6  # every metric of the three tables went through the client
    assert {"metrics", "metrics_by_category", "at_threshold"} <= set(serial.tables)
    for name, table in serial.tables.items():
        assert fanned.tables[name].equals(table), name
    with pytest.raises(TypeError, match="client"):
        report(post, client="tcp://nowhere:1", **kw)


def test_label_array_is_lazy_and_equals_the_engine():
    post = Posterior.from_probabilities(EvalData([0.3, 0.6, 0.8]), [0.3, 0.6, 0.8], draws=9, random_seed=1)
    z = label_array(post, chunk_size=4)
    assert z.chunks == ((1,), (4, 4, 1), (3,))
    assert np.array_equal(z.compute(scheduler="synchronous")[0], np.concatenate(
        [c for _, _, c in post.label_arrays(chunk_size=9)]))


# ---------------------------------------------------------------- the command line


def _tags_csv(tmp_path, sizes=(40, 40)):
    import pandas as pd

    rng = np.random.default_rng(3)
    n = sum(sizes)
    s = rng.uniform(size=n)
    y = np.where(np.arange(n) % 2 == 0, (rng.uniform(size=n) < s).astype(int).astype(str), "")
    cats = np.repeat([f"t{i}" for i in range(len(sizes))], sizes)
    path = tmp_path / "tags.csv"
    pd.DataFrame({"s": s, "y": y, "c": cats}).to_csv(path, index=False)
    return path


CLI_FAST = ["--draws", "100", "--chains", "1", "--no-progress", "--model", "score_mixture", "--negative", "beta",
            "--positive", "beta", "--metric", "average_precision", "--format", "csv"]


def test_cli_per_category_names_a_failed_category_and_prints_the_others(tmp_path, capsys):
    from bayeval.cli import main

    path = _tags_csv(tmp_path, sizes=(40, 1))  # t1 has one item and no vetted positive
    code = main(["fit", str(path), "--score", "s", "--label", "y", "--category", "c", "--per-category", *CLI_FAST])
    out = capsys.readouterr()
    assert code == 1
    assert "t0,average_precision" in out.out and "t1,average_precision" not in out.out
    assert "error: category t1 failed:" in out.err


def test_cli_per_category_says_what_each_categorys_check_found(tmp_path, capsys):
    """The category fits ran with warn=False and nothing else said their checks: a category with
    no vetted label printed an AP interval from the prior alone, without a word."""
    import pandas as pd

    from bayeval.cli import main

    rng = np.random.default_rng(1)
    s = rng.uniform(size=80)
    y = np.where(np.arange(80) % 2 == 0, (rng.uniform(size=80) < s).astype(int).astype(str), "")
    y[40:] = ""  # category t1: nothing vetted
    path = tmp_path / "tags.csv"
    pd.DataFrame({"s": s, "y": y, "c": np.repeat(["t0", "t1"], 40)}).to_csv(path, index=False)
    code = main(["fit", str(path), "--score", "s", "--label", "y", "--category", "c", "--per-category",
                 "--draws", "100", "--chains", "1", "--no-progress", "--metric", "average_precision",
                 "--format", "csv"])
    out = capsys.readouterr()
    assert code == 0 and "t1,average_precision" in out.out
    said = [line for line in out.err.splitlines() if line.startswith("warning: category t1:")]
    assert said and "no vetted" in said[0]


@pytest.mark.parametrize("args, message", [
    (["--scheduler", "notanaddress"], "--scheduler notanaddress: not a scheduler address"),
    (["--workers", "0"], "--workers must be an integer >= 1"),
    (["--save", "x.nc"], "--save keeps one fit"),
])
def test_cli_cluster_options_are_checked(tmp_path, capsys, args, message):
    from bayeval.cli import main

    path = _tags_csv(tmp_path)
    code = main(["fit", str(path), "--score", "s", "--label", "y", "--category", "c", "--per-category", *args,
                 *CLI_FAST])
    assert code == 2 and message in capsys.readouterr().err


def test_cli_per_category_needs_categories(tmp_path, capsys):
    from bayeval.cli import main

    path = _tags_csv(tmp_path)
    code = main(["fit", str(path), "--score", "s", "--label", "y", "--per-category", "--workers", "1", *CLI_FAST])
    assert code == 2 and "--per-category needs --category" in capsys.readouterr().err


def test_cli_scheduler_and_workers_exclude_each_other(tmp_path, capsys):
    from bayeval.cli import main

    with pytest.raises(SystemExit):
        main(["fit", "x.csv", "--score", "s", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"])
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_per_category_on_two_workers_equals_serial(tmp_path, capsys):
    from bayeval.cli import main

    path = _tags_csv(tmp_path)
    args = ["fit", str(path), "--score", "s", "--label", "y", "--category", "c", "--per-category", *CLI_FAST]
    assert main(args) == 0
    serial = capsys.readouterr().out
    assert main([*args, "--workers", "2"]) == 0
    assert capsys.readouterr().out == serial


def _fit_in_daemon(queue):
    try:
        s, y = _daemon_data()
        post = Calibration().fit(EvalData(s, y), draws=60, tune=60, chains=2, sampler="pymc", random_seed=3,
                                 progressbar=False, warn=False)
        queue.put(("ok", _draws(post)))
    except Exception as exc:  # said in the test's failure, not a hang
        queue.put(("error", repr(exc)))


def _draws(post):
    return np.stack([v.values for v in post.idata.posterior.data_vars.values()])


def _daemon_data():
    rng = np.random.default_rng(0)
    s = rng.uniform(size=120)
    return s, np.where(np.arange(120) % 3 == 0, (rng.uniform(size=120) < s).astype(float), np.nan)


def test_a_nuts_fit_inside_a_daemonic_process_runs_its_chains_in_turn_with_the_same_draws():
    """A Dask worker process is daemonic: PyMC's NUTS with two chains started two processes there
    and failed ("daemonic processes are not allowed to have children"), so any fit that used NUTS
    (or fell back to it) failed on a process LocalCluster and in `bayeval report --workers N`."""
    import multiprocessing

    s, y = _daemon_data()
    serial = Calibration().fit(EvalData(s, y), draws=60, tune=60, chains=2, sampler="pymc", random_seed=3,
                               progressbar=False, warn=False)
    want = _draws(serial)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_fit_in_daemon, args=(queue,), daemon=True)
    proc.start()
    kind, got = queue.get(timeout=300)
    proc.join(timeout=60)
    assert kind == "ok", got
    np.testing.assert_array_equal(got, want)


def _docs_failing_task_block() -> str:
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "distributed.md").read_text(encoding="utf-8")
    section = text[text.index("## A failing task"):text.index("## Setting up the cluster")]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return block


def test_the_docs_local_cluster_example_starts_its_cluster_only_under_a_main_guard(tmp_path):
    """docs/distributed.md's example, saved as a script, failed: the LocalCluster's worker
    processes import the script again (as __mp_main__), and its module-level open_client made
    each start a cluster of its own ("... bootstrapping phase", "Nanny failed to start")."""
    import ast
    import runpy

    block = _docs_failing_task_block()
    tree = ast.parse(block)
    guard = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test)
             in ("__name__ == '__main__'", '__name__ == "__main__"')]
    assert len(guard) == 1, "the example should start its cluster under if __name__ == '__main__':"
    at_top = [node for node in tree.body if not isinstance(node, ast.If | ast.FunctionDef | ast.Import
                                                              | ast.ImportFrom)]
    assert not at_top, f"the example runs code at import: {[ast.unparse(n) for n in at_top]}"
    # what a worker process does with the script: import it under another name; nothing may start
    path = tmp_path / "example.py"
    path.write_text(block, encoding="utf-8")
    names = runpy.run_path(str(path), run_name="__mp_main__")
    assert callable(names["main"])


@pytest.mark.slow
def test_the_docs_local_cluster_example_runs_as_a_script(tmp_path):
    path = tmp_path / "example.py"
    path.write_text(_docs_failing_task_block(), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "bootstrapping phase" not in proc.stderr and proc.stdout.count("average_precision") == 4
    assert "still alive after" not in proc.stderr, proc.stderr[-3000:]  # the workers exit within the nanny's grace
