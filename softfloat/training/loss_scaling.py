"""Loss scaling: static and dynamic, with torch.amp.GradScaler's semantics and defaults.

GradScaler's update rule (``torch._amp_update_scale_``), with the scale held as an fp32
number as torch holds it:

* a step whose gradients contain an inf or NaN is skipped; the scale is multiplied by
  ``backoff_factor`` and the count of consecutive clean steps restarts at 0;
* after a clean step the count grows by one; when it reaches ``growth_interval`` the scale
  is multiplied by ``growth_factor`` -- only if the product is finite -- and the count
  restarts at 0;
* gradients are unscaled by multiplying them by the fp32 reciprocal of the scale.

Apex's dynamic scaler adds a cap: growth never goes above ``max_scale`` (2**24 in Apex);
GradScaler has none (``max_scale=None``, the default here).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

from .. import _validate

__all__ = ["LossScaler"]


def _positive(name, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive number; got {_validate.describe(value)}")
    value = float(value)
    if not (value > 0 and np.isfinite(value)):
        raise ValueError(f"{name} must be a positive finite number; got {value!r}")
    return value


class LossScaler:
    """A loss scale and its update rule (torch.amp.GradScaler's, optionally capped as Apex's).

    Parameters
    ----------
    init_scale : float, default 2**16
    growth_factor : float, default 2.0
        Must be > 1.
    backoff_factor : float, default 0.5
        Must be in (0, 1).
    growth_interval : int, default 2000
        Consecutive clean steps before the scale grows.
    max_scale : float, optional
        Apex's cap on growth (Apex uses 2**24); None: no cap, as GradScaler.
    dynamic : bool, default True
        False: a static scale that :meth:`update` never changes (and steps with inf/NaN
        gradients are not skipped, as in Apex's static loss scaling).

    Attributes
    ----------
    scale : float
        The current scale (an fp32 value).
    growth_tracker : int
        Consecutive clean steps since the last change.

    Examples
    --------
    >>> from softfloat.training import LossScaler
    >>> s = LossScaler(init_scale=1024.0, growth_interval=2)
    >>> scales = []
    >>> for found_inf in [False, False, True, False]:
    ...     s.update(found_inf)
    ...     scales.append(s.scale)
    >>> scales
    [1024.0, 2048.0, 1024.0, 1024.0]
    >>> s.state_dict()["growth_tracker"]
    1
    """

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 *, max_scale=None, dynamic=True):
        self._scale = np.float32(_positive("init_scale", init_scale))
        if not np.isfinite(self._scale):
            raise ValueError(f"init_scale must be a finite fp32 number; got {init_scale!r}")
        self.growth_factor = _positive("growth_factor", growth_factor)
        if self.growth_factor <= 1:
            raise ValueError(f"growth_factor must be > 1; got {growth_factor!r}")
        self.backoff_factor = _positive("backoff_factor", backoff_factor)
        if self.backoff_factor >= 1:
            raise ValueError(f"backoff_factor must be < 1; got {backoff_factor!r}")
        interval = _validate.count("growth_interval", growth_interval)
        if interval < 1:
            raise ValueError(f"growth_interval must be >= 1; got {growth_interval!r}")
        self.growth_interval = interval
        self.max_scale = None if max_scale is None else _positive("max_scale", max_scale)
        self.dynamic = _validate.boolean("dynamic", dynamic)
        self.growth_tracker = 0

    @property
    def scale(self) -> float:
        return float(self._scale)

    @property
    def inv_scale(self) -> np.float32:
        """The fp32 reciprocal of the scale, as GradScaler unscales with."""
        return np.float32(1.0 / float(self._scale))

    def skips(self, found_inf: bool) -> bool:
        """Whether a step with these gradients is skipped (dynamic scaling only)."""
        return bool(found_inf) and self.dynamic

    def update(self, found_inf: bool) -> None:
        """One step's update of the scale (see the module docstring)."""
        found_inf = _validate.boolean("found_inf", found_inf)
        if not self.dynamic:
            return
        with np.errstate(over="ignore"):
            if found_inf:
                self._scale = np.float32(self._scale * np.float32(self.backoff_factor))
                self.growth_tracker = 0
                return
            successful = self.growth_tracker + 1
            if successful == self.growth_interval:
                grown = np.float32(self._scale * np.float32(self.growth_factor))
                if self.max_scale is not None:
                    grown = min(grown, np.float32(self.max_scale))
                if np.isfinite(grown):
                    self._scale = np.float32(grown)
                self.growth_tracker = 0
            else:
                self.growth_tracker = successful

    def state_dict(self) -> dict:
        """The scaler's state as plain numbers (JSON-ready).

        >>> from softfloat.training import LossScaler
        >>> LossScaler().state_dict()["scale"]
        65536.0
        """
        return {"scale": self.scale, "growth_factor": self.growth_factor, "backoff_factor": self.backoff_factor,
                "growth_interval": self.growth_interval, "growth_tracker": self.growth_tracker,
                "max_scale": self.max_scale, "dynamic": self.dynamic}

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict`'s output.

        >>> from softfloat.training import LossScaler
        >>> s = LossScaler(); s.load_state_dict({**s.state_dict(), "scale": 8.0}); s.scale
        8.0
        """
        if not isinstance(state, Mapping):
            raise TypeError(f"state must be the dict state_dict() returns; got {_validate.describe(state)}")
        missing = [k for k in ("scale", "growth_factor", "backoff_factor", "growth_interval", "growth_tracker")
                   if k not in state]
        if missing:  # (a KeyError naming one key before)
            raise ValueError(f"state lacks {', '.join(map(repr, missing))}; pass the dict state_dict() returns")
        self._scale = np.float32(_positive("scale", state["scale"]))
        self.growth_factor = float(state["growth_factor"])
        self.backoff_factor = float(state["backoff_factor"])
        self.growth_interval = int(state["growth_interval"])
        self.growth_tracker = int(state["growth_tracker"])
        self.max_scale = state.get("max_scale")
        self.dynamic = bool(state.get("dynamic", True))

    def __repr__(self) -> str:
        return (f"LossScaler(scale={self.scale}, growth_factor={self.growth_factor}, backoff_factor="
                f"{self.backoff_factor}, growth_interval={self.growth_interval}, max_scale={self.max_scale}, "
                f"dynamic={self.dynamic})")
