"""The scales: fp32 ``max / amax`` as Transformer Engine computes them, OCP MX E8M0 powers
of two, and the factors each gives for quantising and dequantising."""

from __future__ import annotations

import math

import numpy as np

from .. import _fastpaths, _validate
from .._fpenv import flushes_subnormals
from ..formats import as_format
from ._fp32 import _FP32_MAX, _MIN_SCALE, _round_fp32

_E8M0_BIAS = 127
_E8M0_NAN = 0xFF


def fp32_scales(amax, fmt, *, margin=0, amax_epsilon=0.0, power_of_two=False, previous=1.0):
    """fp32 scales ``max / amax`` as Transformer Engine computes them (float32 array).

    ``scale = fp32(fp32(max * 2**-margin) / fp32(max(amax, amax_epsilon)))``; an amax that is
    0, infinite or NaN gives ``previous`` (TE: 1 for current scaling, the old scale for
    delayed scaling); a scale beyond fp32 gives fp32's max; ``power_of_two`` rounds down
    to a power of two.  Scales stay at or above 2**-126.

    >>> fp32_scales([2.0, 0.0, 3.0], "e4m3").tolist()
    [224.0, 1.0, 149.3333282470703]
    """
    fmt = as_format(fmt)
    margin = _validate.int_in_range("margin", margin, 0, 64)
    if (type(amax) in _SCALARS or (type(amax) is np.ndarray and amax.ndim == 0)) and type(previous) in _SCALARS \
            and _fastpaths.ENABLED and not flushes_subnormals():
        return _one_scale(float(amax), fmt, margin, amax_epsilon, power_of_two, float(previous))
    amax32 = _round_fp32(_real_numbers("amax", amax))
    previous = _real_numbers("previous", previous)
    with np.errstate(all="ignore"):
        scaled_max = _round_fp32(np.float64(fmt.max_finite) * 2.0**-margin)
        a = np.where(amax32 < amax_epsilon, _round_fp32(amax_epsilon), amax32)  # NaN stays NaN
        usable = np.isfinite(a) & (a > 0)
        # two fp32 operands: their quotient rounded to float64 and then to fp32 is the
        # quotient rounded once to fp32 (53 >= 2 * 24 + 2: double rounding is innocuous)
        scale = _round_fp32(scaled_max / np.where(usable, a, 1.0))
        scale = np.where(usable, scale, np.asarray(previous, dtype=np.float64))
        scale = np.where(np.isinf(scale), _FP32_MAX, scale)
        if power_of_two:
            _, e = np.frexp(scale)
            scale = np.ldexp(0.5, e)  # frexp's mantissa lies in [0.5, 1): 2**floor(log2 s)
        scale = np.maximum(scale, _MIN_SCALE)
    return np.asarray(scale, dtype=np.float32)


#: below this magnitude (fp32's max plus half an ulp) a value rounds to a finite fp32 value
_NO_OVERFLOW = 2.0**128 * (1 - 2.0**-25)
#: the scalar types whose one scale :func:`_one_scale` computes
_SCALARS = frozenset({float, np.float64, np.float32})


def _one_scale(amax: float, fmt, margin, amax_epsilon, power_of_two: bool, previous: float):
    """:func:`fp32_scales` of one amax (a delayed scale's update: a step's cost) on Python
    floats, step for step the array path's: each ``_round_fp32`` is numpy's float64 ->
    float32 cast (the caller checked that this thread keeps subnormals, the condition
    _round_fp32 takes it under; a NaN, whose payload only the codec's rounding keeps,
    is only ever the amax's, and an unusable amax gives ``previous``), ``np.where`` an
    ``if``, ``np.maximum`` one that keeps a NaN."""
    def fp32(v: float) -> float:
        if -_NO_OVERFLOW < v < _NO_OVERFLOW:  # (no overflow: no error state to set)
            return float(np.float32(v))
        with np.errstate(over="ignore", invalid="ignore"):  # overflow to infinity: the IEEE result
            return float(np.float32(v))
    amax32 = fp32(amax)
    scaled_max = fp32(float(fmt.max_finite) * 2.0**-margin)
    a = fp32(float(amax_epsilon)) if amax32 < amax_epsilon else amax32  # NaN stays NaN
    usable = math.isfinite(a) and a > 0
    scale = fp32(scaled_max / a) if usable else previous
    if math.isinf(scale):
        scale = _FP32_MAX
    if power_of_two:
        _, e = math.frexp(scale)
        scale = math.ldexp(0.5, e)  # frexp's mantissa lies in [0.5, 1): 2**floor(log2 s)
    if not scale >= _MIN_SCALE and scale == scale:
        scale = _MIN_SCALE
    return np.asarray(scale, dtype=np.float32)


def _real_numbers(name, value):
    """``value`` as float64 when it is real numbers (an int or float, or an array of them);
    a TypeError naming ``name`` otherwise (numpy would read None as NaN and drop an
    imaginary part with only a warning)."""
    try:
        arr = np.asarray(value)
        if arr.dtype.kind in "fiu":
            return arr.astype(np.float64, copy=False)
    except (TypeError, ValueError):
        pass
    raise TypeError(f"{name} must be a number or an array of real numbers; got {_validate.describe(value)}")


def _mx_scales(amax, special, fmt, rounding):
    """E8M0 bit patterns of X per block (uint8)."""
    amax = np.asarray(amax, dtype=np.float64)
    with np.errstate(all="ignore"):
        if rounding == "floor":
            # OCP: X = 2**(floor(log2 amax) - emax_elem); frexp's mantissa is in [0.5, 1)
            _, e = np.frexp(np.where(amax > 0, amax, 1.0))
            unbiased = np.where(amax > 0, e.astype(np.int64) - 1 - fmt.emax, -_E8M0_BIAS)
            unbiased = np.maximum(unbiased, -_E8M0_BIAS)
            nan = special | np.isnan(amax) | np.isinf(amax) | (unbiased > _E8M0_BIAS)
            return np.where(nan, _E8M0_NAN, unbiased + _E8M0_BIAS).astype(np.uint8)
        # TE's float_to_e8m0(amax * max_norm_rcp): the fp32 product rounded up to a power
        # of two, saturating at 2**127; fp32 bits = sign | exponent (8) | mantissa (23)
        ratio = _round_fp32(_round_fp32(amax) * _round_fp32(1.0 / fmt.max_finite))
        finite = np.where(np.isfinite(ratio), ratio, 0.0)
        bits = finite.astype(np.float32).view(np.uint32)
        exponent = (bits >> np.uint32(23)).astype(np.int64)
        mantissa = bits & np.uint32(0x7FFFFF)
        up = (mantissa > 0) & (exponent != 0xFE) & ~((exponent == 0) & (mantissa <= 0x400000))
        exponent = exponent + up
        exponent = np.where(np.isinf(ratio), 0xFE, exponent)
        exponent = np.where(np.isnan(ratio), _E8M0_NAN, exponent)
        return exponent.astype(np.uint8)


def _quant_factors(scales, scaling):
    """What x is multiplied by: the fp32 scale, or 1 / X for MX (exact powers of two)."""
    if scaling == "mx":
        e = np.asarray(scales).astype(np.int64)
        return np.where(e == _E8M0_NAN, np.nan, np.ldexp(1.0, _E8M0_BIAS - np.minimum(e, 254)))
    return np.asarray(scales, dtype=np.float64)


def _dequant_factors(scales, scaling):
    """What elements are multiplied by: X for MX, else the fp32 reciprocal of the scale."""
    if scaling == "mx":
        e = np.asarray(scales).astype(np.int64)
        return np.where(e == _E8M0_NAN, np.nan, np.ldexp(1.0, np.minimum(e, 254) - _E8M0_BIAS))
    with np.errstate(all="ignore"):
        return np.asarray(_round_fp32(1.0 / np.asarray(scales, dtype=np.float64)))  # innocuous, as above
