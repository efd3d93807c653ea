"""Conversions: between formats, to integral values, to and from integer dtypes.

Every value of every format is a float64 (``Format`` guarantees it), so each conversion
decodes its operand exactly into float64 and hands the exact result to the one rounding
point through the encoder -- one rounding, whatever the two formats:

* ``convert``: the decoded value *is* the exact result.  NaNs travel as float64 NaNs with
  their sign, quiet bit and payload in place (decoding and encoding only move bits, no
  float operation touches them), so the encoder's special-value table quiets them, keeps
  the top payload bits and raises invalid for a signaling NaN -- also when widening
  (fn NaNs, which have no payload, are made canonical first).  A platform whose NaN
  propagation is ``default_nan`` (:mod:`softfloat.platforms`) gives the destination's
  default NaN instead;
* ``round_to_integral`` and ``to_int``: rounding a float64 to an integral float64 is exact
  (numpy's rint/floor/ceil/trunc, and exact float64 steps for the other modes), and the
  integer is a value of the format, as it has no more significant bits than the operand
  (barring one corner: an integer past max_finite, see ``round_to_integral``);
* ``from_int``: the encoder rounds integers of any size once.

What a conversion to an integer returns where it is invalid is the platform's
(``Platform.invalid_integer``); :data:`INVALID_INTEGER` describes the default.

Large arrays stream through in blocks, like the codec, so the only full-size allocations
are the outputs.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dask, _fastpaths, _validate
from .._blocks import resolve_workers, stream_blocks
from .._decode import decode_block
from .._encode import encode_block
from .._flagmasks import FlagMasks, flags_of_code
from .._random import Positions, key_from
from .._options import resolve_attributes
from .._workspace import BLOCK_SIZE
from ..codec import encode
from ..formats import as_format
from ..platforms import PLATFORMS, NanPropagation
from ..rounding import Rounding
from ._nan import default_nan, is_signaling, nan_propagation, propagated
from ._operands import daz

__all__ = ["convert", "round_to_integral", "to_int", "from_int"]


# =====================================================================================
# convert
# =====================================================================================
def convert(bits, src_fmt, dst_fmt, rounding=None, *, saturate=None, subnormals=None, tininess=None,
            denormals_are_zero=False, attributes=None, rng=None, return_flags=False, workers=None):
    """Convert bit patterns of ``src_fmt`` into ``dst_fmt``, correctly rounded.

    Parameters
    ----------
    bits : int or integer array_like
        Bit patterns of ``src_fmt``.
    src_fmt, dst_fmt : Format or str
        Any two formats, fp64 included.
    rounding : Rounding or str, default "nearest_even"
        Any mode of :class:`~softfloat.Rounding`, ``stochastic`` and ``odd`` included.
    tininess : {"after", "before"}, default: the platform's ("after")
    subnormals : bool, default True
        False flushes subnormal results to zero (flush-to-zero).
    denormals_are_zero : bool, default False
        True reads subnormal operands as zeros of the same sign (DAZ), raising nothing.
    saturate : bool, default False
        Overflow to +-max_finite instead of infinity (or NaN for fn/fnuz formats), and
        send infinities to +-max_finite in formats without infinity.
    attributes : RoundingAttributes, optional
        All of the above but ``denormals_are_zero`` (and the platform) as one value; a
        keyword that is given wins over ``attributes``, as for :func:`softfloat.encode`.
    rng : numpy.random.Generator or int, optional
        For ``rounding="stochastic"`` (the random bits of each element's position, as in
        :func:`softfloat.encode`): a seed or Generator makes the result reproducible;
        ``rng=None`` draws fresh entropy from the operating system, so two calls differ.
        Ignored by the deterministic modes.
    return_flags : bool, default False
        Also return the IEEE exception flags as a :class:`~softfloat.Flags`.
    workers : int, optional
        Threads, as for :func:`softfloat.encode` (None: the process-wide setting).  A dask
        array gives a lazy dask array, here and in round_to_integral, to_int and from_int.

    Returns
    -------
    bits : ndarray of ``dst_fmt.storage_dtype`` (a scalar for scalar input), and Flags
    with ``return_flags``

    Notes
    -----
    Narrowing rounds once (overflow and underflow exactly as :func:`softfloat.encode`);
    widening is exact and raises nothing, except that a signaling NaN always raises
    invalid (IEEE 754-2019 section 5.4.2).  A NaN becomes a quiet NaN with its sign and
    the top bits of its payload (the single NaN of fn/fnuz formats); fn and fnuz NaNs have
    no payload and become the canonical quiet NaN (fn keeps its sign; the fnuz NaN is
    positive), as in ml_dtypes.  A platform that always returns the default NaN
    (``nan_propagation="default_nan"``: RISC-V's FCVT, NVIDIA) gives the destination's
    default NaN instead (into IEEE formats).  In FP6/FP4, which have no NaN, a NaN becomes
    +0 with invalid.  An infinity converted to a format without one
    gives NaN with invalid, or +-max_finite with overflow when saturating (always for
    FP6/FP4).

    Examples
    --------
    >>> hex(convert(0x3C01, "fp16", "e4m3"))                    # 1 + 2**-10 -> 1
    '0x38'
    >>> hex(convert(0x3C01, "fp16", "e4m3", "upward"))
    '0x39'
    >>> b, flags = convert(0x7C01, "fp16", "fp32", return_flags=True)   # sNaN, widened
    >>> hex(b), flags.raised()
    ('0x7fc02000', ('invalid',))
    >>> hex(convert(0x5F80, "bf16", "e5m2")), hex(convert(0x5F80, "bf16", "e5m2", saturate=True))
    ('0x7c', '0x7b')
    """
    src = as_format(src_fmt, "src_fmt")
    dst = as_format(dst_fmt, "dst_fmt")
    attrs, rng = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng)
    denormals_are_zero = _validate.boolean("denormals_are_zero", denormals_are_zero)
    return_flags = _validate.boolean("return_flags", return_flags)
    x = _patterns(bits, src)
    if not denormals_are_zero and rng is None:
        widened = _widening(x, src, dst, return_flags, attrs)
        if widened is not None:
            return widened
    nan_to_default = nan_propagation(dst, attrs, unit=src) is NanPropagation.DEFAULT_NAN

    def block(b, rand, out, ws):
        values = decode_block(b, src, ws.get("values", np.float64, b.size), ws)
        if denormals_are_zero:
            daz(values, src)
        fl = encode_block(values, dst, attrs, rand, return_flags, out, ws)
        if nan_to_default:  # the flags stay the encoder's: invalid for a signaling NaN
            out[np.isnan(values)] = default_nan(dst, attrs)
        return fl

    return _run(block, x, src, dst.storage_dtype, rng, return_flags, workers)


# =====================================================================================
# round_to_integral and to_int
# =====================================================================================
def round_to_integral(bits, fmt, rounding=None, *, exact=False, attributes=None, rng=None, return_flags=False,
                      workers=None):
    """Round bit patterns of ``fmt`` to integral values of ``fmt`` (IEEE roundToIntegral).

    Parameters
    ----------
    bits : int or integer array_like
        Bit patterns of ``fmt``.
    fmt : Format or str
    rounding : Rounding or str, default "nearest_even"
        ``nearest_even``, ``nearest_away``, ``toward_zero``, ``upward`` and ``downward``
        are IEEE's roundToIntegralTiesToEven, ...TiesToAway, ...TowardZero,
        ...TowardPositive and ...TowardNegative.  ``odd`` gives the odd integer next to a
        non-integral value, ``stochastic`` rounds up with probability equal to the
        fraction (exact to 2**-64).
    exact : bool, default False
        True is IEEE roundToIntegralExact: raise inexact where the value changes.
        False raises no inexact.
    attributes : RoundingAttributes, optional
        Its rounding (``rounding`` wins where given), its platform (the NaN result) and
        its saturate (the overflow corner, see Notes); tininess and subnormals do not
        apply, as an integral value is never tiny.
    rng : numpy.random.Generator or int, optional
        For ``rounding="stochastic"``: a seed or Generator makes the result reproducible;
        ``rng=None`` draws fresh entropy from the operating system, so two calls differ.
        Ignored by the deterministic modes.
    return_flags : bool, default False

    Returns
    -------
    bits : ndarray of ``fmt.storage_dtype`` (a scalar for scalar input), and Flags with
    ``return_flags``

    Notes
    -----
    A zero result keeps the operand's sign (round(-0.5) = -0; fnuz formats give +0).
    Infinities are returned unchanged; a NaN gives a quiet NaN (the platform's default
    NaN where it always returns that one), a signaling NaN raising invalid.  In the rare
    formats whose max_finite lies below 2**mantissa_bits (FP6 E2M3, max 7.5, or small
    custom formats) an integer can exceed max_finite: it then overflows as any result does
    (infinity, or +-max_finite where there is none, with overflow and inexact).

    Examples
    --------
    >>> import softfloat as sf
    >>> x = sf.encode([2.5, -0.5, 3.5, -1.25], "fp16")
    >>> sf.decode(round_to_integral(x, "fp16"), "fp16").tolist()
    [2.0, -0.0, 4.0, -1.0]
    >>> sf.decode(round_to_integral(x, "fp16", "nearest_away"), "fp16").tolist()
    [3.0, -1.0, 4.0, -1.0]
    >>> b, flags = round_to_integral(x, "fp16", "downward", exact=True, return_flags=True)
    >>> sf.decode(b, "fp16").tolist(), flags.inexact.tolist()
    ([2.0, -1.0, 3.0, -2.0], [True, True, True, True])
    """
    fmt = as_format(fmt)
    attrs, rng = resolve_attributes(attributes, rounding=rounding, rng=rng)
    exact = _validate.boolean("exact", exact)
    return_flags = _validate.boolean("return_flags", return_flags)
    x = _patterns(bits, fmt)
    # the integral value is exact in fmt; only an overflow (see Notes) rounds, and then
    # like any result: stochastic's overflow rule is nearest's
    stochastic = attrs.rounding is Rounding.STOCHASTIC
    encode_attrs = attrs.replace(rounding=Rounding.NEAREST_EVEN) if stochastic else attrs

    def block(b, rand, out, ws):
        values = decode_block(b, fmt, ws.get("values", np.float64, b.size), ws)
        integral = _integral(values, attrs.rounding, rand)
        fl = encode_block(integral, fmt, encode_attrs, None, return_flags, out, ws)
        nan = np.isnan(values)
        out[nan] = propagated(b[nan], fmt, attrs)
        if not return_flags:
            return None
        fl.invalid = nan & is_signaling(b, fmt)  # the only invalid: a signaling NaN
        if exact:
            fl.or_(FlagMasks(inexact=(integral != values) & ~nan))
        return fl

    return _run(block, x, fmt, fmt.storage_dtype, rng, return_flags, workers)


def _describe_invalid_integers(platform) -> dict:
    """``{"signed": ..., "unsigned": ...}``: one result where NaN and both overflows give
    the same, else the platform's ``invalid_integer`` dict."""
    described = {}
    for kind, signed in (("signed", True), ("unsigned", False)):
        results = platform.invalid_integer(signed)
        described[kind] = results["nan"] if len(set(results.values())) == 1 else results
    return described


#: What ``to_int`` returns by default where the conversion is invalid (a NaN, an infinity
#: or a value out of the dtype's range) and does not saturate: a description derived from
#: ``softfloat.PLATFORMS["default"].invalid_integer`` (the data the conversion reads;
#: ``RoundingAttributes(platform=...)`` picks another preset's).  x86's "integer
#: indefinite": the dtype's minimum for signed dtypes (CVTTSD2SI), all ones for unsigned
#: ones (AVX-512 VCVTTSD2USI); numpy's own float-to-int casts on x86 give the same for
#: int32/int64.
INVALID_INTEGER = _describe_invalid_integers(PLATFORMS["default"])


def to_int(bits, fmt, rounding=None, dtype=np.int64, *, exact=False, saturate=None, attributes=None,
           rng=None, return_flags=False, workers=None):
    """Convert bit patterns of ``fmt`` to integers (IEEE convertToInteger).

    Parameters
    ----------
    bits : int or integer array_like
        Bit patterns of ``fmt``.
    fmt : Format or str
    rounding : Rounding or str, default "nearest_even"
        How a non-integral value is rounded, as in :func:`round_to_integral` (C's cast
        truncates: use ``"toward_zero"``).
    dtype : integer dtype, default numpy.int64
        Any signed or unsigned numpy integer dtype of 8 to 64 bits.
    exact : bool, default False
        True is IEEE convertToIntegerExact: raise inexact where the value changes.
    saturate : bool, default False
        Where the conversion is invalid: False gives the platform's invalid results
        (``Platform.invalid_integer``; by default :data:`INVALID_INTEGER`, x86's);
        True clamps out-of-range values and infinities to the dtype's minimum or maximum
        and gives 0 for NaN (ARM, CUDA).  Invalid is raised either way.
    attributes : RoundingAttributes, optional
        Its rounding, saturate and platform (``rounding`` and ``saturate`` win where
        given); tininess and subnormals do not apply.
    rng : numpy.random.Generator or int, optional
        For ``rounding="stochastic"``: a seed or Generator makes the result reproducible;
        ``rng=None`` draws fresh entropy from the operating system, so two calls differ.
        Ignored by the deterministic modes.
    return_flags : bool, default False

    Returns
    -------
    ndarray of ``dtype`` (a scalar for scalar input), and Flags with ``return_flags``

    Notes
    -----
    Invalid is raised for NaNs, infinities and values whose rounded integer lies outside
    the dtype's range; no inexact is raised for them.  -0 and values that round to zero
    give 0.

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> x = sf.encode([2.5, -2.5, 300.0, float("nan")], "fp16")
    >>> to_int(x, "fp16").tolist(), to_int(x, "fp16", "toward_zero").tolist()
    ([2, -2, 300, -9223372036854775808], [2, -2, 300, -9223372036854775808])
    >>> r, flags = to_int(x, "fp16", dtype=np.int8, saturate=True, return_flags=True)
    >>> r.tolist(), flags.invalid.tolist()
    ([2, -2, 127, 0], [False, False, True, True])
    """
    fmt = as_format(fmt)
    attrs, rng = resolve_attributes(attributes, rounding=rounding, saturate=saturate, rng=rng)
    dtype = _integer_dtype("dtype", dtype)
    exact = _validate.boolean("exact", exact)
    return_flags = _validate.boolean("return_flags", return_flags)
    x = _patterns(bits, fmt)
    info = np.iinfo(dtype)
    low, high = float(info.min), float(info.max) + 1.0  # exact powers of two (or 0)
    lowest, highest = dtype.type(info.min), dtype.type(info.max)
    named = {"minimum": lowest, "maximum": highest, "zero": dtype.type(0)}
    if attrs.saturate:  # clamp; NaN -> 0
        on_nan, on_positive, on_negative = named["zero"], highest, lowest
    else:
        results = attrs.platform.invalid_integer(info.min < 0)
        on_nan, on_positive, on_negative = (named[results[k]] for k in ("nan", "positive", "negative"))

    def block(b, rand, out, ws):
        values = decode_block(b, fmt, ws.get("values", np.float64, b.size), ws)
        integral = _integral(values, attrs.rounding, rand)
        valid = (integral >= low) & (integral < high)  # False for NaN
        out[valid] = integral[valid].astype(dtype)
        bad = integral[~valid]
        out[~valid] = np.where(np.isnan(bad), on_nan, np.where(bad < 0, on_negative, on_positive))
        if not return_flags:
            return None
        return FlagMasks(invalid=~valid, inexact=valid & (integral != values) if exact else None)

    return _run(block, x, fmt, dtype, rng, return_flags, workers)


def _integral(x, rounding: Rounding, rand):
    """float64 values rounded to integral float64 values, exactly; a zero keeps x's sign.

    NaN and infinity lanes come back as NaN and infinity.  Stochastic: up with
    probability frac = x - floor(x) (exact in float64), drawn as ``rand < ceil(frac *
    2**64)`` on the 64-bit random integers -- exact where frac is a multiple of 2**-64.
    """
    if rounding is Rounding.NEAREST_EVEN:
        r = np.rint(x)
    elif rounding is Rounding.TOWARD_ZERO:
        r = np.trunc(x)
    elif rounding is Rounding.UPWARD:
        r = np.ceil(x)
    elif rounding is Rounding.DOWNWARD:
        r = np.floor(x)
    elif rounding is Rounding.NEAREST_AWAY:
        t = np.trunc(x)
        r = np.where(np.abs(x - t) >= 0.5, t + np.copysign(1.0, x), t)  # x - t is exact
    elif rounding is Rounding.ODD:
        t = np.trunc(x)
        r = np.where((x != t) & (np.fmod(t, 2.0) == 0), t + np.copysign(1.0, x), t)
    elif rounding is Rounding.STOCHASTIC:
        f = np.floor(x)
        frac = np.where(np.isfinite(x), x - f, 0.0)
        threshold = np.ceil(np.ldexp(frac, 64))  # an integer below 2**64
        up = rand < threshold.astype(np.uint64)
        r = f + up
    else:  # pragma: no cover - Rounding is closed
        raise AssertionError(rounding)
    return np.copysign(r, x)


# =====================================================================================
# from_int
# =====================================================================================
def from_int(ints, fmt, rounding=None, *, saturate=None, attributes=None, rng=None, return_flags=False,
             workers=None):
    """Convert integers to bit patterns of ``fmt``, correctly rounded (IEEE
    convertFromInt).

    Parameters
    ----------
    ints : int or integer array_like
        Python ints of any size (those beyond 2**1100 are decided from their bit length:
        no work grows with their size beyond reading it), numpy integer scalars, or arrays
        (lists) of a signed or unsigned integer dtype.
    fmt : Format or str
    rounding : Rounding or str, default "nearest_even"
    saturate : bool, default False
        Overflow to +-max_finite instead of infinity (or NaN for fn/fnuz formats).
    attributes : RoundingAttributes, optional
        Its rounding and saturate (the keywords win where given); tininess and
        subnormals do not apply, as an integer is never tiny.
    rng : numpy.random.Generator or int, optional
        For ``rounding="stochastic"``: a seed or Generator makes the result reproducible;
        ``rng=None`` draws fresh entropy from the operating system, so two calls differ.
        Ignored by the deterministic modes.
    return_flags : bool, default False
    workers : int, optional
        Threads, as for :func:`softfloat.encode`.

    Returns
    -------
    bits : ndarray of ``fmt.storage_dtype`` (a scalar for scalar input), and Flags with
    ``return_flags`` (overflow and inexact can be raised; integers are never tiny)

    Examples
    --------
    >>> hex(from_int(2049, "fp16")), hex(from_int(2049, "fp16", "upward"))
    ('0x6800', '0x6801')
    >>> hex(from_int(2**200 + 1, "fp32", "upward"))
    '0x7f800000'
    >>> [hex(b) for b in from_int([-3, 1000], "e4m3")]             # 1000 overflows to NaN
    ['0xc4', '0x7f']
    >>> [hex(b) for b in from_int([-3, 1000], "e4m3", saturate=True)]
    ['0xc4', '0x7e']
    """
    if _dask.is_dask(ints):
        if ints.dtype.kind not in "iu":
            raise TypeError(f"ints must have a signed or unsigned integer dtype; got a dask array of dtype "
                            f"{ints.dtype} (for floats use softfloat.encode)")
    elif isinstance(ints, bool) or not (isinstance(ints, (numbers.Integral, np.ndarray, list, tuple))):
        raise TypeError(
            f"ints must be an int or an integer array; got {_validate.describe(ints)} "
            "(for floats use softfloat.encode)")
    elif not isinstance(ints, numbers.Integral) or isinstance(ints, np.integer):
        arr = np.asarray(ints)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)  # numpy reads [] as float64
        if arr.dtype.kind not in "iu":
            raise TypeError(
                f"ints must have a signed or unsigned integer dtype; got {_validate.describe(arr)}"
                + (" (Python ints beyond 64 bits convert one at a time)" if arr.dtype == object else "")
                + (" (for floats use softfloat.encode)" if arr.dtype.kind == "f" else ""))
        ints = arr
    return encode(ints, fmt, rounding, saturate=saturate, attributes=attributes, rng=rng,
                  return_flags=return_flags, workers=workers)


# =====================================================================================
# streaming and helpers
# =====================================================================================
def _patterns(bits, fmt):
    """The ``bits`` argument checked and cast to the storage dtype; a dask array has its
    dtype checked now and its values when its chunks are computed."""
    if _dask.is_dask(bits):
        _validate.bit_patterns("bits", np.empty(0, dtype=bits.dtype), fmt.bits)
        return bits
    return _validate.bit_patterns("bits", bits, fmt.bits).astype(fmt.storage_dtype, copy=False)


def _widening(x, src, dst, want: bool, attrs):
    """convert() of the patterns ``x`` (one block at most) between numpy's own float
    types (fp16 -> fp32 / fp64, fp32 -> fp64, and a type into itself) where no element is
    a NaN, by numpy's cast, or None (the general path).

    Why it is the general path's result: ``dst`` holds every value of ``src``, infinities
    included, and its smallest normal lies below src's smallest subnormal, so every value
    converts exactly, in every rounding mode, with flush-to-zero too (no result is
    subnormal), and raises nothing; numpy's widening cast is exact.  Into the same type
    (one IEEE layout: the same values) every value converts exactly too, but a subnormal
    one is flushed to zero without gradual underflow: taken with gradual underflow only
    (``attrs.subnormals``).  NaNs (the quieting, a signaling NaN's invalid, the platform's
    default NaN) are the general path's.  Off with softfloat._fastpaths.ENABLED."""
    wide, narrow = dst.native_dtype, src.native_dtype
    if (wide is None or narrow is None or type(x) is not np.ndarray or x.size > BLOCK_SIZE
            or not _fastpaths.ENABLED):
        return None
    if wide == narrow:
        if not attrs.subnormals:
            return None
    elif wide.itemsize < narrow.itemsize or src.emin - src.mantissa_bits < dst.emin:
        return None
    values = x.view(narrow)
    if np.isnan(values).any():
        return None
    out = values.astype(wide, order="C").view(dst.storage_dtype)  # (C order, as the general path's)
    result = out[()] if out.ndim == 0 else out
    return (result, flags_of_code(0, x.shape)) if want else result


def _run(block, x, src, out_dtype, rng, want_flags, workers):
    """Apply ``block(b, rand, out, ws) -> FlagMasks or None`` to the patterns ``x``
    of ``src`` block by block (C order) on ``workers`` threads; return the result (a scalar
    for 0-d input) and the Flags.  A dask ``x`` gives a lazy result, chunk by chunk, each
    chunk's patterns checked when it is computed."""
    key = None if rng is None else key_from(rng)
    if _dask.is_dask(x):
        threads = 1 if workers is None else resolve_workers(workers)

        def chunk(where, b):
            b = _patterns(b, src)
            return _run_array(block, b, out_dtype, key, want_flags, threads, Positions(*where))

        result, masks = _dask.elementwise(chunk, [x], out_dtype, want_flags)
        return (result, masks.to_flags()) if want_flags else result
    out, flags = _run_array(block, x, out_dtype, key, want_flags, resolve_workers(workers))
    result = out[()] if out.ndim == 0 else out
    return (result, flags.to_flags(x.shape).squeezed()) if want_flags else result


def _run_array(block, x, out_dtype, key, want_flags, workers, positions=None):
    """(out, the FlagMasks of its flat lanes or None)."""
    out = np.empty(x.shape, dtype=out_dtype)
    flags = FlagMasks.zeros(x.size) if want_flags else None
    flat_in = np.ascontiguousarray(x).reshape(-1)
    flat_out = out.reshape(-1)
    stream_blocks(x.size, BLOCK_SIZE, key, flags,
                  lambda start, stop, rand, ws: block(flat_in[start:stop], rand, flat_out[start:stop], ws),
                  workers=workers, positions=positions)
    return out, flags


def _integer_dtype(name, dtype):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.kind not in "iu":
        raise TypeError(f"{name} must be a numpy integer dtype such as numpy.int32 or numpy.uint8; "
                        f"got {_validate.describe(dtype)}")
    return dt


