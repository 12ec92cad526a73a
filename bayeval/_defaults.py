"""Defaults shared by every part of bayeval, defined once."""

#: Probability mass of every credible interval bayeval prints or returns by default
#: (summaries, reports, plots, the CLI): a 90% highest-density interval.
HDI_PROB = 0.9
