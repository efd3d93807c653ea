"""scaled_encode and scaled_decode: quantise into elements that share scales, and back."""

from __future__ import annotations

import functools

import numpy as np

from .. import _validate
from .._options import resolve_attributes
from ..attributes import DEFAULT_ATTRIBUTES
from ..codec import decode, encode
from ._arguments import _MULTIPLY, _amax_argument, _fp32_scale_values, _scale_argument, scaling_arguments
from ._layout import _Layout
from ._products import _already_fp32, _source_values, exact_products, fp32_products
from ._scales import _dequant_factors, _mx_scales, _quant_factors, fp32_scales
from ._tensor import ScaledTensor


#: the largest float64, where satfinite sends infinities before the element rounding
_FLOAT64_MAX = float(np.finfo(np.float64).max)


@functools.lru_cache(maxsize=16)
def _nearest_fp32(platform):
    """The fp32 steps' rounding (nearest even) on ``platform``: one object per platform,
    which the fast paths' plans recognise by identity call after call."""
    return DEFAULT_ATTRIBUTES.replace(platform=platform)


def scaled_encode(x, fmt, rounding=None, *, scaling="tensor", block=None, amax=None,
                  scale=None, margin=0, amax_epsilon=0.0, scale_rounding=None,
                  multiply="fp32", saturate=None, subnormals=None, tininess=None, attributes=None,
                  rng=None, return_flags=False):
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
        overflow and inexact.  False: overflows follow :func:`encode`.  With
        ``attributes`` given and no ``saturate``, its ``saturate`` field decides.
    subnormals, tininess : optional
        As for :func:`encode` (defaults True and the platform's tininess), for the
        element rounding.
    attributes : RoundingAttributes, optional
        The element rounding's attributes as one value, as for :func:`encode`; the
        keywords are shortcuts for its fields, and a keyword that is given wins over
        ``attributes``.  Its platform's tininess also applies to the fp32 conversion
        and product of ``multiply="fp32"`` (always rounded to nearest even).
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
    fmt, scaling, block, margin, epsilon, scale_rounding = scaling_arguments(
        fmt, scaling, block, scale=scale, amax=amax, margin=margin, amax_epsilon=amax_epsilon,
        scale_rounding=scale_rounding)
    multiply = _validate.one_of("multiply", multiply, _MULTIPLY)
    if saturate is None and attributes is None:
        saturate = True  # satfinite, as the FP8 recipes cast
    attrs, _ = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                  saturate=saturate, rng=rng)  # checked before any work
    saturate = attrs.saturate
    return_flags = _validate.boolean("return_flags", return_flags)
    arr = _validate.numeric_array("x", x)
    layout = _Layout(arr.shape, scaling, block, "x")

    nearest_fp32 = _nearest_fp32(attrs.platform)  # the fp32 steps' rounding
    values, wide, first_flags = _source_values(arr, multiply, return_flags, nearest_fp32)
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
                scaled, product_flags = fp32_products(product, nearest_fp32, return_flags)
        else:
            scaled, product_flags = exact_products(values, multiplier, wide), None
        infinite = np.isinf(scaled) if saturate else None
        if saturate and infinite.any():  # satfinite: infinities are out of range too
            scaled = np.where(infinite, np.copysign(_FLOAT64_MAX, scaled), scaled)
    result = encode(scaled, fmt, attributes=attrs, rng=rng, return_flags=return_flags)
    bits, flags = result if return_flags else (result, None)
    tensor = ScaledTensor(bits, scales, fmt, scaling, block, measured)
    if not return_flags:
        return tensor
    for extra in (first_flags, product_flags):
        if extra is not None:
            flags = flags | extra
    return tensor, flags.squeezed()


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
    fmt, scaling, block = scaling_arguments(fmt, scaling, block)[:3]
    arr = _validate.bit_patterns("bits", bits, fmt.bits)
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
