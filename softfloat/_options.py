"""A rounding call's ``attributes=`` and keyword shortcuts, checked once into one value."""

from __future__ import annotations

import functools

import numpy as np

from . import _validate
from ._fpenv import require_subnormals
from .attributes import RoundingAttributes, as_attributes
from .rounding import Rounding

__all__ = ["resolve_attributes", "generator_for"]


def resolve_attributes(attributes=None, *, rounding=None, tininess=None, subnormals=None, saturate=None,
                       rng=None, host=True):
    """Validate; return ``(RoundingAttributes, Generator or None)``.

    ``attributes`` (None: the defaults) with every keyword that is not None put in its
    place -- a keyword given wins.  The generator is made only for stochastic rounding.
    ``host``: the caller computes on this thread's CPU, which must keep subnormals
    (:func:`softfloat._fpenv.require_subnormals`; False for work on another device).
    """
    if host:
        require_subnormals()
    if (type(attributes) is RoundingAttributes and rng is None and rounding is None and tininess is None
            and subnormals is None and saturate is None and attributes.rounding is not Rounding.STOCHASTIC):
        return attributes, None  # the array layer's call: its context's attributes, nothing to merge
    given = (rounding, tininess, subnormals, saturate)
    if (attributes is None or type(attributes) is RoundingAttributes) and all(type(v) in _PLAIN for v in given):
        attrs = _merged(attributes, *given)  # the same object for the same call: plans found by identity
    else:
        attrs = _merge(attributes, *given)
    return attrs, generator_for(attrs, rng)


#: the keyword values whose merge :func:`_merged` keeps (hashable, compared by type and value)
_PLAIN = frozenset({type(None), str, bool, Rounding})


def _merge(attributes, rounding, tininess, subnormals, saturate) -> RoundingAttributes:
    """``attributes`` (checked) with the keywords that are not None in place."""
    attrs = as_attributes(attributes)
    changes = {name: value for name, value in (("rounding", rounding), ("tininess", tininess),
                                               ("subnormals", subnormals), ("saturate", saturate))
               if value is not None}
    return attrs.replace(**changes) if changes else attrs


#: :func:`_merge` of plain values, kept: a loop of calls (a training step's casts) gets one
#: RoundingAttributes, which the fast paths' plan lookup recognises by identity, and no
#: dataclass made per call.  typed: 1 is not True (the checks refuse it)
_merged = functools.lru_cache(maxsize=256, typed=True)(_merge)


def generator_for(attrs: RoundingAttributes, rng):
    """The Generator stochastic rounding draws from (None for the other modes): ``rng``
    itself, or one seeded from an int or from fresh entropy (``rng=None``)."""
    _validate.rng_argument(rng)
    if attrs.rounding is not Rounding.STOCHASTIC:
        return None
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
