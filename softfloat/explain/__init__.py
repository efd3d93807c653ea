"""The teaching view: how one number -- or one operation's exact result -- becomes bits of
a format, and why those bits.

:func:`explain` rounds a single value with :func:`softfloat.encode` (the library's one
rounding point) and then *describes* the result: the exact input, the bit fields, the two
representable neighbours that bracket the input, the guard/round/sticky bits and the rule
that picked the neighbour, the error in absolute terms and in ulps, and the flags.  The
description is exact rational arithmetic on values that ``encode`` and ``decode``
produced; it never chooses bits itself, and it checks that its story matches the bits.

Given one operation (``"2048 + 1"``, ``"sqrt(2)"``, ``"fma(a, b, c)"``) it does the same
for the operation's exact result, with the bits and flags that :mod:`softfloat.ops`
returned: the operands are rounded into the format first, and each is explained too.

The package, in import order (each module imports only those above it):

``_text``        text of numbers and bit patterns (exact decimals, approximations, fields)
``_parse``       the expression parser (:func:`parse_operation`)
``_story``       the rounding story: guard/round/sticky, the rule of each mode, checked
                 against ``encode``'s bits
``_arithmetic``  the exact result of one operation on the operands' values
``_value``       :class:`Explanation`: one value, its views, and how it is built
``_operation``   :class:`OperationExplanation`: one operation
``_explain``     :func:`explain`, the entry point
"""

from ._explain import explain
from ._operation import OperationExplanation
from ._parse import parse_operation
from ._story import Neighbour
from ._text import bit_string
from ._value import Explanation

__all__ = ["Explanation", "Neighbour", "OperationExplanation", "bit_string", "explain", "parse_operation"]

# the public names are documented, shown and pickled as softfloat.explain's (their
# examples then run with this module's names, explain() among them)
for _public in (Explanation, Neighbour, OperationExplanation, bit_string, explain, parse_operation):
    _public.__module__ = __name__
del _public
