"""The rounding attributes of a computation, as one value.

IEEE 754-2019 section 4 calls the settings that change how results are rounded
*attributes* of a block of code.  :class:`RoundingAttributes` holds all of them that
softfloat models -- the rounding direction, the tininess choice, gradual underflow or
flush-to-zero, saturation at overflow and the :class:`~softfloat.Platform` whose NaN and
integer rules apply -- checked once, immutable and hashable.

Every rounding function accepts one as ``attributes=``; its keywords (``rounding=``,
``tininess=``, ``subnormals=``, ``saturate=``) stay as shortcuts, and **a keyword that is
given wins over the same field of** ``attributes``.  :func:`softfloat.context` holds one
for the array layer (``ctx.attributes``).

>>> import softfloat as sf
>>> arm_up = sf.RoundingAttributes(rounding="upward", platform="arm")
>>> arm_up.tininess                              # the platform's unless given
<Tininess.BEFORE: 'before'>
>>> int(sf.encode(0.1, "bf16", attributes=arm_up)), int(sf.encode(0.1, "bf16"))
(15821, 15821)
>>> int(sf.encode(0.1, "bf16", attributes=arm_up, rounding="toward_zero"))   # keyword wins
15820
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from . import _validate
from .platforms import PLATFORMS, Platform, as_platform
from .rounding import Rounding, Tininess, as_rounding, as_tininess

__all__ = ["DEFAULT_ATTRIBUTES", "RoundingAttributes", "as_attributes"]


@dataclass(frozen=True)
class RoundingAttributes:
    """How every rounding of a computation is done.

    Parameters
    ----------
    rounding : Rounding or str, default "nearest_even"
        Any :class:`~softfloat.Rounding` mode, ``stochastic`` and ``odd`` included.
    tininess : {"after", "before"} or None, default None
        When underflow is detected; None takes the platform's.
    subnormals : bool, default True
        False flushes subnormal results to zero (and raises underflow and inexact).
    saturate : bool, default False
        Overflow goes to +-max_finite instead of infinity; conversions to integers clamp.
    platform : Platform or str, default "default"
        A preset of :data:`softfloat.PLATFORMS` ("default", "x86-sse", "arm",
        "arm-default-nan", "riscv", "cuda") or a :class:`~softfloat.Platform`: the
        default NaN, NaN propagation and invalid integer results.

    Notes
    -----
    ``replace(**changes)`` gives a copy with some fields changed; changing the platform
    alone also moves a tininess that was the old platform's to the new one's.

    Examples
    --------
    >>> import softfloat as sf
    >>> ftz = sf.RoundingAttributes(subnormals=False)
    >>> float(sf.quantize(1e-6, "fp16")), float(sf.quantize(1e-6, "fp16", attributes=ftz))
    (1.0132789611816406e-06, 0.0)
    >>> ftz.replace(rounding="upward")
    RoundingAttributes(rounding=upward, subnormals=False)
    """

    rounding: Rounding = Rounding.NEAREST_EVEN
    tininess: Tininess | None = None
    subnormals: bool = True
    saturate: bool = False
    platform: Platform = PLATFORMS["default"]

    def __post_init__(self):
        platform = as_platform(self.platform)
        set_ = object.__setattr__
        set_(self, "rounding", as_rounding(self.rounding))
        set_(self, "tininess", platform.tininess if self.tininess is None else as_tininess(self.tininess))
        set_(self, "subnormals", _validate.boolean("subnormals", self.subnormals))
        set_(self, "saturate", _validate.boolean("saturate", self.saturate))
        set_(self, "platform", platform)

    def replace(self, **changes) -> RoundingAttributes:
        """A copy with ``changes`` (the same keywords as the constructor)."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise TypeError(f"RoundingAttributes has no field(s) {sorted(unknown)}; the fields are "
                            f"{', '.join(f.name for f in dataclasses.fields(self))}")
        if "platform" in changes and "tininess" not in changes and self.tininess is self.platform.tininess:
            changes["tininess"] = None
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        changed = [f"{f.name}={getattr(self, f.name)!s}" for f in dataclasses.fields(self)
                   if getattr(self, f.name) != getattr(DEFAULT_ATTRIBUTES, f.name)]
        return f"RoundingAttributes({', '.join(changed)})"


DEFAULT_ATTRIBUTES = RoundingAttributes()


def as_attributes(attributes, argname: str = "attributes") -> RoundingAttributes:
    """``attributes`` checked: a RoundingAttributes, or None for the defaults."""
    if attributes is None:
        return DEFAULT_ATTRIBUTES
    if not isinstance(attributes, RoundingAttributes):
        raise TypeError(f"{argname} must be a softfloat.RoundingAttributes or None; got "
                        f"{_validate.describe(attributes)}")
    return attributes
