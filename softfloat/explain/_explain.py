"""The entry point: explain() one value, or one operation written as text."""

from __future__ import annotations

from .._options import resolve_attributes
from ..formats import as_format
from ._operation import explain_operation
from ._parse import parse_operation
from ._value import Explanation, exact_input, explain_value, scalar


def explain(x, fmt, rounding=None, *, saturate=None, subnormals=None, tininess=None, attributes=None,
            rng=None) -> Explanation:
    """Round one value into ``fmt`` and explain the result bit by bit.

    The bits come from :func:`softfloat.encode` with the same arguments; ``explain``
    adds the description: exact input, fields, the bracketing neighbours (from
    ``encode`` with ``"downward"`` and ``"upward"``), guard/round/sticky bits and the
    rule that chose between the neighbours, exact error in ulps, and the flags.

    Parameters
    ----------
    x : scalar
        A Python int or float, a numpy scalar, a ``Fraction`` or ``Decimal``, or a
        string (``"6.36"`` is the exact decimal 6.36; ``"0x1.8p-3"``, ``"1/3"``,
        ``"inf"``, ``"nan"`` also work).  A float is explained from its exact binary
        value.

        A string that is no number but one operation -- ``"2048 + 1"``, ``"0.1 * 3"``,
        ``"1 / 3"``, ``"sqrt(2)"``, ``"fma(1.5, 2, -3)"`` -- explains that operation:
        each operand is rounded into ``fmt`` with the same options (a stochastic
        ``rng`` draws for the operands first, then for the operation), the operation
        runs (:func:`softfloat.add`, ``sub``, ``mul``, ``div``, ``sqrt``, ``fma``), and
        its exact result's rounding is explained with the operation's bits and flags.
        ``"1/3"`` without spaces is a ratio, one number.
    fmt : Format or str
    rounding, saturate, subnormals, tininess, attributes, rng
        As for :func:`softfloat.encode` (defaults "nearest_even", False, True, the
        platform's tininess; ``attributes`` holds them all as one
        :class:`~softfloat.RoundingAttributes`, and a keyword that is given wins over it;
        ``rng`` is used only by stochastic rounding: a seed or Generator makes the draw
        reproducible, ``rng=None`` draws fresh entropy; the deterministic modes ignore it).

    Returns
    -------
    Explanation, or OperationExplanation for an operation
        Print it, show it in a notebook, or call ``.to_dict()``.

    Raises
    ------
    TypeError
        ``x`` is not a scalar number (explain arrays element by element).

    Notes
    -----
    The work is bounded as for :func:`softfloat.encode`: an input far beyond every
    format's range (``"1e1000000000"``, ``Fraction(1, 10**100000)``) is explained from its
    exponent, without expanding it -- its neighbours, ulp and rounding story are exact,
    its error is shown to 17 digits -- in a few milliseconds; long digit strings take
    time linear in their length.

    Examples
    --------
    >>> print(explain(0.875, "fp32"))
    0.875 -> fp32 (rounding=nearest_even)
      input     0.875 (float)
      exactly   0.875
      bits      0 01111110 11000000000000000000000  (0x3f600000)
      sign      0 (+)
      exponent  01111110 = 126 biased, 126 - 127 = -1 unbiased
      fraction  11000000000000000000000 = 6291456
      value     (-1)^0 x 1.11000000000000000000000 (binary) x 2^-1 = 0.875
      class     positiveNormal
      below     0.875  (the result)
      above     0.875  (the result)
      ulp       2^-24 = 0.000000059604644775390625
      rounding  guard=0, round=0, sticky=0: exact, representable in fp32: no rounding
      error     0 = 0 ulp
      flags     none

    A tie in FP4 (E2M1): 3.5 lies halfway between 3 and 4 and goes to the even one.

    >>> e = explain(3.5, "fp4_e2m1")
    >>> e.bit_string, float(e.value), e.decision
    ('0 11 0', 4.0, 'guard=1, round=0, sticky=0: exact tie, rounds to even (up)')
    >>> e.below.value, e.above.value, e.error_ulps, e.flags
    (Fraction(3, 1), Fraction(4, 1), Fraction(1, 2), ('inexact',))
    >>> explain("6.36", "fp32").bit_string
    '0 10000001 10010111000010100011111'

    One operation: 2048 + 1 = 2049 lies halfway between fp16's 2048 and 2050.

    >>> e = explain("2048 + 1", "fp16")
    >>> e.exact_text, float(e.value), e.decision
    ('2048 + 1 = 2049', 2048.0, 'guard=1, round=0, sticky=0: exact tie, rounds to even (down)')
    """
    fmt = as_format(fmt)
    attrs, _ = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                  saturate=saturate, rng=rng)  # checked; the rng is drawn from below
    x = scalar(x)
    try:
        given = exact_input(x)
    except ValueError as exc:
        operation = parse_operation(x) if isinstance(x, str) else None
        if operation is None:
            raise ValueError(f"{exc}; or an operation such as '2048 + 1', 'sqrt(2)' or "
                             "'fma(1.5, 2, -3)'") from None
        return explain_operation(x, operation, fmt, attrs, rng)
    return explain_value(x, given, fmt, attrs, rng)
