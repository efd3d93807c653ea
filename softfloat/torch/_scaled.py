"""softfloat.scaled_encode on torch tensors, in torch operations on the tensor's device.

A second implementation of :func:`softfloat.scaled_encode` (``multiply="fp32"``, the
recipes' and the libraries' product) for float16, bfloat16, float32 and float64
tensors, equal to it bit for bit -- element bits, scales, their reciprocals, amax and
the IEEE flags (tests/test_torch_scaled.py):

1. x as fp32 values: float16/bfloat16/float32 exactly (a NaN quieted, sign and payload
   kept, as numpy's widening and the host's multiply keep them), float64 rounded to
   nearest even by the torch encode kernel (softfloat.torch._kernels);
2. amax per unit and the scales (softfloat.torch._scaled_units): Transformer Engine's
   fp32 ``max / amax``, a given scale, or OCP MX / TE E8M0 powers of two;
3. the product ``x * factor`` in float32 (one IEEE rounding of the exact product, which
   numpy forms in float64 and rounds by softfloat's encode); a NaN product takes x's NaN,
   else the factor's (the host's rule: the first NaN operand, quieted);
4. satfinite: infinite products become fp32's max (numpy: float64's max -- the same
   element, max_finite, in every mode; the flags say overflow either way);
5. the element rounding by the torch encode kernel, on float32 patterns, or for
   stochastic rounding on float64 ones (numpy rounds the float64 product array, so its
   64-bit words spend the draws; the same key from the same seed).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from .. import _validate
from .._options import resolve_attributes
from .._random import key_from
from ..attributes import DEFAULT_ATTRIBUTES
from ..codec import quantize
from ..formats import Format, fp32
from ..rounding import Rounding
from ..scaled import ScaledTensor, scaling_arguments
from ._kernels import decode_tensor, encode_tensor
from ._kernels_compiled import encode_fast
from ._scaled_flags import TensorFlags, product_flags, rounding_flags
from ._scaled_units import Units, dequant_factors, fp32_scales, mx_scales, quant_factors
from ._tensors import check_device, check_float

__all__ = ["TorchScaledTensor", "TensorFlags", "operand_counts", "scaled_encode_tensor", "storage_bits"]

_MIN_SCALE, _FP32_MAX = 2.0**-126, fp32.max_finite
_SIGN32, _QUIET32, _MAX32 = -(1 << 31), 1 << 22, 0x7F7FFFFF
#: the keywords of softfloat.scaled_encode taken through **options, with their defaults
_OPTIONS = {"rounding": None, "margin": 0, "scale_rounding": None, "saturate": None, "subnormals": None,
            "tininess": None, "attributes": None, "rng": None}
#: the torch integer of each storage width (int16/int32 hold the unsigned patterns' bits)
_BITS_DTYPE = {1: torch.uint8, 2: torch.int16, 4: torch.int32}


class TorchScaledTensor(NamedTuple):
    """What :func:`scaled_encode_tensor` returns: :class:`softfloat.ScaledTensor`'s
    fields as tensors on the input's device.

    Attributes
    ----------
    bits : torch.Tensor
        The element patterns, shaped like the input, in the format's storage width:
        uint8 (FP8, FP6, FP4), int16 (16-bit formats; the same bits as uint16) or int32.
    scales : torch.Tensor
        float32 quantisation scales, or uint8 E8M0 patterns for "mx"; shaped as
        ScaledTensor.scales.
    scale_inv : torch.Tensor
        float32 dequantisation factors: fp32(1 / scale), or X (NaN for E8M0 0xFF) -- the
        values of ScaledTensor.scale_inv, which holds them as float64.
    amax : torch.Tensor
        float32: the largest magnitude per unit, NaNs ignored (ScaledTensor.amax's values;
        each is an fp32 value).
    format : Format
    scaling : str
    block : tuple of int or None
    """

    bits: torch.Tensor
    scales: torch.Tensor
    scale_inv: torch.Tensor
    amax: torch.Tensor
    format: Format
    scaling: str
    block: tuple | None

    def to_numpy(self) -> ScaledTensor:
        """The same tensor as a :class:`softfloat.ScaledTensor` (host copies)."""
        bits = self.bits.cpu().numpy().view(self.format.storage_dtype)
        return ScaledTensor(bits, self.scales.cpu().numpy(), self.format, self.scaling, self.block,
                            self.amax.cpu().numpy().astype(np.float64))


def scaled_encode_tensor(t, fmt, *, scaling="tensor", block=None, scale=None, amax_epsilon=0.0,
                         return_flags=False, **options):
    """:func:`softfloat.scaled_encode` of a float tensor, computed on its device.

    The same keywords, defaults, checks and results as ``softfloat.scaled_encode(x,
    fmt, ...)`` with ``multiply="fp32"`` (its default), bit for bit; ``amax=`` and
    ``multiply="exact"`` are not offered (the recipes use neither).

    Parameters
    ----------
    t : torch.Tensor
        float16, bfloat16, float32 or float64, any shape, on any device with data.
    fmt, scaling, block, scale, amax_epsilon
        As for :func:`softfloat.scaled_encode`; ``scale`` may also be a torch tensor.
    return_flags : bool, default False
        Also return the IEEE flags, as :class:`TensorFlags` of bool tensors shaped like
        ``t`` (softfloat.scaled_encode's Flags; :meth:`TensorFlags.to_flags` gives one).
    **options
        ``rounding``, ``margin``, ``scale_rounding``, ``saturate``, ``subnormals``,
        ``tininess``, ``attributes``: as for :func:`softfloat.scaled_encode`.  ``rng``
        (int or numpy.random.Generator): for stochastic rounding, as there (the same seed
        gives the same bits); a ``torch.Generator`` is not one.

    Returns
    -------
    TorchScaledTensor, and TensorFlags with ``return_flags=True``.

    Examples
    --------
    >>> import torch, softfloat as sf
    >>> x = torch.tensor([[0.001, -0.5, 3.0], [1e-6, 3e-6, -4e-5]])
    >>> st = scaled_encode_tensor(x, "e4m3")
    >>> st.scales.item(), st.bits.dtype, st.bits.tolist()[1]   # one scale: 448 / 3
    (149.3333282470703, torch.uint8, [0, 0, 131])
    >>> m = scaled_encode_tensor(torch.linspace(-1, 1, 64), "e2m1", scaling="mx")
    >>> m.scales.tolist(), m.scale_inv.tolist()                 # E8M0 2**(0 - 2) per 32
    ([125, 125], [0.25, 0.25])
    >>> st, flags = scaled_encode_tensor(torch.tensor([1.0, 100.0]), "e4m3", scale=8.0, return_flags=True)
    >>> sf.decode(st.bits.numpy(), "e4m3").tolist(), flags.overflow.tolist()   # 800 saturates
    ([8.0, 448.0], [False, True])
    """
    check_float("t", t)
    check_device("t", t)
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise TypeError(f"scaled_encode_tensor got unexpected keyword(s) {', '.join(unknown)}; it takes "
                        f"scaling, block, scale, amax_epsilon, return_flags and {', '.join(_OPTIONS)} "
                        "(softfloat.scaled_encode's amax= and multiply= are not offered)")
    rounding, margin, scale_rounding, saturate, subnormals, tininess, attributes, rng = (
        options.get(name, default) for name, default in _OPTIONS.items())
    if isinstance(rng, torch.Generator):
        raise TypeError("rng must be an int seed or a numpy.random.Generator (softfloat draws "
                        "its random bits with numpy); got a torch.Generator")
    fmt, scaling, block, margin, epsilon, scale_rounding = scaling_arguments(
        fmt, scaling, block, scale=scale, margin=margin, amax_epsilon=amax_epsilon, scale_rounding=scale_rounding)
    if saturate is None and attributes is None:
        saturate = True  # satfinite, as the FP8 recipes cast
    attrs, gen = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng, host=t.device.type == "cpu")
    return_flags = _validate.boolean("return_flags", return_flags)
    _check_shape(t.shape, scaling, block)
    units = Units(t.shape, scaling, block)
    x = t.detach().contiguous()
    nearest32 = DEFAULT_ATTRIBUTES.replace(platform=attrs.platform)  # the fp32 steps' rounding
    x32, first = _fp32_values(x, nearest32, return_flags)
    amax, has_nan = units.amax(x32, scaling == "mx" and scale_rounding != "ceil")
    scales = _scales(amax, has_nan, fmt, scaling, scale, units, x.device,
                     (margin, epsilon, scale_rounding))
    factors = units.expand(quant_factors(scales, scaling))
    p = _product(x32, factors)
    saturated = torch.isinf(p) if attrs.saturate else None
    rounded = p if saturated is None else torch.where(saturated, _copysign_bits(p, _MAX32), p.view(torch.int32)).view(
        torch.float32)
    key = None if gen is None else key_from(gen)
    if attrs.rounding is Rounding.STOCHASTIC:  # numpy rounds float64 words: the draws' 64 bits
        p, rounded = _widened(p), _widened(rounded)
    codes = encode_fast(rounded, fmt, attrs, key)  # compiled where ENCODE_MODE says (the same bits)
    result = TorchScaledTensor(storage_bits(codes, fmt), scales, dequant_factors(scales, scaling), amax, fmt, scaling,
                               block)
    if not return_flags:
        return result
    flags = rounding_flags(p, codes, fmt, attrs, key, saturated)
    flags = flags | product_flags(x32, factors, _unfixed(x32, factors), nearest32.tininess)
    return result, flags if first is None else flags | first


def operand_counts(scaled: TorchScaledTensor, flags: TensorFlags) -> dict:
    """What :class:`softfloat.recipes.OperandRecord` counts of a scaled rounding, from
    its result and flags, with one copy to the host: ``elements``, ``underflow_zero``
    (underflow with a zero result), ``underflow_subnormal``, ``overflow``, ``nonfinite``
    (infinite or NaN results).

    >>> import torch
    >>> st, f = scaled_encode_tensor(torch.tensor([1.0, 1e-9, float("nan")]), "e4m3", return_flags=True)
    >>> operand_counts(st, f)
    {'elements': 3, 'underflow_zero': 1, 'underflow_subnormal': 0, 'overflow': 0, 'nonfinite': 1}
    """
    values = decode_tensor(scaled.bits.to(torch.int32) & ((1 << scaled.format.bits) - 1), scaled.format,
                           torch.float32)
    zero = flags.underflow & (values == 0)
    counts = torch.stack([zero.sum(), (flags.underflow & ~zero).sum(), flags.overflow.sum(),
                          (~torch.isfinite(values)).sum()]).tolist()
    names = ("underflow_zero", "underflow_subnormal", "overflow", "nonfinite")
    return {"elements": int(values.numel()), **dict(zip(names, counts))}


# ---- the steps ------------------------------------------------------------------------------------
def _fp32_values(x, nearest32, want_flags):
    """(x as fp32 values in a float32 tensor, NaNs quiet with sign and payload; the flags
    of rounding float64 x to fp32 or None)."""
    if x.dtype == torch.float64:
        codes = encode_tensor(x, fp32, nearest32)  # int64 patterns in [0, 2**32)
        x32 = torch.where(codes >= 1 << 31, codes - (1 << 32), codes).to(torch.int32).view(torch.float32)
        return x32, rounding_flags(x, codes, fp32, nearest32, None, None) if want_flags else None
    wide = x.to(torch.float32).view(torch.int32)
    if x.dtype == torch.float32:
        nan_bits = wide | _QUIET32
    else:  # float16 (10 fraction bits), bfloat16 (7): the pattern widened by integer shifts
        frac_bits = 10 if x.dtype == torch.float16 else 7
        narrow = x.view(torch.int16).to(torch.int32)  # sign-extended: negative for a set sign bit
        nan_bits = (0x7FC00000 | ((narrow & ((1 << frac_bits) - 1)) << (23 - frac_bits))) | (narrow & _SIGN32)
    return torch.where(torch.isnan(x), nan_bits, wide).view(torch.float32), None


def _product(x32, factors):
    """fp32(x32 * factors) with the NaN lanes of the host's rule: x's NaN (already quiet),
    else the factor's (a positive quiet NaN)."""
    p = _unfixed(x32, factors).view(torch.int32)
    f = factors.view(torch.int32)
    p = torch.where(torch.isnan(factors), f, p)
    return torch.where(torch.isnan(x32), x32.view(torch.int32), p).view(torch.float32)


def _unfixed(x32, factors):
    return (x32 * factors).contiguous()  # one IEEE float32 rounding of the exact product


def _copysign_bits(p, magnitude_bits: int):
    """int32 patterns of +-(the fp32 value ``magnitude_bits``) with ``p``'s signs."""
    return (p.view(torch.int32) & _SIGN32) | magnitude_bits


def _widened(p32):
    """float32 values as float64 with NaN signs and payloads kept by integer shifts (a
    device's float conversion may give its canonical NaN)."""
    bits = p32.view(torch.int32).to(torch.int64)
    nan = (bits & (-(1 << 63))) | (0x7FF << 52) | ((bits & 0x7FFFFF) << 29)
    return torch.where(torch.isnan(p32), nan, p32.to(torch.float64).view(torch.int64)).view(torch.float64)


def storage_bits(codes, fmt: Format):
    """Patterns in [0, 2**bits) as the torch integer of the format's storage width."""
    width = fmt.storage_dtype.itemsize
    if width > 1:
        half = 1 << (8 * width - 1)
        codes = torch.where(codes >= half, codes - 2 * half, codes)
    return codes.to(_BITS_DTYPE[width])


def _scales(amax, has_nan, fmt: Format, scaling, scale, units, device, options):
    margin, epsilon, scale_rounding = options
    if scaling == "mx":
        reciprocal = float(quantize(1.0 / fmt.max_finite, fp32)) if scale_rounding == "ceil" else 0.0
        return mx_scales(amax, has_nan, fmt, scale_rounding or "floor", reciprocal)
    if scale is not None:
        return _scale_argument(scale, units.scales_shape, device)
    scaled_max = float(quantize(fmt.max_finite * 2.0**-margin, fp32))
    return fp32_scales(amax, fmt, scaled_max, epsilon, float(quantize(epsilon, fp32)), scale_rounding == "floor")


# ---- the arguments (softfloat.scaled's checks and messages) ---------------------------------------
def _check_shape(shape, scaling, block):
    if scaling == "tensor":
        return
    need = 2 if scaling == "blocks" and len(block) == 2 else 1
    if len(shape) < need:
        what = f"block={block}" if scaling == "blocks" else f"scaling={scaling!r}"
        raise ValueError(f"{what} needs t with at least {need} {'axes' if need > 1 else 'axis'}; "
                         f"got shape {tuple(shape)}")


def _scale_argument(scale, shape, device):
    """The given fp32 scales (each in [2**-126, fp32 max], rounded to fp32) broadcast to
    the scales' shape, as a float32 tensor on ``device``."""
    if not isinstance(scale, torch.Tensor):
        kind = np.asarray(scale).dtype.kind if not isinstance(scale, (str, bytes)) else "U"
        if kind not in "fiu":
            raise TypeError(f"scale must be fp32 scales (numbers); got {_validate.describe(scale)}")
        scale = torch.as_tensor(np.asarray(scale, dtype=np.float64))
    if not (scale.dtype.is_floating_point or scale.dtype in _INTEGERS):
        raise TypeError(f"scale must be fp32 scales (numbers); got a tensor of dtype {scale.dtype}")
    s = scale.detach().to(device=device, dtype=torch.float64)
    bad = ~((s >= _MIN_SCALE) & (s <= _FP32_MAX))
    if bool(bad.any()):
        raise ValueError(f"scale must lie in [2**-126, fp32 max] (positive, finite); got "
                         f"{float(s[bad].reshape(-1)[0])!r}")
    s = s.to(torch.float32)  # IEEE nearest even, as softfloat's rounding to fp32
    try:
        return torch.broadcast_to(s, tuple(shape)).contiguous()
    except RuntimeError:
        raise ValueError(_validate.wrong_shape(
            "scale", f"one number or one scale per unit (the scales have shape {tuple(shape)})", s.shape)) from None


_INTEGERS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
