"""Human pairwise rankings: the percentile of a machine ranking among people's, from the
closed-form estimate (:mod:`.percentile`) or the Bayesian model (:mod:`.model`), and their
plots (:mod:`.plots`)."""

from .model import HumanRanking, PairwiseVotes, RankingPosterior
from .percentile import PercentileResult, ThetaEstimate, count_votes, estimate_theta, ranking_percentile

__all__ = ["HumanRanking", "PairwiseVotes", "PercentileResult", "RankingPosterior", "ThetaEstimate",
           "count_votes", "estimate_theta", "ranking_percentile"]
