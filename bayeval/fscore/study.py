"""Replay F-score estimators on a fully labeled pool: which one should I trust here?

:func:`simulate_fscore` runs :func:`bayeval.acis` and its baselines (or any function
with their interface) many times on a pool whose labels are all known, at several
budgets, and reports how far each lands from the pool's true F-score: MSE (with its
Monte Carlo standard error), bias, the ratio of the predicted to the empirical
variance, and the coverage of the reported intervals. It is the study of
``benchmarks/acis.py`` packaged for a user's own scores -- e.g. last quarter's fully
labeled data, before deciding how to validate this quarter's model with 100 labels.

Trial ``t`` gives every method and budget the same seed, so the comparison between
methods is paired. A run that labels no informative item (no predicted and no true
positive: frequent for uniform sampling of a rare category) returns NaN; the summary
scores it as F = 0 (scikit-learn's convention for an undefined F-score), with
variance 1/12 (that of a uniform guess) and an interval [0, 1], and reports the share of
such runs as ``undefined``.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core import _validate as V
from ..core._progress import Bar
from ..core._validate import as_seed_sequence
from ._checks import align_pool
from .acis import acis, check_fscore_inputs, sawade, top_k, uniform_sampling

__all__ = ["FScoreStudy", "simulate_fscore", "summarize_runs", "FSCORE_METHODS"]

#: Methods known by name to :func:`simulate_fscore` (``"score_mixture"`` fits a
#: PyMC model per run: tens of seconds each).
FSCORE_METHODS = ("acis", "sawade", "uniform", "top_k", "score_mixture")

_RUN_COLUMNS = ["method", "budget", "trial", "estimate", "variance", "ci_low", "ci_high", "n_labels", "seconds"]


def _method(name: str) -> Callable:
    if name == "score_mixture":
        from .bayesian import score_mixture_fscore

        return score_mixture_fscore
    return {"acis": acis, "sawade": sawade, "uniform": uniform_sampling, "top_k": top_k}[name]


def summarize_runs(estimate, variance, ci_low, ci_high, truth: float) -> dict:
    """Accuracy of repeated runs of one method at one budget (see the module docs).

    Returns a dict: ``mse``, ``mse_se`` (its Monte Carlo standard error), ``bias``,
    ``var_ratio`` (mean predicted variance / empirical variance of the estimates; NaN
    when the estimates do not vary), ``coverage`` and ``undefined`` (share of NaN
    estimates, scored as F = 0 with variance 1/12 and interval [0, 1]).

    Examples
    --------
    >>> s = summarize_runs([0.5, 0.7, float("nan")], [0.01, 0.01, float("nan")],
    ...                    [0.3, 0.5, 0.0], [0.7, 0.9, 1.0], truth=0.6)
    >>> round(s["mse"], 4), round(s["bias"], 4), s["coverage"], round(s["undefined"], 3)
    (0.1267, -0.2, 1.0, 0.333)
    """
    est = np.asarray(estimate, dtype=float)
    var = np.asarray(variance, dtype=float)
    lo = np.asarray(ci_low, dtype=float)
    hi = np.asarray(ci_high, dtype=float)
    undef = ~np.isfinite(est)
    est = np.where(undef, 0.0, est)
    var = np.where(undef | ~np.isfinite(var), 1.0 / 12.0, var)
    sq = (est - truth) ** 2
    emp = est.var(ddof=1) if est.size > 1 else math.nan
    return {
        "mse": float(sq.mean()),
        "mse_se": float(sq.std(ddof=1) / np.sqrt(sq.size)) if sq.size > 1 else math.nan,
        "bias": float(est.mean() - truth),
        "var_ratio": float(var.mean() / emp) if emp > 1e-15 else math.nan,
        "coverage": float(np.mean(undef | ((lo <= truth) & (truth <= hi)))),
        "undefined": float(undef.mean()),
    }


@dataclass(frozen=True, repr=False)
class FScoreStudy:
    """Outcome of :func:`simulate_fscore`.

    Attributes
    ----------
    runs : pandas.DataFrame
        One row per run: ``method``, ``budget``, ``trial``, ``estimate``,
        ``variance``, ``ci_low``, ``ci_high``, ``n_labels`` (labels spent; below the
        budget only with ``target_std_error``) and ``seconds``.
    truth : float
        The pool's true F_alpha.
    alpha, interval_prob : float
        As passed to the methods.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.fscore import simulate_fscore
    >>> rng = np.random.default_rng(1)
    >>> y = (rng.random(4000) < 0.03).astype(int)
    >>> scores = np.clip(0.6 * y + rng.normal(0.2, 0.15, 4000), 0, 1)
    >>> study = simulate_fscore(scores, scores > 0.5, y, methods=["acis"], budgets=[40], trials=5)
    >>> study.runs[["method", "budget", "trial"]].shape
    (5, 3)
    >>> bool(np.isclose(study.truth, 2 * np.sum(y * (scores > 0.5)) / (y.sum() + (scores > 0.5).sum())))
    True
    """

    runs: pd.DataFrame
    truth: float
    alpha: float
    interval_prob: float

    def summary(self) -> pd.DataFrame:
        """MSE, its Monte Carlo SE, bias, variance ratio, coverage, undefined share, seconds.

        One row per method and budget (see :func:`summarize_runs` for the columns).
        """
        rows = []
        for (m, b), g in self.runs.groupby(["method", "budget"], sort=False):
            s = summarize_runs(g["estimate"], g["variance"], g["ci_low"], g["ci_high"], self.truth)
            rows.append({"method": m, "budget": b, **s, "median_seconds": float(g["seconds"].median())})
        return pd.DataFrame(rows).set_index(["method", "budget"])

    def __repr__(self) -> str:
        methods = list(dict.fromkeys(self.runs["method"]))
        budgets = sorted(set(self.runs["budget"]))
        trials = self.runs["trial"].nunique()
        return (
            f"FScoreStudy(truth={self.truth:.4f}, methods={methods}, budgets={budgets}, "
            f"trials={trials})"
        )

    def plot(self, ax=None, *, kind: str = "mse"):
        """Accuracy against the budget, one line per method (log scales).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure is created when omitted.
        kind : {"mse", "variance"}
            ``"mse"``: MSE with a band of ±2 Monte Carlo SE. ``"variance"``: the
            empirical variance of the estimates across trials (solid) against the mean
            variance the runs predicted for themselves (dashed) -- the view of the ACIS
            paper's Figure 7; a dashed line below the solid one means intervals that are
            too narrow. Deterministic methods (no spread) are left out of this view.

        Returns
        -------
        matplotlib.axes.Axes
        """
        if kind not in ("mse", "variance"):
            raise ValueError(f"`kind` must be 'mse' or 'variance', got {kind!r}.")
        from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(5.5, 3.8), layout="constrained")
        s = self.summary().reset_index()
        for m, g in s.groupby("method", sort=False):
            x = g["budget"].to_numpy()
            if kind == "mse":
                y, se = g["mse"].to_numpy(), g["mse_se"].to_numpy()
                (line,) = ax.plot(x, y, marker="o", ms=4, label=m)
                lo = np.maximum(y - 2 * se, y / 10)
                ax.fill_between(x, lo, y + 2 * se, color=line.get_color(), alpha=0.15, lw=0)
                continue
            runs = self.runs[self.runs["method"] == m]
            est = runs["estimate"].fillna(0.0)
            emp = est.groupby(runs["budget"]).var(ddof=1).reindex(x).to_numpy()
            if not np.any(emp > 1e-15):
                continue
            pred = runs["variance"].fillna(1.0 / 12.0).groupby(runs["budget"]).mean().reindex(x).to_numpy()
            emp = np.where(emp > 1e-15, emp, np.nan)  # no spread at that budget: no point on a log scale
            (line,) = ax.plot(x, emp, marker="o", ms=4, label=f"{m}: across trials")
            ax.plot(x, pred, marker="s", ms=3, ls="--", color=line.get_color(), label=f"{m}: predicted (mean)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        budgets = sorted(set(self.runs["budget"]))
        ax.xaxis.set_major_locator(FixedLocator(budgets))
        ax.xaxis.set_major_formatter(FixedFormatter([str(b) for b in budgets]))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("labels (budget)")
        ax.set_ylabel("MSE of the F estimate" if kind == "mse" else "variance of the F estimate")
        ax.legend(fontsize="small")
        return ax



def simulate_fscore(
    scores,
    predictions,
    y_true,
    *,
    methods: Sequence[str] | Mapping[str, Callable] = ("acis", "sawade", "uniform", "top_k"),
    budgets: Sequence[int] = (25, 50, 100, 200, 400),
    trials: int = 100,
    alpha: float = 0.5,
    interval_prob: float = 0.95,
    random_seed: int | np.random.SeedSequence | np.random.Generator | None = 0,
    method_kwargs: Mapping[str, Mapping] | None = None,
    progress: Callable[[str], object] | None = None,
    progressbar: bool = False,
) -> FScoreStudy:
    """Run F-score estimators repeatedly on a fully labeled pool and measure their accuracy.

    Parameters
    ----------
    scores, predictions : array-like of shape (n_items,)
        As in :func:`bayeval.acis`.
    y_true : array-like of shape (n_items,)
        Every item's true label (0/1 or bool); the oracle of every run looks them up.
        Pandas inputs among ``scores``, ``predictions`` and ``y_true`` are paired by
        their index, as in :func:`bayeval.acis`.
    methods : sequence of str or mapping of str to callable
        Names from ``FSCORE_METHODS`` (``"acis"``, ``"sawade"``, ``"uniform"``,
        ``"top_k"``, ``"score_mixture"``), or ``{label: function}`` for functions with
        the interface of :func:`bayeval.acis` (``f(scores, predictions, oracle, *,
        budget, alpha, random_seed, interval_prob, **kwargs) -> ACISResult``).
    budgets : sequence of int
        Label budgets; each at least the methods' ``first_batch`` (10 by default).
    trials : int, default 100
        Runs per method and budget (at least 2). Trial ``t`` uses the same seed for
        every method and budget.
    alpha, interval_prob : float
        Passed to every method (``alpha = 0.5``: F1).
    random_seed : None, int, numpy.random.SeedSequence or numpy.random.Generator, default 0
        Seeds every run reproducibly (None: fresh entropy).
    method_kwargs : mapping, optional
        ``{label: {keyword: value}}`` passed to that method, e.g.
        ``{"acis": {"top_k_prior": False}}``.
    progress : callable, optional
        Called with a one-line message after each (method, budget) cell (how many are
        done, the time so far and an estimate of the time left); ``print`` works.
    progressbar : bool, default False
        One progress bar for the whole study, advanced after every trial (runs done,
        the time left), drawn once it has run about 2 s; the fits inside (the
        ``"score_mixture"`` method) show none of their own.

    Returns
    -------
    FScoreStudy
        ``.runs`` (one row per run), ``.summary()`` (MSE, bias, variance ratio,
        coverage per method and budget) and ``.plot()``.

    Raises
    ------
    TypeError, ValueError
        On malformed input, an unknown method name or a budget no method can spend.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.fscore import simulate_fscore
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(5000) < 0.02).astype(int)
    >>> scores = np.clip(0.6 * y + rng.normal(0.2, 0.15, 5000), 0, 1)
    >>> study = simulate_fscore(scores, scores > 0.5, y, methods=["acis", "uniform"],
    ...                         budgets=[50, 100], trials=20)
    >>> summary = study.summary()
    >>> bool(summary.loc[("acis", 100), "mse"] < summary.loc[("uniform", 100), "mse"])
    True
    >>> list(summary.columns)
    ['mse', 'mse_se', 'bias', 'var_ratio', 'coverage', 'undefined', 'median_seconds']
    """
    # pandas inputs paired by their index, as in the methods themselves (the oracle looks up positions)
    scores, predictions, y_true = align_pool(("scores", scores), ("predictions", predictions), ("y_true", y_true))
    y = np.asarray(y_true)
    if y.dtype == bool:
        y = y.astype(np.int8)
    if y.dtype.kind not in "iuf" or y.ndim != 1:
        raise TypeError(f"`y_true` must be a 1-D array of 0/1 labels, got {V.describe(y)}.")
    if not np.isin(y, (0, 1)).all():
        bad = np.unique(y[~np.isin(y, (0, 1))])[:5]
        raise ValueError(
            "`y_true` must hold every item's true label, 0 or 1 (a study needs the whole "
            f"pool labeled); got values such as {', '.join(repr(v.item()) for v in bad)}."
        )
    y = y.astype(np.int8)
    if isinstance(trials, bool) or not isinstance(trials, numbers.Integral):
        raise TypeError(f"`trials` must be an integer >= 2, got {V.describe(trials)}.")
    if trials < 2:
        raise ValueError(f"`trials` must be at least 2 (variances need two runs), got {trials}.")
    root_seed = as_seed_sequence(random_seed)
    if isinstance(budgets, (str, bytes)) or not isinstance(budgets, Sequence) or len(budgets) == 0:
        raise TypeError(f"`budgets` must be a non-empty sequence of integers, got {V.describe(budgets)}.")
    oracle = lambda idx: y[idx]  # noqa: E731
    # the methods' own checks of the inputs and of every budget, before any run
    s, yhat, alpha, _, _, interval_prob, _ = check_fscore_inputs(scores, predictions, oracle, budgets[0], alpha, 1,
                                                                 interval_prob)
    for b in budgets[1:]:
        check_fscore_inputs(s, yhat, oracle, b, alpha, 1, interval_prob)
    if y.size != s.size:
        raise ValueError(f"`y_true` has {y.size} labels but there are {s.size} scores; give one label per item.")
    if isinstance(methods, Mapping):
        chosen = dict(methods)
        for label, fn in chosen.items():
            if not callable(fn):
                raise TypeError(f"`methods[{label!r}]` must be a function like bayeval.acis, got {V.describe(fn)}.")
    else:
        if isinstance(methods, str):
            methods = [methods]
        unknown = [m for m in methods if m not in FSCORE_METHODS]
        if unknown:
            raise ValueError(f"Unknown method(s) {unknown}; choose from {FSCORE_METHODS} or pass {{label: function}}.")
        chosen = {m: _method(m) for m in methods}
    kwargs_of = dict(method_kwargs or {})
    stray = sorted(set(kwargs_of) - set(chosen))
    if stray:
        raise ValueError(f"`method_kwargs` names method(s) {stray} that are not in `methods` ({list(chosen)}).")
    if not isinstance(methods, Mapping):  # the built-in methods' first batch (10 unless set)
        for label in chosen:
            first = dict(kwargs_of.get(label, {})).get("first_batch", 10)
            for b in budgets:
                check_fscore_inputs(s, yhat, oracle, b, alpha, first, interval_prob)

    tp = int(np.sum((y == 1) & (yhat == 1)))
    den = alpha * int(yhat.sum()) + (1 - alpha) * int(y.sum())
    truth = tp / den
    seeds = root_seed.generate_state(trials)
    if progress is not None and not callable(progress):
        raise TypeError(f"`progress` must be a function taking one message (e.g. print), got {progress!r}.")
    rows = []
    t_start, n_cells, done = time.perf_counter(), len(chosen) * len(budgets), 0
    n_runs = n_cells * trials
    with Bar(f"simulate_fscore: {n_runs} runs", total=n_runs, enabled=bool(progressbar)) as bar:
        for label, fn in chosen.items():
            kw = dict(kwargs_of.get(label, {}))
            for b in budgets:
                if progress is not None and done:
                    spent = time.perf_counter() - t_start
                    progress(
                        f"simulate_fscore: {done}/{n_cells} (method, budget) cells done ({spent:.0f} s; "
                        f"about {spent / done * (n_cells - done):.0f} s left); now {label} at budget {b}"
                    )
                done += 1
                bar.update(f"simulate_fscore: {label} at budget {b}")
                for t in range(trials):
                    t0 = time.perf_counter()
                    r = fn(s, yhat, oracle, budget=int(b), alpha=alpha, random_seed=int(seeds[t]),
                           interval_prob=interval_prob, **kw)
                    rows.append(
                        (label, int(b), t, r.estimate, r.variance, r.interval[0], r.interval[1], r.n_labels,
                         time.perf_counter() - t0)
                    )
                    bar.update(advance=1)
    runs = pd.DataFrame(rows, columns=_RUN_COLUMNS)
    return FScoreStudy(runs=runs, truth=float(truth), alpha=alpha, interval_prob=interval_prob)
