"""The plan of values(): its arguments checked and inferred, and what the draws need worked
out once when the strategy is built -- the allowed keys and the weighting of tricky inputs."""

from __future__ import annotations

from dataclasses import dataclass

from .._validate import boolean as _boolean
from ..codec import decode
from ..formats import Format, as_format
from ._bounds import (_allowed_keys, _apply_subnormal, _bound_key, _check_exclusions, _check_order,
                      _conditions, _infer_infinity, _infer_nan, _optional_boolean, _Request)
from ._order import _dedupe, _KeySet, _Order, _power_of_two_mag


@dataclass(frozen=True)
class _Plan:
    """What values() draws from, worked out once when the strategy is built."""

    fmt: Format
    order: _Order
    keys: _KeySet  # the allowed non-NaN values
    allow_nan: bool
    simple: tuple[int, ...]  # 0, 1, -1, ... that are allowed
    boundary: tuple[int, ...]  # class boundaries and the ends of the allowed range
    infinities: tuple[int, ...]
    target: Format | None  # around=: the format conversions go into
    groups: tuple[tuple[str, ...], ...]  # draw kinds, grouped; see _PLAIN_KINDS
    fields: tuple[int, int, int]  # exponent fields to draw from: lowest, highest, simplest

    def value_of(self, pattern: int) -> float:
        return float(decode(pattern, self.fmt))


#: What a draw is made of, simplest first (hypothesis shrinks a failing example toward
#: the first kind that still fails).  A kind appears more than once to weight it, but
#: each list has at most 11 entries: hypothesis' shrinker tries every lower entry of a
#: choice of at most 11 options, with fresh draws behind it, which lets a failing
#: example move from, say, a boundary value to a plain exponent-and-fraction draw.
_PLAIN_KINDS = ("structured", "simple", "boundary", "power_of_two", "subnormal", "structured", "boundary",
                "uniform", "infinity", "nan", "structured")
_AROUND_KINDS = ("around_point", "around_overflow", "around_underflow", "around_overflow", "around_underflow",
                 "around_point", "around_overflow", "around_underflow", "around_point", "around_overflow",
                 "around_point")
assert len(_PLAIN_KINDS) <= 11 and len(_AROUND_KINDS) <= 11


def _plan(fmt, request: _Request = _Request()) -> _Plan:
    """Check and infer the values() arguments; precompute what the draws need."""
    order = _Order(fmt)
    min_value, max_value = request.min_value, request.max_value
    allow_negative_zero = _boolean("allow_negative_zero", request.allow_negative_zero)
    exclude_min = _boolean("exclude_min", request.exclude_min)
    exclude_max = _boolean("exclude_max", request.exclude_max)
    allow_nan, allow_infinity, allow_subnormal = (
        _optional_boolean(name, getattr(request, name)) for name in ("allow_nan", "allow_infinity", "allow_subnormal"))
    target = None if request.around is None else as_format(request.around, "around")
    lo = _bound_key("min_value", min_value, fmt, order)
    hi = _bound_key("max_value", max_value, fmt, order)
    _check_exclusions(min_value, max_value, exclude_min, exclude_max)
    _check_order(min_value, max_value, lo, hi)
    allow_nan = _infer_nan(fmt, allow_nan, min_value, max_value)
    allow_infinity = _infer_infinity(fmt, allow_infinity, min_value, max_value)
    keys = _allowed_keys(order, lo, hi, exclude_min, exclude_max, allow_infinity, allow_negative_zero)
    keys = _apply_subnormal(fmt, order, keys, allow_subnormal, min_value, max_value)
    if keys.size == 0 and not allow_nan:
        raise ValueError(
            f"values({fmt.name}, ...) can draw nothing: no value of {fmt.name} satisfies "
            f"{_conditions(min_value, max_value, exclude_min, exclude_max, allow_negative_zero, allow_subnormal)}; "
            "widen the bounds or drop an exclusion"
        )
    return _build_plan(fmt, order, keys, allow_nan, target)


def _build_plan(fmt, order, keys, allow_nan, target) -> _Plan:
    infinities = () if order.inf_mag is None else tuple(
        k for k in (order.signed(order.inf_mag, False), order.signed(order.inf_mag, True)) if k in keys)
    simple = tuple(k for k in _simple_keys(fmt, order) if k in keys)
    boundary = _dedupe([k for k in _boundary_keys(fmt, order) if k in keys] + _range_ends(keys))
    present = {"simple": bool(simple), "infinity": bool(infinities), "nan": allow_nan}
    if keys.size == 0:  # NaN only
        groups = (("nan",),)
    else:
        plain = tuple(kind for kind in _PLAIN_KINDS if present.get(kind, True))
        # with around=, two draws in three aim at the target's edges
        groups = (plain,) if target is None else (plain, _AROUND_KINDS, _AROUND_KINDS)
    return _Plan(fmt, order, keys, allow_nan, simple, boundary, infinities, target, groups,
                 _field_range(fmt, order, keys))


def _field_range(fmt, order, keys) -> tuple[int, int, int]:
    """Exponent fields that hold allowed values, and the one nearest the bias (1.0)."""
    if keys.size == 0:
        return 0, 0, 0
    low, high = keys.magnitudes(order)
    top = fmt.max_finite_bits  # an infinity counts as the largest finite value here
    first, last = min(low, top) >> fmt.mantissa_bits, min(high, top) >> fmt.mantissa_bits
    return first, last, min(max(fmt.bias, first), last)


def _simple_keys(fmt, order):
    """0, 1, -1, -0, 2, 0.5, -2, -0.5: what a failing example should shrink to."""
    keys = [0]
    for e, negative in ((0, False), (0, True), (None, True), (1, False), (-1, False), (1, True), (-1, True)):
        mag = 0 if e is None else _power_of_two_mag(fmt, e)
        if mag is not None:
            keys.append(order.signed(mag, negative))
    return _dedupe(keys)


def _boundary_keys(fmt, order):
    """Class boundaries: zeros, smallest/largest subnormal, smallest normal, largest finite, 1 +- ulp."""
    one = _power_of_two_mag(fmt, 0)
    mags = [0, 1, fmt.mantissa_mask, fmt.mantissa_mask + 1, fmt.max_finite_bits, fmt.max_finite_bits - 1]
    if one is not None:
        mags += [one + 1, one - 1]
    keys = []
    for mag in mags:
        keys += [order.signed(mag, False), order.signed(mag, True)]
    return keys


def _range_ends(keys: _KeySet):
    ends = []
    for a, b in keys.intervals:
        ends += [a, b, a + 1, b - 1]
    return [k for k in ends if k in keys]

