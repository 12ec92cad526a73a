"""Bayesian model of human pairwise rankings with confidence scores (PyMC).

Each item pair ``i`` has ``theta[i]``, the probability that a human picks its
first item. Votes are Binomial given ``theta``; for pairs whose votes are
unanimous and that carry confidence scores, the confidence levels inform
``theta`` through the same mapping as the paper's constrained MLE (eqs. 12-14).
A machine ranking is judged against the human rankings the fit predicts: a new
human picks the first item of pair ``i`` with probability ``E[theta[i] | votes]``
(the posterior predictive), and the percentile ``Q`` of the machine's ranking
among those predicted rankings (:meth:`RankingPosterior.percentile`) carries the
uncertainty about ``theta`` in that prediction. For a human's ranking ``Q`` is
uniform on (0, 1) when the model holds (lower where rankings tie), so ``Q > 1 -
epsilon`` happens to at most about a share ``epsilon`` of humans.

The numpy core (vote counting, point estimates, ``Q``) is in
:mod:`bayeval.rankings.percentile`; this module only builds the PyMC model and wraps draws
in xarray.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pandas as pd
import xarray as xr

from bayeval.core import _validate as V
from bayeval.rankings.percentile import (
    DEFAULT_MAPPING,
    UNDECIDED_RULES,
    VoteCounts,
    count_votes,
    estimate_theta,
    pair_labels,
    pair_rules,
    paired_confidence,
    ranking_percentile,
)

from ..core.model import Model
from ..core.posterior import BasePosterior

__all__ = ["HumanRanking", "PairwiseVotes", "RankingPosterior"]


class PairwiseVotes:
    """What :class:`HumanRanking` is fitted to: people's answers on pairs of items.

    Parameters
    ----------
    votes : array-like, shape (n_pairs, n_annotators)
        ``1`` first item, ``0`` second item, ``-1`` unable to decide, ``NaN`` no answer.
        A DataFrame's index becomes the ``pair`` coordinate.
    confidence : array-like, shape (n_pairs, n_annotators), optional
        Confidence level (``0 .. len(mapping) - 1``) of each decided answer, NaN elsewhere.
        A DataFrame beside a votes DataFrame is paired with it by its index: the same pairs
        in another order are put in the votes' order here; other or repeated labels, or
        pandas' default ``0 .. n-1`` index on one of them beside labels in another order,
        are a ValueError here. Plain arrays are paired by position.

    The values are checked when a model is built or fitted.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.rankings import PairwiseVotes
    >>> PairwiseVotes(np.array([[1, 1, 0], [0, -1, 0]]))
    PairwiseVotes(n_pairs=2, n_annotators=3, confidence=False)
    """

    def __init__(self, votes, confidence=None):
        self.votes, self.confidence = paired_confidence(votes, confidence)

    def __repr__(self) -> str:
        shape = np.shape(self.votes)
        n_ann = shape[1] if len(shape) > 1 else 1
        return f"PairwiseVotes(n_pairs={shape[0] if shape else 0}, n_annotators={n_ann}, confidence={self.confidence is not None})"


def _as_votes(args, what: str) -> PairwiseVotes:
    if len(args) == 1 and isinstance(args[0], PairwiseVotes):
        return args[0]
    raise TypeError(
        f"HumanRanking.{what}() takes one PairwiseVotes(votes, confidence), got "
        + ", ".join(type(a).__name__ for a in args) + "."
    )


class HumanRanking(Model):
    """Bernoulli model of human pairwise rankings, with confidence scores.

    Model, for pair ``i`` with ``n1`` votes for the first item and ``n0`` for
    the second (``theta_i`` = P(first item picked)):

    - pairs without usable confidence scores:
      ``theta_i ~ Beta(kappa, kappa)``, with ``log kappa ~ Normal(0, 1)``
      (``theta_prior="hierarchical"``; symmetric because the order of the two
      items in a pair is arbitrary), or a fixed ``Beta(a, b)``;
    - unanimous pairs with confidence scores (the paper's design): the
      confidence level of each answer is a categorical draw with pair-specific
      probabilities ``q_i ~ Dirichlet(confidence_prior)`` (sampled through its
      exact stick-breaking form, Beta variables ``q_stick``), and the probability
      that the chosen item is picked again is ``sum_s c_s q_is`` (``c`` =
      ``mapping``, (0.5, 0.75, 1.0) by default). This is exactly the paper's
      likelihood (eqs. 12-14) with a prior on ``q`` (by default one Dirichlet
      prior shared by the confident pairs and fitted to them, ``"pooled"``): with a
      flat Dirichlet (``confidence_prior=1.0``) the
      posterior density of ``(theta, q)`` is proportional to that likelihood, so
      its mode is the constrained MLE and the Bayesian and point routes agree
      where data are plentiful. It rests on the paper's assumption
      that confidence measures how reliably the chosen item would be chosen
      again, which only makes sense for the (unanimous) majority side;
      confidence scores of non-unanimous pairs are therefore not used, and are
      counted (``n_confidence_unused`` in :meth:`RankingPosterior.counts_frame`);
    - votes: ``n1 ~ Binomial(n1 + n0, theta_i)``. "Unable to decide" answers
      are excluded from the Binomial (``undecided="exclude"``) or enter as half
      a vote for each item (``undecided="half"``, a pm.Potential); either way
      they are counted and reported.

    Parameters
    ----------
    mapping : sequence of float, default (0.5, 0.75, 1.0)
        Theta implied by each confidence level, lowest level first.
    theta_prior : "hierarchical" or (float, float), default "hierarchical"
        Prior for pairs without confidence scores.
    confidence_prior : "pooled" or float, default "pooled"
        Concentration of a symmetric Dirichlet prior on confidence-level
        probabilities (1 = flat on the simplex), or ``"pooled"``: one Dirichlet prior for all
        confident pairs, its parameters those that make the confident pairs'
        answers most probable (penalized empirical Bayes,
        :meth:`pooled_confidence_prior`).
        The flat prior pulls each pair's chosen-item probability towards the
        mapping's middle; where most unanimous pairs are clear-cut, "pooled"
        learns that from the pairs together. Measured on data shaped like the
        ranking paper's (``benchmarks/results/ranking_q.md``): with the flat prior
        a ranking with 5% of a human's choices reversed passed as human 83% of
        the time at ``epsilon = 0.1``, with the pooled one 28%.
    undecided : {"exclude", "half"}, default "exclude"
        How "unable to decide" answers enter the likelihood.
    use_confidence : bool, default True
        Use confidence scores (else every pair gets the vote-only model).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.rankings.model import HumanRanking
    >>> votes = np.array([[1, 1, 1, 1, 1], [1, 0, 1, -1, 0]])
    >>> conf = np.array([[2, 1, 2, 2, 1], [np.nan] * 5])
    >>> model = HumanRanking().build(PairwiseVotes(votes, conf))
    >>> sorted(model.coords)
    ['confidence_level', 'confident_pair', 'pair', 'stick', 'vote_pair']
    """

    def __init__(
        self,
        *,
        mapping=DEFAULT_MAPPING,
        theta_prior="hierarchical",
        confidence_prior="pooled",
        undecided="exclude",
        use_confidence=True,
    ):
        self.mapping = tuple(float(x) for x in V.as_confidence_mapping(mapping))
        if isinstance(theta_prior, str):
            V.check_choice(theta_prior, "theta_prior", ("hierarchical",))
        else:
            try:
                a, b = theta_prior
            except (TypeError, ValueError) as err:
                raise ValueError(
                    "theta_prior must be 'hierarchical' or a pair (a, b) of Beta parameters; "
                    f"got {theta_prior!r}."
                ) from err
            theta_prior = (
                V.as_positive_number(a, "theta_prior[0]"),
                V.as_positive_number(b, "theta_prior[1]"),
            )
        self.theta_prior = theta_prior
        if isinstance(confidence_prior, str):
            self.confidence_prior = V.check_choice(confidence_prior, "confidence_prior", ("pooled",))
        else:
            self.confidence_prior = V.as_positive_number(confidence_prior, "confidence_prior")
        self.undecided = V.check_choice(undecided, "undecided", UNDECIDED_RULES)
        if not isinstance(use_confidence, bool | np.bool_):
            raise TypeError(f"use_confidence must be True or False; got {use_confidence!r}.")
        self.use_confidence = bool(use_confidence)

    def __repr__(self) -> str:
        return (
            f"HumanRanking(mapping={self.mapping}, theta_prior={self.theta_prior!r}, "
            f"confidence_prior={self.confidence_prior!r}, undecided={self.undecided!r}, "
            f"use_confidence={self.use_confidence})"
        )

    def _data(self, votes, confidence):
        counts = count_votes(votes, confidence, n_levels=len(self.mapping))
        unanimous, use_conf = pair_rules(counts, self.undecided, self.use_confidence)
        labels = pair_labels(votes, counts.n_pairs)
        return counts, unanimous, use_conf, labels

    def point_estimate(self, votes, confidence=None):
        """The paper's point estimates of theta, with this model's settings.

        Parameters
        ----------
        votes, confidence : array-like
            As in :meth:`build`.

        Returns
        -------
        bayeval.rankings.percentile.ThetaEstimate

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.rankings.model import HumanRanking
        >>> est = HumanRanking().point_estimate(np.array([[1, 0, 1, 1]]))
        >>> float(est.theta[0])
        0.75
        """
        return estimate_theta(
            votes,
            confidence,
            mapping=self.mapping,
            undecided=self.undecided,
            use_confidence=self.use_confidence,
        )

    def _dirichlet_prior(self, counts, conf_idx):
        """The Dirichlet prior's parameters (one per confidence level) for the confident pairs."""
        if self.confidence_prior != "pooled":
            return np.full(len(self.mapping), float(self.confidence_prior))
        return _pooled_alpha(counts.confidence_counts[conf_idx].astype(float),
                             (counts.n_first + counts.n_second)[conf_idx], np.asarray(self.mapping))

    def pooled_confidence_prior(self, votes, confidence=None):
        """The pooled Dirichlet prior of ``confidence_prior="pooled"`` for these data.

        The parameters ``alpha`` (one per confidence level) that make the confident
        pairs' answers -- their confidence levels and votes -- most probable, with
        each pair's level probabilities ``q_i ~ Dirichlet(alpha)`` integrated out (a
        finite mixture, as in the exact posterior draws), under a normal hyperprior
        on ``log alpha`` centred on the flat prior (sd ``POOLED_LOG_ALPHA_SD`` = 1.5):
        with few confident pairs the prior stays near flat instead of following
        two or three pairs to an extreme.

        Parameters
        ----------
        votes, confidence : array-like
            As in :meth:`build`.

        Returns
        -------
        numpy.ndarray
            ``alpha``, lowest confidence level first (empty where no pair uses
            confidence scores).

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.rankings.model import HumanRanking
        >>> votes = np.ones((40, 6))
        >>> conf = np.full((40, 6), 2.0)
        >>> conf[::4, 0] = 1.0
        >>> alpha = HumanRanking(confidence_prior="pooled").pooled_confidence_prior(votes, conf)
        >>> bool(alpha[2] > alpha[1] > alpha[0])
        True
        """
        counts, _, use_conf, _ = self._data(votes, confidence)
        conf_idx = np.flatnonzero(use_conf)
        if conf_idx.size == 0:
            return np.empty(0)
        return _pooled_alpha(counts.confidence_counts[conf_idx].astype(float),
                             (counts.n_first + counts.n_second)[conf_idx], np.asarray(self.mapping))

    def build(self, data, *args):
        """Build the PyMC model.

        Parameters
        ----------
        data : PairwiseVotes
            The votes and, optionally, their confidence levels.

        Returns
        -------
        pymc.Model
            Variables: ``theta`` (dims ``pair``), ``theta_votes`` (``vote_pair``),
            ``q_stick`` (``confident_pair``, ``stick``) and the derived ``q``
            (``confident_pair``, ``confidence_level``), observed ``votes`` and
            ``confidence``.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.rankings.model import HumanRanking
        >>> from bayeval.rankings import PairwiseVotes
        >>> model = HumanRanking(theta_prior=(1, 1)).build(PairwiseVotes(np.array([[1, 0], [1, 1]])))
        >>> model.named_vars_to_dims["theta"]
        ('pair',)
        """
        import pymc as pm
        import pytensor.tensor as pt

        data = _as_votes((data, *args), "build")
        counts, unanimous, use_conf, labels = self._data(data.votes, data.confidence)
        n1 = counts.n_first
        n0 = counts.n_second
        u = counts.n_undecided
        vote_idx = np.flatnonzero(~use_conf)
        conf_idx = np.flatnonzero(use_conf)
        c = np.asarray(self.mapping)
        coords = {"pair": labels}
        if vote_idx.size:
            coords["vote_pair"] = labels[vote_idx]
        if conf_idx.size:
            coords["confident_pair"] = labels[conf_idx]
            coords["confidence_level"] = np.arange(c.size)
            coords["stick"] = np.arange(c.size - 1)
        with pm.Model(coords=coords) as model:
            theta = pt.zeros(labels.size)
            if vote_idx.size:
                if self.theta_prior == "hierarchical":
                    log_kappa = pm.Normal("log_concentration", 0.0, 1.0)
                    kappa = pm.Deterministic("concentration", pt.exp(log_kappa))
                    theta_v = pm.Beta("theta_votes", alpha=kappa, beta=kappa, dims="vote_pair")
                else:
                    a, b = self.theta_prior
                    theta_v = pm.Beta("theta_votes", alpha=a, beta=b, dims="vote_pair")
                theta = pt.set_subtensor(theta[vote_idx], theta_v)
            if conf_idx.size:
                # q_i ~ Dirichlet(a, ..., a) by stick-breaking: v_k ~ Beta(a, a (L - 1 - k)),
                # q_k = v_k prod_{j<k} (1 - v_j) (exact; elementwise ops sample faster)
                a = self._dirichlet_prior(counts, conf_idx)
                v = pm.Beta(
                    "q_stick",
                    alpha=a[:-1],
                    beta=np.cumsum(a[::-1])[::-1][1:],  # the mass of the later levels
                    dims=("confident_pair", "stick"),
                )
                cols, rest = [], 1.0
                for k in range(c.size - 1):  # L is small: elementwise ops, no cumprod
                    cols.append(v[:, k] * rest)
                    rest = rest * (1 - v[:, k])
                q = pm.Deterministic(
                    "q",
                    pt.stack([*cols, rest], axis=1),
                    dims=("confident_pair", "confidence_level"),
                )
                chosen = pm.Deterministic(
                    "theta_chosen", (q * c).sum(axis=1), dims="confident_pair"
                )
                first = (n1[conf_idx] > 0).astype(float)
                theta = pt.set_subtensor(
                    theta[conf_idx], first * chosen + (1 - first) * (1 - chosen)
                )
                pm.Multinomial(
                    "confidence",
                    n=counts.n_confidence[conf_idx],
                    p=q,
                    observed=counts.confidence_counts[conf_idx],
                    dims=("confident_pair", "confidence_level"),
                )
            theta = pm.Deterministic("theta", theta, dims="pair")
            if self.undecided == "exclude":
                pm.Binomial("votes", n=n1 + n0, p=theta, observed=n1, dims="pair")
            else:
                k1, k0 = n1 + 0.5 * u, n0 + 0.5 * u
                pm.Potential(
                    "votes",
                    pt.sum(k1 * pt.log(theta) + k0 * pt.log1p(-theta)),
                )
        return model

    # ------------------------------------------------------------ the contract

    # the posterior has a closed form up to one dimension (see _exact_posterior): drawn
    # directly, no MCMC; NUTS where a confident pair has too many votes to enumerate
    auto_sampler = "exact"
    target_accept = 0.8  # PyMC's default, as this model always used
    param_names = ("theta", "concentration")

    def _check_data(self, data):
        if not isinstance(data, PairwiseVotes):
            raise TypeError(f"`data` must be a PairwiseVotes(votes, confidence), got {type(data).__name__}.")
        self._data(data.votes, data.confidence)  # the checks, with their messages
        return data

    def _posterior(self, data, idata, *, sampling, random_seed):
        counts, unanimous, use_conf, labels = self._data(data.votes, data.confidence)
        post = RankingPosterior(idata, counts=counts, unanimous=unanimous, used_confidence=use_conf,
                                pair_labels=labels, undecided=self.undecided)
        post.data = data  # the votes it was fitted to (bayeval.save(post, path) stores them)
        return post

    def _exact_posterior(self, data, *, chains, draws, seed):
        """Independent draws of the exact posterior, without MCMC.

        The posterior factorizes. Pairs judged by their votes: given the concentration
        kappa, theta ~ Beta(kappa + k1, kappa + k0) (conjugate), and kappa's own
        posterior is one-dimensional (a Beta-Binomial likelihood per pair), drawn by
        inverse CDF on a fine grid of log kappa; with a fixed Beta(a, b) prior theta is
        Beta(a + k1, b + k0). Unanimous pairs with confidence scores: q's posterior is
        the conjugate Dirichlet(prior + confidence counts) times the votes' likelihood
        ``chosen(q)^m`` (m decided votes, ``chosen = q . mapping``), a finite mixture of
        Dirichlets (:func:`_confident_q`). Returns the draws as an InferenceData with the
        variables and dims of :meth:`build`, and a SamplingInfo, or a reason (str) where
        a pair has too many votes to enumerate the mixture.
        """
        import time

        import arviz as az

        from ..core.sampling import SamplingInfo

        t0 = time.perf_counter()
        counts, unanimous, use_conf, labels = self._data(data.votes, data.confidence)
        rng = np.random.default_rng(seed)
        n = chains * draws
        n1, n0, u = (np.asarray(v, dtype=float) for v in (counts.n_first, counts.n_second, counts.n_undecided))
        k1, k0 = (n1, n0) if self.undecided == "exclude" else (n1 + 0.5 * u, n0 + 0.5 * u)
        vote_idx, conf_idx = np.flatnonzero(~use_conf), np.flatnonzero(use_conf)
        c = np.asarray(self.mapping)
        post, dims, extra = {}, {}, {}
        theta = np.zeros((n, labels.size))
        if conf_idx.size:
            q = _confident_q(self._dirichlet_prior(counts, conf_idx) + counts.confidence_counts[conf_idx].astype(float),
                             (n1 + n0)[conf_idx], c, n, rng)
            if isinstance(q, str):
                return q
            chosen = q @ c
            first = n1[conf_idx] > 0
            theta[:, conf_idx] = np.where(first, chosen, 1.0 - chosen)
            left = 1.0 - np.cumsum(q, axis=-1) + q  # the mass not taken before level k
            post["q_stick"] = np.clip(q[..., :-1] / np.maximum(left[..., :-1], 1e-300), 0.0, 1.0)
            post["q"], post["theta_chosen"] = q, chosen
            dims.update(q_stick=["confident_pair", "stick"], q=["confident_pair", "confidence_level"],
                        theta_chosen=["confident_pair"])
        if vote_idx.size:
            a1, a0 = k1[vote_idx], k0[vote_idx]
            if self.theta_prior == "hierarchical":
                log_kappa, n_grid = _log_kappa_draws(a1, a0, n, rng)
                kappa = np.exp(log_kappa)
                post["log_concentration"], post["concentration"] = log_kappa, kappa
                th = rng.beta(kappa[:, None] + a1, kappa[:, None] + a0)
                extra["grid_points"] = n_grid
            else:
                a, b = self.theta_prior
                th = rng.beta(a + a1, b + a0, size=(n, a1.size))
            post["theta_votes"] = th
            dims["theta_votes"] = ["vote_pair"]
            theta[:, vote_idx] = th
        post["theta"] = theta
        dims["theta"] = ["pair"]
        coords = {"pair": labels}
        if vote_idx.size:
            coords["vote_pair"] = labels[vote_idx]
        if conf_idx.size:
            coords.update(confident_pair=labels[conf_idx], confidence_level=np.arange(c.size),
                          stick=np.arange(c.size - 1))
        shaped = {k: v.reshape(chains, draws, *v.shape[1:]) for k, v in post.items()}
        idata = az.from_dict(posterior=shaped, dims=dims, coords=coords)
        return idata, SamplingInfo("exact", seconds=time.perf_counter() - t0, extra=extra)

    def _log_likelihood(self, post) -> dict:
        """The votes' log-likelihood per pair (undecided answers as the model counts them)."""
        c = post.counts
        theta = np.clip(post.theta.values, 1e-12, 1 - 1e-12)
        if self.undecided == "exclude":
            k1, k0 = c.n_first, c.n_second
        else:
            k1, k0 = c.n_first + 0.5 * c.n_undecided, c.n_second + 0.5 * c.n_undecided
        return {"votes": (("chain", "draw", "pair"), k1 * np.log(theta) + k0 * np.log1p(-theta))}

    def fit(self, data, *args, draws: int = 1000, tune: int = 1000, chains: int | None = None,
            cores: int | None = None, random_seed=None, progressbar: bool = True, sampler: str = "auto",
            warn: bool = True, **sample_kwargs):
        """Draw the posterior: exactly by default (no MCMC), or with NUTS or SMC.

        Parameters
        ----------
        data : PairwiseVotes
            The votes and their confidence levels.
        draws, tune : int
        chains : int, optional
            Default 2.
        cores : int, optional
            Processes for the chains (default: up to 2).
        random_seed : int, numpy Generator or SeedSequence, optional
            Seed for reproducible draws.
        progressbar : bool, default True
        sampler : {"auto", "exact", "importance", "smc", "pymc", "pymc-numba", "nutpie", "numpyro", "blackjax"}
            ``"auto"``: ``"exact"`` -- independent draws of the exact posterior, no
            MCMC: given the concentration each theta is a Beta (conjugate), the
            concentration's one-dimensional posterior is drawn on a fine grid, and a
            confident pair's confidence probabilities are drawn from their
            conjugate Dirichlet times the votes' likelihood, a finite mixture of
            Dirichlets (``tune`` and the NUTS settings do not apply; the draws need no
            convergence check). Where a confident pair has too many votes to enumerate
            that mixture (about 2,000 with three confidence levels) ``"auto"`` falls
            back to PyMC's NUTS and ``post.sampling.fallback_reason`` says why. The NUTS
            implementations are selectable by name (NUTS meets the concentration's
            funnel: divergences are common).
            ``"smc"``: PyMC's sequential Monte Carlo, each chain an independent run of
            ``draws`` particles tempered from the prior (``tune`` and the NUTS settings
            do not apply): separated modes get their posterior weight, but the
            particles can come out less spread than the posterior (measured on
            ``AnnotatorError``); compare with NUTS before relying on it.
        warn : bool, default True
            Warn when r_hat, ESS or divergences look bad (``post.convergence``).
        **sample_kwargs
            NUTS settings: ``target_accept`` (default 0.8), ``init``, ``max_treedepth``.

        Returns
        -------
        RankingPosterior
            With ``sampling``, ``convergence``, and the votes' log-likelihood per pair in
            ``idata.log_likelihood`` (so ``az.loo(post.idata)`` works).

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.rankings.model import HumanRanking, PairwiseVotes
        >>> rng = np.random.default_rng(0)
        >>> votes = (rng.uniform(size=(10, 5)) < 0.7).astype(float)
        >>> post = HumanRanking().fit(PairwiseVotes(votes), draws=100, tune=100, chains=1,
        ...                           random_seed=1, progressbar=False, cores=1, warn=False)
        >>> post.theta.dims
        ('chain', 'draw', 'pair')
        """
        data = _as_votes((data, *args), "fit")
        return super().fit(data, draws=draws, tune=tune, chains=chains, cores=cores, random_seed=random_seed,
                           progressbar=progressbar, sampler=sampler, warn=warn, **sample_kwargs)


def _log_kappa_draws(a1, a0, n, rng, *, n_grid: int = 4001):
    """Draws of log kappa from its exact marginal posterior: prior N(0, 1) times, per
    pair, the Beta-Binomial factor B(kappa + a1, kappa + a0) / B(kappa, kappa), on a
    grid (a coarse search for where the density lives, then ``n_grid`` points across
    it, inverse CDF within cells). Pairs with the same counts are evaluated once."""
    from scipy import special

    pairs, mult = np.unique(np.stack([a1, a0], axis=1), axis=0, return_counts=True)

    def logpost(lk):
        kap = np.exp(lk)[:, None]
        terms = special.betaln(kap + pairs[:, 0], kap + pairs[:, 1]) - special.betaln(kap, kap)
        return -0.5 * lk**2 + terms @ mult

    coarse = np.linspace(-30.0, 30.0, 1201)
    lp = logpost(coarse)
    live = np.flatnonzero(lp > lp.max() - 60.0)  # 60 nats below the mode: negligible mass
    lo, hi = coarse[max(live[0] - 1, 0)], coarse[min(live[-1] + 1, coarse.size - 1)]
    grid = np.linspace(lo, hi, n_grid)
    mid = 0.5 * (grid[1:] + grid[:-1])
    lpm = logpost(mid)
    w = np.exp(lpm - lpm.max())
    cdf = np.concatenate([[0.0], np.cumsum(w)])
    cdf /= cdf[-1]
    u = rng.random(n)
    cell = np.clip(np.searchsorted(cdf, u, side="right") - 1, 0, mid.size - 1)
    frac = (u - cdf[cell]) / np.maximum(cdf[cell + 1] - cdf[cell], 1e-300)
    return grid[cell] + frac * (grid[cell + 1] - grid[cell]), n_grid


def _compositions(m: int, levels: int) -> np.ndarray:
    """Every vector of ``levels`` non-negative integers summing to ``m`` (stars and bars)."""
    import itertools

    bars = np.array(list(itertools.combinations(range(m + levels - 1), levels - 1)), dtype=np.int64)
    bars = bars.reshape(-1, levels - 1)
    edges = np.concatenate([np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), m + levels - 1)], axis=1)
    return np.diff(edges, axis=1) - 1


#: the most allocations of a pair's votes to the confidence levels the exact draws of q
#: enumerate (C(m + L - 1, L - 1) for m votes and L levels: 3 levels allow ~2,000 votes)
_MAX_COMPOSITIONS = 2_000_000


def _confident_q(alpha, m, c, n, rng):
    """``n`` exact draws per row of ``q ~ Dirichlet(alpha) * (q . c)^m``.

    Expanding ``(q . c)^m`` multinomially makes the density a finite mixture of
    Dirichlets: over the allocations ``j`` of the m votes to the levels, component
    ``Dirichlet(alpha + j)`` with weight ``m! / prod j_k! * prod c_k^j_k * B(alpha + j)``.
    Each draw picks a component by its weight, then q from it. Rows with the same
    ``alpha`` and ``m`` share the weights. Returns ``q (n, rows, L)``, or a sentence
    where a row has too many allocations to enumerate."""
    from scipy import special

    rows, levels = alpha.shape
    out = np.empty((n, rows, levels))
    key = np.concatenate([alpha, np.asarray(m, dtype=float)[:, None]], axis=1)
    groups, inverse = np.unique(key, axis=0, return_inverse=True)
    logc = np.log(np.maximum(c, 1e-300))
    for g, row in enumerate(groups):
        a, votes = row[:levels], int(row[levels])
        if special.comb(votes + levels - 1, levels - 1) > _MAX_COMPOSITIONS:
            return (f"a confident pair has {votes} votes over {levels} confidence levels: too many allocations "
                    "to draw q exactly")
        j = _compositions(votes, levels)
        logw = -special.gammaln(j + 1).sum(axis=1) + j @ logc + special.gammaln(a + j).sum(axis=1)
        w = np.exp(logw - logw.max())
        members = np.flatnonzero(inverse.ravel() == g)
        pick = rng.choice(len(j), size=(n, members.size), p=w / w.sum())
        x = rng.standard_gamma(a + j[pick])
        out[:, members] = x / x.sum(axis=-1, keepdims=True)
    return out


def _log_evidence(alpha, groups, weights, c):
    """Sum over pairs of log p(confidence counts, votes | q ~ Dirichlet(alpha)), up to constants."""
    from scipy import special

    levels = alpha.size
    logc = np.log(np.maximum(c, 1e-300))
    log_b = special.gammaln(alpha).sum() - special.gammaln(alpha.sum())
    total = 0.0
    for row, w in zip(groups, weights, strict=True):
        cnt, votes = row[:levels], int(row[levels])
        j = _compositions(votes, levels)
        a = alpha + cnt + j
        logw = (-special.gammaln(j + 1).sum(axis=1) + j @ logc
                + special.gammaln(a).sum(axis=1) - special.gammaln(a.sum(axis=1)))
        total += w * (special.logsumexp(logw) - log_b)
    return total


#: sd of the normal hyperprior on log alpha (centred on the flat prior, alpha = 1) that keeps
#: the pooled prior near flat where few pairs carry confidence scores
POOLED_LOG_ALPHA_SD = 1.5


def _pooled_alpha(conf_counts, m, c):
    """Dirichlet parameters for the confident pairs: the mode of their marginal likelihood
    times a normal hyperprior on log alpha centred on the flat prior (penalized empirical Bayes)."""
    from scipy import optimize

    key = np.concatenate([conf_counts, np.asarray(m, dtype=float)[:, None]], axis=1)
    groups, weights = np.unique(key, axis=0, return_counts=True)
    levels = conf_counts.shape[1]

    def loss(log_alpha):
        penalty = 0.5 * np.sum((log_alpha / POOLED_LOG_ALPHA_SD) ** 2)
        return -_log_evidence(np.exp(log_alpha), groups, weights, c) + penalty

    res = optimize.minimize(loss, np.zeros(levels), method="L-BFGS-B", bounds=[(-7.0, 7.0)] * levels)
    return np.exp(res.x)


def _draws_in_pair_order(theta, votes, labels):
    """theta draws (a DataArray) as an array (chain, draw, pair), in the votes' pair order.

    A ``pair`` coordinate is matched by label to a pandas votes' index (any order); without
    one, or beside plain-array votes (whose pairs have no labels), the pairs go by position.
    """
    if "pair" not in theta.dims:
        raise ValueError(
            f"theta draws as a DataArray need dims (chain, draw, pair); got {theta.dims}."
        )
    if "pair" in theta.coords and isinstance(votes, pd.DataFrame | pd.Series):
        given, wanted = pd.Index(theta["pair"].values), pd.Index(labels)
        if given.has_duplicates:
            raise ValueError(
                f"theta's 'pair' labels repeat ({given[given.duplicated()].unique()[:5].tolist()}); "
                "give one column of draws per pair."
            )
        unknown = given.difference(wanted, sort=False)
        missing = wanted.difference(given, sort=False)
        if len(unknown) or len(missing):
            raise ValueError(
                f"theta's 'pair' labels differ from the votes' index: "
                f"{len(unknown)} not among the votes' pairs ({unknown[:5].tolist()}), "
                f"{len(missing)} of the votes' pairs without draws ({missing[:5].tolist()}). "
                "Label the draws with the votes' index (any order: they are matched by label), "
                "or drop the labels (theta.drop_vars('pair')) to pair them by position."
            )
        theta = theta.sel(pair=wanted.to_numpy())
    return theta.transpose("chain", "draw", "pair").values


class RankingPosterior(BasePosterior):
    """Posterior draws of theta and the percentile Q of machine rankings.

    A :class:`bayeval.core.posterior.BasePosterior` (``idata``, ``sampling``,
    ``convergence``, ``model_spec``...) without labels: there are no label
    draws, and :meth:`summary` summarizes the percentile of a ranking. Save a
    fit with ``bayeval.save(post, path)`` and read it back with
    ``bayeval.load(path)``.

    Parameters
    ----------
    idata : arviz.InferenceData
        Output of :meth:`HumanRanking.fit` (must hold ``posterior["theta"]``
        with dims ``(chain, draw, pair)``).
    counts : bayeval.rankings.percentile.VoteCounts
        Answers per pair.
    unanimous, used_confidence : ndarray of bool, shape (n_pairs,)
        Pair flags from the model.
    pair_labels : array-like, shape (n_pairs,)
        Pair coordinate.
    undecided : str
        How "unable to decide" answers entered the likelihood.

    Attributes
    ----------
    idata : arviz.InferenceData
    theta : xarray.DataArray, dims (chain, draw, pair)

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.rankings.model import RankingPosterior
    >>> votes = np.array([[1, 1, 1, -1], [0, 1, 0, 0], [1, 0, 1, 0]])
    >>> draws = np.random.default_rng(0).beta([4, 2, 2], [1, 4, 2], size=(2, 100, 3))
    >>> post = RankingPosterior.from_draws(draws, votes)
    >>> post.undecided_total
    1
    >>> post.percentile([1, 0, 1]).dims
    ()
    """

    def __init__(self, idata, *, counts, unanimous, used_confidence, pair_labels, undecided):
        if "posterior" not in idata.groups() or "theta" not in idata.posterior:
            raise ValueError(
                "idata must hold posterior['theta'] (dims chain, draw, pair); got groups "
                f"{list(idata.groups())}. Use HumanRanking.fit to create a RankingPosterior."
            )
        super().__init__(idata)
        self.counts = counts
        self.unanimous = np.asarray(unanimous, dtype=bool)
        self.used_confidence = np.asarray(used_confidence, dtype=bool)
        self.pair_labels = np.asarray(pair_labels)
        self.undecided = undecided
        self._cache = {}

    @classmethod
    def from_draws(
        cls,
        theta,
        votes,
        confidence=None,
        *,
        mapping=DEFAULT_MAPPING,
        undecided="exclude",
        use_confidence=True,
    ):
        """Wrap draws of theta obtained elsewhere (another sampler, a bootstrap).

        Parameters
        ----------
        theta : array-like or xarray.DataArray, shape (chain, draw, pair)
            Draws of the probability that the first item is picked. A DataArray's ``pair``
            coordinate is matched by label to a pandas ``votes``' index (any order; labels
            not among the votes' pairs, or pairs without draws, are an error); without that
            coordinate, or beside plain-array votes, the pairs go by position.
        votes, confidence : array-like
            The data behind the draws (for the answer counts), as in
            :meth:`HumanRanking.build`.
        mapping, undecided, use_confidence
            As in :class:`HumanRanking`.

        Returns
        -------
        RankingPosterior

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.rankings.model import RankingPosterior
        >>> votes = np.array([[1, 1, 1, -1], [0, 1, 0, 0]])
        >>> draws = np.random.default_rng(0).beta([4, 2], [1, 4], size=(2, 100, 2))
        >>> post = RankingPosterior.from_draws(draws, votes)
        >>> post.theta.dims, post.undecided_total
        (('chain', 'draw', 'pair'), 1)
        """
        import arviz as az

        model = HumanRanking(mapping=mapping, undecided=undecided, use_confidence=use_confidence)
        counts, unanimous, use_conf, labels = model._data(votes, confidence)
        if isinstance(theta, xr.DataArray):
            theta = _draws_in_pair_order(theta, votes, labels)
        th = np.asarray(theta, dtype=float)
        if th.ndim != 3 or th.shape[-1] != labels.size:
            raise ValueError(
                f"theta draws must have shape (chain, draw, pair={labels.size}); got {th.shape}."
            )
        idata = az.from_dict(
            posterior={"theta": th}, dims={"theta": ["pair"]}, coords={"pair": labels}
        )
        return cls(
            idata,
            counts=counts,
            unanimous=unanimous,
            used_confidence=use_conf,
            pair_labels=labels,
            undecided=undecided,
        )

    def select(self, pairs):
        """The posterior restricted to some pairs (e.g. one attribute's pairs).

        Parameters
        ----------
        pairs : array-like
            Pair labels, or a boolean mask over pairs.

        Returns
        -------
        RankingPosterior

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.rankings.model import RankingPosterior
        >>> votes = np.array([[1, 1, -1], [0, 1, 0], [1, 1, 0]])
        >>> post = RankingPosterior.from_draws(np.full((1, 20, 3), 0.7), votes)
        >>> sub = post.select([0, 2])
        >>> sub.theta.sizes["pair"], sub.undecided_total
        (2, 1)
        """
        sel = np.asarray(pairs)
        if sel.dtype == bool:
            if sel.shape != self.pair_labels.shape:
                raise ValueError(
                    f"a boolean pair mask must have length {self.pair_labels.size}; got "
                    f"shape {sel.shape}."
                )
            idx = np.flatnonzero(sel)
        else:
            idx = pd.Index(self.pair_labels).get_indexer(sel.ravel())
            if (idx < 0).any():
                raise ValueError(
                    f"unknown pair labels {sel.ravel()[idx < 0][:5].tolist()}; the posterior's "
                    "pairs are posterior.pair_labels."
                )
        if idx.size == 0:
            raise ValueError("select() needs at least one pair.")
        counts = VoteCounts(
            **{f.name: getattr(self.counts, f.name)[idx] for f in fields(VoteCounts)}
        )
        return RankingPosterior(
            self.idata.isel(pair=idx),
            counts=counts,
            unanimous=self.unanimous[idx],
            used_confidence=self.used_confidence[idx],
            pair_labels=self.pair_labels[idx],
            undecided=self.undecided,
        )

    @property
    def theta(self) -> xr.DataArray:
        """Posterior draws of theta, dims (chain, draw, pair)."""
        return self.idata.posterior["theta"].transpose("chain", "draw", "pair")

    @property
    def n_undecided(self) -> xr.DataArray:
        """Number of "unable to decide" answers per pair."""
        return xr.DataArray(self.counts.n_undecided, dims="pair", coords={"pair": self.pair_labels})

    @property
    def undecided_total(self) -> int:
        """Total number of "unable to decide" answers."""
        return int(self.counts.n_undecided.sum())

    def counts_frame(self) -> pd.DataFrame:
        """Per-pair answer counts and model flags.

        Returns
        -------
        pandas.DataFrame
            Columns n_first, n_second, n_undecided, n_missing, n_confidence,
            unanimous, used_confidence, n_confidence_unused.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.rankings.model import RankingPosterior
        >>> draws = np.full((1, 10, 2), 0.5)
        >>> post = RankingPosterior.from_draws(draws, np.array([[1, -1], [0, 1]]))
        >>> post.counts_frame()["n_undecided"].tolist()
        [1, 0]
        """
        c = self.counts
        return pd.DataFrame(
            {
                "n_first": c.n_first,
                "n_second": c.n_second,
                "n_undecided": c.n_undecided,
                "n_missing": c.n_missing,
                "n_confidence": c.n_confidence,
                "unanimous": self.unanimous,
                "used_confidence": self.used_confidence,
                "n_confidence_unused": np.where(self.used_confidence, 0, c.n_confidence),
            },
            index=pd.Index(self.pair_labels, name="pair"),
        )

    def _align_pairs(self, ranking):
        """A labelled ranking put in the posterior's pair order (labels matched, any order)."""
        given = pd.Index(ranking["pair"].values)
        wanted = pd.Index(self.pair_labels)
        if given.has_duplicates:
            repeated = given[given.duplicated()].unique()[:5].tolist()
            raise ValueError(
                f"ranking's 'pair' labels repeat ({repeated}); give one choice per pair."
            )
        missing = wanted.difference(given, sort=False)
        extra = given.difference(wanted, sort=False)
        if len(missing) or len(extra):
            def some(labels):
                return ", ".join(map(repr, labels[:5].tolist())) + (", ..." if len(labels) > 5 else "")

            parts = []
            if len(missing):
                parts.append(f"missing {len(missing)} of its {wanted.size} pairs ({some(missing)})")
            if len(extra):
                parts.append(f"{len(extra)} unknown label(s) ({some(extra)})")
            raise ValueError(
                f"ranking's 'pair' labels differ from the posterior's: {'; '.join(parts)}. Label the "
                "ranking with posterior.pair_labels (any order: it is matched by label), or pass a "
                "plain array in that order."
            )
        return ranking.sel(pair=wanted.to_numpy())

    def _ranking_da(self, ranking):
        if isinstance(ranking, dict):
            if not ranking:
                raise ValueError("ranking dict is empty; pass {name: ranking, ...}.")
            names = list(ranking)
            arrs = [np.asarray(self._ranking_da(ranking[k]).transpose(..., "pair")) for k in names]
            shapes = {a.shape for a in arrs}
            if len(shapes) != 1 or len(next(iter(shapes))) != 1:
                raise ValueError(
                    "each ranking in the dict must be 1-D over pairs; got shapes "
                    f"{[a.shape for a in arrs]}."
                )
            return xr.DataArray(
                np.stack(arrs),
                dims=("system", "pair"),
                coords={"system": names, "pair": self.pair_labels},
            )
        if isinstance(ranking, xr.DataArray):
            if "pair" not in ranking.dims:
                raise ValueError(
                    f"a DataArray ranking needs a 'pair' dimension; got dims {ranking.dims}."
                )
            if "pair" in ranking.coords:
                ranking = self._align_pairs(ranking)
            elif ranking.sizes["pair"] != self.pair_labels.size:
                raise ValueError(
                    f"ranking has {ranking.sizes['pair']} pairs; the posterior has "
                    f"{self.pair_labels.size}."
                )
            return ranking.assign_coords(pair=self.pair_labels)
        if isinstance(ranking, pd.Series):
            ranking = xr.DataArray.from_series(ranking.rename_axis("pair"))
            return self._ranking_da(ranking)
        arr = np.asarray(ranking)
        if arr.ndim == 0 or arr.shape[-1] != self.pair_labels.size:
            raise ValueError(
                f"ranking must have shape (..., n_pairs={self.pair_labels.size}); got {arr.shape}."
            )
        if arr.ndim > 2:
            raise ValueError(
                "a plain-array ranking must be 1-D (pair,) or 2-D (ranking, pair); for more "
                "axes pass an xarray.DataArray with named dims."
            )
        dims = ("pair",) if arr.ndim == 1 else ("ranking", "pair")
        return xr.DataArray(arr, dims=dims, coords={"pair": self.pair_labels})

    @property
    def theta_predictive(self) -> xr.DataArray:
        """Probability that a new human picks each pair's first item, predicted from the votes.

        The posterior mean of theta (dims ``pair``): a new human's choice on pair
        ``i`` is Bernoulli with this probability once theta's uncertainty is
        integrated out. The human rankings that :meth:`percentile` compares a
        machine's ranking with are drawn pair by pair with these probabilities.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.rankings.model import RankingPosterior
        >>> draws = np.stack([np.full((1, 4), 0.6), np.full((1, 4), 0.8)], axis=1)
        >>> post = RankingPosterior.from_draws(draws, np.array([[1, 1, 0], [0, 1, 1], [1, 1, 1], [0, 0, 1]]))
        >>> post.theta_predictive.round(3).values.tolist()
        [0.7, 0.7, 0.7, 0.7]
        """
        return self.theta.mean(("chain", "draw")).rename("theta_predictive")

    def _percentile(self, ranking, ties, tol, per_draw):
        da = self._ranking_da(ranking)
        values = np.asarray(da)
        key = (  # the bytes alone are not the array: the same bytes read as another dtype or shape differ
            da.dims,
            values.shape,
            values.dtype.str,
            values.tobytes(),
            tuple((k, tuple(np.asarray(v).tolist())) for k, v in da.coords.items() if k != "pair"),
            ties,
            float(tol),
            bool(per_draw),
        )
        if key not in self._cache:

            def core(th, r):
                res = ranking_percentile(th, r, ties=ties, tol=tol, return_bound=True)
                return np.stack(np.broadcast_arrays(res.q, res.lower, res.upper, res.bound), -1)

            out = xr.apply_ufunc(
                core,
                self.theta if per_draw else self.theta_predictive,
                da,
                input_core_dims=[["pair"], ["pair"]],
                output_core_dims=[["stat"]],
            )
            ds = out.assign_coords(stat=["q", "lower", "upper", "bound"]).to_dataset("stat")
            ds.attrs.update(ties=ties, tol=float(tol))
            self._cache[key] = ds
        return self._cache[key]

    def percentile(self, ranking, *, ties="strict", tol=1e-3, return_bound=False, per_draw=False):
        """Percentile Q of a machine ranking among the human rankings predicted from the votes.

        ``Q`` is the probability that a new human's ranking is more probable than
        this one, the human's choices drawn with :attr:`theta_predictive` (the
        posterior predictive: theta's uncertainty integrated out). ``Q = 0`` for
        the most probable human ranking; for a ranking drawn like a human's, ``Q``
        is close to uniform on (0, 1) when the model holds, so ``1 - Q`` reads
        as a p-value of "this ranking is a human's".

        Parameters
        ----------
        ranking : array-like, dict, pandas.Series or xarray.DataArray
            ``1`` = first item picked, per pair. A 2-D array adds a ``ranking``
            dimension; a dict ``{name: ranking}`` adds a ``system`` dimension; a
            DataArray with a ``pair`` dimension keeps its other dimensions. A
            Series, or a DataArray with ``pair`` labels, is matched to the
            posterior's pairs by label, in any order.
        ties : {"strict", "inclusive"}, default "strict"
            See :func:`bayeval.rankings.percentile.ranking_percentile`.
        tol : float, default 1e-3
            Numerical accuracy (the cost grows like 1/tol).
        return_bound : bool, default False
            Return a Dataset with ``q``, ``lower``, ``upper`` and ``bound``.
        per_draw : bool, default False
            Instead, Q under each posterior draw of theta (dims ``chain``, ``draw``
            first). Their spread shows how much Q depends on theta, but they are
            not a credible interval of the ranking's percentile: a ranking that is
            not among the votes disagrees with a draw of theta more than with the
            true theta, so for a genuine human's ranking these values pile up near
            1 as the pairs grow (300 pairs, 5 votes each: the per-draw Q
            of held-out human rankings averaged 1.00; ``benchmarks/results/ranking_q.md``).

        Returns
        -------
        xarray.DataArray or xarray.Dataset
            The ranking's own dims (``chain``, ``draw`` first with ``per_draw``).

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.rankings.model import RankingPosterior
        >>> votes = np.array([[1, 1, 0], [0, 0, 1], [1, 1, 1]])
        >>> draws = np.random.default_rng(1).beta([3, 2, 5], [2, 3, 1], size=(2, 50, 3))
        >>> post = RankingPosterior.from_draws(draws, votes)
        >>> post.percentile({"a": [1, 0, 1], "b": [0, 1, 0]}).dims
        ('system',)
        >>> post.percentile([1, 0, 1], per_draw=True).dims
        ('chain', 'draw')
        """
        ties = V.check_choice(ties, "ties", ("strict", "inclusive"))
        tol = V.as_positive_number(tol, "tol", upper=0.5)
        if not isinstance(per_draw, bool | np.bool_):
            raise TypeError(f"per_draw must be True or False; got {per_draw!r}.")
        ds = self._percentile(ranking, ties, tol, per_draw)
        if return_bound:
            return ds
        q = ds["q"].rename("Q")
        q.attrs.update(ds.attrs)
        return q

    def indistinguishable(self, ranking, *, epsilon=0.05, ties="strict", tol=1e-3):
        """Whether a ranking is indistinguishable from humans at level epsilon.

        True when ``Q <= 1 - epsilon`` (:meth:`percentile`): the ranking lies among
        the most probable ``1 - epsilon`` of the human rankings predicted from the
        votes. When the model holds, a human's own ranking is called
        distinguishable with probability at most about ``epsilon``.

        Parameters
        ----------
        ranking : array-like, dict, pandas.Series or xarray.DataArray
            As in :meth:`percentile`.
        epsilon : float, default 0.05
            Level (the paper's Table 1 uses ``epsilon = 0.1``).
        ties, tol
            As in :meth:`percentile`.

        Returns
        -------
        bool or xarray.DataArray
            A bool for a single ranking, else one value per ranking (1.0 / 0.0,
            NaN where Q is undefined).

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.rankings.model import RankingPosterior
        >>> votes = np.array([[1, 1, 1], [0, 0, 1], [1, 0, 1]])
        >>> draws = np.random.default_rng(2).beta([6, 1, 2], [1, 4, 2], size=(2, 200, 3))
        >>> post = RankingPosterior.from_draws(draws, votes)
        >>> post.indistinguishable([1, 0, 1], epsilon=0.1)
        True
        """
        epsilon = V.as_positive_number(epsilon, "epsilon", upper=1.0)
        q = self.percentile(ranking, ties=ties, tol=tol)
        out = (q <= 1 - epsilon).where(np.isfinite(q))
        return bool(out) if out.ndim == 0 else out.rename("indistinguishable")

    def summary(self, ranking, *, epsilon=0.05, ties="strict", tol=1e-3):
        """Percentile Q of rankings and the verdict, one row per ranking.

        Parameters
        ----------
        ranking : array-like, dict, pandas.Series or xarray.DataArray
            As in :meth:`percentile`.
        epsilon : float, default 0.05
            Level of the verdict ``indistinguishable = Q <= 1 - epsilon``.
        ties, tol
            As in :meth:`percentile`.

        Returns
        -------
        pandas.DataFrame
            Columns ``Q`` (the percentile among the human rankings predicted from
            the votes, :meth:`percentile`), ``Q_lower`` / ``Q_upper`` (its numerical
            bracket, width at most ``tol``), ``p_value`` (``1 - Q``: the predicted
            share of human rankings at most as probable as this one),
            ``indistinguishable`` (1.0 when ``Q <= 1 - epsilon``, else 0.0),
            ``decided`` (False where the numerical bracket straddles ``1 - epsilon``;
            a smaller ``tol`` decides it) and ``n_undecided`` (total "unable to decide" answers in
            the data). ``attrs["undefined"]`` maps each row where Q is undefined
            (NaN) to 1.0. There is no interval of Q: the uncertainty about theta is
            inside Q (the prediction averages over it); :meth:`percentile` with
            ``per_draw=True`` says why the spread of per-draw values is not one.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.rankings.model import RankingPosterior
        >>> votes = np.array([[1, 1, -1], [0, 0, 1], [1, 0, 1]])
        >>> draws = np.random.default_rng(3).beta([5, 1, 2], [1, 3, 2], size=(2, 100, 3))
        >>> post = RankingPosterior.from_draws(draws, votes)
        >>> list(post.summary([1, 0, 1]).columns)[:4]
        ['Q', 'Q_lower', 'Q_upper', 'p_value']
        """
        epsilon = V.as_positive_number(epsilon, "epsilon", upper=1.0)
        ds = self.percentile(ranking, ties=ties, tol=tol, return_bound=True)
        thr = 1 - epsilon
        defined = np.isfinite(ds["q"])
        stats = xr.Dataset({
            "Q": ds["q"],
            "Q_lower": ds["lower"],
            "Q_upper": ds["upper"],
            "p_value": 1 - ds["q"],
            "indistinguishable": (ds["q"] <= thr).where(defined),
            "decided": (ds["upper"] <= thr) | (ds["lower"] > thr),
        })
        if stats["Q"].ndim == 0:
            df = pd.DataFrame({k: [v.item()] for k, v in stats.items()}, index=["Q"])
        else:
            df = stats.to_dataframe()
        df["n_undecided"] = self.undecided_total
        undefined = {key: 1.0 for key in df.index[~np.isfinite(df["Q"].to_numpy(dtype=float))]}
        df.attrs.update(epsilon=epsilon, ties=ties, undefined=undefined, reading="posterior predictive")
        return df

    def __repr__(self) -> str:
        return (
            f"RankingPosterior(pairs={self.pair_labels.size}, chains={self.n_chains}, "
            f"draws={self.n_draws}, confidence_pairs={int(self.used_confidence.sum())}, "
            f"undecided_answers={self.undecided_total})"
        )
