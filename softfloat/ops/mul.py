"""Correctly rounded multiplication."""

from __future__ import annotations

from ._common import apply

__all__ = ["mul"]


def _mul_kernel(fmt, policy, x, y):
    # exact: two significands of at most 24 bits make at most 48, and the exponent range
    # of an 8-bit-exponent format squared stays inside float64's (check_supported);
    # 0 * inf: float64 makes the NaN
    return x * y, None, None, None


def mul(a, b, fmt, rounding="nearest_even", *, tininess="after", subnormals=True,
        denormals_are_zero=False, saturate=False, rng=None, return_flags=False):
    """a * b, correctly rounded into ``fmt``; keyword arguments as for :func:`~softfloat.add`.

    0 * inf is invalid; the sign of a zero or infinite product is the exclusive or of the
    operands' signs.

    Examples
    --------
    >>> import softfloat as sf
    >>> g16, g32 = sf.encode(2.0**-13, "fp16"), sf.encode(2.0**-13, "fp32")   # small gradients
    >>> int(sf.mul(g16, g16, "fp16")), float(sf.decode(sf.mul(g32, g32, "fp32"), "fp32"))
    (0, 1.4901161193847656e-08)
    """
    return apply("mul", _mul_kernel, fmt, [("a", a), ("b", b)], rounding, tininess=tininess,
                 subnormals=subnormals, denormals_are_zero=denormals_are_zero, saturate=saturate,
                 rng=rng, return_flags=return_flags)
