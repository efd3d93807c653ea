"""around=target: source values at and near the points of a target format where a
conversion breaks -- its values, the ties between them, the overflow threshold and the
subnormal range."""

from __future__ import annotations

import functools
from fractions import Fraction

from hypothesis import strategies as st

from ..codec import encode
from ..formats import Format
from ._magnitudes import _draw_magnitude


# A point of the target is ("value", a): the value of magnitude pattern a, or ("tie", a): the
# exact midpoint between patterns a and a + 1.  Each comes with the region of source values
# that round near it:
#
#        v(a-1)     tie(a-1)      v(a)       tie(a)      v(a+1)
#   -------|-----------:----------|-----------:-----------|------->
#                      [  value a region     ]
#                                 [       tie a region    ]
#
# ("tie", max) is the overflow threshold, ("tie", 0) half the smallest subnormal.
def _exact_magnitude(fmt: Format, mag: int) -> Fraction:
    """The value of a magnitude pattern with an unbounded exponent: ``max_finite_bits + 1``
    gives the value one step past the largest finite one (the overflow threshold is the
    midpoint between the two)."""
    e, f = divmod(mag, 1 << fmt.mantissa_bits)
    if e == 0:
        return f * Fraction(2) ** (fmt.emin - fmt.mantissa_bits)
    return ((1 << fmt.mantissa_bits) | f) * Fraction(2) ** (e - fmt.bias - fmt.mantissa_bits)


def _midpoint(fmt: Format, mag: int) -> Fraction:
    """The exact tie between magnitude patterns ``mag`` and ``mag + 1``."""
    return (_exact_magnitude(fmt, mag) + _exact_magnitude(fmt, mag + 1)) / 2


def _point_and_region(target: Format, point: str, a: int) -> tuple[Fraction, Fraction, Fraction]:
    """The exact point ("tie" or "value" at magnitude a) and the ends of its region."""
    if point == "tie":
        return _midpoint(target, a), _exact_magnitude(target, a), _exact_magnitude(target, a + 1)
    low = _midpoint(target, a - 1) if a > 0 else Fraction(0)
    return _exact_magnitude(target, a), low, _midpoint(target, a)


@functools.lru_cache(maxsize=4096)
def _source_neighbours(fmt: Format, q: Fraction) -> tuple[int, int]:
    """Magnitude patterns of ``fmt`` just at or below and at or above q >= 0 (saturating)."""
    down = int(encode(q, fmt, "downward", saturate=True))
    up = int(encode(q, fmt, "upward", saturate=True))
    return down, up


def _draw_near(draw, plan, negative: bool, point: str, a: int, where: str) -> int:
    """A source value at a target point, one step beside it, or inside its region.

    Inside the region, values are drawn as a distance from one of its ends, so that they
    shrink toward the ends (hypothesis draws small distances more often, too).
    """
    fmt, target = plan.fmt, plan.target
    q, low, high = _point_and_region(target, point, a)
    if where in ("at", "below", "above"):
        down, up = _source_neighbours(fmt, q)
        mag = {"at": down, "below": down - 1, "above": up + 1}[where]
        if where == "at" and down != up:
            mag = draw(st.sampled_from((down, up)))
    else:
        first, last = _source_neighbours(fmt, low)[1], _source_neighbours(fmt, high)[0]
        # the ends themselves are other points' "at" draws: start one step inside
        distance = draw(st.integers(min(1, max(last - first - 1, 0)), max(last - first - 1, 0)))
        mag = first + distance if where == "from_low" else last - distance
    return plan.order.signed(min(max(mag, 0), fmt.max_finite_bits), negative)


#: where to look around a point: at it, one step beside it, or inside its region
_WHERES = ("at", "at", "below", "above", "from_low", "from_high")
#: at the overflow threshold T and the largest finite value max, the values inside
#: (max, T) come early: they must round down to max, not overflow
_OVERFLOW_WHERES = {"tie": ("at", "below", "from_low", "above", "from_high", "below"),
                    "value": ("at", "above", "from_high", "below", "from_low", "above")}


def _draw_around(draw, plan, negative, kind):
    """A point of the target (a value or a tie), then a source value at or near it.

    ``around_point`` takes any target magnitude, ``around_overflow`` the largest finite
    one, ``around_underflow`` a subnormal one (0 gives half the smallest subnormal).  All
    three make the same choices in the same order, so a failing example can move from one
    to another (and shrink toward the tie above 1.0) without losing its shape.
    """
    t = plan.target
    a = _draw_magnitude(draw, t)
    if kind == "around_overflow":
        a = t.max_finite_bits
    elif kind == "around_underflow":
        a &= t.mantissa_mask
    point = draw(st.sampled_from(("tie", "value")))
    wheres = _OVERFLOW_WHERES[point] if kind == "around_overflow" else _WHERES
    return _draw_near(draw, plan, negative, point, a, draw(st.sampled_from(wheres)))


def _draw_around_point(draw, plan, negative, magnitude):
    return _draw_around(draw, plan, negative, "around_point")


def _draw_around_overflow(draw, plan, negative, magnitude):
    return _draw_around(draw, plan, negative, "around_overflow")


def _draw_around_underflow(draw, plan, negative, magnitude):
    return _draw_around(draw, plan, negative, "around_underflow")
