"""Small example evaluation sets bundled with bayeval."""

from __future__ import annotations

from importlib import resources

import pandas as pd

from .._tables import read_table
from ..core.data import EvalData

__all__ = ["load_breast_cancer_scores"]


def load_breast_cancer_scores(*, as_frame: bool = False) -> EvalData | pd.DataFrame:
    """A logistic regression's cross-validated scores on the breast-cancer data.

    569 tumours from scikit-learn's bundled Wisconsin breast-cancer set; positive =
    malignant (37%). 40 items are vetted (``label``); ``true_label`` holds the truth for
    all items so that estimates can be checked (a real evaluation would not have it).
    The script that made it is ``bayeval/datasets/_make_breast_cancer.py``.

    Parameters
    ----------
    as_frame : bool, default False
        Return the raw pandas DataFrame instead of an :class:`EvalData`.

    Returns
    -------
    EvalData or pandas.DataFrame

    Examples
    --------
    >>> from bayeval.datasets import load_breast_cancer_scores
    >>> data = load_breast_cancer_scores()
    >>> data.n_items, data.n_vetted
    (569, 40)
    """
    with resources.as_file(resources.files(__package__).joinpath("breast_cancer.csv")) as path:
        df = read_table(path).frame
    if as_frame:
        return df
    return EvalData.from_frame(df, score="score", label="label", prediction="prediction", item_id="item_id")
