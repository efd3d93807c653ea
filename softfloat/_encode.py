"""Exact inputs -> the rounding point: the block-level paths behind encode and the ops.

:func:`encode_block` encodes one contiguous block.  A float block first tries a proven
shortcut (:mod:`softfloat._fastpaths`: one call, its leftover lanes recomputed here); every
other block, and every lane the shortcuts leave, takes the general path, which turns
exact values into the "v / 2**s + offset" form that :func:`softfloat._round.round_pack`
rounds:

* float32/float64 patterns, re-biased in place (the pattern path; float64 input to narrow
  formats rounds from its upper 32-bit word plus a sticky bit);
* normalised 62-bit significands with a sticky bit and an exponent (the generic path: big
  integers, exact scalars, formats too wide for the pattern path);
* NaN and infinity lanes, which are mapped by attrs, not rounded.

The scratch buffers every block reuses are :mod:`softfloat._workspace`'s.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from . import _exact, _fastpaths
from ._flagmasks import FlagMasks
from ._random import bits_at
from ._round import Unrounded, round_pack
from ._workspace import BLOCK_SIZE, Workspace
from .formats import Format, Specials, fp32, fp64, native_format
from .rounding import Rounding

# BLOCK_SIZE and Workspace stay importable from here (softfloat._workspace holds them)
__all__ = ["BLOCK_SIZE", "Workspace", "UINT", "encode_block", "encode_general", "encode_significands",
           "float64_significands", "encode_specials", "encode_exact", "encode_scalar", "one_float"]

UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_LITTLE_ENDIAN = sys.byteorder == "little"


def encode_block(blk, fmt, attrs, rand, want, out, ws):
    """Encode one contiguous native block into ``out``; return its :class:`FlagMasks`
    (None when not ``want``)."""
    if blk.dtype.kind == "f":
        return _encode_floats(blk, fmt, attrs, rand, want, out, ws)
    return _encode_ints(blk, fmt, attrs, rand, want, out, ws)


def _encode_floats(blk, fmt, attrs, rand, want, out, ws):
    """Float blocks: a proven shortcut where one takes the block (softfloat._fastpaths;
    stochastic rounding has none), else the general path."""
    if rand is None:
        fast = _fastpaths.encode_block(blk, fmt, attrs, want, out, ws, encode_general)
        if fast is not None:
            return _recompute_rest(blk, fmt, attrs, want, out, fast)
        if blk.size > BLOCK_SIZE:  # a shortcut's long block, declined
            return _general_in_pieces(blk, fmt, attrs, want, out, ws)
    return _encode_floats_general(blk, fmt, attrs, rand, want, out, ws)


def _recompute_rest(blk, fmt, attrs, want, out, fast):
    """A shortcut's ``(flags, rest)``: the lanes it left (``rest``, where its bits and flags
    are placeholders) recomputed on the general path; returns the block's flags."""
    fl, rest = fast
    if rest is None:
        return fl
    idx = np.nonzero(rest)
    k = len(idx[0])
    sub_out = np.empty(k, dtype=out.dtype)
    sub_fl = _encode_floats_general(np.ascontiguousarray(blk[idx]), fmt, attrs, None, want, sub_out, Workspace(k))
    out[idx] = sub_out
    if want:
        fl.set_at(idx, sub_fl, out.shape)
    return fl


def encode_general(x, fmt, attrs, out):
    """The general path over a whole float array, flags included: what fast kernels'
    tables are filled from."""
    return _general_in_pieces(x, fmt, attrs, True, out, Workspace(min(x.size, BLOCK_SIZE)))


def _general_in_pieces(blk, fmt, attrs, want, out, ws):
    """The general path over BLOCK_SIZE pieces of a longer block (whose many work
    buffers would not stay in cache at the fast kernels' block size)."""
    n = blk.size
    fl = FlagMasks() if want else None
    for start in range(0, n, BLOCK_SIZE):
        stop = min(start + BLOCK_SIZE, n)
        piece = _encode_floats_general(blk[start:stop], fmt, attrs, None, want, out[start:stop], ws)
        if want:
            fl.set_at(slice(start, stop), piece, n, fresh=True)
    return fl


# =====================================================================================
# the general path for float blocks: patterns, or significands; then NaN and infinity lanes
# =====================================================================================
def _encode_floats_general(blk, fmt, attrs, rand, want, out, ws):
    """The general path for float blocks: pattern rounding, or significands, then NaN
    and infinity lanes patched from the source patterns."""
    src = native_format(blk.dtype)
    layout = _layout(src, fmt, attrs.rounding)
    work = np.float32 if layout is fp32 else np.float64
    if blk.dtype == work:
        wblk = blk
    else:
        wblk = ws.get("widened", work, blk.size)
        np.copyto(wblk, blk)
    if layout is None:
        fl = encode_significands(float64_significands(wblk, ws), fmt, attrs, rand, want, out, ws)
        has_special = True  # checked below
    else:
        words = _fp64_top_words(wblk, ws) if layout is _FP64_TOP else wblk.view(UINT[layout.bits])
        fl, max_mag = _encode_float_patterns(words, layout, fmt, attrs, rand, want, out, ws)
        has_special = max_mag >= layout.infinity_bits
    if has_special:
        u = blk.view(UINT[src.bits])
        mag = u & u.dtype.type((1 << (src.bits - 1)) - 1)
        if mag.max(initial=0) >= src.infinity_bits:
            _patch_specials(u, mag, src, fmt, attrs, out, fl)
    return fl


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


def _encode_float_patterns(u, src, fmt, attrs, rand, want, out, ws):
    """The pattern path: round float32/float64 patterns directly (width W = 32 or 64).

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
    needs_clamp = want or not attrs.subnormals or attrs.rounding not in (
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
    _, fl = round_pack(fmt, Unrounded(negative, v, s), attrs, rand_w, want, out, scratch)
    return _rounding_flags(fl), max_mag


def _clamp_for_stochastic(v, s_true, W):
    """Where more than W-1 bits are cut, pre-shift ``v`` in place so the probability stays
    v / 2**s_true to within 2**-(W-1) (deterministic modes need no such care: see
    round_pack).  Returns ``v``.

    The bits shifted out are ORed into bit 0 (sticky), so a value far below the
    smallest subnormal still counts as inexact (and tiny), not as an exact zero; that
    moves the probability by at most 2**-(W-1), within the bound above.  Only zeros and
    such tiny values are touched, so the work is on those lanes alone.
    """
    dt = v.dtype.type
    over = s_true > dt(W - 1)
    if not over.any():
        return v
    idx = np.nonzero(over)
    tiny = v[idx]
    excess = np.minimum(s_true[idx] - dt(W - 1), dt(W - 1))
    shifted = tiny >> excess
    sticky = ((shifted << excess) != tiny).astype(v.dtype)
    v[idx] = shifted | sticky
    return v


def _patch_specials(u, mag, src, fmt, attrs, bits, fl):
    """Overwrite NaN and infinity lanes, decided from the original source patterns (a
    widening cast on the way could have quieted a signaling NaN)."""
    idx = np.nonzero(mag >= src.infinity_bits)
    frac = (mag[idx] & u.dtype.type(src.mantissa_mask)).astype(np.uint64)
    neg = (u[idx] >> u.dtype.type(src.bits - 1)).astype(np.uint64)
    sbits, sfl = encode_specials(neg, frac, src.mantissa_bits, fmt, attrs, fl is not None)
    bits[idx] = sbits
    if fl is not None:
        fl.set_at(idx, sfl, bits.shape)


def float64_significands(x, ws=None):
    """float64 -> (negative, sig in [2**61, 2**62) or 0, e_top): exact, normalising
    subnormals.  The results live in buffers of the block workspace ``ws`` (one of the
    array's size if None; see Workspace), to be used up within the block."""
    n = x.size
    ws = Workspace(n) if ws is None else ws
    u = x.view(np.uint64)
    frac = np.bitwise_and(u, np.uint64((1 << 52) - 1), out=ws.get("sig.frac", np.uint64, n))
    negative = np.right_shift(u, np.uint64(63), out=ws.get("sig.negative", np.uint64, n))
    E = np.right_shift(u, np.uint64(52), out=ws.get("sig.e_top", np.uint64, n)).view(np.int64)
    E &= np.int64(0x7FF)  # the biased exponent, sign bit dropped
    sig = np.bitwise_or(frac, np.uint64(1 << 52), out=ws.get("sig.sig", np.uint64, n))
    sig <<= np.uint64(_exact.SIG_TOP - 52)
    sub = np.equal(E, 0, out=ws.get("sig.sub", np.bool_, n))
    e_top = E
    e_top -= np.int64(1023)
    if sub.any():
        sub_frac = frac[sub]
        bl = _bit_length(sub_frac)
        nz = bl > 0
        shift = np.where(nz, _exact.SIG_TOP + 1 - bl, 0).astype(np.uint64)
        sig[sub] = np.where(nz, sub_frac << shift, np.uint64(0))
        e_top[sub] = np.where(nz, bl - 1 - 1074, 0)
    return negative, sig, e_top


def _bit_length(mag):
    """Exact bit length of uint64 values (float conversion may round up a power of two)."""
    _, e = np.frexp(mag.astype(np.float64))
    bl = e.astype(np.int64)
    hi = np.where(bl > 0, bl - 1, 0).astype(np.uint64)
    bl -= ((mag >> hi) == 0) & (bl > 0)
    return bl


# =====================================================================================
# integers, and the generic path: significands
# =====================================================================================
def _encode_ints(blk, fmt, attrs, rand, want, out, ws):
    """Integers: through float64 when every value of the block has at most 53 bits (all
    of them for 8- to 32-bit dtypes), else the generic path.  64-bit integers under
    stochastic rounding always take the generic path, so that an element's random draw
    is spent the same way whatever else shares its block."""
    if blk.dtype.itemsize <= 4 or (attrs.rounding is not Rounding.STOCHASTIC and
                                   blk.max(initial=0) <= (1 << 53) and
                                   (blk.dtype.kind == "u" or blk.min(initial=0) >= -(1 << 53))):
        return _encode_floats(blk.astype(np.float64), fmt, attrs, rand, want, out, ws)
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
    return encode_significands((negative, sig, e_top), fmt, attrs, rand, want, out, ws)


def encode_significands(significands, fmt, attrs, rand, want, out, ws=None):
    """The generic path: ``significands`` = ``(negative, sig, e_top)`` as
    :func:`float64_significands` gives them, value = (-1)**negative * sig * 2**(e_top - 61),
    sig in [2**61, 2**62) or 0 (e_top is ignored for zeros).  ``sig`` is overwritten;
    ``ws`` is the block workspace for the work arrays (one of the block's size if None).

    In the target, with biased exponent be = e_top + bias, the fraction is cut after
    (61 - m) bits in the normal range and one bit more per binade below it; the
    exponent field is added back after rounding (so a carry still moves into it):

        s = (61 - m) + max(1 - be, 0)          offset = max(be - 1, 0) << m
    """
    negative, sig, e_top = significands
    m, n = fmt.mantissa_bits, sig.size
    ws = Workspace(n) if ws is None else ws
    be = np.clip(e_top, -2200, 2200, out=ws.get("enc.be", np.int64, n))
    be += np.int64(fmt.bias)
    # zeros: no exponent (a product, not a masked copy: zero lanes may be anywhere)
    np.multiply(be, np.not_equal(sig, 0, out=ws.get("enc.nonzero", np.bool_, n)), out=be)
    s_true = np.subtract(np.int64(1), be, out=ws.get("enc.s_true", np.int64, n))
    np.maximum(s_true, 0, out=s_true)
    s_true += np.int64(_exact.SIG_TOP - m)
    s_true = s_true.view(np.uint64)
    s = np.minimum(s_true, np.uint64(63), out=ws.get("enc.s", np.uint64, n))
    offset = np.clip(be, 1, (1 << fmt.exponent_bits) + 1, out=be)
    offset -= np.int64(1)
    offset = offset.view(np.uint64)
    offset <<= np.uint64(m)
    if rand is not None:
        sig = _clamp_for_stochastic(sig, s_true, 64)
    scratch = [ws.get("enc.r", np.uint64, n), ws.get("enc.tmp", np.uint64, n)]
    _, fl = round_pack(fmt, Unrounded(negative, sig, s, offset), attrs, rand, want, out, scratch)
    return _rounding_flags(fl)


def _rounding_flags(fl):
    """round_pack's ``(overflow, underflow, inexact)`` as FlagMasks (a rounding raises
    neither invalid nor divide_by_zero)."""
    if fl is None:
        return None
    overflow, underflow, inexact = fl
    return FlagMasks(overflow=overflow, underflow=underflow, inexact=inexact)


# =====================================================================================
# NaN and infinity inputs; one exact scalar
# =====================================================================================
def encode_specials(negative, frac, frac_bits, fmt, attrs, want):
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

    overflow = None
    if fmt.has_infinity:
        inf_out = sign | dt(fmt.infinity_bits)
    elif attrs.saturate or fmt.specials is Specials.FINITE:
        inf_out = sign | dt(fmt.max_finite_bits)
        overflow = ~is_nan
    else:
        inf_out = nan_out if fmt.specials is Specials.FNUZ else sign | dt(fmt.nan_bits)
        invalid = invalid | ~is_nan
    bits = np.where(is_nan, nan_out, inf_out)
    # an overflow here is inexact too (the one mask serves both: these flags are a part,
    # merged into a whole, never written into)
    return bits, (FlagMasks(invalid=invalid, overflow=overflow, inexact=overflow) if want else None)


def encode_exact(value: "_exact.ExactValue", fmt, attrs, key):
    """One exact scalar through the same rounding point (as a one-element block; under
    stochastic rounding it takes the bits of element 0 of ``key``'s stream, as a
    one-element array would).

    Rounds ``value.significand``, which parse_exact computed with work bounded by the
    formats (values beyond every format's range come as stand-ins past the bound): a
    handful of numpy scalar operations, whatever the value's exponent.
    """
    negative = np.array([value.negative], dtype=np.uint64)
    if value.kind != "finite":
        # a payload-less NaN: the quiet bit alone, or for "snan" only the lowest bit of a
        # field wide enough that no target keeps it (so both give the canonical NaN)
        frac_bits = 60
        frac = np.array([0 if value.kind == "inf" else (1 if value.signaling else 1 << 59)], dtype=np.uint64)
        bits, fl = encode_specials(negative, frac, frac_bits, fmt, attrs, True)
    else:
        sig, e_top = value.significand
        e_top = max(min(e_top, 4000), -4000)
        rand = None if key is None else bits_at(key, np.zeros(1, dtype=np.uint64))  # element 0
        bits = np.empty(1, dtype=fmt.storage_dtype)
        significands = (negative, np.array([sig], dtype=np.uint64), np.array([e_top], dtype=np.int64))
        fl = encode_significands(significands, fmt, attrs, rand, True, bits)
    return bits[0], fl.to_flags(()).squeezed()


#: the scalar types the one-value path takes (the float dtype they are read as)
_SCALAR_FLOATS = {float: np.float64, np.float64: np.float64, np.float32: np.float32, np.float16: np.float16}


def one_float(x):
    """``(value, shape, float type)`` of a float scalar or a native float array of one
    element, else None."""
    kind = type(x)
    if kind in _SCALAR_FLOATS:
        return float(x), (), _SCALAR_FLOATS[kind]
    if kind is np.ndarray and x.size == 1 and x.dtype.type in _SCALAR_FLOATS and x.dtype.isnative:
        return float(x.reshape(-1)[0]), x.shape, x.dtype.type
    return None


def encode_scalar(x, fmt, attrs):
    """``(pattern, flag code)`` of one finite float or zero rounded by
    softfloat._fastpaths' scalar path, or None (the general path: NaN, infinity,
    stochastic rounding -- whose draw moves the generator -- and what the scalar path
    declines)."""
    if attrs.rounding is Rounding.STOCHASTIC:
        return None
    v = float(x)
    if v == 0.0:
        negative = math.copysign(1.0, v) < 0 and fmt.has_negative_zero
        found = ((1 << (fmt.bits - 1)) if negative else 0, 0) if _fastpaths.ENABLED else None
    elif v - v != 0.0:
        return None
    else:
        found = _fastpaths.scalar_float(v, fmt, attrs)
    return found
