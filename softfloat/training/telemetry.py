"""Telemetry: tidy per-step records and gradient exponent histograms.

:class:`Records` is a list of flat dicts (one per training step, numbers and strings only),
so it converts to JSON and, when pandas is installed, to a DataFrame; pandas is never
required.  :class:`ExponentHistogram` counts gradient values by binary exponent, as the
seeds' SSD histogram does, and reports the mass below 2**-24 (zero in fp16), below 2**-14
(fp16's subnormals) and above 65504 (fp16's overflow).
"""

from __future__ import annotations

import json
import math

import numpy as np

__all__ = ["ExponentHistogram", "Records"]

#: a step record's keys that every policy has (the per-tensor shares follow them)
STEP_KEYS = ("step", "epoch", "loss", "loss_scale", "skipped", "grad_underflow", "grad_overflow",
             "update_swamped")


class Records(list):
    """A list of flat dicts (one per step) that converts to JSON or a pandas DataFrame.

    Examples
    --------
    >>> from softfloat.training import Records
    >>> r = Records([{"step": 0, "loss": 2.5}, {"step": 1, "loss": 2.25}])
    >>> r.to_json()
    '[{"step": 0, "loss": 2.5}, {"step": 1, "loss": 2.25}]'
    >>> r.column("loss")
    [2.5, 2.25]
    """

    def column(self, key: str) -> list:
        """One key's values, in order."""
        return [rec[key] for rec in self]

    def to_json(self, **kwargs) -> str:
        return json.dumps(list(self), **kwargs)

    def to_pandas(self):
        """A pandas DataFrame (needs pandas: ``pip install pandas``)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Records.to_pandas needs pandas, which is not installed: pip install pandas "
                              "(or use .to_json() / the list of dicts itself)") from None
        return pd.DataFrame(list(self))


class ExponentHistogram:
    """Counts of non-zero finite values by binary exponent e (2**e <= |x| < 2**(e+1)),
    plus zeros and non-finite values.

    Examples
    --------
    >>> import numpy as np
    >>> from softfloat.training import ExponentHistogram
    >>> h = ExponentHistogram()
    >>> h.add(np.array([1.0, 3.0, 2.0**-30, 0.0, 1e6]))
    >>> h.counts[0], h.counts[1], h.zeros
    (1, 1, 1)
    >>> h.mass_below(2.0**-24), h.mass_above(65504.0)
    (0.25, 0.25)
    """

    LOW, HIGH = -1100, 1024  # float64's exponents, subnormals included

    def __init__(self):
        self.counts: dict[int, int] = {}
        self.zeros = 0
        self.nonfinite = 0
        self._below = {}
        self._above = {}
        self._values = 0

    def add(self, values: np.ndarray, scale: float = 1.0) -> None:
        """Count ``values / scale`` (exactly: float32 values with a power-of-two scale are
        read from their exponent bits; anything else through float64 ``frexp``)."""
        values = np.asarray(values)
        log2_scale = math.frexp(scale)[1] - 1 if scale > 0 and math.frexp(scale)[0] == 0.5 else None
        if values.dtype == np.float32 and log2_scale is not None:
            self._add_float32(values.reshape(-1), log2_scale)
        else:
            self._add_float64(np.asarray(values, np.float64).reshape(-1) / scale)

    def _add_float32(self, v: np.ndarray, log2_scale: int) -> None:
        # |v| = 1.f * 2**(field - 127) for a normal float32 (field = bits 30..23)
        u = v.view(np.uint32) & np.uint32(0x7FFFFFFF)
        field = (u >> np.uint32(23)).astype(np.intp)
        counts = np.bincount(field, minlength=256)
        self.nonfinite += int(counts[255])
        subnormal = u[(field == 0) & (u != 0)]
        self.zeros += int(counts[0] - subnormal.size)
        normal_counts = counts[1:255]
        exps = np.arange(1, 255) - 127 - log2_scale  # each field's binary exponent, unscaled
        for k in np.flatnonzero(normal_counts):
            e = int(exps[k])
            self.counts[e] = self.counts.get(e, 0) + int(normal_counts[k])
        self._values += int(normal_counts.sum())
        below = {t: int(normal_counts[exps < math.frexp(t)[1] - 1].sum()) for t in (2.0**-24, 2.0**-14)}
        with np.errstate(over="ignore"):
            limit = np.float32(65504.0 * 2.0**log2_scale)
        above = int(np.count_nonzero((u > limit.view(np.uint32)) & (field != 255)))
        for t, n in below.items():
            self._below[t] = self._below.get(t, 0) + n
        self._above[65504.0] = self._above.get(65504.0, 0) + above
        if subnormal.size:
            self._add_float64(subnormal.view(np.float32).astype(np.float64) / 2.0**log2_scale)

    def _add_float64(self, v: np.ndarray) -> None:
        v = np.abs(v)
        finite = np.isfinite(v)
        self.nonfinite += int(v.size - np.count_nonzero(finite))
        v = v[finite]
        nz = v[v != 0]
        self.zeros += int(v.size - nz.size)
        if nz.size:
            _, e = np.frexp(nz)  # nz = f * 2**e, f in [0.5, 1)
            e = e.astype(np.int64) - 1
            lo = int(e.min())
            for k, n in enumerate(np.bincount(e - lo)):
                if n:
                    self.counts[lo + k] = self.counts.get(lo + k, 0) + int(n)
        for t in (2.0**-24, 2.0**-14):
            self._below[t] = self._below.get(t, 0) + int(np.count_nonzero(nz < t))
        self._above[65504.0] = self._above.get(65504.0, 0) + int(np.count_nonzero(nz > 65504.0))
        self._values += int(nz.size)

    @property
    def nonzero(self) -> int:
        return self._values

    def mass_below(self, threshold: float) -> float:
        """Share of the non-zero finite values below ``threshold`` (2**-24 or 2**-14)."""
        return self._below.get(threshold, 0) / max(self._values, 1)

    def mass_above(self, threshold: float) -> float:
        """Share of the non-zero finite values above ``threshold`` (65504)."""
        return self._above.get(threshold, 0) / max(self._values, 1)

    def to_dict(self) -> dict:
        return {"exponents": {str(k): v for k, v in sorted(self.counts.items())}, "zeros": self.zeros,
                "nonfinite": self.nonfinite, "nonzero": self._values,
                "below_2^-24": self.mass_below(2.0**-24), "below_2^-14": self.mass_below(2.0**-14),
                "above_65504": self.mass_above(65504.0)}
