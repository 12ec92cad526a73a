"""Human pairwise rankings: the percentile Q of a ranking, and θ from votes.

This is the numpy/scipy core of the human-ranking part of bayeval (Liu & Okatani,
*Evaluating artificial systems for pairwise ranking tasks sensitive to individual
differences*). It knows nothing about xarray or PyMC; the Bayesian model lives in
:mod:`bayeval.rankings.model`.

Model
-----
A ranking of ``N`` item pairs is a vector ``r`` in ``{0, 1}^N``; ``r[i] = 1`` means
"the first item of pair ``i`` is picked". Human rankings ``R`` are modelled as
independent Bernoulli draws, ``P(R[i] = 1) = theta[i]``.

Percentile Q and ties
---------------------
Sort all ``2^N`` rankings by decreasing probability. The percentile of ``r`` is the
total probability of the rankings above it. We define it *strictly*::

    Q(r) = P_R( p(R) > p(r) )          (ties="strict", the default)

so ``Q = 0`` for the most probable ranking (and for every ranking tied with it),
and ``Q = 1`` for a ranking that humans cannot produce (``p(r) = 0``, e.g. it
contradicts a pair with ``theta`` exactly 0 or 1). This meets the paper's
definition: with ``S_eps`` a smallest set of rankings holding more than ``1 - eps``
of the probability, ``r`` belongs to such a set (ties among equally probable
rankings ordered in ``r``'s favour) exactly when ``Q(r) <= 1 - eps``.
``ties="inclusive"`` adds the rankings tied with ``r`` (``r`` included),
``P_R(p(R) >= p(r))``, which is the cumulative sum "down to and including ``r``'s
block" of the paper's grouped algorithm; then ``r`` belongs to *every* smallest
set when ``Q_inclusive - p(r) <= 1 - eps``. For many pairs the two coincide.

Two log-probabilities are *tied* when they differ by at most
``tau = tie_rtol * (1 + sum_i d_i)`` nats (``d_i`` defined below), which absorbs
floating-point noise (e.g. ``theta = 0.3`` versus ``1 - 0.7``).

Computation
-----------
Write ``pi_i = min(theta_i, 1 - theta_i)`` and ``d_i = |logit theta_i| >= 0``. A
ranking's log-probability is ``A - S`` with ``A = sum_i log max(theta_i, 1 - theta_i)``
and ``S = sum_i d_i * [pair i takes its less likely answer]``. For a human ranking,
``S = sum_i d_i B_i`` with independent ``B_i ~ Bernoulli(pi_i)``, so::

    Q_strict(r) = P(S < D(r) - tau),   Q_inclusive(r) = P(S <= D(r) + tau)

with ``D(r)`` the deficit of ``r``: a weighted Bernoulli sum's CDF. Two methods:

``"exact"``
    Pairs with equal ``pi`` form a group whose count of less likely answers is
    Binomial. The support of ``S`` (sums over groups of ``d_g k_g``) is enumerated
    in two halves (meet in the middle): each half's values and probabilities are
    built by outer sums, one half is sorted, and the CDF is
    ``sum_a p_a F_B(c - a)`` by binary search. Cost grows like the square root of
    the product of the groups' support sizes, so it is used when there are few
    distinct ``theta`` values (or few pairs). Binomial points with probability
    below ``1e-20`` are skipped and their total mass goes into the bound.
``"fourier"``
    A rigorous bracket from Fourier analysis on the circle, for any number of
    distinct values. ``S`` is mapped to ``X = (S - a) / L mod 1`` with a window
    ``[a, a + L)`` that holds all but a Chernoff-bounded tail mass. Selberg's
    trigonometric majorant and minorant of an arc, built from Vaaler's polynomial
    (degree ``K``), satisfy ``T_- <= 1_arc <= T_+`` pointwise, and ``E T(X)`` needs
    only ``E exp(2 pi i k X)``, ``|k| <= K``, i.e. the characteristic function of
    ``S`` (a product over pairs) at ``K`` frequencies. Frequencies where a partial
    product over a subset of pairs is already tiny are not completed: since every
    factor has modulus ``<= 1`` the partial modulus bounds the term, and that
    bound is added to the error. The bracket width is about
    ``L f_S(c) / (K + 1)``; ``K`` grows until the half-width is at most ``tol``.

In both cases the returned ``bound`` satisfies ``|Q - q| <= bound`` (up to
floating-point rounding, for which ``bound`` includes a small allowance), where
``q`` is the midpoint of the bracket ``[lower, upper]``.

Estimating theta
----------------
:func:`estimate_theta` gives the paper's point estimates: the vote fraction
(eq. 8), and, for pairs whose votes are unanimous and that carry confidence
scores, the constrained maximum-likelihood estimate of eqs. 12-14 (solved by
:func:`confidence_mle`). Votes use ``1`` (first item), ``0`` (second item),
:data:`UNDECIDED` (``-1``, "unable to decide") and ``NaN`` (no answer);
"unable to decide" answers are counted and reported, never dropped silently.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core import _validate as V
from scipy import stats

__all__ = [
    "DEFAULT_MAPPING",
    "UNDECIDED",
    "LogProbDistribution",
    "PercentileResult",
    "ThetaEstimate",
    "VoteCounts",
    "confidence_mle",
    "count_votes",
    "estimate_theta",
    "ranking_log_prob_distribution",
    "ranking_log_probability",
    "ranking_percentile",
]

#: Vote code for an "unable to decide" answer.
UNDECIDED = -1
#: Paper's mapping of confidence levels (not / somewhat / very confident) to theta.
DEFAULT_MAPPING = (0.5, 0.75, 1.0)

_METHODS = ("auto", "exact", "fourier")
_TIES = ("strict", "inclusive")
UNDECIDED_RULES = ("exclude", "half")
# Exact method: largest half (number of enumerated support points) it may build.
_EXACT_BUDGET = 2**21
# Exact method: binomial points with smaller probability are skipped (mass -> bound).
_PRUNE = 1e-20
# Fourier method: complex elements per vectorised block (memory ~ 8 arrays of this).
_BLOCK = 2**20


# --------------------------------------------------------------------------------------
# Input checks (each message: what was expected, what arrived, how to fix it)
# --------------------------------------------------------------------------------------


def q_stats(q, *, hdi_prob: float, epsilon: float):
    """Posterior summary of Q draws (dims chain, draw, ...): mean, sd, HDI and
    ``P(Q <= 1 - epsilon)``, as an ``xarray.Dataset`` over the remaining dims.

    As in :meth:`bayeval.Posterior.summary`, a draw where Q is undefined (NaN) is
    left out of every statistic; the variable ``undefined`` holds the share of such
    draws (all statistics are NaN where every draw is undefined).

    Shared by :meth:`RankingPosterior.summary` and :func:`percentile_table`.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from bayeval.rankings.percentile import q_stats
    >>> q = xr.DataArray([[0.2, 0.95, np.nan, 0.4]], dims=("chain", "draw"))
    >>> s = q_stats(q, hdi_prob=0.9, epsilon=0.1)
    >>> round(float(s["mean"]), 4), round(float(s["p_indistinguishable"]), 4), float(s["undefined"])
    (0.5167, 0.6667, 0.25)
    """
    import xarray as xr

    from ..core._defaults import hdi_columns
    from ..core.summary import summary_rows

    sample = ("chain", "draw")
    other = [d for d in q.dims if d not in sample]
    shape = tuple(q.sizes[d] for d in other)
    rows = summary_rows("Q", q, hdi_prob, sample)  # the defined draws of each coordinate
    values = np.array([r[1:] for r in rows], dtype=float).reshape(shape + (4,))
    coords = {d: q[d] for d in other if d in q.coords}
    defined = np.isfinite(q)
    lo, hi = hdi_columns(hdi_prob)  # the column names of Posterior.summary
    stats = {name: xr.DataArray(values[..., k], dims=other, coords=coords)
             for k, name in enumerate(["mean", "sd", lo, hi])}
    stats["p_indistinguishable"] = (q <= 1 - epsilon).where(defined).mean(sample)
    stats["undefined"] = (~defined).mean(sample).astype(float)
    return xr.Dataset(stats)


_first_bad = V.positions_text  # "3, 7" or "(0, 1), (2, 0)": where a check failed

#: Any array of real numbers as float64 (:func:`bayeval.core._validate.as_numeric_array`).
numeric_array = V.as_numeric_array


def pair_labels(votes, n_pairs):
    """The labels of the pairs: a votes DataFrame's index (each pair once), else ``0 .. n_pairs - 1``.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeval.rankings.percentile import pair_labels
    >>> pair_labels(pd.DataFrame([[1], [0]], index=["a", "b"]), 2).tolist()
    ['a', 'b']
    """
    index = votes.index if isinstance(votes, pd.DataFrame | pd.Series) else None
    if index is not None and len(index) == n_pairs:
        labels = np.asarray(index)
        if pd.Index(labels).is_unique:
            return labels
        raise ValueError(
            "votes' index must label each pair once; found duplicated labels "
            f"{pd.Index(labels)[pd.Index(labels).duplicated()][:5].tolist()}. Give each pair "
            "(row) its own label, or merge the rows of a pair into one."
        )
    return np.arange(n_pairs)


def paired_confidence(votes, confidence):
    """``(votes, confidence)`` with a pandas ``confidence`` put in the votes' pair order.

    Two DataFrames are paired by their index (the pairs), as bayeval pairs every pandas
    input (:func:`bayeval.core._validate.align_by_index`): the same pair labels in another
    order are reordered to the votes'; other or repeated labels, or an order that cannot be
    told (pandas' default ``0 .. n-1`` index on one of them), are an error saying how to fix
    it. Columns (the annotators) holding the same labels in another order are put in the
    votes' order too. Plain arrays are paired by position, unchanged.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeval.rankings.percentile import paired_confidence
    >>> v = pd.DataFrame([[1, 1], [0, 0]], index=["a", "b"])
    >>> c = pd.DataFrame([[0, 0], [2, 2]], index=["b", "a"])
    >>> paired_confidence(v, c)[1].index.tolist()
    ['a', 'b']
    """
    votes, confidence = V.align_by_index([("votes", votes), ("confidence", confidence)])
    if isinstance(votes, pd.DataFrame) and isinstance(confidence, pd.DataFrame):
        vc, cc = votes.columns, confidence.columns
        if (not vc.equals(cc) and vc.is_unique and cc.is_unique and len(vc) == len(cc)
                and set(vc) == set(cc)):
            confidence = confidence.loc[:, vc]  # the same annotators in another column order
    return votes, confidence


def paired_by_label(inputs):
    """The ``(name, value)`` inputs of one call over pairs, with pandas ones paired by label.

    The pairs are a Series' index or a DataFrame's columns (the last axis). The same labels
    in another order are put in the first pandas input's order; other labels, repeated
    labels, or an order that cannot be told (pandas' default ``0 .. n-1`` on one of them, or
    a plain array beside them) are an error naming ``.loc``/``.reindex``/``.to_numpy()``
    (:func:`bayeval.core._validate.align_by_index`). Plain arrays are returned unchanged.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeval.rankings.percentile import paired_by_label
    >>> th = pd.Series([0.9, 0.2], index=["a", "b"])
    >>> paired_by_label([("theta", th), ("ranking", pd.Series([0, 1], index=["b", "a"]))])[1].tolist()
    [1, 0]
    """
    def pairs_of(x):
        return x.columns if isinstance(x, pd.DataFrame) else x.index

    framed = [isinstance(v, pd.Series | pd.DataFrame) for _, v in inputs]
    proxies = [(name, pd.Series(np.arange(len(pairs_of(v))), index=pairs_of(v)) if f else v)
               for (name, v), f in zip(inputs, framed, strict=True)]
    aligned = V.align_by_index(proxies)
    out = []
    for (_, value), f, proxy in zip(inputs, framed, aligned, strict=True):
        if f:
            pos = proxy.to_numpy()
            value = value.iloc[:, pos] if isinstance(value, pd.DataFrame) else value.iloc[pos]
        out.append(value)
    return out


def _check_theta(theta):
    return V.as_probability_array(
        theta, "theta", axis="n_pairs", per="item pair", meaning="probability that the first item is picked",
        fix_nonfinite="Estimate theta for every pair (e.g. estimate_theta) or drop pairs without votes.",
    )


def _check_ranking(ranking, n_pairs):
    return V.as_binary_array(
        ranking, "ranking", n_pairs, axis="n_pairs", per="pair", match="theta's last axis",
        one="first item picked", zero="second item picked", fix="A machine ranking must be complete.",
    )


# --------------------------------------------------------------------------------------
# Votes and the paper's point estimates
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class VoteCounts:
    """Per-pair counts of the answers in a votes (and confidence) table.

    Attributes
    ----------
    n_first, n_second, n_undecided, n_missing : ndarray of int, shape (n_pairs,)
        Answers picking the first item, the second item, "unable to decide"
        (:data:`UNDECIDED`), and cells without an answer (NaN).
    confidence_counts : ndarray of int, shape (n_pairs, n_levels)
        Number of answers at each confidence level (all zero without confidence).
    n_confidence : ndarray of int, shape (n_pairs,)
        Answers that carry a confidence score.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.rankings.percentile import count_votes
    >>> c = count_votes(np.array([[1, 1, -1], [0, 1, np.nan]]))
    >>> c.n_first.tolist(), c.n_undecided.tolist(), c.n_missing.tolist()
    ([2, 1], [1, 0], [0, 1])
    """

    n_first: np.ndarray
    n_second: np.ndarray
    n_undecided: np.ndarray
    n_missing: np.ndarray
    confidence_counts: np.ndarray
    n_confidence: np.ndarray

    @property
    def n_pairs(self) -> int:
        """Number of pairs."""
        return int(self.n_first.shape[0])

    def __repr__(self) -> str:
        return (
            f"VoteCounts(n_pairs={self.n_pairs}, first={int(self.n_first.sum())}, "
            f"second={int(self.n_second.sum())}, undecided={int(self.n_undecided.sum())}, "
            f"missing={int(self.n_missing.sum())}, with_confidence={int(self.n_confidence.sum())})"
        )


def count_votes(votes, confidence=None, *, n_levels=3) -> VoteCounts:
    """Count the answers per pair in a votes table (and its confidence scores).

    Parameters
    ----------
    votes : array-like, shape (n_pairs, n_annotators)
        ``1`` = first item picked, ``0`` = second item picked, ``-1``
        (:data:`UNDECIDED`) = "unable to decide", ``NaN`` = no answer. A pandas
        DataFrame is accepted.
    confidence : array-like, shape (n_pairs, n_annotators), optional
        Confidence level of each answer, an integer in ``0 .. n_levels - 1``
        (0 = not confident), ``NaN`` where not asked. Only answers ``0``/``1`` may
        carry a confidence. Two DataFrames are paired by their index, as bayeval
        pairs every pandas input (:func:`paired_confidence`): the same pair labels in
        another order are put in the votes' order; other or repeated labels, or pandas'
        default ``0 .. n-1`` index on one of them beside labels in another order, are an
        error. Plain arrays are paired by position.
    n_levels : int, default 3
        Number of confidence levels.

    Returns
    -------
    VoteCounts

    Raises
    ------
    ValueError
        On a wrong shape, a code other than 1/0/-1/NaN, a confidence level out of
        range, a confidence attached to a missing or undecided answer, or votes and
        confidence DataFrames whose indexes name different pairs.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.rankings.percentile import count_votes
    >>> v = np.array([[1, 1, 1], [1, 0, -1]])
    >>> s = np.array([[2, 1, 2], [np.nan, np.nan, np.nan]])
    >>> count_votes(v, s).confidence_counts.tolist()
    [[0, 1, 2], [0, 0, 0]]
    """
    votes, confidence = paired_confidence(votes, confidence)
    v = numeric_array(
        votes, "votes",
        expected=f"1 (first item picked), 0 (second item), {UNDECIDED} (unable to decide) or NaN (no answer); "
                 "recode text answers first, e.g. votes.replace({'A': 1, 'B': 0})",
    )
    if v.ndim != 2 or v.shape[0] == 0 or v.shape[1] == 0:
        hint = " Use votes.reshape(-1, 1) for one annotator." if v.ndim == 1 else ""
        raise ValueError(
            f"votes must be a 2-D table (n_pairs, n_annotators) with at least one cell; got "
            f"shape {v.shape}.{hint}"
        )
    ok = np.isnan(v) | (v == 1) | (v == 0) | (v == UNDECIDED)
    if not ok.all():
        bad = ~ok
        raise ValueError(
            f"votes may only contain 1 (first item), 0 (second item), {UNDECIDED} (unable to "
            f"decide) or NaN (no answer); found {np.unique(v[bad])[:5].tolist()} at "
            f"(pair, annotator) {_first_bad(bad)}."
        )
    if isinstance(n_levels, bool) or not isinstance(n_levels, int | np.integer) or n_levels < 2:
        raise ValueError(f"n_levels must be an integer >= 2; got {n_levels!r}.")
    n_first = (v == 1).sum(axis=1)
    n_second = (v == 0).sum(axis=1)
    n_undecided = (v == UNDECIDED).sum(axis=1)
    n_missing = np.isnan(v).sum(axis=1)
    counts = np.zeros((v.shape[0], int(n_levels)), dtype=np.int64)
    if confidence is not None:
        s = numeric_array(confidence, "confidence")
        if s.shape != v.shape:
            raise ValueError(
                f"confidence must have the same shape as votes {v.shape}; got {s.shape}. "
                "Use NaN where no confidence was asked."
            )
        given = ~np.isnan(s)
        bad = given & ~np.isin(s, np.arange(n_levels))
        if bad.any():
            raise ValueError(
                f"confidence levels must be integers 0..{n_levels - 1} (0 = not confident) or "
                f"NaN; found {np.unique(s[bad])[:5].tolist()} at (pair, annotator) {_first_bad(bad)}."
            )
        bad = given & ~((v == 0) | (v == 1))
        if bad.any():
            raise ValueError(
                "a confidence score must belong to an answer 1 or 0; found confidence on "
                f"missing or 'unable to decide' answers at (pair, annotator) {_first_bad(bad)}. "
                "Set those confidence cells to NaN."
            )
        for level in range(n_levels):
            counts[:, level] = (s == level).sum(axis=1)
    return VoteCounts(
        n_first=n_first.astype(np.int64),
        n_second=n_second.astype(np.int64),
        n_undecided=n_undecided.astype(np.int64),
        n_missing=n_missing.astype(np.int64),
        confidence_counts=counts,
        n_confidence=counts.sum(axis=1),
    )


def confidence_mle(n_votes, confidence_counts, *, mapping=DEFAULT_MAPPING):
    """Constrained MLE of theta for unanimous pairs from confidence scores.

    For a pair whose ``m`` decided votes all pick the same item, let ``n_s`` be
    the number of answers at confidence level ``s`` and ``q_s`` the (unknown)
    probability of level ``s``. The likelihood is
    ``theta^m * prod_s q_s^{n_s}`` with ``q`` on the simplex and
    ``sum_s c_s q_s = theta`` (``c`` = ``mapping``); ``theta`` is the probability
    that the unanimously chosen item is picked.

    Solver: eliminating ``theta``, the log-likelihood
    ``m log(c.q) + sum_s n_s log q_s`` is concave on the simplex. Its KKT
    conditions give the multiplier ``m + n`` (``n = sum_s n_s``) and
    ``q_s = n_s / (m + n - t c_s)`` with ``t = m / theta`` for levels with
    ``n_s > 0``; ``t`` is the unique root of the increasing convex function
    ``h(t) = sum_s n_s / (m + n - t c_s) = 1``, found by Newton's method started
    to the right of the root (monotone, quadratic convergence). If a level with
    no answers and a larger ``c_s`` violates its KKT condition
    (``t c_s > m + n``), the optimum puts mass on it instead:
    ``t = (m + n) / c_s``, the remaining mass going to that level. Without any
    confidence answer the estimate is ``max(mapping)``.

    Parameters
    ----------
    n_votes : array-like of int, shape (n_pairs,)
        Number of (unanimous) decided votes ``m >= 1`` per pair.
    confidence_counts : array-like of int, shape (n_pairs, n_levels)
        Answers per confidence level.
    mapping : sequence of float, default (0.5, 0.75, 1.0)
        Theta implied by each confidence level, strictly increasing, in (0, 1].

    Returns
    -------
    theta : ndarray, shape (n_pairs,)
        Probability that the unanimously chosen item is picked.
    q : ndarray, shape (n_pairs, n_levels)
        Estimated probabilities of the confidence levels.

    Examples
    --------
    >>> from bayeval.rankings.percentile import confidence_mle
    >>> theta, q = confidence_mle([15], [[5, 0, 0]])
    >>> round(float(theta[0]), 6), q.round(6).tolist()
    (0.75, [[0.5, 0.0, 0.5]])
    """
    c = V.as_confidence_mapping(mapping)
    m = numeric_array(n_votes, "n_votes")
    cnt = numeric_array(confidence_counts, "confidence_counts")
    if m.ndim != 1:
        raise ValueError(f"n_votes must be 1-D (n_pairs,); got shape {m.shape}.")
    if cnt.shape != (m.shape[0], c.size):
        raise ValueError(
            f"confidence_counts must have shape (n_pairs, n_levels) = ({m.shape[0]}, {c.size}) "
            f"to match n_votes and mapping; got {cnt.shape}."
        )
    if not (np.all(m >= 1) and np.all(m == np.round(m))):
        raise ValueError(
            "n_votes must be integers >= 1 (a unanimous pair has at least one vote); got "
            f"{m[(m < 1) | (m != np.round(m))][:5].tolist()}."
        )
    if not (np.all(cnt >= 0) and np.all(cnt == np.round(cnt))):
        raise ValueError("confidence_counts must be non-negative integers.")
    return _confidence_mle(m, cnt, c)


def _confidence_mle(m, cnt, c):
    n_pairs = cnt.shape[0]
    n = cnt.sum(axis=1)
    lam = m + n
    pos = cnt > 0
    has = pos.any(axis=1)
    t = np.full(n_pairs, np.nan)
    # Interior candidate: root of h(t) = 1 for pairs with confidence answers.
    if has.any():
        cc = np.where(pos[has], c, -np.inf)
        smax = cc.argmax(axis=1)
        rows = np.arange(smax.size)
        lam_h, cnt_h = lam[has], cnt[has]
        tt = (lam_h - cnt_h[rows, smax]) / c[smax]  # h(tt) >= 1
        for _ in range(200):
            den = lam_h[:, None] - tt[:, None] * c[None, :]
            with np.errstate(divide="ignore", invalid="ignore"):
                h = np.where(pos[has], cnt_h / den, 0.0).sum(axis=1)
                dh = np.where(pos[has], cnt_h * c / den**2, 0.0).sum(axis=1)
            step = (h - 1.0) / dh
            step = np.where(np.isfinite(step) & (step > 0), step, 0.0)
            tt = tt - step
            if np.all(step <= 1e-15 * np.abs(tt)):
                break
        t[has] = tt
    # Boundary case: a level without answers (largest such c) takes mass.
    cz = np.where(~pos, c, -np.inf).max(axis=1)
    cmax_pos = np.where(pos, c, -np.inf).max(axis=1)
    boundary = ~has | ((cz > cmax_pos) & (t * cz > lam))
    t = np.where(boundary, lam / np.where(np.isfinite(cz), cz, 1.0), t)
    den = lam[:, None] - t[:, None] * c[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(pos, cnt / den, 0.0)
    if boundary.any():
        zlev = np.where(~pos, c, -np.inf).argmax(axis=1)
        b = np.flatnonzero(boundary)
        q[b, zlev[b]] = np.clip(1.0 - q[b].sum(axis=1), 0.0, 1.0)
    q = q / q.sum(axis=1, keepdims=True)
    theta = np.clip(q @ c, 0.0, 1.0)
    return theta, q


@dataclass(frozen=True, repr=False)
class ThetaEstimate:
    """Point estimates of theta per pair, with the counts behind them.

    Attributes
    ----------
    theta : ndarray, shape (n_pairs,)
        Probability that a human picks the first item.
    counts : VoteCounts
        Answers per pair (undecided answers included).
    unanimous : ndarray of bool, shape (n_pairs,)
        All decided votes pick the same item.
    used_confidence : ndarray of bool, shape (n_pairs,)
        Theta comes from the confidence-score MLE (unanimous pairs with
        confidence answers); elsewhere it is the vote fraction.
    q : ndarray, shape (n_pairs, n_levels)
        Estimated confidence-level probabilities (NaN where not used).
    n_confidence_unused : ndarray of int, shape (n_pairs,)
        Confidence answers not used (pairs that are not unanimous, or every pair with
        ``use_confidence=False``).
    undecided : str
        How "unable to decide" answers entered theta ("exclude" or "half").
    pair_labels : pandas.Index or None
        The pairs' labels: the votes DataFrame's index (None for a plain array). They
        index :meth:`to_frame`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.rankings.percentile import estimate_theta
    >>> est = estimate_theta(np.array([[1, 0, 1, -1]]))
    >>> float(est.theta[0]), int(est.counts.n_undecided[0])
    (0.6666666666666666, 1)
    """

    theta: np.ndarray
    counts: VoteCounts
    unanimous: np.ndarray
    used_confidence: np.ndarray
    q: np.ndarray
    n_confidence_unused: np.ndarray
    undecided: str
    pair_labels: pd.Index | None = None

    @property
    def n_undecided(self) -> int:
        """Total number of "unable to decide" answers."""
        return int(self.counts.n_undecided.sum())

    def to_frame(self):
        """One row per pair: theta, counts and which estimate was used.

        Returns
        -------
        pandas.DataFrame
            Indexed by the votes DataFrame's pair labels (``0 .. n_pairs - 1`` for a plain
            array), so that its ``theta`` column is paired with a labelled ranking by label in
            :func:`ranking_percentile`.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.rankings.percentile import estimate_theta
        >>> estimate_theta(np.array([[1, 1], [1, 0]])).to_frame()["theta"].tolist()
        [1.0, 0.5]
        >>> import pandas as pd
        >>> votes = pd.DataFrame([[1, 1], [1, 0]], index=["cat-dog", "cat-cow"])
        >>> estimate_theta(votes).to_frame()["theta"].to_dict()
        {'cat-dog': 1.0, 'cat-cow': 0.5}
        """
        c = self.counts
        index = None
        if self.pair_labels is not None:
            index = pd.Index(self.pair_labels)
            index = index if index.name is not None else index.rename("pair")
        return pd.DataFrame(
            {
                "theta": self.theta,
                "n_first": c.n_first,
                "n_second": c.n_second,
                "n_undecided": c.n_undecided,
                "n_missing": c.n_missing,
                "n_confidence": c.n_confidence,
                "unanimous": self.unanimous,
                "used_confidence": self.used_confidence,
                "n_confidence_unused": self.n_confidence_unused,
            },
            index=index,
        )

    def __repr__(self) -> str:
        return (
            f"ThetaEstimate(n_pairs={self.theta.size}, unanimous={int(self.unanimous.sum())}, "
            f"from_confidence={int(self.used_confidence.sum())}, "
            f"undecided_answers={self.n_undecided} ({self.undecided}), "
            f"unused_confidence={int(self.n_confidence_unused.sum())})"
        )


def pair_rules(counts: VoteCounts, undecided: str, use_confidence: bool):
    """Shared by the point estimate and the Bayesian model: which pairs are unanimous,
    which use the confidence likelihood, and the effective vote counts."""
    n1, n0, u = counts.n_first, counts.n_second, counts.n_undecided
    decided = n1 + n0
    unanimous = (decided > 0) & ((n1 == 0) | (n0 == 0))
    if undecided == "half":
        unanimous &= u == 0
    use_conf = unanimous & (counts.n_confidence > 0) if use_confidence else np.zeros_like(unanimous)
    return unanimous, use_conf


def estimate_theta(
    votes, confidence=None, *, mapping=DEFAULT_MAPPING, undecided="exclude", use_confidence=True
):
    """Point estimates of theta (probability that the first item is picked).

    Non-unanimous pairs (and unanimous pairs without confidence scores) get the
    vote fraction ``n_first / n_decided`` (the paper's eq. 8). Unanimous pairs
    with confidence scores get the constrained MLE of eqs. 12-14
    (:func:`confidence_mle`), using all their decided votes and the confidence
    levels of the answers that have one. Confidence scores of non-unanimous pairs
    are not used (as in the paper) and are counted in ``n_confidence_unused``.

    Parameters
    ----------
    votes : array-like, shape (n_pairs, n_annotators)
        ``1`` first item, ``0`` second item, ``-1`` (:data:`UNDECIDED`) unable to
        decide, ``NaN`` no answer. A pandas DataFrame is accepted; its index labels
        the pairs (the index of :meth:`ThetaEstimate.to_frame`).
    confidence : array-like, shape (n_pairs, n_annotators), optional
        Confidence level ``0 .. len(mapping) - 1`` of each decided answer, NaN
        elsewhere. A DataFrame beside a votes DataFrame is paired with it by its index
        (the same pairs in another order are put in the votes' order; other labels are
        an error), as in :func:`count_votes`.
    mapping : sequence of float, default (0.5, 0.75, 1.0)
        Theta implied by each confidence level (paper's eq. 14).
    undecided : {"exclude", "half"}, default "exclude"
        "exclude": undecided answers are left out of theta (but counted and
        reported). "half": each counts as half a vote for each item (an undecided
        annotator is modelled as a fair coin); such a pair is then not unanimous.
    use_confidence : bool, default True
        False: every pair gets its vote fraction, and its confidence scores are counted
        in ``n_confidence_unused`` (as ``HumanRanking(use_confidence=False)``).

    Returns
    -------
    ThetaEstimate

    Raises
    ------
    ValueError
        If a pair has no usable answer (theta undefined), or a votes DataFrame's index
        labels a pair twice, besides the checks of :func:`count_votes`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.rankings.percentile import estimate_theta
    >>> votes = np.array([[1, 1, 1], [1, 0, 1]])
    >>> conf = np.array([[2, 2, 1], [np.nan] * 3])
    >>> est = estimate_theta(votes, conf)
    >>> est.theta.round(4).tolist(), est.used_confidence.tolist()
    ([0.9302, 0.6667], [True, False])
    """
    c = V.as_confidence_mapping(mapping)
    undecided = V.check_choice(undecided, "undecided", UNDECIDED_RULES)
    if not isinstance(use_confidence, bool | np.bool_):
        raise TypeError(f"use_confidence must be True or False; got {use_confidence!r}.")
    counts = count_votes(votes, confidence, n_levels=c.size)
    labels = None
    if isinstance(votes, pd.DataFrame):
        pair_labels(votes, counts.n_pairs)  # each pair labelled once, or a clear error
        labels = votes.index
    n1, n0, u = counts.n_first, counts.n_second, counts.n_undecided
    if undecided == "half":
        num, den = n1 + 0.5 * u, n1 + n0 + u
    else:
        num, den = n1.astype(float), n1 + n0
    empty = den == 0
    if empty.any():
        how = " or undecided='half'" if undecided == "exclude" else ""
        if labels is None:
            where = f"pairs (by position) {_first_bad(empty)}"
        else:  # a DataFrame's pairs by their labels
            where = f"pairs {V.preview(np.asarray(labels[empty], dtype=object))}"
        raise ValueError(
            f"{int(empty.sum())} pair(s) have no decided answer, so theta is undefined: "
            f"{where}. Drop them{how}, or use the Bayesian model (HumanRanking), "
            "whose prior covers them."
        )
    theta = num / den
    unanimous, use_conf = pair_rules(counts, undecided, bool(use_confidence))
    q = np.full((theta.size, c.size), np.nan)
    if use_conf.any():
        idx = np.flatnonzero(use_conf)
        m = (n1 + n0)[idx].astype(float)
        th_chosen, q_idx = _confidence_mle(m, counts.confidence_counts[idx].astype(float), c)
        first = n1[idx] > 0
        theta[idx] = np.where(first, th_chosen, 1.0 - th_chosen)
        q[idx] = q_idx
    unused = np.where(use_conf, 0, counts.n_confidence)
    return ThetaEstimate(
        theta=theta,
        counts=counts,
        unanimous=unanimous,
        used_confidence=use_conf,
        q=q,
        n_confidence_unused=unused,
        undecided=undecided,
        pair_labels=labels,
    )


# --------------------------------------------------------------------------------------
# Deficits: the weighted Bernoulli sum S = sum_i d_i B_i
# --------------------------------------------------------------------------------------


def _minor_prob(theta):
    """pi = min(theta, 1 - theta), computed exactly for theta > 1/2 (Sterbenz)."""
    return np.where(theta > 0.5, 1.0 - theta, theta)


def _deficit(pi):
    """d = log((1 - pi) / pi) for pi in (0, 1/2]; +inf at pi = 0."""
    with np.errstate(divide="ignore"):
        return np.log1p(-pi) - np.log(pi)


@dataclass
class _Groups:
    """Finite, positive deficits grouped by equal pi (count n each)."""

    d: np.ndarray
    pi: np.ndarray
    n: np.ndarray

    @property
    def size(self):
        return self.d.size


def _groups_of(theta_row):
    pi = _minor_prob(theta_row)
    keep = (pi > 0) & (pi < 0.5)
    vals, cnt = np.unique(pi[keep], return_counts=True)
    return _Groups(d=_deficit(vals), pi=vals, n=cnt.astype(float))


def _ranking_deficits(theta_row, rankings):
    """Deficit D(r) of each ranking row and whether it is impossible (p(r) = 0)."""
    pi = _minor_prob(theta_row)
    d = _deficit(pi)
    less = np.where(theta_row > 0.5, rankings == 0, np.where(theta_row < 0.5, rankings == 1, False))
    impossible = (less & (pi == 0)).any(axis=-1)
    dfin = np.where(np.isfinite(d), d, 0.0)
    return (less * dfin).sum(axis=-1), impossible


# --------------------------------------------------------------------------------------
# Exact method: grouped binomials, meet in the middle
# --------------------------------------------------------------------------------------


def _exact_maybe(g: _Groups, budget=_EXACT_BUDGET):
    """Cheap pre-check: can the exact enumeration fit in ``budget`` per half?

    Uses a rough support size per group (about +-10 sd around the mean), so that
    planning (which evaluates every group's binomial pmf) is skipped for theta
    vectors with many distinct values."""
    sd = np.sqrt(g.n * g.pi * (1 - g.pi))
    size = np.minimum(g.n + 1, 1 + 2 * np.ceil(10 * sd + 2))
    return float(np.sum(np.log(size))) <= 2.2 * math.log(budget)


class _ExactPlan:
    def __init__(self, g: _Groups):
        n, pi = g.n.astype(np.int64), g.pi
        mode = np.floor((n + 1) * pi)
        sd = np.sqrt(n * pi * (1 - pi))
        lo = np.maximum(0, mode - np.ceil(40 * sd) - 40).astype(np.int64)
        hi = np.minimum(n, mode + np.ceil(40 * sd) + 40).astype(np.int64)
        sizes = hi - lo + 1
        gid = np.repeat(np.arange(n.size), sizes)
        start = np.r_[0, np.cumsum(sizes)[:-1]]
        k = lo[gid] + np.arange(gid.size) - start[gid]
        pmf = stats.binom.pmf(k, n[gid], pi[gid])  # one vectorised call for all groups
        keep = pmf > _PRUNE  # contiguous within each group (unimodal pmf)
        gid, k, pmf = gid[keep], k[keep], pmf[keep]
        cuts = np.flatnonzero(np.diff(gid)) + 1
        ks, ps = np.split(k, cuts), np.split(pmf, cuts)
        klo = np.array([x[0] for x in ks])
        khi = np.array([x[-1] for x in ks])
        self.dropped = float(np.sum(stats.binom.cdf(klo - 1, n, pi) + stats.binom.sf(khi, n, pi)))
        self.supports = [(d * kk, pp) for d, kk, pp in zip(g.d, ks, ps, strict=True)]
        sizes = np.array([s[0].size for s in self.supports], dtype=float)
        logs = np.log(np.maximum(sizes, 1.0))
        half_a, half_b, la, lb = [], [], 0.0, 0.0
        for j in np.argsort(-logs):
            if la <= lb:
                half_a.append(j)
                la += logs[j]
            else:
                half_b.append(j)
                lb += logs[j]
        self.halves = (half_a, half_b)
        self.log_sizes = (la, lb)

    def feasible(self, budget=_EXACT_BUDGET):
        return max(self.log_sizes) <= math.log(budget)

    def _enumerate(self, half):
        vals, probs = np.zeros(1), np.ones(1)
        for j in half:
            v, p = self.supports[j]
            vals = (vals[:, None] + v[None, :]).ravel()
            probs = (probs[:, None] * p[None, :]).ravel()
        return vals, probs

    def cdf(self, cs, *, strict):
        """P(S < c) (strict) or P(S <= c), for each c; returns (lower, upper)."""
        va, pa = self._enumerate(self.halves[0])
        vb, pb = self._enumerate(self.halves[1])
        order = np.argsort(vb, kind="stable")
        vb = vb[order]
        cum = np.concatenate([[0.0], np.cumsum(pb[order])])
        side = "left" if strict else "right"
        out = np.empty(len(cs))
        for i, c in enumerate(cs):
            out[i] = np.dot(pa, cum[np.searchsorted(vb, c - va, side=side)])
        slack = 4 * np.finfo(float).eps * (va.size + vb.size) + 1e-15
        return np.clip(out - slack, 0, 1), np.clip(out + self.dropped + slack, 0, 1)


# --------------------------------------------------------------------------------------
# Fourier method: Selberg/Vaaler bracket on the circle
# --------------------------------------------------------------------------------------


def _jhat(t):
    """Vaaler's weight pi t (1 - t) cot(pi t) + t, for t in (0, 1)."""
    return np.pi * t * (1.0 - t) / np.tan(np.pi * t) + t


class _FourierItem:
    """One theta vector: window, characteristic function cache, thresholds."""

    def __init__(self, g: _Groups, tol: float):
        self.g = g
        d, pi, n = g.d, g.pi, g.n
        self.mu = float(np.sum(n * pi * d))
        self.sigma = math.sqrt(float(np.sum(n * pi * (1 - pi) * d * d)))
        self.smax = float(np.sum(n * d))
        eta = 1e-3 * tol
        lo, hi, self.eta_lo, self.eta_hi = self._window(eta)
        self.lo_edge, self.hi_edge = lo, hi
        pad = 0.1 * (hi - lo)
        self.a = lo - pad
        self.L = (hi - lo) + 2 * pad
        # Order in which pairs enter the partial products (only speed depends on it):
        # the more informative half first, in a fixed pseudo-random order so that
        # the first deficits are spread out (similar d's would resonate together).
        key = n * pi * (1 - pi) * np.minimum(d * d, 1.0)
        perm = np.random.default_rng(12345).permutation(key.size)
        top = key[perm] >= np.median(key)
        self.order = np.concatenate([perm[top], perm[~top]])
        self.phi = np.zeros(0, dtype=complex)
        self.bnd = np.zeros(0)
        self.K = 0

    def _window(self, eta):
        g = self.g
        lam = np.geomspace(1e-2, 1e2, 33) / self.sigma
        lpi, l1pi = np.log(g.pi), np.log1p(-g.pi)
        # cumulant generating function log E exp(+-lam S), all lam at once
        up = np.logaddexp(l1pi, lpi + np.outer(lam, g.d)) @ g.n
        dn = np.logaddexp(l1pi, lpi - np.outer(lam, g.d)) @ g.n
        x_hi = float(np.min((up + math.log(1 / eta)) / lam))
        x_lo = float(np.max((-dn - math.log(1 / eta)) / lam))
        if x_lo <= 0:
            x_lo, eta_lo = 0.0, 0.0
        else:
            eta_lo = eta
        if x_hi >= self.smax:
            x_hi, eta_hi = self.smax, 0.0
        else:
            eta_hi = eta
        return x_lo, x_hi, eta_lo, eta_hi

    def density_guess(self, c):
        z = (np.asarray(c) - self.mu) / self.sigma
        return np.exp(-0.5 * z * z) / (math.sqrt(2 * math.pi) * self.sigma)

    def bracket(self, cs, K):
        """Lower/upper bounds of P(S < c) and P(S <= c) (same bracket for both)."""
        cs = np.asarray(cs, dtype=float)
        lower = np.empty(cs.size)
        upper = np.empty(cs.size)
        below = cs < self.lo_edge
        above = cs > self.hi_edge
        lower[below], upper[below] = 0.0, self.eta_lo
        lower[above], upper[above] = 1.0 - self.eta_hi, 1.0
        mid = ~(below | above)
        if mid.any():
            k = np.arange(1, K + 1)
            t = k / (K + 1)
            jw = _jhat(t) / (np.pi * k)
            w = 1.0 - t
            phi, b = self.phi[:K], self.bnd[:K]
            beta = (cs[mid] - self.a) / self.L
            err = float(np.sum(b * (2 * jw + 2 * w / (K + 1))))
            ev0 = float(np.sum(jw * phi.imag))
            ed0 = (1.0 + 2 * float(np.sum(w * phi.real))) / (2 * K + 2)
            lo_m, up_m = np.empty(beta.size), np.empty(beta.size)
            step = max(1, _BLOCK // K)
            for s in range(0, beta.size, step):
                bb = beta[s : s + step]
                z = np.exp(-2j * np.pi * np.outer(bb, k)) * phi
                ev1 = -(z.imag @ jw)
                ed1 = (1.0 + 2 * (z.real @ w)) / (2 * K + 2)
                centre = bb + ev1 + ev0
                half = ed1 + ed0
                slack = 1e-14 * (K + self.g.size) + 1e-15
                lo_m[s : s + step] = centre - half - err - self.eta_lo - self.eta_hi - slack
                up_m[s : s + step] = centre + half + err + self.eta_lo + slack
            lower[mid], upper[mid] = lo_m, up_m
        return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)


def _extend_charfn(items, k_new, log_thr):
    """Append E exp(2 pi i k X), k = item.K+1 .. k_new[j], to each item (batched).

    Partial products run over pairs in ``item.order``; a frequency whose partial
    log-modulus drops below ``log_thr`` is not completed: its value is set to 0
    and its modulus bound ``exp(partial)`` is stored (all factors have modulus <= 1).
    """
    if not items:
        return
    gmax = max(it.g.size for it in items)
    nb = len(items)
    dd = np.zeros((nb, gmax))
    pp = np.zeros((nb, gmax))
    nn = np.zeros((nb, gmax))
    for j, it in enumerate(items):
        o = it.order
        dd[j, : o.size], pp[j, : o.size], nn[j, : o.size] = it.g.d[o], it.g.pi[o], it.g.n[o]
    vv = pp * (1 - pp)
    item_idx = np.concatenate(
        [np.full(kn - it.K, j) for j, (it, kn) in enumerate(zip(items, k_new, strict=True))]
    )
    ks = np.concatenate([np.arange(it.K + 1, kn + 1) for it, kn in zip(items, k_new, strict=True)])
    L = np.array([it.L for it in items])
    a = np.array([it.a for it in items])
    thr = np.broadcast_to(np.asarray(log_thr, dtype=float), (nb,))[item_idx]
    omega = 2 * np.pi * ks / L[item_idx]
    acc_re = np.zeros(ks.size)
    bound = np.zeros(ks.size)
    pend = np.arange(ks.size)
    # Pass 1: log-moduli of the partial products, in growing chunks of pairs;
    # a frequency leaves as soon as its partial modulus certifies it negligible.
    j0 = 0
    chunk = 32
    while pend.size and j0 < gmax:
        c = int(min(gmax - j0, chunk))
        step = max(1, _BLOCK // c)
        for s in range(0, pend.size, step):
            p = pend[s : s + step]
            b = item_idx[p]
            sh = np.sin(0.5 * omega[p, None] * dd[b, j0 : j0 + c])
            acc_re[p] += 0.5 * np.sum(
                nn[b, j0 : j0 + c] * np.log1p(-4.0 * vv[b, j0 : j0 + c] * sh * sh), axis=1
            )
        done = acc_re[pend] < thr[pend]
        bound[pend[done]] = np.exp(acc_re[pend[done]])
        pend = pend[~done]
        j0 += c
        chunk = int(1.5 * c)
    # Pass 2: the arguments of the frequencies that were never certified (exact).
    acc_im = np.zeros(pend.size)
    step = max(1, _BLOCK // max(pend.size, 1))
    for j0 in range(0, gmax, step):
        b = item_idx[pend]
        half = 0.5 * omega[pend, None] * dd[b, j0 : j0 + step]
        sh, ch = np.sin(half), np.cos(half)
        pb = pp[b, j0 : j0 + step]
        acc_im += np.sum(
            nn[b, j0 : j0 + step] * np.arctan2(2 * pb * sh * ch, 1 - 2 * pb * sh * sh), axis=1
        )
    phi = np.zeros(ks.size, dtype=complex)
    phi[pend] = np.exp(acc_re[pend] + 1j * (acc_im - omega[pend] * a[item_idx[pend]]))
    start = 0
    for it, kn in zip(items, k_new, strict=True):
        m = kn - it.K
        it.phi = np.concatenate([it.phi, phi[start : start + m]])
        it.bnd = np.concatenate([it.bnd, bound[start : start + m]])
        it.K = kn
        start += m


def _fourier_cdf(groups_list, cs_list, *, tol, max_terms):
    """Brackets of P(S < c) / P(S <= c) for several theta vectors (batched)."""
    items = [_FourierItem(g, tol) for g in groups_list]
    cs_list = [np.asarray(c, dtype=float) for c in cs_list]
    # log threshold for leaving a frequency unfinished: its share of the error budget
    coef_sum = (2 / np.pi) * (1 + math.log(max_terms)) + 2.0
    log_thr = math.log(1e-2 * tol / coef_sum)
    target = []
    for it, cs in zip(items, cs_list, strict=True):
        inside = (cs >= it.lo_edge) & (cs <= it.hi_edge)
        if not inside.any():
            target.append(0)
            continue
        f = float(np.max(it.density_guess(cs[inside]))) * it.L
        target.append(int(min(max_terms, max(64, math.ceil(1.25 * f / (2 * tol))))))
    results = [None] * len(items)
    active = list(range(len(items)))
    while active:
        grow = [j for j in active if target[j] > items[j].K]
        _extend_charfn([items[j] for j in grow], [target[j] for j in grow], log_thr)
        still = []
        for j in active:
            it = items[j]
            lo, up = it.bracket(cs_list[j], target[j])
            results[j] = (lo, up)
            hw = float(np.max(up - lo)) / 2 if lo.size else 0.0
            if hw > tol and target[j] < max_terms:
                new = math.ceil((target[j] + 1) * min(hw / tol, 64.0) * 1.2)
                target[j] = int(min(max_terms, max(new, 2 * target[j])))
                still.append(j)
        active = still
    return results, [it.K for it in items]


# --------------------------------------------------------------------------------------
# Public: log-probability and percentile of a ranking
# --------------------------------------------------------------------------------------


def ranking_log_probability(theta, ranking):
    """Log-probability of a ranking under independent Bernoulli(theta) answers.

    Parameters
    ----------
    theta : array-like, shape (..., n_pairs)
        Probability that a human picks the first item of each pair.
    ranking : array-like of 0/1, shape (..., n_pairs)
        ``1`` = first item picked. Broadcast against ``theta``. Pandas inputs are
        paired with ``theta`` by pair label, as in :func:`ranking_percentile`.

    Returns
    -------
    ndarray or float
        ``sum_i log p_i(r_i)``; ``-inf`` when ``r`` contradicts a pair with theta
        exactly 0 or 1.

    Examples
    --------
    >>> from bayeval.rankings.percentile import ranking_log_probability
    >>> round(float(ranking_log_probability([0.9, 0.2], [1, 0])), 6)
    -0.328504
    """
    theta, ranking = paired_by_label([("theta", theta), ("ranking", ranking)])
    th = _check_theta(theta)
    r = _check_ranking(ranking, th.shape[-1])
    with np.errstate(divide="ignore"):
        lp = np.where(r == 1, np.log(th), np.log1p(-th)).sum(axis=-1)
    return lp[()] if lp.ndim == 0 else lp


@dataclass(frozen=True)
class PercentileResult:
    """Percentile Q of rankings with its certified error bound.

    Attributes
    ----------
    q : ndarray
        Estimate of Q (midpoint of ``[lower, upper]``).
    lower, upper : ndarray
        Bracket: ``lower <= Q <= upper``.
    bound : ndarray
        ``|Q - q| <= bound`` (half the bracket width, plus rounding allowance).
    method : ndarray of str
        "exact" or "fourier" per ranking.
    ties : str
        "strict" or "inclusive" (see :func:`ranking_percentile`).

    Examples
    --------
    >>> from bayeval.rankings.percentile import ranking_percentile
    >>> res = ranking_percentile([0.9, 0.2, 0.6], [0, 0, 1], return_bound=True)
    >>> round(float(res.q), 6), res.method.tolist(), bool(res.bound < 1e-12)
    (0.9, 'exact', True)
    """

    q: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    bound: np.ndarray
    method: np.ndarray
    ties: str


def ranking_percentile(
    theta,
    ranking,
    *,
    ties="strict",
    method="auto",
    tol=1e-4,
    tie_rtol=1e-10,
    max_terms=2**20,
    return_bound=False,
):
    """Percentile Q of a ranking among human rankings (0 = most probable).

    ``Q(r)`` is the total probability of the human rankings that are strictly
    more probable than ``r`` (``ties="strict"``), so the most probable ranking
    has ``Q = 0`` and a ranking humans cannot produce has ``Q = 1``. A ranking is
    indistinguishable from human ones at level ``eps`` when ``Q <= 1 - eps``.
    See the module docstring for the tie rule and the two algorithms.

    Parameters
    ----------
    theta : array-like, shape (..., n_pairs)
        Probability that a human picks the first item of each pair; leading axes
        (e.g. posterior ``(chain, draw)``) are broadcast against ``ranking``.
        Values 0 and 1 are allowed.
    ranking : array-like of 0/1, shape (..., n_pairs)
        Machine ranking(s): ``1`` = first item picked.

        When both ``theta`` and ``ranking`` are pandas objects they are paired by
        pair label -- a Series' index, a DataFrame's columns -- as bayeval pairs
        every pandas input: the same labels in another order are put in ``theta``'s
        order; other or repeated labels, or an order that cannot be told (pandas'
        default index ``0 .. n-1`` on one of them), are a ``ValueError`` saying how to
        fix it (``.loc``, ``.reindex``, or ``.to_numpy()`` to pair by position).
        Plain arrays are paired by position. A labelled theta is
        ``estimate_theta(votes_df).to_frame()["theta"]``.
    ties : {"strict", "inclusive"}, default "strict"
        "strict": ``P(p(R) > p(r))``. "inclusive": ``P(p(R) >= p(r))``, the
        paper's cumulative sum including ``r``'s own block (eq. 7).
    method : {"auto", "exact", "fourier"}, default "auto"
        "auto" uses the exact grouped method when its enumeration is small (few
        distinct theta values or few pairs) and the Fourier bracket otherwise.
        "exact" raises if the enumeration would be too large.
    tol : float, default 1e-4
        Target for ``bound`` with the Fourier method. The cost grows like
        ``1 / tol``; the exact method ignores it (its bound is ~1e-15).
    tie_rtol : float, default 1e-10
        Log-probabilities within ``tie_rtol * (1 + sum_i |logit theta_i|)`` nats
        count as tied.
    max_terms : int, default 2**20
        Largest number of Fourier frequencies. If ``tol`` cannot be met (e.g. a
        large probability atom sits at ``r``'s own log-probability), a
        ``RuntimeWarning`` is issued and the wider bound is returned.
    return_bound : bool, default False
        Return a :class:`PercentileResult` (estimate, bracket, bound, method)
        instead of the estimate alone.

    Returns
    -------
    float or ndarray or PercentileResult
        Q with shape ``broadcast(theta.shape[:-1], ranking.shape[:-1])``.

    Notes
    -----
    Broadcast rows are evaluated in a vectorised pass: the characteristic
    function of each distinct theta row is computed once for all rankings that
    share it, and the Fourier method batches all rows together. Only light
    per-row set-up (grouping equal theta values, the Chernoff window) runs in a
    Python loop. With distinct theta values, ``n_pairs = 100_000`` takes about a
    second at ``tol=1e-4`` (see ``benchmarks/ranking.py``).

    Examples
    --------
    >>> from bayeval.rankings.percentile import ranking_percentile
    >>> theta = [0.9, 0.8, 0.3]
    >>> float(ranking_percentile(theta, [1, 1, 0]))   # the most probable ranking
    0.0
    >>> round(float(ranking_percentile(theta, [0, 1, 0])), 6)  # 0.504 + 0.216 + 0.126
    0.846
    >>> float(ranking_percentile([1.0, 0.5], [0, 1]))  # impossible for humans
    1.0

    Series are paired by label, in any order:

    >>> import pandas as pd
    >>> th = pd.Series(theta, index=["a", "b", "c"])
    >>> float(ranking_percentile(th, pd.Series([0, 1, 1], index=["c", "a", "b"])))
    0.0
    """
    ties = V.check_choice(ties, "ties", _TIES)
    method = V.check_choice(method, "method", _METHODS)
    tol = V.as_positive_number(tol, "tol", upper=0.5)
    tie_rtol = V.as_positive_number(tie_rtol, "tie_rtol", upper=1e-3)
    if isinstance(max_terms, bool) or not isinstance(max_terms, int | np.integer) or max_terms < 64:
        raise ValueError(f"max_terms must be an integer >= 64; got {max_terms!r}.")
    theta, ranking = paired_by_label([("theta", theta), ("ranking", ranking)])
    th = _check_theta(theta)
    n_pairs = th.shape[-1]
    r = _check_ranking(ranking, n_pairs)
    lead = np.broadcast_shapes(th.shape[:-1], r.shape[:-1])
    # owner: which theta row each result element uses; rows of ranking likewise
    th_rows = th.reshape(-1, n_pairs)
    r_rows = r.reshape(-1, n_pairs)
    owner = np.broadcast_to(np.arange(th_rows.shape[0]).reshape(th.shape[:-1]), lead).ravel()
    r_owner = np.broadcast_to(np.arange(r_rows.shape[0]).reshape(r.shape[:-1]), lead).ravel()
    n_el = owner.size
    lower = np.zeros(n_el)
    upper = np.zeros(n_el)
    used = np.full(n_el, "exact", dtype="<U7")
    order = np.argsort(owner, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(owner[order]) != 0])
    bounds = np.r_[starts, n_el]
    fourier_groups, fourier_cs, fourier_els = [], [], []
    for s, e in zip(bounds[:-1], bounds[1:], strict=True):
        els = order[s:e]
        row = th_rows[owner[els[0]]]
        groups = _groups_of(row)
        D, impossible = _ranking_deficits(row, r_rows[r_owner[els]])
        tau = tie_rtol * (1.0 + float(np.sum(groups.n * groups.d)))
        cs = D - tau if ties == "strict" else D + tau
        # closed-form cases
        lower[els[impossible]] = upper[els[impossible]] = 1.0
        todo = ~impossible
        if groups.size == 0:
            val = (cs > 0) if ties == "strict" else (cs >= 0)
            lower[els[todo]] = upper[els[todo]] = val[todo].astype(float)
            continue
        if ties == "strict":
            zero = todo & (cs <= 0)
            lower[els[zero]] = upper[els[zero]] = 0.0
            todo &= ~zero
        if not todo.any():
            continue
        plan = None
        if method == "exact" or (method == "auto" and _exact_maybe(groups)):
            plan = _ExactPlan(groups)
            if not plan.feasible():
                if method == "exact":
                    raise ValueError(
                        "method='exact' would enumerate about "
                        f"10^{max(plan.log_sizes) / math.log(10):.1f} support points per half "
                        f"(limit {_EXACT_BUDGET}): theta has too many distinct values "
                        f"({groups.size}). Use method='fourier' or 'auto'."
                    )
                plan = None
        if plan is not None:
            lo, up = plan.cdf(cs[todo], strict=ties == "strict")
            lower[els[todo]], upper[els[todo]] = lo, up
        else:
            fourier_groups.append(groups)
            fourier_cs.append(cs[todo])
            fourier_els.append(els[todo])
    if fourier_groups:
        res, _ = _fourier_cdf(fourier_groups, fourier_cs, tol=tol, max_terms=max_terms)
        for els, (lo, up) in zip(fourier_els, res, strict=True):
            lower[els], upper[els] = lo, up
            used[els] = "fourier"
    q = 0.5 * (lower + upper)
    bound = 0.5 * (upper - lower)
    worst = float(bound[used == "fourier"].max()) if (used == "fourier").any() else 0.0
    if worst > tol * (1 + 1e-9):
        warnings.warn(
            f"ranking_percentile: requested tol={tol:g} not reached (largest bound {worst:.3g}) "
            f"with max_terms={max_terms}. A large probability atom near the ranking's own "
            "log-probability limits the Fourier bracket; try method='exact' or a larger "
            "max_terms. The returned bound is valid.",
            RuntimeWarning,
            stacklevel=2,
        )
    shape = lead

    def _out(x):
        x = x.reshape(shape)
        return x[()] if x.ndim == 0 else x

    if return_bound:
        return PercentileResult(
            q=_out(q),
            lower=_out(lower),
            upper=_out(upper),
            bound=_out(bound),
            method=_out(used),
            ties=ties,
        )
    return _out(q)


# --------------------------------------------------------------------------------------
# Distribution of human log-probabilities (the paper's Figure 2 view)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogProbDistribution:
    """Distribution of ``log p(R)`` over human rankings ``R``, binned.

    Attributes
    ----------
    edges : ndarray, shape (bins + 1,)
        Bin edges in log-probability, decreasing (most probable first).
    mass : ndarray, shape (bins,)
        Probability that a human ranking's log-probability falls in bin ``j``,
        ``[edges[j + 1], edges[j])`` (the first bin also holds ``edges[0]``, the
        most probable ranking).
    bound : float
        Each ``mass`` entry is within ``bound`` of the truth.
    tail : float
        Probability of log-probabilities below ``edges[-1]``.
    max_log_prob : float
        Log-probability of the most probable ranking.
    method : str
        "exact" or "fourier".

    Examples
    --------
    >>> from bayeval.rankings.percentile import ranking_log_prob_distribution
    >>> dist = ranking_log_prob_distribution([0.9, 0.7, 0.6], bins=4)
    >>> round(float(dist.mass.sum() + dist.tail), 9)
    1.0
    """

    edges: np.ndarray
    mass: np.ndarray
    bound: float
    tail: float
    max_log_prob: float
    method: str


def ranking_log_prob_distribution(theta, *, bins=100, tol=1e-4, method="auto", max_terms=2**20):
    """Binned distribution of human-ranking log-probabilities.

    Uses the same machinery as :func:`ranking_percentile`: bin masses are
    differences of the CDF of the deficit ``S`` (``log p(R) = max_log_prob - S``)
    at the bin edges, each bracketed.

    Parameters
    ----------
    theta : array-like, shape (n_pairs,)
        Probability that a human picks the first item of each pair.
    bins : int, default 100
        Number of bins between the most probable log-probability and the lower
        end of the bulk (all but about ``tol / 1000`` of the mass).
    tol : float, default 1e-4
        Target accuracy of each CDF value (Fourier method).
    method : {"auto", "exact", "fourier"}, default "auto"
        As in :func:`ranking_percentile` (exact enumeration limited to small cases).
    max_terms : int, default 2**20
        Largest number of Fourier frequencies.

    Returns
    -------
    LogProbDistribution

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.rankings.percentile import ranking_log_prob_distribution
    >>> rng = np.random.default_rng(0)
    >>> dist = ranking_log_prob_distribution(rng.uniform(size=500), bins=50, tol=1e-3)
    >>> dist.mass.shape, dist.method
    ((50,), 'fourier')
    """
    th = _check_theta(theta)
    if th.ndim != 1:
        raise ValueError(f"theta must be 1-D (n_pairs,) here; got shape {th.shape}.")
    method = V.check_choice(method, "method", _METHODS)
    tol = V.as_positive_number(tol, "tol", upper=0.5)
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer) or bins < 1:
        raise ValueError(f"bins must be a positive integer; got {bins!r}.")
    pi = _minor_prob(th)
    with np.errstate(divide="ignore"):
        top = float(np.sum(np.log1p(-pi)))
    groups = _groups_of(th)
    if groups.size == 0:
        edges = np.array([top, top - 1.0])
        return LogProbDistribution(edges, np.array([1.0]), 0.0, 0.0, top, "exact")
    item = _FourierItem(groups, tol)
    s_hi = item.hi_edge
    if item.eta_hi == 0.0:  # the grid reaches the least probable ranking: keep it inside
        s_hi = s_hi * (1 + 1e-12) + 1e-12
    s_edges = np.linspace(0.0, s_hi, bins + 1)
    s_edges[0] = -1e-300  # first bin includes S = 0
    plan = None
    budget = 2**16 if method == "auto" else _EXACT_BUDGET
    if method == "exact" or (method == "auto" and _exact_maybe(groups, budget)):
        plan = _ExactPlan(groups)
        if not plan.feasible(budget):
            if method == "exact":
                raise ValueError(
                    "method='exact' is too large for this theta; use method='fourier' or 'auto'."
                )
            plan = None
    if plan is not None:
        lo, up = plan.cdf(s_edges, strict=False)
        used = "exact"
    else:
        (res,), _ = _fourier_cdf([groups], [s_edges], tol=tol, max_terms=max_terms)
        lo, up = res
        used = "fourier"
    cdf = 0.5 * (lo + up)
    cdf[0] = 0.0
    bound = float(np.max(up - lo))  # each mass is a difference of two bracketed values
    mass = np.clip(np.diff(cdf), 0.0, None)
    tail = float(max(0.0, 1.0 - cdf[-1]))
    return LogProbDistribution(
        edges=top - np.r_[0.0, s_edges[1:]],
        mass=mass,
        bound=bound,
        tail=tail,
        max_log_prob=top,
        method=used,
    )
