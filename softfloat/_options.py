"""The public keyword options of every rounding call, checked once into a Policy."""

from __future__ import annotations

import numbers

import numpy as np

from . import _validate
from ._round import Policy
from .rounding import Rounding, as_rounding, as_tininess

__all__ = ["policy_from_options"]


#: options as passed (with their types, so that 1 is not taken for True) -> the Policy
#: they validated to.  Calls repeat the same few strings and bools; a hit skips the enum
#: coercion, which costs tens of microseconds when a large array has just pushed the
#: interpreter's data out of the caches (measured: about 0.1 ns per element of a 2**22
#: float32 -> bf16 encode).  Bounded: cleared when it grows past _MAX_POLICIES.
_POLICIES: dict = {}
_MAX_POLICIES = 256


def policy_from_options(rounding, tininess, subnormals, saturate, rng):
    """Validate the rounding options; return ``(Policy, Generator or None)``.

    The generator is made only for stochastic rounding: from a seed, a Generator (used
    as is), or fresh entropy for ``rng=None``.
    """
    key = (rounding, tininess, subnormals, saturate,
           type(rounding), type(tininess), type(subnormals), type(saturate))
    try:
        policy = _POLICIES.get(key)
    except TypeError:  # an unhashable option: validated (and refused) below
        key = policy = None
    if policy is None:
        policy = Policy(
            rounding=as_rounding(rounding),
            tininess=as_tininess(tininess),
            subnormals=_validate.boolean("subnormals", subnormals),
            saturate=_validate.boolean("saturate", saturate),
        )
        if key is not None:
            if len(_POLICIES) >= _MAX_POLICIES:
                _POLICIES.clear()
            _POLICIES[key] = policy
    seed_like = rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool))
    if not (seed_like or isinstance(rng, np.random.Generator)):
        raise TypeError(
            f"rng must be a numpy.random.Generator, an int seed or None; got {_validate.describe(rng)}"
        )
    if policy.rounding is not Rounding.STOCHASTIC:
        return policy, None
    return policy, (rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng))
