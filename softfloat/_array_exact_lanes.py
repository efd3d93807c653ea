"""Exact lanes of the Array's floor_divide and ldexp: the exact integer floor(x / y) and
the exact x * 2**k of float64 lanes, as the triples (negative, significand, exponent) the
rounding point takes, computed with uint64/int64 arrays, and their rounding once into the
format (the same rounding point a Python int or Fraction goes through in ``codec.encode``).
"""

from __future__ import annotations

import numpy as np

from ._encode import encode_significands
from ._exact import FAR_ABOVE, FAR_BELOW, SIG_TOP
from ._options import resolve_attributes
from ._random import GOLDEN, mix

__all__ = ["floor_significand", "ldexp_significand", "patched"]


# ---- exact lanes as the rounding point takes them: (negative, sig, e_top), value =
# (-1)**negative * sig * 2**(e_top - 61), sig a 62-bit significand whose last bit is
# sticky (softfloat._exact.to_significand), computed with uint64/int64 arrays ----
_TOP = np.uint64(1 << SIG_TOP)
_STAND_IN = np.uint64((1 << SIG_TOP) | 1)  # softfloat._exact's stand-in beyond every format's range


def _integer_significand(x):
    """|x| = a * 2**(e - 53) for finite nonzero float64 ``x``: (a in [2**52, 2**53) as
    uint64, e as int64) -- exact, subnormals included (frexp normalises them)."""
    m, e = np.frexp(np.abs(x))
    return np.ldexp(m, 53).astype(np.uint64), e.astype(np.int64)


def _bit_length(n):
    """The bit length of each uint64 ``n`` below 2**62 (0 for 0): from float64's exponent,
    less one where the conversion rounded n up to the next power of two."""
    e = np.frexp(n.astype(np.float64))[1].astype(np.int64)
    below = (n >> np.maximum(e - 1, 0).astype(np.uint64)) == 0
    return e - (below & (n != 0))


def floor_significand(x, y):
    """floor(x / y) for finite nonzero float64 lanes as ``(negative, sig, e_top)``, the
    triple softfloat._exact.to_significand gives the Python int math.floor(Fraction(x) /
    Fraction(y)), stand-in included (so the rounding point rounds it bit for bit as
    ``codec.encode`` of that int).

    Proof.  With |x| = a 2**(ea-53), |y| = b 2**(eb-53) (a, b in [2**52, 2**53)), t = 61
    if a >= b else 62, long division in 10-bit steps (each partial remainder r < b <
    2**53, so r << 10 fits in uint64) gives k = floor(a 2**t / b) in [2**61, 2**62) and
    r = a 2**t - k b in [0, b); so |x / y| = (k + f) 2**E, E = ea - eb - t, f = r / b in
    [0, 1).  floor(x / y) is floor(|x / y|) = N for a positive quotient and -ceil(|x / y|)
    for a negative one.

    * E < 0, j = -E: floor((k + f) / 2**j) = k >> j (k + f < ((k >> j) + 1) 2**j), and
      ceil((k + f) / 2**j) = (k >> j) + 1 exactly where k mod 2**j or f is nonzero.  Both
      are exact integers below 2**62 (0 for j >= 63), normalised to 62 bits.
    * E >= 0: floor(|x / y|) = k 2**E + floor(f 2**E) with 0 <= floor(f 2**E) < 2**E, so
      its leading 62 bits are k and its sticky bit is floor(f 2**E) != 0, i.e. f 2**E >= 1,
      i.e. r >= c = ceil(b / 2**E) (integers); c = 1 for E >= 53 (b < 2**53).  Likewise
      ceil(|x / y|) = k 2**E + u, u = ceil(f 2**E) in [0, 2**E]: u = 2**E (a carry into
      k, renormalised where k + 1 = 2**62) exactly where r > 0 and (b - r) 2**E < b, i.e.
      b - r < c; the sticky bit is 0 < u < 2**E.
    * e_top = bit length - 1 (61 + E for E >= 0); at or beyond 2**(FAR_ABOVE + 1) the
      int's triple is softfloat._exact's stand-in (every format overflows there alike).
    """
    negative = np.signbit(x) != np.signbit(y)
    a, ea = _integer_significand(x)
    b, eb = _integer_significand(y)
    k, r = np.divmod(a, b)
    t = np.where(a >= b, 61, 62)
    for step in [np.uint64(10)] * 6 + [(t - 60).astype(np.uint64)]:
        r <<= step
        q, r = np.divmod(r, b)
        k = (k << step) | q
    e = ea - eb - t
    more = r > 0
    # E < 0: the exact integer, normalised
    j = np.minimum(np.maximum(-e, 0), 63).astype(np.uint64)
    n = k >> j
    n += negative & (((k & ((np.uint64(1) << j) - np.uint64(1))) != 0) | more)
    bl = _bit_length(n)
    small_sig = np.where(n != 0, n << (62 - bl).clip(0, 62).astype(np.uint64), np.uint64(0))
    # E >= 0: k, a carry and a sticky bit
    shift = np.minimum(np.maximum(e, 0), 60).astype(np.uint64)
    c = (b + (np.uint64(1) << shift) - np.uint64(1)) >> shift
    carry = negative & more & ((b - r) < c)
    sticky = np.where(negative, more & ~carry, r >= c)
    big = k + carry
    wrapped = big == (_TOP << np.uint64(1))
    big = np.where(wrapped, _TOP, big) | sticky
    large = e >= 0
    sig = np.where(large, big, small_sig)
    e_top = np.where(large, 61 + e + wrapped, np.maximum(bl - 1, 0))
    beyond = e_top >= FAR_ABOVE + 1
    sig[beyond], e_top[beyond] = _STAND_IN, FAR_ABOVE
    return negative & (sig != 0), sig, e_top


def ldexp_significand(v, k):
    """v * 2**k for finite nonzero float64 ``v`` as ``(negative, sig, e_top)``, the triple
    softfloat._exact gives Fraction(v) * 2**k: exact (v's 53-bit significand moved to
    62 bits), or its stand-in at or beyond 2**(FAR_ABOVE + 1) and below 2**(FAR_BELOW - 1)."""
    a, e = _integer_significand(v)
    e_top = e - 1 + k.astype(np.int64)
    sig = a << np.uint64(SIG_TOP - 52)
    above, below = e_top >= FAR_ABOVE + 1, e_top <= FAR_BELOW - 1
    sig[above | below] = _STAND_IN
    e_top = np.where(above, FAR_ABOVE, np.where(below, FAR_BELOW - 1, e_top))
    return np.signbit(v), sig, e_top


def patched(fmt, ctx, rounded, idx, significands):
    """The lanes ``idx`` (flat indices) of ``rounded`` replaced by ``significands`` rounded
    once, as ``codec.encode`` rounds an exact Python int or Fraction: the same triple
    through the same rounding point, flags overflow, underflow and inexact (invalid and
    divide_by_zero clear), and under stochastic rounding one key drawn from the
    context's generator per lane, in lane order, taking element 0's bits under it (as
    one ``encode`` call per lane did)."""
    result, flags = rounded
    attrs, rng = resolve_attributes(ctx.attributes, rng=ctx.rng)
    rand = None
    if rng is not None:
        rand = mix(rng.bit_generator.random_raw(idx.size).astype(np.uint64) + GOLDEN)
    negative, sig, e_top = significands
    bits = np.empty(idx.size, dtype=fmt.storage_dtype)
    part = encode_significands((negative.astype(np.uint64), sig, np.clip(e_top, -4000, 4000)), fmt, attrs, rand,
                               flags is not None, bits)
    return merged(rounded, idx, bits, None if flags is None else part.to_flags((idx.size,)))


def merged(rounded, idx, bits, part):
    """``rounded`` (bits, Flags of masks or None) with the flat lanes ``idx`` replaced by
    ``bits`` and, where flags are kept, their masks by ``part``'s (Flags over ``idx``):
    copies, the inputs untouched."""
    result, flags = rounded
    result = np.array(result, dtype=bits.dtype)
    result.flat[idx] = bits
    if flags is None:
        return result, None
    masks = {n: np.array(np.broadcast_to(m, result.shape), dtype=bool) for n, m in flags}
    for n, m in part:
        masks[n].flat[idx] = np.broadcast_to(m, idx.shape)
    return result, flags._replace(**masks)
