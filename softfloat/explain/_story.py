"""The rounding story: guard/round/sticky, the rule of each mode, and what became of the chosen neighbour."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .. import _exact
from ..codec import decode
from ..formats import Format
from ..rounding import Rounding
from ._text import approx, show


@dataclass(frozen=True)
class Neighbour:
    """A representable value next to the input: its bit pattern and exact value.

    ``value`` is a :class:`~fractions.Fraction` for finite values, ``float('inf')`` or
    ``-inf`` for infinities.
    """

    bits: int
    value: Fraction | float


@dataclass(frozen=True)
class Case:
    """One call of explain: the exact input, what encode delivered, and the options."""

    given: _exact.ExactValue
    value: Fraction | float  # the exact value of encode's bits
    fmt: Format
    mode: Rounding
    raised: tuple[str, ...]
    saturate: bool
    subnormals: bool


def decoded(bits: int, fmt: Format) -> Fraction | float:
    """Exact value of one pattern: a Fraction when finite, else the float inf/nan."""
    v = float(decode(bits, fmt))
    return Fraction(v) if np.isfinite(v) else v


@dataclass(frozen=True)
class Story:
    """The description of one finite rounding: ulp, (guard, round, sticky) and words."""

    ulp: Fraction
    grs: tuple[int, int, int] | None
    text: str

    @classmethod
    def tell(cls, case: Case, below: Neighbour | None, above: Neighbour | None) -> "Story":
        """Describe how the input became ``case.value`` (which ``encode`` chose).

        Works on magnitudes: ``t`` is the neighbour toward zero (it always exists) and
        the candidate away from zero is ``t + ulp`` (which may lie beyond the largest
        finite value, where it stands for "overflow").  With r = (|x| - t) / ulp:

            |x| = t + r * ulp,   r = 0.G R S...   (guard, round, sticky = OR of the rest)
        """
        negative, fmt = case.given.negative, case.fmt
        toward, away = (above, below) if negative else (below, above)
        t = abs(toward.value)
        ulp = _ulp(case.given, fmt)
        if away is not None and isinstance(away.value, Fraction) and away.value != toward.value:
            _check(abs(away.value) - t == ulp, "neighbour spacing", case)
        r = (case.given.proxy() - t) / ulp
        if r >= 1:
            _check("overflow" in case.raised, "overflow", case)
            return cls(ulp, None, _far_overflow(case))
        grs = _guard_round_sticky(r)
        head = f"guard={grs[0]}, round={grs[1]}, sticky={grs[2]}: "
        if r == 0:
            side, text = "toward", head + f"exact, representable in {fmt.name}: no rounding"
        else:
            side = _direction(r, case.mode, negative, toward.bits)
            if side is None:  # stochastic: the draw decided; read it off the result
                kept = isinstance(case.value, Fraction) and abs(case.value) == t
                side = "toward" if kept else "away"
            text = head + _rule_text(r, case.mode, side, negative)
        rounded = t if side == "toward" else t + ulp  # with an unbounded exponent
        return cls(ulp, grs, text + _aftermath(case, rounded))


def _guard_round_sticky(r: Fraction) -> tuple[int, int, int]:
    """The bits of r = 0.G R S... in [0, 1): guard, round, and sticky = "anything below"."""
    q = 4 * r
    top = q.numerator // q.denominator  # 0bGR
    return top >> 1, top & 1, int(q.denominator != 1)


def _ulp(a: Fraction | _exact.ExactValue, fmt: Format) -> Fraction:
    """Spacing of ``fmt`` at magnitude ``a``: 2**(e - m) for the binade e of ``a``,
    clamped to [emin, emax] (subnormals share emin's spacing).  For an ExactValue the
    binade comes from its significand (a stand-in's beyond reach: clamped the same)."""
    sig, e = a.significand if isinstance(a, _exact.ExactValue) else _exact.to_significand(a)
    e = min(max(e, fmt.emin), fmt.emax) if sig else fmt.emin
    return Fraction(2) ** (e - fmt.mantissa_bits)


def _direction(r: Fraction, mode: Rounding, negative: bool, toward_bits: int) -> str | None:
    """Which way ``mode`` goes from r ulps above the toward-zero neighbour: 'toward'
    (zero) or 'away'; None for stochastic (decided by a random draw)."""
    half = Fraction(1, 2)
    toward_is_even = toward_bits & 1 == 0
    if mode is Rounding.NEAREST_EVEN:
        return "toward" if r < half or (r == half and toward_is_even) else "away"
    if mode is Rounding.NEAREST_AWAY:
        return "toward" if r < half else "away"
    if mode is Rounding.TOWARD_ZERO:
        return "toward"
    if mode is Rounding.UPWARD:
        return "toward" if negative else "away"
    if mode is Rounding.DOWNWARD:
        return "away" if negative else "toward"
    if mode is Rounding.ODD:
        return "away" if toward_is_even else "toward"
    return None


def _rule_text(r: Fraction, mode: Rounding, side: str, negative: bool) -> str:
    """E.g. 'above the midpoint, rounds up' or 'exact tie, rounds to even (up)'."""
    half = Fraction(1, 2)
    where = "below the midpoint" if r < half else "exact tie" if r == half else "above the midpoint"
    if negative and r != half:
        where = "|x| " + where
    went = _went(side, negative)
    if mode is Rounding.NEAREST_EVEN:
        return f"{where}, rounds to even ({went})" if r == half else f"{where}, rounds {went}"
    if mode is Rounding.NEAREST_AWAY:
        return f"{where}, rounds away from zero ({went})" if r == half else f"{where}, rounds {went}"
    if mode is Rounding.STOCHASTIC:
        return (f"{where}; stochastic rounds away from zero with probability {approx(r)}; "
                f"this draw went {went}")
    rule = {
        Rounding.TOWARD_ZERO: "toward_zero truncates",
        Rounding.UPWARD: "upward rounds toward +inf",
        Rounding.DOWNWARD: "downward rounds toward -inf",
        Rounding.ODD: "round to odd picks the neighbour whose last bit is 1",
    }[mode]
    return f"{where}; {rule}: {went}"


def _went(side: str, negative: bool) -> str:
    """'up' / 'down' in value terms, saying 'toward/away from zero' for negatives."""
    if not negative:
        return "up" if side == "away" else "down"
    return "down, away from zero" if side == "away" else "up, toward zero"


def _aftermath(case: Case, rounded: Fraction) -> str:
    """What became of the chosen neighbour ``rounded``: kept, overflowed, or flushed.

    Checks the story against ``encode``: the rounded magnitude (unbounded exponent)
    exceeds the largest finite value exactly when ``encode`` raised overflow, and
    otherwise the result is that neighbour (or zero, when subnormals are flushed).
    """
    fmt, value = case.fmt, case.value
    max_finite = Fraction(fmt.max_finite)
    _check((rounded > max_finite) == ("overflow" in case.raised), "overflow", case)
    if rounded > max_finite:
        return (f"; {show(rounded)} exceeds the largest finite value "
                f"{show(max_finite)}: {_overflow_result(case)}")
    if not isinstance(value, Fraction) or abs(value) != rounded:
        flushed = not case.subnormals and value == 0 and "underflow" in case.raised
        _check(flushed, "result", case)
        zero = show(value, case.given.negative and fmt.has_negative_zero)
        return (f"; subnormals are off and the result is tiny (below 2^{fmt.emin}), "
                f"so it is flushed to {zero}")
    return ""


def _far_overflow(case: Case) -> str:
    """Words for |x| at least one ulp beyond the largest finite value."""
    max_finite = Fraction(case.fmt.max_finite)
    limit = max_finite + _ulp(max_finite, case.fmt)
    return (f"|x| >= {show(limit)} = max_finite + 1 ulp, so every rounding mode "
            f"overflows: {_overflow_result(case)}")


def _overflow_result(case: Case) -> str:
    """Describe the overflowed result encode delivered (infinity, max or NaN), and why."""
    fmt, value = case.fmt, case.value
    if isinstance(value, float) and value != value:
        return (f"{fmt.name} has no infinity, so non-saturating overflow gives NaN "
                "(saturate=True gives +-max_finite)")
    if isinstance(value, float):
        return f"{case.mode.value} sends it to {show(value)}"
    if not fmt.has_infinity and not fmt.has_nan:
        return f"{fmt.name} has neither infinity nor NaN, so it saturates to {show(value)}"
    if case.saturate:
        return f"saturate=True clamps it to the largest finite value {show(value)}"
    return f"{case.mode.value} gives the largest finite value {show(value)}"


def special_decision(case: Case) -> str:
    """Words for an infinite or NaN input."""
    fmt, value = case.fmt, case.value
    if case.given.kind == "nan":
        if not fmt.has_nan:
            return f"{fmt.name} has no NaN: a NaN gives +0 and raises invalid"
        if "invalid" in case.raised:
            return "signaling NaN: becomes a quiet NaN and raises invalid"
        if fmt.has_infinity:
            return "NaN stays NaN (quiet, with the sign and top payload bits kept)"
        return f"NaN becomes {fmt.name}'s single NaN pattern"
    if isinstance(value, float) and value == value:
        return "infinity is representable: exact"
    if isinstance(value, float):
        return f"{fmt.name} has no infinity: an infinite input gives NaN and raises invalid"
    return (f"{fmt.name} has no infinity: an infinite input saturates to "
            f"{show(value)} and raises overflow")


def _check(ok: bool, what: str, case: Case) -> None:
    """Guard the description against the bits: a mismatch is a library bug."""
    if not ok:
        raise AssertionError(
            f"softfloat.explain: the {what} described for {case.given} in {case.fmt.name} "
            f"({case.mode.value}) disagrees with softfloat.encode; please report this as a bug"
        )
