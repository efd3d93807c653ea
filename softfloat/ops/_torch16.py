"""Whole-call shortcut of add, sub, mul, div and sqrt into fp16 and bf16 in round to
nearest even without flags: torch's CPU float16/bfloat16 kernels, where the process has
imported torch already.

numpy has no fast 16-bit arithmetic (its float16 ufuncs convert element by element);
torch's CPU kernels convert to float32 in SIMD registers on all its threads, compute
there, and round back to nearest even.  That is the correctly rounded result:

* Every fp16 and bf16 value is a float32 value, so the operands reach float32 exactly.
* Double rounding is innocuous: a result of +, -, *, / or sqrt correctly rounded to
  float32's 24 bits, then to nearest even at p <= 11 bits, is the result correctly
  rounded to p bits once, because 24 >= 2p + 2 (Figueroa, "When is double rounding
  innocuous?", SIGNUM 1995).  The theorem assumes an unbounded exponent range.  fp16
  never leaves float32's normal range (fp16 values are multiples of 2**-24 below 2**16:
  sums, products of at least 2**-48, quotients of at least 2**-40 and square roots are
  float32-normal or zero).  bf16 shares float32's exponent range; below 2**-126 both
  round to fixed grids, float32 to multiples of 2**-149, bf16 to multiples of 2**-133,
  and the double rounding is still innocuous: it errs only where float32's rounding lands
  exactly on a bf16 midpoint m (an odd multiple of 2**-134) that the exact result r is
  not (rounding is monotone and m is on float32's grid, so it never crosses one).  A sum
  or difference of bf16 values is a multiple of 2**-133 and is exact.  A product or
  quotient is r = (A / B) 2**k with integers A, B < 2**8 (B = 1 for products); where
  r >= 2**-134 (smaller r round to zero both ways: float32 gives at most 2**-134, a tie
  that goes to the even zero), k >= -142, so A 2**k - m B is a non-zero multiple of
  2**min(k, -134) and |r - m| >= 2**-142 / B > 2**-150: float32's rounding (to within
  2**-150) cannot reach m.  Square roots of bf16 values are at least 2**-67.  Overflow:
  a float32 result that is infinite or beyond the format's largest finite value rounds to
  infinity, as the exact result does in round to nearest (monotone again).
* NaN results go back to the caller: the platform's NaN rules decide their bits.
* Subnormal operands and results must be honoured (no flush to zero, no
  denormals-are-zero: ``torch.set_flush_denormal(True)`` would break it).  softfloat's
  entry points refuse a thread that flushes them before any kernel runs
  (softfloat._fpenv), so this one does not ask again.

The conditions (no flags, nearest even, gradual underflow, no saturation, uint16
operand arrays that torch can view) are the caller's to check; lanes to take again go
back to it as flat indices.  tests/test_torch16.py compares every route with the
general path bit for bit.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from ..formats import bf16, fp16

__all__ = ["torch_arithmetic"]

_NAMES = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.divide: "div", np.sqrt: "sqrt"}


def torch_arithmetic(ufunc, fmt, arrays, out):
    """Fill ``out`` (uint16, the broadcast shape) with ``ufunc`` of the uint16 pattern
    ``arrays`` of ``fmt`` by torch's kernels; returns the flat indices of the NaN lanes
    the general path must take again (an int64 array, usually empty), or None (declined:
    torch not imported, another format or operation, operands torch cannot view)."""
    torch = sys.modules.get("torch")
    name = _NAMES.get(ufunc)
    if torch is None or name is None or not (fmt == fp16 or fmt == bf16):
        return None
    dtype = torch.float16 if fmt == fp16 else torch.bfloat16
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # read-only views: torch warns, we never write them
            xs = [torch.from_numpy(a.view(np.int16)).view(dtype) for a in arrays]
            result = torch.from_numpy(out.view(np.int16)).view(dtype)
    except (ValueError, TypeError, RuntimeError):
        return None  # negative strides and the like
    getattr(torch, name)(*xs, out=result)
    if not bool(torch.isnan(result.max())):  # max propagates NaN: one pass
        return np.empty(0, dtype=np.int64)
    return torch.nonzero(torch.isnan(result).reshape(-1)).reshape(-1).numpy()
