"""What one matrix product of a recipe did: per operand, what its rounding into the
recipe's format did (from the IEEE flags of :func:`softfloat.encode` or
:func:`softfloat.scaled_encode`), and the accumulator's swamped additions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..formats import Format, as_format

__all__ = ["GemmRecord", "OperandRecord"]


@dataclass(frozen=True)
class OperandRecord:
    """One rounding of a tensor into a format: what it did, as counts.

    Attributes
    ----------
    format : Format
        The format the values were rounded into.
    elements : int
        How many values were rounded.
    underflow_zero : int
        IEEE underflow (tiny and inexact) with a zero result: non-zero values that became 0.
    underflow_subnormal : int
        IEEE underflow with a non-zero result: values that became (inexact) subnormals.
    overflow : int
        IEEE overflow: values beyond the format's range, rounded to an infinity (or NaN),
        or saturated to +-max (satfinite raises overflow too).
    nonfinite : int
        Results that are infinities or NaNs.
    amax : float or None
        The largest magnitude of the tensor (over all its blocks) where the rounding was
        scaled; None where it was not.
    scale : float, numpy.ndarray or None
        What the values were multiplied by before the rounding: one fp32 scale (per-tensor
        scaling), an array with one per tile (DeepSeek-V3 blocks) or per block of 32 (MX:
        1/X, a power of two); None where unscaled.

    Examples
    --------
    >>> import softfloat as sf
    >>> from softfloat.recipes import OperandRecord
    >>> values = [1.0, 1e-9, 1e5]
    >>> bits, flags = sf.encode(values, "fp16", return_flags=True)
    >>> r = OperandRecord.from_flags("fp16", flags, sf.decode(bits, "fp16"))
    >>> r.elements, r.underflow_zero, r.overflow, r.nonfinite
    (3, 1, 1, 1)
    """

    format: Format
    elements: int
    underflow_zero: int
    underflow_subnormal: int
    overflow: int
    nonfinite: int
    amax: float | None = None
    scale: object = None

    @classmethod
    def from_flags(cls, fmt, flags, rounded, *, amax=None, scale=None) -> "OperandRecord":
        """The counts from the IEEE flags of the rounding and its results ``rounded``
        (values): underflow split by its result, zero or not; overflow as flagged; NaN and
        infinite results."""
        rounded = np.asarray(rounded)
        under = np.asarray(flags.underflow)
        to_zero = int(np.count_nonzero(under & (rounded == 0)))
        nonfinite = int(rounded.size - np.count_nonzero(np.isfinite(rounded)))
        return cls(as_format(fmt, "fmt"), int(rounded.size), to_zero, int(np.count_nonzero(under)) - to_zero,
                   int(np.count_nonzero(flags.overflow)), nonfinite, amax, scale)

    @classmethod
    def exact(cls, fmt, values) -> "OperandRecord":
        """The record of values that already held ``fmt`` (their rounding was exact)."""
        values = np.asarray(values)
        nonfinite = int(values.size - np.count_nonzero(np.isfinite(values)))
        return cls(as_format(fmt, "fmt"), int(values.size), 0, 0, 0, nonfinite)


@dataclass(frozen=True)
class GemmRecord:
    """What one :meth:`GemmEngine.gemm <softfloat.recipes.GemmEngine.gemm>` call did.

    Attributes
    ----------
    kind : str
        "fprop", "dgrad" or "wgrad".
    key : str
        The call site.
    a, b : OperandRecord
        The roundings of the two operands into the recipe's formats.
    additions : int or None
        The additions into the accumulator: M * N * K products (the partial sums' additions
        of the block recipe's fp32 promotions are not counted).  None with
        ``record="operands"``.
    swamped : int or None
        Of those, the additions in which a non-zero finite addend left a finite partial
        sum unchanged (:attr:`softfloat.AccumulationFlags.swamped`, summed over the output).
        None with ``record="operands"``.
    output : OperandRecord or None
        The rounding of the result into ``out`` (None without ``out``).
    """

    kind: str
    key: str
    a: OperandRecord
    b: OperandRecord
    additions: int | None
    swamped: int | None
    output: OperandRecord | None
