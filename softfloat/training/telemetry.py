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
import numbers

import numpy as np

from .. import _validate

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

    Multiplying every value by 2**k (loss scaling by 2**k) moves each count from bin e to
    bin e + k and changes no significand, so :meth:`shifted` gives the histogram of the
    scaled values exactly, shares included: the share below any power of two comes from
    the bins, and the share above fp16's largest value 65504 = (2 - 2**-10) * 2**15 from
    the bins plus, per bin, the count of significands above 2 - 2**-10.

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
    >>> h.shifted(8).mass_below(2.0**-24)    # loss scaling by 2**8 lifts 2**-30 to 2**-22
    0.0
    """

    LOW, HIGH = -1100, 1024  # float64's exponents, subnormals included
    #: fp16's largest finite value, the one threshold :meth:`mass_above` knows
    FP16_MAX = 65504.0

    def __init__(self):
        self.counts: dict[int, int] = {}
        self.zeros = 0
        self.nonfinite = 0
        # per bin e, the values whose significand |x| / 2**e exceeds 2 - 2**-10 (fp16's
        # largest, 1.1111111111b): in bin 15 exactly those above 65504
        self._top: dict[int, int] = {}
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

    def _bump(self, table: dict, exps: np.ndarray, counts: np.ndarray) -> None:
        for k in np.flatnonzero(counts):
            e = int(exps[k])
            table[e] = table.get(e, 0) + int(counts[k])

    def _add_float32(self, v: np.ndarray, log2_scale: int) -> None:
        # bits = s | eeeeeeee (field) | mmm...m (23): |v| = 1.m * 2**(field - 127) when normal
        u = v.view(np.uint32) & np.uint32(0x7FFFFFFF)
        # significand 1.m above 1.1111111111b (m above 1111111111 followed by 13 zeros):
        # exactly the values that carry into the next field when 0x1FFF is added, so
        # field + (the field of u + 0x1FFF) is 2 * field, or 2 * field + 1 for those:
        # one histogram of that sum holds both counts
        key = np.add(u, np.uint32(0x1FFF))
        key >>= np.uint32(23)
        key += u >> np.uint32(23)
        both = np.bincount(key, minlength=512)
        top = both[1::2]
        counts = both[0::2] + top
        self.nonfinite += int(counts[255])
        zeros = int(u.size - np.count_nonzero(u))
        self.zeros += zeros
        normal_counts = counts[1:255]
        exps = np.arange(1, 255) - 127 - log2_scale  # each field's binary exponent, unscaled
        self._bump(self.counts, exps, normal_counts)
        self._values += int(normal_counts.sum())
        self._bump(self._top, exps, top[1:255])
        if counts[0] > zeros:  # subnormals (rare): their exponents are below the field's
            subnormal = u[(u < np.uint32(0x800000)) & (u != 0)]
            self._add_float64(subnormal.view(np.float32).astype(np.float64) / 2.0**log2_scale)

    def _add_float64(self, v: np.ndarray) -> None:
        v = np.abs(v)
        finite = np.isfinite(v)
        self.nonfinite += int(v.size - np.count_nonzero(finite))
        v = v[finite]
        nz = v[v != 0]
        self.zeros += int(v.size - nz.size)
        if nz.size:
            f, e = np.frexp(nz)  # nz = f * 2**e, f in [0.5, 1): significand 2f, exponent e - 1
            e = e.astype(np.int64) - 1
            lo = int(e.min())
            exps = np.arange(lo, int(e.max()) + 1)
            self._bump(self.counts, exps, np.bincount(e - lo))
            self._bump(self._top, exps, np.bincount(e[f > 1 - 2.0**-11] - lo, minlength=exps.size))
        self._values += int(nz.size)

    @property
    def nonzero(self) -> int:
        return self._values

    def shifted(self, k: int) -> "ExponentHistogram":
        """The histogram of the same values multiplied by ``2**k`` (exactly, before any
        rounding): what loss scaling by ``2**k`` does to the gradients.

        >>> import numpy as np
        >>> from softfloat.training import ExponentHistogram
        >>> h = ExponentHistogram(); h.add(np.array([2.0**-26, 40000.0], np.float32))
        >>> sorted(h.shifted(3).counts), h.shifted(3).mass_above(65504.0)
        ([-23, 18], 0.5)
        """
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
            raise TypeError(f"k must be an int (the power of two of the scale); got {_validate.describe(k)}")
        out = ExponentHistogram()
        out.counts = {e + int(k): n for e, n in self.counts.items()}
        out._top = {e + int(k): n for e, n in self._top.items()}
        out.zeros, out.nonfinite, out._values = self.zeros, self.nonfinite, self._values
        return out

    def mass_below(self, threshold: float) -> float:
        """Share of the non-zero finite values below ``threshold``, a power of two (2**-24:
        zero in fp16; 2**-14: fp16's subnormals; 2**-133: zero in bf16)."""
        log2 = _power_of_two("threshold", threshold)
        return sum(n for e, n in self.counts.items() if e < log2) / max(self._values, 1)

    def mass_above(self, threshold: float) -> float:
        """Share of the non-zero finite values above ``threshold`` (65504, fp16's largest
        finite value, is the one threshold the bins resolve)."""
        if threshold != self.FP16_MAX:
            raise ValueError(f"mass_above knows threshold 65504.0 (fp16's largest value) only; got {threshold!r}")
        above = sum(n for e, n in self.counts.items() if e >= 16) + self._top.get(15, 0)
        return above / max(self._values, 1)

    def to_dict(self) -> dict:
        return {"exponents": {str(k): v for k, v in sorted(self.counts.items())}, "zeros": self.zeros,
                "nonfinite": self.nonfinite, "nonzero": self._values,
                "below_2^-24": self.mass_below(2.0**-24), "below_2^-14": self.mass_below(2.0**-14),
                "above_65504": self.mass_above(65504.0)}


def _power_of_two(name: str, value) -> int:
    """log2 of a positive finite power of two, or a ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a power of two such as 2.0**-24; got {_validate.describe(value)}")
    value = float(value)
    m, e = math.frexp(value) if math.isfinite(value) else (0.0, 0)
    if m != 0.5:
        raise ValueError(f"{name} must be a positive power of two such as 2.0**-24; got {value!r}")
    return e - 1
