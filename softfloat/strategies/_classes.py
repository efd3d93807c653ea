"""bits(): the IEEE classes a format has, checked, and a pattern drawn in each."""

from __future__ import annotations

from hypothesis import strategies as st

from .._validate import describe as _describe
from .._validate import did_you_mean as _did_you_mean
from ..codec import FLOAT_CLASSES
from ..formats import Format, Specials
from ._magnitudes import _draw_magnitude, _draw_nan
from ._order import _dedupe, _power_of_two_mag


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
            raise ValueError(f"classes holds {name!r}, which is not an IEEE class name"
                             f"{_did_you_mean(name, FLOAT_CLASSES)}; choose from "
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
