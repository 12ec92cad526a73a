"""Defaults shared by every part of bayeval, defined once."""

#: Probability mass of every credible interval bayeval prints or returns by default
#: (summaries, reports, plots, the CLI): a 90% highest-density interval.
HDI_PROB = 0.9


def hdi_columns(hdi_prob: float) -> tuple[str, str]:
    """Names of the lower and upper HDI columns of every summary table, e.g.
    ``("hdi_5%", "hdi_95%")`` for ``hdi_prob=0.9`` (ArviZ's convention)."""
    return f"hdi_{100 * (1 - hdi_prob) / 2:g}%", f"hdi_{100 * (1 + hdi_prob) / 2:g}%"


#: Seed of :func:`tie_order`'s fixed permutation (one order for the whole package).
TIE_ORDER_SEED = 20240531


def tie_order(n: int):
    """A fixed pseudo-random rank per position, for breaking ties between equal scores.

    Ties broken by position would let the order of the items in the user's file decide
    which of a group of equal scores land on the better side of a cut (a stratum vetted
    at a higher rate, ACIS's top-K domain): in a file sorted by label, the tied group's
    positives, so that what is learnt at that score sees a biased sample of it. A fixed
    permutation keeps such cuts a function of the scores (the same every call) and
    independent of how the file is sorted; without ties it changes nothing.

    >>> tie_order(5).tolist() == tie_order(5).tolist()  # the same every call
    True
    """
    import numpy as np

    return np.random.default_rng(TIE_ORDER_SEED).permutation(n)
