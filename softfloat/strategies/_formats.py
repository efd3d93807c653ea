"""The strategies for formats and rounding modes."""

from __future__ import annotations

from hypothesis import strategies as st

from .._validate import boolean as _boolean
from ..formats import Format, Specials, catalogue
from ..rounding import Rounding


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


def _custom_format(exponent_bits: int, mantissa_bits: int, specials: Specials) -> Format:
    if exponent_bits == 11:
        specials = Specials.IEEE  # the other policies would exceed float64's exponent range
    return Format(exponent_bits, mantissa_bits, specials)

