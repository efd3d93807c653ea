"""Drawing the fields of a pattern: finite magnitudes that shrink toward 1.0 and short
fractions, and NaNs with every sign, quiet bit and payload."""

from __future__ import annotations

from hypothesis import strategies as st

from ..formats import Format, Specials


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
