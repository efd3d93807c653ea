"""The public keyword options of every rounding call, checked once into a Policy."""

from __future__ import annotations

import numbers

import numpy as np

from . import _validate
from ._round import Policy
from .rounding import Rounding, as_rounding, as_tininess

__all__ = ["policy_from_options"]


def policy_from_options(rounding, tininess, subnormals, saturate, rng):
    """Validate the rounding options; return ``(Policy, Generator or None)``.

    The generator is made only for stochastic rounding: from a seed, a Generator (used
    as is), or fresh entropy for ``rng=None``.
    """
    policy = Policy(
        rounding=as_rounding(rounding),
        tininess=as_tininess(tininess),
        subnormals=_validate.boolean("subnormals", subnormals),
        saturate=_validate.boolean("saturate", saturate),
    )
    seed_like = rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool))
    if not (seed_like or isinstance(rng, np.random.Generator)):
        raise TypeError(
            f"rng must be a numpy.random.Generator, an int seed or None; got {_validate.describe(rng)}"
        )
    if policy.rounding is not Rounding.STOCHASTIC:
        return policy, None
    return policy, (rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng))
