"""Random bits for stochastic accumulation, addressed by what they round, not by when.

A sum makes many roundings per output element; their random bits must not depend on how
the work is cut into blocks or tiles.  So each rounding's 64 bits are a pure function of
(key, event, output index): the SplitMix64 generator (Steele, Lea and Flood 2014) with a
stream seed per event,

    seed  = mix(key ^ mix(event))            event = kind << 56 | level << 48 | step
    draws = mix(seed + (q + 1) * GOLDEN)     for output elements q (flat, C order)

where ``mix`` is SplitMix64's finaliser, a bijection of 64-bit words.  ``key`` is drawn
once per call from the user's ``rng``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ADD", "FINAL", "LEAF", "PAIR", "PRODUCT", "PROMOTE", "draws", "key_from"]

# the kinds of rounding an accumulation makes (the event's top byte)
ADD, PRODUCT, LEAF, PAIR, PROMOTE, FINAL = range(1, 7)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def _mix(z):
    """SplitMix64's finaliser, in place on a uint64 array (or on a numpy scalar)."""
    z ^= z >> _S30
    z *= _M1
    z ^= z >> _S27
    z *= _M2
    z ^= z >> _S31
    return z


def key_from(rng: np.random.Generator) -> np.uint64:
    """One 64-bit key per call, taken from the caller's generator (which it advances)."""
    return np.uint64(rng.bit_generator.random_raw())


def draws(key, kind: int, step, q0: int, n: int, level: int = 0) -> np.ndarray:
    """64 random bits for each of the output elements q0 .. q0+n-1 at one event.

    ``step`` is an int, or an array of ints (one event per row): the result then has shape
    ``(len(step), n)``.
    """
    with np.errstate(over="ignore"):
        event = np.asarray(step, dtype=np.uint64) | np.uint64((kind << 56) | (level << 48))
        seed = _mix(np.bitwise_xor(_mix(event.copy()), np.uint64(key)))
        q = np.arange(q0 + 1, q0 + n + 1, dtype=np.uint64)
        q *= _GOLDEN
        return _mix(np.add.outer(seed, q) if seed.ndim else q + seed)
