"""Reductions into few outputs without the tiles: a sum or dot product into one output
(:func:`one_output`, and :func:`short_chain` on Python floats in any mode), small matrix
products (:func:`matrix_product`), dot products along an axis (:func:`paired_product`)
and sums over axes (:func:`axis_sum`), by numpy's arithmetic in the accumulator's dtype
where that is the definition (the conditions of softfloat.accumulate._fast's module
docstring).

The general path's tiles cost 100-250 us of set-up at any size.  Here the terms of every
output are made at once, a (K, n) array for K steps into n outputs, and run down in a few
numpy calls.  Each entry returns None where it does not apply (another option or order, a
non-finite sum, more than :data:`TERMS` terms): the general path runs.  Why the bits, flags
and swamped counts are the general path's:

* the running sums are the definition's steps, each one IEEE addition in the accumulator:
  numpy's ``add.accumulate`` down axis 0 (or row after row, softfloat.accumulate._fast's
  ``running_sums``) adds in order, each output in its own column;
* non-finite values are absorbing here (inf + finite = inf, NaN stays NaN, inf - inf =
  NaN), so every term and running sum of an output is finite iff its last running sum
  is; a non-finite one is declined (its invalid, overflow and NaN rules are the general
  path's), so no step overflows or is invalid, and none underflows (a sum landing below
  the smallest normal is exact);
* inexact and swamped are those of :func:`softfloat.ops.kernels.addition_flags` on each
  step, ORed and counted down each column: a step r = a + b is exact iff r - a == b and
  r - b == a (Fast2Sum, whichever operand is larger); in an accumulator whose sums are
  exact in float64 (fp16), iff r == a + b in float64 (the same values, widened exactly);
  swamped: r == a with b != 0;
* the first term starts the sum exactly (a value of the accumulator), and the terms are
  exact values of the accumulator: a sum's by the format; products by the formats
  (:func:`softfloat.accumulate._fast.products_fit_by_format`) or, for bf16 and tf32 (and
  the like) whose products may leave the accumulator's range, by the data -- each product
  made in float64 (exact: the format is narrow) and taken only if every one is a value
  of the accumulator's dtype.  Where some product is not (fp32 x fp32 into fp32, fp16
  into an fp16 accumulator, bf16 below fp32's range), every step rounds: the float64
  products run through softfloat.accumulate._odd (its proof and flags there), for two
  outputs or more (few outputs of long chains: each column's chain on Python floats,
  :func:`_column_chains`; one output: :func:`short_chain`, or the general path);
* products rounded into an fp32 accumulator (``product="fp32"``, operands of formats
  float32 holds): numpy's float32 multiply is that one IEEE rounding (nearest even,
  subnormals kept), so the terms are the rounded products, values of the dtype, as the
  general path's steps take them (its swamped test reads the rounded product too);
  with every flag asked for (the products' own inexact and underflow) the general path
  runs;
* ``c`` (:func:`matrix_product`): the first row of the terms, a value of the dtype,
  added first as the general path adds it (c, then the products in the spec's order);
* a narrower out_format (the general path's :meth:`Native.finish` and its store): each
  last running sum, a finite value, rounded once to nearest even into it with that
  rounding's flags -- for a matrix by the same encode_block call as the general path's,
  for one output by softfloat._fastpaths' scalar rounding (its proof there; a zero keeps
  its sign, +0 in a format without -0, and an overflow, which it declines, is declined).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _fastpaths
from .._decode import decode_block
from .._encode import encode_block
from .._flagmasks import FlagMasks
from .._workspace import Workspace
from ..flags import AccumulationFlags
from ..formats import Format, native_format
from ..ops.kernels import is_narrow, sums_are_exact
from ..rounding import Rounding
from . import _draws, _odd, _scalar_chain
from ._fast import products_fit_by_format, rounded_products_dtype, running_sums, sum_rows
from ._operands import _decode, inexact_any

__all__ = ["TERMS", "axis_sum", "empty", "matrix_product", "one_output", "paired_product", "short_chain"]

#: terms (steps times outputs) up to which these take a reduction (their arrays are of the
#: terms' size; longer ones take the tiles of the general path, within their memory bound)
TERMS = 1 << 16


def one_output(spec, x, y=None):
    """The sum (``y`` None) or dot product of the 1-D pattern arrays ``x``
    (and ``y``) of ``spec.fmt`` (a softfloat.accumulate._spec.ReductionSpec) into one
    output, for the sequential and reverse orders without ``c`` or ``block`` (``product``
    only as :func:`_plan` takes it: fp32 products into fp32); or None (the general path).
    The result and flags as the general path gives them for a 0-d result."""
    found = _plan(spec, y is None)
    operands = (x,) if y is None else (x, y)
    if found is None or not all(_operand(spec.fmt, p) and p.ndim == 1 and p.size <= TERMS for p in operands):
        return None
    with np.errstate(all="ignore"):  # NaNs cast and overflowing sums (they are declined below)
        t, rounded = _terms(spec, found, x, y)
        if rounded:
            return None  # (long chains of rounded steps: the general path's Python floats)
        s = np.add.accumulate(t[::-1] if spec.order == "reverse" else t)
        last = s[-1]
        if not math.isfinite(last):
            return None
        code = 0
        out = spec.out_format
        if found.narrow:  # the one rounding into out_format (a finite value)
            scalar = _narrowed(float(last), out, spec.attributes)
            if scalar is None:
                return None  # overflow: the general path
            bits, code = out.storage_dtype.type(scalar[0]), scalar[1]
        else:
            bits = s[-1:].view(out.storage_dtype)[0]
        if not spec.want:
            return bits
        inexact, swamped = _steps(s, t[::-1] if spec.order == "reverse" else t, found.widen,
                                  not spec.swamped_only)
        if spec.swamped_only:
            return bits, swamped
    return bits, _scalar_flags(code, inexact, swamped)


def empty(spec, x, y=None):
    """The sum (``y`` None) or dot product of no terms: ``x`` (and ``y``) empty arrays of
    ``spec.fmt``'s storage dtype (a softfloat.accumulate._spec.ReductionSpec, without
    ``c``); or None (switched off, another operand: the general path says what is wrong).

    The general path starts each output at +0 (no ``c``) and stores it: pattern 0 of
    out_format, in every rounding mode, accumulator, order and block (+0, not -0, under
    ``downward`` too), no flag raised and nothing swamped --
    what tests/test_few_outputs.py compares across the catalogue.  The stochastic key is
    drawn before (spec_for), so the context's generator advances as there."""
    operands = (x,) if y is None else (x, y)
    if not _fastpaths.ENABLED or not all(type(p) is np.ndarray and p.dtype == spec.fmt.storage_dtype
                                         and not p.size for p in operands):
        return None
    bits = spec.out_format.storage_dtype.type(0)
    if not spec.want:
        return bits
    if spec.swamped_only:
        return bits, np.int64(0)
    return bits, _scalar_flags(0, False, 0)


def _narrowed(value: float, out: Format, attrs):
    """A plan's one rounding (``narrow``) of a finite Python float into out_format by
    softfloat._fastpaths' scalar rounding (its proof there): ``(pattern, flag code)``, a
    zero keeping its sign (+0 in a format without -0, as encode_block gives it); None for
    an overflow, which it declines."""
    if value == 0.0:
        negative = math.copysign(1.0, value) < 0 and out.has_negative_zero
        return (1 << (out.bits - 1)) if negative else 0, 0
    return _fastpaths.scalar_float(value, out, attrs)


def short_chain(spec, x, y, limit: int):
    """The sum (``y`` None) or dot product of 1-D bit-pattern arrays of at most ``limit``
    terms into one output, step by step on Python floats (softfloat.accumulate.
    _scalar_chain: any mode, stochastic draws as the general path's); or None (another
    layout or option, a special value, a step the scalar rounding declines)."""
    fmt, acc, out = spec.fmt, spec.ieee_accumulator, spec.out_format
    if (spec.hardware or spec.block is not None or spec.product is not None or spec.order == "pairwise"
            or type(x) is not np.ndarray or x.dtype.kind not in "ui" or x.size == 0
            or x.size > limit or (y is not None and not is_narrow(fmt))):
        return None
    terms = _chain_terms(fmt, (x,) if y is None else (x, y))
    if terms is None:
        return None
    if y is None:
        terms = terms[0]
    elif type(terms[0]) is np.ndarray:  # the exact products (is_narrow(fmt)), in numpy
        with np.errstate(invalid="ignore"):  # (inf * 0: declined below)
            terms = terms[0] * terms[1]
    else:
        terms = [u * v for u, v in zip(*terms)]
    if type(terms) is np.ndarray:
        terms = terms.tolist()
    if not math.isfinite(sum(terms)):
        return None  # an infinity or NaN term (or sums past float64's range): the general path's rules
    if spec.order == "reverse":
        terms = terms[::-1]
    rands = final = None
    if spec.key is not None:  # (each step's draw by its term's index k)
        ks = np.arange(len(terms))
        ks = ks[::-1] if spec.order == "reverse" else ks
        rands = _draws.draws(spec.key, _draws.ADD, ks, 0, 1).reshape(-1).tolist()
        final = int(_draws.draws(spec.key, _draws.FINAL, 0, 0, 1)[0])

    def values(f):
        return _fastpaths.scalar_values(f, lambda p: decode_block(p, f, np.empty(p.size)), finite=True)
    found = _scalar_chain.one_output(terms, rands, final, acc, out, spec.attributes, values)
    if found is None:
        return None
    pattern, code, swamped = found
    bits = out.storage_dtype.type(pattern)
    if not spec.want:
        return bits
    if spec.swamped_only:
        return bits, np.int64(swamped)
    return bits, _scalar_flags(code, False, swamped)


def _chain_terms(fmt: Format, operands):
    """Each operand's values as a list of Python floats, or None (switched off, a pattern
    out of range: the general path says what is wrong).  A format of at most 16 bits by
    its table of every value; fp32 (wider formats with a numpy dtype of their own) by
    numpy's widening of its patterns' own dtype into float64 -- exact, NaNs and
    infinities included, which the chain declines -- as float64 arrays, not lists."""
    native = fmt.native_dtype
    if fmt.bits > 16 and native is not None and _fastpaths.ENABLED:
        if not all(type(p) is np.ndarray and p.dtype == fmt.storage_dtype for p in operands):
            return None
        with np.errstate(invalid="ignore"):  # (a signalling NaN's widening)
            return [p.reshape(-1).view(native).astype(np.float64) for p in operands]
    table = _fastpaths.scalar_values(fmt, lambda p: decode_block(p, fmt, np.empty(p.size)))
    if table is None:
        return None
    terms = []
    for patterns in operands:
        if len(operands) > 1 and patterns.dtype.kind not in "ui":
            return None
        flat = patterns.reshape(-1).tolist()
        if min(flat) < 0 or max(flat) >= len(table):
            return None  # the general path says what is wrong
        terms.append([table[p] for p in flat])
    return terms


def _scalar_flags(code: int, inexact: bool, swamped) -> AccumulationFlags:
    """The flags of one output from the scalar rounding's ``code`` (underflow, inexact)
    and the steps' inexact and swamped count: what FlagMasks.to_flags((), swamped=...)
    .squeezed() makes, without its 0-d arrays."""
    clear = np.False_
    return AccumulationFlags(clear, clear, clear, np.bool_(code & _fastpaths.SCALAR_UNDERFLOW),
                             np.bool_(inexact or code & _fastpaths.SCALAR_INEXACT), swamped=np.int64(swamped))


def matrix_product(spec, a, b, c=None):
    """numpy's ``matmul`` of the pattern arrays ``a`` (M, K) or (K,) and ``b`` (K, N) or
    (K,) of ``spec.fmt`` with at most :data:`TERMS` multiply-adds, under
    :func:`one_output`'s conditions; or None (the general path).  The result and flags
    of shape a.shape[:-1] + b.shape[1:], as the general path gives them.

    ``c``: patterns of ``spec.out_format`` broadcast to that shape, the sums' start (the
    general path's order: c, then the products in the spec's order): the first row of
    the terms, a value of the accumulator's dtype (the plan's out_format is held by the
    accumulator), so c + t_1 is the first step as there; None (the general path) where
    the products are not all values of the dtype."""
    found = _plan(spec, False)
    if (found is None or type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim not in (1, 2)
            or b.ndim not in (1, 2) or a.shape[-1] != b.shape[0]):
        return None
    shape = a.shape[:-1] + b.shape[1:]
    K, n = b.shape[0], math.prod(shape)
    if not 0 < (K + (c is not None)) * n <= TERMS or not (_operand(spec.fmt, a) and _operand(spec.b_format, b)):
        return None
    start = None if c is None else _start(spec, found, c, shape)
    if c is not None and start is None:
        return None
    with np.errstate(all="ignore"):  # NaNs cast (declined in _columns)
        t, rounded = _terms(spec, found, a.reshape(-1, K).T, b.reshape(K, -1), outer=True)  # (K, M, N)
    if start is None:
        return _columns(spec, found, t.reshape(K, n), rounded, shape)
    if rounded:
        return None
    t = t.reshape(K, n)
    return _columns(spec, found, np.concatenate((start, t[::-1] if spec.order == "reverse" else t)), False,
                    shape, ordered=True)


def _start(spec, found: _Plan, c, shape):
    """``c`` (out_format patterns) broadcast to ``shape`` as one row (1, n) of the
    accumulator's dtype (exact: it holds out_format); None where the general path
    should look at it (another type, a stray high bit, a shape that does not broadcast)."""
    out = spec.out_format
    if type(c) is not np.ndarray or not _operand(out, c) or c.ndim > len(shape):
        return None
    try:
        if np.broadcast_shapes(c.shape, shape) != shape:
            return None
    except ValueError:
        return None
    values = _values(c, out, found.dtype)
    return np.broadcast_to(values, shape).reshape(1, -1)


def paired_product(spec, a, b, axis):
    """``vecdot`` of the pattern arrays ``a`` and ``b`` of ``spec.fmt`` along ``axis``
    (an int), the other axes broadcast as softfloat.accumulate._operands.paired_layout
    broadcasts them (each operand's axis moved last), for at most :data:`TERMS`
    products, under :func:`one_output`'s conditions; or None (the general path: also for
    a bad axis or shapes, which it explains).  The result and flags as the general path
    gives them."""
    found = _plan(spec, False)
    if (found is None or type(a) is not np.ndarray or type(b) is not np.ndarray or not a.ndim or not b.ndim
            or type(axis) is not int or not (-a.ndim <= axis < a.ndim and -b.ndim <= axis < b.ndim)):
        return None
    if a.shape != b.shape:
        x, y = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)
        try:
            shape = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
        except ValueError:
            return None
        if x.shape[-1] != y.shape[-1]:
            return None
        a, b, axis = np.broadcast_to(x, shape + x.shape[-1:]), np.broadcast_to(y, shape + y.shape[-1:]), -1
    if not (0 < a.size <= TERMS and _operand(spec.fmt, a) and _operand(spec.fmt, b)):
        return None
    K = a.shape[axis]
    X, Y = (np.moveaxis(p, axis, 0).reshape(K, -1) for p in (a, b))
    with np.errstate(all="ignore"):
        t, rounded = _terms(spec, found, X, Y)
    return _columns(spec, found, t, rounded, a.shape[:axis % a.ndim] + a.shape[axis % a.ndim + 1:])


def axis_sum(spec, x, axes: tuple, keepdims: bool):
    """The sum over ``axes`` (normalised: distinct, sorted) of the pattern array ``x`` of
    ``spec.fmt``, the terms of each output in C order, for at most :data:`TERMS` terms,
    under :func:`one_output`'s conditions; or None (the general path).  The result and
    flags as the general path gives them."""
    found = _plan(spec, True)
    if found is None or not _operand(spec.fmt, x) or x.size > TERMS:
        return None
    keep = tuple(d for d in range(x.ndim) if d not in axes)
    K = math.prod([x.shape[d] for d in axes])
    shape = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)) if keepdims else \
        tuple(x.shape[d] for d in keep)
    with np.errstate(all="ignore"):
        t, _ = _terms(spec, found, np.transpose(x, axes + keep).reshape(K, -1), None)
    return _columns(spec, found, t.copy() if found.raw else t, False, shape)  # (raw: a view of x)


def _columns(spec, found: _Plan, t, rounded: bool, shape, ordered: bool = False):
    """The reduction of the (K, n) terms ``t`` (made here: they may be overwritten) down
    each column into the n outputs, shaped ``shape``: exact values of the accumulator's
    dtype, or (``rounded``) float64 products that are not all such values; None where an
    output is not finite (or softfloat.accumulate._odd declines).  ``ordered``: the
    rows are in the order they are added already (the reverse order's reversal done)."""
    K, n = t.shape
    if rounded and n == 1:  # (a dozen numpy calls a step: one output steps faster on Python
        return None  # floats, the general path's, about 3 us a step; two outputs, slower)
    with np.errstate(all="ignore"):  # NaNs and overflowing sums (declined)
        if spec.order == "reverse" and not ordered:
            t = np.ascontiguousarray(t[::-1])
        s = inexact = underflow = swamped = None
        if rounded:
            if n * CHAIN_COLUMNS <= K or n * K <= CHAIN_TERMS:  # few long chains, or few terms: each
                # output's on Python floats
                found_ = _column_chains(spec, t)
            else:
                found_ = _odd.running_sums(t, _odd.Grid(spec.ieee_accumulator), spec.want,
                                           _odd.tiny_below(spec.ieee_accumulator, spec.attributes.tininess))
            if found_ is None:
                return None
            last, inexact, underflow, swamped = found_
        elif spec.want:
            s = np.empty_like(t)
            running_sums(s, t)
            last = s[-1]
        else:  # the last running sums alone
            last = sum_rows(t)
        if not np.isfinite(last).all():
            return None
        out = spec.out_format
        bits = np.empty(n, dtype=out.storage_dtype)
        masks = codes = None
        if found.narrow and n <= FEW_ROUNDINGS:  # each output rounded once as one_output's
            scalars = [_narrowed(v, out, spec.attributes) for v in last.tolist()]
            if None not in scalars:  # (an overflow: encode_block's rules, below)
                bits[:] = [pattern for pattern, _ in scalars]
                codes = np.array([code for _, code in scalars])
        if found.narrow and codes is None:  # each output rounded once, as the general path's store
            masks = encode_block(np.ascontiguousarray(last), out, spec.attributes, None, spec.want, bits,
                                 Workspace(n))
        elif not found.narrow:
            np.copyto(bits, last.view(out.storage_dtype))
        bits = bits.reshape(shape)
        result = bits[()] if bits.ndim == 0 else bits
        if not spec.want:
            return result
        if not rounded:
            inexact, swamped = _steps(s, t, found.widen, not spec.swamped_only)
    swamped = swamped.reshape(shape)
    if spec.swamped_only:
        return result, swamped[()] if swamped.ndim == 0 else swamped
    if codes is not None:  # (the scalar roundings' flags, ORed into the steps')
        inexact = inexact | ((codes & _fastpaths.SCALAR_INEXACT) != 0)
        underflow = ((codes & _fastpaths.SCALAR_UNDERFLOW) != 0) | (False if underflow is None else underflow)
    if masks is None:  # (new arrays, not scratch buffers: to_flags hands them out, the others clear)
        masks = FlagMasks(inexact=inexact, underflow=underflow)
    else:
        masks.or_(FlagMasks(inexact=inexact, underflow=underflow))
    return result, masks.to_flags(shape, swamped=swamped).squeezed()


#: outputs up to which a narrower out_format's roundings run one by one on Python floats
#: (softfloat._fastpaths' scalar rounding, about 2 us each) instead of encode_block's
#: vector rounding (about 14 us at any small size): a 2x2 or 4x4 matrix-vector product
FEW_ROUNDINGS = 8

#: terms per output from which rounded running sums of few outputs run column by column on
#: Python floats (softfloat.accumulate._scalar_chain, about 0.2 us a step in fp32 or fp16:
#: softfloat._fastpaths._chain's cast runs) instead of softfloat.accumulate._odd's rows
#: (a dozen numpy calls a step, about 3 us however few the columns)
CHAIN_COLUMNS = 64
#: terms up to which rounded running sums run as those chains whatever the shape (a 2x2
#: matrix-vector product in fp32: about 20 us against _odd's 42; break-even near 16)
CHAIN_TERMS = 8


def _column_chains(spec, t):
    """softfloat.accumulate._odd.running_sums' answer -- (last running sums as the
    accumulator's dtype, inexact, underflow, swamped per output) -- for the rounded (K, n)
    terms ``t``, each column one chain into the accumulator by softfloat.accumulate.
    _scalar_chain (its proof in softfloat._fastpaths._chain: the same steps, the first
    term rounded alone); None where a chain declines a step (the general path)."""
    acc = spec.ieee_accumulator
    values = _fastpaths.scalar_values(acc, lambda p: decode_block(p, acc, np.empty(p.size)), finite=True)
    if values is None:
        return None
    n = t.shape[1]
    last, codes, swamped = [], [], np.zeros(n, dtype=np.int64)
    for j, column in enumerate(t.T.tolist()):
        found = _scalar_chain.one_output(column, None, None, acc, acc, spec.attributes, lambda f: values)
        if found is None:
            return None
        last.append(values[found[0]])
        codes.append(found[1])
        swamped[j] = found[2]
    codes = np.array(codes)
    return (np.array(last, dtype=acc.native_dtype), (codes & _fastpaths.SCALAR_INEXACT) != 0,
            (codes & _fastpaths.SCALAR_UNDERFLOW) != 0, swamped)


def _steps(s, t, widen: bool, inexact: bool):
    """Per column of the running sums ``s`` of the terms ``t`` ((K, n), or (K,) for one
    output): whether any step s[k] = s[k-1] + t[k] is inexact (only where ``inexact``,
    else None), and how many are swamped (s[k] == s[k-1], t[k] != 0), as int64 (numpy
    scalars for one output)."""
    a, r, b = s[:-1], s[1:], t[1:]
    kept = r == a
    one = s.ndim == 1  # (one output: counts, not reductions along an axis, which cost microseconds)
    swamped = np.int64(0) if one else np.zeros(s.shape[1], dtype=np.int64)
    if np.count_nonzero(kept):
        swamped += np.count_nonzero(kept & (b != 0), axis=None if one else 0)
    if not inexact:
        return None, swamped
    if widen and one:  # fp16: its arithmetic is slow, float64's exact
        found = np.count_nonzero(np.not_equal(a.astype(np.float64) + b, r)) != 0
    elif widen:
        found = np.not_equal(a.astype(np.float64) + b, r).any(axis=0)
    elif one:
        found = np.count_nonzero(np.not_equal(r - a, b)) != 0 or np.count_nonzero(np.not_equal(r - b, a)) != 0
    else:
        found = inexact_any(r, a, b)
    return found, swamped


class _Plan:
    """How these formats take the short path: the accumulator's numpy ``dtype``, whether
    the terms' patterns are that dtype's (``raw``: a sum in the accumulator's own format),
    whether products are made in float64 and checked on the data (``by_data``: not every
    product is a value of the dtype by the formats; those that are not run through
    softfloat.accumulate._odd), whether out_format is another (narrower) format, whether
    the steps are checked in float64 (``widen``: exact there, and faster than fp16's
    arithmetic)."""

    __slots__ = ("dtype", "raw", "by_data", "narrow", "widen")

    def __init__(self, dtype, raw, by_data, narrow, widen):
        self.dtype, self.raw, self.by_data, self.narrow, self.widen = dtype, raw, by_data, narrow, widen


_PLANS: dict = {}  # (id(fmt), id(acc), id(out), sum?) -> (plan or None, the formats)


def _plan(spec, is_sum: bool):
    """The :class:`_Plan` for the spec's options and formats, or None; worked out once per
    formats (comparing Formats costs microseconds)."""
    attrs = spec.attributes
    product = spec.product
    if (not _fastpaths.ENABLED or spec.key is not None or spec.block is not None
            or spec.order == "pairwise" or attrs.rounding is not Rounding.NEAREST_EVEN or not attrs.subnormals
            or attrs.saturate or spec.hardware or (product is not None and (spec.want and not spec.swamped_only))):
        return None  # (rounded products' own flags: the general path's)
    fmt, acc, out, fb = spec.fmt, spec.ieee_accumulator, spec.out_format, spec.b_format
    key = (id(fmt), id(acc), id(out), is_sum, id(fb), id(product))
    found = _PLANS.get(key)
    if found is not None and found[1] == (fmt, acc, out, fb, product):  # the formats kept: the ids stay theirs
        return found[0]
    plan = None
    if product is not None:
        # products rounded into the accumulator, float32 (fp32 x fp32 into fp32, no FMA):
        # numpy's float32 multiply of float32 values is that rounding (IEEE, nearest even,
        # subnormals kept), so the terms are the rounded products, exact values of the dtype
        if (not is_sum and product == acc and acc.native_dtype == np.float32 and _FP32.holds(fmt)
                and _FP32.holds(fb) and (out == acc or acc.holds(out))):
            plan = _Plan(acc.native_dtype, False, False, out != acc, False)
    elif acc.native_dtype is not None and (out == acc or acc.holds(out)):
        if spec.mixed:  # two formats (FP8 e4m3 x e5m2): where every product fits by the formats
            by_format, by_data = not is_sum and products_fit_by_format(fmt, acc, fb), False
        else:
            by_format = acc.holds(fmt) if is_sum else products_fit_by_format(fmt, acc)
            # products exact in float64 (a narrow format) and an accumulator of float32 or float16,
            # the dtypes softfloat.accumulate._odd rounds into, where the formats do not fit
            by_data = not is_sum and not by_format and acc.native_dtype in (np.float32, np.float16) and is_narrow(fmt)
        if by_format or by_data:
            plan = _Plan(acc.native_dtype, is_sum and fmt == acc, by_data, out != acc,
                         sums_are_exact(acc) and acc.native_dtype != np.float64)
    if len(_PLANS) > 64:
        _PLANS.clear()
    _PLANS[key] = (plan, (fmt, acc, out, fb, product))
    return plan


def _operand(fmt: Format, patterns) -> bool:
    """Are these bit patterns of ``fmt`` an operand the short path takes (a non-empty
    array of the storage dtype, no stray high bits: the general path says what is wrong)?"""
    if type(patterns) is not np.ndarray or patterns.dtype != fmt.storage_dtype or not patterns.size:
        return False
    return fmt.bits == 8 * patterns.itemsize or not (patterns >> fmt.bits).any()


def _terms(spec, found: _Plan, x, y, outer=False):
    """``(terms, rounded)``: ``x``'s values (a sum) or the products x * y, elementwise or
    (``outer``: x (K, M), y (K, N)) the outer products (K, M, N) -- in the accumulator's
    dtype, exact (``rounded`` False), or exact in a wider one (float64, or float32 for
    float16: softfloat.accumulate._fast.rounded_products_dtype) where some product is not
    a value of the dtype (``rounded``: each step rounds, softfloat.accumulate._odd)."""
    fmt, dtype = spec.fmt, found.dtype
    if y is None:
        return (x.view(dtype) if found.raw else _values(x, fmt, dtype)), False
    wide = rounded_products_dtype(fmt, dtype) if found.by_data else dtype  # exact products
    if outer and found.by_data and dtype == np.float32 and 2 * fmt.precision <= 24 and _FP32.holds(fmt):
        X, Y = _values(x, fmt, dtype), _values(y, fmt, dtype)
        if _normal_products(X, Y):  # every product exact in float32 (bf16's, on most data)
            return (np.multiply(X[:, :, None], Y[:, None, :]) if outer else np.multiply(X, Y)), False
        X, Y = X.astype(wide), Y.astype(wide)  # (exact: float64 holds float32)
    else:  # (by_data only for one format: y's is b_format, fmt's but for a mixed product)
        X, Y = _values(x, fmt, wide), _values(y, spec.b_format, wide)
    t = np.multiply(X[:, :, None], Y[:, None, :]) if outer else np.multiply(X, Y)
    if not found.by_data:
        return t, False  # exact: the formats fit
    narrow = t.astype(dtype)
    if not np.count_nonzero(narrow != t):  # (a NaN product is unequal)
        return narrow, False
    return t, True


_FP32 = native_format(np.float32)
_FP32_MAX = float(np.finfo(np.float32).max)


def _normal_products(X, Y) -> bool:
    """Are all products of the float32 values X and Y (of a format of at most 12 bits:
    products of at most 24) exactly float32 values, by the data's magnitudes?  Each
    product is 0, or at least min|X| * min|Y| over the non-zeros; where that is at least
    2**-126 and max|X| * max|Y| at most float32's max, every non-zero product lies in
    float32's normal range with at most 24 significant bits: exact.  (Both bounds are
    exact in float64: products of float32 values.  A NaN or an infinity makes one of
    them fail: the caller's general check decides.)  Four reductions over the operands,
    instead of every product formed in float64 and compared with its float32 cast."""
    ax, ay = np.abs(X), np.abs(Y)
    least, most = np.minimum.reduce, np.maximum.reduce  # (np.min and np.max without their Python wrapper)
    lo = float(least(ax, axis=None, where=ax != 0, initial=np.inf)) * float(
        least(ay, axis=None, where=ay != 0, initial=np.inf))
    hi = float(most(ax, axis=None)) * float(most(ay, axis=None))
    return lo >= 2.0**-126 and hi <= _FP32_MAX


def _values(patterns, fmt: Format, dtype):
    """The exact values of ``fmt`` patterns as ``dtype`` (which holds them): numpy's
    widening cast where fmt is a numpy float, else the codec's decoder."""
    if fmt.native_dtype is not None:
        return patterns.view(fmt.native_dtype).astype(dtype)
    table = _fastpaths.decode_table(fmt, dtype, lambda p, out: decode_block(p, fmt, out))
    if table is not None:  # (at most 16 bits: one lookup; the patterns are checked, _operand)
        return table.take(patterns)
    return _decode(patterns, fmt, dtype=dtype)
