"""The draws of values(): one bit pattern allowed by a plan, of a kind picked by its weights."""

from __future__ import annotations

from hypothesis import strategies as st

from ._around import _draw_around_overflow, _draw_around_point, _draw_around_underflow
from ._magnitudes import _draw_magnitude, _draw_nan
from ._plan import _Plan


@st.composite
def _patterns(draw, plan: _Plan) -> int:
    """One bit pattern of ``plan.fmt`` allowed by the plan.

    Every draw starts alike, whatever its kind: a sign, then an exponent field and a
    fraction (together the "structured" value).  Kinds that do not use the last two draw
    two fixed placeholders instead, so that every kind makes at least as many choices as
    a structured draw: hypothesis' shrinker moves a failing example to an earlier kind by
    trying fresh choices after it, but no more choices than the example had.  (Random
    placeholders would do as well for that, but would make hypothesis repeat values.)
    """
    group = plan.groups[0] if len(plan.groups) == 1 else draw(st.sampled_from(plan.groups))
    kind = draw(st.sampled_from(group))
    negative = draw(st.booleans())
    if kind in ("structured", "power_of_two", "subnormal"):
        magnitude = _draw_magnitude(draw, plan.fmt, plan.fields)
    else:
        magnitude = draw(_PLACEHOLDER) + draw(_PLACEHOLDER)
    if kind == "nan":
        return _draw_nan(draw, plan.fmt, negative=negative)
    key = _DRAWS[kind](draw, plan, negative, magnitude)
    return plan.order.pattern(plan.keys.project(key, plan.order))


_PLACEHOLDER = st.integers(0, 0)  # one choice with one possible value


def _draw_simple(draw, plan, negative, magnitude):
    return draw(st.sampled_from(plan.simple))


def _draw_structured(draw, plan, negative, magnitude):
    return plan.order.signed(magnitude, negative)


def _draw_boundary(draw, plan, negative, magnitude):
    return draw(st.sampled_from(plan.boundary))


def _draw_power_of_two(draw, plan, negative, magnitude):
    """2**e for the drawn exponent, or its neighbour just above or below (the exponent
    field 0 gives 0 or the smallest subnormal)."""
    m = plan.fmt.mantissa_bits
    step = draw(st.sampled_from((0, 1, -1)))
    mag = min(max((magnitude >> m << m) + step, 0), plan.fmt.max_finite_bits)
    return plan.order.signed(mag, negative)


def _draw_subnormal(draw, plan, negative, magnitude):
    """The drawn fraction with a zero exponent field: a subnormal (or zero)."""
    return plan.order.signed(magnitude & plan.fmt.mantissa_mask, negative)


def _draw_uniform(draw, plan, negative, magnitude):
    return plan.keys.at(draw(st.integers(0, plan.keys.size - 1)))


def _draw_infinity(draw, plan, negative, magnitude):
    return draw(st.sampled_from(plan.infinities))


_DRAWS = {
    "simple": _draw_simple,
    "structured": _draw_structured,
    "boundary": _draw_boundary,
    "power_of_two": _draw_power_of_two,
    "subnormal": _draw_subnormal,
    "uniform": _draw_uniform,
    "infinity": _draw_infinity,
    "around_point": _draw_around_point,
    "around_overflow": _draw_around_overflow,
    "around_underflow": _draw_around_underflow,
}
