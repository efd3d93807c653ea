"""Scaled quantisation: narrow elements (FP8, FP6, FP4, ...) that share scales, as FP8/MX
tensors are stored in practice.

A scaled tensor is the element bit patterns of ``x * scale`` plus the scales: one for the
tensor, one per row, one per tile, or one E8M0 power of two per block of 32 (OCP MX).
Each recipe is the one a named library implements, cited where it is defined below:

=========  ==================================  =============================================
scaling    one scale per                       scale (what ``ScaledTensor.scales`` holds)
=========  ==================================  =============================================
tensor     the whole tensor                    fp32 ``max / amax`` (Transformer Engine's
                                               delayed and current scaling, torchao's
                                               "tensorwise")
rows       row (all axes but the last fixed)   the same per row ("rowwise", channel-wise)
blocks     tile of shape ``block``             the same per tile: (1, 128) activation tiles
                                               and (128, 128) weight blocks as in
                                               DeepSeek-V3 and TE's Float8BlockScaling
mx         32 elements along the last axis     an E8M0 power of two X (OCP MX v1.0)
=========  ==================================  =============================================

Everything is computed as those libraries compute it, in fp32 where they use fp32, with
each rounding done by softfloat's own encode (never by the host FPU).
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from . import _validate
from .codec import decode, encode, quantize
from .formats import Format, as_format, fp32, fp64, native_format
from ._encode import Workspace, encode_block
from ._options import policy_from_options
from ._round import Policy
from .ops import mul

__all__ = ["ScaledTensor", "DelayedScaling", "scaled_encode", "scaled_decode", "fp32_scales", "SCALINGS"]

#: the scaling granularities scaled_encode knows
SCALINGS = ("tensor", "rows", "blocks", "mx")
_MULTIPLY = ("fp32", "exact")
_SCALE_ROUNDING = ("floor", "ceil")
_AMAX_ALGOS = ("max", "most_recent")

_FP32_MAX = fp32.max_finite
#: computed fp32 scales are kept at or above fp32's smallest normal, so that a scale and
#: its fp32 reciprocal are finite and non-zero (only huge margins or amax near fp32's
#: max with a custom format of max below 2 reach it)
_MIN_SCALE = 2.0**-126
_E8M0_BIAS = 127
_E8M0_NAN = 0xFF
_MX_BLOCK = 32


class ScaledTensor(NamedTuple):
    """Element bit patterns and the scales they share; what :func:`scaled_encode` returns.

    Attributes
    ----------
    bits : ndarray of ``format.storage_dtype``
        The elements, shaped like the input: ``encode(x * scale, format)``.
    scales : ndarray
        float32 quantisation scales (``element ~ x * scale``) for "tensor" (shape ()),
        "rows" (``x.shape[:-1] + (1,)``) and "blocks" (one per tile); uint8 E8M0 bit
        patterns of X (``element ~ x / X``) for "mx", one per block of the last axis.
    format : Format
        The element format.
    scaling : str
        "tensor", "rows", "blocks" or "mx".
    block : tuple of int or None
        The tile shape for "blocks" and "mx"; None otherwise.
    amax : ndarray of float64
        The largest magnitude of the input in each scaled unit, NaNs ignored (with
        ``multiply="fp32"``, of the input rounded to fp32), measured even when amax= or
        scale= was given: what Transformer Engine records in its amax history; feed it to
        :meth:`DelayedScaling.update`.

    Examples
    --------
    >>> import softfloat as sf
    >>> st = sf.scaled_encode([0.5, -2.0, 1.0], "e4m3")
    >>> st.scales, st.amax, st.scale_inv          # 448 / 2, and its fp32 reciprocal
    (array(224., dtype=float32), array(2.), array(0.00446429))
    >>> sf.scaled_decode(st).tolist()             # elements 112, -448, 224 times fp32(1/224)
    [0.5000000223517418, -2.000000089406967, 1.0000000447034836]
    """

    bits: np.ndarray
    scales: np.ndarray
    format: Format
    scaling: str
    block: tuple | None
    amax: np.ndarray

    @property
    def scale_inv(self) -> np.ndarray:
        """The dequantisation factors, float64: value = element * scale_inv.

        For fp32 scales, their reciprocals rounded to fp32 (Transformer Engine's
        ``scale_inv``, the factor cuBLAS and ``torch._scaled_mm`` multiply by); for MX, X
        itself (NaN for the E8M0 NaN 0xFF).

        >>> import softfloat as sf
        >>> sf.scaled_encode([3.0, 96.0], "e2m1", scaling="mx").scale_inv.tolist()
        [16.0]
        """
        return _dequant_factors(self.scales, self.scaling)


def scaled_encode(x, fmt, rounding="nearest_even", *, scaling="tensor", block=None, amax=None,
                  scale=None, margin=0, amax_epsilon=0.0, scale_rounding=None,
                  multiply="fp32", saturate=True, rng=None, return_flags=False):
    """Quantise ``x`` into ``fmt`` elements that share scales; return a :class:`ScaledTensor`.

    Each scaled unit (the tensor, a row, a tile, an MX block) gets one scale from the
    largest magnitude ``amax`` of its elements; the elements are ``x * scale`` rounded
    into ``fmt`` in the given rounding mode, saturating by default (values beyond the
    format's range, infinities included, become +-max, as the cuDNN/cuBLAS ``satfinite``
    conversions used by Transformer Engine and torchao's clamp do).

    Parameters
    ----------
    x : array_like
        float16/float32/float64 or integer values (any shape; "rows" and "mx" need at
        least one axis, 2-D "blocks" at least two).  Not modified.
    fmt : Format or str
        The element format; every value of it must be an fp32 value (fp16, bf16, the FP8,
        FP6 and FP4 formats, custom ones as narrow), since scales and products are fp32.
    rounding : Rounding or str, default "nearest_even"
        How the scaled values are rounded into ``fmt``: any mode of :func:`encode`.
    scaling : {"tensor", "rows", "blocks", "mx"}, default "tensor"
        One scale for the tensor, per row (all axes but the last fixed), per tile of
        shape ``block``, or per MX block.
    block : int or tuple of int, optional
        "blocks": the tile, ``(rows, columns)`` over the last two axes, e.g. ``(1, 128)``
        for DeepSeek-V3's activation tiles and ``(128, 128)`` for its weight blocks, or
        ``(k,)`` / ``k`` for k elements along the last axis (default ``(1, 128)``).
        "mx": the block length along the last axis (default 32, the OCP MX formats').
        Ragged edges form smaller tiles.  Not used by "tensor" and "rows".
    amax : array_like, optional
        The amax to derive the scales from instead of measuring ``x``: a number or an
        array of the scales' shape (e.g. a delayed amax from a history).
    scale : array_like, optional
        fp32 scales to use as they are (rounded to fp32), e.g. :attr:`DelayedScaling.scale`;
        not with ``amax`` or "mx".  Each must lie in [2**-126, fp32 max].
    margin : int, default 0
        Transformer Engine's margin, 0 to 64: the scale is ``fp32(max * 2**-margin) / amax``.
    amax_epsilon : float, default 0.0
        A floor for amax before the division: torchao uses 1e-12, Transformer Engine's
        block scaling ``amax_epsilon`` (0 by default).
    scale_rounding : {None, "floor", "ceil"}, optional
        Round each scale to a power of two.  For fp32 scales only "floor": the scale
        rounded down (torchao's ``round_scales_to_power_of_2``, TE's
        ``force_pow_2_scales`` of its block scaling); amax * scale then stays at or below
        max.  For "mx", "floor" (the default) is the OCP rule X = 2**(floor(log2 amax) -
        emax_elem): the block maximum can exceed the element max by up to 2x and is then
        clamped (saturated).  "ceil" is Transformer Engine's MXFP8 variant: X is
        fp32(amax * fp32(1 / max)) rounded up to a power of two, so no element
        overflows, at the price of one binade of resolution for some blocks.
    multiply : {"fp32", "exact"}, default "fp32"
        How ``x * scale`` is formed before the element rounding.  "fp32", as
        Transformer Engine, torchao and the MX kernels do: x converted to fp32 (round to
        nearest even), times the fp32 scale, rounded to nearest fp32, then rounded into
        ``fmt`` (two roundings; with a power-of-two scale the product is exact unless it
        leaves fp32's normal range).  "exact": the exact product, rounded once into
        ``fmt`` (computed exactly in float64, or with round-to-odd multiplication for
        float64/integer input, which makes the second rounding innocuous).
    saturate : bool, default True
        True (satfinite): finite overflows and infinities become +-max, raising
        overflow and inexact.  False: overflows follow :func:`encode`.
    rng : numpy.random.Generator or int, optional
        For ``rounding="stochastic"``: a seed or Generator makes the result reproducible;
        ``rng=None`` draws fresh entropy, so two calls differ.  The deterministic modes
        ignore it.  One draw per element in C order, as :func:`encode`.
    return_flags : bool, default False
        Also return the IEEE flags of the element roundings (with "fp32" also those of
        the fp32 conversion and product), shaped like ``x``.

    Returns
    -------
    ScaledTensor, and Flags with ``return_flags=True``.

    Notes
    -----
    fp32 scales follow Transformer Engine's ``compute_scale_from_amax``
    (``transformer_engine/common/recipe/recipe_common.cuh``) and, with ``margin``, its
    delayed-scaling kernel (``delayed_scaling.cu``): ``scale = fp32(fp32(max * 2**-margin)
    / amax)``, where amax (NaNs ignored, as ``fmaxf`` does) is first rounded to fp32 and
    raised to ``amax_epsilon``; an amax that is 0, infinite or NaN gives scale 1 (TE's
    initial scale; :class:`DelayedScaling` keeps the previous scale instead); a scale
    that overflows fp32 becomes fp32's max.  torchao's "tensorwise" recipe is
    ``amax_epsilon=1e-12``.  DeepSeek's own kernels store ``s = amax / 448`` and divide
    ``x / s``; that is the same quantisation when s is a power of two.

    MX scales follow OCP MX v1.0 section 6.3 and, where it leaves cases open, its
    reference implementation (microsoft/microxcaling ``mx_ops.py``): floor(log2 amax) is
    exact (the reference's float log2 can be one off just below a power of two); an
    all-zero block gets X = 2**-127 (E8M0 0x00); a block holding an infinity or a NaN,
    or whose exponent exceeds 127, gets the E8M0 NaN 0xFF, and every element of it
    decodes to NaN.  Exponents below -127 are raised to -127.  "ceil" follows TE's
    ``float_to_e8m0`` (infinite amax gives 0xFE, NaNs are ignored); TE multiplies the
    elements of a 0x00 block by 1 instead of 2**127, which is not reproduced (such blocks
    hold only values below about 2**-118, which round to zero either way in FP8).

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> x = np.array([[0.001, -0.5, 3.0], [1e-6, 3e-6, -4e-5]], dtype=np.float32)
    >>> t = sf.scaled_encode(x, "e4m3")                    # one scale: 448 / 3
    >>> float(t.scales), sf.scaled_decode(t)[1].tolist()   # the small row underflows
    (149.3333282470703, [0.0, 0.0, -3.923688655049773e-05])
    >>> r = sf.scaled_encode(x, "e4m3", scaling="rows")    # a scale per row keeps it
    >>> r.scales.tolist(), sf.scaled_decode(r)[1].tolist()
    ([[149.3333282470703], [11200000.0]], [9.821428434975132e-07, 2.8571428174473112e-06, -3.999999944426236e-05])
    >>> m = sf.scaled_encode(np.linspace(-1, 1, 64), "e2m1", scaling="mx")   # MXFP4
    >>> m.scales.tolist(), m.bits.shape                    # E8M0 2**(0 - 2) per 32
    ([125, 125], (64,))
    >>> bits = sf.scaled_encode([1.0, 100.0], "e4m3", scale=8.0).bits   # a given scale
    >>> sf.decode(bits, "e4m3").tolist()                   # 800 saturates to 448
    [8.0, 448.0]
    """
    fmt = _element_format(fmt)
    scaling = _one_of("scaling", scaling, SCALINGS)
    multiply = _one_of("multiply", multiply, _MULTIPLY)
    saturate = _validate.boolean("saturate", saturate)
    return_flags = _validate.boolean("return_flags", return_flags)
    margin = _validate.int_in_range("margin", margin, 0, 64)
    epsilon = _epsilon(amax_epsilon)
    if scale_rounding is not None:
        scale_rounding = _one_of("scale_rounding", scale_rounding, _SCALE_ROUNDING)
    arr = _validate.numeric_array("x", x)
    block = _block(scaling, block)
    layout = _Layout(arr.shape, scaling, block, "x")
    _check_recipe_options(scaling, amax, scale, margin, epsilon, scale_rounding)
    policy_from_options(rounding, "after", True, saturate, rng)  # checked before any work

    values, wide, first_flags = _source_values(arr, multiply, return_flags)
    measured, has_nan = layout.amax(values)
    if scaling == "mx":
        source = measured if amax is None else _amax_argument(amax, layout.scales_shape)
        special = (has_nan | np.isinf(measured)) if amax is None else ~np.isfinite(source)
        scales = _mx_scales(source, special, fmt, scale_rounding or "floor")
    elif scale is not None:
        scales = _scale_argument(scale, layout.scales_shape)
    else:
        source = measured if amax is None else _amax_argument(amax, layout.scales_shape)
        scales = fp32_scales(source, fmt, margin=margin, amax_epsilon=epsilon,
                             power_of_two=scale_rounding == "floor")
    factors = _quant_factors(scales, scaling)
    multiplier = layout.expand(factors)

    with np.errstate(all="ignore"):
        if multiply == "fp32":
            product = values * multiplier  # exact: fp32 x fp32 fits float64
            if _already_fp32(product, factors):
                scaled, product_flags = product, None
            else:
                scaled = quantize(product, fp32, return_flags=return_flags)
                scaled, product_flags = scaled if return_flags else (scaled, None)
        else:
            scaled, product_flags = exact_products(values, multiplier, wide), None
        infinite = np.isinf(scaled) if saturate else None
        if saturate and infinite.any():  # satfinite: infinities are out of range too
            scaled = np.where(infinite, np.copysign(np.finfo(np.float64).max, scaled), scaled)
    result = encode(scaled, fmt, rounding, saturate=saturate, rng=rng, return_flags=return_flags)
    bits, flags = result if return_flags else (result, None)
    tensor = ScaledTensor(bits, scales, fmt, scaling, block, measured)
    if not return_flags:
        return tensor
    for extra in (first_flags, product_flags):
        if extra is not None:
            flags = flags | extra
    return tensor, flags.squeezed()


def exact_products(values, multiplier, wide):
    """``values * multiplier`` (float64 arrays, multiplier fp32 values) for ``multiply="exact"``:
    exact when ``values`` hold at most 24 significant bits (float16/float32/FP8/bf16 input:
    at most 48 bits, exact in float64); for wider values (``wide``: float64, integers) the
    product rounded to odd into float64, so that one later rounding into a format of p <= 51
    bits gives the exact product's rounding.  Also the checkpoint quantiser's product (its
    ``--scaling tensor``), piece by piece.  Not part of the public API.
    """
    if not wide:
        return values * multiplier
    product = mul(np.ascontiguousarray(values, dtype=np.float64).view(np.uint64),
                  encode(np.broadcast_to(multiplier, np.shape(values)), fp64), fp64, rounding="odd")
    return decode(product, fp64)


def scaled_decode(bits, scales=None, fmt=None, *, scaling="tensor", block=None):
    """The exact values of a scaled tensor: element * scale_inv, in float64.

    Parameters
    ----------
    bits : ScaledTensor or integer array_like
        A :class:`ScaledTensor` (then give nothing else), or element bit patterns.
    scales : array_like
        The scales as :func:`scaled_encode` returns them: fp32 quantisation scales
        (shape () for "tensor", ``bits.shape[:-1] + (1,)`` for "rows", one per tile for
        "blocks") or E8M0 bit patterns (uint8, one per block of the last axis) for "mx".
    fmt : Format or str
        The element format.
    scaling, block
        As for :func:`scaled_encode`.

    Returns
    -------
    ndarray of float64 shaped like ``bits``: each element's value times its unit's
    dequantisation factor -- the fp32 reciprocal of an fp32 scale (Transformer Engine's
    ``scale_inv``, what cuBLAS and ``torch._scaled_mm`` multiply by), or the MX scale X
    (NaN for the E8M0 NaN 0xFF).  The product is exact (at most 24 x 24 bits).  For a
    power-of-two scale this is exactly element / scale.

    Examples
    --------
    >>> import softfloat as sf
    >>> st = sf.scaled_encode([0.3, -1.5, 6e-3], "e5m2", scaling="mx", block=3)
    >>> st.scales.tolist(), sf.scaled_decode(st).tolist()   # X = 2**(0 - 15)
    ([112], [0.3125, -1.5, 0.005859375])
    >>> sf.scaled_decode(st.bits, st.scales, "e5m2", scaling="mx", block=3).tolist()
    [0.3125, -1.5, 0.005859375]
    """
    if isinstance(bits, ScaledTensor):
        if scales is not None or fmt is not None:
            raise TypeError("scaled_decode(tensor) takes a ScaledTensor alone; give either it or "
                            "bits, scales and fmt")
        bits, scales, fmt, scaling, block = bits.bits, bits.scales, bits.format, bits.scaling, bits.block
    elif scales is None or fmt is None:
        raise TypeError("scaled_decode needs bits, scales and fmt (or one ScaledTensor); got "
                        f"scales={_validate.short_repr(scales)}, fmt={_validate.short_repr(fmt)}")
    fmt = _element_format(fmt)
    scaling = _one_of("scaling", scaling, SCALINGS)
    arr = _validate.bit_patterns("bits", bits, fmt.bits)
    block = _block(scaling, block)
    layout = _Layout(arr.shape, scaling, block, "bits")
    if scaling == "mx":
        s = _validate.bit_patterns("scales", scales, 8)
    else:
        s = _fp32_scale_values("scales", scales)
    _validate.same_shape("scales", np.shape(s), "the layout of bits", layout.scales_shape,
                         f"scaling={scaling!r} with block={block} gives one scale per unit")
    values = np.asarray(decode(arr, fmt), dtype=np.float64)
    with np.errstate(all="ignore"):
        out = values * layout.expand(_dequant_factors(s, scaling))
    return out[()] if out.ndim == 0 else out


def fp32_scales(amax, fmt, *, margin=0, amax_epsilon=0.0, power_of_two=False, previous=1.0):
    """fp32 scales ``max / amax`` as Transformer Engine computes them (float32 array).

    ``scale = fp32(fp32(max * 2**-margin) / fp32(max(amax, amax_epsilon)))``; an amax that is
    0, infinite or NaN gives ``previous`` (TE: 1 for current scaling, the old scale for
    delayed scaling); a scale beyond fp32 gives fp32's max; ``power_of_two`` rounds down
    to a power of two.  Scales stay at or above 2**-126.

    >>> fp32_scales([2.0, 0.0, 3.0], "e4m3").tolist()
    [224.0, 1.0, 149.3333282470703]
    """
    fmt = as_format(fmt)
    amax32 = _round_fp32(np.asarray(amax, dtype=np.float64))
    with np.errstate(all="ignore"):
        scaled_max = _round_fp32(np.float64(fmt.max_finite) * 2.0**-margin)
        a = np.where(amax32 < amax_epsilon, _round_fp32(amax_epsilon), amax32)  # NaN stays NaN
        usable = np.isfinite(a) & (a > 0)
        # two fp32 operands: their quotient rounded to float64 and then to fp32 is the
        # quotient rounded once to fp32 (53 >= 2 * 24 + 2: double rounding is innocuous)
        scale = _round_fp32(scaled_max / np.where(usable, a, 1.0))
        scale = np.where(usable, scale, np.asarray(previous, dtype=np.float64))
        scale = np.where(np.isinf(scale), _FP32_MAX, scale)
        if power_of_two:
            _, e = np.frexp(scale)
            scale = np.ldexp(0.5, e)  # frexp's mantissa lies in [0.5, 1): 2**floor(log2 s)
        scale = np.maximum(scale, _MIN_SCALE)
    return np.asarray(scale, dtype=np.float32)


class DelayedScaling:
    """Transformer Engine's delayed scaling for one tensor: an amax history and its scale.

    The recipe of ``transformer_engine.common.recipe.DelayedScaling`` with its defaults
    (amax history of 1024 steps, "max" over the window, margin 0) as its
    ``delayed_scaling.cu`` kernel computes it: each step the tensor is cast with the
    current :attr:`scale`, its amax is recorded, and the next scale is
    ``fp32(max * 2**-margin) / amax_window`` in fp32 -- where amax_window is the largest
    of the last ``amax_history_len`` amaxes ("max") or the latest one ("most_recent") --
    or the previous scale when that amax is 0, infinite or NaN; a scale that overflows
    fp32 becomes fp32's max.  The first step uses scale 1, as TE does.

    Parameters
    ----------
    fmt : Format or str, default "e4m3"
        The element format whose max the scale aims at (E4M3 forward, E5M2 gradients in
        TE's HYBRID recipe).
    amax_history_len : int, default 1024
    amax_compute_algo : {"max", "most_recent"}, default "max"
    margin : int, default 0

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> ds = sf.DelayedScaling("e4m3", amax_history_len=2)
    >>> for x in ([1.0, -2.0], [8.0], [0.5], [0.0]):
    ...     t = sf.scaled_encode(np.array(x), "e4m3", scale=ds.scale)   # cast, then ...
    ...     print(float(t.scales), ds.update(t.amax))                  # ... record amax
    1.0 224.0
    224.0 56.0
    56.0 56.0
    56.0 896.0
    >>> ds.amax_history.tolist(), ds.scale_inv
    ([0.5, 0.0], 0.0011160714784637094)
    """

    def __init__(self, fmt="e4m3", *, amax_history_len=1024, amax_compute_algo="max", margin=0):
        self.format = _element_format(fmt)
        self.amax_history_len = _validate.int_in_range("amax_history_len", amax_history_len, 1, 1 << 30)
        self.amax_compute_algo = _one_of("amax_compute_algo", amax_compute_algo, _AMAX_ALGOS)
        self.margin = _validate.int_in_range("margin", margin, 0, 64)
        self._ring = np.zeros(self.amax_history_len)  # the recorded amaxes, a ring buffer
        self._count = 0
        self._scale = 1.0

    @property
    def scale(self) -> float:
        """The fp32 scale to cast the next step with."""
        return self._scale

    @property
    def scale_inv(self) -> float:
        """The scale's reciprocal rounded to fp32 (TE's ``scale_inv``)."""
        return float(_round_fp32(np.float64(1.0) / self._scale))

    @property
    def amax_history(self) -> np.ndarray:
        """The recorded amaxes (fp32), oldest first, at most ``amax_history_len``."""
        n, size = self._count, self.amax_history_len
        ring = self._ring if n <= size else np.roll(self._ring, -(n % size))
        return ring[:min(n, size)].astype(np.float32)

    def update(self, amax) -> float:
        """Record this step's amax (a number, rounded to fp32) and return the new scale."""
        a = float(_round_fp32(_amax_argument(amax, ())))
        self._ring[self._count % self.amax_history_len] = a
        self._count += 1
        if self.amax_compute_algo == "max":  # fmaxf: NaNs ignored, as TE's reduction does
            window = np.fmax.reduce(self._ring[:min(self._count, self.amax_history_len)], initial=0.0)
        else:
            window = a
        self._scale = float(fp32_scales(window, self.format, margin=self.margin, previous=self._scale))
        return self._scale

    def state_dict(self) -> dict:
        """The recipe and its state, as plain Python values (JSON-ready)."""
        return {"format": self.format.name, "amax_history_len": self.amax_history_len,
                "amax_compute_algo": self.amax_compute_algo, "margin": self.margin,
                "scale": self._scale, "amax_history": self.amax_history.astype(float).tolist()}

    def __repr__(self) -> str:
        return (f"DelayedScaling({self.format.name!r}, amax_history_len={self.amax_history_len}, "
                f"amax_compute_algo={self.amax_compute_algo!r}, margin={self.margin}, "
                f"scale={self._scale!r}, steps={self._count})")


# =====================================================================================
# scales
# =====================================================================================
_NEAREST_EVEN = Policy()


def _round_fp32(v):
    """Values rounded to nearest-even fp32, as float64: softfloat's encode (not the FPU)
    without the per-call checks, for the small arrays of scales and amaxes."""
    a = np.array(v, dtype=np.float64)  # a native, contiguous copy
    flat = a.reshape(-1)
    bits = np.empty(flat.size, dtype=np.uint32)
    with np.errstate(all="ignore"):
        encode_block(flat, fp32, _NEAREST_EVEN, None, False, bits, Workspace(flat.size))
    return bits.view(np.float32).astype(np.float64).reshape(a.shape)


def _mx_scales(amax, special, fmt, rounding):
    """E8M0 bit patterns of X per block (uint8)."""
    amax = np.asarray(amax, dtype=np.float64)
    with np.errstate(all="ignore"):
        if rounding == "floor":
            # OCP: X = 2**(floor(log2 amax) - emax_elem); frexp's mantissa is in [0.5, 1)
            _, e = np.frexp(np.where(amax > 0, amax, 1.0))
            unbiased = np.where(amax > 0, e.astype(np.int64) - 1 - fmt.emax, -_E8M0_BIAS)
            unbiased = np.maximum(unbiased, -_E8M0_BIAS)
            nan = special | np.isnan(amax) | np.isinf(amax) | (unbiased > _E8M0_BIAS)
            return np.where(nan, _E8M0_NAN, unbiased + _E8M0_BIAS).astype(np.uint8)
        # TE's float_to_e8m0(amax * max_norm_rcp): the fp32 product rounded up to a power
        # of two, saturating at 2**127; fp32 bits = sign | exponent (8) | mantissa (23)
        ratio = _round_fp32(_round_fp32(amax) * _round_fp32(1.0 / fmt.max_finite))
        finite = np.where(np.isfinite(ratio), ratio, 0.0)
        bits = finite.astype(np.float32).view(np.uint32)
        exponent = (bits >> np.uint32(23)).astype(np.int64)
        mantissa = bits & np.uint32(0x7FFFFF)
        up = (mantissa > 0) & (exponent != 0xFE) & ~((exponent == 0) & (mantissa <= 0x400000))
        exponent = exponent + up
        exponent = np.where(np.isinf(ratio), 0xFE, exponent)
        exponent = np.where(np.isnan(ratio), _E8M0_NAN, exponent)
        return exponent.astype(np.uint8)


def _quant_factors(scales, scaling):
    """What x is multiplied by: the fp32 scale, or 1 / X for MX (exact powers of two)."""
    if scaling == "mx":
        e = np.asarray(scales).astype(np.int64)
        return np.where(e == _E8M0_NAN, np.nan, np.ldexp(1.0, _E8M0_BIAS - np.minimum(e, 254)))
    return np.asarray(scales, dtype=np.float64)


def _dequant_factors(scales, scaling):
    """What elements are multiplied by: X for MX, else the fp32 reciprocal of the scale."""
    if scaling == "mx":
        e = np.asarray(scales).astype(np.int64)
        return np.where(e == _E8M0_NAN, np.nan, np.ldexp(1.0, np.minimum(e, 254) - _E8M0_BIAS))
    with np.errstate(all="ignore"):
        return np.asarray(_round_fp32(1.0 / np.asarray(scales, dtype=np.float64)))  # innocuous, as above


# =====================================================================================
# layout: which elements share a scale
# =====================================================================================
class _Layout:
    """The scaled units of an array of ``shape``: the tensor, or tiles (br, bc) over the
    array viewed as (..., R, C) -- rows and 1-D blocks view the last axis as one row."""

    def __init__(self, shape, scaling, block, argname):
        self.shape = tuple(shape)
        self.tile = None
        if scaling == "tensor":
            self.scales_shape = ()
            return
        ndim = len(self.shape)
        two_d = scaling == "blocks" and len(block) == 2
        need = 2 if two_d else 1
        if ndim < need:
            what = f"block={block}" if scaling == "blocks" else f"scaling={scaling!r}"
            raise ValueError(f"{what} needs {argname} with at least {need} "
                             f"{'axes' if need > 1 else 'axis'}; got shape {self.shape}")
        if two_d:
            self.view = self.shape
            self.tile = block
        else:
            self.view = self.shape[:-1] + (1, self.shape[-1])
            length = max(self.shape[-1], 1) if scaling == "rows" else block[-1]
            self.tile = (1, length)
        r, c = self.view[-2:]
        br, bc = self.tile
        self.counts = (-(-r // br), -(-c // bc))
        if two_d:
            self.scales_shape = self.shape[:-2] + self.counts
        else:
            self.scales_shape = self.shape[:-1] + (self.counts[1],)

    def _tiles(self, a, fill):
        """``a`` (shaped like the array) as (..., nR, br, nC, bc), padded with ``fill``."""
        a = a.reshape(self.view)
        (br, bc), (nr, nc) = self.tile, self.counts
        r, c = self.view[-2:]
        if nr * br != r or nc * bc != c:
            padded = np.full(self.view[:-2] + (nr * br, nc * bc), fill, dtype=a.dtype)
            padded[..., :r, :c] = a
            a = padded
        return a.reshape(self.view[:-2] + (nr, br, nc, bc))

    def amax(self, values):
        """Largest magnitude per unit, NaNs ignored (0 for an empty or all-NaN unit), and
        per unit whether it holds a NaN."""
        with np.errstate(invalid="ignore"):
            mags = np.abs(values)
        tiles = mags.reshape(-1) if self.tile is None else self._tiles(mags, 0.0)
        axes = None if self.tile is None else (-3, -1)
        peak = np.maximum.reduce(tiles, axis=axes, initial=0.0)  # NaN propagates
        has_nan = np.isnan(peak)
        if has_nan.any():  # rare: again, ignoring the NaNs
            peak = np.fmax.reduce(tiles, axis=axes, initial=0.0)
        return np.asarray(peak).reshape(self.scales_shape), np.asarray(has_nan).reshape(self.scales_shape)

    def expand(self, per_unit):
        """A per-unit array spread over the elements (broadcastable to the array)."""
        per_unit = np.asarray(per_unit)
        if self.tile is None:
            return per_unit
        (br, bc), (nr, nc) = self.tile, self.counts
        grid = per_unit.reshape(self.view[:-2] + (nr, nc))
        full = np.repeat(np.repeat(grid, br, axis=-2), bc, axis=-1)
        r, c = self.view[-2:]
        return full[..., :r, :c].reshape(self.shape)


# =====================================================================================
# argument checks
# =====================================================================================
def _one_of(name, value, choices):
    if isinstance(value, str) and value in choices:
        return value
    listed = ", ".join(repr(c) for c in choices)
    if isinstance(value, str):
        raise ValueError(f"{name}={value!r} is not valid; choose one of {listed}")
    raise TypeError(f"{name} must be one of {listed}; got {_validate.describe(value)}")


def _element_format(fmt):
    fmt = as_format(fmt)
    if not fp32.holds(fmt):
        raise ValueError(
            f"fmt={fmt.name} is too wide for scaled quantisation: its elements are scaled by "
            "fp32 scales and products, so every value of fmt must be an fp32 value; use a "
            "narrower element format such as fp8_e4m3, fp8_e5m2, fp6_e3m2, fp4_e2m1, bf16 or fp16")
    return fmt


def _block(scaling, block):
    """The tile shape as a tuple of positive ints (None for tensor and rows)."""
    if scaling in ("tensor", "rows"):
        if block is not None:
            raise ValueError(f"block applies to scaling='blocks' and 'mx', not scaling={scaling!r}; "
                             f"drop block={block!r}")
        return None
    if block is None:
        return (1, 128) if scaling == "blocks" else (_MX_BLOCK,)
    items = (block,) if isinstance(block, numbers.Integral) and not isinstance(block, bool) else block
    sizes = 2 if scaling == "blocks" else 1
    ok = isinstance(items, tuple) and 1 <= len(items) <= sizes and all(
        isinstance(n, numbers.Integral) and not isinstance(n, (bool, np.bool_)) and n >= 1 for n in items)
    if not ok:
        want = ("a positive int k or a tuple (rows, columns) of positive ints such as (1, 128)"
                if scaling == "blocks" else "a positive int (the block length along the last axis, 32 in OCP MX)")
        raise ValueError(f"block for scaling={scaling!r} must be {want}; got {_validate.short_repr(block)}")
    return tuple(int(n) for n in items)


def _epsilon(value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not (
            np.isfinite(value) and value >= 0):
        raise ValueError(f"amax_epsilon must be a finite number >= 0; got {_validate.describe(value)}")
    return float(value)


def _check_recipe_options(scaling, amax, scale, margin, epsilon, scale_rounding):
    if scale is not None and amax is not None:
        raise ValueError("give amax (scales derived from it) or scale (used as it is), not both")
    if scaling == "mx":
        if scale is not None:
            raise ValueError("scale applies to fp32 scales; MX scales are derived from amax as E8M0 "
                             "powers of two (pass amax= to override the measured one)")
        if margin or epsilon:
            raise ValueError("margin and amax_epsilon apply to fp32 scales, not to scaling='mx'")
        return
    if scale_rounding == "ceil":
        raise ValueError(f"scale_rounding='ceil' is MX's variant (scaling='mx'); for fp32 scales "
                         f"(scaling={scaling!r}) round down with scale_rounding='floor', which "
                         "keeps amax * scale within the format's range")
    if scale is not None and scale_rounding is not None:
        raise ValueError("scale_rounding applies to scales computed from amax; pass scale already rounded")


def _amax_argument(amax, shape):
    try:
        a = np.asarray(amax, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"amax must be a number or an array of numbers; got {_validate.describe(amax)}") from None
    if a.dtype.kind not in "fiu" or np.asarray(amax).dtype.kind == "b":
        raise TypeError(f"amax must be a number or an array of numbers; got {_validate.describe(amax)}")
    if np.any(a < 0):
        raise ValueError(f"amax holds a negative value ({float(a[a < 0].flat[0])}); an amax is a magnitude")
    try:
        return np.broadcast_to(a, shape)
    except ValueError:
        raise ValueError(f"amax has shape {a.shape} but the scales have shape {tuple(shape)}; give one "
                         "number or one amax per scale") from None


def _fp32_scale_values(name, scales):
    try:
        s = np.asarray(scales, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be fp32 scales (numbers); got {_validate.describe(scales)}") from None
    if np.asarray(scales).dtype.kind not in "fiu":
        raise TypeError(f"{name} must be fp32 scales (numbers); got {_validate.describe(scales)}")
    bad = ~((s >= _MIN_SCALE) & (s <= _FP32_MAX))
    if np.any(bad):
        raise ValueError(f"{name} must lie in [2**-126, fp32 max] (positive, finite); got "
                         f"{float(s[bad].flat[0])!r}")
    return _round_fp32(s).astype(np.float32)


def _scale_argument(scale, shape):
    s = _fp32_scale_values("scale", scale)
    try:
        return np.array(np.broadcast_to(s, shape))
    except ValueError:
        raise ValueError(f"scale has shape {s.shape} but the scales have shape {tuple(shape)}; give one "
                         "number or one scale per unit") from None


def _already_fp32(product, factors):
    """True when every product of fp32 values by power-of-two factors is itself an fp32
    value: zero, infinite, NaN or within [2**-126, fp32 max] (no rounding to do)."""
    f = np.asarray(factors)
    finite = f[np.isfinite(f)]
    if not np.all(np.frexp(finite)[0] == 0.5):
        return False
    mags = np.abs(product)
    tiny = (mags < fp32.min_normal) & (mags != 0)
    return not tiny.any() and not (np.isfinite(mags) & (mags > _FP32_MAX)).any()


def _source_values(arr, multiply, want_flags):
    """x as float64: its fp32 rounding for multiply="fp32"; whether it is wider than fp32
    (the exact product then needs more than float64); flags of that rounding or None."""
    source = native_format(arr.dtype)
    if source is not None and fp32.holds(source):  # float16, float32
        return arr.astype(np.float64), False, None
    if multiply == "fp32":
        values, flags = quantize(arr, fp32, return_flags=True)
        return np.asarray(values, dtype=np.float64), False, flags if want_flags else None
    if arr.dtype.kind == "f":
        return arr.astype(np.float64), True, None
    # integers: round to odd into float64 (exact up to 2**53; odd keeps one rounding later)
    return np.asarray(quantize(arr, fp64, rounding="odd"), dtype=np.float64), True, None
