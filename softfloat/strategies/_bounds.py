"""The values() arguments: the keywords as given, the bounds as keys (each must be a value of
the format) and what the options allow or leave out, inferred and checked."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from .._validate import describe as _describe
from .._validate import short_repr as _short_repr
from ..codec import decode, encode
from ._order import _KeySet


@dataclass(frozen=True)
class _Request:
    """The values() keywords as the caller gave them (checked by ``_plan``)."""

    min_value: object = None
    max_value: object = None
    allow_nan: object = None
    allow_infinity: object = None
    allow_subnormal: object = None
    allow_negative_zero: object = True
    exclude_min: object = False
    exclude_max: object = False
    around: object = None


def _bound_key(name, value, fmt, order):
    """The key of a bound, which must be a value of ``fmt``; None for no bound."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, Decimal)):
        raise TypeError(f"{name} must be a real number or None; got {_describe(value)}")
    if isinstance(value, np.floating):
        value = float(value)  # exact for float16/32/64
    elif isinstance(value, np.integer):
        value = int(value)
    if value != value:
        raise ValueError(f"{name}={value!r} is NaN; pass a number or None (NaNs are governed by allow_nan)")
    if value in (float("inf"), float("-inf")):
        if not fmt.has_infinity:
            largest = fmt.max_finite if value > 0 else -fmt.max_finite
            raise ValueError(
                f"{name}={value!r} is not representable in {fmt.name}, which has no infinity; "
                f"use {name}={largest!r} or None"
            )
        return order.signed(order.inf_mag, value < 0)
    # encode's flags decide, with work bounded whatever the bound's size or exponent:
    # exact (no inexact flag) means representable; overflow (either way) means beyond
    # the largest finite value
    down, down_flags = encode(value, fmt, "downward", saturate=True, return_flags=True)
    up, up_flags = encode(value, fmt, "upward", saturate=True, return_flags=True)
    if not down_flags.inexact:
        return order.key(int(down))
    shown = _short_repr(value)
    if down_flags.overflow or up_flags.overflow:
        largest = fmt.max_finite if value > 0 else -fmt.max_finite
        raise ValueError(
            f"{name}={shown} is not representable in {fmt.name}: it lies beyond the largest "
            f"finite value {largest!r}; use {name}={largest!r}"
            + (" or an infinity" if fmt.has_infinity else "") + " instead"
        )
    raise ValueError(
        f"{name}={shown} is not representable in {fmt.name}; the nearest values are "
        f"{float(decode(down, fmt))!r} and {float(decode(up, fmt))!r} (use one of them)"
    )


def _check_exclusions(min_value, max_value, exclude_min, exclude_max):
    for flag, name, bound in (("exclude_min", "min_value", min_value), ("exclude_max", "max_value", max_value)):
        if (exclude_min if flag == "exclude_min" else exclude_max) and bound is None:
            raise ValueError(f"{flag}=True needs a {name} to exclude; pass {name} or drop {flag}")


def _check_order(min_value, max_value, lo, hi):
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(
            f"min_value={_short_repr(min_value)} is greater than max_value={_short_repr(max_value)}; swap them"
            + (" (-0.0 sorts below 0.0)" if min_value == max_value else "")
        )


def _infer_nan(fmt, allow_nan, min_value, max_value):
    bounded = min_value is not None or max_value is not None
    if allow_nan is None:
        return fmt.has_nan and not bounded
    if allow_nan and not fmt.has_nan:
        raise ValueError(f"allow_nan=True, but {fmt.name} has no NaN; drop allow_nan or pick a format with NaN")
    if allow_nan and bounded:
        raise ValueError(
            "allow_nan=True cannot be combined with min_value or max_value: NaN lies in no "
            "range; drop allow_nan or the bounds"
        )
    return allow_nan


def _infer_infinity(fmt, allow_infinity, min_value, max_value):
    infinite_bound = any(b is not None and b in (float("inf"), float("-inf")) for b in (min_value, max_value))
    if allow_infinity is None:
        return fmt.has_infinity and (min_value is None or max_value is None or infinite_bound)
    if allow_infinity and not fmt.has_infinity:
        raise ValueError(
            f"allow_infinity=True, but {fmt.name} has no infinity; drop allow_infinity or pick an IEEE format"
        )
    if allow_infinity and min_value is not None and max_value is not None and not infinite_bound:
        raise ValueError(
            f"allow_infinity=True, but min_value={_short_repr(min_value)} and max_value={_short_repr(max_value)} "
            "leave out both infinities; drop allow_infinity or a bound"
        )
    if not allow_infinity and infinite_bound:
        raise ValueError(
            "allow_infinity=False contradicts an infinite bound; use a finite bound or drop allow_infinity"
        )
    return allow_infinity


def _allowed_keys(order, lo, hi, exclude_min, exclude_max, allow_infinity, allow_negative_zero) -> _KeySet:
    top = order.inf_mag if order.inf_mag is not None and allow_infinity else order.max_mag
    first = order.signed(top, True) if lo is None else lo + exclude_min
    last = top if hi is None else hi - exclude_max
    keys = _KeySet([(first, last)])
    if not allow_infinity and order.inf_mag is not None:
        keys = keys.without(order.inf_mag, order.inf_mag)
        keys = keys.without(order.signed(order.inf_mag, True), order.signed(order.inf_mag, True))
    if not allow_negative_zero and order.z:
        keys = keys.without(-1, -1)
    return keys


def _apply_subnormal(fmt, order, keys, allow_subnormal, min_value, max_value) -> _KeySet:
    largest_sub = fmt.mantissa_mask  # magnitude pattern 0.00..0.11..1
    ranges = ((1, largest_sub), (order.signed(largest_sub, True), order.signed(1, True)))
    has_subnormal = any(keys.meets(a, b) for a, b in ranges)
    if allow_subnormal and not has_subnormal:
        raise ValueError(
            f"allow_subnormal=True, but no subnormal of {fmt.name} lies between min_value={_short_repr(min_value)} "
            f"and max_value={_short_repr(max_value)}; drop allow_subnormal or widen the bounds"
        )
    if allow_subnormal is False:
        for a, b in ranges:
            keys = keys.without(a, b)
    return keys


def _conditions(min_value, max_value, exclude_min, exclude_max, allow_negative_zero, allow_subnormal):
    parts = [f"min_value={_short_repr(min_value)}", f"max_value={_short_repr(max_value)}"]
    parts += [f"{name}={flag}" for name, flag in (
        ("exclude_min", exclude_min), ("exclude_max", exclude_max),
        ("allow_negative_zero", allow_negative_zero), ("allow_subnormal", allow_subnormal)) if flag is not None]
    return ", ".join(parts)


def _values_keywords(mapping: Mapping) -> dict:
    known = ("min_value", "max_value", "allow_nan", "allow_infinity", "allow_subnormal",
             "allow_negative_zero", "exclude_min", "exclude_max", "around")
    unknown = [k for k in mapping if k not in known]
    if unknown:
        raise TypeError(
            f"elements has unknown key {unknown[0]!r}; a mapping for elements takes values() "
            f"keywords: {', '.join(known)}"
        )
    return dict(mapping)


def _optional_boolean(name: str, value):
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True, False or None (infer from the bounds); got {_describe(value)}")
