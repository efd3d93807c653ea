"""DelayedScaling: Transformer Engine's amax history and the scale it gives."""

from __future__ import annotations

import numpy as np

from .. import _validate
from ._arguments import _AMAX_ALGOS, _amax_argument, _element_format
from ._fp32 import _round_fp32
from ._scales import fp32_scales


class DelayedScaling:
    """Transformer Engine's delayed scaling for one tensor: an amax history and its scale.

    The recipe of ``transformer_engine.common.recipe.DelayedScaling`` with its defaults
    (amax history of 1024 steps, "max" over the window, margin 0) as its
    ``delayed_scaling.cu`` kernel computes it: each step the tensor is cast with the
    current :attr:`scale`, its amax is recorded, and the next scale is
    ``fp32(max * 2**-margin) / amax_window`` in fp32 -- where amax_window is the largest
    of the last ``amax_history_len`` amaxes ("max") or the latest one ("most_recent") --
    or the previous scale when that amax is 0, infinite or NaN; a scale that overflows
    fp32 becomes fp32's max.  The first step uses scale 1, as TE does.

    Parameters
    ----------
    fmt : Format or str, default "e4m3"
        The element format whose max the scale aims at (E4M3 forward, E5M2 gradients in
        TE's HYBRID recipe).
    amax_history_len : int, default 1024
    amax_compute_algo : {"max", "most_recent"}, default "max"
    margin : int, default 0

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> ds = sf.DelayedScaling("e4m3", amax_history_len=2)
    >>> for x in ([1.0, -2.0], [8.0], [0.5], [0.0]):
    ...     t = sf.scaled_encode(np.array(x), "e4m3", scale=ds.scale)   # cast, then ...
    ...     print(float(t.scales), ds.update(t.amax))                  # ... record amax
    1.0 224.0
    224.0 56.0
    56.0 56.0
    56.0 896.0
    >>> ds.amax_history.tolist(), ds.scale_inv
    ([0.5, 0.0], 0.0011160714784637094)
    """

    def __init__(self, fmt="e4m3", *, amax_history_len=1024, amax_compute_algo="max", margin=0):
        self.format = _element_format(fmt)
        self.amax_history_len = _validate.int_in_range("amax_history_len", amax_history_len, 1, 1 << 30)
        self.amax_compute_algo = _validate.one_of("amax_compute_algo", amax_compute_algo, _AMAX_ALGOS)
        self.margin = _validate.int_in_range("margin", margin, 0, 64)
        self._ring = np.zeros(self.amax_history_len)  # the recorded amaxes, a ring buffer
        self._count = 0
        self._scale = 1.0

    @property
    def scale(self) -> float:
        """The fp32 scale to cast the next step with."""
        return self._scale

    @property
    def scale_inv(self) -> float:
        """The scale's reciprocal rounded to fp32 (TE's ``scale_inv``)."""
        return float(_round_fp32(np.float64(1.0) / self._scale))

    @property
    def amax_history(self) -> np.ndarray:
        """The recorded amaxes (fp32), oldest first, at most ``amax_history_len``."""
        n, size = self._count, self.amax_history_len
        ring = self._ring if n <= size else np.roll(self._ring, -(n % size))
        return ring[:min(n, size)].astype(np.float32)

    def update(self, amax) -> float:
        """Record this step's amax (a number, rounded to fp32) and return the new scale."""
        a = float(_round_fp32(_amax_argument(amax, (), "one number, this step's amax (shape ())")))
        self._ring[self._count % self.amax_history_len] = a
        self._count += 1
        if self.amax_compute_algo == "max":  # fmaxf: NaNs ignored, as TE's reduction does
            window = np.fmax.reduce(self._ring[:min(self._count, self.amax_history_len)], initial=0.0)
        else:
            window = a
        self._scale = float(fp32_scales(window, self.format, margin=self.margin, previous=self._scale))
        return self._scale

    def state_dict(self) -> dict:
        """The recipe and its state, as plain Python values (JSON-ready)."""
        return {"format": self.format.name, "amax_history_len": self.amax_history_len,
                "amax_compute_algo": self.amax_compute_algo, "margin": self.margin,
                "scale": self._scale, "amax_history": self.amax_history.astype(float).tolist()}

    def __repr__(self) -> str:
        return (f"DelayedScaling({self.format.name!r}, amax_history_len={self.amax_history_len}, "
                f"amax_compute_algo={self.amax_compute_algo!r}, margin={self.margin}, "
                f"scale={self._scale!r}, steps={self._count})")
