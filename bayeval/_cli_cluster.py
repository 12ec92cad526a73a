"""The command line's Dask options: ``--scheduler ADDRESS`` / ``--workers N``, the fits per
category of ``bayeval fit --per-category`` and the fits of several cards of ``bayeval report``.

Without ``--scheduler`` or ``--workers`` everything runs in this process, one fit after
another, and nothing of Dask is imported (:mod:`bayeval.core.distributed`).
"""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager


class ClusterError(Exception):
    """A problem with the cluster options, said as one line by the command line."""


def cluster_args(p: argparse.ArgumentParser) -> None:
    """``--scheduler ADDRESS`` and ``--workers N`` (one or the other)."""
    group = p.add_mutually_exclusive_group()
    group.add_argument("--scheduler", metavar="ADDRESS", default=None,
                       help="run the fits and metric passes as tasks on this Dask scheduler "
                            "(e.g. tcp://10.0.0.5:8786; needs the extra 'dask')")
    group.add_argument("--workers", type=int, metavar="N", default=None,
                       help="run them on a local Dask cluster of N one-thread worker processes "
                            "(needs the extra 'dask'); without --scheduler or --workers: in this process")


@contextmanager
def client_for(args):
    """The Dask client the options ask for (None: serial), closed (a local cluster) or left (a scheduler)."""
    from .core.distributed import open_client

    workers, scheduler = getattr(args, "workers", None), getattr(args, "scheduler", None)
    if workers is not None and workers < 1:
        raise ClusterError(f"--workers must be an integer >= 1, got {workers}.")
    try:
        ctx = open_client(scheduler=scheduler, workers=workers)
        client = ctx.__enter__()
    except ImportError as exc:
        raise ClusterError(str(exc)) from exc
    except OSError as exc:
        raise ClusterError(f"--scheduler {scheduler}: could not connect ({exc}). Is the scheduler running "
                           "there, and reachable from this machine?") from exc
    except (ValueError, TypeError) as exc:
        if scheduler is None:
            raise
        raise ClusterError(f"--scheduler {scheduler}: not a scheduler address ({exc}). Give the address the "
                           "scheduler printed at its start, e.g. --scheduler tcp://127.0.0.1:8786.") from exc
    if client is not None and not getattr(args, "quiet", False):
        n = len(client.scheduler_info().get("workers", {}))
        print(f"dask: {n} worker(s) at {client.scheduler.address}", file=sys.stderr, flush=True)
    try:
        yield client
    finally:
        ctx.__exit__(*sys.exc_info())


def say_failures(failures: dict, what: str) -> None:
    """One line on stderr per failed task: which one, and its error's first line."""
    for name, text in failures.items():
        print(f"bayeval: error: {what} {name} failed: {text.splitlines()[0]}", file=sys.stderr)


def fit_per_category(args, data, model, client, metrics: dict, kw: dict):
    """``bayeval fit --per-category``: one fit per category (on the client, or serially),
    and one summary table, indexed by (category, metric); the failed categories named."""
    import pandas as pd

    from .core.distributed import fit_categories

    if not data.has_categories:
        raise ClusterError("--per-category needs --category (the column of each item's category).")
    say = (lambda line: print(line, file=sys.stderr, flush=True))
    print(f"Fitting {type(model).__name__} to each of {data.category_names.size} categories "
          f"({args.chains} chains x {args.draws} draws each)...", file=sys.stderr, flush=True)
    posts = fit_categories(model, data, client=client, random_seed=args.random_seed, errors="keep",
                           progress=say, draws=args.draws, tune=args.tune, chains=args.chains,
                           progressbar=False, warn=False)
    for name, post in posts.items():  # fitted quietly (warn=False): their checks are said here, one line each
        check = getattr(post, "check_convergence", None)
        diag = check(warn=False) if check is not None else None
        if diag is not None and diag.get("messages"):
            say(f"warning: category {name}: " + " ".join(diag["messages"]))
    tables = {name: post.summary(metrics, hdi_prob=args.hdi_prob, client=client, **kw)
              for name, post in posts.items()}
    table = pd.concat(tables, names=["category", "metric"]) if tables else None
    return table, posts.failures
