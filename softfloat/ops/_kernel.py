"""What an operation's kernel works in and hands back: its block's scratch buffers and its
exact result, an unevaluated pair of float64s."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Exact", "scratch"]


@dataclass
class Exact:
    """One block's exact results, as a kernel returns them.

    Every value of every format is a float64, so a kernel computes its exact result from
    the operands' exact float64 values as an unevaluated pair

        exact = hi + lo        hi = the float64 nearest the exact result, |lo| <= ulp(hi)/2

    with ``lo`` exact (error-free transformations, softfloat.ops._eft) or, for div and
    sqrt, of exact sign and nearly exact size (``lo_exact=False``).  Lanes where the
    float64 arithmetic cannot be trusted are ``hazard`` lanes, computed exactly in Python
    (softfloat.ops._round_block says how the pair and the hazards are rounded).
    """

    hi: np.ndarray
    lo: np.ndarray | None = None  # None: hi is exact
    lo_exact: bool = True  # False: lo has the exact sign but only ~53 correct bits
    invalid: np.ndarray | None = None  # invalid operations float64 does not turn into NaN
    divide_by_zero: np.ndarray | None = None
    hazard: np.ndarray | None = None  # lanes to compute exactly in Python


def scratch(ws, name, like):
    """The float64 buffer ``name`` of a block's workspace, sized like the operand
    ``like``, for a kernel's intermediate; None without a workspace, so that a ufunc
    given it as ``out`` makes a new array.

    Why: a kernel's intermediates are as large as its block, and fresh arrays of that
    size come from memory that glibc may have handed back to the system after the
    previous block -- a page fault per 4 KiB, microseconds each on a virtual machine
    (softfloat._scratch says more).  Reused buffers take none.  A buffer lives until the
    next block, so what a kernel returns in one must be used up within the block.
    """
    return None if ws is None else ws.get(name, np.float64, like.size)
