"""Random bits addressed by position, not by the order in which the work is done.

Stochastic rounding needs 64 random bits per rounding.  Taking them one after another
from the caller's generator would tie each element's bits to the order the blocks run
in, so results would change with the block size, the number of threads and a dask
array's chunks.  Instead every call draws one 64-bit ``key`` from the caller's
generator (advancing it by one draw) and element ``i`` (its flat C-order index in the
whole result) takes

    bits(i) = mix(key + (i + 1) * GOLDEN)

the (i+1)-th output of the SplitMix64 generator started at ``key`` (Steele, Lea and
Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014): ``mix`` is its
finaliser, a bijection of 64-bit words, and GOLDEN the odd constant 2**64 / phi.  The
bits of any element can be computed on their own, in any block, thread, chunk or
process, from (key, i) alone.  The accumulation reductions derive one stream seed per
rounding event from the same ``mix`` (softfloat.accumulate._draws).
"""

from __future__ import annotations

import numpy as np

__all__ = ["GOLDEN", "Positions", "bits_at", "bits_into", "key_from", "mix"]

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def mix(z, tmp=None):
    """SplitMix64's finaliser, in place on a uint64 array (or on a numpy scalar); ``tmp``,
    a uint64 array of z's size, holds the shifted words instead of new arrays."""
    with np.errstate(over="ignore"):
        z ^= np.right_shift(z, _S30, out=tmp)
        z *= _M1
        z ^= np.right_shift(z, _S27, out=tmp)
        z *= _M2
        z ^= np.right_shift(z, _S31, out=tmp)
    return z


def key_from(rng: np.random.Generator) -> np.uint64:
    """One 64-bit key per call, taken from the caller's generator (which it advances)."""
    return np.uint64(rng.bit_generator.random_raw())


def bits_at(key, index: np.ndarray) -> np.ndarray:
    """The 64 random bits of the elements at flat positions ``index`` (uint64): SplitMix64's
    outputs number index + 1 from state ``key``.  ``index`` is not modified."""
    return _bits_in_place(key, np.array(index, dtype=np.uint64))


def bits_into(key, positions, start: int, stop: int, out, tmp) -> np.ndarray:
    """``bits_at(key, positions.take(start, stop))`` written into ``out`` (uint64,
    stop - start), with ``tmp`` (the same) as scratch: no new block-sized arrays, whose
    fresh pages cost a page fault each 4 KiB (see softfloat._scratch)."""
    positions.take_into(start, stop, out)
    return _bits_in_place(key, out, tmp)


def _bits_in_place(key, z, tmp=None):
    """Positions z (a uint64 array) replaced by their bits (see bits_at)."""
    with np.errstate(over="ignore"):
        z += np.uint64(1)
        z *= GOLDEN
        z += np.uint64(key)
    return mix(z, tmp)


#: 0, 1, 2, ... as uint64, shared read-only by take_into; grown on demand
_ramp = np.arange(0, dtype=np.uint64)
_RAMP_MAX = 1 << 20  # longer runs take a new arange


class Positions:
    """Flat C-order positions, in a whole array of shape ``full_shape``, of the elements of
    one piece of it: the block ``offsets[d] <= i_d < offsets[d] + shape[d]`` (a dask chunk).
    ``take(start, stop)`` gives the positions of the piece's own flat elements start ..
    stop-1.  ``Positions()`` is the whole array itself (position = own flat index).
    """

    def __init__(self, shape=None, offsets=None, full_shape=None):
        self.shape = None if shape is None else tuple(int(s) for s in shape)
        self.offsets = None if offsets is None else tuple(int(o) for o in offsets)
        self.full_shape = None if full_shape is None else tuple(int(s) for s in full_shape)
        self._base = None  # the piece is one contiguous run of the whole: its first position
        if self.shape is None:
            self._base = 0
        elif all(s == f for s, f in zip(self.shape[1:], self.full_shape[1:])):
            self._base = int(np.ravel_multi_index(self.offsets, self.full_shape)) if self.shape and \
                all(self.shape) else 0
        elif not self.shape:
            self._base = 0

    def take_into(self, start: int, stop: int, out) -> None:
        """take(start, stop) written into ``out``."""
        global _ramp
        n = stop - start
        if self._base is None or n > _RAMP_MAX:
            out[...] = self.take(start, stop)
            return
        ramp = _ramp  # another thread may grow it meanwhile: keep the one we read
        if ramp.size < n:
            ramp = _ramp = np.arange(min(max(n, 2 * ramp.size), _RAMP_MAX), dtype=np.uint64)
        np.add(ramp[:n], np.uint64(self._base + start), out=out)

    def take(self, start: int, stop: int) -> np.ndarray:
        if self._base is not None:
            return np.arange(self._base + start, self._base + stop, dtype=np.uint64)
        local = np.unravel_index(np.arange(start, stop, dtype=np.int64), self.shape)
        where = tuple(i + o for i, o in zip(local, self.offsets))
        return np.ravel_multi_index(where, self.full_shape).astype(np.uint64)
