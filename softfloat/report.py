"""What rounding did to a tensor: the outcome of every value and the quantisation error.

:func:`outcomes` counts what became of the values of a result (exact, rounded, became
subnormal, became zero, saturated, became +-inf, NaN) from its bits and its flags;
:func:`error_stats` measures the error of a conversion (largest and mean absolute and
relative error, signal-to-quantisation-noise ratio).  Both stream through the arrays in
blocks, so they add no full-size temporaries.

Why outcomes are a function of ``(bits, fmt, flags)`` and not part of the flags: the
flags are what every kernel returns, per element, and they are exactly IEEE's five
exceptions; what a value *became* needs its result class as well, which only the bits
hold.  Computing the outcomes on request keeps every operation as cheap as before and
works the same for encode, the arithmetic and the reductions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _validate
from ._decode import decode_block
from ._encode import BLOCK_SIZE
from .flags import Flags, Outcomes
from .formats import Specials, as_format

__all__ = ["ErrorStats", "error_stats", "outcomes"]


# =====================================================================================
# outcomes
# =====================================================================================
def outcomes(bits, fmt, flags) -> Outcomes:
    """Count what became of each value of a result: one outcome per value.

    Parameters
    ----------
    bits : int or integer array_like
        The result's bit patterns of ``fmt`` (from :func:`~softfloat.encode`, an
        operation or a reduction).
    fmt : Format or str
    flags : Flags
        The flags returned with ``bits`` (``return_flags=True``), of the same shape.

    Returns
    -------
    Outcomes
        Counts (``.counts``), shares (``.shares``) and a printable summary; pass it to
        :meth:`Flags.summary` to print flags and outcomes together.

    Notes
    -----
    Each value gets the first outcome that applies, read from its result class and its
    flags: ``nan`` (the result is NaN), ``infinite`` (+-inf with overflow or
    divide_by_zero), ``saturated`` (overflow with a finite result), ``zero`` (+-0 with
    inexact or invalid: a non-zero value that became zero), ``subnormal`` (a non-zero
    subnormal, inexact), ``rounded`` (any other inexact result), ``exact``.  An infinity
    or a zero that stays one is exact.

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> x = np.array([1.0, 0.1, 1e-6, 1e-9, 70000.0, np.nan])
    >>> bits, flags = sf.encode(x, "fp16", return_flags=True)
    >>> o = sf.outcomes(bits, "fp16", flags)
    >>> o.counts
    {'exact': 1, 'rounded': 1, 'subnormal': 1, 'zero': 1, 'saturated': 0, 'infinite': 1, 'nan': 1}
    >>> print(flags.summary(o))
    IEEE flags:
      overflowed: 1 of 6 (16.7%)
      underflowed: 2 of 6 (33.3%)
      inexact: 4 of 6 (66.7%)
    outcomes:
      exact: 1 of 6 (16.7%)
      rounded: 1 of 6 (16.7%)
      became subnormal: 1 of 6 (16.7%)
      became zero: 1 of 6 (16.7%)
      became +-inf: 1 of 6 (16.7%)
      NaN: 1 of 6 (16.7%)
    """
    fmt = as_format(fmt)
    arr = _validate.bit_patterns("bits", bits, fmt.bits)
    _validate.instance("flags", flags, Flags,
                       "the softfloat.Flags returned with the bits (return_flags=True)")
    _validate.same_shape("flags", flags.shape, "bits", arr.shape, "pass the flags returned with these bits")
    flat_bits = arr.reshape(-1)
    masks = {name: np.asarray(mask).reshape(-1) for name, mask in flags}
    totals = dict.fromkeys(Outcomes().counts, 0)
    dt = np.uint64
    top = dt((1 << fmt.exponent_bits) - 1)
    for start in range(0, flat_bits.size, BLOCK_SIZE):
        stop = min(start + BLOCK_SIZE, flat_bits.size)
        b = flat_bits[start:stop].astype(dt)
        fl = {name: m[start:stop] for name, m in masks.items()}
        # |s|e..e|f..f|: the class of each result from its exponent and fraction fields
        exp = (b >> dt(fmt.mantissa_bits)) & top
        frac = b & dt(fmt.mantissa_mask)
        nan, inf = _specials(b, exp, frac, top, fmt)
        zero = (exp == 0) & (frac == 0) & ~nan
        subnormal = (exp == 0) & (frac != 0)
        left = np.ones(b.shape, dtype=bool)
        for name, where in (
            ("nan", nan),
            ("infinite", inf & (fl["overflow"] | fl["divide_by_zero"])),
            ("saturated", fl["overflow"] & ~inf),
            ("zero", zero & (fl["inexact"] | fl["invalid"])),
            ("subnormal", subnormal & fl["inexact"]),
            ("rounded", fl["inexact"]),
            ("exact", left),
        ):
            hit = where & left
            totals[name] += int(np.count_nonzero(hit))
            left &= ~hit
    return Outcomes(**totals)


def _specials(b, exp, frac, top, fmt):
    """NaN and infinity masks of the patterns ``b`` (see :class:`~softfloat.Specials`)."""
    none = np.zeros(b.shape, dtype=bool)
    if fmt.specials is Specials.IEEE:
        return (exp == top) & (frac != 0), (exp == top) & (frac == 0)
    if fmt.specials is Specials.FN:
        return (exp == top) & (frac == np.uint64(fmt.mantissa_mask)), none
    if fmt.specials is Specials.FNUZ:
        return b == np.uint64(fmt.sign_mask), none
    return none, none


# =====================================================================================
# error statistics
# =====================================================================================
@dataclass(frozen=True)
class ErrorStats:
    """The quantisation error of one conversion (from :func:`error_stats`).

    Attributes
    ----------
    count : int
        Values measured: those whose input and result are both finite.
    excluded : int
        Values left out: NaN or infinite inputs, and results that overflowed to +-inf or
        became NaN (their error is not a number).
    max_abs, mean_abs : float
        Largest and mean ``|q - x|`` over the measured values.
    max_rel, mean_rel : float
        Largest and mean ``|q - x| / |x|`` over the measured values with ``x != 0``
        (a zero input always gives an exact zero).
    sqnr_db : float
        Signal-to-quantisation-noise ratio ``10 log10(sum x**2 / sum (q - x)**2)`` in
        decibels; ``inf`` when every measured value is exact.

    Each is NaN where no value qualifies.  They are computed in float64 (the errors
    themselves are exact in float64 for float16/float32 input and for float64 input
    into formats of at most 26 bits of precision; the sums and ratios are rounded).

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> x = np.array([1.0, 3.3, np.inf])                  # 3.3 -> 3.296875 in bf16
    >>> s = sf.error_stats(x, sf.encode(x, "bf16"), "bf16")
    >>> s.count, s.excluded, round(s.max_abs, 9), round(s.sqnr_db, 1)
    (2, 1, 0.003125, 60.9)
    """

    count: int
    excluded: int
    max_abs: float
    mean_abs: float
    max_rel: float
    mean_rel: float
    sqnr_db: float

    def to_dict(self) -> dict:
        """The statistics as a plain dictionary."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def summary(self) -> str:
        """Three lines: absolute error, relative error, SQNR (and what was left out)."""
        lines = [f"abs error: max {self.max_abs:.4g}, mean {self.mean_abs:.4g}",
                 f"rel error: max {self.max_rel:.4g}, mean {self.mean_rel:.4g}",
                 f"SQNR: {self.sqnr_db:.2f} dB over {_validate.counted(self.count)}"]
        if self.excluded:
            lines[-1] += f" ({_validate.counted(self.excluded)} left out: NaN or infinite input or result)"
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def error_stats(x, bits, fmt) -> ErrorStats:
    """Quantisation error of ``bits`` (``x`` encoded into ``fmt``) against ``x``.

    Parameters
    ----------
    x : array_like
        The original values: a float16/32/64 or integer array, a list, or a Python number.
    bits : int or integer array_like
        Their bit patterns in ``fmt``, of ``x``'s shape (what :func:`~softfloat.encode`
        returned for ``x``, in any rounding mode).
    fmt : Format or str

    Returns
    -------
    ErrorStats
        ``max_abs``, ``mean_abs``, ``max_rel``, ``mean_rel``, ``sqnr_db``, over the values
        whose input and result are finite (``count``; the others are ``excluded``).

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> x = np.array([1.0, 1 + 2**-11, 3.0, -0.5])     # 1 + 2**-11: a tie, rounds to 1.0
    >>> s = sf.error_stats(x, sf.encode(x, "fp16"), "fp16")
    >>> s.max_abs == 2**-11, s.mean_abs == 2**-13, s.count
    (True, True, 4)
    >>> print(s)
    abs error: max 0.0004883, mean 0.0001221
    rel error: max 0.000488, mean 0.000122
    SQNR: 76.74 dB over 4 values
    """
    acc = ErrorAccumulator()
    acc.add(x, bits, fmt)
    return acc.stats()


class ErrorAccumulator:
    """:func:`error_stats` of an array handed over piece by piece: ``add`` each piece
    (its values and their bits), then ``stats()`` -- the same numbers as one call on the
    whole array, for arrays too large to encode at once (one tensor of a checkpoint).

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> from softfloat.report import ErrorAccumulator
    >>> x = np.array([1.0, 1 + 2**-11, 3.0, -0.5])
    >>> acc = ErrorAccumulator()
    >>> for piece in (x[:1], x[1:]):
    ...     acc.add(piece, sf.encode(piece, "fp16"), "fp16")
    >>> acc.stats() == sf.error_stats(x, sf.encode(x, "fp16"), "fp16")
    True
    """

    def __init__(self):
        self.size = self.count = self.rel_count = 0
        self.max_abs = self.max_rel = self.sum_abs = self.sum_rel = 0.0
        self.signal, self.noise = _PowerSum(), _PowerSum()

    def add(self, x, bits, fmt) -> None:
        """Take in one piece: ``x`` and its bit patterns in ``fmt`` (as for error_stats)."""
        fmt = as_format(fmt)
        arr = _validate.numeric_array("x", x)
        b = _validate.bit_patterns("bits", bits, fmt.bits)
        _validate.same_shape("bits", b.shape, "x", arr.shape, "pass the bits encode returned for x")
        flat_x, flat_b = arr.reshape(-1), b.reshape(-1)
        self.size += flat_x.size
        with np.errstate(all="ignore"):
            for start in range(0, flat_x.size, BLOCK_SIZE):
                stop = min(start + BLOCK_SIZE, flat_x.size)
                xs = np.asarray(flat_x[start:stop], dtype=np.float64)
                q = decode_block(np.asarray(flat_b[start:stop]).astype(np.uint64), fmt)
                keep = np.isfinite(xs) & np.isfinite(q)
                xs, q = xs[keep], q[keep]
                err = np.abs(q - xs)
                self.count += xs.size
                if xs.size:
                    self.max_abs = max(self.max_abs, float(err.max()))
                    self.sum_abs += float(np.sum(err))
                    self.signal.add(xs)
                    self.noise.add(err)
                nonzero = xs != 0
                if nonzero.any():
                    rel = err[nonzero] / np.abs(xs[nonzero])
                    self.rel_count += rel.size
                    self.max_rel = max(self.max_rel, float(rel.max()))
                    self.sum_rel += float(np.sum(rel))

    def stats(self) -> ErrorStats:
        """The statistics of everything added so far."""
        nan = math.nan
        if not self.count:
            return ErrorStats(0, self.size, nan, nan, nan, nan, nan)
        return ErrorStats(
            count=self.count,
            excluded=self.size - self.count,
            max_abs=self.max_abs,
            mean_abs=self.sum_abs / self.count,
            max_rel=self.max_rel if self.rel_count else nan,
            mean_rel=self.sum_rel / self.rel_count if self.rel_count else nan,
            sqnr_db=_sqnr_db(self.signal, self.noise),
        )


class _PowerSum:
    """sum(v**2) over blocks, kept as ``(s, e)`` pairs meaning s * 4**e with s <= the block
    size: each block is scaled by a power of two near its largest |v| first, so no square
    overflows or underflows float64 whatever the magnitudes."""

    def __init__(self):
        self.parts: list[tuple[float, int]] = []

    def add(self, v: np.ndarray) -> None:
        peak = float(np.max(np.abs(v)))
        if peak == 0:
            return
        e = math.frexp(peak)[1]  # peak < 2**e
        scaled = np.ldexp(v, -e)  # |scaled| < 1, exact
        # einsum, not np.dot: BLAS's threads, spinning on a busy machine, made this dot
        # cost ~1 us per element (measured on 2 loaded cores); einsum's loop is ~2 ns
        self.parts.append((float(np.einsum("i,i->", scaled, scaled)), e))

    def log10(self) -> float:
        """log10 of the sum; -inf for an empty or all-zero sum."""
        if not self.parts:
            return -math.inf
        top = max(e for _, e in self.parts)
        total = math.fsum(s * 4.0 ** (e - top) for s, e in self.parts)
        return math.log10(total) + 2 * top * math.log10(2)


def _sqnr_db(signal: _PowerSum, noise: _PowerSum) -> float:
    n = noise.log10()
    if n == -math.inf:
        return math.inf
    return 10 * (signal.log10() - n)
