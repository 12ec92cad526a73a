"""The probit (inverse of the standard normal CDF) as a PyTensor op compiled to C.

PyTensor's ``erfinv`` has no C implementation: in a model compiled to C it runs as a
Python call on every log-density and gradient evaluation, about a fifth of the time of
an :class:`~bayeval.annotators.AnnotatorError` gradient. :func:`probit` computes the same
function in C (and through SciPy's, JAX's and Numba's ``ndtri`` on the other backends).

The C code solves ``log Phi(x) = log p`` by Newton's method on the lower half
(``p <= 1/2``; the upper half by symmetry, ``1 - p`` being exact there). ``log Phi`` is
concave and increasing, so Newton's iterates, started left of the root at
``-sqrt(-2 log p)`` (where ``Phi`` is below ``p``), rise monotonically to it.

Examples
--------
>>> import numpy as np
>>> import pytensor.tensor as pt
>>> from bayeval.annotators._probit import probit
>>> p = pt.dvector("p")
>>> np.round(probit(p).eval({p: [0.025, 0.5, 0.975]}), 4)
array([-1.96,  0.  ,  1.96])
"""

from __future__ import annotations

import numpy as np
from pytensor.scalar.basic import UnaryScalarOp, complex_types, exp, upgrade_to_float_no_complex
from pytensor.tensor.elemwise import Elemwise
from scipy import special

_C_SUPPORT = r"""
#ifndef BAYEVAL_PROBIT_DEFINED
#define BAYEVAL_PROBIT_DEFINED
/* x with Phi(x) = p for 1/4 <= p <= 3/4: Halley's method on erf(x / sqrt 2) - (2p - 1)
   (2p - 1 is exact there), which keeps the relative precision of a small x */
static double bayeval_probit_central(double p)
{
    const double inv_sqrt2 = 0.70710678118654752440;
    const double sqrt_2_over_pi = 0.79788456080286535588;
    double y = 2.0 * p - 1.0;
    double x = 2.5066282746310002 * y * 0.5;  /* the tangent at 0: x = sqrt(2 pi) (p - 1/2) */
    int i;
    for (i = 0; i < 50; i++) {
        double h = erf(x * inv_sqrt2) - y;
        double dh = sqrt_2_over_pi * exp(-0.5 * x * x);
        double dx = -2.0 * h / (2.0 * dh + x * h);
        x += dx;
        if (fabs(dx) <= 1e-12 * fabs(x) || h == 0.0)
            break;
    }
    return x;
}

/* x with Phi(x) = p for 0 < p < 1/4: Halley's method on log Phi(x) - log p */
static double bayeval_probit_lower(double p)
{
    const double inv_sqrt2 = 0.70710678118654752440;
    const double inv_sqrt2pi = 0.39894228040143267794;
    /* start from the tail's leading terms, log p ~ -x^2/2 - log(-x) - log(2 pi)/2 */
    double t = -2.0 * log(p);
    double x = -sqrt(fmax(t - log(t) - 1.8378770664093453, 0.25));
    int i;
    for (i = 0; i < 50; i++) {
        double cdf = 0.5 * erfc(-x * inv_sqrt2);
        double pdf = inv_sqrt2pi * exp(-0.5 * x * x);
        double g, r, dx;
        if (!(cdf > 0.0) || !(pdf > 0.0))
            break;  /* below the smallest double: keep the last iterate */
        g = log(cdf / p);
        r = pdf / cdf;
        dx = -2.0 * g / (2.0 * r + g * (x + r));
        x += dx;
        if (fabs(dx) <= 1e-12 * fabs(x))
            break;
    }
    return x;
}

static double bayeval_probit(double p)
{
    if (isnan(p) || p < 0.0 || p > 1.0)
        return NAN;
    if (p == 0.0)
        return -INFINITY;
    if (p == 1.0)
        return INFINITY;
    if (p >= 0.25 && p <= 0.75)
        return bayeval_probit_central(p);
    if (p > 0.75)
        return -bayeval_probit_lower(1.0 - p);  /* 1 - p is exact for p in [1/2, 1] */
    return bayeval_probit_lower(p);
}
#endif
"""


class Probit(UnaryScalarOp):
    """``x`` with ``Phi(x) = p``: SciPy's ``ndtri`` in Python, Newton's method in C."""

    nfunc_spec = ("scipy.special.ndtri", 1, 1)

    def impl(self, p):
        return special.ndtri(p)

    def L_op(self, inputs, outputs, grads):
        (p,) = inputs
        (x,) = outputs
        (gz,) = grads
        if p.type in complex_types:
            raise NotImplementedError("probit of a complex number")
        # d probit(p) / dp = 1 / phi(probit(p)) = sqrt(2 pi) exp(x^2 / 2)
        cst = np.asarray(np.sqrt(2 * np.pi), dtype=x.type.dtype)
        return (gz * cst * exp(x * x / 2),)

    def c_headers(self, **kwargs):
        return ["<math.h>"]

    def c_support_code(self, **kwargs):
        return _C_SUPPORT

    def c_code(self, node, name, inputs, outputs, sub):
        (p,) = inputs
        (x,) = outputs
        if node.inputs[0].type in complex_types or node.outputs[0].type.dtype not in ("float32", "float64"):
            raise NotImplementedError("probit in C takes real numbers")
        return f"{x} = bayeval_probit((double){p});"

    def c_code_cache_version(self):
        return (5,)


_scalar_probit = Probit(upgrade_to_float_no_complex, name="probit")
#: the elementwise probit of a tensor
probit = Elemwise(_scalar_probit, name="probit")
