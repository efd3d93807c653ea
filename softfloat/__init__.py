"""softfloat: bit-exact software IEEE 754 floating point on numpy arrays.

Formats (FP64 down to FP4 and custom ones), correctly rounded conversion in every IEEE
rounding mode plus stochastic and round-to-odd, exact decoding, classification and the
five IEEE exception flags as data.
"""

from .codec import (
    FLOAT_CLASSES,
    classify,
    compose,
    decode,
    encode,
    fields,
    is_finite,
    is_inf,
    is_infinite,
    is_nan,
    is_normal,
    is_sign_minus,
    is_signaling,
    is_subnormal,
    is_zero,
    quantize,
)
from .explain import Explanation, bit_string, explain
from .flags import FLAG_NAMES, Flags
from .formats import (
    Format,
    Specials,
    aliases,
    as_format,
    bf16,
    catalogue,
    fp4_e2m1,
    fp6_e2m3,
    fp6_e3m2,
    fp8_e4m3,
    fp8_e4m3fnuz,
    fp8_e5m2,
    fp8_e5m2fnuz,
    fp16,
    fp32,
    fp64,
    tf32,
)
from .ops import NAN_POLICY, add, div, fma, mul, sqrt, sub
from .rounding import Rounding, Tininess

from ._version import __version__

__all__ = [
    "__version__", "NAN_POLICY", "add", "sub", "mul", "div", "sqrt", "fma", "Explanation", "FLAG_NAMES", "FLOAT_CLASSES", "Flags", "Format", "Rounding", "Specials",
    "Tininess", "aliases", "as_format", "bit_string", "catalogue", "classify", "compose",
    "decode", "encode", "explain", "fields",
    "is_finite", "is_inf", "is_infinite", "is_nan", "is_normal", "is_sign_minus",
    "is_signaling", "is_subnormal", "is_zero", "quantize",
    "bf16", "fp4_e2m1", "fp6_e2m3", "fp6_e3m2", "fp8_e4m3", "fp8_e4m3fnuz", "fp8_e5m2",
    "fp8_e5m2fnuz", "fp16", "fp32", "fp64", "tf32",
]
