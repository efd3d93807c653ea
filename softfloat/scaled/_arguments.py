"""The arguments of the scaled recipes: the choices they take, checked with errors that name
the fix."""

from __future__ import annotations

import numbers

import numpy as np

from .. import _validate
from ..formats import as_format, fp32
from ._fp32 import _FP32_MAX, _MIN_SCALE, _round_fp32

#: the scaling granularities scaled_encode knows
SCALINGS = ("tensor", "rows", "blocks", "mx")
_MULTIPLY = ("fp32", "exact")
_SCALE_ROUNDING = ("floor", "ceil")
_AMAX_ALGOS = ("max", "most_recent")
_MX_BLOCK = 32


def _element_format(fmt):
    fmt = as_format(fmt)
    if fmt in _HELD:  # (checked before: a training step's casts ask again and again)
        return fmt
    if not fp32.holds(fmt):
        raise ValueError(
            f"fmt={fmt.name} is too wide for scaled quantisation: its elements are scaled by "
            "fp32 scales and products, so every value of fmt must be an fp32 value; use a "
            "narrower element format such as fp8_e4m3, fp8_e5m2, fp6_e3m2, fp4_e2m1, bf16 or fp16")
    _HELD.add(fmt)
    return fmt


#: element formats found to be fp32-held (a format is immutable: the answer stays)
_HELD: set = set()


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


def _amax_argument(amax, shape, expected=None):
    """``amax`` as float64 magnitudes broadcast to the scales' ``shape``; ``expected``
    says in words what shape the caller wants (default: one number or one per scale)."""
    try:
        a = np.asarray(amax, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"amax must be a number or an array of numbers; got {_validate.describe(amax)}") from None
    if np.asarray(amax).dtype.kind not in "fiu":  # (None would read as NaN, a bool as 0 or 1)
        raise TypeError(f"amax must be a number or an array of numbers; got {_validate.describe(amax)}")
    if np.any(a < 0):
        raise ValueError(f"amax holds a negative value ({float(a[a < 0].flat[0])}); an amax is a magnitude")
    if expected is None:
        expected = f"one number or one amax per scale (the scales have shape {tuple(shape)})"
    return _validate.broadcast_to("amax", a, shape, expected)


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
    if type(scale) is float and shape == () and _MIN_SCALE <= scale <= _FP32_MAX:  # a DelayedScaling's scale
        return np.array(np.float32(scale))  # (a normal fp32 range: numpy's cast is the rounding)
    s = _fp32_scale_values("scale", scale)
    return np.array(_validate.broadcast_to(
        "scale", s, shape, f"one number or one scale per unit (the scales have shape {tuple(shape)})"))


def scaling_arguments(fmt, scaling, block=None, *, scale=None, amax=None, margin=0, amax_epsilon=0.0,
                      scale_rounding=None):
    """The scaling arguments of :func:`softfloat.scaled_encode` checked as it checks them
    (the same TypeError/ValueError messages), for front ends that quantise on another
    array type (softfloat.torch): ``(fmt, scaling, block, margin, amax_epsilon,
    scale_rounding)``, normalised (a Format, the block as a tuple or None, floats and
    ints).  The shape of the data is the caller's to check against the block.

    >>> scaling_arguments("e4m3", "blocks")[1:3]
    ('blocks', (1, 128))
    """
    fmt = _element_format(fmt)
    scaling = _validate.one_of("scaling", scaling, SCALINGS)
    margin = _validate.int_in_range("margin", margin, 0, 64)
    epsilon = _epsilon(amax_epsilon)
    if scale_rounding is not None:
        scale_rounding = _validate.one_of("scale_rounding", scale_rounding, _SCALE_ROUNDING)
    block = _block(scaling, block)
    _check_recipe_options(scaling, amax, scale, margin, epsilon, scale_rounding)
    return fmt, scaling, block, margin, epsilon, scale_rounding

