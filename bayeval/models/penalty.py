"""Small-sample penalties of a calibration curve's coefficients, and when they apply.

A logistic curve fitted to a few vetted labels that a threshold on the score separates
(every vetted positive above every vetted negative) has a likelihood that rises without
end as the curve steepens: only the prior holds its slope, and a steep curve says that
every item above the boundary is positive. :func:`separation` tells when the labels are
separable; :func:`jeffreys_potential` is Jeffreys' prior of the curve's coefficients
(Firth's penalty), which :class:`~bayeval.models.Calibration` and
:class:`~bayeval.models.joint.JointCalibration` add with ``penalty="jeffreys"``, or with
``penalty="auto"`` where the vetted labels are separable.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

__all__ = ["JEFFREYS_RIDGE", "jeffreys_potential", "separation"]

#: added to the Fisher information's diagonal before its determinant (two copies of one
#: classifier make it singular; the penalty's gradient is then that of the other directions)
JEFFREYS_RIDGE = 1e-6


def separation(z, labels) -> str | None:
    """Whether the vetted labels are separable by the classifiers' features, and how.

    ``z`` ``(n_vetted, K)``: each vetted item's feature under each classifier (the logit of
    a probability, as :class:`JointCalibration` maps it); ``labels``: their 1/0 labels.
    Returns the name of the first classifier column (``"0"``, ``"1"``, ...) on which a
    threshold puts every vetted positive on one side and every vetted negative on the
    other (ties at the threshold allowed, not all the items tied: quasi-complete
    separation), ``"linear"`` where no single feature
    does but a line ``c_0 + sum_k c_k z_k = 0`` separates them strictly (a linear program
    finds one), and None when the labels are not separable or hold only one class. On a
    separable set the unpenalized likelihood of the linear curve rises without end along
    the separating direction: the coefficients run away and only the prior holds them.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.models.penalty import separation
    >>> y = np.array([0, 0, 1, 1])
    >>> separation(np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.6, 0.6]]), y)  # neither column alone
    'linear'
    >>> separation(np.array([[-3.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [1.5, 0.0]]), y)
    '0'
    >>> separation(np.array([[0.0, 0.0], [3.0, 3.0], [1.0, 1.0], [2.0, 2.0]]), y) is None
    True
    """
    from scipy.optimize import linprog

    z = np.asarray(z, dtype=np.float64)
    z = z.reshape(z.shape[0], -1) if z.ndim else z.reshape(1, 1)
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    if y.size != z.shape[0]:
        raise ValueError(f"separation(z, labels): `labels` must have one entry per row of `z` ({z.shape[0]} "
                         f"rows), got {y.size}. Pass the vetted items' features and their labels.")
    if not np.all(np.isin(y, (0.0, 1.0))):
        bad = sorted(set(y[~np.isin(y, (0.0, 1.0))].tolist()))[:5]
        raise ValueError(f"separation(z, labels): `labels` must be 1 or 0, got {bad}. "
                         "Pass the vetted items only (no NaN for unvetted ones).")
    if not np.all(np.isfinite(z)):
        raise ValueError("separation(z, labels): `z` holds NaN or infinite features; pass finite features "
                         "(e.g. the logits JointCalibration.features gives, which are clipped).")
    pos, neg = z[y == 1], z[y == 0]
    if not len(pos) or not len(neg):
        return None
    for k in range(z.shape[1]):
        lo_p, hi_p, lo_n, hi_n = pos[:, k].min(), pos[:, k].max(), neg[:, k].min(), neg[:, k].max()
        if (lo_p >= hi_n and hi_p > lo_n) or (hi_p <= lo_n and lo_p < hi_n):  # a constant feature does not
            return str(k)
    x = np.column_stack([np.ones(len(y)), z]) / max(1.0, float(np.abs(z).max()))
    sign = np.where(y == 1, 1.0, -1.0)
    res = linprog(np.zeros(x.shape[1]), A_ub=-sign[:, None] * x, b_ub=-np.ones(len(y)),
                  bounds=[(None, None)] * x.shape[1], method="highs")
    return "linear" if res.status == 0 else None


def jeffreys_potential(name: str, per_col, eta):
    """``pm.Potential``: half the log-determinant of the Fisher information of the linear
    predictor's coefficients (an intercept and one per column of ``per_col``) over the vetted
    items, ``per_col`` ``(n, K)`` at the log-odds ``eta`` ``(n,)``: Jeffreys' prior of those
    coefficients (Firth's bias-reducing penalty). Call it inside a model's context.

    On vetted labels that a threshold on the score separates, the likelihood of a logistic
    curve rises without end as its slope grows, so only the prior holds the slope; this term
    falls as the curve steepens (every vetted item's ``p (1 - p)`` goes to 0) and keeps the
    slope where the labels can support it.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from bayeval.models.penalty import jeffreys_potential
    >>> x = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    >>> with pm.Model() as m:
    ...     b = pm.Normal("b", 0.0, 3.0)
    ...     _ = jeffreys_potential("jeffreys", x, b * x[:, 0])
    >>> penalty = m.compile_logp(vars=m.potentials)
    >>> bool(penalty({"b": 1.0}) > penalty({"b": 5.0}))  # a steeper curve is penalized
    True
    """
    x = pt.concatenate([pt.ones((per_col.shape[0], 1)), per_col], axis=1)
    p = pt.sigmoid(eta)
    info = (x * (p * (1.0 - p))[:, None]).T @ x
    info = info + JEFFREYS_RIDGE * pt.eye(info.shape[0])
    # the log-determinant from the Cholesky factor (the information is positive definite):
    # log(det(...)), and pt.linalg.slogdet, which PyTensor writes as log(abs(det(...))), make its
    # rewrite into an SLogDet fail, with a traceback logged, on the graph vectorized over draws
    chol = pt.linalg.cholesky(info, lower=True, on_error="nan")
    return pm.Potential(name, pt.log(pt.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1))
