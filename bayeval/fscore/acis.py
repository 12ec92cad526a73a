"""Active calibration and importance sampling (ACIS) for F-scores of rare categories.

Estimates the F-score of a binary classifier on a large, unlabeled pool from a small
labeling budget, following the ACIS algorithm of Poms et al. (2021, "Low-Shot
Validation: Active Importance Sampling for Estimating Classifier Performance on Rare
Categories", ICCV), with three baselines that share its interface and result type
(:func:`sawade`, :func:`uniform_sampling`, :func:`top_k`). Unlike the paper, ACIS here
also samples outside its top-K domain (the rest stratum), uses a logistic calibration of
the scores as a control variate, and by default reports an interval that accounts for
the positives that may hide outside the domain.

How a run works -- calibration, proposal, sampling domain and design, the estimate and
its variance, model assistance, the rest stratum and the six intervals, stopping
early and what survives a failure, the extension point -- is written out in
``docs/acis.md``. The sampling design lives in ``_design.py``, the estimators and
intervals in ``_estimators.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from bayeval.core import _validate as V

from ._checks import (
    align_pool,
    call_oracle,
    check_fscore_inputs,
    check_probability_vector,
    check_rng,
    check_score_spread,
    check_target,
    keep_labels,
    warn_no_true_positive,
)
from ._design import (
    G_FLOOR,
    batch_sizes,
    calibration_prior,
    inclusion_probabilities,
    isotonic_fit,
    sawade_proposal,
    systematic_sample,
    top_order,
    typical_draws,
)
from ._estimators import (
    INTERVAL_NOTES,
    PLATT_PRIOR_PROB,
    PLATT_PRIOR_VAGUE,
    bound_by_labels,
    calibrated_offsets,
    domain_model_variance,
    evidence_reason,
    fallback_prior,
    fit_rest_model,
    label_bounds,
    logistic,
    normal_interval,
    platt_feature,
    platt_fit,
    predicts_better,
    ratio_estimate,
    rest_gate,
    rest_interval,
    split_point_prior,
)

__all__ = ["ACISResult", "acis", "sawade", "uniform_sampling", "top_k"]

#: ``target_std_error`` never stops a run before this many batches (see ``acis``).
_MIN_STOP_BATCHES = 3
#: Ways to compute the interval (``acis(interval=...)``).
_INTERVALS = ("model", "jeffreys", "delta", "calibrated", "checked", "evidence")
#: The model's count of the rest's positives enters the estimate only when the labels
#: pin it down within about a factor e (standard deviation of its log at most this);
#: otherwise the rest's Horvitz-Thompson count does (see ``acis``).
_REST_MODEL_SDLOG = 1.0
#: The calibrated interval falls back to the design-only one when the rest draws found
#: more positives than the calibration expects with a chance below this (see ``_Book``).
_REST_MISFIT_P = 0.05
#: Which labels the rest count's calibration is fitted to (``docs/acis.md``, "Which labels the
#: rest's curve reads"): ``"chosen"`` (the default) fits it to every label and to the labeled
#: predicted negatives -- every rest item is one -- and uses the second where it predicts their labels
#: better by more than its two parameters' optimism (``predicts_better``); ``"all"`` (every label,
#: the choice before) and ``"negatives"`` are the study's alternatives
#: (``benchmarks/results/acis_restfit_chosen.md``). Not a public setting.
REST_FIT = "chosen"

HISTORY_COLUMNS = [
    "iteration",
    "batch_size",
    "labels_spent",
    "domain_size",
    "iteration_estimate",
    "iteration_variance",
    "variance_floor",
    "rest_labels",
    "rest_positives",
    "estimate",
    "variance",
    "ci_low",
    "ci_high",
    "stop_std_error",
]


# ----------------------------------------------------------------------------------
# Result
# ----------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class ACISResult:
    """Outcome of an F-score estimation run (ACIS or a baseline).

    Attributes
    ----------
    estimate : float
        Estimated F_alpha of the pool (NaN if no informative item was labeled).
    variance : float
        Estimated sampling variance of ``estimate`` (with the zero-variance floor): the
        domain's design-based variance plus the linearized variance of the rest stratum's
        count, capped at 0.25 (the variance of a value in [0, 1] is at most that). The
        reported ``interval`` is not ``estimate ± z std_error`` unless ``interval_method``
        is ``"delta"``: the default Jeffreys interval is built from the rest's counts and
        is asymmetric, so a capped ``std_error`` of 0.5 can sit beside an interval 0.46
        wide. ``variances`` holds each interval method's own.
    interval : tuple of float
        ``interval_prob`` interval, clipped to [0, 1] (see ``interval_method``).
    labeled : pandas.DataFrame
        One row per labeled item, in the order of labeling: ``item`` (position in
        the pool), ``label`` (0/1 from the oracle), ``prediction``, ``score``,
        ``batch`` (1-based iteration), ``inclusion_probability`` (probability with
        which the item was drawn in its batch; 1 for deterministic choices) and
        ``weight`` (its importance weight in its batch, ``1 / inclusion_probability``,
        in units of items).
    history : pandas.DataFrame
        One row per batch: ``iteration``, ``batch_size``, ``labels_spent``,
        ``domain_size``, ``iteration_estimate`` and ``iteration_variance`` (this
        batch's own estimate), ``variance_floor`` (the zero-variance floor included in
        it), ``rest_labels`` and ``rest_positives`` (items labeled in, and positives
        found in, ACIS's current rest stratum; 0 for the other methods), and the
        reported ``estimate``, ``variance``, ``ci_low``, ``ci_high`` after the batch
        (for ACIS: averaged over the last iterations), and ``stop_std_error``: the
        standard error that ``target_std_error`` is compared with (the delta method's,
        ``sqrt(variances["delta"])``, the same whatever ``interval`` reports).
    method : str
        ``"acis"``, ``"sawade"``, ``"uniform"``, ``"top_k"`` or ``"score_mixture"``
        (:func:`bayeval.fscore.bayesian.score_mixture_fscore`).
    alpha : float
        Weight of precision in F_alpha (0.5 is F1).
    interval_prob : float
        Coverage of ``interval``.
    n_items : int
        Size of the pool.
    posterior : Posterior or None
        The fitted score-mixture posterior (``method == "score_mixture"`` only).
    interval_method : str
        How ``interval`` was computed: ``"jeffreys"`` (ACIS's default: the rest
        stratum's count of positives gets a design-only Jeffreys posterior),
        ``"calibrated"`` (that count from the calibration fitted on every label, with
        its coefficient uncertainty), ``"checked"`` (the calibrated count, also multiplied
        by how far the curve's extrapolation erred on the labels), ``"model"`` (the same calibration with a rate
        multiplier updated by the rest draws), ``"posterior"`` (the central interval of
        the score mixture's posterior draws of F: ``method == "score_mixture"``) or
        ``"delta"`` (the normal interval of the delta-method variance; every other method).
    intervals : dict
        Every interval the run supports, by method, from the same estimate: ACIS with
        its rest stratum gives ``"jeffreys"``, ``"calibrated"``, ``"checked"``, ``"model"``
        and ``"delta"`` (so the design-only interval can be read beside the narrower ones
        that trust the calibration's low tail, without a second run); other runs give
        their one interval. ``intervals[interval_method] == interval``.
    variances : dict
        The variance each interval reports, by method (``variances[interval_method] ==
        variance``); ACIS with its rest stratum adds ``"domain"``, the sampled domain's
        design-based variance alone (no term for the rest's unknown count).
    interval_reason : str
        Which interval is reported and why: what it assumes about the rest stratum
        and, for the default, the measurement that chose it. ``summary()`` shows every
        interval with its note.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.fscore.acis import acis
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(5000) < 0.02).astype(int)
    >>> scores = np.clip(0.6 * y + rng.normal(0.2, 0.15, 5000), 0, 1)
    >>> res = acis(scores, scores > 0.5, lambda idx: y[idx], budget=60, random_seed=1)
    >>> len(res.labeled), list(res.history["labels_spent"])
    (60, [10, 30, 60])
    >>> res.interval[0] <= res.estimate <= res.interval[1]
    True
    """

    estimate: float
    variance: float
    interval: tuple[float, float]
    labeled: pd.DataFrame
    history: pd.DataFrame
    method: str
    alpha: float
    interval_prob: float
    n_items: int
    posterior: object = None
    interval_method: str = "delta"
    intervals: dict | None = None
    variances: dict | None = None
    interval_reason: str = ""

    def __post_init__(self):
        if self.intervals is None:
            object.__setattr__(self, "intervals", {self.interval_method: tuple(self.interval)})
        if self.variances is None:
            object.__setattr__(self, "variances", {self.interval_method: float(self.variance)})
        if not self.interval_reason:
            object.__setattr__(self, "interval_reason", INTERVAL_NOTES.get(self.interval_method, ""))

    def summary(self) -> pd.DataFrame:
        """One row per interval the run supports: its ends, width and variance, whether it
        is the reported one, and what it assumes.

        Returns
        -------
        pandas.DataFrame
            Indexed by interval method, with columns ``low``, ``high``, ``width``,
            ``variance``, ``reported`` (bool) and ``note`` (see ``interval_reason``).

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.fscore.acis import acis
        >>> rng = np.random.default_rng(0)
        >>> y = (rng.random(5000) < 0.02).astype(int)
        >>> scores = np.clip(0.6 * y + rng.normal(0.2, 0.15, 5000), 0, 1)
        >>> res = acis(scores, scores > 0.5, lambda idx: y[idx], budget=60, random_seed=1)
        >>> table = res.summary()
        >>> table.index[table["reported"]].tolist() == [res.interval_method]
        True
        """
        rows = {
            m: dict(low=lo, high=hi, width=hi - lo, variance=self.variances.get(m, math.nan),
                    reported=m == self.interval_method,
                    note=self.interval_reason if m == self.interval_method else INTERVAL_NOTES.get(m, ""))
            for m, (lo, hi) in self.intervals.items()
        }
        return pd.DataFrame.from_dict(rows, orient="index").rename_axis("interval")

    @property
    def std_error(self) -> float:
        """Square root of ``variance`` (not the half-width of the reported interval unless it is
        the delta method's; see ``variance``)."""
        return float(np.sqrt(self.variance))

    @property
    def n_labels(self) -> int:
        """Number of oracle calls (distinct labeled items)."""
        return len(self.labeled)

    def __repr__(self) -> str:
        lo, hi = self.interval
        others = "".join(
            f", {k}=({a:.4f}, {b:.4f})"
            for k, (a, b) in self.intervals.items()
            if k != self.interval_method
        )
        return (
            f"ACISResult(method={self.method!r}, alpha={self.alpha:g}, "
            f"estimate={self.estimate:.4f}, std_error={self.std_error:.4f}, "
            f"interval=({lo:.4f}, {hi:.4f}) [{self.interval_method}]{others}, "
            f"n_labels={self.n_labels}, n_items={self.n_items})"
        )

    def plot(self, ax=None, *, truth: float | None = None, label: str | None = None, color=None):
        """Draw the estimate and its interval against the number of labels spent.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure is created when omitted.
        truth : float, optional
            True F-score, drawn as a dashed horizontal line.
        label : str, optional
            Legend label; defaults to the method name.
        color : optional
            Any matplotlib color.

        Returns
        -------
        matplotlib.axes.Axes

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np
        >>> from bayeval.fscore.acis import acis
        >>> rng = np.random.default_rng(0)
        >>> y = (rng.random(5000) < 0.02).astype(int)
        >>> scores = np.clip(0.6 * y + rng.normal(0.2, 0.15, 5000), 0, 1)
        >>> res = acis(scores, scores > 0.5, lambda idx: y[idx], budget=60, random_seed=1)
        >>> ax = res.plot(truth=0.8)
        >>> ax.get_xlabel()
        'labels spent'
        """
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(5, 3.5), layout="constrained")
        h = self.history
        x = h["labels_spent"].to_numpy()
        name = label if label is not None else self.method
        (line,) = ax.plot(x, h["estimate"].to_numpy(), marker="o", ms=3, label=name, color=color)
        ax.fill_between(
            x,
            h["ci_low"].to_numpy(),
            h["ci_high"].to_numpy(),
            color=line.get_color(),
            alpha=0.2,
            linewidth=0,
        )
        if truth is not None:
            ax.axhline(truth, color="0.3", linestyle="--", linewidth=1, label="true F")
        ax.set_xlabel("labels spent")
        f_name = "F1" if self.alpha == 0.5 else f"F (alpha={self.alpha:g})"
        ax.set_ylabel(f"{f_name} estimate, {self.interval_prob:.0%} interval")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(loc="best", fontsize="small")
        return ax


class _Book:
    """Labels bought so far, running sums of the labeled stratum, and the history."""

    def __init__(
        self, s, yhat, alpha, interval_prob, average_last, target_std_error=None, interval="delta"
    ):
        self.s, self.yhat, self.alpha = s, yhat, alpha
        self.target_std_error = target_std_error
        self.interval_prob = interval_prob
        self.interval = interval
        self.z = float(norm.ppf(0.5 + interval_prob / 2.0))
        # Rest stratum (outside the top-K domain), see ``rest_interval``: its current
        # size, the items drawn from it with their labels, and the probability that an
        # item of the current rest has been drawn by now.
        self.rest = None
        self.average_last = average_last
        self.is_labeled = np.zeros(s.size, dtype=bool)
        self.items: list[np.ndarray] = []
        self.labels: list[np.ndarray] = []
        self.pis: list[np.ndarray] = []
        self.batch_ids: list[np.ndarray] = []
        self.a_fixed = 0.0  # sum of y * yhat over labeled items
        self.v_fixed = 0.0  # sum of v over labeled items
        self.rows: list[dict] = []
        self._exact: list[bool] = []
        self.intervals: dict = {}  # every interval after the latest batch (see ``_combined``)
        self.variances: dict = {}  # and the variance each reports
        self.cal_misfit = False  # the calibrated interval fell back to the design-only one
        self.every_interval = interval in ("checked", "evidence")  # they cost: else only for the result
        self.model_domain = False  # the evidence interval's domain variance is the model-anticipated one
        self.partial = None  # (items, labels, pi): the answers of a batch that broke off (``ask``)

    @property
    def n_labeled(self) -> int:
        return int(sum(x.size for x in self.items))

    def labeled_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.items:
            return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.int8)
        return np.concatenate(self.items), np.concatenate(self.labels)

    def add(self, items, labels, pi):
        """Record labeled items of the batch being bought (the next ``record``)."""
        batch, self.partial = len(self.rows) + 1, None
        self.items.append(items)
        self.labels.append(labels)
        self.pis.append(pi)
        self.batch_ids.append(np.full(items.size, batch, dtype=np.int64))
        self.is_labeled[items] = True
        yh = self.yhat[items].astype(np.float64)
        y = labels.astype(np.float64)
        self.a_fixed += float(np.dot(y, yh))
        self.v_fixed += float((self.alpha * yh + (1.0 - self.alpha) * y).sum())

    def ask(self, oracle, items, pi) -> np.ndarray:
        """The oracle's labels of ``items`` (drawn with inclusion probabilities ``pi``). Until ``add``
        books them they join the table a failure hands back (``labeled_frame``); if the call breaks,
        the labels it gave before the break do."""
        got = np.full(items.size, np.nan)
        try:
            got = call_oracle(oracle, items)
            return got
        except BaseException as exc:
            got = exc.__dict__.pop("bayeval_answers", got)
            raise
        finally:
            keep = ~np.isnan(got)
            self.partial = (items[keep], got[keep].astype(np.int8), np.asarray(pi, dtype=np.float64)[keep])

    def record(
        self, batch_size, domain_size, g_i, var_i, floor_i, *, exact=False, var_rest=0.0,
        den=math.nan,
    ):
        """Store one iteration; ``exact``: it labeled every candidate (a census).

        ``var_i`` is the delta-method variance of the sampled domain, ``var_rest`` that
        of the rest stratum (0 without one), ``den`` the estimated F denominator.
        """
        rest = self.rest
        self.rows.append(
            dict(
                iteration=len(self.rows) + 1,
                batch_size=batch_size,
                labels_spent=self.n_labeled,
                domain_size=domain_size,
                iteration_estimate=g_i,
                iteration_variance=(
                    min(var_i + floor_i + var_rest, 0.25) if math.isfinite(var_i) else math.nan
                ),
                variance_floor=floor_i,
                rest_labels=0 if rest is None else rest["n_drawn"],
                rest_positives=0 if rest is None else rest["x"],
                _var_domain=min(var_i + floor_i, 0.25) if math.isfinite(var_i) else math.nan,
                _den=den,
                _r_hat=math.nan if rest is None else rest["r_hat"],
                # this iteration's calibrated rest offsets (down, up), relative to its own count
                _cal_off=(
                    calibrated_offsets(g_i, den, rest, alpha=self.alpha, interval_prob=self.interval_prob)
                    if rest is not None and rest["size"] and math.isfinite(g_i) and den > 0 else (0.0, 0.0)
                ),
                _rest=rest,  # for the checked interval's offsets (``_combined``)
            )
        )
        self._exact.append(exact)
        est, var, lo, hi = self._combined()
        # the standard error the stopping rule reads: the delta method's, whatever ``interval`` reports
        stop_se = math.sqrt(self.variances["delta"]) if math.isfinite(self.variances["delta"]) else math.nan
        self.rows[-1].update(estimate=est, variance=var, ci_low=lo, ci_high=hi, stop_std_error=stop_se)

    def _combined(self) -> tuple[float, float, float, float]:
        """Averaged estimate, its variance and interval after the latest batch, all cut to the
        range of F that the labels leave (``label_bounds``: near exhaustion it is narrow)."""
        est, var, lo, hi = self._averaged()
        items, labels = self.labeled_arrays()
        est = bound_by_labels(est, self.intervals, self.variances, *label_bounds(self.alpha, self.yhat, items, labels))
        key = self.interval if self.interval in self.intervals else "delta"
        if key not in self.intervals:
            return est, var, lo, hi
        return est, self.variances[key], *self.intervals[key]

    def _averaged(self) -> tuple[float, float, float, float]:
        """Averaged estimate, its variance and interval after the latest batch."""
        rows = self.rows
        if self._exact[-1]:  # a census of the domain is exact: nothing to average
            rows = rows[-1:]
        usable = [r for r in rows if math.isfinite(r["iteration_estimate"])]
        usable = usable[-self.average_last :]
        if not usable:
            self.intervals = {"delta": (0.0, 1.0)}
            self.variances = {"delta": math.nan}
            return math.nan, math.nan, 0.0, 1.0
        w = np.array([r["batch_size"] for r in usable], dtype=np.float64)
        w /= w.sum()
        est = float(np.dot(w, [r["iteration_estimate"] for r in usable]))
        # Iteration errors are martingale differences (each batch is unbiased for the
        # still-unlabeled part given the past), hence uncorrelated to first order.
        var = float(np.dot(w**2, [r["iteration_variance"] for r in usable]))
        self.intervals = {"delta": normal_interval(est, var, self.z)}
        self.variances = {"delta": var}
        if self.rest is None:
            return est, var, *self.intervals["delta"]
        if self.rest["size"] == 0:  # the domain is the whole pool: no count left to bound
            self.intervals = dict.fromkeys(_INTERVALS, self.intervals["delta"])
            self.variances = dict.fromkeys(_INTERVALS, var)
            return est, var, *self.intervals["delta"]
        var_domain = float(np.dot(w**2, [r["_var_domain"] for r in usable]))
        den = float(np.dot(w, [r["_den"] for r in usable]))
        r_bar = float(np.dot(w, [r["_r_hat"] for r in usable]))
        self.variances["domain"] = var_domain  # the sampled domain's alone (no rest term)
        # Every interval of the run (they share the estimate; ``ACISResult.intervals``).
        variances = self.variances
        # The calibrated interval moves each averaged iteration by its own rest's count,
        # and the iterations move together (the same calibration): the offsets average.
        # The checked interval: every averaged iteration's count times the latest tail check's
        # ratio (the check with the most labels; the curve's error does not depend on the rest).
        check = {k: self.rest.get(k, math.nan) for k in ("tail_x", "tail_e")}
        offsets = {"calibrated": tuple(float(np.dot(w, [r["_cal_off"][k] for r in usable])) for k in (0, 1))}
        for method, gated in (("checked", False), ("evidence", True)) if self.every_interval else ():
            chk = [calibrated_offsets(r["iteration_estimate"], r["_den"], {**r["_rest"], **check}, alpha=self.alpha,
                                      interval_prob=self.interval_prob, checked=True, gated=gated)
                   if r["_rest"] is not None and r["_rest"]["size"] and r["_den"] > 0 else (0.0, 0.0) for r in usable]
            offsets[method] = tuple(float(np.dot(w, [c[k] for c in chk])) for k in (0, 1))
        # The evidence interval's domain variance: each iteration's at least its model-anticipated one.
        var_model = float(np.dot(w**2, [max(r["_var_domain"], (r["_rest"] or {}).get("var_dom_model", 0.0))
                                         for r in usable]))
        self.model_domain = var_model > var_domain
        for method in ("jeffreys", "model", "calibrated") + (("checked", "evidence") if self.every_interval else ()):
            _, variances[method], lo, hi = rest_interval(
                est, var_model if method == "evidence" else var_domain, den, self.rest, alpha=self.alpha,
                interval_prob=self.interval_prob, method="calibrated" if method in ("checked", "evidence") else method,
                r_bar=r_bar, offsets=offsets.get(method),
            )
            self.intervals[method] = (lo, hi)
        self.cal_misfit = self.rest.get("rest_misfit_p", 1.0) < _REST_MISFIT_P
        for m in [m for m in ("calibrated", "checked", "evidence") if m in self.intervals] if self.cal_misfit else ():
            # the rest draws contradict the calibration: the design-only bound
            (lo_c, hi_c), (lo_j, hi_j) = self.intervals[m], self.intervals["jeffreys"]
            self.intervals[m] = lo, hi = min(lo_c, lo_j), max(hi_c, hi_j)
            variances[m] = max(variances[m], min(((hi - lo) / (2 * self.z)) ** 2, 0.25))
        return est, variances[self.interval], *self.intervals[self.interval]

    def should_stop(self) -> bool:
        """The stopping rule of ``target_std_error`` (see :func:`acis`)."""
        if self.target_std_error is None or len(self.rows) < _MIN_STOP_BATCHES:
            return False  # early variances rest on a handful of labels: too often too low
        last = self.rows[-1]
        return (
            math.isfinite(last["estimate"])
            and last["variance_floor"] == 0.0
            and last["stop_std_error"] <= self.target_std_error
        )

    def labeled_frame(self) -> pd.DataFrame:
        """The labeled items so far, one row each, in the order of labeling."""
        items, labels = self.labeled_arrays()
        pi = np.concatenate(self.pis) if self.pis else np.empty(0)
        batch = np.concatenate(self.batch_ids) if self.batch_ids else np.empty(0, int)
        if self.partial is not None:  # then the answers of the batch that broke off
            items, labels, pi = (np.r_[a, b] for a, b in zip((items, labels, pi), self.partial, strict=True))
            batch = np.r_[batch, np.full(self.partial[0].size, len(self.rows) + 1)]
        return pd.DataFrame(
            {
                "item": items.astype(np.int64),
                "label": labels.astype(np.int8),
                "prediction": self.yhat[items].astype(np.int8),
                "score": self.s[items],
                "batch": batch,
                "inclusion_probability": pi,
                "weight": 1.0 / pi,
            }
        )

    def _no_rest(self) -> bool:
        """Whether nothing lies outside the sampled domain: no rest stratum, or the top-K domain
        grew to the whole pool (every interval is then the delta method's)."""
        return self.rest is None or self.rest["size"] == 0

    def _reason(self) -> str:
        if self.rest is None:
            return "delta-method normal interval (no rest stratum: nothing outside the sampled domain to bound)"
        if self.rest["size"] == 0:
            return (
                f"delta-method normal interval: the top-K domain covers the whole pool, so no rest stratum is "
                f"left whose hidden positives an interval would bound, and every interval (the requested "
                f"{self.interval!r} too) is this one"
            )
        note = INTERVAL_NOTES[self.interval]
        if self.interval == "evidence" and self.rest["size"]:
            note += evidence_reason(self.rest, self.model_domain)
        if self.interval in ("calibrated", "checked", "evidence") and self.cal_misfit:
            return (
                note + f"; widened to the design-only (jeffreys) interval in this run: "
                f"the rest draws found {self.rest['x']} positive(s) where the calibration expected "
                f"{self.rest.get('rest_expected', math.nan):.2g}"
            )
        return note

    def result(self, method: str, interval_prob: float) -> ACISResult:
        if not self.every_interval and self.rows:  # add the checked interval, now that it is final
            self.every_interval = True
            self._combined()
        labeled = self.labeled_frame()
        warn_no_true_positive(labeled)
        history = pd.DataFrame(self.rows, columns=HISTORY_COLUMNS)
        last = self.rows[-1]
        return ACISResult(
            estimate=float(last["estimate"]),
            variance=float(last["variance"]),
            interval=(float(last["ci_low"]), float(last["ci_high"])),
            labeled=labeled,
            history=history,
            method=method,
            alpha=self.alpha,
            interval_prob=interval_prob,
            n_items=int(self.s.size),
            interval_method="delta" if self._no_rest() else self.interval,
            intervals={k: (float(lo), float(hi)) for k, (lo, hi) in self.intervals.items()},
            variances={k: float(v) for k, v in self.variances.items()},
            interval_reason=self._reason(),
        )


# ----------------------------------------------------------------------------------
# The importance-sampling engine (ACIS and the Sawade baseline)
# ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _RunSettings:
    """What an importance-sampling run is asked to do (checked by :func:`acis` and
    :func:`sawade`, whose parameters these are; ``method`` names the run in its result)."""

    budget: int
    alpha: float
    first_batch: int
    proposal_floor: float
    probabilities: object  # None (isotonic calibration), a fixed array, or a callable
    beta: float
    beta_iterations: int
    top_k_prior: bool
    top_k_factor: float
    average_last: int
    initial_estimate: float
    interval_prob: float
    method: str
    target_std_error: float | None = None
    rest_share: float = 0.0
    rest_uniform: float = 1.0
    interval: str = "delta"
    model_assist: bool = False

    @property
    def use_rest(self) -> bool:
        """Whether part of every batch is drawn outside the top-K domain (the rest stratum)."""
        return self.top_k_prior and self.rest_share > 0


def _take(x, idx):
    """``x[idx]``, with ``idx`` None meaning "every working position"."""
    return x if idx is None else x[idx]


class _ImportanceRun:
    """One run of the importance-sampling engine (ACIS and the Sawade baseline).

    Labels are bought in doubling batches; before each batch the candidates' calibrated
    probabilities give Sawade's proposal, the batch is a systematic sample without
    replacement (plus, with the rest stratum, a sample from outside the top-K domain),
    and the batch's estimate joins the book. The random stream is read in a fixed
    order (the pool's shuffle, then per batch: the domain's shuffle, the domain's draw,
    the rest's shuffle, the rest's draw, the rest count's predictive draws), so a seed
    gives the same run. The algorithm, step by step: ``docs/acis.md``.
    """

    def __init__(self, s: np.ndarray, yhat: np.ndarray, oracle, rng: np.random.Generator, cfg: _RunSettings):
        self.s, self.yhat, self.oracle, self.rng, self.cfg = s, yhat, oracle, rng, cfg
        self.n = s.size
        self.sizes = batch_sizes(cfg.budget, cfg.first_batch)
        self.book = _Book(s, yhat, cfg.alpha, cfg.interval_prob, cfg.average_last, cfg.target_std_error,
                          cfg.interval)
        self.use_rest = cfg.use_rest
        if self.use_rest:
            self.book.rest = dict(
                size=0, x=0, n_drawn=0, exposure=0.0, exposure_max=0.0, r_hat=0.0, r_model=0.0,
                sdlog=0.0, var_r=0.0, r_sorted=np.zeros(0), r_cal=0.0, var_r_cal=0.0,
                r_cal_draws=np.zeros(0), rest_misfit_p=1.0,
            )
            self.rest_items: list[np.ndarray] = []
            self.rest_labels: list[np.ndarray] = []
            # Probability that an item of the current rest has never been drawn: at most
            # ``rest_missed`` (its complement bounds every item's exposure from below) and
            # at least ``rest_missed_best`` (its complement bounds it from above).
            self.rest_missed = self.rest_missed_best = 1.0
        self.t_feat = self.platt_prior = None
        if self.use_rest or cfg.model_assist:
            self.t_feat, self.platt_prior = platt_feature(s)
        self._plan_domain()
        self._working_copies()

    def _plan_domain(self) -> None:
        """The sampling domain per iteration (top-K prior: nested, known in advance)."""
        cfg, n = self.cfg, self.n
        self.ks, self.in_domain = [], None
        if not cfg.top_k_prior:
            return
        n_pred = int(self.yhat.sum())
        k_prev, spent = 0, 0
        for i, b in enumerate(self.sizes, start=1):
            k_i = min(n, max(k_prev, math.ceil(cfg.top_k_factor * (i + 1) * n_pred), spent + 2 * b))
            self.ks.append(k_i)
            k_prev, spent = k_i, spent + b
        self.order = top_order(self.s, self.ks[-1])
        self.in_domain = self.yhat == 1
        self.k_done = 0

    def _working_copies(self) -> None:
        """The calibration prior, fixed probabilities, and the arrays the loop works on.

        Candidates are visited in a random order (systematic sampling along it). With
        the top-K prior the domain is small and is shuffled per batch. Otherwise one
        shuffle of the whole pool serves every batch (each batch has its own random
        start), and the loop works on shuffled copies so that memory access stays
        sequential; ``perm`` maps working positions back to items.
        """
        cfg, s, yhat = self.cfg, self.s, self.yhat
        probabilities = cfg.probabilities
        c0 = calibration_prior(s, yhat) if probabilities is None else None
        fixed_p = probabilities if (probabilities is not None and not callable(probabilities)) else None
        self.perm = None
        self.s_w, self.yhat_w, self.c0_w, self.p_w = s, yhat, c0, fixed_p
        # the calibration's feature in working order: model assistance reads it, and so does the rest
        # stratum's model-anticipated variance with or without assistance (None when neither is on)
        self.t_feat_w = self.t_feat
        if not cfg.top_k_prior:
            perm = self.perm = self.rng.permutation(self.n)
            self.s_w, self.yhat_w = s[perm], yhat[perm]
            if self.t_feat is not None:
                self.t_feat_w = self.t_feat[perm]
            self.c0_w = c0[perm] if c0 is not None else None
            self.p_w = fixed_p[perm] if fixed_p is not None else None
        self.labeled_w = np.zeros(self.n, dtype=bool)
        if self.p_w is not None:
            self.p_w = cfg.proposal_floor + (1.0 - 2.0 * cfg.proposal_floor) * self.p_w

    def run(self) -> ACISResult:
        """Buy the batches (stopping early at ``target_std_error``) and report."""
        cfg = self.cfg
        with keep_labels(self.book, cfg.method):
            g_prev = cfg.initial_estimate
            for i, b in enumerate(self.sizes, start=1):
                g_i = self._batch(i, b, g_prev)
                if math.isfinite(g_i):
                    g_prev = g_i
                if self.book.should_stop():
                    break
        return self.book.result(cfg.method, cfg.interval_prob)

    # ------------------------------------------------------------ one batch

    def _candidates(self, i: int, b: int):
        """This batch's domain candidates (None: every working position), their number,
        the unlabeled rest items and how many of the batch go to the rest."""
        cand, rest_pool, b_rest = None, None, 0
        if self.cfg.top_k_prior:
            self.in_domain[self.order[self.k_done : self.ks[i - 1]]] = True
            self.k_done = self.ks[i - 1]
            cand = np.flatnonzero(self.in_domain & ~self.labeled_w)
            cand = cand[self.rng.permutation(cand.size)]
            n_cand = cand.size
            if self.use_rest:
                rest_pool = np.flatnonzero(~self.in_domain & ~self.labeled_w)
                if b >= 2 and rest_pool.size:
                    b_rest = min(math.ceil(self.cfg.rest_share * b), b - 1, rest_pool.size)
        else:
            # Every working position is a candidate; labeled ones get q = 0 in the proposal.
            # (Avoids gathering whole-pool arrays at every batch.)
            n_cand = self.n - self.book.n_labeled
        return cand, n_cand, rest_pool, b_rest

    def _calibration(self, i: int, cand) -> np.ndarray:
        """Each candidate's probability of a positive, rescaled to [floor, 1 - floor]."""
        cfg = self.cfg
        if self.c0_w is not None:
            if i == 1:
                c = _take(self.c0_w, cand)
            else:
                items, labels = self.book.labeled_arrays()
                ux, fit = isotonic_fit(self.s[items], labels)
                c_fit = np.interp(_take(self.s_w, cand), ux, fit)
                b_i = cfg.beta * max(0.0, 1.0 - (i - 2) / cfg.beta_iterations)
                c = b_i * _take(self.c0_w, cand) + (1.0 - b_i) * c_fit
        elif self.p_w is not None:
            return _take(self.p_w, cand)  # already rescaled to [proposal_floor, 1 - proposal_floor]
        else:
            items, labels = self.book.labeled_arrays()
            p_all = check_probability_vector(
                cfg.probabilities(items.copy(), labels.copy()), self.n, "probabilities(...) output"
            )
            c = _take(p_all if self.perm is None else p_all[self.perm], cand)
        return cfg.proposal_floor + (1.0 - 2.0 * cfg.proposal_floor) * c

    def _model_assist(self, coef, cand, yhat_c):
        """Model assistance: the calibration's probabilities of the candidates, and its
        expected counts over the unlabeled ones (numerator and denominator offsets)."""
        if not self.cfg.model_assist:
            return None, 0.0, 0.0
        alpha = self.cfg.alpha
        m_c = logistic(coef[0] + coef[1] * _take(self.t_feat_w, cand))
        unl_c = None if cand is not None else ~self.labeled_w
        m_u, yh_u = _take(m_c, unl_c), _take(yhat_c, unl_c).astype(np.float64)
        a_off = float(np.dot(m_u, yh_u))
        v_off = alpha * float(yh_u.sum()) + (1.0 - alpha) * float(m_u.sum())
        return m_c, a_off, v_off

    def _draw_rest(self, rest_pool, coef, b_rest: int) -> dict | None:
        """The rest stratum's draw: a PPS sample of the unlabeled items outside the domain,
        in proportion to the rest calibration (a logistic regression of all labels so far
        on the scores), mixed with uniform. None when there is no rest to look at."""
        if not (self.use_rest and rest_pool.size):
            return None
        rest_pool = rest_pool[self.rng.permutation(rest_pool.size)]
        t_r = self.t_feat[rest_pool]
        rest = {"pool": rest_pool, "t": t_r, "pick": None}
        if not b_rest:
            return rest
        c_r = logistic(coef[0] + coef[1] * t_r)
        c_sum = float(c_r.sum())
        uniform = self.cfg.rest_uniform
        q_r = np.full(rest_pool.size, uniform / rest_pool.size)
        if uniform < 1.0 and c_sum > 0:
            q_r += (1.0 - uniform) * c_r / c_sum
        pi_all = inclusion_probabilities(q_r, b_rest)
        pick_r = systematic_sample(pi_all, b_rest, self.rng)
        self.rest_missed *= 1.0 - float(pi_all.min())
        self.rest_missed_best *= 1.0 - float(pi_all.max())
        rest.update(pick=pick_r, items=rest_pool[pick_r], pi=pi_all[pick_r])
        return rest

    def _rest_count(self, rest: dict | None, coef, cov, labeled) -> tuple[float, dict | None, np.ndarray, np.ndarray]:
        """The rest's positives, which add ``(1 - alpha)`` times their count to the
        denominator and nothing to the numerator: those drawn in this batch, plus the
        predicted count among the still-unlabeled rest items. Also the rest items drawn
        so far (outside the current domain) and their labels."""
        drawn = np.concatenate(self.rest_items) if self.rest_items else np.empty(0, np.intp)
        outside = ~self.in_domain[drawn]
        drawn = drawn[outside]
        found = np.concatenate(self.rest_labels)[outside] if self.rest_items else drawn
        if rest is None:
            return 0.0, None, drawn, found
        unl = np.ones(rest["pool"].size, dtype=bool)
        drew = rest["pick"] is not None
        if drew:
            unl[rest["pick"]] = False
        point, split, fallback, fb_prior = None, split_point_prior(), None, fallback_prior()
        if split is not None and labeled[2] is PLATT_PRIOR_PROB:
            point = platt_fit(labeled[0], labeled[1], split)
        if fb_prior is not None and labeled[2] is PLATT_PRIOR_VAGUE:
            fallback = (*platt_fit(labeled[0], labeled[1], fb_prior), _REST_MODEL_SDLOG)
        rest_model = fit_rest_model(rest["t"][unl], self.t_feat[drawn], found, coef, cov, self.rng,
                                    labeled=labeled, point=point, fallback=fallback)
        # The estimate's count of the unlabeled rest's positives: the model's where the
        # labels pin it down, else this batch's Horvitz-Thompson count (its rest draws:
        # unbiased, and usually 0).
        if rest_model["sdlog"] <= _REST_MODEL_SDLOG or not rest_gate():
            rest_model["r_hat"] = rest_model["r_model"]
        elif drew:
            rest_model["r_hat"] = float(np.sum(rest["labels"] / rest["pi"]) - rest["labels"].sum())
        else:
            rest_model["r_hat"] = 0.0
        v_rest = (1.0 - self.cfg.alpha) * ((float(rest["labels"].sum()) if drew else 0.0) + rest_model["r_hat"])
        return v_rest, rest_model, drawn, found

    def _batch(self, i: int, b: int, g_prev: float) -> float:
        """Draw, label and estimate batch ``i`` of size ``b``; returns its estimate."""
        cfg, book, alpha = self.cfg, self.book, self.cfg.alpha
        cand, n_cand, rest_pool, b_rest = self._candidates(i, b)
        c = self._calibration(i, cand)
        yhat_c = _take(self.yhat_w, cand)
        coef = cov = None
        if self.use_rest or cfg.model_assist:
            lab_items, lab_labels = book.labeled_arrays()
            coef, cov = platt_fit(self.t_feat[lab_items], lab_labels, self.platt_prior)
        m_c, a_off, v_off = self._model_assist(coef, cand, yhat_c)
        q = sawade_proposal(c, yhat_c, g_prev, alpha)
        if cand is None:
            q[self.labeled_w] = 0.0  # never drawn again (zero-width systematic interval)
        b_dom = b - b_rest
        pi = inclusion_probabilities(q, b_dom)
        pick = systematic_sample(pi, b_dom, self.rng)
        pos_b, pi_b = (pick if cand is None else cand[pick]), pi[pick]
        items_b = pos_b if self.perm is None else self.perm[pos_b]
        rest = self._draw_rest(rest_pool, coef, b_rest)
        if b_rest:
            labels_all = book.ask(self.oracle, np.r_[items_b, rest["items"]], np.r_[pi_b, rest["pi"]])
            labels_b, rest["labels"] = labels_all[:b_dom], labels_all[b_dom:]
        else:
            labels_b = book.ask(self.oracle, items_b, pi_b)

        # Typical inclusion probability of a would-be draw of each kind (for the
        # zero-variance floor): candidates weighted by the calibrated probability
        # of being of that kind. Computed only if needed.
        def typical(pi=pi, c=c, yhat_c=yhat_c, unl=None if cand is not None else ~self.labeled_w):
            if unl is None:
                return typical_draws(pi, c, yhat_c)
            return typical_draws(pi[unl], c[unl], yhat_c[unl])

        self.labeled_w[pos_b] = True
        v_rest, rest_model, drawn, found = 0.0, None, None, None
        if self.use_rest:
            if b_rest:
                self.rest_items.append(rest["items"])
                self.rest_labels.append(rest["labels"])
                self.labeled_w[rest["items"]] = True
            r_coef, r_cov, r_lab = coef, cov, (self.t_feat[lab_items], lab_labels, self.platt_prior)
            if REST_FIT in ("negatives", "chosen"):
                neg = self.yhat[lab_items] == 0
                n_lab = (self.t_feat[lab_items][neg], lab_labels[neg], self.platt_prior)
                n_coef, n_cov = platt_fit(n_lab[0], n_lab[1], self.platt_prior)
                if REST_FIT == "negatives" or predicts_better(n_coef, coef, n_lab[0], n_lab[1]):
                    r_coef, r_cov, r_lab = n_coef, n_cov, n_lab
            v_rest, rest_model, drawn, found = self._rest_count(rest, r_coef, r_cov, r_lab)
        g_i, var_i, floor_i = ratio_estimate(
            alpha=alpha,
            a_fixed=book.a_fixed + a_off,
            v_fixed=book.v_fixed + v_rest + v_off,
            y=labels_b,
            yhat=self.yhat[items_b],
            d=1.0 / pi_b,
            pi=pi_b,
            typical=typical,
            m=None if m_c is None else m_c[pick],
        )
        yh_b = self.yhat[items_b].astype(np.float64)
        if m_c is None:
            den_i = book.v_fixed + v_rest + float(np.dot(1.0 / pi_b, alpha * yh_b + (1.0 - alpha) * labels_b))
        else:
            den_i = (book.v_fixed + v_rest + v_off
                     + float(np.dot(1.0 / pi_b, (1.0 - alpha) * (labels_b - m_c[pick]))))
        var_rest = 0.0
        if rest_model is not None and math.isfinite(g_i) and den_i > 0:
            var_rest = ((1.0 - alpha) * g_i / den_i) ** 2 * rest_model["var_r"]
            m_dom = m_c if m_c is not None else logistic(coef[0] + coef[1] * _take(self.t_feat_w, cand))
            rest_model["var_dom_model"] = domain_model_variance(
                pi, m_dom, yhat_c, g=g_i, den=den_i, alpha=alpha, rest=rest_model, assisted=m_c is not None)
        book.add(items_b, labels_b, pi_b)
        if b_rest:
            book.add(rest["items"], rest["labels"], rest["pi"])
        exact = b_dom == n_cand
        if self.use_rest:
            empty = dict(r_hat=0.0, r_model=0.0, sdlog=0.0, var_r=0.0, r_sorted=np.zeros(0),
                         r_cal=0.0, var_r_cal=0.0, r_cal_draws=np.zeros(0), rest_misfit_p=1.0)
            book.rest = dict(
                size=int(np.count_nonzero(~self.in_domain)),
                x=int(found.sum()),
                n_drawn=int(drawn.size),
                exposure=1.0 - self.rest_missed,
                exposure_max=1.0 - self.rest_missed_best,
                **(rest_model if rest_model is not None else empty),
            )
            exact = exact and not np.any(~self.in_domain & ~self.labeled_w)
        domain_size = int(np.count_nonzero(self.in_domain)) if cfg.top_k_prior else self.n
        book.record(b, domain_size, g_i, var_i, floor_i, exact=exact, var_rest=var_rest, den=den_i)
        return g_i


# ----------------------------------------------------------------------------------
# Public functions
# ----------------------------------------------------------------------------------


def acis(
    scores,
    predictions,
    oracle: Callable[[np.ndarray], np.ndarray],
    *,
    budget: int,
    alpha: float = 0.5,
    first_batch: int = 10,
    random_seed=None,
    proposal_floor: float = 0.02,
    beta: float = 0.5,
    beta_iterations: int = 3,
    top_k_prior: bool = True,
    top_k_factor: float = 3.0,
    average_last: int = 3,
    initial_estimate: float = 0.5,
    interval_prob: float = 0.95,
    probabilities=None,
    target_std_error: float | None = None,
    rest_share: float = 0.05,
    rest_uniform: float = 0.2,
    interval: str = "jeffreys",
    model_assist: bool = True,
) -> ACISResult:
    """Estimate the F-score of a classifier on a pool with active calibration + importance sampling.

    Algorithm 1 of Poms et al. (2021): isotonic calibration of the scores, Sawade's
    variance-minimizing importance distribution for F_alpha, doubling batches drawn
    from the unlabeled items, reuse of all earlier labels, averaging of the last
    iteration estimates and the single-trial variance estimator -- plus a small
    random share of every batch outside the top-K domain, drawn where a logistic
    calibration of the scores expects positives (``rest_share``, ``rest_uniform``),
    that calibration as a control variate (``model_assist``), and an interval that
    accounts for positives that may hide outside the domain (``interval``). See the module
    docstring (``bayeval.fscore.acis``) for the exact estimator, sampling design and
    variance, and for how to plug in other probabilities.

    Parameters
    ----------
    scores : array-like of shape (n_items,)
        Classifier scores (higher = more likely positive); any finite values that rank
        the items (not all equal, nor the 0/1 predictions themselves).
    predictions : array-like of shape (n_items,)
        Hard predictions, 0/1 or bool. At least one must be positive. Pandas inputs
        (here, in ``scores`` and in a fixed ``probabilities``) are paired by their index:
        the same ids in another order are put in the order of the first of them; ids
        that differ, or an order that a plain array or a default 0 .. n-1 index leaves
        ambiguous, raise a ValueError. Plain arrays pair by position.
    oracle : callable
        ``oracle(idx) -> labels``: takes an int array of item positions (never an
        item labeled before) and returns their true labels, one per position: 1/0,
        True/False, 1.0/0.0 or the text '1'/'0'/'true'/'false' in any case (what
        ``input()`` gives), as an array or list, or yielded one at a time (a generator:
        for a person answering item by item, so that the answers given before a Ctrl-C
        are kept; see "Raises"). Positions count from 0 in the order of ``scores``. With
        the labels in a pandas Series ``y``, look them up by position, ``y.to_numpy()[idx]``:
        ``y[idx]`` on a Series looks ``idx`` up in its index, not by position (a UserWarning
        says so where the oracle's pandas output shows it, or where 10 or more labelled
        predicted positives are all negative).
    budget : int
        Number of items to label (oracle calls on distinct items), at least
        ``first_batch`` and at most ``n_items``.
    alpha : float in (0, 1), default 0.5
        Weight of precision in ``F = tp / (alpha (tp + fp) + (1 - alpha) (tp + fn))``;
        0.5 gives F1.
    first_batch : int, default 10
        Size of the first batch; each next batch is twice the previous one.
    random_seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Source of randomness: the same seed labels the same items.
    proposal_floor : float in (0, 0.5), default 0.02
        Calibrated probabilities are rescaled from [0, 1] to [proposal_floor, 1 -
        proposal_floor], so that every candidate keeps a positive probability of
        being drawn.
        (The paper gives no value; 0.02 and ``average_last=3`` did best among the few
        values we tried on synthetic rare-category pools: smaller values leave false
        negatives unsampled more often, which biases F upwards and makes the interval
        too narrow.)
    beta : float in [0, 1], default 0.5
        Initial weight of the calibration prior (isotonic fit to the predictions) in
        the blend with the fit to the true labels.
    beta_iterations : int, default 3
        Number of iterations over which that weight falls linearly to 0.
    top_k_prior : bool, default True
        Restrict sampling to the ``top_k_factor * (i + 1) * n_pred`` top-scored
        items (plus all predicted positives) at iteration ``i``; for rare categories.
        Items outside form the rest stratum (``rest_share``); with ``rest_share=0``
        they are taken as negatives (an upward bias, not in the variance).
    top_k_factor : float, default 3.0
        The factor of that rule (3 in the paper).
    average_last : int, default 3
        Number of final iteration estimates averaged (weighted by batch size).
    initial_estimate : float in (0, 1], default 0.5
        F value plugged into the proposal of the first batch.
    interval_prob : float in (0, 1), default 0.95
        Coverage of the reported interval.
    probabilities : array-like or callable, optional
        Extension point that replaces the isotonic calibration: an array of
        per-item probabilities of a positive (used at every iteration), or a callable
        ``probabilities(labeled_items, labeled_labels) -> array (n_items,)`` called
        before every batch. ``beta`` is then unused.
    target_std_error : float in (0, 0.5], optional
        When to stop labeling: stop after the first batch, from the third on (70
        labels with the default ``first_batch``), whose standard error of the estimate
        is at most this value, provided the estimate is defined and no zero-variance
        floor is in play (a floor means no error of some kind has been seen yet, so
        the variance is a guess). ``budget`` is then a cap. The standard error is the
        delta method's (``history["stop_std_error"]``, ``sqrt(variances["delta"])``),
        the same whatever ``interval`` reports, so the choice of interval does not
        change when a run stops. It includes the rest stratum's (the variance of its
        count of positives under the calibration model), so it stays large while the
        calibration's tail is uncertain. It is the model's estimate, as good as the
        calibration's account of the rest: with ``0.05`` (20 runs a pool, ``docs/acis.md``,
        "When to stop"), 19 or 20 estimates of 20 were within +-0.1 of the truth on the
        benchmark's pools A, S and R, and the delta interval (``intervals["delta"]``)
        covered it in 18 to 20; on a logistic regression's held-out probabilities (30,000
        items, 0.5% positives) 13 of 20 were, and the delta interval covered the truth in
        1 of 20. The default ``"jeffreys"`` interval is design-only and stays much wider at
        the stop (it bounds the rest's hidden positives from its own draws alone: 0.26 to
        0.80 wide there), and covered the truth in 19 or 20 of 20 on each of those pools. Not earlier than the third batch: the variance
        of the first batches rests on a few dozen labels and is too often too low
        (on the benchmark's 1% pool, runs allowed to stop at 30 labels had an error
        twice their reported standard error). Stopping on an estimated variance stays
        somewhat optimistic: the benchmark (``benchmarks/acis.py``, "Stopping at a
        target standard error") reports labels spent, RMSE and coverage at the stop.
    rest_share : float in [0, 1), default 0.05
        Share of each batch drawn from the items outside the top-K domain
        (``ceil(rest_share * batch)``, at least one and at most all but one item of
        a batch), so that positives there can be found and the estimate targets the
        whole pool. 0 gives the paper's design (never sampled, taken as negatives).
        Unused with ``top_k_prior=False`` (every item is then in the domain).
    rest_uniform : float in [0, 1], default 0.2
        Uniform share of the rest stratum's sampling distribution; the rest of it is
        proportional to the rest calibration's probabilities (see the module
        docstring). 1 samples the rest uniformly; the uniform part guarantees every
        rest item a probability of being drawn, which ``interval="jeffreys"`` needs.
    interval : {"jeffreys", "calibrated", "checked", "evidence", "model", "delta"}, default "jeffreys"
        How the interval accounts for the rest stratum's unknown count of positives:
        ``"jeffreys"`` gives it a design-only Jeffreys posterior (holds whatever the
        rest contains, and is wide on large pools); ``"calibrated"`` reads it from the
        calibration fitted on every label (a logistic regression on the scores; draws of
        its coefficients' exact posterior give the expected count, plus Bernoulli noise;
        with probability scores its range also covers the count the scores imply read as
        probabilities; each averaged iteration is moved by its own rest's count; it widens
        to the design-only interval when the rest draws hold more positives than it expects),
        and ``"model"`` from the same calibration with a rate multiplier that the rest
        draws update -- both narrow, close to the actual error where the scores' low
        tail follows a logistic curve, and wrong where positives hide far below it (on
        the benchmark's real pool the calibrated one covered 38--90 % of its 90 %
        intervals, the model one 17--55 %); ``"checked"`` is the calibrated interval whose
        count also covers the fitted count times the ratio by which a curve fitted to the
        higher-scored half of the labels missed the positives of the lower half (the tail
        check, ``docs/acis.md``), for positives hiding below the curve; ``"evidence"`` is
        the calibrated interval, or the checked one when the tail check found more positives
        than expected, with the domain's variance at least its model-anticipated value
        (measured in ``benchmarks/results/acis_intervals_evidence.md``: 0.70 on R at 200);
        ``"delta"`` is a normal interval from the delta-method variance plus the model
        count's variance. All give the same estimate, and every run carries all of them
        (``ACISResult.intervals``, ``ACISResult.summary()``). The default is the only one
        that covered at least 90 % in every pool and budget of
        ``benchmarks/results/acis_intervals.md``. Without a rest stratum
        (``rest_share=0``), or once the top-K domain covers the whole pool, they coincide
        and ``ACISResult.interval_method`` is ``"delta"`` (``interval_reason`` says why).
    model_assist : bool, default True
        Use the rest calibration (a logistic regression of the labels on the scores)
        as a control variate: each batch estimates the residuals of its expected
        counts (a difference estimator; see "Model assistance" in ``docs/acis.md``). ``False`` gives
        the paper's pure Horvitz-Thompson estimator.

    Returns
    -------
    ACISResult
        Estimate, variance, interval, labeled items with weights, per-batch history
        (with ``rest_labels`` and ``rest_positives``: items labeled in, and positives
        found in, the current rest stratum).

    Raises
    ------
    TypeError, ValueError
        On malformed input or oracle output, with a message saying how to fix it
        (scores that are all equal, or the 0/1 predictions passed as scores, too).
    BaseException
        Whatever stops a run (the oracle raises, Ctrl-C, an answer that is not a label)
        carries every label given so far as ``exc.labeled``: the completed batches' and
        the answers of the broken batch that the oracle returned or yielded before the
        break. ``docs/acis.md`` ("What survives a failure") says how to go on from them.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.fscore.acis import acis
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(20_000) < 0.01).astype(int)
    >>> scores = 1 / (1 + np.exp(-(3.0 * y + rng.normal(-5.5, 1.0, y.size))))
    >>> predictions = scores > 0.2
    >>> res = acis(scores, predictions, lambda idx: y[idx], budget=100, random_seed=0)
    >>> res.n_labels, res.labeled["item"].is_unique
    (100, True)
    >>> bool(res.interval[0] <= res.estimate <= res.interval[1])
    True
    """
    if probabilities is not None and not callable(probabilities):  # a fixed array: one value per item
        scores, predictions, probabilities = align_pool(
            ("scores", scores), ("predictions", predictions), ("probabilities", probabilities))
    s, yhat, alpha, first_batch, budget, interval_prob, oracle = check_fscore_inputs(
        scores, predictions, oracle, budget, alpha, first_batch, interval_prob
    )
    check_score_spread(s, yhat, "acis")
    rng = check_rng(random_seed)
    proposal_floor = V.as_real_in(proposal_floor, "proposal_floor", lo=0, hi=0.5, lo_open=True, hi_open=True)
    beta = V.as_real_in(beta, "beta", lo=0, hi=1, lo_open=False, hi_open=False)
    beta_iterations = V.as_positive_int(beta_iterations, "beta_iterations", minimum=1)
    if not isinstance(top_k_prior, bool | np.bool_):
        raise TypeError(f"`top_k_prior` must be True or False, got {V.describe(top_k_prior)}.")
    top_k_factor = V.as_real_in(
        top_k_factor, "top_k_factor", lo=0, hi=math.inf, lo_open=True, hi_open=True
    )
    average_last = V.as_positive_int(average_last, "average_last", minimum=1)
    initial_estimate = V.as_real_in(
        initial_estimate, "initial_estimate", lo=0, hi=1, lo_open=True, hi_open=False
    )
    if probabilities is not None and not callable(probabilities):
        probabilities = check_probability_vector(probabilities, s.size, "probabilities")
    rest_share = V.as_real_in(
        rest_share,
        "rest_share",
        lo=0,
        hi=1,
        lo_open=False,
        hi_open=True,
        hint=" It is the share of each batch drawn outside the top-K domain; 0 turns it off.",
    )
    rest_uniform = V.as_real_in(
        rest_uniform,
        "rest_uniform",
        lo=0,
        hi=1,
        lo_open=False,
        hi_open=False,
        hint=(
            " It is the uniform share of the rest stratum's sampling distribution;"
            " 1 samples the rest uniformly."
        ),
    )
    if not isinstance(model_assist, bool | np.bool_):
        raise TypeError(f"`model_assist` must be True or False, got {V.describe(model_assist)}.")
    if not isinstance(interval, str) or interval not in _INTERVALS:
        raise ValueError(
            f"`interval` must be one of {', '.join(map(repr, _INTERVALS))}, got {V.describe(interval)}."
        )
    settings = _RunSettings(
        budget=budget,
        alpha=alpha,
        first_batch=first_batch,
        proposal_floor=proposal_floor,
        probabilities=probabilities,
        beta=beta,
        beta_iterations=beta_iterations,
        top_k_prior=bool(top_k_prior),
        top_k_factor=top_k_factor,
        average_last=average_last,
        initial_estimate=initial_estimate,
        interval_prob=interval_prob,
        method="acis",
        target_std_error=check_target(target_std_error),
        rest_share=rest_share,
        rest_uniform=rest_uniform,
        interval=interval,
        model_assist=bool(model_assist),
    )
    return _ImportanceRun(s, yhat, oracle, rng, settings).run()


def sawade(
    scores,
    predictions,
    oracle: Callable[[np.ndarray], np.ndarray],
    *,
    budget: int,
    alpha: float = 0.5,
    first_batch: int = 10,
    random_seed=None,
    proposal_floor: float = 1e-6,
    interval_prob: float = 0.95,
    target_std_error: float | None = None,
) -> ACISResult:
    """Baseline: Sawade et al.'s importance sampling with the raw scores as probabilities.

    The ablation of calibration in the ACIS paper: the same doubling batches,
    sampling design, reuse of earlier labels and variance estimator as :func:`acis`,
    but p(y=1|x) is the classifier's score itself (no isotonic calibration, no
    top-K prior, no averaging). Scores inside [0, 1] are used as they are; other
    scores are min-max rescaled to [0, 1]. Either way they are rescaled to
    [proposal_floor, 1 - proposal_floor]. The F value in the first proposal is the plug-in F
    implied by those probabilities (expected tp, fp, fn), as in Sawade et al.

    Parameters
    ----------
    scores, predictions, oracle, budget, alpha, first_batch, random_seed, interval_prob, target_std_error
        As in :func:`acis`.
    proposal_floor : float in (0, 0.5), default 1e-6
        Floor of the probabilities, only so that every item keeps a positive
        inclusion probability (Sawade et al. use the model's probabilities as they
        are). ACIS's default of 0.02 would be a handicap here: without the top-K
        domain it gives each of the tens of thousands of clear negatives a share
        ``sqrt(0.02)`` of the proposal, which on the benchmark's calibrated 1% pool
        sends most draws to them (MSE 0.117 at 100 labels against 0.026 with 1e-6,
        100 runs).

    Returns
    -------
    ACISResult
        With ``method == "sawade"``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.fscore.acis import sawade
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(20_000) < 0.01).astype(int)
    >>> scores = 1 / (1 + np.exp(-(3.0 * y + rng.normal(-5.5, 1.0, y.size))))
    >>> res = sawade(scores, scores > 0.2, lambda idx: y[idx], budget=100, random_seed=0)
    >>> res.method, res.n_labels
    ('sawade', 100)
    """
    s, yhat, alpha, first_batch, budget, interval_prob, oracle = check_fscore_inputs(
        scores, predictions, oracle, budget, alpha, first_batch, interval_prob
    )
    check_score_spread(s, yhat, "sawade")
    rng = check_rng(random_seed)
    proposal_floor = V.as_real_in(proposal_floor, "proposal_floor", lo=0, hi=0.5, lo_open=True, hi_open=True)
    lo, hi = float(s.min()), float(s.max())
    if lo >= 0.0 and hi <= 1.0:
        p = s.copy()
    elif hi > lo:
        p = (s - lo) / (hi - lo)
    else:
        p = np.full_like(s, 0.5)
    tp = float(p[yhat == 1].sum())
    fp = float(yhat.sum()) - tp
    fn = float(p[yhat == 0].sum())
    den = alpha * (tp + fp) + (1 - alpha) * (tp + fn)
    g0 = min(max(tp / den if den > 0 else 0.5, G_FLOOR), 1.0)
    settings = _RunSettings(
        budget=budget,
        alpha=alpha,
        first_batch=first_batch,
        proposal_floor=proposal_floor,
        probabilities=p,
        beta=0.0,
        beta_iterations=1,
        top_k_prior=False,
        top_k_factor=3.0,
        average_last=1,
        initial_estimate=g0,
        interval_prob=interval_prob,
        method="sawade",
        target_std_error=check_target(target_std_error),
    )
    return _ImportanceRun(s, yhat, oracle, rng, settings).run()


def _checkpoint_run(
    s, yhat, oracle, order, *, budget, alpha, first_batch, interval_prob, method, srs, target_std_error=None
):
    """Label ``order[:budget]`` in doubling batches; estimate after each batch.

    ``srs=True``: the labeled prefix is a simple random sample of the pool
    (weights ``n_items / n``, finite-population factor ``1 - n / n_items``).
    ``srs=False``: F of the labeled items themselves, with a nominal
    with-replacement variance (weights 1, no population correction).
    """
    n = s.size
    book = _Book(s, yhat, alpha, interval_prob, average_last=1, target_std_error=target_std_error)
    spent = 0
    n_cell = (int(np.count_nonzero(yhat == 0)), int(np.count_nonzero(yhat == 1)))
    with keep_labels(book, method):
        for b in batch_sizes(budget, first_batch):
            items_b = order[spent : spent + b]
            labels_b = book.ask(oracle, items_b, np.ones(b))
            spent += b
            book.add(items_b, labels_b, np.ones(b))
            items, labels = book.labeled_arrays()
            yh = yhat[items]
            if srs:
                f = spent / n
                pi, d = np.full(spent, f), np.full(spent, 1.0 / f)
                left = [n_cell[k] - int(np.count_nonzero(yh == k)) for k in (0, 1)]
                typ = (1.0 / f, 1.0 - f)
            elif spent < n:
                pi, d = np.zeros(spent), np.ones(spent)
                left = [int(np.count_nonzero(yh == k)) for k in (0, 1)]
                typ = (1.0, 1.0)
            else:  # the whole pool is labeled: a census, no sampling variance
                pi, d, left, typ = np.ones(spent), np.ones(spent), [0, 0], None
            typical = {
                "tp": typ if left[1] else None,
                "fp": typ if left[1] else None,
                "fn": typ if left[0] else None,
            }
            g, var, floor = ratio_estimate(
                alpha=alpha, a_fixed=0.0, v_fixed=0.0, y=labels, yhat=yh, d=d, pi=pi, typical=typical
            )
            book.record(b, n, g, var, floor, exact=spent == n)
            if book.should_stop():
                break
    res = book.result(method, interval_prob)
    lab = res.labeled
    if srs:  # inclusion probability of an item in a simple random sample of this size
        lab["inclusion_probability"] = len(lab) / n
        lab["weight"] = n / len(lab)
    return res


def uniform_sampling(
    scores,
    predictions,
    oracle: Callable[[np.ndarray], np.ndarray],
    *,
    budget: int,
    alpha: float = 0.5,
    first_batch: int = 10,
    random_seed=None,
    interval_prob: float = 0.95,
    target_std_error: float | None = None,
) -> ACISResult:
    """Baseline: simple random sampling without replacement, F estimated from the sample.

    Items are labeled in a uniformly random order, in the same doubling batches as
    :func:`acis`; after each batch the labeled items form a simple random sample of
    the pool and ``F = tp_s / (alpha (tp_s + fp_s) + (1 - alpha)(tp_s + fn_s))`` is
    computed from the sample counts. The variance is the delta-method variance of
    this ratio with the finite-population correction, plus the same zero-variance
    floor as :func:`acis`. For rare categories a small sample often holds no
    positive at all; the estimate is then NaN (undefined) and the interval [0, 1].

    Parameters
    ----------
    scores, predictions, oracle, budget, alpha, first_batch, random_seed, interval_prob, target_std_error
        As in :func:`acis` (``scores`` only fill the ``labeled`` table).

    Returns
    -------
    ACISResult
        With ``method == "uniform"``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.fscore.acis import uniform_sampling
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(2_000) < 0.2).astype(int)
    >>> scores = np.clip(0.5 * y + rng.normal(0.3, 0.15, y.size), 0, 1)
    >>> res = uniform_sampling(scores, scores > 0.5, lambda idx: y[idx], budget=100, random_seed=0)
    >>> res.method, res.n_labels
    ('uniform', 100)
    """
    s, yhat, alpha, first_batch, budget, interval_prob, oracle = check_fscore_inputs(
        scores, predictions, oracle, budget, alpha, first_batch, interval_prob
    )
    rng = check_rng(random_seed)
    order = rng.choice(s.size, size=budget, replace=False)
    return _checkpoint_run(
        s,
        yhat,
        oracle,
        order,
        budget=budget,
        alpha=alpha,
        first_batch=first_batch,
        interval_prob=interval_prob,
        method="uniform",
        srs=True,
        target_std_error=check_target(target_std_error),
    )


def top_k(
    scores,
    predictions,
    oracle: Callable[[np.ndarray], np.ndarray],
    *,
    budget: int,
    alpha: float = 0.5,
    first_batch: int = 10,
    random_seed=None,
    interval_prob: float = 0.95,
    target_std_error: float | None = None,
) -> ACISResult:
    """Baseline: label the top-scoring items and compute F on them.

    The information-retrieval habit that the ACIS paper calls TOP-K: items are
    labeled in order of descending score (equal scores in a fixed pseudo-random order,
    not by position in the file), in the same doubling
    batches as :func:`acis`, and the F-score is computed from the labeled items
    alone, as if they were the whole pool -- false negatives among the unlabeled
    items are ignored, so recall (and F) are overestimated while the budget is small
    compared with the number of positives. The reported variance is nominal: the
    with-replacement delta-method variance of the labeled items' F (plus the
    zero-variance floor) as if they were a random sample; it does not measure the
    selection bias, and the method is deterministic (``random_seed`` is accepted for
    a uniform interface and unused).

    Parameters
    ----------
    scores, predictions, oracle, budget, alpha, first_batch, random_seed, interval_prob, target_std_error
        As in :func:`acis` (the stopping rule reads top-K's nominal variance).

    Returns
    -------
    ACISResult
        With ``method == "top_k"``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.fscore.acis import top_k
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(20_000) < 0.01).astype(int)
    >>> scores = 1 / (1 + np.exp(-(3.0 * y + rng.normal(-5.5, 1.0, y.size))))
    >>> res = top_k(scores, scores > 0.2, lambda idx: y[idx], budget=100)
    >>> bool(res.labeled["score"].min() >= np.sort(scores)[-100])
    True
    """
    s, yhat, alpha, first_batch, budget, interval_prob, oracle = check_fscore_inputs(
        scores, predictions, oracle, budget, alpha, first_batch, interval_prob
    )
    check_rng(random_seed)
    order = top_order(s, budget)
    return _checkpoint_run(
        s,
        yhat,
        oracle,
        order,
        budget=budget,
        alpha=alpha,
        first_batch=first_batch,
        interval_prob=interval_prob,
        method="top_k",
        srs=False,
        target_std_error=check_target(target_std_error),
    )
