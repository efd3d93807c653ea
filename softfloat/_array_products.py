"""Running products along an axis of an :class:`~softfloat.Array` -- behind ``cumprod``,
``prod``, ``multiply.accumulate`` / ``multiply.reduce`` and their nan- forms: one
correctly rounded multiplication after another, left to right, each counted in the
context as the operation "multiply" (as ``p = p * x[k]`` on Arrays).

Few outputs (a chain along a 1-d array, or along an axis of at most :data:`FEW`
columns) step on Python floats where the format is narrow (softfloat._fastpaths'
running_products: the exact float64 product rounded once), about 0.5 us a step against
tens for a vectorised multiplication; a step it hands back (a NaN, 0 * inf, an
overflow, flush-to-zero of a tiny result) is that element's multiplication on the
general path, and the chain goes on.  The flags of every step are recorded as the
general path records them (softfloat.Context.record_steps: the same counts, last flags
and trap).  Stochastic rounding, wider formats and more columns take the general path.
"""

from __future__ import annotations

import math

import numpy as np

from . import _fastpaths, codec, ops
from ._context import get_context
from .ops.kernels import is_narrow
from .rounding import Rounding

__all__ = ["FEW", "running_products"]

#: columns up to which a chain steps on Python floats (each step of the general path is
#: one vectorised multiplication over every column, the scalar path a step per column)
FEW = 4


def running_products(A, bits, fmt):
    """The running products of the patterns ``bits`` (K >= 1 rows of ``fmt``) down axis 0:
    row k is ``bits[0] * ... * bits[k]``, each multiplication rounded once with the
    context's attributes and its flags recorded (patterns of the same shape)."""
    ctx = get_context()
    found = _scalar_products(ctx, bits, fmt)
    if found is not None:
        running, codes = found
        ctx.record_steps("multiply", codes)
        return running
    running = np.empty_like(bits)
    running[0] = bits[0]
    p = A.wrap(bits[0], fmt)
    for k in range(1, bits.shape[0]):
        p = p * A.wrap(bits[k], fmt)
        running[k] = p.bits
    return running


def _scalar_products(ctx, bits, fmt):
    """(running patterns, flag codes of the K - 1 steps) by softfloat._fastpaths'
    running_products, each declined step the general path's multiplication of that
    element; or None where the chain is not taken (see the module docstring)."""
    K = bits.shape[0]
    n = math.prod(bits.shape[1:])
    attrs = ctx.attributes
    if not _fastpaths.ENABLED or K < 2 or not 0 < n <= FEW or attrs.rounding is Rounding.STOCHASTIC \
            or not is_narrow(fmt):
        return None
    values = _fastpaths.scalar_values(fmt, lambda p: np.asarray(codec.decode(p, fmt, dtype=np.float64)),
                                      finite=True)
    columns = bits.reshape(K, n)
    terms = np.asarray(codec.decode(columns, fmt, dtype=np.float64)).T.tolist()
    out = np.zeros((K - 1, n))
    patterns = np.zeros((K - 1, n), dtype=fmt.storage_dtype)
    general = np.zeros((K - 1, n), dtype=bool)  # steps whose pattern is the general path's
    codes = np.zeros((K - 1, n), dtype=np.uint8)
    for c in range(n):
        p, i, column = terms[c][0], 0, terms[c][1:]
        while i < K - 1:
            done = _fastpaths.running_products(p, column[i:] if i else column, fmt, attrs, values)
            if done is None:
                return None
            found, step_codes, count = done
            out[i:i + count, c], codes[i:i + count, c] = found, step_codes
            i += count
            if i == K - 1:
                break
            previous = columns[0, c] if i == 0 else (patterns[i - 1, c] if general[i - 1, c]
                                                     else _pattern(out[i - 1, c], fmt))
            patterns[i, c], codes[i, c] = _general_step(ctx, previous, columns[i + 1, c], fmt)
            general[i, c] = True
            p = float(np.asarray(codec.decode(patterns[i, c], fmt, dtype=np.float64)))
            i += 1
    running = np.empty_like(columns)
    running[0] = columns[0]
    running[1:] = _patterns(out, fmt)
    np.copyto(running[1:], patterns, where=general)
    return running.reshape(bits.shape), codes.reshape((K - 1,) + bits.shape[1:])


def _general_step(ctx, a, b, fmt):
    """The general path's multiplication of two patterns (an Array's ``*``): (pattern,
    packed flags, bit j the j-th flag of FLAG_NAMES)."""
    bits, flags = ops.mul(a, b, fmt, return_flags=True, attributes=ctx.attributes, rng=ctx.rng)
    return bits, sum(1 << j for j, (_, mask) in enumerate(flags) if mask)


def _pattern(value: float, fmt):
    """The pattern of one value of ``fmt`` (exact)."""
    return _patterns(np.array([value]), fmt)[0]


def _patterns(values, fmt):
    """The patterns of values of ``fmt`` (exact: no rounding happens; a NaN, only where
    the general path's pattern replaces it)."""
    if fmt.native_dtype is not None:
        with np.errstate(invalid="ignore"):
            return values.astype(fmt.native_dtype).view(fmt.storage_dtype)
    return np.asarray(codec.encode(values, fmt))
