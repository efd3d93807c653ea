"""Correctly rounded operations on bit patterns, one module per family.

The layers above that compose exact arithmetic of their own (softfloat.accumulate, the
array layer) take the kernels and the hand-off to the rounding point from
:mod:`softfloat.ops.kernels`, the one published interface to the operations' internals."""

from ._nan import NAN_POLICY
from .add import add, sub
from .compare import (
    eq,
    ge,
    gt,
    le,
    lt,
    maximum,
    maximum_magnitude,
    maximum_magnitude_number,
    maximum_number,
    minimum,
    minimum_magnitude,
    minimum_magnitude_number,
    minimum_number,
    ne,
    next_down,
    next_up,
    total_order,
    total_order_mag,
    ulp,
    unordered,
)
from .convert import INVALID_INTEGER, convert, from_int, round_to_integral, to_int
from .div import div
from .fma import fma
from .mul import mul
from .sign import abs, copysign, neg  # noqa: A004 - IEEE's name; kept out of __all__
from .sqrt import sqrt

__all__ = [
    "INVALID_INTEGER", "NAN_POLICY", "add", "convert", "copysign", "div", "eq", "fma",
    "from_int", "ge", "gt", "le", "lt", "maximum", "maximum_magnitude",
    "maximum_magnitude_number", "maximum_number", "minimum", "minimum_magnitude",
    "minimum_magnitude_number", "minimum_number", "mul", "ne", "neg", "next_down", "next_up",
    "round_to_integral", "sqrt", "sub", "to_int", "total_order", "total_order_mag", "ulp",
    "unordered",
]
