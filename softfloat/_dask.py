"""dask arrays in, lazy dask arrays out: the glue between dask and the in-memory functions.

softfloat never imports dask on its own: :func:`is_dask` recognises a dask array without
importing anything (a dask array can exist only once dask.array is imported), and dask is
imported only here, when one came.  The functions of this module know nothing of formats
or rounding: the codec, the operations and the reductions hand them a function that does
one chunk in memory.

Each chunk's function also learns where its chunk lies in the whole array (offsets and
the whole shape), so that stochastic rounding can give each element the random bits of
its global position (:mod:`softfloat._random`): results are then the same as in memory,
whatever the chunks and wherever they run (threads, processes, a cluster).

Flags travel with the result: a chunk returns one structured array (the result and a
byte of five flag bits, plus a swamped count for reductions), from which the result and
each flag mask are lazy views; computing them together (``dask.compute``) runs each chunk
once.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from . import _validate
from ._flagmasks import FlagMasks, flag_mask
from .flags import FLAG_NAMES

__all__ = ["Contraction", "any_dask", "chain_reduce", "compute", "elementwise", "is_dask", "is_lazy",
           "lift", "require"]


def is_dask(x) -> bool:
    """Is ``x`` a dask array?  (Imports nothing: without dask.array loaded there is none.)"""
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(x, module.Array)


def any_dask(*xs) -> bool:
    return any(is_dask(x) for x in xs)


def is_lazy(x) -> bool:
    """Is ``x`` a lazy collection (a dask array or dask scalar)?"""
    return type(x).__module__.startswith("dask") and hasattr(x, "__dask_graph__")


def require():
    """Import dask.array, or say which extra to install."""
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover - dask is in the test extra
        raise ImportError(f"dask arrays need dask, which is not installed: {_validate.install_hint('dask')}") from None
    return da


def compute(*values):
    """Compute lazy values together (one pass over their shared chunks); others pass through."""
    lazy = [i for i, v in enumerate(values) if is_lazy(v)]
    if not lazy:
        return values
    import dask

    done = dask.compute(*(values[i] for i in lazy))
    out = list(values)
    for i, v in zip(lazy, done):
        out[i] = v
    return tuple(out)


def _packed_dtype(dtype, want: bool, swamped: bool = False):
    if not want:
        return np.dtype(dtype)
    fields = [("r", dtype), ("f", np.uint8)]
    if swamped:
        fields.append(("s", np.int64))
    return np.dtype(fields)


def _pack(result, masks, swamped, dtype):
    """A chunk's result and flags (a FlagMasks) in one structured array."""
    packed = np.empty(np.shape(result), dtype=dtype)
    packed["r"] = result
    packed["f"] = masks.packed(np.shape(result))
    if swamped is not None:
        packed["s"] = swamped
    return packed


def _unpack(packed, dtype, want: bool):
    """The lazy result and lazy FlagMasks of a packed elementwise result."""
    if not want:
        return packed, None
    result = packed.map_blocks(lambda p: p["r"].copy(), dtype=dtype, meta=np.empty((0,) * packed.ndim, dtype))
    bool_meta = np.empty((0,) * packed.ndim, dtype=bool)
    masks = FlagMasks(**{name: packed.map_blocks(lambda p, name=name: flag_mask(p["f"], name),
                                                 dtype=bool, meta=bool_meta) for name in FLAG_NAMES})
    return result, masks


def elementwise(chunk, operands, dtype, want: bool):
    """Apply ``chunk(where, *blocks) -> (result, FlagMasks or None)`` to broadcast operands.

    ``where`` is the chunk's ``(shape, offsets, whole_shape)``.  Operands may be dask arrays or
    anything numpy reads; they are broadcast together and their chunks aligned.  Returns
    the lazy result (``dtype``) and, with ``want``, a FlagMasks of lazy boolean masks.
    """
    da = require()
    shape = np.broadcast_shapes(*(np.shape(x) for x in operands))
    # the chunks of the first dask operand (broadcast), for every operand; an in-memory
    # operand goes in at its own size (from_array copies it) and is broadcast lazily
    lead = next(da.broadcast_to(x, shape) for x in operands if is_dask(x))
    arrays = [da.broadcast_to(x if is_dask(x) else da.from_array(np.asarray(x)), shape).rechunk(lead.chunks)
              for x in operands]
    packed_dtype = _packed_dtype(dtype, want)

    def run(*blocks, block_info=None):
        info = block_info[None]
        where = (tuple(info["chunk-shape"]), tuple(lo for lo, _ in info["array-location"]),
                 tuple(info["shape"]))
        result, masks = chunk(where, *blocks)
        return _pack(result, masks, None, packed_dtype) if want else result

    meta = np.empty((0,) * len(shape), dtype=packed_dtype)
    packed = da.map_blocks(run, *arrays, dtype=packed_dtype, meta=meta)
    return _unpack(packed, np.dtype(dtype), want)


def _stand_in(x):
    """An empty array of x's dtype and number of dimensions (a scalar stays itself)."""
    if is_dask(x):
        return np.empty((0,) * x.ndim, dtype=x.dtype)
    arr = np.asarray(x)
    return arr if arr.ndim == 0 else arr[(slice(0, 0),) * arr.ndim]


def lift(func, operands, args, kwargs, dtype, want=False):
    """``func(*operands, *args, **kwargs)`` for operands some of which are dask arrays: a
    lazy result of ``dtype`` (and lazy Flags with ``want``, when func returns
    ``(result, flags)``), chunk by chunk.  The call is first made on empty stand-ins of
    the operands, so that bad arguments and dtypes raise now, not at compute time."""
    func(*(_stand_in(x) for x in operands), *args, **kwargs)

    def chunk(where, *blocks):
        res = func(*blocks, *args, **kwargs)
        if not want:
            return np.asarray(res), None
        result, flags = res
        return np.asarray(result), FlagMasks.of(flags)

    result, masks = elementwise(chunk, operands, dtype, want)
    return (result, masks.to_flags()) if want else result


@dataclass(frozen=True)
class Contraction:
    """How a reduction's operands meet, in dask's blockwise index notation."""

    indices: tuple[str, ...]  # each operand's index string ("ik", "kj")
    out_index: str  # the output's ("ij")
    k_index: str  # the index summed over ("k")
    out_chunks: tuple  # the output's chunks, one tuple per letter of out_index


def chain_reduce(step, operands, contraction: Contraction, dtype, want, initial=None):
    """A reduction over index ``contraction.k_index`` whose k chunks are chained in k
    order: each output block's partial result is the next k chunk's initial value.

    ``step(where, c, *blocks)`` computes one output block from the operands' blocks of
    one k chunk and the previous partial ``c`` (None for the first k chunk, unless
    ``initial`` is given: a dask array of the output's shape and chunks); ``where`` is the
    block's ``(shape, offsets, whole_shape)``.  It returns ``(result, FlagMasks or None,
    swamped or None)``.  The operands' chunks must agree along each index of
    ``contraction``.  Returns the lazy result, a FlagMasks of lazy masks and swamped
    counts (flags ORed and counts added along the chain).
    """
    da = require()
    indices, out_index, k_index, out_chunks = (contraction.indices, contraction.out_index,
                                               contraction.k_index, contraction.out_chunks)
    k_axes = [ind.index(k_index) for ind in indices]
    n_k = operands[0].numblocks[k_axes[0]]
    whole = tuple(int(sum(c)) for c in out_chunks)
    # one coordinate array per output index: each block learns its offsets and shape
    coords = []
    for letter, chunks, n in zip(out_index, out_chunks, whole):
        coords += [da.arange(n, chunks=(chunks,)), letter]
    packed_dtype = _packed_dtype(dtype, want, swamped=want)
    meta = np.empty((0,) * len(out_index), dtype=packed_dtype)
    partial = initial
    flag_code = swamped = None
    n_ops = len(operands)
    for kk in range(n_k):
        args = []
        for x, ax, ind in zip(operands, k_axes, indices):
            sel = [slice(None)] * x.ndim
            sel[ax] = slice(kk, kk + 1)
            args += [x.blocks[tuple(sel)], ind]
        first = partial is None
        if not first:
            args += [partial, out_index]
        packed_c = want and kk > 0  # the previous step's packed output (else plain bits)

        def run(*blocks, first=first, packed_c=packed_c):
            operand_blocks, rest = blocks[:n_ops], blocks[n_ops:]
            c = None
            if not first:
                c, rest = rest[0], rest[1:]
                c = c["r"] if packed_c else c
            shape = tuple(len(r) for r in rest)
            offsets = tuple(int(r[0]) if len(r) else 0 for r in rest)
            result, masks, sw = step((shape, offsets, whole), c, *operand_blocks)
            return _pack(result, masks, sw, packed_dtype) if want else np.asarray(result)

        out = da.blockwise(run, out_index, *args, *coords, dtype=packed_dtype, concatenate=True, meta=meta)
        if want:
            code = out.map_blocks(lambda p: p["f"].copy(), dtype=np.uint8)
            sw = out.map_blocks(lambda p: p["s"].copy(), dtype=np.int64)
            flag_code = code if flag_code is None else flag_code | code
            swamped = sw if swamped is None else swamped + sw
        partial = out
    if not want:
        return partial, None, None
    result = partial.map_blocks(lambda p: p["r"].copy(), dtype=dtype,
                                meta=np.empty((0,) * len(out_index), dtype=dtype))
    return result, FlagMasks.unpacked(flag_code), swamped
