"""The IEEE fp16, bf16 and FP8 (e4m3, e5m2) accumulators in sequential k order, in torch
operations on the operands' device: ``sf.matmul(..., accumulator="fp16", "bf16",
"fp8_e4m3" or "fp8_e5m2")``'s definition in round to nearest even

    s = c (held exactly) if given; then for k = 0, 1, ..., K-1:
        s = round_A(t_k) while s is undefined, else s = round_A(s + t_k)

with t_k = a_k * b_k exact in float32 (the caller checks it:
``softfloat.torch._accumulate_ieee.products_exact``) and A the accumulator.  The
running sum s is kept as the float32 value of an A value (or of c, a float32 value).

One step, in float32 (softfloat.ops._native's proof, "Sums and differences"):

* TwoSum: s32 = fl(s + t), then the exact error e with s32 + e = s + t, from five more
  float32 additions and subtractions (Knuth; exact wherever s32 is finite, underflow
  included).  Each is its own torch kernel, so nothing contracts them into an FMA.
* Round to odd at float32's 24 bits: where e != 0 and s32's last bit is even, s32 moves
  one ulp toward e.  On the bits u of s32 (int32): where e != 0,
  ``u' = (u + d) | 1`` with d = -1 where e and s32 differ in sign (the exact sum is
  nearer zero: truncation toward zero is u - 1 then, u otherwise) and d = 0 else --
  the truncation toward zero with its last bit forced to 1, which is the rounding to
  odd (s32 != 0 where e != 0).
* Round that float32 value to A in nearest even: for fp16 torch's float32 -> float16
  cast (round to nearest even, gradual underflow, overflow to infinity, on CPU and
  CUDA); for FP8 softfloat.torch's quantisation kernel (softfloat.quantize's bits:
  e5m2 overflows to infinity, e4m3, which has none, to a NaN); for bf16 the integer
  rounding of the top 16 bits::

      u = sign | exponent (8) | m1..m7 | m8..m23       (bf16 keeps the top 16 bits)
      u + 0x7FFF + ((u >> 16) & 1), low 16 bits cleared   (ties to the even m7)

  which rounds every finite float32 value, subnormals included, in nearest even
  (a carry moves into the exponent, up to infinity).
  Rounding to odd at 24 bits then to nearest even at p <= 22 bits is one correct rounding
  (Boldo and Melquiond, IEEE TC 2008), for every exponent: round_A(s + t) exactly (A's
  subnormals are far above float32's, so the odd rounding keeps two more bits there too).
* Exact zero sums: float32's s + t is +0 for opposite signs and -0 for -0 + -0 (IEEE
  754 section 6.3 in nearest even), e = 0 leaves it, and the casts keep zero signs; a
  non-zero sum that rounds to zero keeps its sign in float32 and in the rounding to A.

Infinities and NaNs among the terms and c: s32 is then the IEEE sum itself (an infinity,
or a NaN for opposite ones or a NaN operand), e a NaN, "e != 0" False, and the rounding
into A keeps it (an e4m3 accumulator, which has no infinity, makes it its NaN, as
softfloat.encode does); the bounds below leave them out.

Range: TwoSum needs s32 finite where s and t are.  The finite terms are bounded before
the loop by max|a| * max|b| (float64, per call):

* fp16 and FP8: |s| <= A's largest value, or s = +-inf or NaN (an overflow of the
  accumulator).  Where max|c| + max_A + max|t| < 2**126 every finite step is safe; an
  infinite s gives s32 = s and e = NaN, and "e != 0" is tested as |e| > 0 (False for
  NaN), so s stays infinite as IEEE's inf + finite does, and a NaN s stays a NaN.
  Otherwise the call is declined.  The NaNs that come out are the reference's
  canonical (positive) one (an e4m3 overflow's sign lasts only to the next step there,
  and every output format the torch paths give canonicalises it).
* bf16: the rounded sums satisfy |s_k| <= (1 + 2**-8) (|s_{k-1}| + |t_k|) + 2**-134, so
  |s32| <= 2 * (1 + 2**-8)**K * (max|c| + K max|t| + 1); where that is below 2**126 no
  step can overflow.  Otherwise every step's |s32| is checked (a running flag, read
  once at the end) and the call is declined where one reached 2**126, as _native
  declines those blocks.

Swamped counts (``count=True``): per output, the additions s + t (c + t_0 included, the
first term without c is no addition) with t non-zero, s finite and round_A(s + t) == s --
``softfloat.accumulate``'s definition -- tested per tile as in _accumulate_ieee
(``swamped_additions``, ``count_down``).

Memory: the output's running sum and a few work arrays of its shape, and one tile of
TILE products (TILE, ..., M, N) float32.
"""

from __future__ import annotations

import math

import torch

from ..attributes import RoundingAttributes
from ..formats import bf16, fp8_e4m3, fp8_e5m2, fp16, fp32
from ._accumulate_ieee import TILE, canonical_nan, count_down, finite_magnitude, products, swamped_additions
from ._kernels import quantize_tensor

__all__ = ["ACCUMULATORS", "PROMOTED", "add_rounded", "all_finite", "blocked_narrow", "promote_runs", "round_into",
           "sequential_narrow", "step_bound"]

#: the accumulators this module computes
ACCUMULATORS = (fp16, bf16, fp8_e4m3, fp8_e5m2)
#: the out_formats :func:`blocked_narrow` promotes its run sums into
PROMOTED = (fp16, bf16, fp32)

_LIMIT = 2.0 ** 126
_NAN = float("nan")
_MASK_HIGH16 = -(1 << 16)  # 0xFFFF0000 as int32


def _round_bf16(u, nans: bool = True):
    """float32 bit patterns (int32) rounded to bf16 in nearest even, as float32 values.
    With ``nans`` (the caller cannot rule NaNs out) NaN lanes become the canonical NaN:
    the integer rounding would carry a large payload (0x7FFFE000, an fp16 NaN's;
    0x7FFFFFFF, CUDA's default NaN) into the sign and make it a zero."""
    lsb = (u >> 16).bitwise_and_(1)
    rounded = lsb.add_(u).add_(0x7FFF).bitwise_and_(_MASK_HIGH16).view(torch.float32)
    return rounded.masked_fill_(torch.isnan(u.view(torch.float32)), _NAN) if nans else rounded


def _round_fp16(x):
    return x.to(torch.float16).to(torch.float32)


_NEAREST = RoundingAttributes()  # sf.matmul's accumulator rounding: nearest even, no saturation


def _to_acc(acc, x):
    """float32 values rounded to ``acc`` in nearest even, as float32 values (new): bf16 by
    its integer rounding, fp16 by torch's cast, FP8 by softfloat.torch's quantisation
    kernel (softfloat.quantize's bits: gradual underflow, e5m2's overflow to infinity,
    e4m3's to NaN)."""
    if acc == bf16:
        return _round_bf16(x.view(torch.int32))
    return _round_fp16(x) if acc == fp16 else quantize_tensor(x, acc, _NEAREST)


class _Work:
    """Work arrays of the output's shape for one step."""

    def __init__(self, shape, device, nans: bool = True):
        self.nans = nans  # may a NaN reach the rounding (see _round_bf16)
        self.s32 = torch.empty(shape, dtype=torch.float32, device=device)
        self.bv = torch.empty(shape, dtype=torch.float32, device=device)
        self.av = torch.empty(shape, dtype=torch.float32, device=device)
        self.d = torch.empty(shape, dtype=torch.int32, device=device)
        self.inexact = torch.empty(shape, dtype=torch.bool, device=device)


def _step(acc, s, t, w, guard):
    """round_A(s + t) (a new tensor) by TwoSum, rounding to odd and one rounding to A
    (see the module docstring); with ``guard`` (a bool tensor) |s32| >= 2**126 ORed in."""
    s32 = torch.add(s, t, out=w.s32)
    if guard is not None:  # a sum of finite s and t near float32's overflow (an infinite operand's is exact)
        guard.logical_or_((s32.abs() >= _LIMIT).logical_and_(torch.isfinite(s)).logical_and_(torch.isfinite(t)))
    bv = torch.sub(s32, s, out=w.bv)
    av = torch.sub(s32, bv, out=w.av)
    e = torch.sub(t, bv, out=w.bv)
    e.add_(torch.sub(s, av, out=w.av))  # the exact error: s32 + e == s + t
    inexact = torch.gt(torch.abs(e, out=w.av), 0, out=w.inexact)  # NaN (s infinite): False
    u = s32.view(torch.int32)
    # d = -1 where e and s32 differ in sign: truncation toward zero is one ulp down then
    d = torch.bitwise_xor(e.view(torch.int32), u, out=w.d).bitwise_right_shift_(31)
    odd = d.add_(u).bitwise_or_(1)
    u = torch.where(inexact, odd, u)
    return _round_bf16(u, w.nans) if acc == bf16 else _to_acc(acc, u.view(torch.float32))


def _needs_guard(acc, a, b, c, K):
    """None: no step can overflow float32; True: check every step (bf16); False:
    declined (fp16 with terms near float32's range)."""
    big_t = float(finite_magnitude(a).amax().double()) * float(finite_magnitude(b).amax().double())
    big_c = 0.0 if c is None else float(finite_magnitude(c).amax().double())
    if acc != bf16:  # fp16 and FP8: every finite s is at most the format's largest value
        return None if big_c + float(acc.max_finite) + big_t < _LIMIT else False
    growth = K * math.log2(1.0 + 2.0 ** -8) + 1.0
    if growth < 100 and (big_c + K * big_t + 1.0) * 2.0 ** growth < _LIMIT:
        return None
    return True


def sequential_narrow(acc, a, b, c=None, count=False):
    """The ``acc`` (fp16, bf16, fp8_e4m3 or fp8_e5m2) accumulator's sequential sum in
    nearest even.

    Parameters
    ----------
    acc : Format
        fp16, bf16, fp8_e4m3 or fp8_e5m2.
    a, b : torch.Tensor of float32
        Values (..., M, K) and (..., K, N) whose products are all exact in float32
        (infinities and NaNs included).
    c : torch.Tensor of float32, optional
        Start values, held exactly, broadcast to the output.
    count : bool
        Also count the swamped additions.

    Returns
    -------
    (..., M, N) float32 values of ``acc`` (with ``count``: and the int64 swamped counts),
    or None where the call is declined (a float32 overflow in TwoSum was possible).

    Examples
    --------
    >>> import torch
    >>> from softfloat.formats import fp16
    >>> a = torch.tensor([[2048.0, 1.0, 1.0]]); b = torch.ones(3, 1)
    >>> total, swamped = sequential_narrow(fp16, a, b, count=True)  # 2048 + 1 is 2048 in fp16
    >>> total.tolist(), swamped.tolist()
    ([[2048.0]], [[2]])
    """
    if acc not in ACCUMULATORS:
        raise ValueError(f"acc: expected fp16, bf16, fp8_e4m3 or fp8_e5m2, got {acc!r}")
    K = a.shape[-1]
    shape = torch.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
    guard = _needs_guard(acc, a, b, c, K)
    if guard is False:
        return None
    guard = torch.zeros(shape, dtype=torch.bool, device=a.device) if guard else None
    # NaNs come only from infinities and NaNs among the terms and c (a bf16 sum cannot
    # overflow here: the guard declines first; fp16's and e5m2's infinity round by casts)
    w = _Work(shape, a.device, nans=not all_finite(a, b, c))
    s = None if c is None else torch.broadcast_to(c, shape).to(torch.float32).clone()
    swamped = torch.zeros(shape, dtype=torch.int64, device=a.device) if count else None
    for t0 in range(0, K, TILE):
        P = products(a, b, t0, min(t0 + TILE, K))
        first = 0
        if s is None:
            s, first = _to_acc(acc, P[0]), 1
        rows = None
        if count and P.shape[0] > first:
            rows = torch.empty((P.shape[0] - first + 1,) + tuple(shape), dtype=torch.float32, device=a.device)
            rows[0] = s
        for i in range(first, P.shape[0]):
            s = _step(acc, s, P[i], w, guard)
            if rows is not None:
                rows[i - first + 1] = s
        if rows is not None:
            swamped += count_down(swamped_additions(rows[:-1], P[first:], rows[1:]))
    if guard is not None and bool(guard.any()):
        return None
    s = canonical_nan(s)  # an e4m3 overflow's NaN (signed) and what follows it: the reference's
    return (s, swamped) if count else s


def blocked_narrow(acc, a, b, c, block: int, out, count=False):
    """The ``acc`` accumulator's run sums of ``block`` terms, each from nothing in
    sequential order (:func:`sequential_narrow`), promoted one by one into ``out`` by
    :func:`promote_runs`: ``softfloat.matmul``'s ``block=`` with an IEEE accumulator
    (``softfloat.accumulate._orders``).  Returns the float32 values of ``out`` (and the
    int64 swamped counts of the runs and the promotions with ``count``), or None where
    a run or promotion is declined."""
    K = a.shape[-1]
    counts = []

    def runs():
        for k0 in range(0, K, block):
            got = sequential_narrow(acc, a[..., k0:k0 + block], b[..., k0:k0 + block, :], None, count)
            if got is None:
                yield None
                return
            run, n = got if count else (got, None)
            counts.append(n)
            yield run
    got = promote_runs(runs(), c, out, count)
    if got is None or not count:
        return got
    total, promoted = got
    for n in counts:
        promoted += n
    return total, promoted


def promote_runs(runs, c, out, count=False):
    """Run sums (an iterable of float32 tensors; None: a declined run) promoted one by one
    into ``out`` (fp16, bf16 or fp32) in nearest even::

        total = c (held exactly), or the first run sum rounded into out; then
        total = round_out(total + run_j)        for each further run j

    fp32: one float32 addition (correctly rounded); fp16 / bf16: :func:`_step`'s.  Two
    runs that overflowed to opposite infinities give the canonical (positive) NaN, as
    the reference's.  A promotion is swamped where a non-zero finite run sum leaves a
    finite total unchanged.  Returns the float32 values of ``out`` (and the promotions'
    int64 swamped counts with ``count``), or None where a run or a promotion is declined
    (bf16 totals near float32's range, where TwoSum could overflow).
    """
    total, swamped, w = c, None, None
    for run in runs:
        if run is None:
            return None
        if count and swamped is None:
            swamped = torch.zeros(run.shape, dtype=torch.int64, device=run.device)
        if total is None:
            total = run if out == fp32 else round_into(out, run)
            continue
        total = torch.broadcast_to(total, run.shape)
        if out == fp32:
            new = torch.add(total, run)
        else:
            if out == bf16 and bool((finite_magnitude(total) >= 2.0 ** 125).any()
                                    or (finite_magnitude(run) >= 2.0 ** 125).any()):
                return None  # TwoSum's float32 sum of two finite values could overflow
            w = w or _Work(run.shape, run.device)
            new = _step(out, total, run, w, None)
        if count:
            swamped += swamped_additions(total, run, new).logical_and_(torch.isfinite(run))
        total = new
    total = canonical_nan(total)
    return (total, swamped) if count else total


def round_into(acc, x):
    """float32 values rounded to ``acc`` (one of :data:`ACCUMULATORS`) in nearest even,
    as float32 values."""
    return _to_acc(acc, x)


def add_rounded(acc, s, t, nans: bool = True):
    """round_acc(s + t) of float32 tensors of one shape (:func:`_step`; the caller has
    ruled out a float32 overflow in TwoSum, :func:`step_bound`, and with ``nans=False``
    any NaN among s, t and their sums)."""
    return _step(acc, s, t, _Work(s.shape, s.device, nans), None)


def all_finite(*tensors) -> bool:
    """Is every value of the given tensors (None: none) finite?"""
    return all(t is None or bool(torch.isfinite(t).all()) for t in tensors)


def step_bound(acc, a, b, c, K) -> bool:
    """Whether no sum of the call's terms (and c), in any order and grouping, can make
    TwoSum's float32 sum overflow (the bound of the module docstring)."""
    return _needs_guard(acc, a, b, c, K) is None
