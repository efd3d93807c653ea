"""softfloat._round's rounding point in torch integer operations, on any device.

The same arithmetic as :func:`softfloat._round.round_pack` fed by the pattern path of
:func:`softfloat._encode._encode_float_patterns`, written as branch-free elementwise torch
operations on int64 tensors (no host round trip, no data-dependent Python branches, so it
also runs under ``torch.compile``).  A source float's magnitude pattern ``a`` in a word
layout (``ms`` fraction bits, exponent bias ``bias``) becomes

    c = clip(a >> ms, 1, Emn)        v = a - ((c - 1) << ms)        s = ms - m + Emn - c

and the target's magnitude pattern is ``v / 2**s`` rounded to an integer in the mode.  The
word width ``W`` (32 or 64) of the numpy path matters for stochastic rounding only: where
more than W - 1 bits are cut, numpy pre-shifts ``v`` with a sticky bit, and so does this.

W = 32 words live in int32 and W = 64 words in int64, as their (non-negative) unsigned
values.  Sums that could pass the signed range (W = 64; stochastic increments of up to 31
bits in W = 32) are taken halved (``floor((v + inc) / 2)`` from the halves), so nothing
wraps.  A deterministic W = 32 cut is clamped at 30 bits instead of numpy's 31: a cut
that deep only happens where ``v < 2**24``, where both give the same result (0 or 1) in
every mode, and ``v + inc`` then stays below 2**31.
"""

from __future__ import annotations

import torch

from ..formats import Format, Specials
from ..rounding import Rounding, Tininess
__all__ = ["Layout", "round_magnitudes", "special_patterns"]


class Layout:
    """A source word: ``ms`` fraction bits, exponent ``bias``, numpy's word width
    ``width`` (32 or 64)."""

    def __init__(self, ms: int, bias: int, width: int):
        self.ms, self.bias, self.width = ms, bias, width


def _width(t: torch.Tensor) -> int:
    return 32 if t.dtype == torch.int32 else 64


def _mask(s: torch.Tensor) -> torch.Tensor:
    """2**s - 1 for 0 <= s <= W - 1 in ``s``'s dtype (no shift by W, no 1 << (W - 1))."""
    w = _width(s)
    return torch.bitwise_right_shift(torch.full_like(s, (1 << (w - 1)) - 1), (w - 1) - s)


def _increment(v, s, negative, rounding: Rounding, rand):
    """What is added to ``v`` before the cut at ``s`` (1 <= s <= 63) bits: see
    softfloat._round._round_in_place.  None for toward_zero (and odd, done apart)."""
    if rounding is Rounding.NEAREST_EVEN:  # a tie carries only when the kept part is odd
        return ((v >> s) & 1) + _mask(s - 1)
    if rounding is Rounding.NEAREST_AWAY:
        return _mask(s - 1) + 1
    if rounding is Rounding.UPWARD:
        return _mask(s) * (~negative)
    if rounding is Rounding.DOWNWARD:
        return _mask(s) * negative
    if rounding is Rounding.STOCHASTIC:  # the top s of the random bits, aligned at the cut
        return torch.bitwise_right_shift(rand, _width(s) - s) & _mask(s)
    return None


def _rounded(v, s, negative, rounding: Rounding, rand, wide: bool):
    """``v / 2**s`` rounded to an integer (v >= 0, 1 <= s <= 63)."""
    if rounding is Rounding.ODD:
        return (v >> s) | ((v & _mask(s)) != 0).to(v.dtype)
    inc = _increment(v, s, negative, rounding, rand)
    if inc is None:
        return v >> s
    if not wide:
        return (v + inc) >> s
    half = (v >> 1) + (inc >> 1) + (((v & 1) + (inc & 1)) >> 1)  # floor((v + inc) / 2)
    return half >> (s - 1)


def _presticky(v, s_true, width: int):
    """numpy's _clamp_for_stochastic: where more than width - 1 bits are cut, shift ``v``
    down by the excess, OR-ing what fell out into bit 0."""
    over = s_true > width - 1
    excess = (s_true - (width - 1)).clamp(0, width - 1)
    shifted = v >> excess
    sticky = ((shifted << excess) != v).to(v.dtype)
    return torch.where(over, shifted | sticky, v)


def round_magnitudes(a, negative, layout: Layout, fmt: Format, attrs, rand=None):
    """Target bit patterns (sign applied; int32 for a 32-bit word and a format of at most 31
    bits, else int64) of finite source magnitudes ``a`` (integer patterns in ``layout``,
    NaN/infinity lanes already replaced by anything finite), ``negative`` a bool tensor,
    ``rand`` the int64 random words (stochastic only).

    >>> import torch, softfloat as sf
    >>> from softfloat.attributes import RoundingAttributes
    >>> a = torch.tensor([0x3F800000, 0x3F808000, 0x3F818000])   # 1, 1 + 2**-8, 1 + 3 * 2**-8
    >>> round_magnitudes(a, torch.tensor([False, False, True]), Layout(23, 127, 32), sf.bf16,
    ...                  RoundingAttributes()).tolist() == [0x3F80, 0x3F80, 0xBF82]
    True
    """
    m, rounding = fmt.mantissa_bits, attrs.rounding
    width = layout.width
    if width == 32:
        a = a.to(torch.int32)
    stochastic = rounding is Rounding.STOCHASTIC
    wide = width == 64 or stochastic
    if stochastic and width == 32:  # the top 32 of the 64 random bits
        rand = (rand >> 32).to(torch.int32)
    emn = fmt.emin + layout.bias
    c = (a >> layout.ms).clamp(1, emn)
    s = (layout.ms - m + emn) - c
    v = a - ((c - 1) << layout.ms)
    # a target as precise as the word (float64 -> e<11 m52): its normal range is exact
    exact = (s == 0) if layout.ms == m else None
    if stochastic:
        v = _presticky(v, s, width)
    s = s.clamp(1, width - 1 if wide else width - 2)
    t = _rounded(v, s, negative, rounding, rand, wide)
    if exact is not None:
        t = torch.where(exact, v, t)
    if not attrs.subnormals:
        flush = _flushed(t, v, s, negative, fmt, attrs, rand, wide)
        t = t.masked_fill(flush if exact is None else flush & ~exact, 0)
    t = _overflow(t, negative, fmt, attrs)
    if fmt.bits > width - 1:  # the sign bit needs a wider word
        t = t.to(torch.int64)
    return _signed(t, negative, fmt)


def _flushed(t, v, s, negative, fmt, attrs, rand, wide):
    """Where flush-to-zero zeroes the results: non-zero and tiny (before or after
    rounding, as ``attrs.tininess`` says; see softfloat._round._tiny_after_rounding)."""
    m = fmt.mantissa_bits
    trunc = v >> s
    inexact = (v & _mask(s)) != 0
    tiny = trunc < (1 << m)
    if attrs.tininess is Tininess.AFTER:
        cand = tiny & (t == (1 << m)) & inexact
        if attrs.rounding is Rounding.STOCHASTIC:  # judged by the delivered result
            tiny = tiny & ~cand
        else:  # rounded one bit finer, with an unbounded exponent
            fine = _rounded(v, (s - 1).clamp(min=1), negative, attrs.rounding, rand, wide)
            tiny = torch.where(cand & (s > 1), fine < (1 << (m + 1)), tiny)
    return tiny & ((trunc != 0) | inexact)


def _overflow(t, negative, fmt, attrs):
    """Results above max_finite: IEEE 754-2019 7.4 per mode, saturation, and the formats
    without infinity (fn: the NaN just above max_finite; fnuz: its one NaN; finite: max)."""
    maxpat = fmt.max_finite_bits
    rounding = attrs.rounding
    if rounding in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY, Rounding.STOCHASTIC):
        infinite = torch.ones_like(negative)
    elif rounding in (Rounding.TOWARD_ZERO, Rounding.ODD):
        infinite = torch.zeros_like(negative)
    else:
        infinite = negative if rounding is Rounding.DOWNWARD else ~negative
    over = t > maxpat
    special = not (attrs.saturate or fmt.specials in (Specials.FINITE, Specials.FNUZ))
    t = torch.where(over, maxpat + (infinite.to(t.dtype) if special else 0), t)
    if fmt.specials is Specials.FNUZ and not attrs.saturate:
        t = torch.where(over & infinite, -1, t)  # marks the NaN for _signed
    return t


def _signed(t, negative, fmt):
    """Apply the sign; fnuz formats have no -0, and their NaN is the "-0" pattern."""
    sign = negative.to(t.dtype) << (fmt.bits - 1)
    if fmt.specials is Specials.FNUZ:
        nan = t < 0
        sign = sign.masked_fill(t == 0, 0)
        return torch.where(nan, fmt.sign_mask, t | sign)
    return t | sign


def special_patterns(negative, frac, frac_bits: int, fmt: Format, attrs):
    """Target patterns of NaN (``frac != 0``) and infinity (``frac == 0``) inputs, from
    the source's fraction field: softfloat._encode.encode_specials' table (in ``frac``'s
    integer dtype, int64 where the format has 32 bits or more)."""
    is_nan = frac != 0
    if fmt.bits > 31 or frac_bits < fmt.mantissa_bits:
        frac = frac.to(torch.int64)
    sign = negative.to(frac.dtype) << (fmt.bits - 1)
    m = fmt.mantissa_bits
    if fmt.specials is Specials.IEEE:  # quiet NaN, sign and top payload bits kept
        shift = frac_bits - m
        payload = frac >> shift if shift >= 0 else frac << -shift
        nan_out = (payload & fmt.mantissa_mask) | fmt.nan_bits | sign
    elif fmt.specials is Specials.FN:
        nan_out = sign | fmt.nan_bits
    elif fmt.specials is Specials.FNUZ:
        nan_out = torch.full_like(frac, fmt.nan_bits)
    else:
        nan_out = torch.zeros_like(frac)
    if fmt.has_infinity:
        inf_out = sign | fmt.infinity_bits
    elif attrs.saturate or fmt.specials is Specials.FINITE:
        inf_out = sign | fmt.max_finite_bits
    elif fmt.specials is Specials.FNUZ:
        inf_out = nan_out
    else:
        inf_out = sign | fmt.nan_bits
    return torch.where(is_nan, nan_out, inf_out)
