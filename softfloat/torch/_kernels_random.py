"""softfloat._random's counter-based draws in torch integer operations, on any device.

Element ``i`` (its flat C-order index) of a stochastic rounding takes the 64 random bits

    bits(i) = mix(key + (i + 1) * GOLDEN)

(SplitMix64's output number i + 1 from state ``key``; see :mod:`softfloat._random`).  torch
has no uint64 arithmetic on every device, but int64 holds the same 64 bits: wrapping
addition and multiplication give the same bit patterns for signed and unsigned words, and
a logical right shift is an arithmetic one with the copied sign bits masked off.  So the
bits here are numpy's, bit for bit, on the CPU and on CUDA.
"""

from __future__ import annotations

import torch

__all__ = ["as_signed", "bits_at", "logical_right_shift"]

_GOLDEN = 0x9E3779B97F4A7C15
_M1, _M2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def as_signed(word: int) -> int:
    """A 64-bit unsigned word as the int64 with the same bits."""
    word = int(word) & ((1 << 64) - 1)
    return word - (1 << 64) if word >= 1 << 63 else word


def logical_right_shift(z: torch.Tensor, k: int) -> torch.Tensor:
    """``z >> k`` on the 64-bit pattern read as unsigned (1 <= k <= 63): int64's shift
    copies the sign bit, so the top ``k`` bits are masked off."""
    return (z >> k) & ((1 << (64 - k)) - 1)


def bits_at(key, count: int, device) -> torch.Tensor:
    """The 64 random bits (as int64 patterns) of flat positions 0 .. count-1 under
    ``key`` (a 64-bit unsigned word, or a 0-d int64 tensor with its bits, as the compiled
    kernels take it): softfloat._random.bits_at(key, arange(count)).

    >>> import numpy as np
    >>> from softfloat._random import bits_at as numpy_bits
    >>> got = bits_at(2**64 - 5, 4, "cpu").numpy().view(np.uint64)
    >>> bool((got == numpy_bits(np.uint64(2**64 - 5), np.arange(4))).all())
    True
    """
    z = torch.arange(1, count + 1, dtype=torch.int64, device=device)
    z *= as_signed(_GOLDEN)
    z += key if isinstance(key, torch.Tensor) else as_signed(key)
    z ^= logical_right_shift(z, 30)
    z *= as_signed(_M1)
    z ^= logical_right_shift(z, 27)
    z *= as_signed(_M2)
    z ^= logical_right_shift(z, 31)
    return z
