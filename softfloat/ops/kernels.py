"""The operations' kernels and their hand-off to the rounding point, published for the
layers above (softfloat.accumulate, the array layer) that compose exact arithmetic of
their own and round it once; the operations' private modules are not for them.

The contract
------------
``<op>_kernel(fmt, attrs, *xs, ws=None) -> Exact``
    One block's exact results from the operands' exact float64 values ``xs`` (arrays of
    one shape).  ``fmt`` must hold every operand: it picks the kernel's float64 path
    (a format of at most 24-bit precision and 8 exponent bits takes the exact narrow path,
    see ``is_narrow``; fp64 takes the path valid for any float64 operands).  ``attrs`` is
    a validated :class:`softfloat.RoundingAttributes` (the sign of an exact zero sum depends on its
    rounding).  ``ws`` is a ``softfloat._workspace.Workspace`` whose buffers the result may
    live in (used up before the next call on that workspace), or None.
``Exact``
    The unevaluated pair ``hi + lo`` (``hi`` the float64 nearest the exact result,
    ``|lo| <= ulp(hi)/2``; ``lo`` None where ``hi`` is exact, of exact sign but nearly exact
    size where ``lo_exact`` is False), the ``invalid`` and ``divide_by_zero`` masks float64
    does not show, and the ``hazard`` lanes float64 cannot be trusted on.  Wrap a value
    that is exact already as ``Exact(hi)`` (with ``exact=None`` below: it has no hazards).
``<op>_exact(attrs, *floats) -> (negative, magnitude)``
    One hazard lane's exact result from the operands as Python floats (``magnitude`` a
    Fraction), for ``round_block``.
``round_block(res, exact, xs, Target(fmt, attrs, want), rand, out, ws) -> FlagMasks | None``
    THE hand-off to the rounding point: rounds ``res`` once into bit patterns of ``fmt``,
    written to ``out`` (``fmt.storage_dtype``, res's size), settling its hazard lanes with
    ``exact`` on ``xs``; ``rand`` holds each lane's 64 random bits (stochastic rounding;
    else None); ``ws`` a Workspace of at least res's size.  Returns the FlagMasks of the
    rounding (None unless ``want``).  NaN lanes come out as the rounding point made them:
    the caller applies its NaN attrs, and ORs in ``res.invalid`` / ``res.divide_by_zero``.
``is_narrow(fmt)``
    True for fp32 and narrower formats: every product of two values is exact in float64
    and no intermediate leaves float64's range, so a kernel given such a ``fmt`` marks no
    hazard and float64 products of its values are exact.
``sums_are_exact(fmt)``
    True where every sum of two values of ``fmt`` is exact in float64 (fp16, FP8, FP6,
    FP4): a sum of two such values is inexact in fmt iff its rounding differs from the
    float64 sum.
``safe_magnitude(x)``
    Where Dekker's product of x is exact in float64 (the wide formats' hazard test).
``two_sum(a, b, ws=None) -> (s, e)``, ``round_to_odd(hi, lo, ws=None)``
    Knuth's TwoSum of float64 arrays (s = fl(a + b), s + e exactly a + b; e = 0 where s is
    not finite) and the float64 rounding to odd of hi + lo (|lo| <= ulp(hi)/2): with a
    Workspace ``ws`` their results live in its buffers, until its next use.
``addition_flags(a, b, r, symmetric=False) -> (FlagMasks, swamped)``
    The IEEE flags of ``r = a + b`` rounded to nearest by numpy in a's dtype, read from the
    operands and the result (for the native shortcuts of sums).
``default_nan(fmt, attrs=None)``
    The pattern an invalid operation gives on ``attrs.platform`` (None: the default
    platform): its sign and payload in IEEE formats, the one NaN of fn/fnuz formats, +0
    in FP6/FP4 (see :mod:`softfloat.platforms`).
``nan_mask(b, fmt)``
    Which patterns (an array of the storage dtype, checked already) are NaNs, by their
    bits alone: the hot paths' test (``codec.is_nan`` decomposes and checks first).
``small_arithmetic(ufunc, fmt, patterns, attrs, want)``
    The result of ``softfloat.add/sub/mul/div/sqrt`` (np.add, ... np.sqrt) of checked
    patterns (ndarrays of ``fmt.storage_dtype``, a Format, validated attributes) with
    ``return_flags=want`` where the operations' own shortcuts answer it (the small-array
    and one-element paths of ``softfloat.ops._driver.apply``, taken first there too),
    or None: then the public operation.  For the array layer, whose operands and
    attributes are checked already: the shortcut without the public calls' checks.
"""

from __future__ import annotations

from ._eft import is_narrow, round_to_odd, safe_magnitude, sums_are_exact, two_sum
from ._kernel import Exact
from ._nan import default_nan, nan_mask
from ._round_block import Target, round_block
from .add import ADD, SUB, add_exact, add_kernel, addition_flags
from .div import DIV, div_exact, div_kernel
from .fma import fma_exact, fma_kernel
from .mul import MUL, mul_exact, mul_kernel
from ._driver import _small_input
from .._fpenv import require_subnormals
from ..rounding import Rounding
from .sqrt import SQRT

__all__ = [
    "Exact", "Target", "add_exact", "add_kernel", "addition_flags", "default_nan", "div_exact", "div_kernel",
    "fma_exact", "fma_kernel", "is_narrow", "mul_exact", "mul_kernel", "nan_mask", "round_block",
    "round_to_odd", "safe_magnitude", "small_arithmetic", "sums_are_exact", "two_sum",
]

_OPERATIONS = {ADD.native: ADD, SUB.native: SUB, MUL.native: MUL, DIV.native: DIV, SQRT.native: SQRT}
_NAMES = ("a", "b")


def small_arithmetic(ufunc, fmt, patterns, attrs, want: bool):
    """See the module docstring: apply()'s shortcuts (``softfloat.ops._driver``) for the
    operation of ``ufunc``, entered with the checks the public call would make already
    made by the caller -- save the CPU's subnormal mode, checked here as there -- or
    None (declined; stochastic rounding draws from the public call's generator)."""
    operation = _OPERATIONS.get(ufunc)
    if operation is None or attrs.rounding is Rounding.STOCHASTIC:
        return None
    require_subnormals()
    return _small_input(operation, fmt, list(zip(_NAMES, patterns)), attrs, False, want)
