"""The hand-off of one block's exact results (an :class:`~softfloat.ops._kernel.Exact`
pair hi + lo) to the one rounding point.

The pair goes to the rounding point in one of three ways:

* ``lo`` zero everywhere: ``hi`` is the exact result, encoded like any float64;
* otherwise, deterministic modes into formats of at most 51-bit precision: ``hi`` rounded
  to odd with ``lo``'s sign.  Round to odd at 53 bits followed by rounding to p <= 51
  bits is a single rounding to p bits in every mode (Boldo and Melquiond, "Emulation of
  FMA and correctly rounded sums: proved algorithms using rounding to odd", IEEE TC
  2008), so no double rounding can occur;
* otherwise (fp64, or stochastic rounding): the pair as a 62-bit significand with a
  sticky bit, so the rounding sees lo's bits (for stochastic rounding the probability is
  exact for add, sub, mul and fma, and accurate to about 2**-45 of an ulp for div and
  sqrt).

In formats wider than fp32 (fp64 and custom ones) the error-free transformations fail
where an intermediate overflows or underflows float64, and a pair whose low part is only
nearly exact cannot place a result that lies within 2**-40 of the 62-bit grid.  Kernels
mark such lanes as hazards; they are computed with exact rational arithmetic in Python
and rounded by the same rounding point.  They need magnitudes beyond 2**995 or below
2**-968 (or a one-in-2**40 coincidence), so they are rare: benchmarks/bench_ops.py
reports their share.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .. import _exact
from .._encode import encode_block, encode_significands
from ..attributes import RoundingAttributes
from .._workspace import Workspace
from ..formats import Format
from ..rounding import Rounding
from ._eft import round_to_odd
from ._kernel import scratch
from ._significands import pair_significands

__all__ = ["Target", "round_block"]


@dataclass(frozen=True)
class Target:
    """What a block's exact results are rounded into: the format, the (validated)
    rounding attributes, and whether the caller wants the flags."""

    fmt: Format
    attrs: RoundingAttributes
    want: bool


def round_block(res, exact, xs, target: Target, rand, out, ws):
    """Round one block's :class:`Exact` result ``res`` into ``out`` (bit patterns of
    ``target.fmt``).

    ``exact(attrs, *floats)`` recomputes one hazard lane's result from the kernel's
    float64 operands ``xs``, as Python floats (see softfloat.ops._driver.apply).
    ``rand`` holds the block's random bits (stochastic rounding; else None), ``ws`` is
    the block's workspace.  Returns the block's FlagMasks (None unless ``target.want``);
    NaN lanes are left as the rounding point made them, for the caller's NaN attrs.
    """
    fl = _round(res, target, rand, out, ws)
    return _settle_hazards(res, exact, xs, target, rand, out, fl)


def _round(res, target, rand, out, ws):
    """Hand the exact pair hi + lo to the rounding point (see the module docstring)."""
    fmt, attrs, want = target.fmt, target.attrs, target.want
    hi, lo = res.hi, res.lo
    if lo is None or not lo.any():
        return encode_block(hi, fmt, attrs, rand, want, out, ws)
    if attrs.rounding is not Rounding.STOCHASTIC and fmt.precision <= 51:
        return encode_block(round_to_odd(hi, lo, ws), fmt, attrs, rand, want, out, ws)
    negative, sig, e_top, near = pair_significands(*_finite_pair(hi, lo, ws), ws)
    if not res.lo_exact:  # a nearly exact lo cannot place a value this close to the grid
        near &= lo != 0
        res.hazard = near.copy() if res.hazard is None else res.hazard | near
    fl = encode_significands((negative, sig, e_top), fmt, attrs, rand, want, out, ws)
    exact_inf = np.isinf(hi) & (True if res.hazard is None else ~res.hazard)
    if exact_inf.any():  # infinite operands: infinite results, exactly
        idx = np.nonzero(exact_inf)
        k = len(idx[0])
        sub_out = np.empty(k, dtype=out.dtype)
        sub_rand = None if rand is None else rand[idx]
        sub_fl = encode_block(hi[idx], fmt, attrs, sub_rand, want, sub_out, Workspace(k))
        out[idx] = sub_out
        if want:
            fl.set_at(idx, sub_fl, out.shape)
    return fl


def _finite_pair(hi, lo, ws):
    """hi and lo with their non-finite lanes zeroed (those are encoded from hi alone)."""
    not_finite = np.isfinite(hi, out=ws.get("rp.not_finite", np.bool_, hi.size))
    np.logical_not(not_finite, out=not_finite)
    pair = []
    for name, x in (("rp.hi", hi), ("rp.lo", lo)):
        y = scratch(ws, name, x)
        np.copyto(y, x)
        np.copyto(y, 0.0, where=not_finite)
        pair.append(y)
    return pair


def _settle_hazards(res, exact, xs, target, rand, out, fl):
    """Compute the hazard lanes exactly (rational arithmetic) and round them."""
    if res.hazard is None or not res.hazard.any():
        return fl
    fmt, attrs, want = target.fmt, target.attrs, target.want
    idx = np.nonzero(res.hazard)
    k = len(idx[0])
    negative = np.empty(k, dtype=np.uint64)
    sig = np.empty(k, dtype=np.uint64)
    e_top = np.empty(k, dtype=np.int64)
    for j, lane in enumerate(idx[0]):  # rare by construction: see the module docstring
        neg, value = exact(attrs, *(float(x[lane]) for x in xs))
        sig[j], e_top[j] = _exact.to_significand(value) if isinstance(value, Fraction) else value
        negative[j] = neg
    e_top = np.clip(e_top, -4000, 4000)
    sub_out = np.empty(k, dtype=out.dtype)
    sub_rand = None if rand is None else rand[idx]
    sub_fl = encode_significands((negative, sig, e_top), fmt, attrs, sub_rand, want, sub_out)
    out[idx] = sub_out
    if want:
        fl.set_at(idx, sub_fl, out.shape)
    return fl
