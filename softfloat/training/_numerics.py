"""The lab's arithmetic: values held in numpy float arrays, each result rounded once into
the format the policy names, and what that rounding did (underflow, overflow, NaN).

The lab keeps every tensor as *values* (float32 arrays, float64 where a format does not
fit fp32) that are exactly values of their format, and rounds each operation's result
once.  Roundings go through the codec's shortcuts (:func:`softfloat._fastpaths.quantize_small`
for the lab's many small arrays, :func:`softfloat.quantize` otherwise); arithmetic uses
numpy's own where that is provably the one correct rounding (see :class:`Arith`, where
each shortcut stands with its condition).  Every shortcut here honours the one off switch,
``softfloat._fastpaths.ENABLED``: with it False every operation takes the general path
through :func:`softfloat.quantize`, :func:`softfloat.encode`, :func:`softfloat.decode` and
:mod:`softfloat.ops` (the tests compare the two bit for bit).

Matrix products always go through :func:`softfloat.matmul` with the policy's
accumulator.
"""

from __future__ import annotations

import numpy as np

from .. import _fastpaths, _scratch, ops
from ..attributes import DEFAULT_ATTRIBUTES
from ..accumulate import matmul as _sf_matmul, sum as _sf_sum
from ..codec import decode, encode, quantize
from ..formats import Format, bf16, fp16, fp32
from ..rounding import Rounding

__all__ = ["Counts", "bits_of", "matmul", "reduce_sum", "round_to", "values_of", "Arith"]

_NEAREST = Rounding.NEAREST_EVEN
#: what round_to's shortcut applies: quantize's defaults (nearest even, tininess after
#: rounding, subnormals kept, no saturation)
_NEAREST_POLICY = DEFAULT_ATTRIBUTES

#: float32 bit patterns: fp16's largest finite value 65504 (a larger magnitude is an
#: infinity or a NaN here), float32's magnitude mask
_F16_MAX_FINITE, _MAGNITUDE = np.uint32(0x477FE000), np.uint32(0x7FFFFFFF)


def _scratch_like(a, name, dtype=np.uint32):
    """The thread's scratch buffer ``name`` shaped as ``a`` (see softfloat._scratch)."""
    return _scratch.buffer(name, dtype, a.size).reshape(a.shape)


def _decode_into(bits, fmt, out):
    """The codec's values of ``bits`` written into ``out`` (the decoder the shortcut's
    tables are built from)."""
    out[...] = decode(bits, fmt, out.dtype)


def _fp16_patterns(v32: np.ndarray) -> np.ndarray:
    """Bit patterns of float32 values that are exactly fp16 values.

    |v| * 2**-112 is exact in float32 (an fp16 normal becomes a float32 normal with the
    exponent re-biased from 127 to 15; an fp16 subnormal k * 2**-24 becomes the float32
    subnormal k * 2**-136), and then its bits above bit 13 are fp16's magnitude bits:

        |0|eeeeeeee|ffffffffff 0000000000000|  * 2**-112 ->  >> 13 -> |0|eeeee|ffffffffff|

    An infinity or NaN (found by the largest magnitude) takes numpy's cast instead.  A
    transposed matrix gives transposed patterns (no copy to C order and back again: the
    matrix product wants its first operand's patterns transposed anyway).
    """
    v32 = np.asarray(v32)
    if v32.ndim == 2 and not v32.flags.c_contiguous and v32.T.flags.c_contiguous:
        return _fp16_patterns(v32.T).T
    u = np.ascontiguousarray(v32, dtype=np.float32).view(np.uint32)
    mag = np.bitwise_and(u, _MAGNITUDE, out=_scratch_like(u, "fp16-mag"))
    if mag.size and mag.max() > _F16_MAX_FINITE:  # beyond 65504: an infinity or NaN
        with np.errstate(over="ignore"):
            return u.view(np.float32).astype(np.float16).view(np.uint16)
    scaled = mag.view(np.float32)
    with np.errstate(under="ignore"):  # exact: the subnormal results lose no bits
        scaled *= np.float32(2.0**-112)
    np.right_shift(mag, np.uint32(13), out=mag)
    sign = np.right_shift(u, np.uint32(16), out=_scratch_like(u, "fp16-sign"))
    sign &= np.uint32(0x8000)
    mag |= sign
    out = np.empty(u.shape, dtype=np.uint16)
    np.copyto(out, mag, casting="unsafe")  # the low 16 bits
    return out


def round_to(x, fmt: Format, rounding=_NEAREST, rng=None, saturate: bool = False) -> np.ndarray:
    """``x`` (float array) rounded once into ``fmt``, as values of ``fmt.value_dtype()``.

    Round to nearest even without saturation (every lab tensor's rounding but the
    stochastic updates and FP8's) takes :func:`softfloat._fastpaths.quantize_small`: the
    codec's own kernels over the whole array, without :func:`softfloat.quantize`'s
    per-call work, which costs more than the rounding on the lab's small arrays; it
    declines larger arrays, and everything when the fast paths are switched off.
    """
    x = np.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    if rounding == _NEAREST and not saturate:
        if fmt == fp32 and x.dtype == np.float32:
            return x  # float32 values are fp32 values: nothing to round
        values = _fastpaths.quantize_small(x, fmt, _NEAREST_POLICY, _decode_into, lambda xs: quantize(xs, fmt))
        if values is not None:
            return values
    return quantize(x, fmt, rounding, saturate=saturate, rng=rng).astype(fmt.value_dtype(), copy=False)


def bits_of(values: np.ndarray, fmt: Format) -> np.ndarray:
    """Bit patterns of values that are exactly values of ``fmt`` (no rounding happens).

    Shortcuts (with the fast paths on): fp32 values are float32 patterns; bf16 values,
    float32 with a zero lower half, are the upper half of their patterns; fp16 values
    by :func:`_fp16_patterns`.  Otherwise :func:`softfloat.encode` (exact here)."""
    if fmt == fp32:
        return np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    if _fastpaths.ENABLED:
        if fmt == fp16:
            return _fp16_patterns(values)
        if fmt == bf16:
            return (np.ascontiguousarray(values, dtype=np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    return np.asarray(encode(values, fmt))


def values_of(bits: np.ndarray, fmt: Format) -> np.ndarray:
    """The exact values of bit patterns of ``fmt`` (float32 where they fit).

    Shortcut (with the fast paths on): numpy's float16 -> float32 cast, exact (every fp16
    value is a float32 value).  Otherwise :func:`softfloat.decode`."""
    if fmt == fp32:
        return np.asarray(bits, dtype=np.uint32).view(np.float32)
    if fmt == fp16 and _fastpaths.ENABLED:
        return np.asarray(bits, dtype=np.uint16).view(np.float16).astype(np.float32)
    return np.asarray(decode(bits, fmt, fmt.value_dtype()))


def matmul(a, b, fmt: Format, accumulator, *, block=None, product=None, out_format: Format = fp32,
           c=None) -> np.ndarray:
    """a @ b of values of ``fmt`` through :func:`softfloat.matmul` (the policy's
    accumulator, exact or rounded products, promotion every ``block`` terms); the result
    as values of ``out_format``."""
    bits = _sf_matmul(bits_of(a, fmt), bits_of(b, fmt), fmt, accumulator=accumulator, block=block,
                      product=product, out_format=out_format, c=c)
    return values_of(bits, out_format)


def reduce_sum(x, fmt: Format, accumulator, axis=0, out_format: Format = fp32) -> np.ndarray:
    """The sum along ``axis`` of values of ``fmt`` through :func:`softfloat.sum`."""
    bits = _sf_sum(bits_of(x, fmt), fmt, axis=axis, accumulator=accumulator, out_format=out_format)
    return values_of(bits, out_format)


class Arith:
    """Elementwise arithmetic in one format, each result rounded once: numpy's own
    arithmetic where it is provably that rounding (below), else :mod:`softfloat.ops` on
    bit patterns (every mode, stochastic rounding included).

    The shortcuts, round to nearest even only, each taken only while
    ``softfloat._fastpaths.ENABLED`` (off: the ops):

    * fp32 (``_native`` float32): numpy's float32 ``+ - * / sqrt`` are IEEE binary32
      operations, correctly rounded;
    * fp16 (``_native`` float16): numpy's float16 arithmetic computes in float32 and
      rounds once to float16 (a round to nearest even): the float32 result is the exact
      one rounded to 24 bits, and rounding that again to 11 bits is the correct rounding
      of the exact result because 24 >= 2 * 11 + 2 (Figueroa 1995, for + - * / sqrt);
    * bf16 (``_bf16``): the float32 operation, then :func:`round_to` bf16, correct for
      the same reason (24 >= 2 * 8 + 2); bf16's exponent range is float32's, so the
      float32 result neither overflows nor underflows where the bf16 one would not.
    """

    def __init__(self, fmt: Format, rounding=_NEAREST, rng=None):
        self.fmt, self.rounding, self.rng = fmt, Rounding(rounding), rng
        nearest = self.rounding == _NEAREST
        # numpy's arithmetic in the format's own dtype, for the formats the lab holds in float32
        self._native = fmt.native_dtype if nearest and fp32.holds(fmt) else None
        self._bf16 = nearest and fmt == bf16

    def _op(self, np_op, sf_op, *xs):
        if _fastpaths.ENABLED:
            if self._native is not None:  # fp32, fp16 round to nearest even: see the class docstring
                dt = self._native
                with np.errstate(all="ignore"):
                    out = np_op(*(np.asarray(x, dtype=dt) for x in xs))
                return np.asarray(out, dtype=np.float32)
            if self._bf16:  # bf16 round to nearest even: float32, then bf16 (class docstring)
                with np.errstate(all="ignore"):
                    out = np_op(*(np.asarray(x, dtype=np.float32) for x in xs))
                return round_to(np.asarray(out, dtype=np.float32), bf16)
        shape = np.broadcast_shapes(*(np.shape(x) for x in xs))
        bits = [np.broadcast_to(bits_of(round_to(np.broadcast_to(np.asarray(x, np.float64), shape), self.fmt),
                                        self.fmt), shape) for x in xs]
        out = sf_op(*bits, self.fmt, self.rounding, rng=self.rng)
        return values_of(out, self.fmt)

    def add(self, a, b):
        return self._op(np.add, ops.add, a, b)

    def sub(self, a, b):
        return self._op(np.subtract, ops.sub, a, b)

    def mul(self, a, b):
        return self._op(np.multiply, ops.mul, a, b)

    def div(self, a, b):
        return self._op(np.divide, ops.div, a, b)

    def sqrt(self, a):
        return self._op(np.sqrt, ops.sqrt, a)


class Counts:
    """What rounding ``exact`` into a format did, as counts (see :meth:`of`)."""

    __slots__ = ("n", "underflow_zero", "underflow_subnormal", "overflow", "nonfinite")

    def __init__(self, n=0, underflow_zero=0, underflow_subnormal=0, overflow=0, nonfinite=0):
        self.n, self.underflow_zero, self.underflow_subnormal = n, underflow_zero, underflow_subnormal
        self.overflow, self.nonfinite = overflow, nonfinite

    @classmethod
    def of(cls, exact: np.ndarray, rounded: np.ndarray, fmt: Format, saturate: bool = False) -> "Counts":
        """IEEE underflow (tiny and inexact) split by its result, zero or subnormal;
        overflow (a finite value rounded to an infinity or NaN, or with ``saturate`` one
        clamped to +-max_finite from beyond it); NaN/inf results."""
        exact, rounded = np.asarray(exact), np.asarray(rounded)
        with np.errstate(all="ignore"):
            mag = np.abs(rounded)
            # zero or subnormal results of non-zero values: few, usually (the zeros of a
            # ReLU, exact, are left out before the gathers below)
            tiny = np.flatnonzero((mag < fmt.min_normal) & (exact != 0))
            e, r = exact.reshape(-1)[tiny], rounded.reshape(-1)[tiny]
            to_zero = int(np.count_nonzero((r == 0) & (e != 0) & np.isfinite(e)))
            sub = int(np.count_nonzero((r != 0) & (r != e)))
            over = nonfinite = 0
            if saturate or (mag.size and not np.isfinite(mag.max())):  # max is NaN or inf iff some lane is
                rfinite = np.isfinite(rounded)
                nonfinite = int(rounded.size - np.count_nonzero(rfinite))
                flagged = ~rfinite
                if saturate:
                    flagged = flagged | ((mag == fmt.max_finite) & (np.abs(exact) > fmt.max_finite))
                over = int(np.count_nonzero(flagged & np.isfinite(exact)))
        return cls(int(rounded.size), to_zero, sub, over, nonfinite)

    @classmethod
    def from_flags(cls, flags, rounded: np.ndarray) -> "Counts":
        """The same counts from the IEEE flags of the rounding (e.g. those
        :func:`softfloat.scaled_encode` returns): underflow split by its result, zero or
        not; overflow as flagged (saturation raises it too); NaN/inf results."""
        rounded = np.asarray(rounded)
        under = np.asarray(flags.underflow)
        to_zero = int(np.count_nonzero(under & (rounded == 0)))
        nonfinite = int(rounded.size - np.count_nonzero(np.isfinite(rounded)))
        return cls(int(rounded.size), to_zero, int(np.count_nonzero(under)) - to_zero,
                   int(np.count_nonzero(flags.overflow)), nonfinite)

    def __iadd__(self, other: "Counts") -> "Counts":
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self

    def shares(self, prefix: str) -> dict:
        n = max(self.n, 1)
        return {f"{prefix}_underflow": (self.underflow_zero + self.underflow_subnormal) / n,
                f"{prefix}_underflow_zero": self.underflow_zero / n,
                f"{prefix}_underflow_subnormal": self.underflow_subnormal / n,
                f"{prefix}_overflow": self.overflow / n,
                f"{prefix}_nonfinite": self.nonfinite}
