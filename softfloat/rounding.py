"""Rounding-direction attributes (IEEE 754-2019 section 4.3) and the tininess choice.

Both are string-valued enums, so ``rounding="toward_zero"`` reads well everywhere and a
misspelling fails with the list of valid names.
"""

from __future__ import annotations

import enum

from . import _validate

__all__ = ["Rounding", "Tininess", "as_rounding", "as_tininess"]


class Rounding(str, enum.Enum):
    """How an exact value that falls between two neighbours is rounded.

    ``nearest_even``  roundTiesToEven, the IEEE default.
    ``nearest_away``  roundTiesToAway.
    ``toward_zero``   roundTowardZero (truncation).
    ``upward``        roundTowardPositive.
    ``downward``      roundTowardNegative.
    ``stochastic``    up with probability equal to the distance from the lower
                      neighbour, in ulps (not an IEEE attribute).
    ``odd``           round to odd: truncate, then set the last bit if inexact.  Rounding
                      to odd at p+2 bits and then to p bits equals one rounding to p bits,
                      in any mode (Boldo and Melquiond), so it makes two-step conversions
                      free of double rounding.

    Examples
    --------
    >>> Rounding("toward_zero") is Rounding.TOWARD_ZERO, str(Rounding.UPWARD)
    (True, 'upward')
    >>> [m.value for m in Rounding if m.is_deterministic][:3]
    ['nearest_even', 'nearest_away', 'toward_zero']
    """

    NEAREST_EVEN = "nearest_even"
    NEAREST_AWAY = "nearest_away"
    TOWARD_ZERO = "toward_zero"
    UPWARD = "upward"
    DOWNWARD = "downward"
    STOCHASTIC = "stochastic"
    ODD = "odd"

    @property
    def is_deterministic(self) -> bool:
        return self is not Rounding.STOCHASTIC

    def __str__(self) -> str:
        return self.value


class Tininess(str, enum.Enum):
    """When a non-zero result counts as tiny (IEEE 754-2019 section 7.5).

    ``after``   after rounding: the result rounded to the format's precision with an
                unbounded exponent is below the smallest normal (x86 SSE, RISC-V).
    ``before``  before rounding: the exact result is below the smallest normal (ARM).

    Examples
    --------
    The value just below fp16's smallest normal 2**-14 that rounds up to it is tiny
    before rounding, not after:

    >>> import softfloat as sf
    >>> x = 2.0**-14 - 2.0**-26
    >>> [sf.encode(x, "fp16", tininess=t, return_flags=True)[1].raised() for t in Tininess]
    [('inexact',), ('underflow', 'inexact')]
    """

    AFTER = "after"
    BEFORE = "before"

    def __str__(self) -> str:
        return self.value


def as_rounding(value: Rounding | str, argname: str = "rounding") -> Rounding:
    """Coerce a :class:`Rounding` or its name; an unknown name lists the valid ones."""
    return _validate.choice(argname, value, Rounding)


def as_tininess(value: Tininess | str, argname: str = "tininess") -> Tininess:
    return _validate.choice(argname, value, Tininess)
