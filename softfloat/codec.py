"""Bits <-> values: encode (correctly rounded, once), decode (exact), fields and classes.

``encode`` turns numbers into bit patterns of a :class:`~softfloat.Format`: float16/32/64
and integer arrays of any shape, strides and byte order, Python ints and floats, and exact
scalars (``Fraction``, ``Decimal``, decimal, hex-float and ratio strings).  Each input is
rounded once from its exact value, by the one rounding point in :mod:`softfloat._round`.
Large arrays stream through in blocks of ``_BLOCK`` elements, so the only full-size
allocations are the outputs; the blocks run on ``workers`` threads
(:func:`softfloat.set_workers`).  dask arrays give lazy dask arrays, chunk by chunk.
"""

from __future__ import annotations

import numpy as np

from . import _dask, _exact, _fastpaths, _validate, interop
from ._blocks import resolve_workers, stream_blocks
from ._codec_blocks import one_block as _one_block, run_block
from ._decode import decode_block, decode_small, decompose, signaling_bit_clear
from ._encode import encode_block, encode_exact, encode_general, encode_scalar, one_float
from ._flagmasks import FlagMasks, flags_of_code
from ._fpenv import require_subnormals
from ._random import Positions, key_from
from ._options import resolve_attributes
from .attributes import RoundingAttributes  # noqa: F401 - encode_piece's example uses it
from ._workspace import BLOCK_SIZE
from .formats import as_format, catalogue, native_format
from .rounding import Rounding

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

#: elements per block (tests change it to check that results do not depend on it)
_BLOCK = BLOCK_SIZE
#: elements per block when blocks run on several threads: every numpy call hands the GIL
#: over, and the general path's ~100 calls per 2**14 block made 2 threads slower than one
#: (0.44-0.8x stochastic, 0.9-1.4x otherwise); at 2**17 they ran 1.2-2.5x as fast as one
#: (fp16, fp8_e4m3, bf16 stochastic; 2-core virtual machine).  Fast paths keep their own.
_THREAD_BLOCK = 1 << 17


# =====================================================================================
# public API
# =====================================================================================
def encode(x, fmt, rounding=None, *, saturate=None, subnormals=None, tininess=None, attributes=None,
           rng=None, return_flags=False, workers=None):
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
    tininess : {"after", "before"}, default: the platform's ("after")
        When a result is tiny, for the underflow flag and flush-to-zero: after rounding
        (x86 SSE, RISC-V) or before rounding (ARM).
    attributes : RoundingAttributes, optional
        All of the above (and the platform) as one value; the four keywords are shortcuts
        for its fields, and a keyword that is given wins over ``attributes``.  This is
        how every rounding function of softfloat takes them.
    rng : numpy.random.Generator or int, optional
        Source of random bits for ``rounding="stochastic"``: a seed or Generator makes the
        results reproducible; ``rng=None`` draws fresh entropy from the operating system,
        so two calls differ.  Ignored by the deterministic modes.  One 64-bit key is drawn
        from it per call, and the element at flat C-order position i takes the random bits
        SplitMix64(key) number i + 1 (:mod:`softfloat._random`), so the result depends on
        neither the block size, nor ``workers``, nor a dask array's chunks.  The rounding
        probability is exact when at most 63 bits are discarded (31 for float16/float32
        input to formats narrower than float32), and otherwise accurate to 2**-63 (2**-31).
    return_flags : bool, default False
        Also return the IEEE exception flags as a :class:`~softfloat.Flags`.
    workers : int, optional
        Threads that run the blocks: None takes the process-wide setting
        (:func:`softfloat.set_workers`; every core unless changed), 1 runs them in the
        calling thread.  Results are the same bits and flags for any value.  For a dask
        array, None means one thread per chunk (dask runs the chunks in parallel).

    Returns
    -------
    bits : ndarray of ``fmt.storage_dtype`` (a scalar of that type for scalar input); for a
        ``dask.array.Array`` a lazy dask array of the same chunks (flags too: lazy masks)
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

    Exact scalars cost work bounded by the formats, not by their exponent.  A value
    beyond every format's range -- above 2**1100 or below 2**-1200 in magnitude, such as
    ``"1e1000000000"``, ``"0x1p-10000000000"``, ``Decimal("1e-999999999999999999")`` or
    ``10**100000`` -- is recognised from its exponent and rounds as above (overflow, or
    the directed rules below the smallest subnormal, flags raised) without being
    expanded: well under a millisecond and a few KB.  Strings and Decimals of many digits
    take time and memory linear in their length (about 20 ms and 8 MB per million
    digits); ints and Fractions, time linear in their size.

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
    attrs, rng = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng)
    return_flags = _validate.boolean("return_flags", return_flags)
    one = one_float(x) if rng is None else None
    if one is not None:
        found = _scalar(one[0], fmt, attrs, workers)
        if found is not None:
            shape = one[1]
            bits = fmt.storage_dtype.type(found[0]) if shape == () else np.full(shape, found[0], fmt.storage_dtype)
            return (bits, flags_of_code(found[1], shape)) if return_flags else bits
    if _small(x, rng, workers):
        return _one_block(x, fmt, attrs, fmt.storage_dtype, return_flags)
    key = None if rng is None else key_from(rng)
    if _dask.is_dask(x):
        return _lazy(x, fmt, attrs, key, fmt.storage_dtype, True, return_flags, workers)
    workers = resolve_workers(workers)
    if _exact.is_exact_scalar(x):
        bits, flags = encode_exact(_exact.parse_exact(x, "x"), fmt, attrs, key)
        return (bits, flags) if return_flags else bits
    arr = _input_array(x, "x")
    out = np.empty(arr.shape, dtype=fmt.storage_dtype)
    flags = FlagMasks.zeros(arr.size) if return_flags else None
    _stream(arr, fmt, attrs, key, out, flags, workers)
    result = out[()] if out.ndim == 0 else out
    return (result, flags.to_flags(arr.shape).squeezed()) if return_flags else result


def _small(x, rng, workers) -> bool:
    """Whether encode/quantize run ``x`` as one block in this thread (a native float ndarray,
    no generator or ``workers``): a training step's tensors, where the streaming's set-up cost
    as much as the rounding."""
    return rng is None and workers is None and type(x) is np.ndarray and 0 < x.size <= _BLOCK \
        and x.dtype.char in "fd" and x.dtype.isnative


def _scalar(value, fmt, attrs, workers):
    """encode_scalar(), with ``workers`` checked as the general path checks it."""
    found = encode_scalar(value, fmt, attrs)
    if found is not None and workers is not None:
        resolve_workers(workers)
    return found


def encode_piece(x, fmt, key, start, total, attributes=None, *, return_flags=False, workers=None):
    """:func:`encode` of one flat piece of a larger array, for callers that stream an array
    they never hold whole (the checkpoint quantiser): ``x`` is elements ``start`` ..
    ``start + x.size - 1`` (flat, C order) of an array of ``total`` elements, and
    stochastic rounding gives them the random bits of those positions under ``key`` (one
    64-bit key per whole array, from softfloat._random.key_from).  So the pieces together
    are bit for bit the whole array's ``encode(..., rng=g)`` when ``key`` is the one draw
    that call would take from ``g``.  Not part of the public API.

    >>> import numpy as np
    >>> g, h = np.random.default_rng(5), np.random.default_rng(5)
    >>> x = np.linspace(1, 2, 10)
    >>> key = key_from(h)
    >>> pieces = [encode_piece(x[i:i + 4], "bf16", key, i, 10, RoundingAttributes("stochastic")) for i in (0, 4, 8)]
    >>> bool((np.concatenate(pieces) == encode(x, "bf16", "stochastic", rng=g)).all())
    True
    """
    fmt = as_format(fmt)
    attrs, _ = resolve_attributes(attributes)
    return_flags = _validate.boolean("return_flags", return_flags)
    arr = _input_array(x, "x").reshape(-1)
    out = np.empty(arr.shape, dtype=fmt.storage_dtype)
    flags = FlagMasks.zeros(arr.size) if return_flags else None
    key = key if attrs.rounding is Rounding.STOCHASTIC else None
    _stream(arr, fmt, attrs, key, out, flags, resolve_workers(workers),
            Positions(arr.shape, (int(start),), (int(total),)))
    return (out, flags.to_flags(arr.shape)) if return_flags else out


def decode(bits, fmt, dtype=np.float64, *, workers=None):
    """Return the exact values of bit patterns of ``fmt``.

    Parameters
    ----------
    bits : int or integer array_like
        Bit patterns, each in [0, 2**fmt.bits).
    fmt : Format or str
    dtype : float dtype, default float64
        float16, float32 or float64; it must hold every value of ``fmt`` exactly
        (float64 always does).
    workers : int, optional
        Threads, as for :func:`encode` (None: the process-wide setting).

    Returns
    -------
    ndarray of ``dtype`` (a scalar for scalar input; a lazy dask array for a dask array,
    whose patterns are checked when its chunks are computed).  NaNs keep their sign and
    payload bits; the fn/fnuz NaNs decode to a quiet NaN.

    Examples
    --------
    >>> decode(0x3C01, "fp16")
    np.float64(1.0009765625)
    >>> decode([0x7E, 0x7F, 0x01], "e4m3").tolist()
    [448.0, nan, 0.001953125]
    """
    require_subnormals()  # the decoders' float conversions (softfloat._fpenv)
    fmt = as_format(fmt)
    dtype = _float_dtype("dtype", dtype)
    if not native_format(dtype).holds(fmt):
        raise ValueError(
            f"dtype={dtype} cannot hold every {fmt.name} value exactly; use float64 "
            "(or float32 for formats with at most 24-bit precision and 8-bit exponents)"
        )
    if _dask.is_dask(bits):
        _validate.bit_patterns("bits", np.empty(0, dtype=bits.dtype), fmt.bits)  # the dtype, now
        threads = 1 if workers is None else resolve_workers(workers)
        result, _ = _dask.elementwise(lambda where, b: (decode(b, fmt, dtype, workers=threads), None),
                                      [bits], dtype, False)
        return result
    small = decode_small(bits, fmt, dtype)
    if small is not None:
        if workers is not None:
            resolve_workers(workers)  # checked as the general path checks it
        return small
    workers = resolve_workers(workers)
    try:
        arr = _validate.bit_patterns("bits", bits, fmt.bits)
    except ValueError as exc:
        raise ValueError(f"{exc}{_wider_bits_hint(bits, fmt)}") from None
    out = np.empty(arr.shape, dtype=dtype)
    flat_in, flat_out = np.ascontiguousarray(arr).reshape(-1), out.reshape(-1)

    def block(start, stop, rand, ws):  # signaling NaN lanes are rewritten from their patterns
        decode_block(flat_in[start:stop], fmt, flat_out[start:stop], ws)

    stream_blocks(arr.size, _BLOCK, None, None, block, workers=workers)
    return out[()] if out.ndim == 0 else out


def quantize(x, fmt, rounding=None, *, saturate=None, subnormals=None, tininess=None, attributes=None,
             rng=None, return_flags=False, workers=None):
    """Round ``x`` into ``fmt`` and return the rounded values: ``decode(encode(x))``.

    Takes the same arguments as :func:`encode` (``attributes`` and its keyword shortcuts
    included; ``rng`` is used only by stochastic
    rounding: a seed or Generator makes it reproducible, ``rng=None`` draws fresh entropy;
    the deterministic modes ignore it; ``workers`` as for encode, and a dask array gives a
    lazy dask array).  The result has ``x``'s own float dtype
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
    attrs, rng = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng)
    return_flags = _validate.boolean("return_flags", return_flags)
    one = one_float(x) if rng is None else None
    if one is not None:
        found = _scalar(one[0], fmt, attrs, workers)
        if found is not None:
            table = _fastpaths.scalar_values(fmt, lambda patterns: decode(patterns, fmt))
            exact = table[found[0]] if table is not None else decode_block(
                np.asarray([found[0]], dtype=np.uint64), fmt)[0]
            dtype, shape = _values_dtype(np.dtype(one[2]), fmt), one[1]
            value = dtype.type(exact) if shape == () else np.full(shape, exact, dtype)
            return (value, flags_of_code(found[1], shape)) if return_flags else value
    dtype = _values_dtype(x.dtype, fmt) if _small(x, rng, workers) else None
    if dtype is not None and not return_flags and dtype == fmt.value_dtype():  # the shortcuts' small path
        with np.errstate(all="ignore"):  # (as the streamed blocks run: specials decided from patterns)
            found = _fastpaths.quantize_small(x, fmt, attrs, decode_block,
                                              lambda xs: quantize(xs, fmt, attributes=attrs, workers=1))
        if found is not None:
            return found[()] if found.ndim == 0 else found
    if dtype is not None and (return_flags or dtype != x.dtype or not _fastpaths.value_grid_plan(fmt, dtype, attrs)):
        return _one_block(x, fmt, attrs, dtype, return_flags)  # (else the value grid's path below)
    key = None if rng is None else key_from(rng)
    if _dask.is_dask(x):
        return _lazy(x, fmt, attrs, key, _values_dtype(x.dtype, fmt), False, return_flags, workers)
    workers = resolve_workers(workers)
    if _exact.is_exact_scalar(x):
        bits, flags = encode_exact(_exact.parse_exact(x, "x"), fmt, attrs, key)
        value = decode_block(np.asarray([bits], dtype=np.uint64), fmt)[0]
        return (value, flags) if return_flags else value
    arr = _input_array(x, "x")
    out = np.empty(arr.shape, dtype=_values_dtype(arr.dtype, fmt))
    grid = None if return_flags or key is not None or out.dtype != arr.dtype \
        else _fastpaths.value_grid_plan(fmt, arr.dtype, attrs)
    if grid is not None:  # round on the grid in x's own type (softfloat._fastpaths._value_grid: the proof)
        _quantize_on_grid(arr, out, fmt, attrs, grid, workers)
        return out[()] if out.ndim == 0 else out
    flags = FlagMasks.zeros(arr.size) if return_flags else None
    _stream(arr, fmt, attrs, key, out, flags, workers)
    result = out[()] if out.ndim == 0 else out
    return (result, flags.to_flags(arr.shape).squeezed()) if return_flags else result


def _quantize_on_grid(arr, out, fmt, attrs, grid, workers):
    """quantize without flags, block by block: a block in the target's normal range by
    integer operations on its patterns, any other by the value grid (fp16, float32 input
    included: faster than its one-lookup table) or, for bf16, by one lookup where its
    tables are filled, else the encoders and the decoder (where they were faster than
    the grid); NaN results of the grid taken again by the general path."""
    direct = arr.flags.c_contiguous
    flat_in, flat_out = arr.reshape(-1) if direct else None, out.reshape(-1)

    def block(start, stop, rand, ws):
        blk = flat_in[start:stop] if direct else np.ascontiguousarray(arr.flat[start:stop])
        dst = flat_out[start:stop]
        if _fastpaths.value_grid_normal(grid, blk, dst, ws):
            return  # a normal-range block
        if not grid.grid_pays:  # (bf16) its one-lookup table, or the encoders, then the decoder, as _stream does
            if _fastpaths.quantize_block(blk, fmt, attrs, False, dst, ws, encode_general, decode_block) is None:
                bits = ws.get("bits", fmt.storage_dtype, stop - start)
                encode_block(blk, fmt, attrs, None, False, bits, ws)
                decode_block(bits, fmt, dst, ws)
        elif _fastpaths.value_grid_round(grid, blk, dst, ws):  # NaN results: the general path's
            nan = np.flatnonzero(np.isnan(dst))
            bits = np.empty(nan.size, dtype=fmt.storage_dtype)
            encode_block(np.ascontiguousarray(blk[nan]), fmt, attrs, None, False, bits, ws)
            dst[nan] = decode_block(bits, fmt, np.empty(nan.size, dtype=out.dtype), ws)

    # 2**16 float64 or 2**17 float32 lanes: the grid's few passes over 3 block-sized buffers in L2
    size = _BLOCK * (4 if arr.dtype.itemsize == 8 else 8)
    stream_blocks(arr.size, size, None, None, block, workers=workers, thread_block_size=max(size, _THREAD_BLOCK))


def fields(bits, fmt):
    """Split bit patterns into ``(sign, biased_exponent, trailing_significand)``.

    >>> [int(f) for f in fields(0x3F600000, "fp32")]
    [0, 126, 6291456]
    """
    fmt = as_format(fmt)
    if _dask.is_dask(bits):
        return tuple(_dask.lift(lambda b, f, i=i: fields(b, f)[i], (bits,), (fmt,), {}, fmt.storage_dtype)
                     for i in range(3))
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
    if _dask.any_dask(sign, exponent, significand):
        return _dask.lift(compose, (sign, exponent, significand), (fmt,), {}, fmt.storage_dtype)
    s = _validate.bit_patterns("sign", sign, 1)
    e = _validate.bit_patterns("exponent", exponent, fmt.exponent_bits)
    f = _validate.bit_patterns("significand", significand, fmt.mantissa_bits)
    dt, shape = fmt.storage_dtype, _validate.broadcast_shape([("sign", s), ("exponent", e), ("significand", f)])
    s, e, f = (np.broadcast_to(a.astype(dt), shape) for a in (s, e, f))
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
    if _dask.is_dask(bits):
        return _dask.lift(classify, (bits,), (fmt,), {}, np.dtype(f"<U{max(map(len, FLOAT_CLASSES))}"))
    sign, exp, frac, nan, inf = decompose(bits, fmt)
    signaling = nan & signaling_bit_clear(frac, fmt)
    zero = (exp == 0) & (frac == 0) & ~nan
    sub = (exp == 0) & (frac != 0)
    code = np.where(sign, 3, 8)  # normal
    code = np.where(sub, np.where(sign, 4, 7), code)
    code = np.where(zero, np.where(sign, 5, 6), code)
    code = np.where(inf, np.where(sign, 2, 9), code)
    code = np.where(nan, np.where(signaling, 0, 1), code)
    names = np.asarray(np.asarray(FLOAT_CLASSES)[code])
    return str(names[()]) if names.ndim == 0 else names


def _predicate(name, doc, compute, patterns, expected):
    def predicate(bits, fmt):
        fmt = as_format(fmt)
        if _dask.is_dask(bits):
            return _dask.lift(predicate, (bits,), (fmt,), {}, np.dtype(bool))
        result = compute(*decompose(bits, fmt), fmt)
        return bool(result) if np.ndim(result) == 0 else result

    predicate.__name__ = predicate.__qualname__ = name
    shown = ", ".join(f"0x{p:04X}" for p in patterns)
    predicate.__doc__ = (f"{doc} (IEEE 754-2019 section 5.7.2), per bit pattern of ``fmt``; a bool "
                         f"for a scalar pattern.\n\n    >>> {name}([{shown}], \"fp16\").tolist()\n"
                         f"    {expected}\n    ")
    return predicate


# fp16 patterns: 0x3C00 = 1, 0xBC00 = -1, 0x0001 and 0x03FF the smallest and largest
# subnormals, 0x0400 the smallest normal, 0x7C00 = inf, 0x7E00 a quiet and 0x7D00 a
# signaling NaN, 0x8000 = -0
is_nan = _predicate("is_nan", "True for NaNs", lambda s, e, f, nan, inf, fmt: nan,
                    [0x7E00, 0x7D00, 0x7C00, 0x3C00], [True, True, False, False])
is_signaling = _predicate(
    "is_signaling", "True for signaling NaNs",
    lambda s, e, f, nan, inf, fmt: nan & signaling_bit_clear(f, fmt),
    [0x7D00, 0x7E00, 0x7C00], [True, False, False])
is_infinite = _predicate("is_infinite", "True for +-infinity (also named is_inf)",
                         lambda s, e, f, nan, inf, fmt: inf,
                         [0x7C00, 0xFC00, 0x7BFF, 0x7E00], [True, True, False, False])
is_inf = is_infinite
is_finite = _predicate("is_finite", "True for zeros, subnormals and normals",
                       lambda s, e, f, nan, inf, fmt: ~(nan | inf),
                       [0x7BFF, 0x0001, 0x8000, 0x7C00, 0x7E00], [True, True, True, False, False])
is_zero = _predicate("is_zero", "True for +-0",
                     lambda s, e, f, nan, inf, fmt: (e == 0) & (f == 0) & ~nan,
                     [0x0000, 0x8000, 0x0001], [True, True, False])
is_subnormal = _predicate("is_subnormal", "True for subnormal numbers",
                          lambda s, e, f, nan, inf, fmt: (e == 0) & (f != 0),
                          [0x0001, 0x03FF, 0x0400, 0x0000], [True, True, False, False])
is_normal = _predicate("is_normal", "True for normal numbers",
                       lambda s, e, f, nan, inf, fmt: (e != 0) & ~(nan | inf),
                       [0x0400, 0x3C00, 0x0001, 0x7C00], [True, True, False, False])
is_sign_minus = _predicate("is_sign_minus", "True where the sign bit is set (NaNs included)",
                           lambda s, e, f, nan, inf, fmt: s,
                           [0x8000, 0xBC00, 0xFE00, 0x3C00], [True, True, True, False])


# =====================================================================================
# input handling
# =====================================================================================
def _input_array(x, argname):
    """Check a numeric input and return it as an ndarray (no copy when already one).

    Objects with ``__array__``/``__dlpack__`` (torch CPU tensors, JAX arrays) are read
    through numpy, as views where they allow; float data numpy has no type for (ml_dtypes
    arrays, torch bfloat16/FP8 tensors) is decoded from its bit patterns, exactly, into
    float32 (float64 where float32 cannot hold the format): a full-size copy.
    """
    arr, fmt = interop.numeric_input(x, argname)
    if fmt is None:
        return _validate.numeric_array(argname, arr, exact_scalars=True)
    wide = fmt.value_dtype()
    return np.asarray(decode(arr, fmt, wide))


def _wider_bits_hint(bits, fmt):
    """For patterns that do not fit ``fmt``: when their integer dtype is wider than fmt's
    storage, the formats of that storage (the likely mix-up: a sum's fp32 bits decoded
    as fp16); else nothing."""
    dtype = bits.dtype if isinstance(bits, (np.ndarray, np.generic)) else None
    # unsigned: the storage dtypes' kind (a list of ints arrives as int64, and says nothing)
    if dtype is None or dtype.kind != "u" or dtype.itemsize <= fmt.storage_dtype.itemsize:
        return ""
    fits = [f.name for f in catalogue() if f.storage_dtype.itemsize == dtype.itemsize]
    return _validate.wider_bits(dtype, fmt.bits, fits)


def _float_dtype(argname, dtype):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{argname} must be float16, float32 or float64; got {_validate.describe(dtype)}") from None
    if native_format(dt) is None or not dt.isnative:
        raise TypeError(f"{argname} must be float16, float32 or float64; got {dt}")
    return dt


def _values_dtype(dtype, fmt):
    """quantize's result dtype: the input's float dtype when it holds every value of fmt,
    else the narrowest of float32 and float64 that does (float64 for integers)."""
    return np.dtype(np.float64) if dtype.kind != "f" else fmt.value_dtype(dtype)


def _lazy(x, fmt, attrs, key, dtype, to_bits, want, workers):
    """encode (``to_bits``) or quantize of a dask array: one in-memory call per chunk, its
    random bits those of the chunk's elements' global positions."""
    _input_array(np.empty(0, dtype=x.dtype), "x")  # the dtype check, before any chunk runs
    threads = 1 if workers is None else resolve_workers(workers)

    def chunk(where, blk):
        arr = np.asarray(blk)
        out = np.empty(arr.shape, dtype=dtype)
        flags = FlagMasks.zeros(arr.size) if want else None
        _stream(arr, fmt, attrs, key, out, flags, threads, Positions(*where))
        return out, flags

    result, masks = _dask.elementwise(chunk, [x], dtype, want)
    return (result, masks.to_flags()) if want else result


def _stream(arr, fmt, attrs, key, out, flags, workers=1, positions=None):
    """Encode ``arr`` block by block into ``out``: bit patterns when ``out`` has
    ``fmt.storage_dtype`` (encode), else decoded values (quantize: a float dtype).

    Blocks are taken in C order; non-contiguous or byte-swapped input is copied one block
    at a time.  ``key`` (stochastic rounding) and ``positions`` give each element its
    random bits (see softfloat._random).
    """
    native = arr.dtype.newbyteorder("=")
    direct = arr.flags.c_contiguous and arr.dtype.isnative
    flat_in = arr.reshape(-1) if direct else None
    to_bits = out.dtype == fmt.storage_dtype
    flat_bits = out.reshape(-1) if to_bits else None
    flat_vals = None if to_bits else out.reshape(-1)

    def block(start, stop, rand, ws):
        blk = flat_in[start:stop] if direct else np.asarray(arr.flat[start:stop]).astype(native, copy=False)
        return run_block(blk, fmt, attrs, flags is not None, None if flat_bits is None else flat_bits[start:stop],
                         None if flat_vals is None else flat_vals[start:stop], ws, rand)

    factor = _fastpaths.block_factor(fmt, native, attrs, flags is not None)
    stream_blocks(arr.size, _BLOCK * factor, key, flags, block, workers=workers, positions=positions,
                  thread_block_size=max(_BLOCK * factor, _THREAD_BLOCK))


