"""How ``x * scale`` is formed: x as the multiply mode reads it, the products exact or
rounded to odd, and when an fp32 product needs no rounding."""

from __future__ import annotations

import numpy as np

from .._fpenv import flushes_subnormals
from ..codec import decode, encode, quantize
from ..formats import fp32, fp64, native_format
from ..ops import mul
from ._fp32 import _FP32_MAX


def exact_products(values, multiplier, wide):
    """``values * multiplier`` (float64 arrays, multiplier fp32 values) for ``multiply="exact"``:
    exact when ``values`` hold at most 24 significant bits (float16/float32/FP8/bf16 input:
    at most 48 bits, exact in float64); for wider values (``wide``: float64, integers) the
    product rounded to odd into float64, so that one later rounding into a format of p <= 51
    bits gives the exact product's rounding.  Also the checkpoint quantiser's product (its
    ``--scaling tensor``), piece by piece.  Not part of the public API.
    """
    if not wide:
        return values * multiplier
    product = mul(np.ascontiguousarray(values, dtype=np.float64).view(np.uint64),
                  encode(np.broadcast_to(multiplier, np.shape(values)), fp64), fp64, rounding="odd")
    return decode(product, fp64)


def _already_fp32(product, factors):
    """True when every product of fp32 values by power-of-two factors is itself an fp32
    value: zero, infinite, NaN or within [2**-126, fp32 max] (no rounding to do)."""
    f = np.asarray(factors)
    finite = f[np.isfinite(f)]
    if not np.all(np.frexp(finite)[0] == 0.5):
        return False
    mags = np.abs(product)
    tiny = (mags < fp32.min_normal) & (mags != 0)
    return not tiny.any() and not (np.isfinite(mags) & (mags > _FP32_MAX)).any()


def fp32_products(product, nearest_fp32, want_flags):
    """The float64 products ``product`` rounded to nearest-even fp32 (as float64), and the
    flags of that rounding (None without ``want_flags``): ``quantize(product, fp32)``.

    Without flags, where no product is a NaN and this thread keeps subnormals, numpy's
    float64 -> float32 cast gives the same values: it is IEEE's convertFormat in nearest
    even there (subnormal results kept, overflow to infinity), and the platform in
    ``nearest_fp32`` changes only the underflow flag's tininess, not a value (the NaNs'
    quieting is left to quantize).  A delayed scale (max / amax) is rarely a power of
    two, so this rounding runs on every FP8 cast: the cast costs ~1 us, quantize ~30 us
    on a small tensor.
    """
    if not want_flags and product.size and not flushes_subnormals():
        with np.errstate(invalid="ignore"):
            top = product.max()  # (max propagates a NaN: one reduction finds whether there is one)
        if top == top:
            with np.errstate(over="ignore"):  # overflow to infinity is the IEEE result
                return product.astype(np.float32).astype(np.float64), None
    scaled = quantize(product, fp32, attributes=nearest_fp32, return_flags=want_flags)
    return scaled if want_flags else (scaled, None)


def _source_values(arr, multiply, want_flags, nearest_fp32):
    """x as float64: its fp32 rounding (by ``nearest_fp32``, nearest-even attributes) for
    multiply="fp32"; whether it is wider than fp32 (the exact product then needs more than
    float64); flags of that rounding or None."""
    held = arr.dtype.type in (np.float16, np.float32)  # (without the format lookup: the common case)
    if not held:
        source = native_format(arr.dtype)
        held = source is not None and fp32.holds(source)
    if held:  # float16, float32
        with np.errstate(invalid="ignore"):  # a signalling NaN is quieted by the cast: no warning
            return arr.astype(np.float64), False, None
    if multiply == "fp32":
        values, flags = quantize(arr, fp32, attributes=nearest_fp32, return_flags=True)
        return np.asarray(values, dtype=np.float64), False, flags if want_flags else None
    if arr.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return arr.astype(np.float64), True, None
    # integers: round to odd into float64 (exact up to 2**53; odd keeps one rounding later)
    return np.asarray(quantize(arr, fp64, rounding="odd"), dtype=np.float64), True, None
