"""Bits <-> values: encode (correctly rounded, once), decode (exact), fields and classes.

``encode`` turns numbers into bit patterns of a :class:`~softfloat.Format`: float16/32/64
and integer arrays of any shape, strides and byte order, Python ints and floats, and exact
scalars (``Fraction``, ``Decimal``, decimal, hex-float and ratio strings).  Each input is
rounded once from its exact value, by the one rounding point in :mod:`softfloat._round`.
Large arrays stream through in blocks of ``_BLOCK`` elements, so the only full-size
allocations are the outputs.
"""

from __future__ import annotations

import numbers
import sys

import numpy as np

from . import _exact, _validate
from ._round import Policy, round_pack
from .flags import Flags
from .formats import Format, Specials, as_format, fp16, fp32, fp64
from .rounding import Rounding, Tininess, as_rounding, as_tininess

__all__ = [
    "encode",
    "decode",
    "quantize",
    "fields",
    "compose",
    "classify",
    "FLOAT_CLASSES",
    "is_nan",
    "is_signaling",
    "is_infinite",
    "is_inf",
    "is_finite",
    "is_zero",
    "is_subnormal",
    "is_normal",
    "is_sign_minus",
]

#: elements per block: a few 128 KiB buffers stay in L2 while a block is processed
_BLOCK = 1 << 14

_SOURCE_FORMAT = {np.dtype(np.float16): fp16, np.dtype(np.float32): fp32, np.dtype(np.float64): fp64}
_UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
_LITTLE_ENDIAN = sys.byteorder == "little"


# =====================================================================================
# public API
# =====================================================================================
def encode(x, fmt, rounding="nearest_even", *, saturate=False, subnormals=True,
           tininess="after", rng=None, return_flags=False):
    """Round numbers into ``fmt`` and return their bit patterns.

    Parameters
    ----------
    x : array_like or scalar
        float16/float32/float64 or integer arrays (any shape, strides, byte order), Python
        ints and floats, or exact scalars: ``fractions.Fraction``, ``decimal.Decimal``, and
        strings holding a decimal (``"6.36"``), a hex float (``"0x1.8p-3"``), a ratio
        (``"1/3"``), ``"inf"``, ``"nan"`` or ``"snan"``.  Every input is rounded once from
        its exact value; nothing goes through float64 or float32 on the way.
    fmt : Format or str
        Target format, e.g. ``softfloat.bf16`` or ``"e4m3"``.
    rounding : Rounding or str, default "nearest_even"
        One of ``nearest_even``, ``nearest_away``, ``toward_zero``, ``upward``,
        ``downward``, ``stochastic``, ``odd``.
    saturate : bool, default False
        Send overflows to +-max_finite instead of infinity (or, for formats without
        infinity, instead of NaN).  Formats without NaN (FP6, FP4) always saturate.
    subnormals : bool, default True
        False flushes tiny results to zero of the same sign (flush-to-zero), raising
        underflow and inexact.
    tininess : {"after", "before"}, default "after"
        When a result is tiny, for the underflow flag and flush-to-zero: after rounding
        (x86 SSE, RISC-V) or before rounding (ARM).
    rng : numpy.random.Generator or int, optional
        Source of random bits for ``rounding="stochastic"``; a seed makes results
        reproducible.  Each element takes one 64-bit draw in C order, so the result does
        not depend on how the array is blocked.  The rounding probability is exact when
        at most 63 bits are discarded (31 for float16/float32 input to formats narrower
        than float32), and otherwise accurate to 2**-63 (2**-31).
    return_flags : bool, default False
        Also return the IEEE exception flags as a :class:`~softfloat.Flags`.

    Returns
    -------
    bits : ndarray of ``fmt.storage_dtype`` (a scalar of that type for scalar input)
    flags : Flags, only with ``return_flags=True``

    Notes
    -----
    Overflow follows IEEE 754-2019 section 7.4: the nearest modes give +-inf, toward_zero
    +-max_finite, upward +inf / -max_finite, downward +max_finite / -inf; stochastic gives
    +-inf and odd +-max_finite.  The nearest-mode threshold is max_finite + half an ulp.
    Formats without infinity give NaN where IEEE gives infinity (OCP "non-saturating"),
    or +-max_finite with ``saturate=True``; FP6/FP4 always give +-max_finite.

    Special inputs: infinities stay infinite where the format has them; otherwise they
    become NaN and raise invalid, or +-max_finite with overflow and inexact when
    saturating.  A NaN becomes a quiet NaN with the same sign and the top bits of its
    payload (the single NaN of fn/fnuz formats); a signaling NaN raises invalid.  FP6/FP4
    have no NaN: a NaN input gives +0 and raises invalid (ml_dtypes gives -0).  fnuz
    formats have no -0: negative values that round to zero give +0.

    Examples
    --------
    >>> hex(encode(0.875, "fp32"))
    '0x3f600000'
    >>> hex(encode("1.00048828125000000000000000001", "fp16"))
    '0x3c01'
    >>> hex(encode(2**64 + 1, "fp32", rounding="upward"))
    '0x5f800001'
    >>> bits, flags = encode([1e-8, 70000.0], "fp16", return_flags=True)
    >>> [hex(b) for b in bits], flags.raised()
    (['0x0', '0x7c00'], ('overflow', 'underflow', 'inexact'))
    """
    fmt = as_format(fmt)
    policy, rng = _policy(rounding, tininess, subnormals, saturate, rng)
    return_flags = _validate.boolean("return_flags", return_flags)
    if _exact.is_exact_scalar(x):
        bits, flags = _encode_exact(_exact.parse_exact(x, "x"), fmt, policy, rng)
        return (bits, flags) if return_flags else bits
    arr = _input_array(x, "x")
    out = np.empty(arr.shape, dtype=fmt.storage_dtype)
    flags = Flags.none(arr.shape) if return_flags else None
    _stream(arr, fmt, policy, rng, out, None, flags)
    result = out[()] if out.ndim == 0 else out
    return (result, _scalar_flags(flags)) if return_flags else result


def decode(bits, fmt, dtype=np.float64):
    """Return the exact values of bit patterns of ``fmt``.

    Parameters
    ----------
    bits : int or integer array_like
        Bit patterns, each in [0, 2**fmt.bits).
    fmt : Format or str
    dtype : float dtype, default float64
        float16, float32 or float64; it must hold every value of ``fmt`` exactly
        (float64 always does).

    Returns
    -------
    ndarray of ``dtype`` (a scalar for scalar input).  NaNs keep their sign and payload
    bits; the fn/fnuz NaNs decode to a quiet NaN.

    Examples
    --------
    >>> decode(0x3C01, "fp16")
    np.float64(1.0009765625)
    >>> decode([0x7E, 0x7F, 0x01], "e4m3").tolist()
    [448.0, nan, 0.001953125]
    """
    fmt = as_format(fmt)
    dtype = _float_dtype("dtype", dtype)
    if not _holds(_SOURCE_FORMAT[dtype], fmt):
        raise ValueError(
            f"dtype={dtype} cannot hold every {fmt.name} value exactly; use float64 "
            "(or float32 for formats with at most 24-bit precision and 8-bit exponents)"
        )
    arr = _validate.bit_patterns("bits", bits, fmt.bits)
    out = np.empty(arr.shape, dtype=dtype)
    flat_in, flat_out = arr.reshape(-1), out.reshape(-1)
    ws = _Workspace(min(arr.size, _BLOCK))
    with np.errstate(all="ignore"):  # signaling NaN lanes are rewritten from their patterns
        for start in range(0, arr.size, _BLOCK):
            stop = min(start + _BLOCK, arr.size)
            _decode_block(flat_in[start:stop], fmt, flat_out[start:stop], ws)
    return out[()] if out.ndim == 0 else out


def quantize(x, fmt, rounding="nearest_even", *, saturate=False, subnormals=True,
             tininess="after", rng=None, return_flags=False):
    """Round ``x`` into ``fmt`` and return the rounded values: ``decode(encode(x))``.

    Takes the same arguments as :func:`encode`.  The result has ``x``'s own float dtype
    when that dtype holds every value of ``fmt`` (float32 stays float32 for bf16, fp16 and
    FP8), else the narrowest of float32 and float64 that does.  Integer arrays, Python
    floats and exact scalars give float64 (numpy scalars follow their dtype).  It is
    computed block by block, with no full-size temporary.

    Examples
    --------
    >>> import numpy as np
    >>> quantize(np.float32([0.1, 3.4e38]), "bf16").tolist()
    [0.10009765625, inf]
    >>> float(quantize("6.36", "fp16", rounding="toward_zero"))
    6.359375
    """
    fmt = as_format(fmt)
    policy, rng = _policy(rounding, tininess, subnormals, saturate, rng)
    return_flags = _validate.boolean("return_flags", return_flags)
    if _exact.is_exact_scalar(x):
        bits, flags = _encode_exact(_exact.parse_exact(x, "x"), fmt, policy, rng)
        value = _decode_block(np.asarray([bits], dtype=np.uint64), fmt)[0]
        return (value, flags) if return_flags else value
    arr = _input_array(x, "x")
    if arr.dtype.kind == "f":
        candidates = (arr.dtype.newbyteorder("="), np.dtype(np.float32), np.dtype(np.float64))
        out_dtype = next(d for d in candidates if _holds(_SOURCE_FORMAT[d], fmt))
    else:
        out_dtype = np.dtype(np.float64)
    out = np.empty(arr.shape, dtype=out_dtype)
    flags = Flags.none(arr.shape) if return_flags else None
    _stream(arr, fmt, policy, rng, None, out, flags)
    result = out[()] if out.ndim == 0 else out
    return (result, _scalar_flags(flags)) if return_flags else result


def fields(bits, fmt):
    """Split bit patterns into ``(sign, biased_exponent, trailing_significand)``.

    >>> [int(f) for f in fields(0x3F600000, "fp32")]
    [0, 126, 6291456]
    """
    fmt = as_format(fmt)
    arr = _validate.bit_patterns("bits", bits, fmt.bits).astype(fmt.storage_dtype)
    dt = fmt.storage_dtype.type
    sign = arr >> dt(fmt.bits - 1)
    exponent = (arr >> dt(fmt.mantissa_bits)) & dt((1 << fmt.exponent_bits) - 1)
    significand = arr & dt(fmt.mantissa_mask)
    return tuple(a[()] if a.ndim == 0 else a for a in (sign, exponent, significand))


def compose(sign, exponent, significand, fmt):
    """Assemble bit patterns from fields (the inverse of :func:`fields`); broadcasts.

    >>> hex(compose(0, 126, 0x600000, "fp32"))
    '0x3f600000'
    """
    fmt = as_format(fmt)
    s = _validate.bit_patterns("sign", sign, 1)
    e = _validate.bit_patterns("exponent", exponent, fmt.exponent_bits)
    f = _validate.bit_patterns("significand", significand, fmt.mantissa_bits)
    dt = fmt.storage_dtype
    s, e, f = np.broadcast_arrays(s.astype(dt), e.astype(dt), f.astype(dt))
    out = (s << dt.type(fmt.bits - 1)) | (e << dt.type(fmt.mantissa_bits)) | f
    return out[()] if out.ndim == 0 else out


#: IEEE 754-2019 section 5.7.2 class names, in class(x) order
FLOAT_CLASSES = (
    "signalingNaN", "quietNaN", "negativeInfinity", "negativeNormal", "negativeSubnormal",
    "negativeZero", "positiveZero", "positiveSubnormal", "positiveNormal", "positiveInfinity",
)


def classify(bits, fmt):
    """IEEE 754 class of each pattern: 'negativeInfinity', ..., 'quietNaN'.

    Formats whose NaN has no quiet bit (fn, fnuz) report 'quietNaN'.

    >>> classify([0x0001, 0x8000, 0x7C00, 0x7E00], "fp16").tolist()
    ['positiveSubnormal', 'negativeZero', 'positiveInfinity', 'quietNaN']
    >>> classify(0x3F600000, "fp32")
    'positiveNormal'
    """
    fmt = as_format(fmt)
    sign, exp, frac, nan, inf = _decompose(bits, fmt)
    signaling = nan & _signaling_bit_clear(frac, fmt)
    zero = (exp == 0) & (frac == 0) & ~nan
    sub = (exp == 0) & (frac != 0)
    code = np.where(sign, 3, 8)  # normal
    code = np.where(sub, np.where(sign, 4, 7), code)
    code = np.where(zero, np.where(sign, 5, 6), code)
    code = np.where(inf, np.where(sign, 2, 9), code)
    code = np.where(nan, np.where(signaling, 0, 1), code)
    names = np.asarray(np.asarray(FLOAT_CLASSES)[code])
    return str(names[()]) if names.ndim == 0 else names


def _predicate(name, doc, compute):
    def predicate(bits, fmt):
        fmt = as_format(fmt)
        result = compute(*_decompose(bits, fmt), fmt)
        return bool(result) if np.ndim(result) == 0 else result

    predicate.__name__ = predicate.__qualname__ = name
    predicate.__doc__ = f"{doc} (IEEE 754-2019 section 5.7.2), per bit pattern of ``fmt``."
    return predicate


is_nan = _predicate("is_nan", "True for NaNs", lambda s, e, f, nan, inf, fmt: nan)
is_signaling = _predicate(
    "is_signaling", "True for signaling NaNs",
    lambda s, e, f, nan, inf, fmt: nan & _signaling_bit_clear(f, fmt))
is_infinite = _predicate("is_infinite", "True for +-infinity", lambda s, e, f, nan, inf, fmt: inf)
is_inf = is_infinite
is_finite = _predicate("is_finite", "True for zeros, subnormals and normals",
                       lambda s, e, f, nan, inf, fmt: ~(nan | inf))
is_zero = _predicate("is_zero", "True for +-0",
                     lambda s, e, f, nan, inf, fmt: (e == 0) & (f == 0) & ~nan)
is_subnormal = _predicate("is_subnormal", "True for subnormal numbers",
                          lambda s, e, f, nan, inf, fmt: (e == 0) & (f != 0))
is_normal = _predicate("is_normal", "True for normal numbers",
                       lambda s, e, f, nan, inf, fmt: (e != 0) & ~(nan | inf))
is_sign_minus = _predicate("is_sign_minus", "True where the sign bit is set (NaNs included)",
                           lambda s, e, f, nan, inf, fmt: s)


# =====================================================================================
# input handling
# =====================================================================================
def _policy(rounding, tininess, subnormals, saturate, rng):
    policy = Policy(
        rounding=as_rounding(rounding),
        tininess=as_tininess(tininess),
        subnormals=_validate.boolean("subnormals", subnormals),
        saturate=_validate.boolean("saturate", saturate),
    )
    if policy.rounding is not Rounding.STOCHASTIC:
        if rng is not None and not isinstance(rng, (np.random.Generator, numbers.Integral)):
            raise TypeError(f"rng must be a numpy.random.Generator, an int seed or None; got {_validate.describe(rng)}")
        return policy, None
    if rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool)):
        return policy, np.random.default_rng(rng)
    if isinstance(rng, np.random.Generator):
        return policy, rng
    raise TypeError(
        f"rng must be a numpy.random.Generator, an int seed or None; got {_validate.describe(rng)}"
    )


def _input_array(x, argname):
    """Check a numeric input and return it as an ndarray (no copy when already one)."""
    arr = x if isinstance(x, np.ndarray) else None
    if arr is None:
        if isinstance(x, (np.generic, float, list, tuple)):
            try:
                arr = np.asarray(x)
            except (ValueError, OverflowError, TypeError) as exc:
                raise TypeError(f"{argname} could not be read as a numeric array: {exc}") from None
        else:
            raise TypeError(
                f"{argname} must be a float or integer array, a Python number, a Fraction, a "
                f"Decimal or a numeric string; got {_validate.describe(x)}"
            )
    kind = arr.dtype.kind
    if kind == "f" and arr.dtype.newbyteorder("=") in _SOURCE_FORMAT:
        return arr
    if kind in "iu":
        return arr
    what = {
        "c": "complex values have no single rounding; encode the real and imaginary parts separately",
        "O": "object arrays are not supported; pass exact scalars one at a time or convert to a float/int dtype",
        "U": "string arrays are not supported; pass one numeric string at a time",
        "S": "byte-string arrays are not supported",
        "b": "booleans are not numbers here; convert with .astype(np.uint8) if you mean 0/1",
        "f": "only float16, float32 and float64 are supported",
    }.get(kind, "expected a float or integer dtype")
    raise TypeError(f"{argname} has dtype {arr.dtype}: {what}")


def _float_dtype(argname, dtype):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{argname} must be float16, float32 or float64; got {_validate.describe(dtype)}") from None
    if dt not in _SOURCE_FORMAT:
        raise TypeError(f"{argname} must be float16, float32 or float64; got {dt}")
    return dt


def _holds(container: Format, fmt: Format) -> bool:
    """Can every value of ``fmt`` be written exactly in ``container``?"""
    return (fmt.precision <= container.precision and fmt.emax <= container.emax
            and fmt.emin - fmt.mantissa_bits >= container.emin - container.mantissa_bits)


def _scalar_flags(flags):
    if flags is None or flags.shape != ():
        return flags
    return Flags(*(np.bool_(m[()]) for _, m in flags))


# =====================================================================================
# the streaming driver
# =====================================================================================
class _Workspace:
    """Block-sized scratch arrays, allocated once per call and reused by every block."""

    def __init__(self, size: int):
        self.size = size
        self._buffers: dict[tuple[str, np.dtype], np.ndarray] = {}

    def get(self, name: str, dtype, n: int) -> np.ndarray:
        key = (name, np.dtype(dtype))
        buf = self._buffers.get(key)
        if buf is None:
            buf = self._buffers[key] = np.empty(self.size, dtype=dtype)
        return buf[:n]


def _stream(arr, fmt, policy, rng, bits_out, values_out, flags):
    """Encode ``arr`` block by block into ``bits_out`` and/or decoded ``values_out``.

    Blocks are taken in C order; non-contiguous or byte-swapped input is copied one block
    at a time.  NaN and infinity lanes are decided from their bit patterns, so numpy's
    floating-point warnings on them are silenced here.
    """
    n = arr.size
    native = arr.dtype.newbyteorder("=")
    direct = arr.flags.c_contiguous and arr.dtype.isnative
    flat_in = arr.reshape(-1) if direct else None
    flat_bits = None if bits_out is None else bits_out.reshape(-1)
    flat_vals = None if values_out is None else values_out.reshape(-1)
    flat_flags = None if flags is None else [m.reshape(-1) for _, m in flags]
    ws = _Workspace(min(n, _BLOCK))
    with np.errstate(all="ignore"):
        for start in range(0, n, _BLOCK):
            stop = min(start + _BLOCK, n)
            blk = flat_in[start:stop] if direct else np.asarray(arr.flat[start:stop]).astype(native, copy=False)
            rand = None if rng is None else rng.bit_generator.random_raw(stop - start)
            bits = ws.get("bits", fmt.storage_dtype, stop - start) if flat_bits is None else flat_bits[start:stop]
            fl = _encode_block(blk, fmt, policy, rand, flags is not None, bits, ws)
            if flat_vals is not None:
                _decode_block(bits, fmt, flat_vals[start:stop], ws)
            if flags is not None:
                for dst, src in zip(flat_flags, fl):
                    if src is not None:
                        dst[start:stop] = src


def _encode_block(blk, fmt, policy, rand, want, out, ws):
    """Encode one contiguous native block into ``out``; return the five flag masks (or
    None), invalid first, None for a flag that cannot be raised."""
    if blk.dtype.kind == "f":
        return _encode_floats(blk, fmt, policy, rand, want, out, ws)
    return _encode_ints(blk, fmt, policy, rand, want, out, ws)


#: float64's upper 32-bit word read as a format of its own (sign, 11 exponent bits, the
#: top 20 fraction bits); with the OR of the lower word in bit 0 it rounds exactly to
#: any format of at most 17 fraction bits (see _fp64_top_words)
_FP64_TOP = Format(exponent_bits=11, mantissa_bits=20, name="fp64-top-word")
_TOP_WORD_MAX_MANTISSA = 17


def _layout(src: Format, fmt: Format, rounding: Rounding) -> Format | None:
    """The word layout the pattern path rounds from, or None for the generic path.

    The pattern path needs a layout with at least one more fraction bit than the target
    and a target exponent range inside the layout's (so each layout subnormal is a target
    subnormal).  float16 input is widened to float32 (exact).  float64 input is read as
    its upper word plus a sticky bit when the target keeps at most 17 fraction bits --
    except for stochastic rounding, whose probability needs every discarded bit.
    """
    if src.bits <= 32 and fmt.mantissa_bits < fp32.mantissa_bits and fmt.emin >= fp32.emin:
        return fp32
    if fmt.mantissa_bits <= _TOP_WORD_MAX_MANTISSA and rounding is not Rounding.STOCHASTIC:
        return _FP64_TOP
    if fmt.mantissa_bits < fp64.mantissa_bits:
        return fp64
    return None


def _fp64_top_words(x, ws):
    """float64 -> uint32 words: the upper half of each pattern, bit 0 ORed with "the lower
    half is non-zero".

        | s | e (11) | f51 .. f32 |  f31 .. f0 |   ->   | s | e (11) | f51 .. f33 f32|sticky |

    Rounding to m <= 17 fraction bits cuts at least 3 bits of the upper word, so the
    sticky bit lies below the guard bit (also for the one-bit-finer tininess check),
    where it changes no rounding decision but keeps inexactness visible.
    """
    halves = x.view(np.uint32).reshape(-1, 2)
    lo, hi = (halves[:, 0], halves[:, 1]) if _LITTLE_ENDIAN else (halves[:, 1], halves[:, 0])
    words = ws.get("top_words", np.uint32, x.size)
    np.minimum(lo, np.uint32(1), out=words)
    words |= hi
    return words


def _encode_floats(blk, fmt, policy, rand, want, out, ws):
    src = _SOURCE_FORMAT[blk.dtype]
    layout = _layout(src, fmt, policy.rounding)
    work = np.float32 if layout is fp32 else np.float64
    if blk.dtype == work:
        wblk = blk
    else:
        wblk = ws.get("widened", work, blk.size)
        np.copyto(wblk, blk)
    if layout is None:
        negative, sig, e_top = _float64_significands(wblk)
        fl = _encode_significands(negative, sig, e_top, fmt, policy, rand, want, out)
        has_special = True  # checked below
    else:
        words = _fp64_top_words(wblk, ws) if layout is _FP64_TOP else wblk.view(_UINT[layout.bits])
        fl, max_mag = _encode_float_patterns(words, layout, fmt, policy, rand, want, out, ws)
        has_special = max_mag >= layout.infinity_bits
    if has_special:
        u = blk.view(_UINT[src.bits])
        mag = u & u.dtype.type((1 << (src.bits - 1)) - 1)
        if mag.max(initial=0) >= src.infinity_bits:
            _patch_specials(u, mag, src, fmt, policy, out, fl)
    return fl


def _patch_specials(u, mag, src, fmt, policy, bits, fl):
    """Overwrite NaN and infinity lanes, decided from the original source patterns (a
    widening cast on the way could have quieted a signaling NaN)."""
    idx = np.nonzero(mag >= src.infinity_bits)
    frac = (mag[idx] & u.dtype.type(src.mantissa_mask)).astype(np.uint64)
    neg = (u[idx] >> u.dtype.type(src.bits - 1)).astype(np.uint64)
    sbits, sfl = _encode_specials(neg, frac, src.mantissa_bits, fmt, policy, fl is not None)
    bits[idx] = sbits
    if fl is not None:
        for j, f in enumerate(sfl):
            if fl[j] is None:
                fl[j] = np.zeros(bits.shape, dtype=bool)
            fl[j][idx] = f


def _encode_float_patterns(u, src, fmt, policy, rand, want, out, ws):
    """The fast path: round float32/float64 patterns directly (width W = 32 or 64).

    With a = |x| as a pattern (E = biased exponent, F = fraction, m_s fraction bits) and
    Emn the source's biased exponent of the target's smallest normal, c = clip(E, 1, Emn):

        v = a - ((c - 1) << m_s)          s = (m_s - m) + (Emn - c)

    For target-normal values (E >= Emn) this re-biases the exponent, so v >> s is the
    target magnitude pattern; below, v is the significand 1.F (or 0.F) and s grows by one
    per binade, so v >> s counts smallest subnormals.  Either way round_pack gets
    "pattern = v / 2**s" with an unbounded exponent.  Returns the flags and max |x|
    as a pattern (to spot NaN and infinity lanes).
    """
    W, ms = u.dtype.itemsize * 8, src.mantissa_bits
    dt = u.dtype.type
    n = u.size
    v = np.bitwise_and(u, dt((1 << (W - 1)) - 1), out=ws.get("v", dt, n))
    max_mag = v.max(initial=0)
    negative = np.right_shift(u, dt(W - 1), out=ws.get("negative", dt, n))
    emn = fmt.emin + src.bias
    c = np.right_shift(v, dt(ms), out=ws.get("c", dt, n))
    np.clip(c, dt(1), dt(emn), out=c)
    s = np.subtract(dt(ms - fmt.mantissa_bits + emn), c, out=ws.get("s", dt, n))
    c -= dt(1)
    c <<= dt(ms)
    v -= c
    # s may exceed W-1 only for values far below the smallest subnormal.  numpy defines
    # unsigned shifts by >= W as 0, which the nearest and toward_zero kernels round
    # correctly (v, below half, gives 0); the other modes and the flags need masks of
    # the discarded bits, so they get s clamped to W-1 (see round_pack).
    needs_clamp = want or not policy.subnormals or policy.rounding not in (
        Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY, Rounding.TOWARD_ZERO)
    if needs_clamp and ms - fmt.mantissa_bits + emn - 1 > W - 1:
        s_true = s
        s = np.minimum(s_true, dt(W - 1), out=c)
    else:
        s_true = None
    rand_w = None
    if rand is not None:
        rand_w = rand if W == 64 else (rand >> np.uint64(32)).astype(np.uint32)
        if s_true is not None:
            v = _clamp_for_stochastic(v, s_true, W)
    scratch = [ws.get("r", dt, n), ws.get("tmp", dt, n)]
    _, fl = round_pack(fmt, negative, v, s, None, policy, rand_w, want, out, scratch)
    return _flag_tuple(fl), max_mag


def _clamp_for_stochastic(v, s_true, W):
    """Where more than W-1 bits are cut, pre-shift so the probability stays v / 2**s_true
    to within 2**-(W-1) (deterministic modes need no such care: see round_pack)."""
    over = s_true > v.dtype.type(W - 1)
    if not over.any():
        return v
    excess = np.minimum(s_true - v.dtype.type(W - 1), v.dtype.type(W - 1))
    return np.where(over, v >> excess, v)


def _float64_significands(x):
    """float64 -> (negative, sig in [2**61, 2**62) or 0, e_top): exact, normalising subnormals."""
    u = x.view(np.uint64)
    a = u & np.uint64((1 << 63) - 1)
    negative = u >> np.uint64(63)
    E = (a >> np.uint64(52)).astype(np.int64)
    frac = a & np.uint64((1 << 52) - 1)
    sig = (frac | np.uint64(1 << 52)) << np.uint64(_exact.SIG_TOP - 52)
    e_top = E - 1023
    sub = E == 0
    if sub.any():
        bl = _bit_length(frac[sub])
        nz = bl > 0
        shift = np.where(nz, _exact.SIG_TOP + 1 - bl, 0).astype(np.uint64)
        sig[sub] = np.where(nz, frac[sub] << shift, np.uint64(0))
        e_top[sub] = np.where(nz, bl - 1 - 1074, 0)
    return negative, sig, e_top


def _bit_length(mag):
    """Exact bit length of uint64 values (float conversion may round up a power of two)."""
    _, e = np.frexp(mag.astype(np.float64))
    bl = e.astype(np.int64)
    hi = np.where(bl > 0, bl - 1, 0).astype(np.uint64)
    bl -= ((mag >> hi) == 0) & (bl > 0)
    return bl


def _encode_ints(blk, fmt, policy, rand, want, out, ws):
    """Integers: through float64 when every value of the block has at most 53 bits (all
    of them for 8- to 32-bit dtypes), else the generic path.  64-bit integers under
    stochastic rounding always take the generic path, so that an element's random draw
    is spent the same way whatever else shares its block."""
    if blk.dtype.itemsize <= 4 or (policy.rounding is not Rounding.STOCHASTIC and
                                   blk.max(initial=0) <= (1 << 53) and
                                   (blk.dtype.kind == "u" or blk.min(initial=0) >= -(1 << 53))):
        return _encode_floats(blk.astype(np.float64), fmt, policy, rand, want, out, ws)
    negative = blk < 0 if blk.dtype.kind == "i" else np.zeros(blk.shape, dtype=bool)
    mag = blk.astype(np.uint64)
    mag = np.where(negative, np.uint64(0) - mag, mag)  # two's complement: |int64 min| fits
    negative = negative.astype(np.uint64)
    bl = _bit_length(mag)
    top = np.int64(_exact.SIG_TOP + 1)
    up = np.clip(top - bl, 0, 63).astype(np.uint64)
    down = np.clip(bl - top, 0, 63).astype(np.uint64)
    sticky = (mag & ((np.uint64(1) << down) - np.uint64(1))) != 0
    sig = np.where(bl <= top, mag << up, (mag >> down) | sticky.astype(np.uint64))
    e_top = np.where(bl > 0, bl - 1, 0)
    return _encode_significands(negative, sig, e_top, fmt, policy, rand, want, out)


def _encode_significands(negative, sig, e_top, fmt, policy, rand, want, out):
    """The generic path: value = sig * 2**(e_top - 61), sig in [2**61, 2**62) or 0
    (e_top is ignored for zeros).

    In the target, with biased exponent be = e_top + bias, the fraction is cut after
    (61 - m) bits in the normal range and one bit more per binade below it; the
    exponent field is added back after rounding (so a carry still moves into it):

        s = (61 - m) + max(1 - be, 0)          offset = max(be - 1, 0) << m
    """
    m = fmt.mantissa_bits
    be = np.where(sig == 0, 0, np.clip(e_top, -2200, 2200) + fmt.bias)  # zeros: no exponent
    s_true = (_exact.SIG_TOP - m + np.maximum(1 - be, 0)).astype(np.uint64)
    s = np.minimum(s_true, np.uint64(63))
    offset = (np.clip(be, 1, (1 << fmt.exponent_bits) + 1) - 1).astype(np.uint64) << np.uint64(m)
    if rand is not None:
        sig = _clamp_for_stochastic(sig, s_true, 64)
    _, fl = round_pack(fmt, negative, sig, s, offset, policy, rand, want, out)
    return _flag_tuple(fl)


def _flag_tuple(fl):
    """round_pack's (overflow, underflow, inexact) as the five-flag list (invalid first)."""
    if fl is None:
        return None
    overflow, underflow, inexact = fl
    return [None, None, overflow, underflow, inexact]


def _encode_specials(negative, frac, frac_bits, fmt, policy, want):
    """Bits and flags for NaN and infinity inputs, given the source's fraction field.

    ``frac`` == 0 means infinity, otherwise a NaN whose top fraction bit is its quiet bit.

        input   ieee                          fn / fnuz                   finite
        +-inf   +-inf                         NaN, invalid; or with       +-max_finite,
                                              saturate +-max_finite,      overflow, inexact
                                              overflow, inexact
        NaN     quiet NaN, sign and top       the format's NaN (fnuz's    +0, invalid
                payload bits kept             has no sign)
        sNaN    as NaN, and invalid           as NaN, and invalid         +0, invalid
    """
    dt = fmt.storage_dtype.type
    is_nan = frac != 0
    quiet_bit = np.uint64(1 << (frac_bits - 1)) if frac_bits else np.uint64(0)
    invalid = is_nan & ((frac & quiet_bit) == 0)  # signaling NaNs
    sign = negative.astype(fmt.storage_dtype) << dt(fmt.bits - 1)
    no_flag = np.zeros(is_nan.shape, dtype=bool)

    if fmt.specials is Specials.IEEE:
        shift = frac_bits - fmt.mantissa_bits  # keep the top payload bits
        payload = frac >> np.uint64(shift) if shift >= 0 else frac << np.uint64(-shift)
        nan_out = (payload & np.uint64(fmt.mantissa_mask)).astype(fmt.storage_dtype) | dt(fmt.nan_bits) | sign
    elif fmt.specials is Specials.FN:
        nan_out = sign | dt(fmt.nan_bits)
    elif fmt.specials is Specials.FNUZ:
        nan_out = np.full(is_nan.shape, dt(fmt.nan_bits))
    else:
        nan_out = np.zeros(is_nan.shape, dtype=fmt.storage_dtype)
        invalid = is_nan.copy()

    overflow = no_flag
    if fmt.has_infinity:
        inf_out = sign | dt(fmt.infinity_bits)
    elif policy.saturate or fmt.specials is Specials.FINITE:
        inf_out = sign | dt(fmt.max_finite_bits)
        overflow = ~is_nan
    else:
        inf_out = nan_out if fmt.specials is Specials.FNUZ else sign | dt(fmt.nan_bits)
        invalid = invalid | ~is_nan
    bits = np.where(is_nan, nan_out, inf_out)
    return bits, ((invalid, no_flag, overflow, no_flag, overflow) if want else None)


def _encode_exact(value: "_exact.ExactValue", fmt, policy, rng):
    """One exact scalar through the same rounding point (as a one-element block)."""
    negative = np.array([value.negative], dtype=np.uint64)
    if value.kind != "finite":
        # a payload-less NaN: the quiet bit alone, or for "snan" only the lowest bit of a
        # field wide enough that no target keeps it (so both give the canonical NaN)
        frac_bits = 60
        frac = np.array([0 if value.kind == "inf" else (1 if value.signaling else 1 << 59)], dtype=np.uint64)
        bits, fl = _encode_specials(negative, frac, frac_bits, fmt, policy, True)
    else:
        sig, e_top = _exact.to_significand(value.magnitude)
        e_top = max(min(e_top, 4000), -4000)
        rand = None if rng is None else rng.bit_generator.random_raw(1)
        bits = np.empty(1, dtype=fmt.storage_dtype)
        fl = _encode_significands(negative, np.array([sig], dtype=np.uint64),
                                  np.array([e_top], dtype=np.int64), fmt, policy, rand, True, bits)
    flags = Flags(*(np.bool_(False) if f is None else np.bool_(f[0]) for f in fl))
    return bits[0], flags


# =====================================================================================
# decoding and fields
# =====================================================================================
def _decode_block(b, fmt, out=None, ws=None):
    """Exact values of a 1-D block of bit patterns (any unsigned dtype), as float64 or
    written into ``out`` (a float array that holds ``fmt`` exactly).

    The magnitude is moved into float64's field layout, which makes it the float64
    number 1.F * 2**(E - 1023), or 0.F * 2**-1022 when E == 0, and one exact multiply by
    2**(1023 - bias) scales both to the target's value -- subnormals included:

        |s|e e e e e|f f f f f f f f f f|  ->  |s|0..0 e e e e e|f f f f f f f f f f 0..0|

    NaN and infinity lanes then get float64's all-ones exponent ORed in, which keeps
    their sign and fraction (payload).
    """
    n = b.size
    m = fmt.mantissa_bits
    get = (lambda name, dt: ws.get(name, dt, n)) if ws is not None else (lambda name, dt: np.empty(n, dt))
    u = get("dec_u", np.uint64)
    np.copyto(u, b, casting="unsafe")
    mag = get("dec_mag", np.uint64)
    np.bitwise_and(u, np.uint64((1 << (fmt.bits - 1)) - 1), out=mag)
    np.right_shift(u, np.uint64(fmt.bits - 1), out=u)
    u <<= np.uint64(63)
    np.left_shift(mag, np.uint64(52 - m), out=mag)
    mag |= u
    values = mag.view(np.float64)
    if fmt.bias != 1023:
        values *= 2.0 ** (1023 - fmt.bias)
    special = _special_lanes(b, fmt)
    if special is None:
        pass
    elif fmt.specials is Specials.IEEE:
        np.bitwise_or(mag, np.uint64(0x7FF << 52), out=mag, where=special)  # keeps sign, payload
    elif fmt.specials is Specials.FN:
        np.bitwise_or(mag, np.uint64(0x7FF8 << 48), out=mag, where=special)  # S.1111.111 keeps S
    else:
        np.copyto(mag, np.uint64(0x7FF8 << 48), where=special)  # the fnuz NaN has no sign
    if out is None:
        return values if ws is None else values.copy()
    np.copyto(out, values, casting="same_kind")
    if special is not None and fmt.specials is Specials.IEEE and out.dtype != np.float64:
        _copy_specials_exactly(b, special, fmt, out)  # the cast above quiets signaling NaNs
    return out


def _copy_specials_exactly(b, special, fmt, out):
    """Write the NaN/infinity lanes of ``b`` into a float32/float16 ``out`` by their bits,
    keeping sign and payload (a float64 -> float32 cast would set the quiet bit)."""
    dst = _SOURCE_FORMAT[out.dtype]
    b = np.asarray(b[special], dtype=np.uint64)
    sign = (b >> np.uint64(fmt.bits - 1)) << np.uint64(dst.bits - 1)
    frac = (b & np.uint64(fmt.mantissa_mask)) << np.uint64(dst.mantissa_bits - fmt.mantissa_bits)
    out.view(_UINT[dst.bits])[special] = sign | np.uint64(dst.exponent_mask) | frac


def _special_lanes(b, fmt):
    """Boolean mask of the NaN/infinity patterns in a block, or None if there are none."""
    dt = b.dtype.type
    if fmt.specials is Specials.FINITE:
        return None
    if fmt.specials is Specials.FNUZ:
        special = b == dt(fmt.nan_bits)
    else:
        mag = b & dt((1 << (fmt.bits - 1)) - 1)
        if mag.max(initial=0) < (fmt.exponent_mask if fmt.specials is Specials.IEEE else fmt.nan_bits):
            return None
        special = mag >= dt(fmt.exponent_mask) if fmt.specials is Specials.IEEE else mag == dt(fmt.nan_bits)
    return special if special.any() else None


def _decompose(bits, fmt):
    """(sign, exponent, fraction, is_nan, is_inf) boolean/int arrays for predicates."""
    arr = _validate.bit_patterns("bits", bits, fmt.bits).astype(np.uint64)
    m = fmt.mantissa_bits
    sign = (arr >> np.uint64(fmt.bits - 1)) != 0
    exp = (arr >> np.uint64(m)) & np.uint64((1 << fmt.exponent_bits) - 1)
    frac = arr & np.uint64(fmt.mantissa_mask)
    top = np.uint64((1 << fmt.exponent_bits) - 1)
    if fmt.specials is Specials.IEEE:
        nan = (exp == top) & (frac != 0)
        inf = (exp == top) & (frac == 0)
    elif fmt.specials is Specials.FN:
        nan = (exp == top) & (frac == np.uint64(fmt.mantissa_mask))
        inf = np.zeros(arr.shape, dtype=bool)
    elif fmt.specials is Specials.FNUZ:
        nan = arr == np.uint64(fmt.sign_mask)
        inf = np.zeros(arr.shape, dtype=bool)
    else:
        nan = inf = np.zeros(arr.shape, dtype=bool)
    if fmt.specials is Specials.FNUZ:
        sign = sign & ~nan
    return sign, exp, frac, nan, inf


def _signaling_bit_clear(frac, fmt):
    if fmt.specials is not Specials.IEEE:
        return np.zeros(np.shape(frac), dtype=bool)
    return (frac & np.uint64(1 << (fmt.mantissa_bits - 1))) == 0
