"""The public reductions: sum, vecdot and matmul (definitions in the package docstring)."""

from __future__ import annotations

import math
import threading
from typing import NamedTuple

import numpy as np

from .. import _dask, _fastpaths, _validate
from .._encode import encode_block
from .._flagmasks import FlagMasks
from .._random import Positions
from .._options import resolve_attributes
from ..attributes import RoundingAttributes
from .._blocks import resolve_workers, stream_blocks
from .._workspace import BLOCK_SIZE, Workspace
from ..formats import as_format, native_format
from . import _fast, _few, _fused, _ieee, _orders
from ._operands import _axes as normal_axes
from ._operands import initial_values, matmul_as_paired, matmul_layout, paired_layout, reshaped
from ._spec import ReductionSpec, default_accumulator, spec_for

__all__ = ["default_accumulator", "matmul", "sum", "vecdot"]


def sum(x, fmt, *, axis=None, keepdims=False, accumulator=None, out_format=None, c=None,  # noqa: A001
        product=None, order="sequential", block=None, rounding=None, saturate=None, subnormals=None,
        tininess=None, attributes=None, rng=None, return_flags=False):
    """Sum of bit patterns of ``fmt`` along ``axis``, accumulated as the package docstring
    defines: in ``accumulator``, in the given ``order``, rounded into ``out_format``.

    Parameters
    ----------
    x : integer array_like
        Bit patterns of ``fmt``.
    fmt : Format or str
    axis : None, int or tuple of ints, default None
        The axes to reduce (None: all); the terms are taken in C order of the reduced
        axes (k is their flat index), whatever order a tuple lists them in.
    keepdims : bool, default False
    accumulator : Format, str, FusedAccumulator or None
        A format (each addition rounded once in it), a hardware preset name ("v100",
        "t4", "a100", "a2", "ada", "l40s", "h100", "h200", "b200": the terms go through
        its fused adder as products x * 1) or a :class:`FusedAccumulator`.
        Default: ``fmt`` itself.
    out_format : Format or str, optional
        Format of the result (default: the accumulator's).
    c : integer array_like, optional
        Bit patterns of ``out_format``, broadcast to the result: the initial value.
    product : None
        Accepted for symmetry with :func:`vecdot` and :func:`matmul`; a sum has no
        products, so anything else is a TypeError.
    order : {"sequential", "pairwise", "reverse"}, default "sequential"
    block : int, optional
        Sum runs of ``block`` terms in the accumulator, then add the run sums in
        ``out_format`` (promotion).
    rounding : Rounding or str, default "nearest_even"
        The mode of every rounding (the hardware accumulators' fused steps use the
        hardware's own).
    saturate : bool, default False
        Every IEEE rounding -- the additions in the accumulator, rounded products,
        promotions and the final rounding into ``out_format`` -- sends overflows to
        +-max_finite instead of infinity (or NaN), as :func:`softfloat.encode` does.  An
        infinite term stays infinite; the hardware accumulators' fused steps overflow as
        the hardware does.
    subnormals : bool, default True
        False flushes subnormal results of every rounding to zero.
    tininess : {"after", "before"}, default: the platform's ("after")
    attributes : RoundingAttributes, optional
        The four options above (and the platform) as one value, as for
        :func:`softfloat.encode`: the keywords are shortcuts for its fields, and a keyword
        that is given wins over ``attributes``.  NaN results are the canonical quiet NaN
        whatever the platform (see the package docstring).
    rng : numpy.random.Generator or int, optional
        For ``rounding="stochastic"``: a seed or generator makes the result reproducible;
        ``rng=None`` draws fresh entropy from the operating system, so two calls differ.
        Ignored by the deterministic modes.
    return_flags : bool or "swamped", default False
        True: also return :class:`~softfloat.AccumulationFlags` (the IEEE flags per output
        element, ORed over its roundings, and the count of swamped additions).
        "swamped": also return only those counts, the int64 array that
        ``AccumulationFlags.swamped`` would be (same shape, same values; a numpy scalar
        for a 0-d result), without the work of the other flags where the arithmetic can
        count them alone (the native and fused fast paths).

    Returns
    -------
    bits : ndarray of ``out_format.storage_dtype`` (a numpy scalar for a 0-d result),
        and the flags (or, with ``return_flags="swamped"``, the swamped counts) with
        ``return_flags``.

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> ones = np.full(4096, sf.encode(1.0, "fp16"))
    >>> float(sf.decode(sf.sum(ones, "fp16"), "fp16"))                # stalls at 2048
    2048.0
    >>> float(sf.decode(sf.sum(ones, "fp16", accumulator="fp32"), "fp32"))
    4096.0
    >>> bits, flags = sf.sum(ones, "fp16", return_flags=True)
    >>> int(flags.swamped)                                             # 2048 updates lost
    2048
    >>> bits, swamped = sf.sum(ones, "fp16", return_flags="swamped")    # the counts alone
    >>> int(swamped)
    2048
    >>> x = sf.encode([60000.0, 60000.0, -60000.0], "fp16")
    >>> float(sf.decode(sf.sum(x, "fp16"), "fp16"))                   # inf - 60000 = inf
    inf
    >>> float(sf.decode(sf.sum(x, "fp16", saturate=True), "fp16"))    # 65504 - 60000
    5504.0
    """
    fmt = as_format(fmt)
    keepdims = _validate.boolean("keepdims", keepdims)
    attrs, rng = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng)
    spec = spec_for("sum", fmt, rng, accumulator=accumulator, out_format=out_format, product=product,
                    order=order, block=block, attributes=attrs, want=return_flags)
    if _dask.any_dask(x, c):
        return _lazy_sum(x, spec, axis, keepdims, c)
    # (type(axis) is int: axis=0.0 and axis=False equal 0 and must reach _axes' refusal)
    one_d = type(x) is np.ndarray and x.ndim == 1 and type(axis) is int and axis in (0, -1)
    if c is None and (axis is None or one_d) and (not keepdims or type(x) is np.ndarray):
        kept = (1,) * x.ndim if keepdims else None
        terms = x
        if axis is None and type(x) is np.ndarray and x.ndim != 1 and x.flags.c_contiguous:
            terms = x.reshape(-1)  # a view: all the terms, in the general path's (C) order
        small = _one_output(spec, terms, None)
        if small is not None:
            return small if kept is None else reshaped(small, kept)
    if c is None and type(x) is np.ndarray and _ONE_OUTPUT_TERMS:
        small = _few.axis_sum(spec, x, normal_axes(axis, x.ndim), keepdims)  # a few terms, without the tiles
        if small is not None:
            return small
    layout, signaling = paired_layout(fmt, x, axis=axis, keepdims=keepdims, names=("x", None))
    return _reduce(layout, signaling, spec, c)


def vecdot(a, b, fmt, *, b_format=None, axis=-1, accumulator=None, out_format=None, c=None, product=None,
           order="sequential", block=None, rounding=None, saturate=None, subnormals=None, tininess=None,
           attributes=None, rng=None, return_flags=False):
    """Dot products of bit patterns of ``fmt`` along ``axis`` (numpy 2's ``vecdot``: the
    axis is contracted, the others broadcast).

    Parameters
    ----------
    a, b : integer array_like
        Bit patterns of ``fmt`` (``b``: of ``b_format``), of the same length along ``axis``.
    fmt : Format or str
    b_format : Format or str, optional
        The format of ``b``'s bit patterns (default: ``fmt``).  Each product a_k * b_k is
        then the exact product of the two values, whatever their formats (E4M3
        activations times E5M2 gradients, fp16 x bf16, ...); NaN, inf and signalling NaNs
        are read by each operand's own format.
    axis : int, default -1
    accumulator : Format, str, FusedAccumulator or None
        As for :func:`sum`.  Default: "fp32" when every value of ``fmt`` is an fp32 value
        (fp16, bf16, tf32, FP8, ...), else ``fmt``.  With a ``b_format`` other than
        ``fmt``: "fp32" when it holds every value of both formats, else the one of the
        two that holds the other, else "fp64".  A hardware preset takes two formats of
        one family, or any two FP8 formats (its FP8 path); a :class:`FusedAccumulator`
        any two formats whose products have at most 24 significant bits.
    product : Format or str, optional
        None: products are exact and fused into the additions (one rounding per step).
        A format: each product is first rounded into it (a separate multiply).
    out_format, c, order, block, rounding, saturate, subnormals, tininess, attributes, rng, return_flags
        As for :func:`sum` (defaults: ``rounding="nearest_even"``, ``saturate=False``,
        ``subnormals=True``, the platform's tininess, "after"; a keyword given wins over
        ``attributes``; ``rng`` is used only by stochastic rounding: ``rng=None`` draws
        fresh entropy, not reproducible; the deterministic modes ignore it).

    Returns
    -------
    bits : ndarray of ``out_format.storage_dtype`` (or a scalar), and the flags (or the
        swamped counts) with ``return_flags``.

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> a = sf.encode(np.full(3, 1.0), "fp16"); b = sf.encode([2.0**-11, 2.0**-11, 2.0**-11], "fp16")
    >>> one = sf.encode(1.0, "fp16")
    >>> float(sf.decode(sf.vecdot(a, b, "fp16", accumulator="fp16", c=one), "fp16"))  # swamped
    1.0
    >>> float(sf.decode(sf.vecdot(a, b, "fp16", c=sf.encode(1.0, "fp32")), "fp32"))   # fp32 keeps them
    1.00146484375
    >>> x = sf.encode([448.0, 2.0**-9], "fp8_e4m3"); g = sf.encode([2.0**-16, 57344.0], "fp8_e5m2")
    >>> float(sf.decode(sf.vecdot(x, g, "fp8_e4m3", b_format="fp8_e5m2"), "fp32"))   # 448 * 2**-16 + 112
    112.0068359375
    """
    fmt = as_format(fmt)
    attrs, rng = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng)
    spec = spec_for("vecdot", fmt, rng, b_format=b_format, accumulator=accumulator, out_format=out_format,
                    product=product, order=order, block=block, attributes=attrs, want=return_flags)
    if b is None:  # the layout below reads a missing b as a sum of a: refuse it here
        _validate.bit_patterns("b", b, spec.b_format.bits)
    if _dask.any_dask(a, b, c):
        return _lazy_vecdot(a, b, spec, axis, c)
    return _paired(spec, a, b, axis, c)


def _paired(spec: ReductionSpec, a, b, axis, c):
    """vecdot in memory (and a batched matmul of vectors, as matmul_as_paired lays it out)."""
    if c is None and not spec.mixed and type(axis) is int and axis in (0, -1) and type(a) is np.ndarray \
            and type(b) is np.ndarray \
            and a.ndim == b.ndim == 1 and a.shape == b.shape:
        small = _one_output(spec, a, b)
        if small is not None:
            return small
    if c is None and not spec.mixed and _ONE_OUTPUT_TERMS:
        small = _few.paired_product(spec, a, b, axis)  # a few products, without the tiles
        if small is not None:
            return small
    layout, signaling = paired_layout(spec.fmt, a, b, axis=axis, names=("a", "b"), y_fmt=spec.b_format)
    return _reduce(layout, signaling, spec, c)


def matmul(a, b, fmt, *, b_format=None, accumulator=None, out_format=None, c=None, product=None,
           order="sequential", block=None, rounding=None, saturate=None, subnormals=None, tininess=None,
           attributes=None, rng=None, return_flags=False):
    """Matrix product of bit patterns of ``fmt`` with numpy's ``matmul`` shapes: D = A·B + C.

    Parameters
    ----------
    a, b : integer array_like
        Bit patterns of ``fmt`` (``b``: of ``b_format``): (..., M, K) and (..., K, N); a
        1-d ``a`` is a row, a 1-d ``b`` a column, and that axis is removed from the
        result; batch axes broadcast.
    fmt : Format or str
    b_format : Format or str, optional
        The format of ``b``'s bit patterns (default: ``fmt``), as for :func:`vecdot`:
        each product is exact (or rounded into ``product``), the default accumulator and
        the hardware presets as :func:`vecdot` says ("h100" takes fp8_e4m3 x fp8_e5m2
        through its FP8 path, fp16 x bf16 nowhere).
    accumulator, out_format, c, product, order, block, rounding, saturate, subnormals, tininess,
    attributes, rng, return_flags
        As for :func:`vecdot` (the rounding options and ``attributes`` as for :func:`sum`).
        ``c`` broadcasts to the result shape (..., M, N).  ``rng`` is used only by
        stochastic rounding (``rng=None`` draws fresh entropy, not reproducible); the
        deterministic modes ignore it.

    Returns
    -------
    bits : ndarray of ``out_format.storage_dtype``, and the flags (or the swamped counts,
        ``return_flags="swamped"``) with ``return_flags``.

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> a = sf.encode([[0.5, 0.5, 0.5, 0.5]], "fp16")                   # 1 x 4
    >>> b = sf.encode([[2.0**-24]] * 4, "fp16")                          # 4 x 1
    >>> c = sf.encode([[1.0]], "fp32")
    >>> def d(bits): return sf.decode(bits, "fp32").tolist()
    >>> d(sf.matmul(a, b, "fp16", c=c))                 # IEEE fp32: each 2**-25 is below half an ulp
    [[1.0]]
    >>> d(sf.matmul(a, b, "fp16", c=c, accumulator="a100"))   # 24 bits below 1: all four dropped
    [[1.0]]
    >>> d(sf.matmul(a, b, "fp16", c=c, accumulator="h100"))   # 25 bits: 1 + 4 * 2**-25
    [[1.0000001192092896]]
    >>> x = sf.encode([[1.0, 2.0**-7]], "fp8_e4m3"); g = sf.encode([[1.0], [2.0**-7]], "fp8_e5m2")
    >>> d(sf.matmul(x, g, "fp8_e4m3", b_format="fp8_e5m2", accumulator="h100"))  # 2**-14: below F = 13
    [[1.0]]
    """
    fmt = as_format(fmt)
    attrs, rng = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng)
    spec = spec_for("matmul", fmt, rng, b_format=b_format, accumulator=accumulator, out_format=out_format,
                    product=product, order=order, block=block, attributes=attrs, want=return_flags)
    if _dask.any_dask(a, b, c):
        return _lazy_matmul(a, b, spec, c)
    if c is None and not spec.mixed and type(a) is np.ndarray and type(b) is np.ndarray \
            and a.ndim in (1, 2) and b.ndim in (1, 2) and a.shape[:-1] in ((), (1,)) \
            and b.shape[1:] in ((), (1,)) and a.shape[-1] == b.shape[0]:
        small = _one_output(spec, a.reshape(-1), b.reshape(-1))  # one output: a dot product
        if small is not None:
            shape = a.shape[:-1] + b.shape[1:]  # (K)@(K): (); (1, K)@(K, 1): (1, 1); ...
            return reshaped(small, shape) if shape else small
    if _ONE_OUTPUT_TERMS:  # (two formats too, where their products fit; c as the sums' start)
        small = _few.matrix_product(spec, a, b, c)  # a few multiply-adds, without the tiles
        if small is not None:
            return small
    vectors = matmul_as_paired(a, b) if _fastpaths.ENABLED else None  # (a shortcut: a tile per batch element
    if vectors is not None:  # of the outer layout against tiles of the whole batch)
        return _paired(spec, *vectors, -1, c)
    layout, signaling = matmul_layout(fmt, a, b, spec.b_format)
    return _reduce(layout, signaling, spec, c)


#: terms up to which a reduction into one output runs step by step on Python floats
#: (softfloat.accumulate._few.short_chain: about 1-2 us a step, 0.2 us in fp32 or fp16
#: to nearest even -- softfloat._fastpaths._chain's cast runs -- against the general
#: path's 100-200 us of set-up and then the same steps: its chains into one output step
#: on Python floats too, softfloat.accumulate._ieee.Arithmetic.chain).  A declined step
#: (an overflow, a tiny sum flushed to zero) sends the whole reduction to the general
#: path, so the bound keeps that waste small.  Longer ones take the general path, whose
#: native plans (an fp16 or fp32 accumulator in nearest even) run at numpy's speed.
#: 0 holds off every shortcut past the tiles (this one and softfloat.accumulate._few's:
#: the tests of the tiles)
_ONE_OUTPUT_TERMS = 1 << 14
#: the same bound in stochastic rounding, whose longer chains the general path runs as
#: vectorised float64 sums (softfloat.accumulate._odd_stochastic), faster than steps on
#: Python floats
_STOCHASTIC_ONE_OUTPUT_TERMS = 64


def _one_output(spec: ReductionSpec, x, y):
    """sum (``y`` None) or vecdot of 1-D bit-pattern arrays into one output: by numpy's
    arithmetic where softfloat.accumulate._few.one_output shows it exact (any length),
    else step by step on Python floats (softfloat.accumulate._scalar_chain, up to
    _ONE_OUTPUT_TERMS terms); or None: the general path (switched off, another layout or
    option, a special value or any step the scalar rounding declines).  Same bits, flags
    and swamped count as the general path."""
    if not _ONE_OUTPUT_TERMS:
        return None
    if type(x) is np.ndarray and x.size >= 1:  # one_output takes one term too
        small = _few.one_output(spec, x, y)
        if small is not None:
            return small
    elif type(x) is np.ndarray:  # no terms: +0, no flags (Gauss-Seidel's empty slices)
        return _few.empty(spec, x, y)
    return _few.short_chain(spec, x, y, _ONE_OUTPUT_TERMS if spec.key is None else _STOCHASTIC_ONE_OUTPUT_TERMS)


#: outputs times terms from which a reduction's tiles run on the streaming threads
#: (softfloat.set_workers); below it, thread start-up costs more than it saves
THREADED_WORK = 1 << 22


def _reduce(layout, signaling, spec: ReductionSpec, c, positions=None):
    """The in-memory reduction of ``layout``'s terms by ``spec`` from ``c``; ``positions``
    (a softfloat._random.Positions) places a dask chunk's outputs in the whole result."""
    want, out_fmt, hardware = spec.want, spec.out_format, spec.hardware
    start = initial_values(c, out_fmt, layout.shape)
    arith_spec = _ieee.Spec(_kernel_format(spec), spec.ieee_accumulator, out_fmt, spec.product, spec.order, spec.block,
                            spec.attributes, spec.key, want, positions, spec.swamped_only)
    Q = math.prod(layout.shape)
    bits = np.empty(Q, dtype=out_fmt.storage_dtype)
    masks = FlagMasks.zeros(Q) if want else None
    swamped = np.zeros(Q, dtype=np.int64) if want else None
    c_values = c_signaling = None
    if start is not None:
        c_values, c_signaling = start

    native = not hardware and (not spec.mixed or (spec.accumulator.holds(spec.fmt)
                                                  and spec.accumulator.holds(spec.b_format)))
    local = threading.local()  # per thread: the arithmetic (its Rounders keep buffers) and a workspace

    def run(first, stop, rand, _):
        if not hasattr(local, "arith"):
            # hardware: its promotions and final rounding are IEEE ones in out_format
            local.arith = (native and _fast.plan(arith_spec, layout)) or _ieee.Arithmetic(arith_spec,
                                                                                           layout.is_product)
            local.ws = Workspace(BLOCK_SIZE)
        arith = local.arith
        for tile in tiles[first:stop]:
            sl = slice(tile.q0, tile.q0 + tile.n)
            c_tile = None if c_values is None else c_values[sl]
            tile_flags = _ieee.TileFlags(tile.n, want)
            rounded = isinstance(arith, _ieee.Arithmetic)
            if hardware:
                values = _fused.accumulate_tile(spec.accumulator, arith_spec, arith, tile, c_tile, tile_flags)
            else:
                try:
                    values = _orders.accumulate_tile(arith, arith_spec, tile, arith.start(c_tile), tile_flags)
                except _fast.Declined:  # (a sum that is not finite: the general path's rules)
                    if not hasattr(local, "general"):  # (one per thread, as local.arith)
                        local.general = _ieee.Arithmetic(arith_spec, layout.is_product)
                    general, rounded = local.general, True
                    tile_flags = _ieee.TileFlags(tile.n, want)
                    values = _orders.accumulate_tile(general, arith_spec, tile, general.start(c_tile), tile_flags)
            _store(values, out_fmt, bits[sl], local.ws, tile_flags, rounded)
            if want:
                masks.set_at(sl, tile_flags.masks, Q, fresh=True)
                swamped[sl] = tile_flags.swamped

    # the tiles on the streaming threads where there is work for them (each writes its own
    # outputs, flags and counts; random bits go by position: the same results on any count)
    tiles = list(layout.tiles(BLOCK_SIZE))
    workers = resolve_workers(None) if Q * max(layout.K, 1) >= THREADED_WORK else 1
    stream_blocks(len(tiles), 1, None, None, run, workers=workers)
    bits = bits.reshape(layout.shape)
    result = bits[()] if bits.ndim == 0 else bits
    if not want:
        return result
    if spec.swamped_only:  # (the flags' shape: a numpy scalar for a 0-d result, as squeezed gives)
        swamped = swamped.reshape(layout.shape)
        return result, swamped[()] if swamped.ndim == 0 else swamped
    masks.or_(FlagMasks(invalid=signaling.reshape(-1)))  # signaling NaN operands
    if c_signaling is not None:
        masks.or_(FlagMasks(invalid=c_signaling))
    return result, masks.to_flags(layout.shape, swamped=swamped.reshape(layout.shape)).squeezed()


def _kernel_format(spec: ReductionSpec):
    """The format the arithmetic is told the operands are in: ``fmt``, or for products of
    two formats one that holds both (softfloat.accumulate._ieee.join), which is all the
    arithmetics read it for -- whether products are exact in float64 (is_narrow), which
    float64 path the kernels take, and (softfloat.accumulate._fast.plan) whether every
    product is a value of the accumulator: true of a and b when true of the wider one.
    The native plans are used for two formats only where the accumulator holds both
    (their operands are decoded into its dtype)."""
    return _ieee.join(spec.fmt, spec.b_format) if spec.mixed else spec.fmt


def _store(values, fmt, out, ws, tile_flags, rounded):
    """Exact values of ``fmt`` -> bit patterns (no rounding happens, but for the native fast
    path's final rounding into a narrower out_format: to nearest even, gradual underflow,
    no saturation, the only options that path takes).  A NaN value is the canonical quiet
    NaN (a format without NaN gets +0, flagged invalid), but for the NaN that a non-NaN
    value rounds to in a format without infinity (fn: an overflow, or an infinity): that
    keeps the value's sign, as in sf.encode.  ``rounded``: the values come from the IEEE
    arithmetic (softfloat.accumulate._ieee), whose NaNs carry that sign (+ for the others);
    else (the native fast path: numpy arithmetic, whose NaN signs mean nothing) a NaN value
    is always a NaN passed on or made by an operation, and an overflow is still a finite
    value, rounded here by encode_block.
    Values held in fmt's own numpy dtype (a native fp32/fp16/fp64 accumulator's) are
    their bit patterns already (a shortcut: off with softfloat._fastpaths.ENABLED)."""
    if _fastpaths.ENABLED and native_format(values.dtype) == fmt:
        np.copyto(out, values.view(fmt.storage_dtype))
    else:
        encode_block(values, fmt, RoundingAttributes(), None, False, out, ws)
    nan = np.isnan(values)
    if nan.any():
        out[nan] = fmt.nan_bits if fmt.has_nan else 0
        if rounded and fmt.specials.value == "fn":
            negative = nan & np.signbit(values)
            out[negative] |= out.dtype.type(1 << (fmt.bits - 1))
        if not fmt.has_nan and tile_flags.masks is not None:
            tile_flags.masks.or_(FlagMasks(invalid=nan))


# =====================================================================================
# dask arrays: the same definitions, chunk by chunk
# =====================================================================================
_OUT_LETTERS = "abcdefghijlmnopqrstuvwxyz"  # k is the contracted index


def _lazy_sum(x, spec: ReductionSpec, axis, keepdims, c):
    """sum of a dask array: the reduced axes moved last (in C order) and merged into k."""
    x = _lazy_patterns("x", x, spec.fmt)
    axes = normal_axes(axis, x.ndim)
    keep = [d for d in range(x.ndim) if d not in axes]
    out_shape = tuple(x.shape[d] for d in keep)
    K = math.prod([x.shape[d] for d in axes])
    terms = x.transpose(tuple(keep) + tuple(axes)).reshape(out_shape + (K,))
    letters = _OUT_LETTERS[:len(keep)]
    final = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)) if keepdims else out_shape
    return _lazy_contract(spec, _Operands([terms], [letters + "k"], letters), c, final)


def _lazy_vecdot(a, b, spec: ReductionSpec, axis, c):
    """vecdot of dask arrays: the contracted axis moved last, the others broadcast."""
    da = _dask.require()
    fmt = spec.fmt
    a, b = _lazy_patterns("a", a, fmt), _lazy_patterns("b", b, spec.b_format)
    paired_layout(fmt, np.zeros((0,) * a.ndim, a.dtype), np.zeros((0,) * b.ndim, b.dtype), axis=axis,
                  names=("a", "b"), y_fmt=spec.b_format)  # the axis checks, on empty stand-ins
    a, b = da.moveaxis(a, axis, -1), da.moveaxis(b, axis, -1)
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"vecdot: a {a.shape} and b {b.shape} (contracted axis last) do not broadcast") from None
    a, b = da.broadcast_to(a, shape), da.broadcast_to(b, shape)
    b = b.rechunk(a.chunks)
    letters = _OUT_LETTERS[:len(shape) - 1]
    return _lazy_contract(spec, _Operands([a, b], [letters + "k"] * 2, letters), c, shape[:-1])


def _lazy_matmul(a, b, spec: ReductionSpec, c):
    """matmul of dask arrays: (..., M, K) @ (..., K, N), 1-d operands promoted."""
    da = _dask.require()
    a, b = _lazy_patterns("a", a, spec.fmt), _lazy_patterns("b", b, spec.b_format)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul needs arrays of at least one dimension; got a of shape {a.shape} "
                         f"and b of shape {b.shape} (use softfloat.mul for scalars)")
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: a has {a2.shape[-1]} columns (shape {a.shape}) but b has {b2.shape[-2]} "
                         f"rows (shape {b.shape}); the contracted lengths must match")
    try:
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: the batch axes of a {a.shape} and b {b.shape} do not broadcast") from None
    final = batch + (a2.shape[-2], b2.shape[-1])
    final = final[:-2] + final[-1:] if a.ndim == 1 else final
    final = final[:-1] if b.ndim == 1 else final
    a2 = da.broadcast_to(a2, batch + a2.shape[-2:])
    b2 = da.broadcast_to(b2, batch + b2.shape[-2:])
    b2 = b2.rechunk(a2.chunks[:-2] + (a2.chunks[-1], b2.chunks[-1]))
    letters = _OUT_LETTERS[:len(batch)]
    return _lazy_contract(spec, _Operands([a2, b2], [letters + "ik", letters + "kj"], letters + "ij"), c, final)


def _lazy_patterns(name, x, fmt):
    """A dask operand (numpy ones become one-chunk dask arrays), its dtype checked now."""
    da = _dask.require()
    if not _dask.is_dask(x):
        from ._operands import _patterns
        return da.from_array(_patterns(name, x, fmt))
    _validate.bit_patterns(name, np.empty(0, dtype=x.dtype), fmt.bits)
    return x


class _Operands(NamedTuple):
    """A reduction's dask operands and their blockwise indices: ``indices`` name each
    operand's axes ("ik", "kj"), ``out_index`` the result's ("ij"); k is contracted."""

    arrays: list
    indices: list
    out_index: str


def _contract_blocks(blocks, spec: ReductionSpec, c, positions=None):
    """The in-memory reduction of one output block over the terms it is given."""
    fmt = spec.fmt
    if spec.kind == "sum":
        layout, signaling = paired_layout(fmt, blocks[0], axis=-1, names=("x", None))
    elif spec.kind == "vecdot":
        layout, signaling = paired_layout(fmt, blocks[0], blocks[1], axis=-1, names=("a", "b"),
                                          y_fmt=spec.b_format)
    else:
        layout, signaling = matmul_layout(fmt, *blocks, spec.b_format)
    return _reduce(layout, signaling, spec, c, positions)


def _lazy_contract(spec: ReductionSpec, operands: _Operands, c, final_shape):
    """The reduction of dask operands, lazily, bit for bit as in memory.

    Deterministic sequential sums in an IEEE accumulator chain their k chunks: each output
    block's partial sum (held in the accumulator A: out_format=A) is the next chunk's
    ``c``, which is the in-memory definition itself (s = c, then s = round_A(s + t_k));
    the final rounding into out_format, when it differs from A, is one lazy convert.  The
    other cases (stochastic rounding, whose draws are numbered by the global k; pairwise
    and reverse orders, block=, hardware accumulators, a ``c`` that A cannot hold, an
    accumulator without NaN) take each output block's k terms in one chunk: the
    operands are rechunked to one chunk along k.
    """
    da = _dask.require()
    if spec.swamped_only:  # every flag, chunk by chunk, then their swamped counts
        bits, flags = _lazy_contract(spec.replace(swamped_only=False), operands, c, final_shape)
        return bits, flags.swamped
    want, acc, out_fmt = spec.want, spec.accumulator, spec.out_format
    chain = (not spec.hardware and spec.order == "sequential" and spec.block is None and spec.key is None
             and acc.has_nan and (c is None or out_fmt == acc))
    arrays, indices, out_index = operands
    if not chain:
        arrays = [x.rechunk({ind.index("k"): -1}) for x, ind in zip(arrays, indices)]
    chunks = {}
    for x, ind in zip(arrays, indices):
        for letter, ch in zip(ind, x.chunks):
            chunks.setdefault(letter, ch)
    out_chunks = tuple(chunks[letter] for letter in out_index)
    work_shape = tuple(int(np.sum(ch, dtype=np.int64)) for ch in out_chunks)
    initial = None
    if c is not None:
        if _dask.is_dask(c):
            _validate.bit_patterns("c", np.empty(0, dtype=c.dtype), out_fmt.bits)
        else:
            c = _validate.bit_patterns("c", c, out_fmt.bits)
        try:
            c = da.broadcast_to(c, final_shape)
        except ValueError:
            raise ValueError(f"c of shape {np.shape(c)} does not broadcast to the result shape {final_shape}") from None
        initial = c.reshape(work_shape).rechunk(out_chunks).astype(out_fmt.storage_dtype)
    step_spec = spec.replace(out_format=acc) if chain else spec

    def step(where, c_block, *blocks):
        positions = None if spec.key is None else Positions(*where)
        res = _contract_blocks(blocks, step_spec, c_block, positions)
        bits, flags = res if want else (res, None)
        bits = np.asarray(bits).reshape(where[0])
        if flags is None:
            return bits, None, None
        return bits, FlagMasks.of(flags), np.reshape(flags.swamped, where[0])

    storage = (acc if chain else out_fmt).storage_dtype
    contraction = _dask.Contraction(tuple(indices), out_index, "k", out_chunks)
    bits, masks, swamped = _dask.chain_reduce(step, arrays, contraction, storage, want, initial)
    if chain and out_fmt != acc:  # the final rounding round_O(s), as in memory
        from ..ops.convert import convert

        # the rounding fields, not the platform: a reduction's NaNs are canonical
        a = spec.attributes
        converted = convert(bits, acc, out_fmt, a.rounding, tininess=a.tininess, subnormals=a.subnormals,
                            saturate=a.saturate, return_flags=want)
        if want:
            bits, final_flags = converted
            masks.or_(FlagMasks.of(final_flags))
        else:
            bits = converted
    bits = bits.reshape(final_shape)
    if not want:
        return bits
    return bits, masks.to_flags(final_shape, swamped=swamped.reshape(final_shape))
