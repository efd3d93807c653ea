"""The plan cache: which kernel takes (format, input type, attrs), with its constants
worked out once, so that a block pays only for its numpy calls."""

from __future__ import annotations

import functools

import numpy as np

from ..formats import Format, Specials, fp32, fp64
from ..rounding import Rounding
from . import _odd32, _rebias, _table, _truncate, _upper
from ._table_cache import TablePlan
from ._words import overshift_is_zero

__all__ = ["Plan", "lookup", "plan"]

_last = (None, None, None, None)


def lookup(fmt: Format, char: str, attrs):
    """plan(fmt, char, attrs), skipping the hashing when the objects are the last
    lookup's: a call's blocks (and its block_factor) share them."""
    global _last
    last = _last
    if last[0] is fmt and last[1] is attrs and last[2] == char:
        return last[3]
    found = plan(fmt, char, attrs)
    _last = (fmt, attrs, char, found)  # one assignment: safe to race
    return found


@functools.lru_cache(maxsize=1024)
def plan(fmt: Format, dtype_char: str, attrs):
    """The kernel and its constants for (format, input dtype, attrs), or None: worked
    out once, so that a block pays only for its numpy calls.  Each kernel's module
    states the condition it is exact under (its ``applies``); stochastic rounding, whose
    draw needs every discarded bit, has none."""
    if attrs.rounding is Rounding.STOCHASTIC or dtype_char not in "fd":
        return None
    src = fp32 if dtype_char == "f" else fp64
    if _truncate.applies_as_is(fmt, src):
        return _truncate.AsIsPlan(attrs)
    if _truncate.applies(fmt, src):
        return Plan(_truncate.truncating, fmt, attrs, src.mantissa_bits, 0, src.storage_dtype.type)
    fallback = None  # the kernel of blocks too small to fill a table
    if _rebias.applies(fmt, src):
        fallback = Plan(_rebias.rebias, fmt, attrs, src.mantissa_bits, src.bias, src.storage_dtype.type)
    if _table.applies(fmt, src):
        return TablePlan(fmt, src, attrs, fallback)
    if _odd32.applies(fmt, src):  # float64 -> fp16: float32 rounded to odd, then its table
        return _odd32.Odd32Plan(plan(fmt, "f", attrs), fallback)
    return fallback


class Plan:
    """Constants of one kernel, as numpy scalars of the word type (see the kernels).

    The input is read as W-bit words (its own patterns) with ms fraction bits and bias
    B; k = ms - m bits are cut; R = (B - bias) << ms is the re-bias."""

    def __init__(self, kernel, fmt, attrs, ms, src_bias, dt):
        m = fmt.mantissa_bits
        W = np.dtype(dt).itemsize * 8
        k = ms - m
        rebias = (src_bias - fmt.bias) << ms if src_bias else 0
        wrap = 1 << W
        self.kernel, self.fmt, self.attrs, self.dt, self.W, self.k = kernel, fmt, attrs, dt, W, k
        self.rounding = attrs.rounding
        self.careful = attrs.saturate or not attrs.subnormals
        self.k_ = dt(k)
        self.one = dt(1)
        self.low = dt((1 << k) - 1)
        self.half = dt(1 << (k - 1))
        self.abs_mask = dt((1 << (W - 1)) - 1)
        self.sign_shift = dt(W - 1)
        self.spread_shift = dt(W - k)
        self.minus_r = dt((-rebias) % wrap)  # adding it subtracts R (wraps only off range)
        self.rne_add = dt(((1 << (k - 1)) - 1 - rebias) % wrap)
        self.rna_add = dt(((1 << (k - 1)) - rebias) % wrap)
        self.rebias = rebias
        self.lo = dt((fmt.emin + src_bias) << ms) if src_bias else None
        self.hi = dt((fmt.max_finite_bits << k) + rebias)
        self.span = dt((fmt.max_finite_bits << k) + rebias - ((fmt.emin + src_bias) << ms)) if src_bias else None
        # zeros in the re-bias kernel's main passes (see _rebias): a zero's |u| - lo (wrapped),
        # and whether the format keeps a zero's sign (fnuz has no -0: its zeros go to the general path)
        self.zero_t = dt((-((fmt.emin + src_bias) << ms)) % wrap) if src_bias else None
        self.zeros_inline = bool(src_bias) and fmt.has_negative_zero
        sign_at = fmt.bits - 1 + k
        self.sign_down = dt(W - 1 - sign_at)
        self.sign_bit = dt(1 << sign_at)
        self.signed = np.dtype(f"i{W // 8}").type
        self.signed_sign_shift = self.signed(W - 1)
        self.overshift_zero = overshift_is_zero(dt)
        self.inf_out = None if fmt.infinity_bits is None else out_scalar(fmt, fmt.infinity_bits)
        # lanes below min_normal: rounded in the input's float type (see _rebias)
        self.small_rounding = None
        fits = m - fmt.emin <= (fp32 if W == 32 else fp64).emax  # the scale is a float of the input type
        if fmt.has_negative_zero and attrs.subnormals and fits:
            # (odd and ties away take their own steps in _rebias._below_normal_patterns)
            self.small_rounding = {Rounding.NEAREST_EVEN: np.rint, Rounding.NEAREST_AWAY: _rebias.round_half_away,
                                   Rounding.TOWARD_ZERO: np.trunc, Rounding.UPWARD: np.ceil,
                                   Rounding.DOWNWARD: np.floor, Rounding.ODD: np.trunc}.get(attrs.rounding)
        # overflow results (see _rebias._clamp_overflow); fnuz overflows to a NaN without sign
        self.cap_finite = dt(fmt.max_finite_bits << k)
        self.cap_special = dt((fmt.max_finite_bits + 1) << k)
        finite_only = attrs.saturate or fmt.specials is Specials.FINITE or attrs.rounding in (
            Rounding.TOWARD_ZERO, Rounding.ODD)
        self.cap = self.cap_finite if finite_only else (
            self.cap_special if attrs.rounding in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY) else None)
        # the clamp's bounds on the sums read as signed words: a zero's sum is negative there
        self.floor = self.signed(0)
        self.cap_signed = None if self.cap is None else self.signed(self.cap)
        self.src_inf = dt((1 << (W - 1)) - (1 << ms))  # the input's infinity pattern
        self.in_bulk = self.small_rounding is not None and fmt.specials is not Specials.FNUZ
        fdt = np.float32 if W == 32 else np.float64
        self.scale = fdt(2.0 ** (m - fmt.emin)) if fits else None
        self.pattern_cap = fdt(2.0 ** fmt.bits - 1)
        self.sign_to_top = fmt.storage_dtype.type(fmt.bits - 1)
        self.mag_out = out_scalar(fmt, fmt.sign_mask - 1)
        self.upper = _upper.UpperWordPlan(self, fmt, attrs) if _upper.applies(fmt, attrs, W) else None


def out_scalar(fmt, value):
    return fmt.storage_dtype.type(value)
