"""softfloat.scaled's units and scales in torch operations: which elements share a scale
(the tensor, rows, tiles, MX blocks), their amax, and the scales Transformer Engine and
OCP MX derive from it -- the same float32 values and E8M0 patterns as
softfloat.scaled (its ``_layout`` and ``_scales``), computed on the tensor's device.

Every step is exact or one IEEE rounding that torch performs the same way on every
device: a maximum, a comparison, a float64 quotient of two fp32 values rounded to
float32 (53 >= 2 * 24 + 2: the two roundings give the one fp32 rounding of the exact
quotient, as numpy's float64 quotient rounded by softfloat's encode does), a float32
product of two fp32 values (rounded once, as numpy's exact float64 product rounded to
fp32), and integer operations on float32 bit patterns (powers of two, E8M0 fields):

    float32  = sign | exponent (8, bias 127) | fraction (23)
    E8M0  X  = 2**(e - 127) for e = 0 .. 254; e = 255 is NaN
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..formats import Format

__all__ = ["Units", "dequant_factors", "fp32_scales", "mx_scales", "quant_factors"]

_FP32_MAX_BITS = 0x7F7FFFFF
_MIN_NORMAL_BITS = 0x00800000  # 2**-126: computed scales are kept at or above it
_EXPONENT = 0x7F800000
_QUIET_NAN_BITS = 0x7FC00000
_E8M0_NAN = 0xFF


class Units:
    """The scaled units of a tensor of ``shape``: the whole tensor, or tiles (br, bc)
    over the tensor viewed as (..., R, C) -- rows and 1-D blocks view the last axis as
    one row (softfloat.scaled._layout's layout; the shape checks are the caller's)."""

    def __init__(self, shape, scaling: str, block):
        self.shape = tuple(shape)
        self.tile = None
        if scaling == "tensor":
            self.scales_shape = ()
            return
        two_d = scaling == "blocks" and len(block) == 2
        if two_d:
            self.view = self.shape
            self.tile = tuple(block)
        else:
            self.view = self.shape[:-1] + (1, self.shape[-1])
            self.tile = (1, max(self.shape[-1], 1) if scaling == "rows" else block[-1])
        r, c = self.view[-2:]
        br, bc = self.tile
        self.counts = (-(-r // br), -(-c // bc))
        self.scales_shape = self.shape[:-2] + self.counts if two_d else self.shape[:-1] + (self.counts[1],)

    def _tiles(self, a: torch.Tensor) -> torch.Tensor:
        """``a`` (shaped like the tensor, float) as (..., nR, br, nC, bc), padded with 0."""
        a = a.reshape(self.view)
        (br, bc), (nr, nc) = self.tile, self.counts
        r, c = self.view[-2:]
        if nr * br != r or nc * bc != c:
            a = F.pad(a, (0, nc * bc - c, 0, nr * br - r))
        return a.reshape(self.view[:-2] + (nr, br, nc, bc))

    def amax(self, x32: torch.Tensor, want_nan: bool):
        """(largest magnitude per unit, NaNs ignored, 0 for an empty unit: float32;
        per unit whether it holds a NaN, or None unless ``want_nan``)."""
        mags = x32.abs()
        clean = mags.masked_fill(torch.isnan(mags), 0.0)
        if self.tile is None:
            peak = clean.amax() if clean.numel() else clean.new_zeros(())
            nan = torch.isnan(mags).any() if want_nan else None
            return peak, nan
        peak = self._tiles(clean).amax(dim=(-3, -1))
        # amax propagates NaN: a unit's maximum of the raw magnitudes is NaN where it holds one
        nan = torch.isnan(self._tiles(mags).amax(dim=(-3, -1))) if want_nan else None
        return peak.reshape(self.scales_shape), None if nan is None else nan.reshape(self.scales_shape)

    def expand(self, per_unit: torch.Tensor) -> torch.Tensor:
        """A per-unit tensor spread over the elements (broadcastable to the shape)."""
        if self.tile is None:
            return per_unit
        (br, bc), (nr, nc) = self.tile, self.counts
        grid = per_unit.reshape(self.view[:-2] + (nr, nc))
        full = grid.repeat_interleave(br, dim=-2).repeat_interleave(bc, dim=-1)
        r, c = self.view[-2:]
        return full[..., :r, :c].reshape(self.shape)


def _float32_of(bits: torch.Tensor) -> torch.Tensor:
    return bits.to(torch.int32).view(torch.float32)


def fp32_scales(amax32: torch.Tensor, fmt: Format, scaled_max: float, epsilon: float, epsilon32: float,
                power_of_two: bool) -> torch.Tensor:
    """fp32 scales ``fp32(scaled_max / max(amax, epsilon))`` (float32), as
    softfloat.scaled.fp32_scales: an amax that is 0, infinite or NaN gives 1; a quotient
    beyond fp32 gives fp32's max; ``power_of_two`` rounds down to a power of two; at least
    2**-126.  ``amax32`` holds fp32 values; ``scaled_max`` = fp32(max * 2**-margin) and
    ``epsilon32`` = fp32(epsilon), both computed by softfloat on the host.

    >>> import torch, softfloat as sf
    >>> fp32_scales(torch.tensor([2.0, 0.0, 3.0]), sf.fp8_e4m3, 448.0, 0.0, 0.0, False).tolist()
    [224.0, 1.0, 149.3333282470703]
    """
    wide = torch.float32 if amax32.device.type == "mps" else torch.float64  # MPS: no float64
    a = amax32.to(wide)
    a = torch.where(a < epsilon, torch.full_like(a, epsilon32), a)  # compared unrounded, as numpy; NaN stays
    usable = torch.isfinite(a) & (a > 0)
    quotient = (scaled_max / torch.where(usable, a, torch.ones_like(a))).to(torch.float32)
    scale = torch.where(usable, quotient, torch.ones_like(quotient))
    bits = scale.view(torch.int32)
    bits = torch.where(bits == _EXPONENT, _FP32_MAX_BITS, bits)  # +inf: fp32's max
    if power_of_two:  # 2**floor(log2 s): the exponent field alone (a subnormal gives 0, raised below)
        bits = bits & _EXPONENT
    return _float32_of(bits.clamp(min=_MIN_NORMAL_BITS))  # positive: bit order is value order


def mx_scales(amax32: torch.Tensor, has_nan, fmt: Format, rounding: str, reciprocal32: float) -> torch.Tensor:
    """E8M0 patterns of X per block (uint8), as softfloat.scaled's MX scales: "floor",
    OCP's 2**(floor(log2 amax) - emax), 0xFF for a block with a NaN or an infinity;
    "ceil", Transformer Engine's fp32(amax * fp32(1 / max)) rounded up to a power of two
    (``reciprocal32`` = fp32(1 / max), computed by softfloat on the host).

    >>> import torch, softfloat as sf
    >>> amax = torch.tensor([1.0, 0.0, 6.5, float("inf")])
    >>> mx_scales(amax, torch.zeros(4, dtype=torch.bool), sf.fp4_e2m1, "floor", 0.0).tolist()
    [125, 0, 127, 255]
    """
    if rounding == "floor":
        # the exponent field of a positive fp32 amax is floor(log2 amax) + 127; a subnormal
        # amax reads as -127, and is raised to -127 anyway (emax >= 1)
        e = (amax32.view(torch.int32) >> 23) - 127
        unbiased = torch.where(amax32 > 0, e - fmt.emax, torch.full_like(e, -127)).clamp(min=-127)
        nan = has_nan | torch.isnan(amax32) | torch.isinf(amax32) | (unbiased > 127)
        return torch.where(nan, _E8M0_NAN, unbiased + 127).to(torch.uint8)
    ratio = amax32 * reciprocal32  # one fp32 rounding of the exact product
    finite = torch.where(torch.isfinite(ratio), ratio, torch.zeros_like(ratio))
    bits = finite.view(torch.int32)
    exponent, mantissa = bits >> 23, bits & 0x7FFFFF
    up = (mantissa > 0) & (exponent != 0xFE) & ~((exponent == 0) & (mantissa <= 0x400000))
    exponent = exponent + up.to(exponent.dtype)
    exponent = torch.where(torch.isinf(ratio), 0xFE, exponent)
    exponent = torch.where(torch.isnan(ratio), _E8M0_NAN, exponent)
    return exponent.to(torch.uint8)


def _power_of_two(k: torch.Tensor) -> torch.Tensor:
    """2**k as float32 for integer k in [-127, 127]: the exponent field k + 127, or for
    k = -127 the subnormal 0.1000..0 (bit 22)."""
    return _float32_of(torch.where(k > -127, (k + 127) << 23, 1 << 22))


def quant_factors(scales: torch.Tensor, scaling: str) -> torch.Tensor:
    """What x is multiplied by (float32): the fp32 scale, or 1 / X = 2**(127 - e) for MX
    (a positive quiet NaN for the E8M0 NaN, as numpy's ``np.nan``)."""
    if scaling != "mx":
        return scales
    e = scales.to(torch.int32)
    factor = _power_of_two(127 - e.clamp(max=254))
    return torch.where(e == _E8M0_NAN, _float32_of(torch.full_like(e, _QUIET_NAN_BITS)), factor)


def dequant_factors(scales: torch.Tensor, scaling: str) -> torch.Tensor:
    """What elements are multiplied by (float32, every value an fp32 value as numpy's
    float64 ``scale_inv``): X for MX (NaN for 0xFF), else fp32(1 / scale)."""
    if scaling == "mx":
        e = scales.to(torch.int32)
        value = _power_of_two(e.clamp(max=254) - 127)
        return torch.where(e == _E8M0_NAN, _float32_of(torch.full_like(e, _QUIET_NAN_BITS)), value)
    wide = torch.float32 if scales.device.type == "mps" else torch.float64
    return (1.0 / scales.to(wide)).to(torch.float32)
