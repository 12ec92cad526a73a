"""Fan-out of fits and chunked metric passes on Dask (the optional extra ``dask``).

Two kinds of work outgrow one process: many independent fits (one per category of a
tagging system, one per model card) and metric passes over ``items x draws`` label
draws that no longer fit one core's time. Both run as tasks on a
``dask.distributed`` client when one is given, and in this process, one after another,
when none is: without a client nothing of Dask is imported.

* :func:`open_client` -- a client for ``scheduler=ADDRESS`` (an existing cluster) or
  ``workers=N`` (a ``LocalCluster`` of ``N`` one-thread worker processes); ``None``
  when neither is asked (serial).
* :func:`fan_out` -- ``fn(*args)`` for every named task, on the client or serially;
  a failing task is reported by its name (:class:`FanOutError`) and the others'
  results are kept (:class:`FanOut`).
* :func:`task_seeds` -- one seed per named task from one seed, the same whichever way
  the tasks run, so a fanned-out run gives the serial run's posteriors.
* :func:`fit_many` -- ``model.fit(data, ...)`` per named task (cards, models of a
  comparison); :func:`fit_categories` -- one fit per category of an
  :class:`~bayeval.EvalData`.
* :func:`label_array` -- the label draws as a Dask array ``(chain, draw, item)``
  chunked over draws, each block made by the posterior's own engine.
* :func:`metric_on_client` -- a metric over every label draw, one task per chunk of
  draws (make the chunk's labels, reduce them); :meth:`bayeval.Posterior.metric` and
  :meth:`~bayeval.Posterior.summary` call it for ``client=``.

What goes to a worker is data and model *configuration* (a model object is its
constructor arguments): a fit compiles its model on the worker, and a posterior comes
back as its draws (``idata``) and is rebuilt here by the model's ``_posterior`` hook,
so no compiled function crosses a process. Each worker process compiles PyTensor
code in its own directory (:class:`WorkerSetup`), runs one thread for
BLAS/OpenMP/Numba, and fits that share a process (a threaded worker, a client with
``processes=False``) take turns, since PyTensor's compilation is not thread-safe.
``docs/distributed.md`` is the guide.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Mapping
from contextlib import contextmanager

import numpy as np

from . import _validate as V

__all__ = [
    "open_client",
    "fan_out",
    "FanOut",
    "FanOutError",
    "task_seeds",
    "fit_categories",
    "fit_many",
    "metric_on_client",
    "label_array",
    "check_client",
    "warn_without_workers",
    "WorkerSetup",
    "require_dask",
]

_INSTALL = "pip install 'bayeval[dask]' (dask[array] and distributed)"
#: what a worker process's native libraries get: one thread each (the worker's task is the unit of work)
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
              "NUMBA_NUM_THREADS": "1"}
_FIT_LOCK = threading.Lock()  # fits that share a process take turns (PyTensor compiles are not thread-safe)


def require_dask(what: str = "this"):
    """``distributed``, imported on first use, or an ImportError that says how to install it.

    Examples
    --------
    >>> from bayeval.core.distributed import require_dask
    >>> require_dask().__name__  # doctest: +SKIP
    'distributed'
    """
    try:
        import dask.array  # noqa: F401
        import distributed
    except ImportError as exc:  # pragma: no cover - the test extra installs it
        raise ImportError(f"{what} needs Dask, an optional extra of bayeval: {_INSTALL}.") from exc
    return distributed


def _is_client(client) -> bool:
    return type(client).__name__ == "Client" and hasattr(client, "submit")


def check_client(client, name: str = "client"):
    """``client`` when it is None or a ``distributed.Client``; a TypeError otherwise.

    Examples
    --------
    >>> from bayeval.core.distributed import check_client
    >>> check_client(None) is None
    True
    >>> check_client(2)
    Traceback (most recent call last):
    ...
    TypeError: `client` must be a dask.distributed Client (or None to run in this process), got int. ...
    """
    if client is None:
        return client
    if _is_client(client):
        status = str(getattr(client, "status", "running"))
        if status in ("closing", "closed"):
            raise ValueError(
                f"`{name}` is closed (status {status!r}): it can run nothing. Use a client while it is open, e.g. "
                "inside `with bayeval.core.distributed.open_client(workers=2) as client:`, or open a new one."
            )
        return client
    raise TypeError(
        f"`{name}` must be a dask.distributed Client (or None to run in this process), got "
        f"{type(client).__name__}. For example: `from distributed import Client; client = Client(n_workers=2)`, "
        "or bayeval.core.distributed.open_client(workers=2)."
    )


def warn_without_workers(client, what: str = "the work") -> None:
    """Warn (``UserWarning``) when no worker is connected to ``client``: Dask then holds the
    tasks until one connects, and the call waits with no message.

    A warning, not an error: the workers may be on their way (a cluster scaled up a moment
    ago, batch jobs still queued). :func:`fan_out` and :func:`metric_on_client` call it
    once, before they send anything.

    Parameters
    ----------
    client : distributed.Client or None
        None (run in this process) is never warned about.
    what : str
        What waits, for the message (``"the metric pass"``, ``"the 3 category fit(s)"``).

    Examples
    --------
    >>> import warnings
    >>> from bayeval.core.distributed import warn_without_workers
    >>> warn_without_workers(None)  # no client: the work runs here
    >>> from distributed import Client, LocalCluster  # doctest: +SKIP
    >>> with LocalCluster(n_workers=0, processes=False) as cluster, Client(cluster) as c:  # doctest: +SKIP
    ...     with warnings.catch_warnings(record=True) as said:
    ...         warn_without_workers(c, "the metric pass")
    >>> "the metric pass cannot start until a worker connects" in str(said[0].message)  # doctest: +SKIP
    True
    """
    if client is None or client.scheduler_info().get("workers"):
        return
    from ._diagnostics import user_stacklevel

    address = getattr(getattr(client, "scheduler", None), "address", None)
    warnings.warn(
        f"bayeval: no worker is connected to `client` (0 workers"
        f"{f' at scheduler {address}' if address else ''}): {what} cannot start until a worker "
        "connects, and the call waits with no further message. Start workers (`cluster.scale(N)`, "
        "or `dask worker ADDRESS` on the machines that should run them), check that the cluster's "
        "worker jobs are running (SLURM: `squeue`; they may still be queued), or pass `client=None` "
        "(on the command line: leave out --scheduler) to run it in this process instead.",
        UserWarning, stacklevel=user_stacklevel())


# ------------------------------------------------------------------ the client


class WorkerSetup:
    """What each Dask worker process gets before its first task: one thread for native
    libraries, and PyTensor set to wait for its compile lock; and, as it closes, a quick exit.

    Registered (as a ``distributed.WorkerPlugin``) by :func:`fan_out` and
    :func:`metric_on_client` on the client they are given. It sets the ``*_NUM_THREADS``
    variables to 1 where they are unset, and adds ``compile__timeout=3600`` to
    ``PYTENSOR_FLAGS`` where no timeout is set, so that worker processes sharing one
    compile directory wait for PyTensor's lock instead of failing. Each process then
    compiles a model once and refits it through bayeval's compiled-model cache.
    ``own_compiledir=True`` gives each worker process a compile directory of its own
    (``<base>/bayeval-worker-<pid>``) instead: no lock is shared, but every process
    compiles PyTensor's own modules again (measured: 4 category fits took 144 s on 2
    fresh processes against 28 s serially; ``docs/distributed.md``).

    A worker process that has imported PyMC and fitted a model holds millions of Python
    objects, and the garbage collections of Python's exit took over 4 s on a loaded
    2-core machine (2.4 s each): longer than the 4 s a Dask nanny waits before it logs
    "Worker process still alive after 4.0 seconds, killing" and kills the process. So
    :meth:`teardown`, run as a worker process closes, freezes the garbage collector
    (``gc.freeze()``): the objects are freed when the process ends, without those passes.

    Examples
    --------
    >>> from bayeval.core.distributed import WorkerSetup
    >>> WorkerSetup().name, WorkerSetup(own_compiledir=True).own_compiledir
    ('bayeval-worker-setup', True)
    """

    name = "bayeval-worker-setup"

    def __init__(self, own_compiledir: bool = False):
        self.own_compiledir = bool(own_compiledir)

    def setup(self, worker=None):
        """Run once in each worker process as it joins (or as the plugin is registered)."""
        for key, value in ONE_THREAD.items():
            os.environ.setdefault(key, value)
        if "pytensor" in sys.modules:  # too late to change: this process compiles as it already does
            return
        import tempfile

        flags = [f for f in os.environ.get("PYTENSOR_FLAGS", "").split(",") if f]
        if not any(f.startswith("compile__timeout=") for f in flags):
            flags.append("compile__timeout=3600")
        if self.own_compiledir:
            base = next((f.split("=", 1)[1] for f in flags if f.startswith("base_compiledir=")),
                        tempfile.gettempdir())
            flags = [f for f in flags if not f.startswith("base_compiledir=")]
            flags.append(f"base_compiledir={os.path.join(base, f'bayeval-worker-{os.getpid()}')}")
        os.environ["PYTENSOR_FLAGS"] = ",".join(flags)

    def teardown(self, worker=None):
        """Run as the plugin is removed: in a worker process that is closing, freeze the
        garbage collector, so the process exits within the nanny's grace period.

        Only in a daemonic process (a nanny's worker) whose worker is closing: a plugin
        removed from a running worker, or a threaded worker in the user's own process,
        leaves the collector alone.
        """
        import multiprocessing

        closing = getattr(getattr(worker, "status", None), "name", "") in ("closing", "closing_gracefully", "closed")
        if closing and multiprocessing.current_process().daemon:
            import gc

            gc.freeze()


def _register(client, own_compiledir: bool = False) -> None:
    """Register :class:`WorkerSetup` on ``client``'s workers (and those that join later)."""
    from distributed import WorkerPlugin

    class _Plugin(WorkerPlugin):  # distributed takes only its own plugin classes
        name = WorkerSetup.name
        idempotent = True

        def setup(self, worker):
            WorkerSetup(own_compiledir).setup(worker)

        def teardown(self, worker):
            WorkerSetup(own_compiledir).teardown(worker)

    client.register_plugin(_Plugin(), name=WorkerSetup.name)


@contextmanager
def open_client(scheduler: str | None = None, workers: int | None = None, *, processes: bool = True):
    """A Dask client for ``scheduler`` or a ``LocalCluster`` of ``workers``; None when neither.

    Parameters
    ----------
    scheduler : str, optional
        The address of a running scheduler (``tcp://host:8786``): the client joins that
        cluster (a SLURM or Kubernetes one, see ``docs/distributed.md``) and leaves it
        running on exit.
    workers : int, optional
        Start a ``LocalCluster`` of this many workers, one thread each (closed on exit).
    processes : bool, default True
        For ``workers``: one process per worker (``False``: threads of this process,
        for tests and small jobs; fits then take turns).

    Yields
    ------
    distributed.Client or None
        None (serial, no Dask imported) when neither ``scheduler`` nor ``workers`` is given.

    Examples
    --------
    >>> from bayeval.core.distributed import open_client
    >>> with open_client() as client:
    ...     print(client)
    None
    >>> with open_client(workers=1, processes=False) as client:  # doctest: +SKIP
    ...     len(client.scheduler_info()["workers"])
    1
    """
    if scheduler is not None and workers is not None:
        raise ValueError("Give `scheduler` (an existing cluster) or `workers` (a LocalCluster), not both.")
    if scheduler is None and workers is None:
        yield None
        return
    distributed = require_dask("open_client")
    if scheduler is not None:
        if not isinstance(scheduler, str) or not scheduler.strip():
            raise TypeError(f"`scheduler` must be an address such as 'tcp://127.0.0.1:8786', got {scheduler!r}.")
        with distributed.Client(scheduler) as client:
            yield client
        return
    workers = V.as_positive_int(workers, "workers")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the dashboard's port taken, etc.: not the user's business here
        extra = {"env": dict(ONE_THREAD)} if processes else {}  # a worker process's own environment
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes,
                                           dashboard_address=":0", **extra)
    try:
        with distributed.Client(cluster) as client:
            yield client
    finally:
        cluster.close()


# ------------------------------------------------------------------- fan-out


def task_seeds(random_seed, names) -> dict:
    """One seed per task name: ``SeedSequence`` children of ``random_seed`` in the names' order.

    The same ``random_seed`` and names give the same seeds whether the tasks then run
    serially or on a cluster, so their results are the same.

    Examples
    --------
    >>> from bayeval.core.distributed import task_seeds
    >>> s = task_seeds(7, ["a", "b"])
    >>> s["a"].spawn_key, s["b"].spawn_key, s["a"].entropy
    ((0,), (1,), 7)
    """
    root = V.as_seed_sequence(random_seed)
    return {name: np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, i))
            for i, name in enumerate(names)}


class FanOutError(RuntimeError):
    """Some tasks of a fan-out failed: :attr:`failures` says which and why, :attr:`results`
    keeps the others' results (a :class:`FanOut`).

    Examples
    --------
    >>> from bayeval.core.distributed import fan_out, FanOutError
    >>> try:
    ...     fan_out(lambda x: 1 / x, {"a": (1,), "b": (0,)}, what="category")
    ... except FanOutError as err:
    ...     print(sorted(err.failures), dict(err.results))
    ['b'] {'a': 1.0}
    """

    def __init__(self, message: str, results: FanOut):
        super().__init__(message)
        self.results = results
        self.failures = results.failures


class FanOut(dict):
    """The results of a fan-out by task name, and :attr:`failures` (name -> error text).

    Examples
    --------
    >>> from bayeval.core.distributed import fan_out
    >>> out = fan_out(lambda x: 1 / x, {"a": (1,), "b": (0,)}, errors="keep")
    >>> dict(out), list(out.failures)
    ({'a': 1.0}, ['b'])
    """

    def __init__(self, results=(), failures=None, what: str = "task"):
        super().__init__(results)
        self.failures = dict(failures or {})
        self.what = what

    def __repr__(self) -> str:
        failed = f", {len(self.failures)} failed: {sorted(self.failures)}" if self.failures else ""
        return f"FanOut({len(self)} {self.what} result(s){failed})"


def _guarded(fn, args, submitter: int):
    """Run one task, catching its error and warnings: ``(ok, value or traceback, warnings)``."""
    shared = os.getpid() == submitter or threading.active_count() > 1 and _threaded_worker()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if shared:
                with _FIT_LOCK:
                    value = fn(*args)
            else:
                value = fn(*args)
            ok = True
        except Exception as exc:  # noqa: BLE001 - a task's failure is reported, never lost
            ok, value = False, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}"
    said = [(str(w.message), w.category) for w in caught]
    return ok, value, said


def _threaded_worker() -> bool:
    try:
        from distributed import get_worker

        return get_worker().state.nthreads > 1
    except (ImportError, ValueError, AttributeError):
        return False


def fan_out(fn: Callable, tasks: Mapping, *, client=None, what: str = "task", errors: str = "raise",
            progress: Callable[[str], None] | None = None) -> FanOut:
    """``fn(*args)`` for every ``name: args`` of ``tasks``, on ``client`` or serially.

    Parameters
    ----------
    fn : callable
        A module-level function (it is sent to the workers with its arguments).
    tasks : mapping
        ``{name: args}`` with ``args`` a tuple.
    client : distributed.Client, optional
        Run each task on this client; None: one after another in this process (no
        Dask imported).
    what : str
        What a task is, for messages (``"category"``, ``"card"``).
    errors : {"raise", "keep"}
        ``"raise"``: after every task has run, raise :class:`FanOutError` naming the
        failed ones (its ``results`` keep the others'); ``"keep"``: return them with
        ``failures`` filled.
    progress : callable, optional
        Called with a line as each task ends.

    Returns
    -------
    FanOut
        The results by name, in the order of ``tasks``; warnings a task raised are
        raised again here, prefixed with its name.

    Examples
    --------
    >>> from bayeval.core.distributed import fan_out
    >>> dict(fan_out(pow, {"two": (2, 3), "three": (3, 2)}))
    {'two': 8, 'three': 9}
    """
    V.check_choice(errors, "errors", ("raise", "keep"))
    client = check_client(client)
    if not isinstance(tasks, Mapping):
        raise TypeError(f"`tasks` must be a mapping {{name: args}}, got {type(tasks).__name__}.")
    names = list(tasks)
    outcome = {}
    if client is None:
        for name in names:
            outcome[name] = _guarded(fn, tuple(tasks[name]), -1)
            if progress:
                progress(f"{what} {name}: {'done' if outcome[name][0] else 'failed'}")
    else:
        if names:
            warn_without_workers(client, f"the {len(names)} {what}(s)")
        _register(client)
        futures = {client.submit(_guarded, fn, tuple(tasks[name]), os.getpid(), pure=False): name
                   for name in names}
        from distributed import as_completed

        for fut in as_completed(list(futures)):
            name = futures[fut]
            try:
                outcome[name] = fut.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker, a task that could not be sent
                outcome[name] = (False, f"{type(exc).__name__}: {exc}", [])
            if progress:
                progress(f"{what} {name}: {'done' if outcome[name][0] else 'failed'}")
    results, failures = {}, {}
    for name in names:
        ok, value, said = outcome[name]
        for message, category in said:
            warnings.warn(f"{what} {name}: {message}", category, stacklevel=2)
        if ok:
            results[name] = value
        else:
            failures[name] = value
    out = FanOut(results, failures, what)
    if failures and errors == "raise":
        first = next(iter(failures.values())).splitlines()[0]
        raise FanOutError(
            f"{len(failures)} of {len(names)} {what} task(s) failed: {sorted(failures)} (the first: {first}). "
            f"The other {len(results)} result(s) are kept in the error's `results`; errors='keep' returns them "
            "with `failures` instead of raising.", out)
    return out


# ---------------------------------------------------------- fits per category


def _fit_one(model, data, fit_kwargs, seed):
    """Fit on the worker; send back what rebuilds the posterior (no compiled functions).

    A model with a ``_posterior`` hook sends its draws and this process rebuilds the
    posterior; one without (``Stack``, whose ``fit`` assembles the candidates' fits)
    sends the posterior object (it holds arrays and the models' settings)."""
    from .model import Model

    post = model.fit(data, random_seed=seed, **fit_kwargs)
    if type(model)._posterior is Model._posterior:
        return _Whole(post)
    return _Shipped(post)


class _Whole:
    def __init__(self, post):
        self.post = post

    def rebuild(self):
        return self.post


class _Shipped:
    """A fitted posterior reduced to its draws, the seed of its label draws and how it was sampled."""

    def __init__(self, post):
        self.idata = post.idata
        self.random_seed = post.random_seed
        self.entropy = post._entropy
        self.sampling = post.sampling
        self.convergence = post.convergence
        self.sampler = post.sampler
        self.model = post.model_spec
        self.data = post.data
        added = [v for v in getattr(self.model, "_posterior_adds", ()) if v in self.idata.posterior]
        self.posterior_vars = added

    def rebuild(self):
        import arviz as az

        idata = self.idata
        if self.posterior_vars:
            groups = {g: idata[g] for g in idata.groups()}
            groups["posterior"] = idata.posterior.drop_vars(self.posterior_vars)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                idata = az.InferenceData(**groups)
        post = self.model._posterior(self.data, idata, sampling=self.sampling, random_seed=self.random_seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for g in self.idata.groups():
                if g not in post.idata.groups():
                    post.idata.add_groups({g: self.idata[g]})
        post._entropy = self.entropy
        post.sampling, post.convergence, post.model_spec = self.sampling, self.convergence, self.model
        if getattr(post, "sampler", None) is None:
            post.sampler = self.sampler
        return post


def fit_many(tasks: Mapping, *, client=None, what: str = "fit", errors: str = "raise",
             progress: Callable[[str], None] | None = None) -> FanOut:
    """``model.fit(data, **fit_kwargs)`` for every ``name: (model, data, fit_kwargs)``: one task each.

    The fits run on ``client`` (or one after another here) and come back as the
    posteriors ``fit`` returns: a worker sends the draws, and this process rebuilds the
    posterior with the model's ``_posterior`` hook, so the result is the serial one for
    the same ``random_seed`` in ``fit_kwargs`` (give each task its own: :func:`task_seeds`).

    Parameters
    ----------
    tasks : mapping
        ``{name: (model, data, fit_kwargs)}``.
    client, what, errors, progress
        As in :func:`fan_out`.

    Returns
    -------
    FanOut
        ``{name: posterior}``, with ``failures`` naming the fits that raised.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.models import Calibration
    >>> from bayeval.core.distributed import fit_many
    >>> data = EvalData([0.2, 0.4, 0.6, 0.8], [0, np.nan, 1, np.nan])
    >>> kw = {"draws": 100, "progressbar": False}
    >>> tasks = {f"seed {i}": (Calibration(), data, {**kw, "random_seed": i}) for i in range(2)}
    >>> posts = fit_many(tasks)
    >>> list(posts), posts["seed 1"].random_seed
    (['seed 0', 'seed 1'], 1)
    """
    from .model import Model

    if not isinstance(tasks, Mapping):
        raise TypeError(f"`tasks` must be a mapping {{name: (model, data, fit_kwargs)}}, got {type(tasks).__name__}.")
    jobs = {}
    for name, task in tasks.items():
        if not (isinstance(task, tuple) and len(task) == 3 and isinstance(task[0], Model)
                and isinstance(task[2], Mapping)):
            raise TypeError(f"Task {name!r} must be (model, data, fit_kwargs) with a bayeval model and a dict of "
                            f"fit keywords, got {type(task).__name__}.")
        kwargs = dict(task[2])
        seed = kwargs.pop("random_seed", None)
        jobs[name] = (task[0], task[1], kwargs, seed)
    shipped = fan_out(_fit_one, jobs, client=client, what=what, errors="keep", progress=progress)
    out = FanOut({name: s.rebuild() for name, s in shipped.items()}, shipped.failures, what)
    if out.failures and errors == "raise":
        first = next(iter(out.failures.values())).splitlines()[0]
        raise FanOutError(
            f"{len(out.failures)} of {len(jobs)} {what}(s) failed: {sorted(out.failures)} (the first: "
            f"{first}). The other {len(out)} posterior(s) are kept in the error's `results`.", out)
    return out


def fit_categories(model, data, *, client=None, random_seed=None, errors: str = "raise",
                   progress: Callable[[str], None] | None = None, **fit_kwargs) -> FanOut:
    """Fit ``model`` to each category of ``data`` separately: one task per category.

    Each category's items become an :class:`~bayeval.EvalData` without categories
    (:meth:`~bayeval.EvalData.split_categories`) and are fitted with their own seed
    from :func:`task_seeds` (in the order of ``data.category_names``), so the same
    ``random_seed`` gives the same posteriors serially (``client=None``) and on any
    cluster. The categories share nothing: for a partially pooled fit across
    categories, fit once on all of them (``docs/distributed.md``, "Pooled models").

    Parameters
    ----------
    model : bayeval.core.model.Model
        A model object (e.g. ``Calibration()``); sent to the workers as its settings.
    data : EvalData
        With ``categories=``.
    client : distributed.Client, optional
        Where the fits run; None: one after another here.
    random_seed : None, int, SeedSequence or Generator
    errors : {"raise", "keep"}
        As in :func:`fan_out`: a failed category is named, the others are kept.
    progress : callable, optional
        Called with a line as each category ends.
    **fit_kwargs
        The model's ``fit`` keywords (``draws=``, ``chains=``, ``progressbar=``...).

    Returns
    -------
    FanOut
        ``{category: posterior}``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.models import Calibration
    >>> from bayeval.core.distributed import fit_categories
    >>> rng = np.random.default_rng(0)
    >>> s = rng.uniform(size=60)
    >>> y = np.where(np.arange(60) % 3 == 0, (rng.uniform(size=60) < s).astype(float), np.nan)
    >>> data = EvalData(s, y, categories=np.repeat(["cat", "dog"], 30))
    >>> posts = fit_categories(Calibration(), data, random_seed=1, draws=200, progressbar=False)
    >>> sorted(posts), posts["cat"].data.n_items
    (['cat', 'dog'], 30)
    """
    from .data import EvalData
    from .model import Model

    if not isinstance(model, Model):
        raise TypeError(f"`model` must be a bayeval model (e.g. bayeval.models.Calibration()), got "
                        f"{type(model).__name__}.")
    if not isinstance(data, EvalData):
        raise TypeError(f"`data` must be an EvalData, got {type(data).__name__}.")
    if "random_seed" in fit_kwargs or "data" in fit_kwargs:
        raise TypeError("Pass `random_seed` once, as fit_categories(random_seed=...); each category gets its own.")
    parts = data.split_categories()
    seeds = task_seeds(random_seed, list(parts))
    tasks = {name: (model, part, {**fit_kwargs, "random_seed": seeds[name]}) for name, part in parts.items()}
    return fit_many(tasks, client=client, what="category fit", errors=errors, progress=progress)


# ------------------------------------------------------- metric passes on Dask


def _label_block(post, chain: int, start: int, stop: int) -> np.ndarray:
    """Label draws ``(1, stop - start, n_items)`` of chain ``chain``: the serial engine's draws."""
    return post._labels_of(chain, slice(start, stop))[None]


class _Recipe:
    """What builds a metric evaluator (:attr:`MetricEvaluator.args`), sent to the workers
    instead of the evaluator: its prepared arrays (the sort order, 1/rank, ...) are several
    times the scores' size, so each worker prepares them once from the posterior's own
    data, for all the tasks of one pass (``key``)."""

    def __init__(self, args: dict):
        import uuid

        self.args = args
        self.key = uuid.uuid4().hex

    def evaluator(self, post):
        from .evaluate import MetricEvaluator

        made = post.__dict__.setdefault("_worker_evaluators", {})
        if self.key not in made:
            made.clear()  # one pass at a time: the last pass's arrays are not kept
            made[self.key] = MetricEvaluator(post.data, **self.args)
        return made[self.key]


def _metric_block(post, recipe: _Recipe, chain: int, start: int, stop: int) -> np.ndarray:
    """The metric of ``recipe`` over the label draws ``start:stop`` of chain ``chain``:
    ``(1, stop - start, *shape)``.

    The chunk's labels are made and reduced in the one task, so a worker holds one
    chunk of label draws at a time.
    """
    ev = recipe.evaluator(post)
    z = post._labels_of(chain, slice(start, stop))
    return np.asarray(ev(z), dtype=np.float64)[None]


def _for_workers(post):
    """``post`` as the metric tasks need it: without its item ids, which a label draw or a
    metric never reads (at 10^7 items they are 80 MB as integers, several times that as
    strings, sent to every worker). The posterior itself is not changed."""
    import copy

    from .data import EvalData

    if type(post.data) is not EvalData or post.data.item_ids is None:
        return post
    slim = copy.copy(post)
    slim.data = EvalData._trusted(**{**post.data._fields(), "ids": None})
    return slim


def _blocks(post, chunk_size: int, make, shape: tuple, dtype, *args, client=None):
    """A Dask array ``(chain, draw, *shape)`` with one block per ``(chain, chunk of draws)``;
    ``post`` (and ``args``) enter the graph once, as shared keys, or, with a ``client``,
    are sent to every worker once beforehand (``scatter``), not inside the graph."""
    import uuid

    import dask
    import dask.array as da

    tag = uuid.uuid4().hex
    post = _for_workers(post)
    if client is not None:
        post_key, *shared = client.scatter([post, *args], broadcast=True, hash=False)
    else:
        post_key = dask.delayed(post, name=f"bayeval-posterior-{tag}", traverse=False)
        shared = [dask.delayed(a, name=f"bayeval-shared-{i}-{tag}", traverse=False) for i, a in enumerate(args)]
    rows = []
    for chain in range(post.n_chains):
        blocks = []
        for a in range(0, post.n_draws, chunk_size):
            b = min(post.n_draws, a + chunk_size)
            task = dask.delayed(make, name=f"bayeval-{make.__name__}-{chain}-{a}-{tag}")(post_key, *shared, chain, a, b)
            blocks.append(da.from_delayed(task, shape=(1, b - a, *shape), dtype=dtype))
        rows.append(da.concatenate(blocks, axis=1))
    return da.concatenate(rows, axis=0)


def label_array(post, chunk_size: int | None = None):
    """The label draws of ``post`` as a lazy Dask array ``(chain, draw, item)`` (int8).

    One block per ``(chain, chunk of draws)``, each made by the posterior's own engine
    (draw ``(c, d)`` from its own random stream), so the values are the serial ones
    whatever the chunking. ``chunk_size``: draws per block (default: about 128 MiB of
    working memory, as the serial pass).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior
    >>> from bayeval.core.distributed import label_array
    >>> post = Posterior.from_probabilities(EvalData([0.3, 0.6], [1, np.nan]), [1, 0.5], draws=4, random_seed=0)
    >>> z = label_array(post, chunk_size=3)  # doctest: +SKIP
    >>> z.chunks, bool((z.compute()[0] == next(post.label_arrays())[2]).all())  # doctest: +SKIP
    (((1,), (3, 1), (2,)), True)
    """
    require_dask("Label draws on Dask")
    chunk_size = post._default_chunk_size() if chunk_size is None else V.as_positive_int(chunk_size, "chunk_size")
    return _blocks(post, chunk_size, _label_block, (post.data.n_items,), np.int8)


def metric_on_client(post, ev, *, client, chunk_size: int | None = None) -> np.ndarray:
    """The metric ``ev`` (a :class:`bayeval.core.evaluate.MetricEvaluator`) over every
    label draw of ``post``, computed on ``client``: ``(chain, draw, *shape)``, equal to
    the serial pass whatever the chunking and the number of workers.

    Each task makes one chunk of label draws with the posterior's engine and reduces it
    with the metric kernel, so a worker holds one chunk of draws (``chunk_size`` draws
    x ``n_items``) at a time; the posterior is sent to each worker once
    (``client.scatter``), not with every task, and each worker prepares the metric
    (``ev.args``) from it once per pass rather than receive ``ev``'s prepared arrays.
    :meth:`bayeval.Posterior.metric` calls this for ``client=``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData, Posterior
    >>> post = Posterior.from_probabilities(EvalData([0.9, 0.2, 0.4]), [0.9, 0.2, 0.5], draws=50, random_seed=0)
    >>> from bayeval.core.distributed import open_client
    >>> with open_client(workers=1, processes=False) as client:  # doctest: +SKIP
    ...     ap = post.metric("average_precision", client=client, chunk_size=7)
    >>> bool((ap == post.metric("average_precision")).all())  # doctest: +SKIP
    True
    """
    require_dask("Posterior.metric(client=...)")
    client = check_client(client)
    warn_without_workers(client, "the metric pass")
    _register(client)
    chunk_size = post._default_chunk_size() if chunk_size is None else V.as_positive_int(chunk_size, "chunk_size")
    lead = (len(ev.cat_names),) if ev.category == "each" else ()
    arr = _blocks(post, chunk_size, _metric_block, lead + ev.extra_shape, np.float64, _Recipe(ev.args),
                  client=client)
    return np.asarray(client.compute(arr).result())
