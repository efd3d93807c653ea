"""Chains along an axis of an :class:`~softfloat.Array`, one rounding after another:
running products (``cumprod``, ``prod``, ``multiply.accumulate`` / ``multiply.reduce``
and their nan- forms), each multiplication correctly rounded and counted in the context
as the operation "multiply" (as ``p = p * x[k]`` on Arrays); and running sums
(``cumsum``: each addition one IEEE addition in the accumulator, the K - 1 additions one
operation whose flags come per step, swamped ones counted).

Few outputs (a chain along a 1-d array, or along an axis of at most :data:`FEW`
columns) step on Python floats (softfloat._fastpaths' running_products and scalar_sums:
their proofs in softfloat._fastpaths._chain), about 0.5 to 2 us a step against tens for
a vectorised one; a step handed back (a NaN, an infinity in a sum, 0 * inf, an
overflow, flush-to-zero of a tiny result) is that element's operation on the general
path, and the chain goes on.  Products need a narrow format (exact float64 products);
the flags of every step are those the general path records.  Stochastic rounding (the
general path draws each step's bits from the context's generator) and more columns take
the general path: one vectorised operation per step.  Running sums to nearest even in a
numpy float accumulator are numpy's own add.accumulate.
"""

from __future__ import annotations

import math

import numpy as np

from . import _fastpaths, codec, ops
from ._context import get_context
from ._flagmasks import flag_mask
from .flags import FLAG_NAMES, AccumulationFlags
from .formats import Format
from .ops.kernels import addition_flags, is_narrow
from .rounding import Rounding

__all__ = ["FEW", "running_products", "running_sums"]

#: columns up to which a chain steps on Python floats (each step of the general path is
#: one vectorised operation over every column, the scalar path a step per column)
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


def running_sums(terms, acc: Format, ctx):
    """cumsum's chain: the running sums of the accumulator patterns ``terms`` (K rows)
    down axis 0, each addition rounded into ``acc`` with the context's attributes, and
    the steps' AccumulationFlags (shape (K - 1, ...); None where flags are not tracked
    or K < 2), which the caller records as one operation."""
    if terms.shape[0] < 2:
        return terms.copy(), None
    running, steps = _native_running_sums(terms, acc, ctx)
    if running is None:
        found = _scalar_sums(ctx, terms, acc)
        if found is not None:
            running, codes = found
            flags = [flag_mask(codes, name) for name in FLAG_NAMES]
            return running, _steps_flags(ctx, running, terms, acc, flags)
        running, steps = _running_sums(terms, acc, ctx)
    return running, steps


def _native_running_sums(terms, acc: Format, ctx):
    """numpy's add.accumulate (strictly sequential) where it is the correctly rounded chain:
    nearest_even, no saturation or flushing (a sum that lands below the smallest normal is
    exact anyway), and no NaN anywhere (NaN results follow the platform's rules, not the FPU).
    Returns (None, None) where that does not hold, or where softfloat._fastpaths.ENABLED
    (the one off switch of the shortcuts) is False."""
    native = acc.native_dtype  # numpy's addition in it is correctly rounded to nearest even
    if native is None or not _fastpaths.ENABLED:
        return None, None
    if ctx.rounding is not Rounding.NEAREST_EVEN or ctx.saturate or not ctx.subnormals:
        return None, None
    t = terms.view(native)
    with np.errstate(all="ignore"):
        running = np.add.accumulate(t, axis=0)
        if np.isnan(running).any():
            return None, None
        if not ctx.track_flags:
            return running.view(terms.dtype), None
        fl, swamped = addition_flags(running[:-1], t[1:], running[1:])
    steps = fl.to_flags(running[1:].shape, swamped=swamped.astype(np.int64))
    return running.view(terms.dtype), steps


def _running_sums(terms, acc: Format, ctx):
    """The chain one correctly rounded addition at a time along axis 0 (vectorised over
    the other axes): the path for directed and stochastic modes, other accumulators, NaNs."""
    running = np.empty_like(terms)
    running[0] = terms[0]
    masks = []
    for k in range(1, terms.shape[0]):
        running[k], f = ctx.split(ops.add(running[k - 1], terms[k], acc, return_flags=ctx.track_flags,
                                          **ctx.options()))
        masks.append(f)
    flags = None if not ctx.track_flags else [np.stack([np.asarray(getattr(f, name)) for f in masks])
                                              for name in FLAG_NAMES]
    return running, _steps_flags(ctx, running, terms, acc, flags)


def _steps_flags(ctx, running, terms, acc, flags):
    """The AccumulationFlags of the steps running[k] = running[k - 1] + terms[k]: the
    five masks ``flags`` (each (K - 1, ...), in FLAG_NAMES order) and the swamped steps
    (a non-zero finite term that left a finite running sum unchanged); None where flags
    are not tracked."""
    if not ctx.track_flags:
        return None
    values = np.asarray(codec.decode(running, acc, dtype=np.float64))
    term_values = np.asarray(codec.decode(terms[1:], acc, dtype=np.float64))
    swamped = (running[1:] == running[:-1]) & np.isfinite(term_values) & (term_values != 0) \
        & np.isfinite(values[:-1])
    return AccumulationFlags(*flags, swamped=swamped.astype(np.int64))


def _scalar_products(ctx, bits, fmt):
    """(running patterns, flag codes of the K - 1 steps) by softfloat._fastpaths'
    running_products, each declined step the general path's multiplication of that
    element; or None where the chain is not taken (see the module docstring)."""
    if not is_narrow(fmt):
        return None
    return _scalar_chains(ctx, bits, fmt, lambda p, terms, attrs, values: _fastpaths.running_products(
        p, terms, fmt, attrs, values), ops.mul)


def _scalar_sums(ctx, terms, acc):
    """:func:`_scalar_products` for running sums in ``acc`` (softfloat._fastpaths.
    scalar_sums, each declined step the general path's addition)."""
    def steps(s, ts, attrs, values):
        trace = []
        found = _fastpaths.scalar_sums(s, ts, None, acc, attrs, values, trace)
        return found if found is None else ([v for v, _ in trace], [c for _, c in trace], found[3])
    return _scalar_chains(ctx, terms, acc, steps, ops.add)


def _scalar_chains(ctx, bits, fmt, steps, general_op):
    """The chains down axis 0 of the patterns ``bits`` of ``fmt``, column by column:
    ``steps(first value, the next terms, attrs, values)`` gives ``(values, codes, done)``
    for the steps it takes, and ``general_op`` (the operation, on patterns) does the one
    it hands back.  (running patterns, packed flag codes of the K - 1 steps), or None
    where chains are not taken here."""
    K = bits.shape[0]
    n = math.prod(bits.shape[1:])
    attrs = ctx.attributes
    if not _fastpaths.ENABLED or K < 2 or not 0 < n <= FEW or attrs.rounding is Rounding.STOCHASTIC:
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
            done = steps(p, column[i:] if i else column, attrs, values)
            if done is None:
                return None
            found, step_codes, count = done
            out[i:i + count, c], codes[i:i + count, c] = found, step_codes
            i += count
            if i == K - 1:
                break
            previous = columns[0, c] if i == 0 else (patterns[i - 1, c] if general[i - 1, c]
                                                     else _pattern(out[i - 1, c], fmt))
            patterns[i, c], codes[i, c] = _general_step(ctx, general_op, previous, columns[i + 1, c], fmt)
            general[i, c] = True
            p = float(np.asarray(codec.decode(patterns[i, c], fmt, dtype=np.float64)))
            i += 1
    running = np.empty_like(columns)
    running[0] = columns[0]
    running[1:] = _patterns(out, fmt)
    np.copyto(running[1:], patterns, where=general)
    return running.reshape(bits.shape), codes.reshape((K - 1,) + bits.shape[1:])


def _general_step(ctx, op, a, b, fmt):
    """The general path's operation (ops.mul: an Array's ``*``; ops.add) on two patterns:
    (pattern, packed flags, bit j the j-th flag of FLAG_NAMES)."""
    bits, flags = op(a, b, fmt, return_flags=True, attributes=ctx.attributes, rng=ctx.rng)
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
