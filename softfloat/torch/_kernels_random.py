"""softfloat._random's counter-based draws in torch integer operations, on any device.

Element ``i`` (its flat C-order index) of a stochastic rounding takes the 64 random bits

    bits(i) = mix(key + (i + 1) * GOLDEN)

(SplitMix64's output number i + 1 from state ``key``; see :mod:`softfloat._random`).  torch
has no uint64 arithmetic on every device, but int64 holds the same 64 bits: wrapping
addition and multiplication give the same bit patterns for signed and unsigned words, and
a logical right shift is an arithmetic one with the copied sign bits masked off.  So the
bits here are numpy's, bit for bit, on the CPU and on CUDA.

The counter is written ``(i + 1 + key * GOLDEN**-1) * GOLDEN`` (``GOLDEN`` is odd, so it
has an inverse modulo 2**64, and the product is ``key + (i + 1) * GOLDEN`` again, bit for
bit), so that under torch.compile no 64-bit constant multiplies an index expression.
Inductor's index propagation folds arithmetic whose operands are all index expressions or
constants into one sympy index: ``arange(1, n + 1) * GOLDEN`` became the index
``GOLDEN*x0 + GOLDEN``, which Triton evaluates in int32 for tensors of under 2**31
elements ("Scalar -7046029254386353131 is out of range for type int32" on an H200, torch
2.11).  Here the index ``i + 1`` is first added to a value loaded from the key tensor (a
graph input, unknown when the kernel is compiled), so the fold stops at ``x0 + 1`` and the
multiplication by ``GOLDEN`` is int64 arithmetic on data.
"""

from __future__ import annotations

import torch

__all__ = ["as_signed", "bits_at", "logical_right_shift"]

_GOLDEN = 0x9E3779B97F4A7C15
_GOLDEN_INVERSE = pow(_GOLDEN, -1, 1 << 64)  # _GOLDEN * _GOLDEN_INVERSE == 1 modulo 2**64
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
    if isinstance(key, torch.Tensor):  # the compiled kernels' argument: the fold stops at i + 1
        start = key * as_signed(_GOLDEN_INVERSE)
    else:
        start = as_signed(int(key) * _GOLDEN_INVERSE)
    z = torch.arange(1, count + 1, dtype=torch.int64, device=device)
    z += start
    z *= as_signed(_GOLDEN)  # key + (i + 1) * GOLDEN modulo 2**64
    z ^= logical_right_shift(z, 30)
    z *= as_signed(_M1)
    z ^= logical_right_shift(z, 27)
    z *= as_signed(_M2)
    z ^= logical_right_shift(z, 31)
    return z
