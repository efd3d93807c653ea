"""``softfloat.matmul`` on torch tensors, computed on their own device where a proven
torch path exists, else by the numpy reference on host copies -- the same bits either way.

The torch paths (each module's docstring has its proof):

* IEEE fp32 accumulator, sequential or reverse k order (``softfloat.torch._accumulate_ieee``),
  or the pairwise order (``softfloat.torch._accumulate_pairwise``):
  operands of at most 16 bits whose products are exact in float32, or products rounded
  into fp32 (``product="fp32"``, 32-bit operands too), one float32 multiply and one
  float32 addition per step -- infinities and NaNs included, IEEE arithmetic's own; any
  other exact products (fp32 x fp32, bf16 extremes) in float64, each step's sum rounded
  once into fp32 (TwoSum and rounding to odd in float64, ``_accumulate_ieee.add_exact``);
* a tensor-core preset or :class:`~softfloat.accumulate.FusedAccumulator` with an fp32
  output (``softfloat.torch._accumulate_fused``): the fused adder's blocks in float64;
* IEEE fp16, bf16 or FP8 accumulator, sequential, reverse or pairwise order, with promotion
  blocks (``softfloat.torch._accumulate_narrow``, ``_accumulate_pairwise``): products
  exact in float32 as above, each sum rounded to odd at 24 bits by TwoSum in float32
  and then to the accumulator in nearest even.

The reverse order is the sequential one on the operands reversed along k (with
``block``, the reversed operands' runs are the reverse order's runs, in its order).

Every NaN result is written as the canonical positive NaN the reference returns (one pass
over the output, on the integer patterns).  All of them also count the swamped additions (``return_flags="swamped"``) on the device, by
``softfloat.accumulate``'s definitions (each module's docstring).

Which device: ``emulate``'s engine calls :func:`matmul_bits` (through
``softfloat.torch._engine_kernels``) for operands that are not on the CPU, and keeps the
numpy kernels on the CPU, where they are faster (benchmarks/bench_torch_accumulate.py).
"""

from __future__ import annotations

import numpy as np
import torch

from ..accumulate import FusedAccumulator, hardware_model, matmul
from ..accumulate.hardware import is_preset
from ..accumulate.reduce import default_accumulator
from ..formats import Format, as_format, bf16, fp16, fp32, fp64
from ..rounding import Rounding
from . import _accumulate_fused, _accumulate_ieee, _accumulate_narrow, _accumulate_pairwise
from ._accumulate_tables import patterns, tabled, tables

__all__ = ["matmul_bits", "torch_path"]

#: torch's dtypes of the rounded outputs the torch paths produce (float32 results
#: converted by torch's casts, which round to nearest even)
_OUT_DTYPE = {fp32: torch.float32, fp64: torch.float64, fp16: torch.float16, bf16: torch.bfloat16}
#: the signed torch integer of each storage width: the returned tensor's dtype
_BITS_DTYPE = {8: torch.uint8, 16: torch.int16, 32: torch.int32, 64: torch.int64}
_NUMPY_SIGNED = {8: np.uint8, 16: np.int16, 32: np.int32, 64: np.int64}
#: the summation orders the torch paths take (the IEEE accumulators'; the hardware
#: models' blocks have no order): "reverse" is the sequential order on the operands
#: reversed along k (its runs of ``block`` terms are the reversed operands' runs,
#: promoted in the same order); "pairwise" is softfloat.torch._accumulate_pairwise
_ORDERS = ("sequential", "reverse", "pairwise")
#: keywords of softfloat.matmul whose default the torch paths take; any other value (or
#: another keyword) goes to the reference
_DEFAULTS = {"rounding": None, "saturate": None, "subnormals": None,
             "tininess": None, "attributes": None, "rng": None, "return_flags": False}


def matmul_bits(a_bits, b_bits, fmt, *, b_format=None, accumulator=None, out_format=None, c=None, **options):
    """``softfloat.matmul`` of bit-pattern tensors, on their device: the same definition,
    arguments, defaults and bits.

    Parameters
    ----------
    a_bits, b_bits : torch.Tensor of an integer dtype
        Bit patterns of ``fmt`` (``b_bits``: of ``b_format``), shapes (..., M, K) and
        (..., K, N) as for :func:`softfloat.matmul`, on one device.  Unsigned values, or
        the signed torch integer of the format's width holding the same bits (int16 for
        16-bit patterns, as torch views of float16/bfloat16 tensors give them).
    fmt, b_format, accumulator, out_format
        As for :func:`softfloat.matmul`.
    c : torch.Tensor, optional
        Bit patterns of ``out_format``, broadcast to the result.
    **options
        Any other keyword of :func:`softfloat.matmul`: ``block`` (taken by the torch
        paths), ``product``, ``order``,
        ``rounding``, ``saturate``, ``subnormals``, ``tininess``, ``attributes``, ``rng``,
        ``return_flags``), passed to it.  ``return_flags="swamped"`` is also taken by the
        torch paths; ``return_flags=True`` always runs the reference.

    Returns
    -------
    torch.Tensor on the operands' device: ``out_format``'s bit patterns in the torch
    integer of its width (uint8, int16, int32 or int64: torch has few unsigned dtypes), so
    ``result.cpu().numpy().view(out_format.storage_dtype)`` is ``softfloat.matmul``'s
    array.  With ``return_flags="swamped"``: (bits, swamped), ``swamped`` an int64 tensor
    of the result's shape on the same device (computed there by the torch paths, copied
    there from the reference otherwise), whose values are ``softfloat.matmul``'s counts:
    per output, the additions in which a non-zero addend left the running sum unchanged
    (the fused adder: each product truncated to nothing, and each IEEE addition of a
    block or run sum).  With ``return_flags=True`` (always the reference): (bits,
    flags), the flags ``softfloat.AccumulationFlags`` of numpy arrays.

    Notes
    -----
    Computed in torch operations on the device (see the module docstring) when:
    2-D or batched operands with K >= 1; ``fmt`` and ``b_format`` fp32 or of at most 16
    bits, every value a float32 value; every keyword in ``options`` at its default
    (nearest even, exact products, no flags) but ``block``, ``order`` (any; the
    hardware models: "sequential"), ``product="fp32"`` and ``return_flags="swamped"``;
    and either

    * an IEEE fp32 accumulator, with ``out_format`` fp32, fp64, fp16 or bf16 (``block``
      and ``c`` need fp32): products exact in float32 (fp16, bf16 in its exact range,
      FP8 in any pairing) or rounded into fp32 (``product="fp32"``: the "fp32" and MX
      recipes' products) by float32 arithmetic, any other (fp32 x fp32, bf16 products
      below 2**-149 or beyond float32's range) in float64; or
    * a hardware preset (or FusedAccumulator) with an fp32 adder output that truncates
      (the presets' fp32-output modes, native and "via fp16" FP8), ``out_format`` fp32
      or a format reached by one rounding (fp64, fp16 is the preset's fp16-output mode
      and is not taken, bf16), ``block`` and ``c`` with an fp32 ``out_format``, or
    * an IEEE fp16, bf16, fp8_e4m3 or fp8_e5m2 accumulator whose products are all
      exact in float32 (as for fp32), ``out_format`` fp32, fp64, fp16 or bf16 (the
      FP8 ones: not their own, the default; ``block``: fp32, fp16 or bf16;
      ``c`` in fp32, fp16 or bf16), where no step's float32 TwoSum can overflow (terms
      and ``c`` well below 2**126; an fp16 accumulator's overflow to infinity is taken);
      ``product="fp32"`` as for fp32.

    Infinities and NaNs among the operands and ``c`` are taken by all three.
    Everything else -- other accumulators, rounding modes, flags, other ``product``
    formats, formats wider than 16 bits but fp32 -- runs
    :func:`softfloat.matmul` on host copies and returns its bits on the device, so the
    result never depends on the path.

    Examples
    --------
    >>> import torch, softfloat as sf
    >>> from softfloat.torch._accumulate import matmul_bits
    >>> a = torch.tensor([[1.0, 2.0**-11, 2.0**-11]], dtype=torch.float16).view(torch.int16)
    >>> b = torch.ones(3, 1, dtype=torch.float16).view(torch.int16)
    >>> matmul_bits(a, b, "fp16").view(torch.float32).tolist()
    [[1.0009765625]]
    >>> matmul_bits(a, b, "fp16", accumulator="v100").view(torch.float32).tolist()
    [[1.0009765625]]
    >>> tiny = torch.tensor([[1.0, 2.0**-24, 2.0**-24]], dtype=torch.float16).view(torch.int16)
    >>> bits, swamped = matmul_bits(tiny, b, "fp16", return_flags="swamped")  # 1 + 2**-24 is 1
    >>> bits.view(torch.float32).tolist(), swamped.tolist()
    ([[1.0]], [[2]])
    >>> bits, swamped = matmul_bits(tiny, b, "fp16", accumulator="h100", return_flags="swamped")
    >>> bits.view(torch.float32).tolist(), swamped.tolist()  # one block: both terms kept
    ([[1.0000001192092896]], [[0]])
    """
    fmt = as_format(fmt, "fmt")
    b_fmt = fmt if b_format is None else as_format(b_format, "b_format")
    kwargs = dict(b_format=b_format, accumulator=accumulator, out_format=out_format, **options)
    block = options.pop("block", None)
    order = options.pop("order", "sequential")
    rounded = _rounded_products(options.pop("product", None))
    count = _swamped_only(options.get("return_flags", False))
    if count:
        options.pop("return_flags")
    got = None
    if rounded is not None and _plain(a_bits, b_bits, c, options) and isinstance(order, str) and order in _ORDERS:
        got = _on_device(a_bits, b_bits, fmt, b_fmt, (accumulator, out_format, c, block, order, rounded), count)
    if got is None:
        got = _reference(a_bits, b_bits, fmt, c, kwargs)
        if count:  # the counts beside the bits, on their device
            bits, swamped = got
            got = bits, torch.from_numpy(np.array(swamped, dtype=np.int64)).to(bits.device)
    return got


def _rounded_products(product):
    """False for exact products (None), True for products rounded into fp32 (a float32
    multiply is that rounding), None for any other ``product`` (the reference's)."""
    if product is None:
        return False
    try:
        return True if as_format(product, "product") == fp32 else None
    except (TypeError, ValueError):
        return None


def _swamped_only(return_flags) -> bool:
    return isinstance(return_flags, str) and return_flags == "swamped"


def torch_path(device) -> bool:
    """Should an emulation on ``device`` call :func:`matmul_bits` (True off the CPU: it
    computes on the device; on the CPU the numpy engine is the one to keep)."""
    return torch.device(device).type != "cpu"


def _plain(a, b, c, options) -> bool:
    tensors = (a, b) if c is None else (a, b, c)
    if not all(isinstance(t, torch.Tensor) and not t.dtype.is_floating_point and not t.dtype.is_complex
               and t.dtype != torch.bool for t in tensors):
        return False
    if any(t.device != a.device or t.device.type == "meta" for t in tensors):
        return False
    if a.dim() < 2 or b.dim() < 2 or a.shape[-1] != b.shape[-2] or a.shape[-1] == 0:
        return False
    try:
        torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except RuntimeError:
        return False  # the reference says what is wrong
    return all(k in _DEFAULTS and (v is _DEFAULTS[k] or v == _DEFAULTS[k]) for k, v in options.items())


def _model(accumulator, fmt, b_fmt, out_format):
    """(kind, model): ("ieee", fp32), ("fused", FusedAccumulator), or None."""
    if accumulator is None:
        try:
            return ("ieee", fp32) if default_accumulator(fmt, b_fmt) == fp32 else None
        except ValueError:
            return None
    if isinstance(accumulator, FusedAccumulator):
        return "fused", accumulator
    if is_preset(accumulator):
        try:
            return "fused", hardware_model(accumulator, fmt, out_format, b_format=b_fmt)
        except ValueError:
            return None
    if isinstance(accumulator, (str, Format)):
        try:
            acc = as_format(accumulator, "accumulator")
        except (TypeError, ValueError):
            return None
        if acc in _accumulate_narrow.ACCUMULATORS:
            return "narrow", acc
        return ("ieee", fp32) if acc == fp32 else None
    return None


def _on_device(a_bits, b_bits, fmt, b_fmt, call, count):
    """The torch paths' result (with ``count``: and the swamped counts), or None where
    they do not apply; ``call`` is (accumulator, out_format, c, block, order, rounded)."""
    accumulator, out_format, c, block, order, rounded = call
    if not all(tabled(f) or f == fp32 for f in (fmt, b_fmt)):
        return None
    try:
        out = None if out_format is None else as_format(out_format, "out_format")
    except (TypeError, ValueError):
        return None
    found = _model(accumulator, fmt, b_fmt, out)
    whole = isinstance(block, int) and not isinstance(block, bool)
    if found is None or (block is not None and not (whole and block >= 1)):
        return None
    kind, model = found
    if kind == "fused" and (order != "sequential" or rounded):
        return None  # the reference says why not (or computes it)
    if order == "reverse":
        a_bits, b_bits = a_bits.flip(-1), b_bits.flip(-2)
    if kind == "fused" and not (model.output == fp32 and model.output_rounding is Rounding.TOWARD_ZERO
                                and fmt.precision + b_fmt.precision <= 24):
        return None
    out = (model if kind == "narrow" else fp32) if out is None else out
    if kind == "narrow":  # c: a value of out_format, held exactly (a float32 value here)
        if out not in _OUT_DTYPE or (c is not None and out == fp64) or (
                block is not None and out not in _accumulate_narrow.PROMOTED):
            return None
    elif out not in _OUT_DTYPE or ((c is not None or block is not None) and out != fp32):
        return None
    nd = max(a_bits.dim(), b_bits.dim())  # batch axes aligned: (T, ...) layouts broadcast
    a_bits = a_bits.reshape((1,) * (nd - a_bits.dim()) + tuple(a_bits.shape))
    b_bits = b_bits.reshape((1,) * (nd - b_bits.dim()) + tuple(b_bits.shape))
    a_idx, b_idx = patterns(a_bits, fmt), patterns(b_bits, b_fmt)
    c_fmt = out if kind == "narrow" else fp32
    c_idx = None if c is None else patterns(c, c_fmt)
    if a_idx is None or b_idx is None or (c is not None and c_idx is None):
        return None
    c_values = None if c_idx is None else _values(c_idx, c_fmt)
    if kind == "fused":
        result = _fused(model, a_idx, b_idx, (fmt, b_fmt), c_values, block, count)
    else:
        result = _chain(kind, model, (a_idx, b_idx, (fmt, b_fmt), rounded), (c_values, block, order, out), count)
    if result is None:
        return None
    values, swamped = result if count else (result, None)
    bits = _out_bits(values, out)
    return (bits, swamped) if count else bits


def _chain(kind, model, operands, call, count):
    """An IEEE accumulator's sums (``kind`` "ieee": fp32; "narrow": ``model``) in torch
    operations, or None where they do not compute the definition (see
    :func:`_chain_values`); ``operands`` is (a_idx, b_idx, formats, rounded), ``call``
    (c_values, block, order, out)."""
    c_values, block, order, out = call
    rounded = operands[3]
    values = _chain_values(kind, *operands)
    if values is None:
        return None
    a, b = values
    if order == "pairwise":
        return _accumulate_pairwise.pairwise(fp32 if kind == "ieee" else model, a, b, c_values, block, out, count)
    if kind == "ieee":
        return _accumulate_ieee.sequential_fp32(a, b, c_values, block, count, exact=not rounded)
    if block is None:
        return _accumulate_narrow.sequential_narrow(model, a, b, c_values, count)
    return _accumulate_narrow.blocked_narrow(model, a, b, c_values, block, out, count)


def _values(idx, fmt):
    """float32 values of the patterns ``idx`` of ``fmt`` (fp32, or a tabled format)."""
    if fmt == fp32:
        return (idx - ((idx >> 31) << 32)).to(torch.int32).view(torch.float32)
    return tables(fmt, idx.device).values[idx]


def _chain_values(kind, a_idx, b_idx, formats, rounded):
    """The operands' values (a, b): float32 where float32 products compute the
    definition's terms -- every product exact in float32 (:func:`products_exact`), or
    ``rounded``: each product rounded into fp32, which a float32 multiply is --; else,
    for the fp32 accumulator, float64 (every product of formats of at most 32 bits is
    exact in float64: _accumulate_ieee's add_exact steps); else None.  Infinities and
    NaNs take part: their products and sums are IEEE's own."""
    fmt, b_fmt = formats
    a, b = _values(a_idx, fmt), _values(b_idx, b_fmt)
    if rounded or (fmt.precision + b_fmt.precision <= 24 and _accumulate_ieee.products_exact(
            fmt, b_fmt, tables(fmt, a_idx.device), tables(b_fmt, b_idx.device), a_idx, b_idx)):
        return a, b
    return (a.to(torch.float64), b.to(torch.float64)) if kind == "ieee" else None


def _fused(model, a_idx, b_idx, formats, c_values, block, count):
    fmt, b_fmt = formats
    # the "via fp16" path when both operands are FP8: exponents clamped at fp16's emin
    via = model.fp8 == "via_fp16" and all(f.exponent_bits <= 5 and f.mantissa_bits <= 3 for f in (fmt, b_fmt))
    emin_a, emin_b = (fp16.emin, fp16.emin) if via else (fmt.emin, b_fmt.emin)
    ta, tb = tables(fmt, a_idx.device, emin_a), tables(b_fmt, b_idx.device, emin_b)
    a, b = ta.values64[a_idx], tb.values64[b_idx]
    return _accumulate_fused.fused_matmul(model, (a, ta.pow2[a_idx]), (b, tb.pow2[b_idx]), c_values, block, via,
                                          count)


def _out_bits(values, out):
    """float32/float64 ``values`` rounded into ``out`` (nearest even) as its bit patterns,
    every NaN the reference's canonical one (``out.nan_bits``, positive and quiet).
    torch's casts round in nearest even, but not every device keeps a NaN's pattern
    through them (CUDA's float -> half gives its own 0x7FFF; torch 2.13's CPU float32 ->
    bfloat16 cast gives 0xFFFF), so bf16 goes through its integer rounding and the NaN
    lanes are written as integers last."""
    if out == bf16:
        rounded = _accumulate_narrow.round_into(bf16, values.to(torch.float32))
        bits = (rounded.view(torch.int32) >> 16).to(torch.int16)
    else:
        bits = values.to(_OUT_DTYPE[out]).view(_BITS_DTYPE[out.bits])
    return torch.where(torch.isnan(values), out.nan_bits, bits)  # an int: exact on every device


def _host(t):
    """A tensor of patterns as the numpy array softfloat.matmul reads: a signed integer
    read as the unsigned one of its width (the same bits; a negative value of a wider
    integer than the format's is then out of range, as it was)."""
    arr = t.detach().cpu().numpy()
    return arr.view(arr.dtype.str.replace("i", "u")) if arr.dtype.kind == "i" else arr


def _reference(a_bits, b_bits, fmt, c, kwargs):
    """softfloat.matmul on host copies, its bits returned on the operands' device."""
    a, b, c_host = (_host(t) if isinstance(t, torch.Tensor) else t for t in (a_bits, b_bits, c))
    got = matmul(a, b, fmt, c=c_host, **kwargs)
    bits, flags = got if kwargs.get("return_flags") else (got, None)
    bits = np.asarray(bits)
    device = a_bits.device if isinstance(a_bits, torch.Tensor) else torch.device("cpu")
    width = bits.dtype.itemsize * 8
    tensor = torch.from_numpy(np.ascontiguousarray(bits).view(_NUMPY_SIGNED[width])).to(device)
    return tensor if flags is None else (tensor, flags)
