"""Defaults shared by every part of bayeval, defined once."""

#: Probability mass of every credible interval bayeval prints or returns by default
#: (summaries, reports, plots, the CLI): a 90% highest-density interval.
HDI_PROB = 0.9


def hdi_columns(hdi_prob: float) -> tuple[str, str]:
    """Names of the lower and upper HDI columns of every summary table, e.g.
    ``("hdi_5%", "hdi_95%")`` for ``hdi_prob=0.9`` (ArviZ's convention)."""
    return f"hdi_{100 * (1 - hdi_prob) / 2:g}%", f"hdi_{100 * (1 + hdi_prob) / 2:g}%"
