"""softfloat: bit-exact software IEEE 754 floating point on numpy arrays.

Formats (FP64 down to FP4 and custom ones), correctly rounded conversion in every IEEE
rounding mode plus stochastic and round-to-odd, exact decoding, classification and the
five IEEE exception flags as data; arithmetic in the format itself; sums, dot and matrix
products with an explicit accumulator, order and tensor-core model.  Values travel as bit
patterns (unsigned integer arrays); every function has a doctested example.

Formats
    Format, Specials, catalogue, aliases, as_format (names such as "bf16", layouts such
    as "e6m9", numpy/ml_dtypes dtypes, torch dtype names); the catalogue: fp64, fp32,
    tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, fp8_e4m3fnuz, fp8_e5m2fnuz, fp6_e3m2, fp6_e2m3,
    fp4_e2m1.

Values and bit patterns
    encode(x, fmt) rounds numbers into bit patterns, once, in any Rounding mode (and
    Tininess rule); decode(bits, fmt) gives their exact values; quantize(x, fmt) is both;
    fields, compose.

Rounding attributes and platforms
    RoundingAttributes: rounding, tininess, subnormals, saturate and a Platform as one
    value, taken by every function that rounds as attributes= (its keywords are
    shortcuts; a keyword given wins).  Platform, PLATFORMS ("default", "x86-sse", "arm",
    "arm-default-nan", "riscv", "cuda"), NanPropagation: what IEEE leaves to the
    processor -- the default NaN, NaN propagation, tininess, invalid integer results.

Classes (IEEE 754 section 5.7.2)
    classify, FLOAT_CLASSES, is_nan, is_signaling, is_infinite (is_inf), is_finite,
    is_zero, is_subnormal, is_normal, is_sign_minus.

Arithmetic on bit patterns, correctly rounded once (softfloat.ops)
    add(a, b, fmt), sub(a, b, fmt), mul(a, b, fmt), div(a, b, fmt), sqrt(a, fmt),
    fma(a, b, c, fmt); convert(bits, src_fmt, dst_fmt), round_to_integral, to_int,
    from_int, INVALID_INTEGER; NaN results follow the platform (NAN_POLICY: the default's).

Sign, comparison and neighbours (softfloat.ops)
    neg, abs, copysign; eq, ne, lt, le, gt, ge, unordered, total_order, total_order_mag;
    minimum, maximum, minimum_number, maximum_number, minimum_magnitude,
    maximum_magnitude, minimum_magnitude_number, maximum_magnitude_number; next_up,
    next_down, ulp.

Sums, dot and matrix products (softfloat.accumulate)
    sum(x, fmt), vecdot(a, b, fmt), matmul(a, b, fmt) with an explicit accumulator format,
    order and rounding, or a tensor-core model (FusedAccumulator, presets such as "h100").

numpy code in emulated precision
    asarray(x, fmt) -> Array: numpy's ufuncs and functions on it are the operations
    above, each rounded once in the format, with the attributes of context(...) (a
    Context in contextvars, get_context()): its sticky flags count what happened, its
    traps raise FloatingPointSignal errors (InvalidOperation, DivisionByZero, Overflow,
    Underflow, Inexact; all ArithmeticErrors).

What rounding did
    Flags (the five IEEE exceptions per element, FLAG_NAMES) and AccumulationFlags
    (with swamped additions); outcomes(bits, fmt, flags) -> Outcomes (exact, rounded,
    became subnormal, became zero, saturated, became +-inf, NaN: OUTCOME_NAMES);
    error_stats(x, bits, fmt) -> ErrorStats (absolute and relative error, SQNR).

Exchange with ml_dtypes, torch and JAX (softfloat.interop)
    bits_of(x) -> (bits, Format): an ml_dtypes array or torch tensor (bfloat16, FP8, ...)
    read as its bit patterns, a view; to_ml_dtypes(bits, fmt) and to_torch(bits, fmt)
    write them back without copying; dtype_names(fmt). encode and quantize also take
    torch tensors, JAX arrays and anything with __array__ or __dlpack__.

Scaled quantisation (softfloat.scaled): how FP8/FP6/FP4 tensors are stored
    scaled_encode(x, fmt, scaling="tensor" | "rows" | "blocks" | "mx") -> ScaledTensor
    (element bits, fp32 scales or OCP MX E8M0 scales, amax), scaled_decode for its exact
    values, DelayedScaling (Transformer Engine's amax history and scale update).

Teaching
    explain(x, fmt) -> Explanation: one rounding bit by bit; or one operation such as
    explain("2048 + 1", "fp16") -> OperationExplanation (+, -, *, /, sqrt, fma: the
    exact result, its neighbours, guard/round/sticky and why the result won); bit_string.
    The command line: ``softfloat --help``.

Precision recipes (softfloat.recipes) and PyTorch models (softfloat.torch)
    recipes.RECIPES: where each tensor of a training step lives (fp32, O1, O2, O3, fp16,
    bf16, bf16-pure, fp8, fp8-current, fp8-block, mxfp8, mxfp4), each with its source;
    recipes.GemmEngine runs a recipe's matrix products bit-exact.  softfloat.torch
    (``pip install "softfloat-emu[torch]"``, imported on demand): emulate(recipe,
    accumulator=...) runs a model's products, forward and backward, in the recipe;
    quantize(tensor, fmt) rounds a tensor.

Mixed-precision training lab (softfloat.training)
    training.run(policy="O2") trains a small MLP on the digits with every product,
    accumulation and update rounded as a precision Policy (a recipe) says, with a LossScaler
    (torch.amp.GradScaler's rule) and per-step telemetry of underflow, overflow and
    swamped updates; training.compare([...]) tabulates several; ``softfloat train``.

Checkpoints in a format (softfloat.checkpoint)
    quantize_checkpoint(src, dst, fmt) rounds every float tensor of a .npy, .npz or
    .safetensors file and writes .npy, .npz, .safetensors or torch .pt atomically, one
    report row per tensor (``softfloat quantize``); load_checkpoint(path) reads it back
    as values, FP6/FP4/custom-layout bit patterns decoded.

Every core, and arrays larger than memory
    encode, decode, quantize and the operations run their blocks on threads:
    ``workers=`` per call, set_workers(n) / get_workers() for the process (every core
    unless set; the same bits and flags for any count).  dask arrays in give lazy dask
    arrays out (``pip install "softfloat-emu[dask]"``), stochastic rounding included, bit for
    bit as in memory; sum, vecdot and matmul on dask arrays keep their accumulation order.
    from_npy(path, chunks) reads a .npy larger than memory as a lazy dask array, and
    to_npy(bits, path) writes one chunk by chunk, on any scheduler (a cluster too).

Optional modules: softfloat.strategies (hypothesis strategies, needs the test extra) and
softfloat.testing (bit-level assertions).
"""

from .accumulate import FusedAccumulator, matmul, sum, vecdot  # noqa: A004 - numpy's names
from .array import Array, asarray
from ._context import (Context, DivisionByZero, FloatingPointSignal, Inexact, InvalidOperation, Overflow,
                      Underflow, context, get_context)
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
from .explain import Explanation, OperationExplanation, bit_string, explain
from .flags import FLAG_NAMES, OUTCOME_NAMES, AccumulationFlags, Flags, Outcomes
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
from .ops import (  # noqa: A004 - abs is IEEE's name (like numpy.abs), kept out of __all__
    abs,
    INVALID_INTEGER,
    NAN_POLICY,
    add,
    convert,
    copysign,
    div,
    eq,
    fma,
    from_int,
    ge,
    gt,
    le,
    lt,
    maximum,
    maximum_magnitude,
    maximum_magnitude_number,
    maximum_number,
    minimum,
    minimum_magnitude,
    minimum_magnitude_number,
    minimum_number,
    mul,
    ne,
    neg,
    next_down,
    next_up,
    round_to_integral,
    sqrt,
    sub,
    to_int,
    total_order,
    total_order_mag,
    ulp,
    unordered,
)
from .interop import bits_of, dtype_names, to_ml_dtypes, to_torch
from .checkpoint import load_checkpoint, quantize_checkpoint
from .npy import from_npy, to_npy
from .report import ErrorStats, error_stats, outcomes
from .rounding import Rounding, Tininess
from .attributes import RoundingAttributes
from .platforms import PLATFORMS, NanPropagation, Platform
from .scaled import DelayedScaling, ScaledTensor, scaled_decode, scaled_encode
from . import recipes  # noqa: F401 - softfloat.recipes, the precision recipes (a subpackage, not in __all__)
from . import _context as _context_module

_context_module.ACCUMULATOR_CHECK = recipes.check_accumulator  # context(accumulator=...) checked on entry
from . import training  # noqa: F401 - softfloat.training, the lab (a subpackage, not in __all__)

from ._version import __version__
from ._blocks import get_workers, set_workers

__all__ = [
    "__version__", "AccumulationFlags", "Explanation", "FLAG_NAMES", "FLOAT_CLASSES", "Flags", "Format",
    "OperationExplanation", "Rounding", "RoundingAttributes", "Specials",
    "NanPropagation", "PLATFORMS", "Platform",
    "Tininess", "aliases", "as_format", "bit_string", "catalogue", "classify", "compose",
    "decode", "encode", "explain", "fields",
    "is_finite", "is_inf", "is_infinite", "is_nan", "is_normal", "is_sign_minus",
    "is_signaling", "is_subnormal", "is_zero", "quantize",
    "bf16", "fp4_e2m1", "fp6_e2m3", "fp6_e3m2", "fp8_e4m3", "fp8_e4m3fnuz", "fp8_e5m2",
    "fp8_e5m2fnuz", "fp16", "fp32", "fp64", "tf32",
    # operations (softfloat.ops)
    "INVALID_INTEGER",
    "NAN_POLICY",
    "add",
    "convert",
    "copysign",
    "div",
    "eq",
    "fma",
    "from_int",
    "ge",
    "gt",
    "le",
    "lt",
    "maximum",
    "maximum_magnitude",
    "maximum_magnitude_number",
    "maximum_number",
    "minimum",
    "minimum_magnitude",
    "minimum_magnitude_number",
    "minimum_number",
    "mul",
    "ne",
    "neg",
    "next_down",
    "next_up",
    "round_to_integral",
    "sqrt",
    "sub",
    "to_int",
    "total_order",
    "total_order_mag",
    "ulp",
    "unordered",
    # emulated-precision arrays and their context
    "Array",
    "Context",
    "DivisionByZero",
    "FloatingPointSignal",
    "Inexact",
    "InvalidOperation",
    "Overflow",
    "Underflow",
    "asarray",
    "context",
    "get_context",
    # sums, dot and matrix products (softfloat.accumulate)
    "FusedAccumulator",
    "matmul",
    "sum",
    "vecdot",
    # threads (softfloat._blocks) and files larger than memory (softfloat.npy, needs dask)
    "from_npy",
    "get_workers",
    "set_workers",
    "to_npy",
    # what rounding did to the values (softfloat.report)
    "ErrorStats",
    "OUTCOME_NAMES",
    "Outcomes",
    "error_stats",
    "outcomes",
    # exchange with ml_dtypes, torch and JAX (softfloat.interop)
    "bits_of",
    "dtype_names",
    "to_ml_dtypes",
    "to_torch",
    # checkpoints in a format, written atomically, and loaded back as values (softfloat.checkpoint)
    "load_checkpoint",
    "quantize_checkpoint",
    # scaled quantisation: FP8/MX elements sharing scales (softfloat.scaled)
    "DelayedScaling",
    "ScaledTensor",
    "scaled_decode",
    "scaled_encode",
]
