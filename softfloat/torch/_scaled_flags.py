"""The IEEE flags of scaled quantisation in torch operations: those of one rounding into
a format (softfloat._round.round_pack's overflow, underflow and inexact, and
softfloat._encode.encode_specials' for NaN and infinity inputs) and those of the fp32
product ``x * scale`` -- the masks softfloat.scaled_encode returns, on the tensor's device.

The element rounding's flags are read from its result ``r`` (decoded, exact) and the
value ``p`` it rounded, with one more rounding of the same mode, attributes and random
bits (``check``) where the result alone cannot tell:

* inexact: ``r != p`` (a saturated, flushed or NaN result differs too);
* overflow, IEEE's rule: ``p`` rounded with an unbounded exponent exceeds max_finite.  Only
  for ``|p| > max``; there ``p / 2`` (exact, normal) is rounded in the same mode: every
  normal value is cut at the same bit, so ``round(p / 2) = round_unbounded(p) / 2``, with
  the same random bits (element i takes draw i), and saturation keeps the answer for
  ``|p| >= 2 max``;
* underflow: tiny and inexact.  Tiny before rounding: ``|p| < min_normal``.  Tiny after
  rounding (round_pack's refinement): a tiny inexact ``p`` whose result is min_normal is
  tiny unless its rounding with an unbounded exponent reaches min_normal, which is read
  from ``round(2 p)`` (normal, one bit finer) against ``2 min_normal``; stochastic
  rounding judges by the delivered result.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from ..flags import Flags
from ..formats import Format, Specials
from ..rounding import Rounding, Tininess
from ._kernels import decode_tensor, encode_tensor

__all__ = ["TensorFlags", "product_flags", "rounding_flags"]

#: |P| below this exact float64 value is tiny after rounding into fp32 (nearest even):
#: the tie between 2**-126 - 2**-150 (significand all ones, odd) and 2**-126 goes up
_FP32_TINY_AFTER = (1.0 - 2.0**-25) * 2.0**-126
_FP32_MIN_NORMAL = 2.0**-126


class TensorFlags(NamedTuple):
    """The five IEEE flags per element, bool tensors on the input's device (as
    :class:`softfloat.Flags` holds numpy arrays)."""

    invalid: torch.Tensor
    divide_by_zero: torch.Tensor
    overflow: torch.Tensor
    underflow: torch.Tensor
    inexact: torch.Tensor

    def __or__(self, other: "TensorFlags") -> "TensorFlags":
        return TensorFlags(*(a | b for a, b in zip(self, other)))

    def to_flags(self) -> Flags:
        """The same masks as a :class:`softfloat.Flags` of numpy arrays (host copies)."""
        return Flags(*(np.asarray(m.cpu().numpy(), dtype=bool) for m in self))


def _none(shape, device) -> torch.Tensor:
    return torch.zeros(shape, dtype=torch.bool, device=device)


def rounding_flags(p: torch.Tensor, bits: torch.Tensor, fmt: Format, attrs, key, saturated) -> TensorFlags:
    """Flags of ``bits`` = the rounding of the values ``p`` (float32 or float64) into
    ``fmt`` with ``attrs`` and ``key`` (stochastic), ``p`` as encode saw it except for
    the lanes ``saturated`` (bool tensor or None): infinities that scaled_encode's
    satfinite turned into a finite value beyond every format's range before the rounding
    (overflow and inexact).

    >>> import torch, softfloat as sf
    >>> from softfloat.attributes import RoundingAttributes
    >>> p = torch.tensor([1.0, 0.1, 1e-9, 70000.0]); attrs = RoundingAttributes()
    >>> f = rounding_flags(p, encode_tensor(p, sf.fp16, attrs), sf.fp16, attrs, None, None)
    >>> f.inexact.tolist(), f.underflow.tolist(), f.overflow.tolist()
    ([False, True, True, True], [False, False, True, False], [False, False, False, True])
    """
    mag = p.abs()
    finite = torch.isfinite(p)
    r = decode_tensor(bits, fmt, p.dtype)
    inexact = finite & (r != p)
    big = finite & (mag > fmt.max_finite)
    tiny = finite & (mag < fmt.min_normal)
    check = torch.where(big, p * 0.5, torch.where(tiny, p * 2.0, torch.zeros_like(p)))
    check = decode_tensor(encode_tensor(check, fmt, attrs.replace(saturate=True), key), fmt, p.dtype).abs()
    overflow = big & (check > fmt.max_finite / 2)
    if attrs.tininess is Tininess.AFTER:
        candidate = tiny & inexact & (r.abs() == fmt.min_normal)
        if attrs.rounding is Rounding.STOCHASTIC:
            tiny = tiny & ~candidate
        else:
            tiny = tiny & ~(candidate & (check >= 2 * fmt.min_normal))
    underflow = tiny & inexact
    invalid, special_overflow = _special_flags(p, fmt, attrs)
    overflow = overflow | special_overflow
    inexact = inexact | special_overflow
    if saturated is not None:
        overflow, inexact = overflow | saturated, inexact | saturated
    return TensorFlags(invalid, _none(p.shape, p.device), overflow, underflow, inexact)


def _special_flags(p, fmt: Format, attrs):
    """(invalid, overflow) of NaN and infinity lanes: softfloat._encode.encode_specials'
    table (a signaling NaN is invalid; an infinity saturated or into a finite format
    overflows; into fn/fnuz formats without saturation it is invalid)."""
    nan = torch.isnan(p)
    width, quiet = (32, 1 << 22) if p.dtype == torch.float32 else (64, 1 << 51)
    words = p.view(torch.int32 if width == 32 else torch.int64)
    invalid = nan & ((words & quiet) == 0)
    inf = torch.isinf(p)
    if fmt.specials is Specials.FINITE:
        return nan, inf
    if fmt.has_infinity:
        return invalid, torch.zeros_like(inf)
    if attrs.saturate:
        return invalid, inf
    return invalid | inf, torch.zeros_like(inf)


def product_flags(x32: torch.Tensor, factors: torch.Tensor, p32: torch.Tensor, tininess: Tininess) -> TensorFlags:
    """Flags of ``p32`` = the float32 product of fp32 values ``x32 * factors`` (the exact
    product rounded to nearest even fp32, softfloat.quantize's flags with the platform's
    ``tininess``): computed against the exact product in float64 (48 significant bits).
    NaN and infinite products raise nothing (their operands are quiet NaNs or
    infinities; the factors are finite and non-zero, or NaN)."""
    exact = x32.to(torch.float64) * factors.to(torch.float64)
    finite = torch.isfinite(exact)
    rounded = p32.to(torch.float64)
    inexact = finite & (rounded != exact)
    overflow = finite & torch.isinf(p32)
    bound = _FP32_TINY_AFTER if tininess is Tininess.AFTER else _FP32_MIN_NORMAL
    underflow = inexact & (exact.abs() < bound)
    none = _none(p32.shape, p32.device)
    return TensorFlags(none, none, overflow, underflow, inexact)
