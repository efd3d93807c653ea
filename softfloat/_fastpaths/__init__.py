"""Proven shortcuts for the commonest conversions, each exact under the condition beside it.

The general path (:mod:`softfloat._encode` feeding :func:`softfloat._round.round_pack`)
handles every format, mode and option.  The kernels here do the same work in a few
integer passes for the cases people run most, and only where the result is provably
the same bits (and flags).  Each kernel's module holds the kernel, its proof and the
condition it is exact under (``applies``, checked once per plan):

* :mod:`._truncate` -- float32 -> a format with float32's 8-bit exponent (bf16, tf32,
  e8mN with IEEE specials), every deterministic mode: the target pattern is the top
  1 + 8 + m bits of the float32 pattern, so rounding is an integer add and a shift;
  float32 -> fp32 itself: the patterns as they are (:func:`._truncate.as_is`, NaNs and
  flushed lanes left to the general path);
* :mod:`._rebias` -- float32 / float64 -> any narrower format, every deterministic mode,
  for lanes inside the target's normal range and zeros (both signs, in the same passes):
  a re-bias, an add and a shift; without flags, overflowing lanes are clamped to IEEE's
  overflow result and nonzero lanes below the smallest normal are rounded by numpy's
  rint/trunc/ceil/floor (or trunc and a compare, for ties away) on the exactly scaled input;
* :mod:`._table` -- float32 -> fp16 and float32 / float64 -> FP8, FP6, FP4 (any format
  whose index has at most 21 bits), every deterministic mode: the result depends only on
  the input's top bits and the OR of the rest, so it is one lookup in a table the general
  path fills once (:mod:`._table_cache` keeps the tables, within a memory bound);
* :mod:`._upper` -- float64 -> a 16-bit format (fp16, bf16) in every deterministic mode
  without flags, when a whole block lies in the target's normal range: the same re-bias
  on the upper 32-bit word of each float64, the lower word read only for its sticky bit
  where the upper word's cut bits are all 0;
* :mod:`._odd32` -- float64 -> fp16 (formats float32's table takes and float64's does
  not) over the whole range, every deterministic mode, flags included: float64 rounded
  to odd into float32 (numpy's cast and a fix of the last bit), then float32's table;
  with flags, blocks whose first 256 lanes are normal or zero go to the re-bias kernel
  with flags (the lanes it leaves through the odd/table passes); without flags, the
  value grid's pattern kernel (:func:`._value_grid.encode_block`);
* :mod:`._native16` -- fp16 add and sub in round to nearest even with flags, on the
  operations' blocks (:func:`float16_block`): the exact float64 sum, numpy's float16
  cast, the flags from the result; and by :mod:`._directed16` toward zero, upward,
  downward and odd: the nearest-even pattern moved to its neighbour where the mode's
  result is the other one (flags from thresholds: fp16 sums below 2**-14 are exact);
* :mod:`._bfloat16` -- bf16 add, sub, mul, div and sqrt on small arrays in every
  deterministic mode (:func:`bfloat16_arithmetic`): the exact result, or a rounding of
  it that decides the same bits and flags, in float64, for the codec's encoder -- or,
  in round to nearest even with every result in bf16's normal range, numpy's float32
  arithmetic and its own rounding (:func:`bfloat16_arithmetic_nearest_even`);
* :mod:`._float32` -- fp32 arithmetic on small arrays likewise (:func:`float32_arithmetic`),
  and in round to nearest even numpy's own float32 arithmetic with the inexact mask
  from exact float64 checks (:func:`float32_arithmetic_nearest_even`); and float64 values
  (libm's) rounded into fp32 by numpy's cast where all are normal (:func:`float32_nearest_even`);
* :mod:`._float16` -- fp16 arithmetic on small arrays (:func:`float16_arithmetic`) and
  float64 blocks of up to ``SHORT_CAST`` elements into fp16 (:func:`encode_block`),
  round to nearest even: numpy's float16 cast, the flags from its result;
* :mod:`._value_grid` -- quantize of float64 / float32 into fp16 or bf16 in its own
  type, every deterministic mode without flags: blocks in the target's normal range by
  integer operations on the input's patterns (:func:`value_grid_normal`), others by
  rounding each value on its grid (its spacing from the exponent field: an AND and a
  maximum) with numpy's rint/trunc/ceil/floor (:func:`value_grid_round`), the plan from
  :func:`value_grid_plan`; and the patterns of those values by a scale in float32 and a
  shift (``encode_block``, for :mod:`._odd32`);
* :mod:`._decoding` -- decoding a format of at most 16 bits: one lookup in a table built
  once by the general decoder, or a left shift where the target's pattern is the top of
  the output float's pattern, for bf16/tf32 into float64 followed by a widening cast.

:mod:`._plan` picks the kernel for (format, input type, attrs) once; :mod:`._words`
holds the word-level passes the kernels share.  :func:`quantize_small` runs the same
kernels on one small array for callers that round many (the training lab), and takes
numpy's float64 -> float32 cast for fp32 in round to nearest even, and float32 as it is
(:func:`_to_float32_by_cast`, with its conditions).

An encoding kernel may leave some lanes to the general path (NaNs, lanes outside the
range its proof covers, rare options): it returns them as a mask and the caller
recomputes just those.  It may also decline a whole block (returns None).

The off switch: every shortcut is reached through the functions of this module, and
each of them reads :data:`ENABLED` first; set it to False and every block takes the
general path (the tests compare the two bit for bit and flag for flag).  The shortcuts
of the layers above (the native accumulation plan and cumsum, the training lab's numpy
arithmetic) read it too.
"""

from __future__ import annotations


import numpy as np

from .. import _scratch
from .._flagmasks import FlagMasks
from .._workspace import BLOCK_SIZE
from ..formats import Format, bf16, fp16, fp32
from ..rounding import Rounding
from . import _bfloat16, _chain, _decoding, _float16, _float32, _native16, _odd32, _plan, _scalar, _table, _truncate, _value_grid
from ._table import TABLE_INDEX_MAX_BITS
from ._words import nearest_even_sum  # (a word pass, no shortcut: the rounded running sums use it)

__all__ = ["ENABLED", "SCRATCH", "BLOCK_FACTOR", "TABLE_INDEX_MAX_BITS", "quantize_block", "TRUNCATING_BLOCK_FACTOR",
           "block_factor", "encode_block", "decode_by_shift", "decode_by_widening", "decode_table", "quantize_small",
           "SCALAR_INEXACT", "SCALAR_UNDERFLOW", "scalar_float", "scalar_ratio", "scalar_sqrt", "scalar_values",
           "running_products", "scalar_sums",
           "float16_arithmetic", "float16_block", "float16_block_applies", "bfloat16_arithmetic", "float32_arithmetic",
           "float32_nearest_even", "float32_arithmetic_nearest_even", "nearest_even_sum",
           "bfloat16_arithmetic_nearest_even", "value_grid_plan", "value_grid_normal", "value_grid_round"]

#: False sends every block down the general path (tests compare the two)
ENABLED = True

#: a fast kernel makes few passes over few buffers, so its blocks can be this many times
#: the general path's (2**14 elements): the per-block cost (workspace, plan, range
#: reduction, flag scatter) is then spread over more elements (benchmarks/bench_fastpaths.py
#: times it).  Blocks it declines are cut back to the general size (softfloat._encode).
BLOCK_FACTOR = 16

#: the same for the truncating kernel (float32 -> bf16/tf32) without flags, whose one
#: work buffer is the block's size: its reading and writing passes stream better over
#: longer blocks, with half as many numpy calls.  With flags (more buffers and masks per
#: block) longer blocks were slower, so those keep BLOCK_FACTOR.
TRUNCATING_BLOCK_FACTOR = 32


def encode_block(blk, fmt: Format, attrs, want: bool, out, ws, general):
    """Encode a contiguous float block by a fast kernel, or return None (declined).

    ``general(x, fmt, attrs, out)`` is the general path (bits into ``out``, its
    FlagMasks returned), which fills a table kernel's tables the first time they are needed.
    Returns ``(flags, rest)``: the FlagMasks as in ``_encode.encode_block`` (or
    None when not ``want``), and a boolean mask of lanes the caller must recompute on
    the general path (their bits and flags here are placeholders), or None.
    """
    if not ENABLED or blk.size == 0:
        return None
    if blk.size <= _float16.SHORT_CAST and blk.dtype.char == "d" and _float16.applies(fmt, attrs):
        masks, rest = _float16.cast(blk, attrs, want, out)
        return (None if masks is None else FlagMasks(**masks)), rest
    plan = _plan.lookup(fmt, blk.dtype.char, attrs)
    if plan is None:
        return None
    if plan.kernel is _table.by_table:
        tables = plan.tables or plan.fill(general, blk.size)
        if tables is not None:
            return _table.by_table(plan, tables, blk, want, out, ws)
        plan = plan.fallback  # a block too small to pay for the tables
        if plan is None:
            return None
    if plan.kernel is _odd32.by_float32:
        return _odd32.by_float32(plan, blk, want, out, ws, general)
    return plan.kernel(plan, blk, want, out, ws)


def quantize_block(blk, fmt: Format, attrs, want: bool, values, ws, general, decode):
    """Quantize a contiguous float block (round into ``fmt``, then back to the input's
    type) into ``values`` by one lookup, or return None (declined).

    Where the encoding takes a table (see :func:`._table.by_table`), a second table holds
    each index's result decoded by ``decode(bits, fmt, out)`` (the codec's decoder), so
    this is the encoding followed by the decoding, in one pass.  ``general`` fills the
    encoding's tables as for encode_block.  Returns the FlagMasks (or None when
    not ``want``), as a one-element list so that "no flags" is not "declined".
    """
    if not ENABLED or blk.size == 0 or values.dtype != blk.dtype:
        return None
    plan = _plan.lookup(fmt, blk.dtype.char, attrs)
    if plan is None or plan.kernel is not _table.by_table:
        return None
    tables = plan.tables or plan.fill(general, blk.size)
    if tables is None:
        return None
    values_table = plan.values(tables, blk.dtype, decode)
    return [_table.lookup_values(plan, tables, values_table, blk, want, values, ws)]


def quantize_small(x, fmt: Format, attrs, decode, general):
    """A small float32/float64 array rounded into ``fmt`` and decoded to
    ``fmt.value_dtype()`` (float32 where it holds the format) as one block, without
    :func:`softfloat.quantize`'s per-call work (option checks, block streaming, flags),
    which costs more than the rounding on small arrays: for callers that round many of
    them, such as the training lab.  None (declined) where no shortcut takes it.

    The same kernels as :func:`encode_block` (the plan's; a table plan's lookup where
    its tables are filled, else its fallback kernel), then the decoding by
    :func:`decode_by_shift` or :func:`decode_table`, so the values are the codec's
    exactly; float64 -> fp32 in round to nearest even is numpy's cast
    and float32 -> fp32 a copy (both :func:`_to_float32_by_cast`).

    * ``decode(bits, fmt, out)``: a general decoder, the decoding table's source;
    * ``general(xs)``: the values :func:`softfloat.quantize` gives for the lanes a kernel
      leaves (NaNs, infinities), a 1-D contiguous array;
    * declined: ENABLED False, more than BLOCK_SIZE elements (there the codec's
      streaming pays: cache-sized blocks, table kernels), a conversion without a kernel,
      a format wider than 16 bits that does not decode by a shift, stochastic rounding.
    """
    if not ENABLED or not 0 < x.size <= BLOCK_SIZE or x.dtype.char not in "fd" or not x.dtype.isnative:
        return None
    if fmt == fp32 and attrs.subnormals and not attrs.saturate and (
            attrs.rounding is Rounding.NEAREST_EVEN if x.dtype == np.float64 else attrs.rounding is not Rounding.STOCHASTIC):
        return _to_float32_by_cast(x, general)
    plan = _plan.lookup(fmt, x.dtype.char, attrs)
    tables = None
    if plan is not None and plan.kernel is _table.by_table:
        tables = plan.tables  # filled by the codec's larger blocks, or None
        if tables is None:
            plan = plan.fallback
    if plan is None:
        return None
    blk = np.ascontiguousarray(x).reshape(-1)
    bits = np.empty(blk.size, dtype=fmt.storage_dtype)
    if tables is not None:
        found = _table.by_table(plan, tables, blk, False, bits, SCRATCH)
    else:
        found = plan.kernel(plan, blk, False, bits, SCRATCH)
    if found is None:
        return None
    values = np.empty(blk.size, dtype=fmt.value_dtype())
    if not _decoding.by_shift(bits, fmt, values):
        table = _decoding.table(fmt, values.dtype, lambda pats, out: decode(pats, fmt, out))
        if table is None:
            return None
        np.take(table, bits, out=values, mode="clip")  # bits < 2**fmt.bits: "clip" only skips the check
    rest = found[1]
    if rest is not None:
        values[rest] = general(blk[rest])
    return values.reshape(x.shape)


def _to_float32_by_cast(x, general):
    """float64 -> fp32 in round to nearest even, or float32 -> fp32 in a deterministic
    mode, subnormals kept, by numpy's cast (C order, as the general path returns).

    Conditions (checked by the caller): numpy's float64 -> float32 cast is IEEE 754's
    convertFormat in round to nearest even -- the machine's conversion in its default
    mode, numpy setting no flush-to-zero: subnormal results kept, overflow to infinity;
    every float32 value is an fp32 value, so each deterministic mode gives it unchanged
    (nothing to round, nothing to flush).  NaN lanes (the quieting and the payload kept
    are the codec's choice) go to ``general``; the max propagates NaN, so one reduction
    finds whether there are any.
    """
    with np.errstate(over="ignore"):  # overflow to infinity is the IEEE result
        values = x.astype(np.float32, order="C")
    top = values.max()
    if top != top:
        nan = np.isnan(values)
        values[nan] = general(np.ascontiguousarray(x[nan]))
    return values


class _ThreadScratch:
    """The block workspace's ``get`` over this thread's named scratch buffers
    (softfloat._scratch): nothing to borrow and give back per call, for the one-block
    calls on small arrays (:func:`quantize_small`, the codec's one-block lane).  No
    result lives in them (the kernels write bits and values into the caller's arrays;
    flag masks here are copied out before the next call)."""

    @staticmethod
    def get(name: str, dtype, n: int):
        return _scratch.buffer("small." + name, dtype, n)


SCRATCH = _ThreadScratch()


def block_factor(fmt: Format, dtype, attrs, want: bool = False) -> int:
    """How many general-path blocks one block may span for this conversion (``want``:
    with flags): the fast kernel's factor where one exists for it, else 1.  Results never
    depend on the block size."""
    if not ENABLED or dtype.char not in "fd":
        return 1
    plan = _plan.lookup(fmt, dtype.char, attrs)
    if plan is None:
        return 1
    return TRUNCATING_BLOCK_FACTOR if plan.kernel is _truncate.truncating and not want else BLOCK_FACTOR


def decode_by_shift(b, fmt: Format, out) -> bool:
    """Write the values of patterns ``b`` into ``out`` by a left shift where that is exact
    (:func:`._decoding.by_shift`); False (nothing written) otherwise."""
    return ENABLED and _decoding.by_shift(b, fmt, out)


def decode_by_widening(b, fmt: Format, out, ws=None) -> bool:
    """Write the values of e8mN patterns into a float64 ``out`` by way of float32 where
    that is exact (:func:`._decoding.by_widening`); False (``out`` partly written)
    otherwise."""
    return ENABLED and _decoding.by_widening(b, fmt, out, ws)


def decode_table(fmt: Format, dtype, build):
    """The 2**fmt.bits values of fmt as a read-only ``dtype`` array, built once by the
    general decoder ``build(patterns, out)`` (:func:`._decoding.table`), or None for
    formats wider than 16 bits."""
    return _decoding.table(fmt, dtype, build) if ENABLED else None


# ---- one value at a time (softfloat._fastpaths._scalar: the proof) ---------------------
SCALAR_INEXACT, SCALAR_UNDERFLOW = _scalar.INEXACT, _scalar.UNDERFLOW


def scalar_ratio(negative: bool, num: int, den: int, fmt: Format, attrs, rand=None):
    """``(pattern, flag bits)`` of ``+-num/den`` (positive ints) rounded into ``fmt`` by
    Python integer arithmetic, or None (declined: switched off, stochastic rounding
    without ``rand`` -- the rounding's 64 random bits, an int -- or of an inexact quotient,
    flush-to-zero of a tiny value, overflow).  Flag bits as
    softfloat._flagmasks.FLAG_BITS: SCALAR_INEXACT, SCALAR_UNDERFLOW."""
    return _scalar.from_ratio(negative, num, den, fmt, attrs, rand) if ENABLED else None


def scalar_float(value: float, fmt: Format, attrs):
    """:func:`scalar_ratio` of a finite non-zero Python float."""
    return _scalar.from_float(value, fmt, attrs) if ENABLED else None


def scalar_sqrt(num: int, k: int, fmt: Format, attrs):
    """:func:`scalar_ratio` of ``sqrt(num * 2**-k)`` (``num`` > 0)."""
    return _scalar.from_sqrt(num, k, fmt, attrs) if ENABLED else None


def scalar_sums(s, terms, rands, acc: Format, attrs, values, trace=None):
    """The chain ``s + terms[0] + terms[1] + ...`` on Python floats rounded into ``acc``,
    until a step is declined (:func:`._chain.sums`: arguments, results, proof), or None
    when switched off."""
    return _chain.sums(s, terms, rands, acc, attrs, values, trace) if ENABLED else None


def running_products(p: float, terms, fmt: Format, attrs, values):
    """The chain ``p = round(p * t)`` over the Python floats ``terms`` of a narrow format
    (softfloat.ops.kernels.is_narrow), step by step until one it hands back (an overflow,
    a NaN, 0 * inf, a declined rounding): ``(values after each step, their flag codes,
    steps done)`` (:mod:`._chain`: the proof), or None when switched off.  ``values``:
    :func:`scalar_values` of the format (``finite=True``)."""
    return _chain.products(p, terms, fmt, attrs, values) if ENABLED else None


_VALUES: dict = {}  # id(fmt) -> (fmt, its values): the entry holds fmt, so the id stays its own


def scalar_values(fmt: Format, build, *, finite=False):
    """Every pattern's value as a list of Python floats (index: the pattern), built once
    by the general decoder ``build(patterns)`` (a float64 array), for formats of at most
    16 bits; None for wider ones or when switched off.  ``finite``: for wider formats, an
    object that decodes finite patterns one by one (``values[pattern]``; the patterns
    the scalar rounding gives) instead of None."""
    if not ENABLED:
        return None
    if fmt.bits > 16 and not finite:
        return None
    found = _VALUES.get(id(fmt))  # (a Format's hash reads all its fields: keyed by id)
    if found is None or found[0] is not fmt:
        if fmt.bits > 16:  # (made once too: it reads the format's fields)
            found = _VALUES[id(fmt)] = (fmt, _scalar.FiniteValues(fmt))
        else:
            found = _VALUES[id(fmt)] = (fmt, build(np.arange(1 << fmt.bits, dtype=fmt.storage_dtype)).tolist())
    return found[1]


def float16_arithmetic(ufunc, patterns, fmt: Format, attrs, want: bool):
    """fp16 ``ufunc`` (np.add, np.subtract, np.multiply, np.divide, np.sqrt) of uint16
    pattern arrays by numpy's float64 arithmetic and float16 cast, where that is the
    correctly rounded result (:mod:`._float16`: fp16, round to nearest even, gradual
    underflow, no saturation, finite operands): ``(bits, masks)`` (masks: a dict of the
    overflow, underflow and inexact masks with ``want`` -- None for one that cannot be
    raised -- else None), or None (declined)."""
    if not ENABLED or not _float16.applies(fmt, attrs):
        return None
    return _float16.run(ufunc, patterns, attrs, want)


def float16_block_applies(ufunc, fmt: Format, attrs) -> bool:
    """Whether :func:`float16_block` may take this operation's blocks (checked once per
    call): switched on, fp16 add/sub, round to nearest even, gradual underflow, no
    saturation (:func:`._native16.applies`).  DAZ and stochastic rounding are the
    caller's to exclude."""
    return ENABLED and _native16.applies(fmt, attrs, ufunc)


def float16_block(ufunc, x, y, attrs, want: bool, out, ws, build):
    """One block of fp16 ``ufunc`` (np.add, np.subtract) of the exact float64 operand
    values ``x``, ``y``, rounded into the uint16 ``out`` by numpy's float64 arithmetic
    and float16 cast (:mod:`._native16`, with its proof), where
    :func:`float16_block_applies`.  Returns ``[flags]`` (the
    block's FlagMasks with ``want``, else None), or None (declined: a non-finite result;
    the general path takes the block).  ``build(patterns, out)`` is the general decoder
    that fills fp16's decoding table once."""
    return _native16.run(ufunc, x, y, attrs, want, out, ws, _decoding.table(fp16, np.float64, build))


def bfloat16_arithmetic(ufunc, patterns, fmt: Format, attrs, narrow: bool = False):
    """bf16 ``ufunc`` (np.add, np.subtract, np.multiply, np.divide, np.sqrt) of uint16
    pattern arrays as float64 values whose rounding into bf16 (by the codec's encoder,
    flags included) is the correctly rounded result (:mod:`._bfloat16`: bf16, a
    deterministic mode, finite operands, nonzero divisors, non-negative radicands), or
    None (declined).  ``narrow``: float32 values where float32 holds them all (the
    codec's faster input without flags).  DAZ is the caller's to exclude."""
    if not ENABLED or not _bfloat16.applies(fmt, attrs):
        return None
    return _bfloat16.exact_values(ufunc, patterns, attrs, narrow)


def float32_arithmetic(ufunc, patterns, fmt: Format, attrs):
    """fp32 ``ufunc`` (np.add, np.subtract, np.multiply, np.divide, np.sqrt) of uint32
    pattern arrays as float64 values whose rounding into fp32 (by the codec's encoder,
    flags included) is the correctly rounded result (:mod:`._float32`: a deterministic
    mode, finite operands, nonzero divisors, non-negative radicands), or None (declined).
    DAZ is the caller's to exclude."""
    if not ENABLED or not _float32.applies(fmt, attrs):
        return None
    return _float32.exact_values(ufunc, patterns, attrs)


def float32_arithmetic_nearest_even(ufunc, patterns, fmt: Format, attrs, want: bool):
    """fp32 ``ufunc`` (np.add, np.subtract, np.multiply, np.divide, np.sqrt) of uint32
    pattern arrays by numpy's own float32 arithmetic: ``(bits, inexact)`` (the inexact
    mask, the only flag it raises, with ``want``; else None), or None (declined, or
    switched off): fp32 in round to nearest even with gradual underflow and without
    saturation (:func:`._float32.nearest_even`, its conditions and proof).  DAZ is the
    caller's to exclude."""
    if not ENABLED or not _nearest_even_applies(fmt, fp32, attrs):
        return None
    return _float32.nearest_even(ufunc, patterns, want)


def bfloat16_arithmetic_nearest_even(ufunc, patterns, fmt: Format, attrs, want: bool):
    """bf16 ``ufunc`` (np.add, np.subtract, np.multiply, np.divide, np.sqrt) of uint16
    pattern arrays from numpy's float32 arithmetic, rounded to nearest even: ``(bits,
    inexact)`` (the inexact mask with ``want``, else None), or None (declined, or switched
    off): bf16 in round to nearest even, every result a bf16 normal or zero
    (:func:`._bfloat16.nearest_even`, its conditions and proof).  DAZ is the caller's to
    exclude."""
    if not ENABLED or not _nearest_even_applies(fmt, bf16, attrs):
        return None
    return _bfloat16.nearest_even(ufunc, patterns, want)


def float32_nearest_even(values):
    """``(bits, inexact)`` of float64 ``values`` (libm's, softfloat._array_libm) rounded
    to nearest even into fp32 where every one lies in fp32's normal range or is zero
    (:func:`._float32.rounded_values`, with its proof), or None (declined, or switched
    off): the codec's rounding then takes them."""
    return _float32.rounded_values(values) if ENABLED else None


def _nearest_even_applies(fmt: Format, target: Format, attrs) -> bool:
    """``fmt`` is ``target``, rounded to nearest even with gradual underflow, without
    saturation (results in the normal range make tininess and flushing moot, but the
    fp32 lane without flags takes every result)."""
    return ((fmt is target or fmt == target) and attrs.rounding is Rounding.NEAREST_EVEN and attrs.subnormals
            and not attrs.saturate)


def value_grid_plan(fmt: Format, dtype, attrs):
    """The plan of quantizing ``dtype`` input into ``fmt`` in that type
    (softfloat._fastpaths._value_grid: its conditions and proof), or None (declined, or
    the shortcuts switched off).  Flags are the caller's to exclude."""
    return _value_grid.plan(fmt, dtype, attrs) if ENABLED else None


def value_grid_normal(plan, blk, out, ws) -> bool:
    """Round a block lying in the target's normal range into ``out`` by integer
    operations; False (nothing written) where some lane is outside it."""
    return _value_grid.round_normal_block(plan, blk, out, ws)


def value_grid_round(plan, blk, out, ws) -> bool:
    """Round any block into ``out`` on its grid; True where some results are NaN (the
    caller takes those lanes again by the general path)."""
    return _value_grid.round_block(plan, blk, out, ws)
