"""float64 -> fp16 (and formats like it) over the whole range, every deterministic mode,
flags included: float64 rounded to odd into float32, then float32's lookup kernel;
without flags, the value grid's pattern kernel (softfloat._fastpaths._value_grid)."""

from __future__ import annotations

import numpy as np

from .._flagmasks import FlagMasks
from ..formats import Format, fp32, fp64
from ..rounding import Rounding
from . import _rebias, _table, _upper, _value_grid
from ._words import MAX_REST_SHARE

__all__ = ["Odd32Plan", "applies", "by_float32", "to_float32_odd"]


def applies(fmt: Format, src: Format) -> bool:
    """The condition of :func:`by_float32` (checked once per plan): float64 input; a
    format that float32's lookup kernel takes (:func:`._table.applies`: m <= 20, so
    float32 has at least m + 2 significant bits) and float64's does not (its index would
    be too wide); fmt's smallest subnormal at least 2**-124 and its largest exponent at
    most 125 (so every nonzero value below 2**-126 -- float32's subnormals -- is below a
    quarter of fmt's smallest subnormal, and float32's largest finite value is more than
    twice fmt's overflow threshold)."""
    return (src == fp64 and _table.applies(fmt, fp32) and not _table.applies(fmt, fp64)
            and fmt.emin - fmt.mantissa_bits >= fp32.emin + 2 and fmt.emax + 2 <= fp32.emax)


class Odd32Plan:
    """The float32 table plan (``table``, a :class:`._table_cache.TablePlan` for the same
    format and attrs), the float64 re-bias plan (``fallback``: blocks too small to fill
    the tables), its upper-word kernel (normal-range blocks without flags) and the value
    grid's plan (``grid``: other blocks without flags, :func:`._value_grid.encode_block`)."""

    def __init__(self, table, fallback):
        self.kernel, self.fmt, self.attrs = by_float32, table.fmt, table.attrs
        self.table, self.fallback = table, fallback
        self.upper = None if fallback is None else fallback.upper
        grid = _value_grid.plan(table.fmt, np.float64, table.attrs)
        # (odd rounds in four passes there: the passes below were as fast)
        slow = table.attrs.rounding is Rounding.ODD
        self.grid = grid if grid is not None and grid.grid_pays and grid.patterns is not None and not slow else None


def by_float32(p: Odd32Plan, blk, want: bool, out, ws, general=None):
    """Round a float64 block into fmt by way of float32 rounded to odd.

    Why it is exact (condition: :func:`applies`).  Let y be x rounded to odd into float32
    (toward zero, then the last bit set if that was inexact), and r any deterministic
    rounding into fmt.

    * Bits.  Rounding to odd at p + 2 or more bits, then in any mode at p bits, is the
      rounding at p bits in that mode (Boldo and Melquiond, "Emulation of FMA and
      correctly rounded sums: proved algorithms using rounding to odd", IEEE TC 2008):
      y keeps the sign, the bits down to the guard bit and whether any lower bit is set,
      which is all a rounding to p bits reads (see :func:`._table.by_table`).  Where x is
      in float32's normal range, float32 has 24 >= m + 3 bits there, and fmt's grid
      (normal or subnormal: a multiple of its quantum, coarser still) is a subset of
      float32's with at least 2 bits to spare.  Where |x| < 2**-126, y is 0 exactly when
      x is, else a nonzero value below 2**-126 of x's sign: every such value is below a
      quarter of fmt's smallest subnormal, so x and y round alike (to 0 or the smallest
      subnormal, by mode and sign).  Where |x| exceeds float32's range, y is float32's
      largest finite value of x's sign: beyond fmt's overflow threshold, as x is.
    * Flags.  inexact: y = x, or y has its 24th significant bit set (or is tiny or huge,
      above) and is no value of fmt -- inexact either way.  Overflow and tininess (after
      rounding: the rounding to p bits with unbounded exponent; before: |x| < 2**emin,
      which odd rounding keeps, 2**emin being a float32) follow from the same two facts,
      so underflow and flush-to-zero do too; saturate only changes the overflow result.
      invalid and divide-by-zero cannot arise from finite input.
    * With flags, a long block whose first lanes lie in fmt's normal range (or are zeros)
      takes the float64 re-bias kernel first (:func:`._rebias.rebias`, its proof there:
      in-range lanes and zeros, every deterministic mode, flags included), about twice
      as fast there as the passes above; the lanes it leaves (outside that range) are
      gathered and rounded by the passes above.  Each lane's bits and flags are one
      proven kernel's, so the block's are the general path's.
    * Without flags, in every deterministic mode but odd, blocks outside
      the normal range go by :func:`._value_grid.encode_block` instead (its proof there:
      no flags, gradual underflow, no saturation -- its plan's conditions), a tenth to a
      sixth faster than the passes below; its NaN lanes (infinity and NaN inputs) are
      ``rest``.
    * Infinities and NaNs (the float32 cast quiets signaling NaNs without a trace) are
      left to the general path as ``rest``.

    The tables are the float32 kernel's (filled by ``general`` as in
    :func:`softfloat._fastpaths.encode_block`); without them (``general`` None, or a block
    too small to fill them) the float64 plan's kernel takes the block.
    """
    if p.upper is not None and not want and _upper.upper_word(p.upper, blk, out, ws):
        return None, None
    if p.grid is not None and not want:  # (the value grid's proof)
        rest = _value_grid.encode_block(p.grid, blk, out, ws)
        if rest is None or np.count_nonzero(rest) <= MAX_REST_SHARE * blk.size:
            return None, rest
        return None  # mostly infinities and NaNs: the general path takes the block
    t = p.table
    tables = t.tables
    if tables is None and general is not None:
        tables = t.fill(general, blk.size)
    if tables is None:
        f = p.fallback
        return None if f is None else f.kernel(f, blk, want, out, ws)
    if want and blk.size >= _rebias.SHORT_BLOCK and p.fallback is not None and _sample_in_range(p.fallback, blk):
        found = _rebias.rebias(p.fallback, blk, True, out, ws)
        if found is not None:
            fl, left = found
            if left is None:
                return fl, None
            return _gathered(p, tables, blk, fl, left, out, ws)
    return _odd_then_table(p, tables, blk, want, out, ws)


def _odd_then_table(p, tables, blk, want, out, ws):
    """The kernel's main passes (see :func:`by_float32`): ``(flags, rest)`` or None."""
    y = ws.get("odd32_y", np.float32, blk.size)
    rest = to_float32_odd(blk, y, ws)
    if rest is not None and np.count_nonzero(rest) > MAX_REST_SHARE * blk.size:
        return None
    fl, _ = _table.by_table(_NoUpper(p.table), tables, y, want, out, ws)
    if fl is not None:  # finite lanes raise neither (the rest lanes take the general path's flags)
        fl = FlagMasks(overflow=fl.overflow, underflow=fl.underflow, inexact=fl.inexact)
    return fl, rest


#: lanes :func:`_sample_in_range` reads: a block of data over the whole range fails it at
#: once, a block of normal-range data takes the re-bias kernel (flags wanted; blocks of
#: at least _rebias.SHORT_BLOCK lanes, where the sample's few numpy calls are no cost)
SAMPLE = 256


def _sample_in_range(f, blk) -> bool:
    """Whether the first SAMPLE lanes are zeros or lie in the target's normal range (the
    re-bias kernel's lanes, :func:`._rebias.rebias`): a guess, which decides only the
    speed."""
    a = blk[:SAMPLE].view(f.dt) & f.abs_mask
    return bool(((a - f.lo <= f.span) | (a == 0)).all())


def _gathered(p, tables, blk, fl, left, out, ws):
    """The re-bias kernel's ``(fl, left)`` completed: the lanes it left (outside the
    normal range, infinities and NaNs) gathered and rounded by :func:`_odd_then_table`;
    returns ``(flags, rest)`` with the lanes that kernel leaves in turn (infinities and
    NaNs), for the general path."""
    idx = left.nonzero()[0]  # (1-D)
    sub = np.ascontiguousarray(blk[idx])
    k = sub.size
    sub_out = np.empty(k, dtype=out.dtype)
    found = _odd_then_table(p, tables, sub, True, sub_out, _Fresh())
    if found is None:  # mostly infinities and NaNs: the general path takes them
        return fl, left
    sub_fl, sub_rest = found
    out[idx] = sub_out
    fl.set_at(idx, sub_fl, blk.size)
    if sub_rest is None:
        return fl, None
    rest = np.zeros(blk.size, dtype=bool)
    rest[idx[sub_rest]] = True
    return fl, rest


class _Fresh:
    """A workspace of fresh arrays, for the few gathered lanes (the block's buffers hold
    the block's work)."""

    @staticmethod
    def get(name, dtype, n):
        return np.empty(n, dtype=dtype)


class _NoUpper:
    """The float32 table plan seen without an upper-word kernel (float32 input)."""

    upper = None

    def __init__(self, t):
        self.dt, self.below, self.c, self.index_type = t.dt, t.below, t.c, t.index_type


def to_float32_odd(x, y, ws):
    """y <- x (float64) rounded to odd into float32, lane by lane; returns the mask of
    lanes that are infinite or NaN (their y is garbage), or None if there are none.

    numpy's cast gives c = x rounded to nearest even (overflow to infinity, float32
    subnormals kept).  d = c - x is exact (c is 0, or within a factor 2 of x: Sterbenz;
    or infinite), so c is inexact iff d != 0, and rounded away from zero iff d and x have
    the same sign, i.e. d * x > 0 (no underflow: then |x| >= 2**-150 and |d| >= 2**-1100,
    and an overflow is +inf, still > 0).  Toward zero is c's pattern less one where c went
    away (one ulp down in magnitude, across binades and from infinity to the largest
    finite value alike); odd sets its last bit where inexact."""
    n = x.size
    d = ws.get("odd32_d", np.float64, n)
    with np.errstate(all="ignore"):
        np.copyto(y, x, casting="same_kind")
        np.copyto(d, y)
        np.subtract(d, x, out=d)  # NaN exactly for infinite or NaN x
        rest = None
        if np.isnan(d.max()):
            rest = ~np.isfinite(x)
        prod = np.multiply(d, x, out=ws.get("odd32_p", np.float64, n))
        away = np.greater(prod, 0.0, out=ws.get("odd32_away", np.bool_, n))
        inexact = np.not_equal(d, 0.0, out=ws.get("odd32_inexact", np.bool_, n))
    yb = y.view(np.uint32)
    np.subtract(yb, away.view(np.uint8), out=yb, casting="unsafe")
    np.bitwise_or(yb, inexact.view(np.uint8), out=yb, casting="unsafe")
    return rest
