"""fp16 sums and differences of large arrays, block by block, in round to nearest even
with flags: the exact float64 sum, numpy's float16 cast, the flags from the result; the
directed modes and round to odd by :mod:`._directed16` (its own proof).

The operations' general path rounds a block's exact float64 sums through the codec's
float64 -> fp16 re-bias kernel.  numpy's float64 -> float16 cast does that rounding in
one pass, faster on data over fp16's whole range (benchmarks/bench_native_ops.py).

Why the bits and flags are the general path's
---------------------------------------------
Condition (:func:`applies`, here with round to nearest even; toward zero, upward,
downward and odd go to :mod:`._directed16`): fp16, gradual underflow, no saturation, no DAZ, add
or sub; per block (:func:`run` declines the block otherwise): every exact sum ``r`` finite, i.e. the operands finite (fp16 sums cannot overflow
float64, so a non-finite ``r`` means an infinite or NaN operand: the general path's NaN
and special rules).

* ``r = x + y`` (or ``x - y``) is exact: fp16 values are multiples of 2**-24 below
  2**16, so a sum has at most 40 significant bits, far inside float64's 53 bits and
  exponent range.  Its sign is IEEE 754's in round to nearest even, exact zeros
  included (+0 for opposite-signed operands, x + x keeps x's sign).
* the bits: numpy's float64 -> float16 cast is IEEE 754's convertFormat in round to
  nearest even (overflow to infinity, subnormals kept).  A sum below 2**-14 is a
  multiple of 2**-24, an fp16 value: exact, so the cast's slow underflow signalling
  never runs.  Blocks wholly in fp16's normal range with flags wanted take the codec's
  re-bias kernel instead (:func:`._rebias.rebias`, with its proof and its flags:
  inexact alone can arise there), which is cheaper than the flag passes below.
* inexact: the result's value (the decoding table at its pattern) differs from ``r``.
* overflow: ``|r| >= 65520``, the midpoint above max_finite = 65504, whose tie goes to
  the even 65536: the rounding with an unbounded exponent exceeds max_finite exactly
  there.  Overflow implies inexact (the result is infinite).
* underflow never: a sum below 2**-14 is exact (above), and underflow needs inexactness
  with gradual underflow, whichever the tininess rule; invalid and divide_by_zero cannot
  arise from finite operands.

tests/test_native_ops.py compares it with the general path (switch off), every finite
fp16 value against dozens of partners.
"""

from __future__ import annotations

import numpy as np

from .._flagmasks import FlagMasks
from ..formats import fp16
from ..rounding import Rounding
from . import _directed16 as _directed, _plan, _rebias

__all__ = ["UFUNCS", "applies", "run"]

#: the operations this kernel takes (their exact float64 results, see above)
UFUNCS = (np.add, np.subtract)

#: round to nearest even here, the others by _directed16 (ties away: the general path,
#: measured as fast)
_MODES = (Rounding.NEAREST_EVEN, Rounding.TOWARD_ZERO, Rounding.UPWARD, Rounding.DOWNWARD, Rounding.ODD)
_MAX = 65504.0
_OVERFLOW = 65520.0
_MIN_NORMAL = 2.0 ** -14


def applies(fmt, attrs, ufunc) -> bool:
    """fp16, a deterministic mode other than ties away, gradual underflow, no saturation;
    add or sub."""
    return (fmt == fp16 and ufunc in UFUNCS and attrs.rounding in _MODES and attrs.subnormals
            and not attrs.saturate)


def run(ufunc, x, y, attrs, want, out, ws, values):
    """Round ``ufunc(x, y)`` (float64 blocks of exact fp16 operand values) into ``out``
    (uint16), or return None (declined: some sum is not finite; the general path redoes
    the block).  Returns ``[flags]``: the block's FlagMasks with ``want``, else None.
    ``values`` is fp16's decoding table (65536 float64 values, index: pattern).  Modes
    other than round to nearest even take :func:`._directed.run` (its proof there)."""
    if attrs.rounding is not Rounding.NEAREST_EVEN:
        return _directed.run(ufunc, x, y, attrs, want, out, ws, values)
    n = out.size
    r = ufunc(x, y, out=ws.get("n16.r", np.float64, n))
    lo, hi = r.min(), r.max()  # NaN propagates: finite bounds mean finite lanes
    if not (-np.inf < lo and hi < np.inf):
        return None
    largest = max(-lo, hi)
    if want:
        b = np.abs(r, out=ws.get("n16.b", np.float64, n))
        if b.min() >= _MIN_NORMAL and largest <= _MAX:
            return _by_kernel(r, attrs, out, ws)
    np.copyto(out.view(np.float16), r, casting="unsafe")
    if not want:
        return [None]
    a = np.take(values, out, out=ws.get("n16.a", np.float64, n), mode="clip")
    inexact = np.not_equal(a, r)
    overflow = b >= _OVERFLOW if largest >= _OVERFLOW else None
    return [FlagMasks(overflow=overflow, inexact=inexact)]


def _by_kernel(r, attrs, out, ws):
    """The codec's re-bias kernel (float64 -> fp16) with flags on an in-range block:
    ``[flags]``, or None where it leaves lanes to the general path."""
    plan = _plan.lookup(fp16, "d", attrs)
    if plan is None or plan.kernel is not _rebias.rebias:  # pragma: no cover - see applies()
        return None
    fl, rest = plan.kernel(plan, r, True, out, ws)
    return None if rest is not None else [fl]
