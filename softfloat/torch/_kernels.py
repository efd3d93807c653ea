"""Quantisation of torch tensors in torch operations on the tensor's own device.

A second implementation of :func:`softfloat.encode` / :func:`softfloat.quantize` for
float16, bfloat16, float32 and float64 tensors, equal to the numpy reference bit for bit
(tests/test_torch_kernels.py; on CUDA, tools/gpu_torch_check.py).  It takes the same
route through the same word layouts as softfloat._encode, so that stochastic rounding
spends each element's random bits as numpy does:

* float16/bfloat16/float32 input to a format of fewer than 23 fraction bits inside
  float32's exponent range: float32 patterns (W = 32);
* otherwise float64 values (every float16/32 is one): for at most 17 fraction bits and a
  deterministic mode the upper 32-bit word with the lower word as a sticky bit (W = 32),
  else the float64 pattern (W = 64; 52-bit targets with fewer exponent bits round only
  below their normal range);
* NaN and infinity lanes from the source's own bits (softfloat._encode.encode_specials);
* an IEEE format that holds every source value leaves finite values as they are.

Flags and outcome counts are not computed here (softfloat.quantize's ``return_flags``).
"""

from __future__ import annotations

import torch

from ..formats import Format, Specials
from ..rounding import Rounding
from ._kernels_random import bits_at
from ._kernels_round import Layout, round_magnitudes, special_patterns

__all__ = ["decode_tensor", "encode_tensor", "plan", "quantize_planned", "quantize_tensor", "values_dtype"]

#: torch float dtype -> (integer view dtype, bits, fraction bits, exponent bits)
_SOURCES = {torch.float16: (torch.int16, 16, 10, 5), torch.bfloat16: (torch.int16, 16, 7, 8),
            torch.float32: (torch.int32, 32, 23, 8), torch.float64: (torch.int64, 64, 52, 11)}
_FP32 = Layout(23, 127, 32)
_TOP_WORD = Layout(20, 1023, 32)
_FP64 = Layout(52, 1023, 64)


def _source_format(dtype) -> Format:
    _, _, m, e = _SOURCES[dtype]
    return Format(exponent_bits=e, mantissa_bits=m)


def values_dtype(dtype, fmt: Format):
    """softfloat.quantize's result dtype rule for a torch float dtype: ``dtype`` where it
    holds every value of ``fmt``, else float32 where that does, else float64."""
    for candidate in (dtype, torch.float32, torch.float64):
        if _source_format(candidate).holds(fmt):
            return candidate
    raise AssertionError("float64 holds every format")  # pragma: no cover


def _patterns(t):
    """(sign bool, magnitude, fraction) of ``t``'s own bit patterns (int32 for 16- and
    32-bit floats, int64 for float64)."""
    view, bits, m, _ = _SOURCES[t.dtype]
    u = t.view(view)
    if bits == 16:
        u = u.to(torch.int32)
    negative = u < 0
    mag = u & ((1 << (bits - 1)) - 1)
    return negative, mag, mag & ((1 << m) - 1)


def encode_tensor(t: torch.Tensor, fmt: Format, attrs, key=None) -> torch.Tensor:
    """Bit patterns (in [0, 2**fmt.bits); int32 where a 32-bit word rounds into a format
    of at most 31 bits, else int64) of ``t`` rounded into ``fmt``:
    softfloat.encode(t's values, fmt, attributes=attrs) with the random bits of ``key``
    (the 64-bit word softfloat._random.key_from draws; stochastic rounding only).

    >>> import torch, softfloat as sf
    >>> from softfloat.attributes import RoundingAttributes
    >>> encode_tensor(torch.tensor([1.0, 1000.0, -3e-3]), sf.fp8_e4m3, RoundingAttributes()).tolist()
    [56, 127, 130]
    """
    t = t.detach().contiguous()
    negative, mag, frac = _patterns(t)
    _, bits, frac_bits, _ = _SOURCES[t.dtype]
    special = mag >= (((1 << (bits - 1 - frac_bits)) - 1) << frac_bits)
    stochastic = attrs.rounding is Rounding.STOCHASTIC
    rand = bits_at(key, t.numel(), t.device).view(t.shape) if stochastic else None
    layout, a = _layout_words(t, mag, fmt, stochastic)
    if layout is None:  # fp64 itself: every source value is its own pattern (or flushed)
        out = a if attrs.subnormals else a.masked_fill(a < (1 << 52), 0)
        out = out | (negative.to(torch.int64) << 63)
    else:
        a = a.masked_fill(special, 0)
        out = round_magnitudes(a, negative, layout, fmt, attrs, rand)
    return torch.where(special, special_patterns(negative, frac, frac_bits, fmt, attrs), out)


def _layout_words(t, mag, fmt: Format, stochastic: bool):
    """(Layout, magnitude words: int32 for W = 32, int64 for W = 64) the rounding works on
    (softfloat._encode._layout); ``mag`` is ``t``'s own magnitude pattern."""
    m = fmt.mantissa_bits
    if t.dtype != torch.float64 and m < 23 and fmt.emin >= -126:
        if t.dtype == torch.float32:
            return _FP32, mag
        return _FP32, t.to(torch.float32).view(torch.int32) & 0x7FFFFFFF
    u = mag if t.dtype == torch.float64 else t.to(torch.float64).view(torch.int64) & ((1 << 63) - 1)
    if m <= 17 and not stochastic:
        return _TOP_WORD, ((u >> 32) | ((u & 0xFFFFFFFF) != 0).to(torch.int64)).to(torch.int32)
    if m < 52:
        return _FP64, u
    if fmt.exponent_bits == 11:  # e11m52: float64's own layout
        return None, u
    return _FP64, u


def decode_tensor(bits: torch.Tensor, fmt: Format, dtype) -> torch.Tensor:
    """Values of ``fmt`` bit patterns (int32 or int64) as a tensor of float ``dtype``
    (which must hold the format): softfloat.decode, NaN payloads and signs included.

    The values are built as float32 patterns in int32 where float32 holds the format and
    its subnormals are float32 normals or float32's own subnormals, else as float64
    patterns; either way every step is exact (integer operations, an int -> float
    conversion of a fraction below 2**24, a cast of an exactly representable value).

    >>> import torch, softfloat as sf
    >>> decode_tensor(torch.tensor([56, 127, 130]), sf.fp8_e4m3, torch.float32).tolist()[1:]
    [nan, -0.00390625]
    """
    m = fmt.mantissa_bits
    narrow = dtype != torch.float64 and fmt.bits <= 31 and (fmt.emin == -126 or fmt.emin - m >= -126)
    word, ws, wm, wbias, wmin = ((torch.int32, 32, 23, 127, -126) if narrow
                                 else (torch.int64, 64, 52, 1023, -1022))
    bits = bits.to(word)
    negative = (bits >> (fmt.bits - 1)) != 0
    mag = bits & ((1 << (fmt.bits - 1)) - 1)
    exp, frac = mag >> m, mag & fmt.mantissa_mask
    normal = ((exp + (wbias - fmt.bias)) << wm) | (frac << (wm - m))
    if fmt.emin == wmin:  # the word's own subnormals
        sub = frac << (wm - m)
    else:  # frac * 2**(emin - m): frac's float pattern, exponent lowered (stays normal)
        sub = frac.to(torch.float32 if narrow else torch.float64).view(word) - ((m - fmt.emin) << wm)
        sub = sub.masked_fill(frac == 0, 0)
    p = torch.where(exp == 0, sub, normal)
    p = torch.where(negative, p | -(1 << (ws - 1)), p)
    values = p.view(torch.float32 if narrow else torch.float64)
    values = values if values.dtype == dtype else values.to(dtype)
    special = _special_lanes(bits, mag, fmt)
    if special is None:
        return values
    view, width, dm, _ = _SOURCES[dtype]
    wide = torch.int64 if width == 64 else torch.int32
    frac, sign = frac.to(wide), negative.to(wide) << (width - 1)
    if fmt.specials is Specials.IEEE:  # sign, infinity or NaN, payload: by their bits
        pat = sign | (((1 << (width - 1 - dm)) - 1) << dm) | (frac << (dm - m))
    else:  # the quiet NaN: fn keeps the sign, fnuz's has none
        keep = sign if fmt.specials is Specials.FN else torch.zeros_like(sign)
        pat = keep | (((1 << (width - dm)) - 1) << (dm - 1))
    if width == 16:  # the int16 with the same bits
        pat = torch.where(pat >= 1 << 15, pat - (1 << 16), pat)
    # chosen by bits: a fused (compiled) where on bfloat16 values may go through float32
    # and drop a NaN's sign
    return torch.where(special, pat.to(view), values.view(view)).view(dtype)


def _special_lanes(bits, mag, fmt: Format):
    """Bool tensor of the NaN/infinity patterns (None for formats with neither)."""
    if fmt.specials is Specials.FINITE:
        return None
    if fmt.specials is Specials.FNUZ:
        return bits == fmt.sign_mask
    if fmt.specials is Specials.FN:
        return mag == fmt.nan_bits
    return mag >= fmt.infinity_bits


def quantize_tensor(t: torch.Tensor, fmt: Format, attrs, key=None) -> torch.Tensor:
    """``t``'s values rounded into ``fmt``, as a tensor of ``values_dtype(t.dtype, fmt)``
    on ``t``'s device: softfloat.quantize(t's values, fmt, attributes=attrs) bit for bit,
    with the random bits of ``key`` for stochastic rounding (the word softfloat's
    key_from draws from the caller's generator).

    >>> import torch, softfloat as sf
    >>> from softfloat.attributes import RoundingAttributes
    >>> quantize_tensor(torch.tensor([0.1, 3.4e38]), sf.bf16, RoundingAttributes()).tolist()
    [0.10009765625, inf]
    """
    return quantize_planned(t, fmt, attrs, key, plan(t.dtype, fmt, attrs))


def plan(dtype, fmt: Format, attrs) -> tuple:
    """(the result dtype, whether every value of ``dtype`` is already a value of ``fmt``):
    the decisions :func:`quantize_tensor` takes before touching data, made outside a
    compiled kernel (formats built here would become symbolic under torch.compile)."""
    exact = fmt.specials is Specials.IEEE and attrs.subnormals and fmt.holds(_source_format(dtype))
    return values_dtype(dtype, fmt), bool(exact)


def quantize_planned(t: torch.Tensor, fmt: Format, attrs, key, planned: tuple) -> torch.Tensor:
    """:func:`quantize_tensor` with :func:`plan`'s decisions given."""
    dtype, exact = planned
    if exact:
        return _exact_values(t.detach().contiguous(), fmt, attrs, dtype)
    return decode_tensor(encode_tensor(t, fmt, attrs, key), fmt, dtype)


def _exact_values(t, fmt: Format, attrs, dtype):
    """quantize into an IEEE format that holds every value of ``t``'s dtype: the values
    themselves, NaNs quieted (payloads kept as encode_specials keeps them)."""
    negative, mag, frac = _patterns(t)
    _, bits, frac_bits, _ = _SOURCES[t.dtype]
    nan = mag > (((1 << (bits - 1 - frac_bits)) - 1) << frac_bits)
    quiet = decode_tensor(special_patterns(negative, frac, frac_bits, fmt, attrs), fmt, dtype)
    return torch.where(nan, quiet, t.to(dtype))
