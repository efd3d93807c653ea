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

from .._validate import missing_dependency as _missing_dependency

try:
    from hypothesis import strategies as _st  # what the modules below import
    from hypothesis.extra import numpy as _hnp
except ImportError as exc:  # pragma: no cover - checked in a subprocess by the tests
    raise ImportError(_missing_dependency("softfloat.strategies", "hypothesis")) from exc
del _st, _hnp

# values and bit patterns (_values: the plan in _plan, _bounds and _order, the draws in
# _draws, _around, _magnitudes and _classes), arrays of them, formats and rounding modes
from ._arrays import arrays
from ._formats import formats, rounding_modes
from ._values import bits, values

__all__ = ["values", "bits", "arrays", "formats", "rounding_modes"]

# the public names are documented and shown as softfloat.strategies' (their examples then
# run with this module's names)
for _public in (values, bits, arrays, formats, rounding_modes):
    _public.__module__ = __name__
del _public
