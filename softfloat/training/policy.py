"""Precision policies: the lab's name for :mod:`softfloat.recipes`.

:class:`Policy` is :class:`softfloat.recipes.Recipe`, :data:`PRESETS` is
:data:`softfloat.recipes.RECIPES` and :func:`as_policy` is :func:`softfloat.recipes.as_recipe`
(the same objects): one set of recipes for the lab and the other front ends.  The model,
the optimizer and the loss scaler read a policy and never branch on its name.

>>> import softfloat.recipes
>>> from softfloat.training import PRESETS, Policy, as_policy
>>> Policy is softfloat.recipes.Recipe, PRESETS is softfloat.recipes.RECIPES
(True, True)
>>> as_policy("O2").name
'O2'
"""

from __future__ import annotations

from ..recipes import RECIPES as PRESETS
from ..recipes import SCALINGS as FP8_RECIPES
from ..recipes import Recipe as Policy
from ..recipes import as_recipe as as_policy

__all__ = ["FP8_RECIPES", "PRESETS", "Policy", "as_policy"]
