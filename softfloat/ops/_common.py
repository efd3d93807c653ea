"""Shared machinery of the operations: operands, streaming, NaNs, and the hand-off of each
exact result to the one rounding point.

Every value of every format is a float64, so an operation decodes its operands exactly
into float64 and computes its exact result as an unevaluated pair

    exact = hi + lo        hi = the float64 nearest the exact result, |lo| <= ulp(hi)/2

with ``lo`` exact (error-free transformations: TwoSum, Dekker's product) or, for div and
sqrt, of exact sign and nearly exact size.  The pair then goes to the rounding point:

* ``lo`` zero everywhere: ``hi`` is the exact result, encoded like any float64;
* otherwise, deterministic modes into formats of at most 51-bit precision: ``hi`` rounded
  to odd with ``lo``'s sign.  Round to odd at 53 bits followed by rounding to p <= 51
  bits is a single rounding to p bits in every mode (Boldo and Melquiond, "Emulation of
  FMA and correctly rounded sums: proved algorithms using rounding to odd", IEEE TC
  2008), so no double rounding can occur;
* otherwise (fp64, or stochastic rounding): the pair as a 62-bit significand with a
  sticky bit, so the rounding sees lo's bits (for stochastic rounding the probability is
  exact for add, sub, mul and fma, and accurate to about 2**-45 of an ulp for div and
  sqrt).

In formats wider than fp32 (fp64 and custom ones) the error-free transformations fail
where an intermediate overflows or underflows float64, and a pair whose low part is only
nearly exact cannot place a result that lies within 2**-40 of the 62-bit grid.  Kernels
mark such lanes as hazards; they are computed with exact rational arithmetic in Python
and rounded by the same rounding point.  They need magnitudes beyond 2**995 or below
2**-968 (or a one-in-2**40 coincidence), so they are rare: benchmarks/bench_ops.py
reports their share.

NaN operands and invalid operations never reach the host FPU's NaN rules: they are
resolved by :data:`NAN_POLICY`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .. import _dask, _exact, _validate
from .._blocks import resolve_workers, stream_blocks
from .._decode import decode_block
from .._encode import Workspace, encode_block, encode_significands, float64_significands
from .._flagmasks import FlagMasks
from .._random import Positions, key_from
from .._options import policy_from_options
from ..formats import Format, Specials, as_format, fp16, fp32, fp64
from ..rounding import Rounding

__all__ = ["NAN_POLICY", "Exact", "apply", "round_result", "sign_of", "zero_sum_is_negative", "daz", "exact_zero_sign", "is_narrow", "is_signaling",
           "operand_patterns", "quieted", "safe_magnitude", "scalar_or_array", "scratch",
           "sums_are_exact", "two_product", "two_sum"]

#: How NaN results are chosen, written down as data (hardware differs here):
#: - an invalid operation returns the format's canonical quiet NaN, positive
#:   (``Format.nan_bits``), as RISC-V and AArch64 in default-NaN mode do;
#: - a NaN operand propagates: the first signaling NaN operand if there is one, else the
#:   first quiet NaN operand, quieted, keeping its sign and payload (AArch64 with
#:   FPCR.DN = 0).  x86 SSE differs: it takes the first NaN operand whatever its kind,
#:   and its default NaN is negative.
#: Formats with a single NaN (fn, fnuz) return it; FP6/FP4 have none and return +0.
NAN_POLICY = {"default_nan": "positive canonical quiet NaN", "propagation": "signaling first, then first operand"}


def is_narrow(fmt: Format) -> bool:
    """fp32 and narrower: every product of two values is exact in float64 (precision <=
    24 makes at most 48 bits) and every intermediate stays inside float64's range
    (exponent <= 8 bits), so no lane is ever a hazard."""
    return fmt.precision <= 24 and fmt.exponent_bits <= 8


_SAFE_LO, _SAFE_HI = 2.0**-968, 2.0**995


def safe_magnitude(x):
    """Where Dekker's product of x (and of values near x) is exact: no overflow in its
    Veltkamp split, no underflow of its error term."""
    a = np.abs(x)
    return (a >= _SAFE_LO) & (a <= _SAFE_HI)


@dataclass
class Exact:
    """One block's exact results, as a kernel returns them (see the module docstring)."""

    hi: np.ndarray
    lo: np.ndarray | None = None  # None: hi is exact
    lo_exact: bool = True  # False: lo has the exact sign but only ~53 correct bits
    invalid: np.ndarray | None = None  # invalid operations float64 does not turn into NaN
    divide_by_zero: np.ndarray | None = None
    hazard: np.ndarray | None = None  # lanes to compute exactly in Python


def daz(x: np.ndarray, fmt: Format) -> None:
    """Denormals-are-zero, in place: subnormal operands become zeros of the same sign."""
    tiny = (np.abs(x) < fmt.min_normal) & (x != 0)
    if tiny.any():
        np.copyto(x, np.copysign(0.0, x), where=tiny)


def apply(kernel, exact, fmt, operands, rounding, *, tininess, subnormals, denormals_are_zero,
          rng, return_flags, saturate=False, workers=None):
    """Run ``kernel`` over broadcast bit-pattern operands of ``fmt``; round once.

    ``operands`` is a list of ``(argname, value)``.  ``kernel(fmt, policy, *xs)`` receives
    the exact float64 values of one block and returns an :class:`Exact`; ``fmt`` must hold
    every operand, since it picks the kernel's float64 path (the family modules name
    their kernels ``<op>_kernel`` and ``<op>_exact``; softfloat.accumulate runs them on
    operands of several formats, passing a format that holds them all).
    ``exact(policy, *floats)`` gives one hazard lane's exact result (from the operands as
    Python floats, so that zeros keep their signs) as ``(negative, magnitude)`` with
    ``magnitude`` a Fraction, or ``(negative, (sig, e_top))`` already in the rounding
    point's significand form (sqrt).

    The blocks run on ``workers`` threads (None: the process-wide setting); dask operands
    give a lazy dask result (and lazy flags), each chunk's random bits those of its
    elements' positions in the whole result.
    """
    fmt = as_format(fmt)
    policy, rng = policy_from_options(rounding, tininess, subnormals, saturate, rng)
    denormals_are_zero = _validate.boolean("denormals_are_zero", denormals_are_zero)
    return_flags = _validate.boolean("return_flags", return_flags)
    key = None if rng is None else key_from(rng)
    if _dask.any_dask(*(value for _, value in operands)):
        return _lazy(kernel, exact, fmt, policy, key, denormals_are_zero, operands, return_flags, workers)
    workers = resolve_workers(workers)
    arrays, shape = operand_patterns(fmt, operands)
    out = np.empty(shape, dtype=fmt.storage_dtype)
    flags = FlagMasks.zeros(out.size) if return_flags else None
    _stream(kernel, exact, fmt, policy, key, denormals_are_zero, arrays, shape, out, flags, workers)
    result = out[()] if out.ndim == 0 else out
    if not return_flags:
        return result
    return result, flags.to_flags(shape).squeezed()


def _lazy(kernel, exact, fmt, policy, key, daz_inputs, operands, want, workers):
    """apply() for dask operands: the operands' dtypes checked now, their values chunk by
    chunk (when computed)."""
    values = []
    for name, value in operands:
        if _dask.is_dask(value):
            _validate.bit_patterns(name, np.empty(0, dtype=value.dtype), fmt.bits)
            values.append(value)
        else:
            values.append(operand_patterns(fmt, [(name, value)])[0][0])
    threads = 1 if workers is None else resolve_workers(workers)

    def chunk(where, *blocks):
        arrays, shape = operand_patterns(fmt, list(zip((name for name, _ in operands), blocks)))
        out = np.empty(shape, dtype=fmt.storage_dtype)
        flags = FlagMasks.zeros(out.size) if want else None
        _stream(kernel, exact, fmt, policy, key, daz_inputs, arrays, shape, out, flags, threads,
                Positions(*where))
        return out, flags

    result, masks = _dask.elementwise(chunk, values, fmt.storage_dtype, want)
    return (result, masks.to_flags()) if want else result


#: elements per block of the operations.  Their kernels make about a hundred numpy calls
#: a block, each with a microsecond of Python around it: at the codec's 2**14 that was
#: half of a bf16 mul.  2**16 ran add, mul, fma and sqrt 1.3-1.7x faster (bf16, one
#: thread, benchmarks/bench_scale.py's data; div alike), though its intermediates spill
#: out of a 1 MiB L2.
OPS_BLOCK_SIZE = 1 << 16
#: elements per block on several threads: each numpy call hands the GIL over, which cost
#: more than a 2**16 block's work gains (2 threads ran 0.6-0.95x as fast as one).  On a
#: 2-core virtual machine 2 threads at 2**17 ran 1.1-1.4x as fast as one thread at
#: OPS_BLOCK_SIZE, and at 2**18 another 1.0-1.2x faster (2 MiB per float64 intermediate).
OPS_THREAD_BLOCK_SIZE = 1 << 18


def _stream(kernel, exact, fmt, policy, key, daz_inputs, arrays, shape, out, flags, workers=1,
            positions=None):
    n = out.size
    flat_out = out.reshape(-1)
    flat_ops = [a.reshape(-1) if a.shape == shape and a.flags.c_contiguous else np.broadcast_to(a, shape)
                for a in arrays]
    want = flags is not None

    def block(start, stop, rand, ws):
        m = stop - start
        blocks = [op[start:stop] if op.ndim == 1 and op.shape[0] == n else np.asarray(op.flat[start:stop])
                  for op in flat_ops]
        xs = []
        for i, b in enumerate(blocks):
            x = _values(b, fmt, ws.get(f"operand{i}", np.float64, m), ws)
            if daz_inputs:
                daz(x, fmt)
            xs.append(x)
        res = kernel(fmt, policy, *xs, ws=ws)
        block_out = flat_out[start:stop]
        fl = round_result(res, exact, xs, fmt, policy, rand, want, block_out, ws)
        invalid = _resolve_nans(blocks, xs, res.hi, res.invalid, fmt, block_out)
        if not want:
            return None
        fl.or_(FlagMasks(invalid=invalid, divide_by_zero=res.divide_by_zero))
        nan_lanes = np.isnan(res.hi)
        if nan_lanes.any():
            fl.clear_at_nan(nan_lanes)
        return fl

    stream_blocks(n, OPS_BLOCK_SIZE, key, flags, block, workers=workers, positions=positions,
                  thread_block_size=OPS_THREAD_BLOCK_SIZE)


def _values(b, fmt, out, ws):
    """Exact float64 values of operand patterns.  NaN payloads need not survive (NaN
    results are rebuilt from the patterns), so fp32 may use the hardware's widening cast
    (numpy's float16 cast too, except that it is slower than decode_block on subnormals)."""
    if fmt == fp64 or fmt == fp32 or (fmt == fp16 and not _has_subnormals(b, fmt)):
        np.copyto(out, b.view(np.dtype(f"f{fmt.bits // 8}")))
        return out
    return decode_block(b, fmt, out, ws)


def _has_subnormals(b, fmt: Format) -> bool:
    mag = b & fmt.storage_dtype.type(fmt.sign_mask - 1)
    return bool(np.any((mag != 0) & (mag <= fmt.mantissa_mask)))


def round_result(res, exact, xs, fmt, policy, rand, want, out, ws):
    """Round one block's :class:`Exact` result into ``out`` (bit patterns of ``fmt``).

    ``xs`` are the kernel's float64 operands, from which ``exact`` recomputes the hazard
    lanes.  Returns the block's FlagMasks (None when not ``want``); NaN lanes are left as
    the rounding point made them, for the caller's NaN policy.
    """
    fl = _round(res, fmt, policy, rand, want, out, ws)
    return _settle_hazards(res, exact, xs, fmt, policy, rand, want, out, fl)


def _round(res, fmt, policy, rand, want, out, ws):
    """Hand the exact pair hi + lo to the rounding point (see the module docstring)."""
    hi, lo = res.hi, res.lo
    if lo is None or not lo.any():
        return encode_block(hi, fmt, policy, rand, want, out, ws)
    if policy.rounding is not Rounding.STOCHASTIC and fmt.precision <= 51:
        return encode_block(round_to_odd(hi, lo, ws), fmt, policy, rand, want, out, ws)
    negative, sig, e_top, near = pair_significands(*_finite_pair(hi, lo, ws), ws)
    if not res.lo_exact:  # a nearly exact lo cannot place a value this close to the grid
        near &= lo != 0
        res.hazard = near.copy() if res.hazard is None else res.hazard | near
    fl = encode_significands(negative, sig, e_top, fmt, policy, rand, want, out, ws)
    exact_inf = np.isinf(hi) & (True if res.hazard is None else ~res.hazard)
    if exact_inf.any():  # infinite operands: infinite results, exactly
        idx = np.nonzero(exact_inf)
        k = len(idx[0])
        sub_out = np.empty(k, dtype=out.dtype)
        sub_rand = None if rand is None else rand[idx]
        sub_fl = encode_block(hi[idx], fmt, policy, sub_rand, want, sub_out, Workspace(k))
        out[idx] = sub_out
        if want:
            fl.set_at(idx, sub_fl, out.shape)
    return fl


def _finite_pair(hi, lo, ws):
    """hi and lo with their non-finite lanes zeroed (those are encoded from hi alone)."""
    not_finite = np.isfinite(hi, out=ws.get("rp.not_finite", np.bool_, hi.size))
    np.logical_not(not_finite, out=not_finite)
    pair = []
    for name, x in (("rp.hi", hi), ("rp.lo", lo)):
        y = scratch(ws, name, x)
        np.copyto(y, x)
        np.copyto(y, 0.0, where=not_finite)
        pair.append(y)
    return pair


def _settle_hazards(res, exact, xs, fmt, policy, rand, want, out, fl):
    """Compute the hazard lanes exactly (rational arithmetic) and round them."""
    if res.hazard is None or not res.hazard.any():
        return fl
    idx = np.nonzero(res.hazard)
    k = len(idx[0])
    negative = np.empty(k, dtype=np.uint64)
    sig = np.empty(k, dtype=np.uint64)
    e_top = np.empty(k, dtype=np.int64)
    for j, lane in enumerate(idx[0]):  # rare by construction: see the module docstring
        neg, value = exact(policy, *(float(x[lane]) for x in xs))
        sig[j], e_top[j] = _exact.to_significand(value) if isinstance(value, Fraction) else value
        negative[j] = neg
    e_top = np.clip(e_top, -4000, 4000)
    sub_out = np.empty(k, dtype=out.dtype)
    sub_rand = None if rand is None else rand[idx]
    sub_fl = encode_significands(negative, sig, e_top, fmt, policy, sub_rand, want, sub_out)
    out[idx] = sub_out
    if want:
        fl.set_at(idx, sub_fl, out.shape)
    return fl


def round_to_odd(hi, lo, ws=None, name="op.round_to_odd"):
    """The float64 rounding to odd of hi + lo, given |lo| <= ulp(hi)/2 and finite hi.

    Where lo != 0 and hi's last significand bit is 0, step hi's magnitude one ulp toward
    lo (up if lo has hi's sign), which lands on the odd neighbour on lo's side:

        ... b52 b53 = ..0   ->   ..1  (lo same sign)   or   ..(0-1) = ..1 (lo opposite)

    With a block workspace ``ws`` the result lives in its buffer ``name`` (see scratch).
    """
    u = hi.view(np.uint64)
    out = scratch(ws, name, hi)
    r = np.bitwise_and(u, np.uint64(1), out=None if out is None else out.view(np.uint64))
    step = np.equal(r, 0) & (lo != 0)
    up = step & (np.signbit(lo) == np.signbit(hi))  # the other steps go down
    np.add(u, up, out=r)
    np.subtract(r, np.logical_xor(step, up, out=step), out=r)
    return r.view(np.float64)


def pair_significands(hi, lo, ws=None):
    """hi + lo (|lo| <= ulp(hi)/2, hi finite) as (negative, 62-bit significand + sticky,
    e_top, near), ``near`` marking lanes whose low part lies within 2**-40 of the grid.

    With |hi| = sig * 2**(e_top - 61) (sig's leading bit at bit 61) the low part in the
    same units is L = lo * 2**(61 - e_top), |L| <= 2**8; then the magnitude is
    sig + floor(L) plus a sticky fraction.  A negative L below a power of two drops the
    leading bit to 60: those lanes are redone one bit finer.  The results live in
    buffers of the block workspace ``ws`` (see scratch), to be used up within the block.
    """
    n = hi.size
    ws = Workspace(n) if ws is None else ws
    negative, sig, e_top = float64_significands(hi, ws)
    # lo measured along |hi|: lo with its sign flipped where hi is negative
    towards = np.left_shift(negative, np.uint64(63), out=ws.get("rp.towards", np.uint64, n))
    towards ^= lo.view(np.uint64)
    towards = towards.view(np.float64)
    k = np.subtract(61, e_top, out=ws.get("rp.k", np.int32, n), casting="unsafe")
    L = np.ldexp(towards, k, out=scratch(ws, "rp.L", hi))  # no overflowing 2**k factor
    # below even float64's range: only its sign is left
    lost = np.not_equal(towards, 0, out=ws.get("rp.lost", np.bool_, n))
    lost &= np.equal(L, 0, out=ws.get("rp.mask", np.bool_, n))
    F = np.rint(L, out=scratch(ws, "rp.F", hi))
    np.subtract(L, F, out=F)
    near = np.less(np.abs(F, out=F), 2.0**-40, out=ws.get("rp.near", np.bool_, n))
    np.floor(L, out=F)
    any_lost = lost.any()
    if any_lost:
        np.copyto(F, -1.0, where=lost & (towards < 0))
    total = ws.get("rp.total", np.int64, n)
    np.copyto(total, F, casting="unsafe")
    total = total.view(np.uint64)
    total += sig
    sticky = np.not_equal(L, F, out=ws.get("rp.sticky", np.bool_, n))
    sticky |= lost
    low = np.less(total, np.uint64(1 << 61), out=ws.get("rp.mask", np.bool_, n))
    if low.any():  # the lanes below a power of two, one bit finer
        idx = np.nonzero(low)
        L2 = L[idx] * 2
        F2 = np.floor(L2)
        if any_lost:
            F2[lost[idx] & (towards[idx] < 0)] = -1.0
        total[idx] = (sig[idx] << np.uint64(1)) + F2.astype(np.int64).view(np.uint64)
        sticky[idx] = (L2 != F2) | lost[idx]
        e_top[idx] -= 1
    high = np.greater_equal(total, np.uint64(1 << 62), out=ws.get("rp.mask", np.bool_, n))
    if high.any():
        idx = np.nonzero(high)
        sticky[idx] |= (total[idx] & np.uint64(1)) != 0
        total[idx] >>= np.uint64(1)
        e_top[idx] += 1
    total |= sticky
    return negative, total, e_top, near


def _resolve_nans(blocks, xs, hi, invalid, fmt, out):
    """Apply NAN_POLICY to the NaN lanes of hi; return the invalid mask.

    A NaN result comes from a NaN operand or an invalid operation (inf - inf, 0 * inf,
    0/0, inf/inf, sqrt(-x)): float64 arithmetic makes NaN exactly there.  ``invalid``
    adds what float64 cannot see (fma(0, inf, qNaN)).  Signaling NaN operands are
    invalid too.
    """
    nan_result = np.isnan(hi)
    if not nan_result.any():
        return np.zeros(hi.shape, dtype=bool)
    nan_ops = [np.isnan(x) for x in xs]
    any_nan = np.logical_or.reduce(nan_ops)
    invalid_op = nan_result & ~any_nan
    out[invalid_op] = _default_nan(fmt)
    if invalid is not None:
        invalid_op |= invalid
    if not any_nan.any():  # invalid operations only (inf - inf, 0 * inf, ...)
        return invalid_op
    signaling = [is_signaling(b, fmt) & n for b, n in zip(blocks, nan_ops)]
    any_signaling = np.logical_or.reduce(signaling)
    # the operand whose NaN propagates: the first signaling one, else the first NaN
    chosen = np.full(hi.shape, -1, dtype=np.int8)  # at most 3 operands
    for i in reversed(range(len(blocks))):
        chosen = np.where(nan_ops[i], i, chosen)
    for i in reversed(range(len(blocks))):
        chosen = np.where(any_signaling & signaling[i], i, chosen)
    for i, b in enumerate(blocks):
        take = chosen == i
        if take.any():
            out[take] = quieted(b[take], fmt)
    return invalid_op | any_signaling


def _default_nan(fmt: Format):
    return fmt.storage_dtype.type(fmt.nan_bits if fmt.has_nan else 0)


def is_signaling(b, fmt: Format):
    """Quiet bit clear (meaningful on the NaN lanes of IEEE formats only)."""
    if fmt.specials is not Specials.IEEE:
        return np.zeros(np.shape(b), dtype=bool)
    return (b & b.dtype.type(1 << (fmt.mantissa_bits - 1))) == 0


def quieted(b, fmt: Format):
    """NaN patterns with the quiet bit set (the fn/fnuz NaN is already the result)."""
    if fmt.specials is Specials.IEEE:
        return b | b.dtype.type(1 << (fmt.mantissa_bits - 1))
    return b


def operand_patterns(fmt: Format, operands):
    """Check ``(argname, value)`` bit-pattern operands, cast them to ``fmt.storage_dtype``
    and return them with their broadcast shape."""
    arrays = [_validate.bit_patterns(name, value, fmt.bits).astype(fmt.storage_dtype, copy=False)
              for name, value in operands]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(f"{name}{a.shape}" for (name, _), a in zip(operands, arrays))
        raise ValueError(f"operands could not be broadcast together: {shapes}") from None
    return arrays, shape


def scalar_or_array(out):
    """A 0-d result as a numpy scalar, like a ufunc's."""
    out = np.asarray(out)
    return out[()] if out.ndim == 0 else out


# ---- error-free transformations (exact in float64 barring overflow) --------------------
def scratch(ws, name, like):
    """The float64 buffer ``name`` of a block's workspace, sized like the operand
    ``like``, for a kernel's intermediate; None without a workspace, so that a ufunc
    given it as ``out`` makes a new array.

    Why: a kernel's intermediates are as large as its block, and fresh arrays of that
    size come from memory that glibc may have handed back to the system after the
    previous block -- a page fault per 4 KiB, microseconds each on a virtual machine
    (softfloat._scratch says more).  Reused buffers take none.  A buffer lives until the
    next block, so what a kernel returns in one must be used up within the block.
    """
    return None if ws is None else ws.get(name, np.float64, like.size)


def two_sum(a, b, ws=None, name="op.two_sum"):
    """s, e with s = fl(a + b) and s + e == a + b exactly (Knuth's TwoSum); e = 0 where
    s is not finite.  ``ws``, ``name``: where the results live (see scratch)."""
    s = np.add(a, b, out=scratch(ws, name + ".s", a))
    bv = np.subtract(s, a, out=scratch(ws, name + ".e", a))
    av = np.subtract(s, bv, out=scratch(ws, name + ".t", a))
    e = np.subtract(b, bv, out=bv)  # b - bv, in bv's place
    np.add(np.subtract(a, av, out=av), e, out=e)  # (a - av) + (b - bv)
    return s, _zero_unless_finite(e)


def _zero_unless_finite(e):
    np.copyto(e, 0.0, where=~np.isfinite(e))
    return e


_SPLITTER = 2.0**27 + 1  # Veltkamp: splits a float64 into two 26-bit halves


def two_product(a, b, ws=None, name="op.two_product"):
    """p, e with p = fl(a * b) and p + e == a * b exactly (Dekker), valid while no
    intermediate overflows or underflows -- true for operands of formats of at most 8
    exponent bits (see check_supported).  ``ws``, ``name``: as for two_sum."""
    p = np.multiply(a, b, out=scratch(ws, name + ".p", a))
    ah, al = _split(a, ws, name + ".a")
    bh, bl = _split(b, ws, name + ".b")
    # e = ((ah*bh - p) + ah*bl + al*bh) + al*bl, term by term
    e = np.multiply(ah, bh, out=scratch(ws, name + ".e", a))
    np.subtract(e, p, out=e)
    t = np.multiply(ah, bl, out=scratch(ws, name + ".t", a))
    np.add(e, t, out=e)
    np.add(e, np.multiply(al, bh, out=t), out=e)
    np.add(e, np.multiply(al, bl, out=t), out=e)
    return p, _zero_unless_finite(e)


def _split(a, ws, name):
    hi = np.multiply(a, _SPLITTER, out=scratch(ws, name + ".hi", a))  # c = SPLITTER * a
    lo = np.subtract(hi, a, out=scratch(ws, name + ".lo", a))  # c - a
    np.subtract(hi, lo, out=hi)  # hi = c - (c - a)
    return hi, np.subtract(a, hi, out=lo)


def sums_are_exact(fmt: Format) -> bool:
    """Is every sum of two values of ``fmt`` exact in float64?  Its bits span from the
    smallest subnormal's up to one above the largest binade: at most 53 of them."""
    return (fmt.emax + 1) - (fmt.emin - fmt.mantissa_bits) + 1 <= 53


def zero_sum_is_negative(first_negative: bool, second_negative: bool, policy) -> bool:
    """IEEE 754-2019 6.3 for one exact zero sum: the operands' sign if they agree (both
    zeros), else +0 -- or -0 under downward."""
    if first_negative == second_negative:
        return first_negative
    return policy.rounding is Rounding.DOWNWARD


def sign_of(x: float) -> bool:
    """True for negative numbers and -0.0."""
    return math.copysign(1.0, x) < 0


def exact_zero_sign(hi, lo, first, second, policy):
    """IEEE 754-2019 6.3 for sums: an exact zero sum of operands of opposite signs (or a
    cancellation) is +0, except -0 under downward; x + x keeps x's sign.  float64's own
    sum already gets the nearest-mode signs right; fix the downward ones in place."""
    if policy.rounding is not Rounding.DOWNWARD:
        return
    zero = (hi == 0) & (lo == 0 if lo is not None else True)
    both_plus_zero = (first == 0) & (second == 0) & ~np.signbit(first) & ~np.signbit(second)
    hi[zero & ~both_plus_zero] = -0.0
