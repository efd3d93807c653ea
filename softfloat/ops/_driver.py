"""The block driver of the operations: operands streamed through a kernel block by block
(on threads, or chunk by chunk for dask), each block's exact results rounded once.

Before the blocks, :func:`apply` tries its shortcuts (each off with
``softfloat._fastpaths.ENABLED``): one element on Python integers (:func:`_one_element`),
small fp16 arrays by numpy's float16 arithmetic (:func:`_small_fp16`), small bf16 and
fp32 arrays in round to nearest even by numpy's float32 arithmetic (rounded once more
for bf16), else by float64 arithmetic and the codec's encoder (:func:`_small_bf16`,
:func:`_small_fp32`), larger fp16/bf16 arrays without flags in round to nearest even
by torch's kernels where torch is imported (:func:`_by_torch`), and operands of at
most 16 bits side by side (FP8 pairs, sqrt up to fp16) by one lookup in a table the
general path filled once (:func:`_by_pair_table`, its proof beside it)."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import _dask, _fastpaths, _validate
from .._blocks import resolve_workers, stream_blocks
from .._encode import encode_block
from .._flagmasks import FlagMasks, flags_of_code, flags_of_masks
from ..codec import decode
from ..flags import FLAG_NAMES
from ..rounding import Rounding
from .._random import Positions, key_from
from .._workspace import Workspace
from ..formats import as_format, bf16, fp16, fp32
from ._native import block_kernel
from ._nan import default_nan, resolve_nans
from ._operands import daz, operand_patterns, operand_values
from ._round_block import Target, round_block
from ._torch16 import torch_arithmetic

__all__ = ["OPS_BLOCK_SIZE", "OPS_THREAD_BLOCK_SIZE", "Job", "Operation", "apply", "zero_pattern"]


@dataclass(frozen=True)
class Operation:
    """What an operation computes: ``kernel(fmt, attrs, *xs, ws=None) -> Exact`` on one
    block's exact float64 operand values, and ``exact(attrs, *floats)``, one hazard lane's
    exact result (see :func:`apply`)."""

    kernel: Callable
    exact: Callable
    #: ``scalar(fmt, attrs, *floats) -> (pattern, flag bits) or None``: one element's
    #: result from finite operands by softfloat._fastpaths' scalar rounding (None:
    #: declined, the general path decides); or None for an operation without one
    scalar: Callable | None = None
    #: the numpy ufunc that computes it on float64 values, for softfloat._fastpaths'
    #: fp16 shortcut on small arrays (None: none)
    native: Callable | None = None


@dataclass(frozen=True)
class Job:
    """One call of an operation, its options checked: what every block runs and rounds
    with."""

    operation: Operation
    target: Target
    key: object = None  # stochastic rounding's key (softfloat._random.key_from); else None
    daz_inputs: bool = False  # read subnormal operands as zeros


def apply(operation, fmt, operands, attrs, rng=None, *, denormals_are_zero=False, return_flags=False,
          workers=None):
    """Run ``operation`` over broadcast bit-pattern operands of ``fmt``; round once.

    ``operands`` is a list of ``(argname, value)``; ``attrs`` the call's validated
    :class:`~softfloat.RoundingAttributes` and ``rng`` its Generator (stochastic rounding;
    else None), as :func:`softfloat._options.resolve_attributes` gives them.
    ``operation.kernel(fmt, attrs, *xs)`` receives the exact float64 values of one block
    and returns an :class:`~softfloat.ops._kernel.Exact`; ``fmt`` must hold every
    operand, since it picks the kernel's float64 path (the family modules name their
    kernels ``<op>_kernel`` and ``<op>_exact``; softfloat.accumulate runs them on operands
    of several formats, passing a format that holds them all).
    ``operation.exact(attrs, *floats)`` gives one hazard lane's exact result (from the
    operands as Python floats, so that zeros keep their signs) as ``(negative,
    magnitude)`` with ``magnitude`` a Fraction, or ``(negative, (sig, e_top))`` already in
    the rounding point's significand form (sqrt).  NaN results follow
    ``attrs.platform`` (softfloat.ops._nan.resolve_nans).  The keywords are the public
    operations'.

    The blocks run on ``workers`` threads (None: the process-wide setting); dask operands
    give a lazy dask result (and lazy flags), each chunk's random bits those of its
    elements' positions in the whole result.
    """
    fmt = as_format(fmt)
    if type(denormals_are_zero) is not bool:
        denormals_are_zero = _validate.boolean("denormals_are_zero", denormals_are_zero)
    if type(return_flags) is not bool:
        return_flags = _validate.boolean("return_flags", return_flags)
    if rng is None:  # stochastic rounding draws by position: the general path only
        small = _small_input(operation, fmt, operands, attrs, denormals_are_zero, return_flags)
        if small is not None:
            if workers is not None:
                resolve_workers(workers)  # checked as the general path checks it
            return small
    job = Job(operation, Target(fmt, attrs, return_flags),
              key=None if rng is None else key_from(rng), daz_inputs=denormals_are_zero)
    if _dask.any_dask(*(value for _, value in operands)):
        return _lazy(job, operands, workers)
    workers = resolve_workers(workers)
    arrays, shape = operand_patterns(fmt, operands)
    out = np.empty(shape, dtype=fmt.storage_dtype)
    flags = FlagMasks.zeros(out.size) if return_flags else None
    _stream(job, arrays, out, flags, workers)
    result = out[()] if out.ndim == 0 else out
    if not return_flags:
        return result
    return result, flags.to_flags(shape).squeezed()


def _small_input(operation, fmt, operands, attrs, daz, want):
    """The first shortcut that answers for these operands, or None (the general path):
    one element each, fp16/bf16 arithmetic on small arrays, torch's 16-bit kernels on
    large ones, the pair table of a narrow format.  Each declines what it cannot prove
    (and honours _fastpaths.ENABLED)."""
    if not daz and operation.scalar is not None:
        found = _one_element(operation.scalar, fmt, operands, attrs, want)
        if found is not None:
            return found
    if not daz and operation.native is not None:
        small_arithmetic = _SMALL_BY_FORMAT.get(id(fmt))  # (the catalogue's formats: a Format's == reads
        if small_arithmetic is None:  # every field, microseconds)
            small_arithmetic = _small_bf16 if fmt == bf16 else _small_fp32 if fmt == fp32 else _small_fp16
        found = small_arithmetic(operation.native, fmt, operands, attrs, want)
        if found is not None:
            return found
        if not (daz or want):
            found = _by_torch(operation, fmt, operands, attrs)
            if found is not None:
                return found
    return _by_pair_table(operation, fmt, operands, attrs, daz, want) if _fastpaths.ENABLED else None


def _one_element(scalar, fmt, operands, attrs, want):
    """apply() for operands of one element each (ints, numpy integer scalars, integer
    arrays of size 1) whose values are finite: ``scalar``'s result, shaped and typed as
    the general path's (a numpy scalar for 0-d operands, flags of numpy bools), or None
    (anything else: the general path).  Stochastic rounding (which draws by position)
    and DAZ are the caller's to exclude."""
    if attrs.rounding is Rounding.STOCHASTIC:
        return None
    first = operands[0][1]
    if type(first) is np.ndarray and first.size != 1:  # (the usual array call: declined at once)
        return None
    values = _fastpaths.scalar_values(fmt, lambda patterns: decode(patterns, fmt), finite=True)
    if values is None:
        return None
    floats, ndim, limit = [], 0, 1 << fmt.bits
    for _, value in operands:
        kind = type(value)
        if kind is np.ndarray:
            if value.size != 1 or value.dtype.kind not in "ui":
                return None
            if value.ndim > ndim:
                ndim = value.ndim
            pattern = value.item()  # a Python int
        elif kind is int:
            pattern = value
        elif isinstance(value, np.integer):
            pattern = int(value)
        else:
            return None
        if not 0 <= pattern < limit:
            return None  # the general path says what is wrong
        x = values[pattern]
        if x - x != 0.0:  # infinity or NaN: the general path's NaN and special rules
            return None
        floats.append(x)
    found = scalar(fmt, attrs, *floats)
    if found is None:
        return None
    pattern, flag_bits = found
    if ndim == 0:
        result = fmt.storage_dtype.type(pattern)
        if not want:
            return result
        return result, flags_of_code(flag_bits)
    shape = (1,) * ndim
    result = np.array(pattern, dtype=fmt.storage_dtype).reshape(shape)
    if not want:
        return result
    return result, flags_of_code(flag_bits, shape)




#: elements up to which fp16 operations take softfloat._fastpaths.float16_arithmetic,
#: and bf16 ones bfloat16_arithmetic (larger arrays keep the streamed kernels, tuned for them)
SMALL_FP16 = 1 << 14
#: elements up to which fp32 arithmetic takes softfloat._fastpaths.float32_arithmetic: an
#: 8,192-element sum 57 us against the streamed kernels' 190; at 16,384 its float64
#: temporaries (128 KiB each) make a sum toward zero 400 us against 176
SMALL_FP32 = 1 << 13
_UINT16, _UINT32 = np.dtype(np.uint16), np.dtype(np.uint32)


def _pattern_arrays(operands, dtype):
    """``(arrays, broadcast shape)`` when every operand is an ndarray of ``dtype`` (or a
    numpy scalar of its type), else None (other operands, and shapes that do not
    broadcast, take the general path, which says what is wrong)."""
    arrays = []
    for _, value in operands:
        if type(value) is dtype.type:  # a numpy scalar of the patterns' type (the array layer's scalars)
            value = np.asarray(value)
        elif type(value) is not np.ndarray or value.dtype != dtype:
            return None
        arrays.append(value)
    shape = arrays[0].shape
    if all(a.shape == shape for a in arrays):
        return arrays, shape  # np.broadcast_shapes costs microseconds
    if len(arrays) == 2 and not (arrays[0].ndim and arrays[1].ndim):  # an array and a 0-d operand
        return arrays, shape or arrays[1].shape
    try:
        return arrays, np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        return None


def _by_torch(operation, fmt, operands, attrs):
    """apply() without flags in round to nearest even by torch's float16/bfloat16 kernels
    (softfloat.ops._torch16, its proof there) for uint16 array operands of more than
    SMALL_FP16 elements, where the process has imported torch; the lanes it hands back
    (NaN results, coarse float32 underflow) taken again by the general path.  None:
    declined."""
    if (operation.native is None or attrs.rounding is not Rounding.NEAREST_EVEN or not attrs.subnormals
            or attrs.saturate or not _fastpaths.ENABLED):
        return None
    found = _pattern_arrays(operands, _UINT16)
    if found is None or math.prod(found[1]) <= SMALL_FP16:
        return None
    arrays, shape = found
    out = np.empty(shape, dtype=_UINT16)
    redo = torch_arithmetic(operation.native, fmt, arrays, out)
    if redo is None or 8 * redo.size > out.size:
        return None  # declined, or mostly special lanes: the general path throughout
    if redo.size:
        lanes = np.unravel_index(redo, shape)
        part = np.empty(redo.size, dtype=_UINT16)
        _stream(Job(operation, Target(fmt, attrs, False)), [np.broadcast_to(a, shape)[lanes] for a in arrays],
                part, None)
        out[lanes] = part
    return out[()] if out.ndim == 0 else out


def _small_fp16(ufunc, fmt, operands, attrs, want):
    """apply() by softfloat._fastpaths.float16_arithmetic for uint16 array operands of
    at most SMALL_FP16 elements (broadcast), or None."""
    found = _pattern_arrays(operands, _UINT16)
    if found is None:
        return None
    arrays, shape = found
    if math.prod(shape) > SMALL_FP16:
        return None
    invalid = None
    found = _fastpaths.float16_arithmetic(ufunc, arrays, fmt, attrs, want)
    if found is None and ufunc is np.sqrt and _fastpaths.ENABLED:
        # the roots of negative finite non-zero operands (1 11111 ... excluded: -inf, NaNs):
        # invalid, the platform's default NaN, nothing else raised -- the kernel takes +0
        # there (it declines any format but fp16, and then the operands go on unchanged)
        x = arrays[0]
        invalid = (x > 0x8000) & (x < 0xFC00)
        if not invalid.any():
            return None
        found = _fastpaths.float16_arithmetic(ufunc, [np.where(invalid, x.dtype.type(0), x)], fmt, attrs, want)
    if found is None:
        return None
    bits, masks = found
    if invalid is not None:
        if bits.ndim:
            bits[invalid] = default_nan(fmt, attrs)
        elif invalid[()]:  # (a 0-d result comes as a numpy scalar)
            bits = np.asarray(default_nan(fmt, attrs), dtype=_UINT16)
    if bits.ndim == 0:
        if not want:
            return bits[()]
        code = 0 if invalid is None else int(invalid[()])  # (bit 0: invalid)
        for name, mask in masks.items():
            if mask is not None and mask[()]:
                code |= 1 << FLAG_NAMES.index(name)  # softfloat._flagmasks.FLAG_BITS' bit
        return bits[()], flags_of_code(code)
    if not want:
        return bits
    # the masks of the broadcast shape already; the flags raised nowhere made clear only
    # when read (StickyFlags counts the others)
    if invalid is None and masks["inexact"] is None:  # every result exact: nothing raised
        return bits, flags_of_code(0, shape)
    return bits, flags_of_masks(shape, dict(masks, invalid=invalid))


def _small_bf16(ufunc, fmt, operands, attrs, want):
    """apply() for uint16 array operands of at most SMALL_FP16 elements (broadcast): in
    round to nearest even by softfloat._fastpaths.bfloat16_arithmetic_nearest_even
    (numpy's float32 arithmetic, its proof there) where it takes them, else by
    bfloat16_arithmetic's float values (their proof there) and the codec's encoder -- or
    None."""
    found = _pattern_arrays(operands, _UINT16)
    if found is None:
        return None
    arrays, shape = found
    if math.prod(shape) > SMALL_FP16:
        return None
    lean = _fastpaths.bfloat16_arithmetic_nearest_even(ufunc, arrays, fmt, attrs, want)
    if lean is not None:
        return _only_inexact(*lean, want)
    values = _fastpaths.bfloat16_arithmetic(ufunc, arrays, fmt, attrs, not want)
    if values is None:
        return None
    # float64 values with flags even when not wanted (the same bits): the codec's float64 ->
    # bf16 kernel took 14 us on 1,000 elements with flags, 23 without (its upper-word
    # kernel); float32 values: 8 us without flags, 15 with them
    return _encoded(values, fmt, attrs, want or values.dtype == np.float64, want)


def _small_fp32(ufunc, fmt, operands, attrs, want):
    """apply() for uint32 array operands of at most SMALL_FP32 elements (broadcast): in
    round to nearest even by softfloat._fastpaths.float32_arithmetic_nearest_even
    (numpy's own float32 arithmetic, its proof there) where it takes them, else by
    float32_arithmetic's float64 values (its proof there) and the codec's encoder -- or
    None."""
    found = _pattern_arrays(operands, _UINT32)
    if found is None or math.prod(found[1]) > SMALL_FP32:
        return None
    lean = _fastpaths.float32_arithmetic_nearest_even(ufunc, found[0], fmt, attrs, want)
    if lean is not None:
        return _only_inexact(*lean, want)
    values = _fastpaths.float32_arithmetic(ufunc, found[0], fmt, attrs)
    if values is None:
        return None
    return _encoded(values, fmt, attrs, True, want)


#: the small-array shortcut of the catalogue's formats by identity (any other format is
#: compared by value; _small_fp16 declines all but fp16)
_SMALL_BY_FORMAT = {id(bf16): _small_bf16, id(fp32): _small_fp32, id(fp16): _small_fp16}


def _only_inexact(bits, inexact, want: bool):
    """A shortcut's ``bits`` and ``inexact`` mask, the only flag it can raise, as apply()
    returns them."""
    if not want:
        return bits[()] if bits.ndim == 0 else bits
    if bits.ndim == 0:
        return bits[()], flags_of_code(16 if inexact[()] else 0)  # (bit 4: inexact)
    return bits, flags_of_masks(bits.shape, {"inexact": inexact})


def _encoded(values, fmt, attrs, with_flags: bool, want: bool):
    """The codec's rounding of the float64 or float32 ``values`` into ``fmt``, as apply()
    returns it (``with_flags``: the encoder computes them, where faster or needed)."""
    out = np.empty(values.shape, dtype=fmt.storage_dtype)
    flags = encode_block(np.ascontiguousarray(values).reshape(-1), fmt, attrs, None, with_flags,
                         out.reshape(-1), Workspace(max(out.size, 1)))
    result = out[()] if out.ndim == 0 else out
    if not want:
        return result
    return result, flags.to_flags(values.shape).squeezed()


# ---- every operand pair of a narrow format: one lookup (FP8 add/sub/mul/div, sqrt to 16 bits) ----
#
# Why the bits and flags are the general path's: a deterministic operation's result and
# flags depend only on its operands' patterns, the format and the attributes (DAZ
# included), so a table indexed by the operands' patterns side by side holds them for
# every input once the general path (:func:`_stream`) has filled it on every index.
# The lookup then only reads it: the bits at the index, and each flag's mask at the
# index (flags the general path raised nowhere in the table are clear everywhere).  A
# format of fewer bits than its storage is looked up only when no operand has a pattern
# beyond it (else the general path says what is wrong).  tests/test_small_paths_more.py
# compares the two on every pair.

#: index bits (operand bits side by side) up to which an operation gets a pair table:
#: 65,536 entries of two bytes each
PAIR_TABLE_BITS = 16
#: elements a (operation, format, attributes) must have been called on, in all, before
#: its table is filled (filling runs the general path on every entry, a few ms), so that
#: a single small call never pays for it
PAIR_TABLE_FILL_AFTER = 1 << 13
#: tables kept (64 KiB and a 64 KiB mask per flag at most); beyond it the oldest is
#: dropped (refilled if needed)
PAIR_TABLES_KEPT = 32

_pair_tables: dict = {}  # key -> (bits, {name: mask} of the flags raised anywhere)
_pair_seen: dict = {}  # key -> elements called on before the table is filled
_pair_lock = threading.Lock()


def _by_pair_table(operation, fmt, operands, attrs, daz, want):
    """apply() by one lookup in the operation's pair table (deterministic rounding,
    ndarray operands of ``fmt.storage_dtype`` whose patterns side by side have at most
    PAIR_TABLE_BITS bits), or None: the general path (which also fills the table, when
    called on enough elements)."""
    width = fmt.bits * len(operands)
    if width > PAIR_TABLE_BITS or attrs.rounding is Rounding.STOCHASTIC:
        return None
    found = _pattern_arrays(operands, fmt.storage_dtype)
    if found is None:
        return None
    arrays, shape = found
    key = (operation, fmt, attrs, daz)
    table = _pair_tables.get(key)
    if table is None:
        seen = _pair_seen.get(key, 0) + math.prod(shape)
        if seen < PAIR_TABLE_FILL_AFTER:
            _pair_seen[key] = seen
            return None
        table = _fill_pair_table(key, len(operands))
    if fmt.bits < 8 * fmt.storage_dtype.itemsize:
        if any((a >> fmt.bits).any() for a in arrays):
            return None
    index = arrays[0].astype(np.intp)
    for a in arrays[1:]:
        index = (index << fmt.bits) | a
    bits_table, masks_table = table
    bits = bits_table[index]
    result = bits[()] if bits.ndim == 0 else bits
    if not want:
        return result
    masks = FlagMasks(**{name: mask[index] for name, mask in masks_table.items()})
    return result, masks.to_flags(shape).squeezed()


def _fill_pair_table(key, arity):
    """The general path's bits and flags on every index of ``key``'s table, kept."""
    operation, fmt, attrs, daz = key
    n = 1 << (fmt.bits * arity)
    index = np.arange(n, dtype=np.intp)
    field = (1 << fmt.bits) - 1
    arrays = [((index >> (fmt.bits * (arity - 1 - i))) & field).astype(fmt.storage_dtype) for i in range(arity)]
    bits = np.empty(n, dtype=fmt.storage_dtype)
    flags = FlagMasks.zeros(n)
    _stream(Job(operation, Target(fmt, attrs, True), daz_inputs=daz), arrays, bits, flags, 1)
    masks = {name: mask for name, mask in flags if mask.any()}  # the flags raised anywhere
    for mask in (bits, *masks.values()):
        mask.flags.writeable = False
    table = (bits, masks)
    with _pair_lock:  # two threads may both fill it (the same table): the last one stays
        _pair_tables[key] = table
        _pair_seen.pop(key, None)
        while len(_pair_tables) > PAIR_TABLES_KEPT:
            del _pair_tables[next(iter(_pair_tables))]
    return table


def zero_pattern(fmt, negative: bool) -> int:
    """The pattern of an exact zero result (+0 in formats without -0)."""
    return (1 << (fmt.bits - 1)) if negative and fmt.has_negative_zero else 0


def _lazy(job, operands, workers):
    """apply() for dask operands: the operands' dtypes checked now, their values chunk by
    chunk (when computed)."""
    fmt, want = job.target.fmt, job.target.want
    values = []
    for name, value in operands:
        if _dask.is_dask(value):
            _validate.bit_patterns(name, np.empty(0, dtype=value.dtype), fmt.bits)
            values.append(value)
        else:
            values.append(operand_patterns(fmt, [(name, value)])[0][0])
    threads = 1 if workers is None else resolve_workers(workers)

    def chunk(where, *blocks):
        arrays, shape = operand_patterns(fmt, list(zip((name for name, _ in operands), blocks)))
        out = np.empty(shape, dtype=fmt.storage_dtype)
        flags = FlagMasks.zeros(out.size) if want else None
        _stream(job, arrays, out, flags, threads, Positions(*where))
        return out, flags

    result, masks = _dask.elementwise(chunk, values, fmt.storage_dtype, want)
    return (result, masks.to_flags()) if want else result


#: elements per block of the operations.  Their kernels make about a hundred numpy calls
#: a block, each with a microsecond of Python around it: at the codec's 2**14 that was
#: half of a bf16 mul.  2**16 ran add, mul, fma and sqrt 1.3-1.7x faster (bf16, one
#: thread, benchmarks/bench_scale.py's data; div alike), though its intermediates spill
#: out of a 1 MiB L2.
OPS_BLOCK_SIZE = 1 << 16
#: elements per block on several threads: each numpy call hands the GIL over, which cost
#: more than a 2**16 block's work gains (2 threads ran 0.6-0.95x as fast as one).  On a
#: 2-core virtual machine 2 threads at 2**17 ran 1.1-1.4x as fast as one thread at
#: OPS_BLOCK_SIZE, and at 2**18 another 1.0-1.2x faster (2 MiB per float64 intermediate).
OPS_THREAD_BLOCK_SIZE = 1 << 18


def _stream(job, arrays, out, flags, workers=1, positions=None):
    """Run ``job`` over the broadcast operand ``arrays`` into ``out`` (shape: the
    broadcast shape) and ``flags`` (FlagMasks.zeros(out.size), or None), block by block."""
    kernel, exact = job.operation.kernel, job.operation.exact
    target, daz_inputs = job.target, job.daz_inputs
    fmt, attrs = target.fmt, target.attrs
    shape, n = out.shape, out.size
    flat_out = out.reshape(-1)
    flat_ops = [a.reshape(-1) if a.shape == shape and a.flags.c_contiguous else np.broadcast_to(a, shape)
                for a in arrays]
    want = flags is not None
    native = block_kernel(job)  # softfloat.ops._native: fp16/bf16 add, sub, mul; sqrt

    def block(start, stop, rand, ws):
        m = stop - start
        blocks = [op[start:stop] if op.ndim == 1 and op.shape[0] == n else np.asarray(op.flat[start:stop])
                  for op in flat_ops]
        xs = []
        for i, b in enumerate(blocks):
            x = operand_values(b, fmt, ws.get(f"operand{i}", np.float64, m), ws)
            if daz_inputs:
                daz(x, fmt)
            xs.append(x)
        block_out = flat_out[start:stop]
        if native is not None:  # its proof: softfloat.ops._native
            found = native(*xs, attrs, want, block_out, ws)
            if found is not None:
                return found[0]
        res = kernel(fmt, attrs, *xs, ws=ws)
        fl = round_block(res, exact, xs, target, rand, block_out, ws)
        invalid = resolve_nans(blocks, xs, res.hi, res.invalid, fmt, attrs, block_out)
        if not want:
            return None
        fl.or_(FlagMasks(invalid=invalid, divide_by_zero=res.divide_by_zero))
        nan_lanes = np.isnan(res.hi)
        if nan_lanes.any():
            fl.clear_at_nan(nan_lanes)
        return fl

    stream_blocks(n, OPS_BLOCK_SIZE, job.key, flags, block, workers=workers, positions=positions,
                  thread_block_size=OPS_THREAD_BLOCK_SIZE)
