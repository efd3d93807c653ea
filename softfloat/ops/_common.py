"""The names other layers import from the operations' internals, kept importable here
while they move to a published API (issue 22, item 5); the operations themselves import
from the modules that hold each job:

    _kernel        Exact (a kernel's result), scratch (a block's buffers)
    _eft           error-free transformations and when they are exact (is_narrow, ...)
    _significands  an exact pair as a 62-bit significand and a sticky bit
    _round_block   the hand-off of a block's Exact to the rounding point (Target)
    _nan           NAN_POLICY and the NaN results it chooses
    _signs         the signs of zeros and of exact zero sums
    _operands      bit-pattern operands in, float64 values out; DAZ
    _driver        the block driver: apply, block sizes, threads and dask
"""

from __future__ import annotations

from ._eft import is_narrow, safe_magnitude
from ._kernel import Exact
from ._round_block import Target, round_block

__all__ = ["Exact", "is_narrow", "round_result", "safe_magnitude"]


def round_result(res, exact, xs, fmt, policy, rand, want, out, ws):
    """round_block with the target given field by field: the calling convention of
    softfloat.accumulate._ieee and softfloat._array_functions.  Remove once they call
    ``round_block(res, exact, xs, Target(fmt, policy, want), rand, out, ws)``."""
    return round_block(res, exact, xs, Target(fmt, policy, want), rand, out, ws)
