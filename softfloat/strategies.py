"""Hypothesis strategies that draw values, bit patterns and arrays of any softfloat format.

hypothesis' own ``floats(width=...)`` knows only the 16/32/64-bit IEEE widths, and random
floats almost never land on what breaks rounding code: exact ties, the overflow threshold,
the subnormal boundary of the format being converted *into*.  These strategies draw from a
format's bit-pattern space (so every class and NaN payload is reachable), weight the draws
toward class boundaries, and with ``around=target`` toward the inputs that break a
conversion into ``target``.  They shrink toward simple values: 0, 1, exponents near the
bias and short fractions.

hypothesis is an optional dependency (the ``test`` extra); ``softfloat`` itself never
imports this module.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np

from ._validate import missing_dependency as _missing_dependency

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as exc:  # pragma: no cover - checked in a subprocess by the tests
    raise ImportError(_missing_dependency("softfloat.strategies", "hypothesis")) from exc

from ._validate import boolean as _boolean
from ._validate import describe as _describe
from ._validate import short_repr as _short_repr
from .codec import FLOAT_CLASSES, decode, encode
from .formats import Format, Specials, as_format, catalogue
from .rounding import Rounding

__all__ = ["values", "bits", "arrays", "formats", "rounding_modes"]


# =====================================================================================
# public strategies
# =====================================================================================
def values(fmt, min_value=None, max_value=None, *, allow_nan=None, allow_infinity=None,
           allow_subnormal=None, allow_negative_zero=True, exclude_min=False, exclude_max=False,
           around=None):
    """Python floats that are exactly representable in ``fmt``.

    Draws come from the format's bit-pattern space, weighted toward class boundaries (+-0,
    the smallest and largest subnormal, the smallest normal, the largest finite value,
    powers of two and their neighbours, 1 +- ulp) and, for formats with NaN, NaNs with
    every sign, quiet bit and payload.  Failing examples shrink toward 0, 1, exponents near
    the bias and short fractions.

    Parameters
    ----------
    fmt : Format or str
    min_value, max_value : real number, optional
        Inclusive bounds; each must be a value of ``fmt`` (an error names the two nearest
        values otherwise).  Checked exactly, with work bounded as for
        :func:`softfloat.encode`: ``Decimal("1e1000000000")`` or ``10**100000`` is refused
        at once.  As in ``hypothesis.strategies.floats``, ``min_value=0.0``
        excludes -0.0 and ``max_value=-0.0`` excludes +0.0.
    allow_nan : bool, optional
        Default: True when the format has NaN and no bound is given.
    allow_infinity : bool, optional
        Default: True when the format has infinities and at most one bound is given.
    allow_subnormal : bool, optional
        Default: True when the bounds admit a subnormal.
    allow_negative_zero : bool, default True
    exclude_min, exclude_max : bool, default False
        Make the corresponding bound exclusive.
    around : Format or str, optional
        Also weight the draws (still values of ``fmt``) toward what breaks a conversion
        from ``fmt`` into ``around``: its representable values, the exact midpoints
        between its neighbours (ties) and their neighbours in ``fmt``, its overflow
        threshold and that threshold's neighbours, its subnormal range and half its
        smallest subnormal.

    Preconditions, checked when the strategy is built (not when it is drawn from):

    - bounds are values of ``fmt`` and ``min_value <= max_value``;
    - ``allow_nan=True`` needs a format with NaN and no bounds; ``allow_infinity=True``
      a format with infinities and at most one finite bound; ``allow_subnormal=True``
      bounds that admit a subnormal;
    - some value satisfies all of it.

    Returns
    -------
    SearchStrategy[float]

    Examples
    --------
    >>> from hypothesis import find
    >>> from softfloat import bf16, fp32
    >>> find(values(bf16), lambda x: x > 1.0 and x != 2.0)   # short fractions first
    1.5
    >>> values(bf16, max_value=1e6)
    Traceback (most recent call last):
        ...
    ValueError: max_value=1000000.0 is not representable in bf16; the nearest values are 999424.0 and 1003520.0 (use one of them)

    A ties-away fp32 -> bf16 rounding bug is found, and shrunk to the simplest tie:

    >>> import numpy as np, softfloat as sf
    >>> def to_bf16_away(x):
    ...     return int((np.float32(x).view(np.uint32) + np.uint32(0x8000)) >> np.uint32(16))
    >>> find(values(fp32, around=bf16, allow_nan=False),
    ...      lambda x: to_bf16_away(x) != sf.encode(x, bf16))
    1.00390625
    """
    plan = _plan(as_format(fmt), min_value, max_value, allow_nan=allow_nan,
                 allow_infinity=allow_infinity, allow_subnormal=allow_subnormal,
                 allow_negative_zero=allow_negative_zero, exclude_min=exclude_min,
                 exclude_max=exclude_max, around=around)
    return _patterns(plan).map(plan.value_of)


def bits(fmt, *, classes=None):
    """Integer bit patterns of ``fmt``, optionally of the given IEEE classes only.

    Each draw picks a class, then a pattern in it: the class's boundaries, or exponent
    and fraction fields that shrink toward 1.0 and short fractions.  NaNs come with every
    sign, quiet bit and payload.

    Parameters
    ----------
    fmt : Format or str
    classes : collection of str, optional
        IEEE 754 class names as in ``softfloat.FLOAT_CLASSES`` ('positiveNormal',
        'negativeZero', 'quietNaN', ...); each must exist in ``fmt``.  Default: all the
        format has.

    Returns
    -------
    SearchStrategy[int]

    Examples
    --------
    >>> from hypothesis import find
    >>> import softfloat
    >>> hex(find(bits("fp16", classes=["positiveSubnormal"]), lambda b: True))
    '0x1'
    >>> hex(find(bits("fp16"), lambda b: softfloat.is_signaling(b, "fp16")))
    '0x7c01'
    """
    fmt = as_format(fmt)
    chosen = _check_classes(fmt, classes)
    return _class_patterns(fmt, tuple(c for c in _CLASS_ORDER if c in chosen))


def arrays(fmt, shape, *, elements=None, as_bits=False, fill=None, unique=False):
    """numpy arrays of values of ``fmt``, built on ``hypothesis.extra.numpy.arrays``.

    Parameters
    ----------
    fmt : Format or str
    shape : int, tuple of int, or a strategy for them
    elements : SearchStrategy or mapping, optional
        A strategy for the elements, or a mapping of :func:`values` keywords (for example
        ``{"min_value": 0.0, "allow_nan": False}``).  Default: ``values(fmt)``.
    as_bits : bool, default False
        Return bit patterns of dtype ``fmt.storage_dtype`` instead of float64 values.  A
        mapping for ``elements`` then draws the patterns of those values (NaN payloads and
        signaling NaNs intact); a strategy must draw integer patterns, such as
        :func:`bits`.
    fill, unique
        Passed to ``hypothesis.extra.numpy.arrays``.

    Returns
    -------
    SearchStrategy[numpy.ndarray]
        float64 arrays of exact values, or ``fmt.storage_dtype`` bit arrays.

    Examples
    --------
    >>> from hypothesis import find
    >>> a = find(arrays("e4m3", 3, elements={"min_value": 1.0, "max_value": 2.0}),
    ...          lambda a: a.sum() > 4.5)
    >>> a.dtype, a.shape, float(a.sum()) > 4.5
    (dtype('float64'), (3,), True)
    """
    fmt = as_format(fmt)
    as_bits = _boolean("as_bits", as_bits)
    if elements is None:
        elements = {}
    if isinstance(elements, Mapping):
        plan = _plan(fmt, **_values_keywords(elements))
        strategy = _patterns(plan) if as_bits else _patterns(plan).map(plan.value_of)
    elif isinstance(elements, st.SearchStrategy):
        strategy = elements
    else:
        raise TypeError(
            "elements must be a hypothesis strategy or a mapping of values() keywords such as "
            f"{{'min_value': 0.0}}; got {_describe(elements)}"
        )
    dtype = fmt.storage_dtype if as_bits else np.dtype(np.float64)
    return hnp.arrays(dtype, shape, elements=strategy, fill=fill, unique=unique)


def formats(*, include_custom=True):
    """Formats: the catalogue, and with ``include_custom`` any valid custom layout.

    Custom layouts have 2 to 11 exponent bits, 1 to 52 fraction bits and any special-value
    policy (11 exponent bits only with the IEEE policy, the others would not fit float64).

    >>> from hypothesis import find
    >>> find(formats(include_custom=False), lambda f: f.bits == 8 and not f.has_infinity)
    softfloat.fp8_e4m3
    """
    include_custom = _boolean("include_custom", include_custom)
    named = st.sampled_from(catalogue())
    if not include_custom:
        return named
    custom = st.builds(_custom_format, st.integers(2, 11), st.integers(1, 52), st.sampled_from(list(Specials)))
    return st.one_of(named, custom)


def rounding_modes(*, deterministic=False):
    """Rounding modes (``softfloat.Rounding`` members); ``deterministic`` leaves out stochastic.

    >>> from hypothesis import find
    >>> find(rounding_modes(), lambda r: r.value.startswith("to"))
    <Rounding.TOWARD_ZERO: 'toward_zero'>
    """
    deterministic = _boolean("deterministic", deterministic)
    return st.sampled_from([m for m in Rounding if m.is_deterministic or not deterministic])


# =====================================================================================
# the value order: patterns <-> consecutive integer keys
# =====================================================================================
class _Order:
    """The non-NaN patterns of a format as consecutive integer keys in the IEEE total order.

    A magnitude pattern (the bits below the sign) grows with the value it holds, so a
    positive number is keyed by it and a negative one mirrored below zero, with -0 (where
    the format has one) just under +0.  With M the largest finite magnitude pattern and
    z = 1 if the format has -0 (0 for fnuz):

        -inf      -max      -min_sub   -0  |  +0   +min_sub    +max   +inf
        -(M+1+z)  -(M+z)    -(1+z)     -z  |   0      1          M     M+1
    """

    def __init__(self, fmt: Format):
        self.fmt = fmt
        self.z = 1 if fmt.has_negative_zero else 0
        self.max_mag = fmt.max_finite_bits
        self.inf_mag = fmt.infinity_bits  # M + 1 for IEEE formats, else None

    def key(self, pattern: int) -> int:
        mag = pattern & (self.fmt.sign_mask - 1)
        return -mag - self.z if pattern & self.fmt.sign_mask else mag

    def pattern(self, key: int) -> int:
        return key if key >= 0 else self.fmt.sign_mask | (-key - self.z)

    def signed(self, mag: int, negative: bool) -> int:
        return -mag - self.z if negative else mag

    def mirror(self, key: int) -> int:
        """The key of the same magnitude with the other sign."""
        return -key - self.z  # +x <-> -x: k = mag  <->  -mag - z


class _KeySet:
    """A set of keys as sorted, disjoint, inclusive intervals."""

    def __init__(self, intervals):
        self.intervals = tuple((lo, hi) for lo, hi in intervals if lo <= hi)

    def without(self, lo: int, hi: int) -> "_KeySet":
        """This set minus the keys in [lo, hi]."""
        kept = []
        for a, b in self.intervals:
            kept += [(a, min(b, lo - 1)), (max(a, hi + 1), b)]
        return _KeySet(kept)

    def __contains__(self, key: int) -> bool:
        return any(a <= key <= b for a, b in self.intervals)

    def meets(self, lo: int, hi: int) -> bool:
        """True if some key of [lo, hi] is in the set."""
        return any(a <= hi and lo <= b for a, b in self.intervals)

    @property
    def size(self) -> int:
        return sum(b - a + 1 for a, b in self.intervals)

    def at(self, index: int) -> int:
        """The index-th smallest key."""
        for a, b in self.intervals:
            if index <= b - a:
                return a + index
            index -= b - a + 1
        raise IndexError(index)

    def project(self, key: int, order: _Order) -> int:
        """``key`` if allowed, else its mirror image (same magnitude, other sign), else the
        nearest allowed key (so draws outside the bounds land on the bounds)."""
        if key in self:
            return key
        if order.mirror(key) in self:
            return order.mirror(key)
        return min((min(max(key, a), b) for a, b in self.intervals), key=lambda k: (abs(k - key), k))

    def magnitudes(self, order: _Order) -> tuple[int, int]:
        """The smallest and largest magnitude pattern among the keys."""
        lows, highs = [], []
        for a, b in self.intervals:
            if b >= 0:  # positive keys are magnitudes
                lows.append(max(a, 0))
                highs.append(b)
            if a < 0:   # negative keys: magnitude = -key - z
                lows.append(-min(b, -1) - order.z)
                highs.append(-a - order.z)
        return min(lows), max(highs)


# =====================================================================================
# values(): the plan (arguments checked, inferred and precomputed) and the draws
# =====================================================================================
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


def _plan(fmt, min_value=None, max_value=None, *, allow_nan=None, allow_infinity=None,
          allow_subnormal=None, allow_negative_zero=True, exclude_min=False, exclude_max=False,
          around=None) -> _Plan:
    """Check and infer the values() arguments; precompute what the draws need."""
    order = _Order(fmt)
    allow_negative_zero = _boolean("allow_negative_zero", allow_negative_zero)
    exclude_min = _boolean("exclude_min", exclude_min)
    exclude_max = _boolean("exclude_max", exclude_max)
    allow_nan, allow_infinity, allow_subnormal = (
        _optional_boolean(name, value) for name, value in
        (("allow_nan", allow_nan), ("allow_infinity", allow_infinity), ("allow_subnormal", allow_subnormal)))
    target = None if around is None else as_format(around, "around")
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


# -- interesting keys ----------------------------------------------------------------
def _power_of_two_mag(fmt: Format, e: int) -> int | None:
    """Magnitude pattern of 2**e, or None if it is not a normal number of ``fmt``."""
    field = e + fmt.bias
    mag = field << fmt.mantissa_bits
    return mag if 1 <= field and mag <= fmt.max_finite_bits else None


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


def _dedupe(items):
    return tuple(dict.fromkeys(items))


# -- the draws -----------------------------------------------------------------------
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


def _reversed_bits(value: int, width: int) -> int:
    """Bit-reverse ``value`` in ``width`` bits, so that small draws mean short fractions."""
    return int(format(value, f"0{width}b")[::-1], 2)


def _draw_magnitude(draw, fmt: Format, fields: tuple[int, int, int] | None = None) -> int:
    """A finite magnitude pattern from exponent and fraction draws.

    ``fields`` = (lowest, highest, simplest) exponent field; by default all finite fields,
    simplest the bias.  The exponent shrinks toward the simplest field (values near 1)
    and the fraction, drawn bit-reversed, toward few leading bits (1.5 before 1.0000001).
    """
    m = fmt.mantissa_bits
    first, last, simplest = fields or (0, fmt.max_finite_bits >> m, fmt.bias)
    field = simplest + draw(st.integers(first - simplest, last - simplest))
    fraction = _reversed_bits(draw(st.integers(0, fmt.mantissa_mask)), m)
    return min((field << m) | fraction, fmt.max_finite_bits)


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


def _draw_nan(draw, fmt: Format, signaling: bool | None = None, negative: bool | None = None) -> int:
    """A NaN pattern: any sign, quiet bit and payload the format allows.

    IEEE NaNs are  s | 1..1 | q p..p  with q the quiet bit; a signaling NaN (q = 0) needs a
    non-zero payload.  fn formats have one NaN per sign, fnuz formats a single NaN.
    """
    if fmt.specials is Specials.FNUZ:
        return fmt.nan_bits
    if negative is None:
        negative = draw(st.booleans())
    sign = fmt.sign_mask if negative else 0
    if fmt.specials is Specials.FN:
        return sign | fmt.nan_bits
    quiet = 1 << (fmt.mantissa_bits - 1)
    if signaling is None:
        signaling = quiet > 1 and draw(st.booleans())
    if signaling:
        return sign | fmt.exponent_mask | draw(st.integers(1, quiet - 1))
    return sign | fmt.exponent_mask | quiet | draw(st.integers(0, quiet - 1))


# -- around=target -------------------------------------------------------------------
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


# =====================================================================================
# bits(): classes
# =====================================================================================
#: the order failing examples shrink along, simplest first
_CLASS_ORDER = ("positiveZero", "positiveNormal", "positiveSubnormal", "negativeZero", "negativeNormal",
                "negativeSubnormal", "positiveInfinity", "negativeInfinity", "quietNaN", "signalingNaN")
assert sorted(_CLASS_ORDER) == sorted(FLOAT_CLASSES)


def _format_classes(fmt: Format) -> tuple[str, ...]:
    """The IEEE classes that ``fmt`` has patterns for, in ``softfloat.FLOAT_CLASSES`` order."""
    absent = set()
    if not fmt.has_negative_zero:
        absent.add("negativeZero")
    if not fmt.has_infinity:
        absent |= {"positiveInfinity", "negativeInfinity"}
    if not fmt.has_nan:
        absent.add("quietNaN")
    if fmt.specials is not Specials.IEEE or fmt.mantissa_bits < 2:
        absent.add("signalingNaN")  # no quiet bit, or no payload bit beside it
    return tuple(c for c in FLOAT_CLASSES if c not in absent)


def _check_classes(fmt: Format, classes) -> frozenset:
    available = _format_classes(fmt)
    if classes is None:
        return frozenset(available)
    if isinstance(classes, str) or not isinstance(classes, (list, tuple, set, frozenset)):
        raise TypeError(
            "classes must be a list of IEEE class names such as ['positiveNormal', 'quietNaN']; "
            f"got {_describe(classes)}" + (" (wrap a single name in a list)" if isinstance(classes, str) else "")
        )
    if not classes:
        raise ValueError(f"classes is empty; pass at least one of {', '.join(available)} (or None for all)")
    for name in classes:
        if name not in FLOAT_CLASSES:
            raise ValueError(f"classes holds {name!r}, which is not an IEEE class name; choose from "
                             f"{', '.join(FLOAT_CLASSES)}")
        if name not in available:
            raise ValueError(f"classes holds {name!r}, but {fmt.name} has no such patterns; "
                             f"its classes are {', '.join(available)}")
    return frozenset(classes)


@st.composite
def _class_patterns(draw, fmt: Format, classes: tuple[str, ...]) -> int:
    cls = draw(st.sampled_from(classes))
    if cls.endswith("NaN"):
        return _draw_nan(draw, fmt, signaling=cls == "signalingNaN")
    negative = cls.startswith("negative")
    kind = cls[len("negative"):] if negative else cls[len("positive"):]
    m = fmt.mantissa_bits
    if kind == "Zero":
        mag = 0
    elif kind == "Infinity":
        mag = fmt.infinity_bits
    elif kind == "Subnormal":
        mag = draw(st.one_of(st.sampled_from(_dedupe([1, fmt.mantissa_mask])), st.integers(1, fmt.mantissa_mask)))
    else:
        edges = _dedupe([_power_of_two_mag(fmt, 0), 1 << m, fmt.max_finite_bits])
        mag = draw(st.one_of(_normal_magnitudes(fmt), st.sampled_from(edges)))
    return (fmt.sign_mask if negative else 0) | mag


@st.composite
def _normal_magnitudes(draw, fmt):
    return _draw_magnitude(draw, fmt, (1, fmt.max_finite_bits >> fmt.mantissa_bits, fmt.bias))


# =====================================================================================
# small helpers
# =====================================================================================
def _custom_format(exponent_bits: int, mantissa_bits: int, specials: Specials) -> Format:
    if exponent_bits == 11:
        specials = Specials.IEEE  # the other policies would exceed float64's exponent range
    return Format(exponent_bits, mantissa_bits, specials)


def _optional_boolean(name: str, value):
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True, False or None (infer from the bounds); got {_describe(value)}")
