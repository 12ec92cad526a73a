"""Metric passes and fits on a Dask LocalCluster against the serial path, in one run.

Two measurements (``bayeval.core.distributed``):

1. **Chunked metric passes.** ``Posterior.from_probabilities`` on N items x D draws
   (independent labels, 1% vetted); AP and P@K (k=100) computed serially
   (``post.metric(m)``) and on a ``LocalCluster`` of 1 and 2 one-thread worker processes
   (``post.metric(m, client=...)``, one task per chunk of draws). For each: the wall
   time, the throughput in item-draws per second (and per worker), the peak resident
   memory of each worker process (``ru_maxrss``, which includes the Python process and
   its imports), and whether the values are bit-identical to the serial ones.
2. **Fan-out of category fits.** ``fit_categories(Calibration(), data)`` over C
   categories of M items (a third vetted), serially and on a ``LocalCluster`` of 2
   workers (the workers' start, imports and compilation included, as a user pays them);
   whether the posteriors are bit-identical to the serial ones.

3. **The default model's passes** (``--default-passes``, off by default). A pool scored
   by a gradient-boosting classifier (``make_classification``, about 2% positives, 150
   vetted at random), the default model (``bayeval.fit``'s stack of calibration curves):
   the CPU seconds (user + system, all threads) of ``bayeval threshold`` and ``bayeval
   select`` as a user runs them (each its own process, the fit included) and, after a fit
   in Python, of ``post.summary(["average_precision"])`` and ``recalibrate(post,
   min_precision=0.9, prob=0.9)``; with ``--baseline DIR`` also for another copy of the
   package (``git archive REV bayeval | tar -x -C DIR``), on the same pool, whose outputs
   are compared with this tree's.

The run is stamped with the git revision, the versions and the machine's load. On a
machine shared with other jobs the timings are noisy: the load average is printed
before and after each measurement.

Run: ``python benchmarks/scale.py`` (writes ``benchmarks/results/scale.md``);
``--items``, ``--draws``, ``--categories`` set the sizes; ``--default-passes N`` adds the
third measurement (``--skip-metrics --skip-fits`` for it alone); ``--quick`` is a tiny version
(not written unless ``--write``).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def _peak_mib() -> float:
    """This process's peak resident memory since it started (VmHWM; ``ru_maxrss`` would
    include the parent's at the fork that made a worker process)."""
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _warm() -> None:
    import bayeval.core.distributed  # noqa: F401
    import bayeval.core.posterior  # noqa: F401


def _posterior(n_items: int, n_draws: int):
    from bayeval import EvalData, Posterior

    rng = np.random.default_rng(0)
    scores = rng.uniform(size=n_items).astype(np.float64)
    p = scores**2
    labels = np.full(n_items, np.nan)
    vet = rng.choice(n_items, size=max(1, n_items // 100), replace=False)
    labels[vet] = (rng.uniform(size=vet.size) < p[vet]).astype(float)
    data = EvalData(scores, labels, item_ids=np.arange(n_items))
    return Posterior.from_probabilities(data, p, draws=n_draws, random_seed=1, check=False)


METRICS = (("average_precision", {}), ("precision_at_k", {"k": 100}))


def metric_passes(n_items: int, n_draws: int, chunk: int | None, worker_counts=(1, 2),
                  serial_pass: bool = True) -> list[str]:
    """One table row per (run, metric). The metric is the outer loop (a new cluster for
    each worker count), so a run cut short still has both worker counts of its first
    metric. Without the serial pass (``serial_pass=False``: at 10^10 item-draws it takes
    as long as the 1-worker pass), "identical" compares each run with the first one."""
    from bayeval.core.distributed import open_client

    post = _posterior(n_items, n_draws)
    lines = [f"## Metric passes: {n_items:,} items x {n_draws:,} draws (chunk: "
             f"{chunk or post._default_chunk_size()} draws)", "",
             "| run | metric | seconds | item-draws/s | per worker | peak RSS per process (MiB) | identical |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    rates = {}
    for name, kw in METRICS:
        reference = None
        if serial_pass:
            t0 = time.perf_counter()
            reference = post.metric(name, progressbar=False, chunk_size=chunk, **kw).values
            dt = time.perf_counter() - t0
            rate = n_items * n_draws / dt
            lines.append(f"| serial | {name} | {dt:.1f} | {rate:.3g} | {rate:.3g} | "
                         f"{_peak_mib():.0f} (this process) | - |")
            print(lines[-1], f"load {load()}", flush=True)
        for workers in worker_counts:
            with open_client(workers=workers) as client:
                client.run(_warm)  # the workers' imports, not timed
                t0 = time.perf_counter()
                got = post.metric(name, client=client, chunk_size=chunk, **kw).values
                dt = time.perf_counter() - t0
                peaks = client.run(_peak_mib)
            rate = rates[name, workers] = n_items * n_draws / dt
            if reference is None:
                reference, same = got, "- (reference)"
            else:
                same = str(bool(np.array_equal(got, reference)))
            lines.append(f"| {workers} worker(s) | {name} | {dt:.1f} | {rate:.3g} | {rate / workers:.3g} | "
                         f"{', '.join(f'{v:.0f}' for v in peaks.values())} | {same} |")
            print(lines[-1], f"load {load()}", flush=True)
    if len(worker_counts) > 1:
        lines.append("")
        lo, hi = worker_counts[0], worker_counts[-1]
        lines += [f"{name}: {hi} workers process {rates[name, hi] / rates[name, lo]:.2f}x the item-draws per "
                  f"second of {lo} worker(s)." for name, _ in METRICS]
        print("\n".join(lines[-len(METRICS):]), flush=True)
    return lines


def category_fits(n_categories: int, per_category: int, draws: int) -> list[str]:
    from bayeval import EvalData
    from bayeval.core.distributed import fit_categories, open_client
    from bayeval.models import Calibration

    rng = np.random.default_rng(2)
    n = n_categories * per_category
    s = rng.uniform(size=n)
    truth = (rng.uniform(size=n) < s).astype(float)
    y = np.where(np.arange(n) % 3 == 0, truth, np.nan)
    data = EvalData(s, y, categories=np.repeat([f"c{i:04d}" for i in range(n_categories)], per_category))
    kw = dict(draws=draws, chains=1, progressbar=False, warn=False, random_seed=5)
    lines = [f"## Fan-out: {n_categories} category fits (Calibration, {per_category} items each, "
             f"{draws} draws)", "", "| run | seconds | fits/s | identical | load at end |", "| --- | ---: | ---: | --- | --- |"]
    t0 = time.perf_counter()
    serial = fit_categories(Calibration(), data, **kw)
    dt_serial = time.perf_counter() - t0
    lines.append(f"| serial | {dt_serial:.1f} | {n_categories / dt_serial:.2f} | - | {load()} |")
    print(lines[-1], flush=True)
    t0 = time.perf_counter()
    with open_client(workers=2) as client:
        fanned = fit_categories(Calibration(), data, client=client, **kw)
    dt = time.perf_counter() - t0
    same = all(
        np.array_equal(serial[c].idata.posterior[v].values, fanned[c].idata.posterior[v].values)
        for c in serial for v in serial[c].idata.posterior.data_vars)
    lines.append(f"| 2 workers (start included) | {dt:.1f} | {n_categories / dt:.2f} | {same} | {load()} |")
    lines.append("")
    lines.append(f"2 workers / serial: {dt / dt_serial:.2f} of the serial time.")
    print(lines[-2], flush=True)
    return lines


_PY_PASSES = r"""
import json, sys, time
import numpy as np, pandas as pd
import bayeval as be
df = pd.read_csv(sys.argv[1])
data = be.EvalData(df["score"].to_numpy(), df["label"].to_numpy(), item_ids=df["id"].to_numpy())
post = be.fit(data, random_seed=0, progressbar=False, warn=False)
t0 = time.process_time(); s = post.summary(["average_precision"]); t1 = time.process_time()
r = be.recalibrate(post, min_precision=0.9, prob=0.9); t2 = time.process_time()
print(json.dumps({"summary": t1 - t0, "recalibrate": t2 - t1, "model": post.model,
                  "out": [s.to_csv(), float(r.threshold), float(r.probability.sel(threshold=r.threshold))]}))
"""


def _pool_csv(n_items: int, path: pathlib.Path) -> float:
    """A pool scored by gradient boosting: ``id``, ``score``, ``label`` (150 vetted at random)."""
    from sklearn.datasets import make_classification
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = make_classification(n_samples=n_items + 40_000, n_features=20, n_informative=6, n_redundant=4,
                               weights=[0.98], flip_y=0.005, class_sep=0.9, random_state=0)
    gbm = HistGradientBoostingClassifier(max_iter=100, random_state=0).fit(X[:40_000], y[:40_000])
    rng = np.random.default_rng(1)
    label = np.full(n_items, np.nan)
    vet = rng.choice(n_items, 150, replace=False)
    label[vet] = y[40_000:][vet]
    path.write_text("id,score,label\n" + "".join(
        f"i{i},{s!r},{'' if np.isnan(v) else int(v)}\n"
        for i, (s, v) in enumerate(zip(gbm.predict_proba(X[40_000:])[:, 1].tolist(), label.tolist(), strict=True))))
    return float(y[40_000:].mean())


def _cpu_of(cmd: list[str], env: dict, cwd: str) -> tuple[float, str]:
    """The CPU seconds (user + system, the child's threads included) and stdout of a Python
    command, run in ``cwd`` (``python -m`` and ``-c`` put their folder first on ``sys.path``:
    run from the repository, they would import its ``bayeval`` whatever ``PYTHONPATH`` says)."""
    import sys

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, *cmd], env=env, cwd=cwd, capture_output=True, text=True,
                         check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, out


def default_passes(n_items: int, baseline: str | None) -> list[str]:
    """CPU seconds of the default model's commands and passes, this tree (and ``baseline``)."""
    import json
    import tempfile

    here = str(pathlib.Path(__file__).resolve().parents[1])
    trees = ([("baseline " + baseline, baseline)] if baseline else []) + [("this tree", here)]
    lines = [f"## The default model's passes: {n_items:,} items, 150 vetted (CPU seconds)", "",
             "| package | `bayeval threshold` | `bayeval select` | `post.summary` (AP) | `recalibrate` | "
             "model | load at end |", "| --- | ---: | ---: | ---: | ---: | --- | --- |"]
    outputs = []
    with tempfile.TemporaryDirectory() as tmp:
        csv = pathlib.Path(tmp) / "pool.csv"
        prevalence = _pool_csv(n_items, csv)
        common = [str(csv), "--score", "score", "--label", "label", "--no-progress"]
        for name, root in trees:
            env = {**os.environ, "PYTHONPATH": root}
            _, where = _cpu_of(["-c", "import bayeval; print(bayeval.__file__)"], env, tmp)
            if not pathlib.Path(where.strip()).resolve().is_relative_to(pathlib.Path(root).resolve()):
                raise SystemExit(f"{name}: bayeval imported from {where.strip()}, not from {root}")
            thr, thr_out = _cpu_of(["-m", "bayeval", "threshold", *common, "--min-precision", "0.9"], env, tmp)
            sel, sel_out = _cpu_of(["-m", "bayeval", "select", *common, "--id", "id", "--size", "50",
                                    "--format", "csv"], env, tmp)
            _, py_out = _cpu_of(["-c", _PY_PASSES, str(csv)], env, tmp)
            py = json.loads(py_out.strip().splitlines()[-1])
            outputs.append((thr_out, sel_out, py["out"]))
            lines.append(f"| {name} | {thr:.1f} | {sel:.1f} | {py['summary']:.1f} | {py['recalibrate']:.1f} | "
                         f"{py['model']} | {load()} |")
            print(lines[-1], flush=True)
    lines += ["", f"Pool: {n_items:,} items, {prevalence:.1%} positive; `bayeval select --size 50` (its "
              "default strategy); `recalibrate` after `summary` (its label draws cached)."]
    if len(outputs) > 1:
        lines.append("Outputs against the baseline's: " + "; ".join(
            f"{k}: {_agreement(str(a), str(b))}"
            for k, a, b in zip(("threshold", "select", "summary and recalibrate"), *outputs, strict=True)) + ".")
    return lines


def _agreement(a: str, b: str) -> str:
    """Two outputs: identical, or their numbers equal to within a relative 1e-12 (the rest of
    the text identical), or different."""
    import re

    if a == b:
        return "identical"
    num = r"-?\d+\.?\d*(?:[eE][-+]?\d+)?"
    x, y = re.findall(num, a), re.findall(num, b)
    if re.sub(num, "#", a) == re.sub(num, "#", b) and len(x) == len(y) and np.allclose(
            np.array(x, dtype=float), np.array(y, dtype=float), rtol=1e-12, atol=0):
        return "the same numbers to 1e-12"
    return "different"


def stamp() -> list[str]:
    from bayeval._version import dependency_versions

    root = pathlib.Path(__file__).resolve().parents[1]
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    rev = rev or os.environ.get("BAYEVAL_GIT_REV", "unknown")  # a copy of the tree without .git
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                           capture_output=True, text=True).stdout.strip()
    import dask
    import distributed

    versions = {**dependency_versions(), "dask": dask.__version__, "distributed": distributed.__version__}
    return [f"git {rev}{' (with uncommitted changes)' if dirty else ''}; "
            + ", ".join(f"{k} {v}" for k, v in versions.items()),
            f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"load average {load()} at start"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=10_000_000)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--chunk", type=int, default=None, help="draws per chunk (default: about 128 MiB)")
    ap.add_argument("--categories", type=int, default=200)
    ap.add_argument("--per-category", type=int, default=100)
    ap.add_argument("--fit-draws", type=int, default=500)
    ap.add_argument("--skip-metrics", action="store_true")
    ap.add_argument("--skip-fits", action="store_true")
    ap.add_argument("--default-passes", type=int, default=0, metavar="N",
                    help="also time the default model's commands and passes on N items (e.g. 100000)")
    ap.add_argument("--baseline", default=None, metavar="DIR",
                    help="with --default-passes: time this copy of the package too (a folder holding bayeval/)")
    ap.add_argument("--no-serial", action="store_true",
                    help="metric passes on Dask only; 'identical' then compares with the 1-worker pass")
    ap.add_argument("--quick", action="store_true", help="10,000 items x 50 draws, 6 categories")
    ap.add_argument("--write", action="store_true", help="write results/scale.md even with --quick")
    args = ap.parse_args(argv)
    if args.quick:
        args.items, args.draws, args.categories, args.fit_draws = 10_000, 50, 6, 200
    head = stamp()
    print("\n".join(head), flush=True)
    lines = []
    if not args.skip_metrics:
        lines += metric_passes(args.items, args.draws, args.chunk, serial_pass=not args.no_serial) + [""]
    if not args.skip_fits:
        lines += category_fits(args.categories, args.per_category, args.fit_draws) + [""]
    if args.default_passes:
        lines += default_passes(args.default_passes, args.baseline) + [""]
    cmd = "python benchmarks/scale.py " + " ".join(argv if argv is not None else __import__("sys").argv[1:])
    text = "\n".join([f"# Scale: Dask against serial\n\nOutput of `{cmd.strip()}`.\n", *head, "", *lines])
    print(text)
    if args.quick and not args.write:
        return
    out = pathlib.Path(__file__).parent / "results" / "scale.md"
    if out.exists():
        text = out.read_text().rstrip() + "\n\n" + text.split("\n", 2)[2]  # several runs append
    out.write_text(text + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
