"""Recipes as data: mixed-precision training recipes and the matrix products they define.

One set of recipes, shared by the training lab (:mod:`softfloat.training`, which calls a
recipe a Policy) and by front ends that run a model's products emulated.  Each recipe is
frozen data documented with its source; each product of a recipe is a composition of
bit-level calls (:func:`softfloat.encode`, :func:`softfloat.scaled_encode`,
:func:`softfloat.matmul`, :func:`softfloat.decode`), stated in :class:`GemmEngine`.

Recipe, RECIPES, as_recipe, SCALINGS, check_accumulator
    The recipes: "fp32", "O1", "O2", "O3", "bf16", "bf16-pure", "fp8", "fp8-current",
    "fp8-block", "mxfp8", "fp16", "mxfp4"; custom ones by keyword.
GemmEngine, KINDS
    The forward and backward products of a recipe, with their scaling state.
GemmRecord, OperandRecord
    What one product did: underflow, overflow, amax and scale per operand, swamped
    additions.

>>> from softfloat.recipes import RECIPES, GemmEngine
>>> RECIPES["fp8"].fp8_backward.name
'fp8_e5m2'
>>> GemmEngine("fp8", accumulator="h100").accumulator
'h100'
"""

from __future__ import annotations

from ._gemm import KINDS, GemmEngine
from ._recipe import RECIPES, SCALINGS, Recipe, as_recipe, check_accumulator
from ._record import GemmRecord, OperandRecord

__all__ = ["GemmEngine", "GemmRecord", "KINDS", "OperandRecord", "RECIPES", "Recipe", "SCALINGS", "as_recipe",
           "check_accumulator"]
