"""Correctly rounded operations on bit patterns, one module per family."""

from ._common import NAN_POLICY
from .add import add, sub
from .div import div
from .fma import fma
from .mul import mul
from .sqrt import sqrt

__all__ = ["NAN_POLICY", "add", "div", "fma", "mul", "sqrt", "sub"]
