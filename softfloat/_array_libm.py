"""float64 libm on :class:`~softfloat.Array` operands: numpy's exp, log, sin, ... of the
exact values, rounded once into the format -- NOT correctly rounded (float64 libm is
faithful); inexact on every finite result.  The general route decodes, calls libm and
encodes; shortcuts give its bits and flags faster where they can show it: a table of
every pattern (formats of at most 16 bits, after TABLE_AFTER calls), one element on
numpy scalars, short fp16 and fp32 arrays by numpy's casts."""

from __future__ import annotations

import math

import numpy as np

from . import _fastpaths, codec
from ._context import Context
from ._encode import encode_general, encode_scalar
from ._flagmasks import FLAG_BITS, flags_of_code, flags_of_codes
from ._workspace import Workspace
from .flags import Flags
from .formats import fp16, fp32
from .ops.kernels import default_nan
from .platforms import NanPropagation
from .rounding import Rounding

__all__ = ["TABLE_AFTER", "libm", "rounded_once"]


def libm(ufunc):
    """float64 libm on the exact values, rounded once; inexact on every finite result,
    invalid (and the platform's default NaN) where a NaN comes from operands that are not
    NaNs (log(-1), (-1) ** 0.5); NaN operands give the default NaN too on platforms that
    always return it."""
    def call(fmt, ctx, *bits):
        if len(bits) == 1 and (bits[0].size == 1 or bits[0].size > _SHORT_FLOAT16 or fmt is not fp16):
            done = _by_table(ufunc, fmt, ctx, bits[0])  # (fp16's short arrays: in _libm_float16)
            if done is not None:
                return done
        if all(b.size == 1 for b in bits):  # ndarrays or numpy scalars
            done = _libm_one(ufunc, fmt, ctx, bits)
            if done is not None:
                return done
        elif fmt is fp16 or fmt == fp16:
            done = _libm_float16(ufunc, ctx, bits)
            if done is not None:
                return done
        elif fmt is fp32 or fmt == fp32:
            done = _libm_float32(ufunc, ctx, bits)
            if done is not None:
                return done
        operands = [np.asarray(codec.decode(b, fmt)) for b in bits]
        with np.errstate(all="ignore"):
            values = ufunc(*operands)
        return rounded_once(fmt, ctx, values, operands, np.isfinite(values), ufunc)
    return call


_INEXACT = int(FLAG_BITS["inexact"])

#: the most fp16 results :func:`_libm_float16` takes (the codec's short float64 -> fp16
#: cast; longer arrays keep the general route, whose blocks cost less per element)
_SHORT_FLOAT16 = 1 << 12


def _libm_float16(ufunc, ctx, bits):
    """``libm``'s result and flags for fp16 operands in round to nearest even, gradual
    underflow, no saturation, at most ``_SHORT_FLOAT16`` results, without the general
    route's passes: the float64 values by numpy's float16 -> float64 cast (exact, as
    ``codec.decode``'s), the same libm call, and the codec's own rounding of that block
    (``softfloat._fastpaths.encode_block``, which takes its short float64 -> fp16 cast
    with the flags from its result).  Where every value is finite (the cast leaves no
    lane to the general encoder), ``_rounded_once`` adds no invalid flag, places no
    default NaN and ORs ``inexact`` with ``isfinite`` -- all True -- so the flags are the
    cast's overflow and underflow, inexact everywhere, the rest clear.  None (the
    general route) where ``softfloat._fastpaths.ENABLED`` is off, an attribute differs,
    the results are too many, or one is infinite or a NaN."""
    attrs = ctx.attributes
    if len(bits) == 1 and bits[0].size <= _SHORT_FLOAT16:
        done = _by_table(ufunc, fp16, ctx, bits[0])
        if done is not None:
            return done
    if (not _fastpaths.ENABLED or attrs.rounding is not Rounding.NEAREST_EVEN or not attrs.subnormals
            or attrs.saturate or any(b.size > _SHORT_FLOAT16 for b in bits)):
        return None
    operands = [np.asarray(b).view(np.float16).astype(np.float64) for b in bits]
    with np.errstate(all="ignore"):
        values = np.asarray(ufunc(*operands))
    n = values.size
    if n == 0 or n > _SHORT_FLOAT16:
        return None
    out = np.empty(n, dtype=np.uint16)
    found = _fastpaths.encode_block(values.reshape(-1), fp16, attrs, ctx.track_flags, out, Workspace(n),
                                    encode_general)
    if found is None or found[1] is not None:  # declined, or infinite / NaN lanes left
        return None
    shape = values.shape
    result = out.reshape(shape)
    masks = found[0]
    if masks is None:
        return result, None
    clear = [np.zeros(shape, dtype=bool) for _ in range(2)]
    return result, Flags(*clear, masks.overflow.reshape(shape), masks.underflow.reshape(shape),
                         np.ones(shape, dtype=bool))


#: the most fp32 results :func:`_libm_float32` takes (a block's worth: no larger temporaries)
_SHORT_FLOAT32 = 1 << 14


def _libm_float32(ufunc, ctx, bits):
    """``libm``'s result and flags for fp32 operands in round to nearest even where every
    result is zero or an fp32 normal number after the same libm call on the same float64
    values (numpy's float32 -> float64 cast is exact, as ``codec.decode``'s): the
    rounding is then numpy's float64 -> float32 cast (``softfloat._fastpaths.
    float32_nearest_even``, its proof there: nothing is tiny, nothing overflows, no
    option changes anything), no result is a NaN (no invalid, no default NaN), and
    ``_rounded_once`` ORs ``isfinite`` -- all True -- into inexact: the flags are inexact
    everywhere and nothing else.  None (the general route) where the mode differs, the
    results are too many or one is outside that range (or the shortcuts are off)."""
    if ctx.attributes.rounding is not Rounding.NEAREST_EVEN or any(b.size > _SHORT_FLOAT32 for b in bits):
        return None
    with np.errstate(all="ignore"):  # (a signalling NaN's cast: the general route takes it)
        operands = [np.asarray(b).view(np.float32).astype(np.float64) for b in bits]
        values = np.asarray(ufunc(*operands))
    found = _fastpaths.float32_nearest_even(values)
    if found is None:
        return None
    result = found[0]
    if not ctx.track_flags:
        return result, None
    clear = np.zeros(result.shape, dtype=bool)
    return result, Flags(clear, clear, clear, clear, np.ones(result.shape, dtype=bool))


def _libm_one(ufunc, fmt, ctx, bits):
    """``libm``'s result and flags for operands of one element, on numpy float64 scalars:
    the same float64 libm call and the same one rounding (the codec's scalar rounding,
    ``softfloat._encode.encode_scalar``, or ``codec.encode`` where that declines), without
    the arrays (result and flags shaped as the operands broadcast).  None where an
    operand or the result is a NaN (the general path chooses NaN results)."""
    shape = max((b.shape for b in bits), key=len)  # one element each: the longest shape is the broadcast
    native = fmt.native_dtype
    bits = [b.reshape(()) if b.ndim else b for b in bits]
    operands = [np.float64(b.view(native)) if native is not None else np.float64(codec.decode(b, fmt))
                for b in bits]
    with np.errstate(all="ignore"):
        value = ufunc(*operands)
    if value != value or any(x != x for x in operands):
        return None
    found = encode_scalar(value, fmt, ctx.attributes)  # finite values and zeros, deterministic modes
    if found is not None:
        pattern, code = found
        result = np.array([pattern], dtype=fmt.storage_dtype).reshape(shape) if shape else fmt.storage_dtype.type(pattern)
        # a finite libm result is taken as inexact
        return result, (flags_of_code(code | _INEXACT, shape) if ctx.track_flags else None)
    result, flags = ctx.split(codec.encode(value, fmt, return_flags=ctx.track_flags, attributes=ctx.attributes,
                                           rng=ctx.rng))
    if shape:
        result = np.asarray(result).reshape(shape)
    if flags is None:
        return result, None
    inexact = flags.inexact or math.isfinite(value)  # a finite libm result is taken as inexact
    found = _infinite(ufunc, np.float64(value), operands)
    overflow, pole = (False, False) if found is None else (bool(found[0]), bool(found[1]))
    if not shape and inexact is flags.inexact and found is None:
        return result, flags
    masks = (flags.invalid, flags.divide_by_zero or pole, flags.overflow or overflow, flags.underflow,
             inexact or overflow)
    return result, Flags(*(np.bool_(m).reshape(shape) for m in masks))


#: calls of one (ufunc, format, attributes) before _by_table fills its table (the general
#: route on every pattern, 2-5 ms for fp16, which a few calls never pay for)
TABLE_AFTER = 32
_TABLES: dict = {}  # (ufunc, id(fmt), id(attrs)) -> [fmt, attrs, calls, (bits, codes, NaN in or out) or None]


def _by_table(ufunc, fmt, ctx, bits):
    """``libm``'s result and flags for one operand of at most 16 bits in a deterministic
    mode: one lookup in a table of the general route's bits and packed flags
    (softfloat._flagmasks.FLAG_BITS) for every pattern, filled by that route (decode,
    libm, ``_rounded_once``) at the key's TABLE_AFTER-th call.  That route is elementwise
    and reads only the pattern and the attributes (stochastic rounding, which draws, is
    excluded), so each lane's bits and flags are its.  None (the caller's route) where
    switched off (softfloat._fastpaths.ENABLED), declined or not filled yet."""
    attrs = ctx.attributes
    if not _fastpaths.ENABLED or fmt.bits > 16 or attrs.rounding is Rounding.STOCHASTIC:
        return None
    entry = _TABLES.get((ufunc, id(fmt), id(attrs)))
    if entry is None or entry[0] is not fmt or entry[1] is not attrs:  # (the entry holds both: ids stay theirs)
        if len(_TABLES) >= 64:
            _TABLES.clear()
        entry = _TABLES[(ufunc, id(fmt), id(attrs))] = [fmt, attrs, 0, None]
    if entry[3] is None:
        entry[2] += 1
        if entry[2] < TABLE_AFTER:
            return None
        entry[3] = _fill(ufunc, fmt, attrs)
    table, codes, nan = entry[3]
    shape = bits.shape  # (ndarrays and numpy scalars)
    if bits.size == 1:
        p = bits.item()
        if not shape and nan.item(p):
            return None  # (0-d NaNs: the general route's 0-d arrays, not _libm_one's scalars)
        result = np.array([table.item(p)], table.dtype) if shape else table.dtype.type(table.item(p))
        return result.reshape(shape) if len(shape) > 1 else result, \
            (flags_of_code(codes.item(p), shape) if ctx.track_flags else None)
    result, code = np.take(table, bits), np.take(codes, bits) if ctx.track_flags else None
    if code is None or code.size == 0 or code.min() == code.max():
        return result, None if code is None else flags_of_code(int(code.min()) if code.size else 0, shape)
    return result, flags_of_codes(code)


def _fill(ufunc, fmt, attrs):
    """(bits, packed flags, NaN in or out) of the general route for every pattern of ``fmt``."""
    ctx = Context(attributes=attrs)  # a private context: flags tracked, nothing recorded in the caller's
    operand = np.asarray(codec.decode(np.arange(1 << fmt.bits, dtype=fmt.storage_dtype), fmt))
    with np.errstate(all="ignore"):
        values = ufunc(operand)
    bits, flags = rounded_once(fmt, ctx, values, [operand], np.isfinite(values), ufunc)
    codes = sum(np.where(np.asarray(getattr(flags, name)), b, np.uint8(0)) for name, b in FLAG_BITS.items())
    bits.flags.writeable = codes.flags.writeable = False
    return bits, codes, np.isnan(values) | np.isnan(operand)


def _pole(ufunc, operands):
    """Where the operands are a pole of ``ufunc`` (an exact infinite result: divideByZero,
    IEEE 754 9.2), for the libm functions that have one; None for the others."""
    x = operands[0]
    name = getattr(ufunc, "__name__", "")
    if ufunc in (np.log, np.log2, np.log10):
        return x == 0
    if ufunc is np.log1p:
        return x == -1
    if ufunc is np.arctanh or name == "erfinv":
        return np.abs(x) == 1
    if ufunc is np.power:
        return x == 0  # (a negative exponent: the infinite results' only finite cause there)
    if name in ("gamma", "gammaln", "digamma"):
        return (x <= 0) & (x == np.floor(x))
    if name in ("logit", "ndtri"):
        return (x == 0) | (x == 1)
    if name == "erfcinv":
        return (x == 0) | (x == 2)
    return None


def _infinite(ufunc, values, operands):
    """(overflow, divide_by_zero): the infinite results of finite operands, an overflow
    (inexact too) but at a pole of the function, where they divide by zero; None where
    there are none (or no ufunc is named)."""
    if ufunc is None:
        return None
    made = np.isinf(values)
    if not made.any():
        return None
    for x in operands:
        made &= np.isfinite(x)
    pole = _pole(ufunc, operands)
    at_pole = np.zeros_like(made) if pole is None else made & pole
    return made & ~at_pole, at_pole


def rounded_once(fmt, ctx, values, operands, inexact=False, ufunc=None):
    """float64 ``values`` computed from the float64 ``operands`` rounded once into ``fmt``
    (the context's attributes; ``inexact`` OR-ed into the flag): a NaN from operands that
    are not NaNs is invalid and the platform's default NaN, as is every NaN on platforms
    that always return the default one; an infinity from finite operands of the libm
    ``ufunc`` overflows (inexact), or divides by zero at a pole (:func:`_pole`)."""
    done = _short_float16(fmt, ctx, values, inexact)
    if done is not None:
        return done
    result, flags = ctx.split(codec.encode(values, fmt, return_flags=ctx.track_flags, **ctx.options()))
    nan = np.isnan(values)
    invalid = nan.copy()
    for x in operands:
        invalid &= ~np.isnan(x)
    result = np.array(result, dtype=fmt.storage_dtype)
    always_default = ctx.platform.nan_propagation is NanPropagation.DEFAULT_NAN  # RISC-V, NVIDIA
    result[nan if always_default else invalid] = default_nan(fmt, ctx.attributes)
    if flags is None:
        return result, None
    flags = flags._replace(inexact=np.asarray(flags.inexact | inexact), invalid=np.asarray(flags.invalid | invalid))
    found = _infinite(ufunc, values, operands)
    if found is None:
        return result, flags
    overflow, pole = found
    return result, flags._replace(overflow=np.asarray(flags.overflow | overflow),
                                  divide_by_zero=np.asarray(flags.divide_by_zero | pole),
                                  inexact=np.asarray(flags.inexact | overflow))


def _short_float16(fmt, ctx, values, inexact):
    """:func:`rounded_once` of at most ``_SHORT_FLOAT16`` finite float64 values into fp16 in
    round to nearest even, gradual underflow, no saturation: the codec's own rounding of
    the block (``softfloat._fastpaths.encode_block``, as ``codec.encode`` reaches it for
    such a block) without the codec's layers.  With every value finite no NaN is made (no
    invalid, no default NaN) and no infinity comes from finite operands by a libm pole
    (an overflow is the cast's): the flags are the cast's overflow, underflow and inexact
    (OR ``inexact``).  None (the general route) where the shortcuts are off, an attribute
    differs, the values are too many or 0-d, or one is infinite or a NaN."""
    attrs = ctx.attributes
    if (not _fastpaths.ENABLED or fmt is not fp16 or attrs.rounding is not Rounding.NEAREST_EVEN
            or not attrs.subnormals or attrs.saturate or values.ndim == 0 or not 0 < values.size <= _SHORT_FLOAT16):
        return None
    out = np.empty(values.size, dtype=np.uint16)
    found = _fastpaths.encode_block(np.ascontiguousarray(values, dtype=np.float64).reshape(-1), fp16, attrs,
                                    ctx.track_flags, out, Workspace(values.size), encode_general)
    if found is None or found[1] is not None:  # declined, or infinite / NaN lanes left
        return None
    shape, masks = values.shape, found[0]
    result = out.reshape(shape)
    if masks is None:
        return result, None
    clear = np.zeros(shape, dtype=bool)
    return result, Flags(clear, clear.copy(), masks.overflow.reshape(shape), masks.underflow.reshape(shape),
                         masks.inexact.reshape(shape) | inexact)
