"""Word-level passes the encoding kernels share: float patterns read as unsigned words,
narrowed, shifted and rounded by integer arithmetic (each with the picture it relies on).
"""

from __future__ import annotations

import functools
import sys

import numpy as np

from ..formats import Format, Specials, fp32

__all__ = ["LITTLE_ENDIAN", "MAX_REST_SHARE", "is_top_of_fp32", "nearest_even_sum", "odd_sticky",
           "overshift_is_zero", "shift_into", "spread_sign", "upper_into"]

#: a block with more lanes than this share outside a kernel's proven range goes to the
#: general path whole (gathering many lanes costs more than it saves)
MAX_REST_SHARE = 1 / 8

#: the upper bytes of a word are the later ones in memory (see upper_into)
LITTLE_ENDIAN = sys.byteorder == "little"


def is_top_of_fp32(fmt: Format) -> bool:
    """True when fmt's pattern is the top ``fmt.bits`` bits of float32's, value for value.

    Same exponent width and bias and the same IEEE special values (so the same
    subnormals, infinities and NaN encodings), fewer fraction bits:

        float32  | s | e e e e e e e e | f22 ... f(23-m) | f(22-m) ... f0 |
        fmt      | s | e e e e e e e e | f22 ... f(23-m) |                  (k = 23 - m cut)
    """
    return (fmt.exponent_bits == fp32.exponent_bits and fmt.bias == fp32.bias
            and fmt.specials is Specials.IEEE and fmt.mantissa_bits < fp32.mantissa_bits)


def nearest_even_sum(p, a, t):
    """t <- a + (bit k of a) + the plan's rne_add (H - 1, less the re-bias where there is
    one): with bit k the kept lsb, a tie carries only when it is odd."""
    np.right_shift(a, p.k_, out=t)
    np.bitwise_and(t, p.one, out=t)
    np.add(t, a, out=t)
    np.add(t, p.rne_add, out=t)


def shift_into(t, k, out, scratch=None):
    """out <- t >> k, narrowed to out's dtype.  A shift in place and then a casting copy
    (numpy narrows contiguous integers with SIMD) beat one shift that casts its output
    (a buffered loop) several times over; where k is the width t's words have beyond
    out's (float32 -> bf16: 16) the copy alone does it (:func:`upper_into`)."""
    if out.dtype == t.dtype:
        np.right_shift(t, k, out=out)
        return
    if LITTLE_ENDIAN and int(k) == 8 * (t.itemsize - out.itemsize) and t.flags.c_contiguous:
        upper_into(t, out)
        return
    dst = t if scratch is None else scratch
    np.right_shift(t, k, out=dst)
    np.copyto(out, dst, casting="unsafe")


def upper_into(t, out):
    """out <- the upper out-sized part of each word of t (t >> k for k = the extra bits),
    by one narrowing copy with no shift, on a little-endian machine.

    Read from k/8 bytes in, t's bytes form words whose lower part is the upper part of
    t's words (here u32 -> u16, k = 16), and narrowing keeps exactly that part:

        t in memory     | a0 a1 a2 a3 | b0 b1 b2 b3 | c0 c1 c2 c3 |
        words from +2         | a2 a3 b0 b1 | b2 b3 c0 c1 |
        narrowed              | a2 a3 |       | b2 b3 |            = t >> 16, lane by lane

    The last lane has no whole word from there on; it is shifted on its own.  The words
    read this way are unaligned: numpy's contiguous narrowing copy takes them at about
    the speed of aligned ones (0.09 against 0.08 ns/element, where the shift it saves
    costs 0.09).
    """
    n = t.size
    size = t.itemsize
    if n > 1:
        skip = size - out.itemsize
        words = t.view(np.uint8)[skip: skip + (n - 1) * size].view(t.dtype)
        np.copyto(out[:-1], words, casting="unsafe")
    out[-1] = t[-1] >> t.dtype.type(8 * (size - out.itemsize))


def spread_sign(p, u, t, positive: bool):
    """t <- 2**k - 1 where the lane rounds away from zero (upward: +x, downward: -x),
    else 0, in two passes.

    An arithmetic shift of the sign gives s = all ones for -x, 0 for +x:

        downward   s >> (W - k)       logical: keeps k of the ones for -x, 0 for +x
        upward     (2**k - 1) >> s    a shift by 0 for +x; by 2**W - 1 (>= W) for -x,
                                      which numpy defines as 0 (p.overshift_zero, probed
                                      once per plan; else (u >> (W-1)) - 1, then >> (W - k))
    """
    if positive and not p.overshift_zero:
        np.right_shift(u, p.sign_shift, out=t)
        np.subtract(t, p.one, out=t)
        np.right_shift(t, p.spread_shift, out=t)
        return
    np.right_shift(u.view(p.signed), p.signed_sign_shift, out=t.view(p.signed))
    if positive:
        np.right_shift(p.low, t, out=t)
    else:
        np.right_shift(t, p.spread_shift, out=t)


def odd_sticky(p, a, t):
    """t <- a with bit k ORed with "a cut bit is set": (a & low) + low carries into bit k
    exactly then, and stays below 2**(k+1), so ORing it into a changes nothing above."""
    np.bitwise_and(a, p.low, out=t)
    np.add(t, p.low, out=t)
    np.bitwise_or(t, a, out=t)


@functools.lru_cache(maxsize=None)
def overshift_is_zero(dt) -> bool:
    """True when numpy's right_shift of a dt word by a count of W or more gives 0 (as it
    does since numpy 1.18; C leaves it undefined), also for the count 2**W - 1 that an
    arithmetic shift of a sign spreads: :func:`spread_sign` relies on it."""
    W = np.dtype(dt).itemsize * 8
    counts = np.array([0, W, (1 << W) - 1] * 64, dtype=dt)  # long enough for the vector loop
    got = np.right_shift(dt((1 << (W - 1)) - 1), counts)
    return bool(np.array_equal(got, np.array([(1 << (W - 1)) - 1, 0, 0] * 64, dtype=dt)))
