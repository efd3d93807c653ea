"""numpy and ml_dtypes dtypes that encode the same way as softfloat's small formats: the
reference side of the exhaustive tests (they share no code with softfloat)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import softfloat as sf

#: catalogue format -> the numpy / ml_dtypes dtype with the same encoding
REFERENCE = {
    sf.fp16: np.dtype(np.float16),
    sf.bf16: np.dtype(ml_dtypes.bfloat16),
    sf.fp8_e4m3: np.dtype(ml_dtypes.float8_e4m3fn),
    sf.fp8_e5m2: np.dtype(ml_dtypes.float8_e5m2),
    sf.fp8_e4m3fnuz: np.dtype(ml_dtypes.float8_e4m3fnuz),
    sf.fp8_e5m2fnuz: np.dtype(ml_dtypes.float8_e5m2fnuz),
    sf.fp6_e3m2: np.dtype(ml_dtypes.float6_e3m2fn),
    sf.fp6_e2m3: np.dtype(ml_dtypes.float6_e2m3fn),
    sf.fp4_e2m1: np.dtype(ml_dtypes.float4_e2m1fn),
}
#: small custom formats the exhaustive tests add to the catalogue's
CUSTOM_FORMATS = (
    sf.Format(exponent_bits=6, mantissa_bits=9),                   # 16-bit IEEE
    sf.Format(exponent_bits=3, mantissa_bits=4, specials="fnuz"),
    sf.Format(exponent_bits=3, mantissa_bits=2, specials="fn"),
    sf.Format(exponent_bits=2, mantissa_bits=2),                   # 5-bit IEEE: inf and NaNs
)


def reference_view(fmt, patterns) -> np.ndarray:
    """The patterns viewed as the reference dtype (FP6/FP4 live in the low bits of a uint8)."""
    ref = REFERENCE[fmt]
    return np.asarray(patterns).astype({1: np.uint8, 2: np.uint16}[ref.itemsize]).view(ref)


def reference_values(fmt, patterns, dtype=np.float64) -> np.ndarray:
    """The reference dtype's values of the patterns (its sNaN -> float casts may quiet)."""
    with np.errstate(invalid="ignore"):
        return reference_view(fmt, patterns).astype(dtype)


def reference_bits(fmt, values) -> np.ndarray:
    """Bit patterns of a reference-dtype array, as uint64."""
    ref = REFERENCE[fmt]
    return values.view({1: np.uint8, 2: np.uint16}[ref.itemsize]).astype(np.uint64)
