"""Random bits for stochastic accumulation, addressed by what they round, not by when.

A sum makes many roundings per output element; their random bits must not depend on how
the work is cut into blocks or tiles.  So each rounding's 64 bits are a pure function of
(key, event, output index): the SplitMix64 generator (Steele, Lea and Flood 2014) with a
stream seed per event,

    seed  = mix(key ^ mix(event))            event = kind << 56 | level << 48 | step
    draws = mix(seed + (q + 1) * GOLDEN)     for output elements q (flat, C order)

where ``mix`` is SplitMix64's finaliser, a bijection of 64-bit words (one definition for
the codec, the operations and these reductions: softfloat._random).  ``key`` is drawn
once per call from the user's ``rng``.
"""

from __future__ import annotations

import numpy as np

from .. import _random

__all__ = ["ADD", "FINAL", "LEAF", "PAIR", "PRODUCT", "PROMOTE", "draws", "key_from"]

# the kinds of rounding an accumulation makes (the event's top byte)
ADD, PRODUCT, LEAF, PAIR, PROMOTE, FINAL = range(1, 7)

key_from = _random.key_from
_mix = _random.mix


def draws(key, kind: int, step, q0: int, n: int, level: int = 0, positions=None, into=None) -> np.ndarray:
    """64 random bits for each of the output elements q0 .. q0+n-1 at one event.

    ``step`` is an int, or an array of ints (one event per row): the result then has shape
    ``(len(step), n)``.  ``positions`` (a softfloat._random.Positions) maps the elements of
    a piece of a larger output (a dask chunk) to their flat indices q in the whole.
    ``into``, a pair (out, tmp) of uint64 arrays of the result's shape (with an array
    ``step``): where to write the bits and scratch for the mixing, instead of new arrays
    (whose fresh pages cost three times the arithmetic: see softfloat._scratch).
    """
    with np.errstate(over="ignore"):
        event = np.asarray(step, dtype=np.uint64) | np.uint64((kind << 56) | (level << 48))
        seed = _mix(np.bitwise_xor(_mix(event.copy()), np.uint64(key)))
        q = np.arange(q0 + 1, q0 + n + 1, dtype=np.uint64) if positions is None else \
            positions.take(q0, q0 + n) + np.uint64(1)
        q *= _random.GOLDEN
        if into is not None:
            return _mix(np.add.outer(seed, q, out=into[0]), into[1])
        return _mix(np.add.outer(seed, q) if seed.ndim else q + seed)
