"""Proven shortcuts for the commonest conversions, each exact under the condition beside it.

The general path (:mod:`softfloat._encode` feeding :func:`softfloat._round.round_pack`)
handles every format, mode and option.  The kernels here do the same work in a few
integer passes for the cases people run most, and only where the result is provably
the same bits (and flags):

* float32 -> a format with float32's 8-bit exponent (bf16, tf32, e8mN with IEEE
  specials), every deterministic mode: the target pattern is the top 1 + 8 + m bits of
  the float32 pattern, so rounding is an integer add and a shift (:func:`_truncating`);
* float32 / float64 -> any narrower format, every deterministic mode, for lanes inside
  the target's normal range: a re-bias, an add and a shift (:func:`_rebias`); without
  flags, overflowing lanes are clamped to IEEE's overflow result
  (:func:`_clamp_overflow`) and lanes below the smallest normal are rounded by numpy's
  rint/trunc/ceil/floor (or trunc and a compare, for ties away) on the exactly scaled
  input (:func:`_below_normal`);
* float32 -> fp16 and float32 / float64 -> FP8, FP6, FP4 (any format whose index below
  has at most 21 bits), every deterministic mode: the result depends only on the
  input's top bits and the OR of the rest, so it is one lookup in a table the general
  path fills once (:func:`_by_table`);
* float64 -> a 16-bit format (fp16, bf16) in nearest_even / nearest_away / toward_zero
  without flags, when a whole block lies in the target's normal range: the same
  re-bias on the upper 32-bit word of each float64, whose result is the upper half of
  one 32-bit word; the lower word is read only at the upper word's ties
  (:func:`_upper_word`);
* decoding a format of at most 16 bits: one lookup in a table built once by the general
  decoder (:func:`decode_table`), or a left shift where the target's pattern is the top
  of the output float's pattern (:func:`decode_by_shift`), for bf16/tf32 into float64
  followed by a widening cast (:func:`decode_by_widening`).

An encoding kernel may leave some lanes to the general path (NaNs, lanes outside the
range its proof covers, rare options): it returns them as a mask and the caller
recomputes just those.  It may also decline a whole block (returns None).  Setting
:data:`ENABLED` to False sends every block down the general path (for tests).
"""

from __future__ import annotations

import functools
import sys
import threading

import numpy as np

from ._flagmasks import FlagMasks
from .formats import Format, Specials, fp32, fp64
from .rounding import Rounding

__all__ = ["ENABLED", "BLOCK_FACTOR", "TABLE_INDEX_MAX_BITS", "quantize_block", "TRUNCATING_BLOCK_FACTOR", "block_factor", "encode_block", "decode_by_shift", "decode_by_widening", "decode_table"]

#: False sends every block down the general path (tests compare the two)
ENABLED = True

#: a block with more lanes than this share outside a kernel's proven range goes to the
#: general path whole (gathering many lanes costs more than it saves)
_MAX_REST_SHARE = 1 / 8


def encode_block(blk, fmt: Format, policy, want: bool, out, ws, general):
    """Encode a contiguous float block by a fast kernel, or return None (declined).

    ``general(x, fmt, policy, out)`` is the general path (bits into ``out``, its
    FlagMasks returned), which fills a table kernel's tables the first time they are needed.
    Returns ``(flags, rest)``: the FlagMasks as in ``_encode.encode_block`` (or
    None when not ``want``), and a boolean mask of lanes the caller must recompute on
    the general path (their bits and flags here are placeholders), or None.
    """
    if not ENABLED or blk.size == 0:
        return None
    plan = _lookup(fmt, blk.dtype.char, policy)
    if plan is None:
        return None
    if plan.kernel is _by_table:
        tables = plan.tables or plan.fill(general, blk.size)
        if tables is not None:
            return _by_table(plan, tables, blk, want, out, ws)
        plan = plan.fallback  # a block too small to pay for the tables
        if plan is None:
            return None
    return plan.kernel(plan, blk, want, out, ws)


#: a fast kernel makes few passes over few buffers, so its blocks can be this many times
#: the general path's (2**14 elements): the per-block cost (workspace, plan, range
#: reduction, flag scatter: about 20 us) is then spread over more elements -- float32 ->
#: bf16 in nearest_even about a tenth faster than at 4x, measured with whole runs.  Blocks
#: it declines are cut back to the general size (softfloat._encode).
BLOCK_FACTOR = 16

#: the same for :func:`_truncating` (float32 -> bf16/tf32) without flags, whose one work
#: buffer is the block's size: at 2**19 elements its 3 to 7 passes ran 4 to 10 % faster
#: than at 2**18 for bf16 in every mode, 2**22 values on this machine -- the reading and
#: writing passes stream better and there are half as many numpy calls.  With flags
#: (more buffers and masks per block) it was a fifth slower, so those keep BLOCK_FACTOR.
TRUNCATING_BLOCK_FACTOR = 32


def block_factor(fmt: Format, dtype, policy, want: bool = False) -> int:
    """How many general-path blocks one block may span for this conversion (``want``:
    with flags): the fast kernel's factor where one exists for it, else 1.  Results never
    depend on the block size."""
    if not ENABLED or dtype.char not in "fd":
        return 1
    plan = _lookup(fmt, dtype.char, policy)
    if plan is None:
        return 1
    return TRUNCATING_BLOCK_FACTOR if plan.kernel is _truncating and not want else BLOCK_FACTOR


_last_plan = (None, None, None, None)


def _lookup(fmt: Format, char: str, policy):
    """_plan(fmt, char, policy), skipping the hashing when the objects are the last
    lookup's: a call's blocks (and its block_factor) share them."""
    global _last_plan
    last = _last_plan
    if last[0] is fmt and last[1] is policy and last[2] == char:
        return last[3]
    plan = _plan(fmt, char, policy)
    _last_plan = (fmt, policy, char, plan)  # one assignment: safe to race
    return plan


@functools.lru_cache(maxsize=1024)
def _plan(fmt: Format, dtype_char: str, policy):
    """The kernel and its constants for (format, input dtype, policy), or None: worked
    out once, so that a block pays only for its numpy calls."""
    if policy.rounding is Rounding.STOCHASTIC or dtype_char not in "fd":
        return None
    if dtype_char == "f" and _is_top_of_fp32(fmt):
        return _Plan(_truncating, fmt, policy, fp32.mantissa_bits, 0, np.uint32)
    src = fp32 if dtype_char == "f" else fp64
    k = src.mantissa_bits - fmt.mantissa_bits
    rebias = None
    if k >= 2 and fmt.emin >= src.emin and fmt.emax <= src.emax:
        rebias = _Plan(_rebias, fmt, policy, src.mantissa_bits, src.bias, src.storage_dtype.type)
    if _TablePlan.applies(fmt, src):
        return _TablePlan(fmt, src, policy, rebias)
    return rebias


class _Plan:
    """Constants of one kernel, as numpy scalars of the word type (see the kernels).

    The input is read as W-bit words (its own patterns) with ms fraction bits and bias
    B; k = ms - m bits are cut; R = (B - bias) << ms is the re-bias."""

    def __init__(self, kernel, fmt, policy, ms, src_bias, dt):
        m = fmt.mantissa_bits
        W = np.dtype(dt).itemsize * 8
        k = ms - m
        rebias = (src_bias - fmt.bias) << ms if src_bias else 0
        wrap = 1 << W
        self.kernel, self.fmt, self.policy, self.dt, self.W, self.k = kernel, fmt, policy, dt, W, k
        self.rounding = policy.rounding
        self.careful = policy.saturate or not policy.subnormals
        self.k_ = dt(k)
        self.one = dt(1)
        self.low = dt((1 << k) - 1)
        self.half = dt(1 << (k - 1))
        self.abs_mask = dt((1 << (W - 1)) - 1)
        self.sign_shift = dt(W - 1)
        self.spread_shift = dt(W - k)
        self.minus_r = dt((-rebias) % wrap)  # adding it subtracts R (wraps only off range)
        self.rne_add = dt(((1 << (k - 1)) - 1 - rebias) % wrap)
        self.rna_add = dt(((1 << (k - 1)) - rebias) % wrap)
        self.rebias = rebias
        self.lo = dt((fmt.emin + src_bias) << ms) if src_bias else None
        self.hi = dt((fmt.max_finite_bits << k) + rebias)
        self.span = dt((fmt.max_finite_bits << k) + rebias - ((fmt.emin + src_bias) << ms)) if src_bias else None
        sign_at = fmt.bits - 1 + k
        self.sign_down = dt(W - 1 - sign_at)
        self.sign_bit = dt(1 << sign_at)
        self.signed = np.dtype(f"i{W // 8}").type
        self.signed_sign_shift = self.signed(W - 1)
        self.overshift_zero = _overshift_is_zero(dt)
        self.inf_out = None if fmt.infinity_bits is None else out_scalar(fmt, fmt.infinity_bits)
        # lanes below min_normal: rounded in the input's float type (see _below_normal)
        self.small_rounding = None
        fits = m - fmt.emin <= (fp32 if W == 32 else fp64).emax  # the scale is a float of the input type
        if fmt.has_negative_zero and policy.subnormals and fits:
            # (odd and ties away take their own steps in _below_normal)
            self.small_rounding = {Rounding.NEAREST_EVEN: np.rint, Rounding.NEAREST_AWAY: _round_half_away,
                                   Rounding.TOWARD_ZERO: np.trunc, Rounding.UPWARD: np.ceil,
                                   Rounding.DOWNWARD: np.floor, Rounding.ODD: np.trunc}.get(policy.rounding)
        # overflow results (see _clamp_overflow); fnuz overflows to a NaN without sign
        self.cap_finite = dt(fmt.max_finite_bits << k)
        self.cap_special = dt((fmt.max_finite_bits + 1) << k)
        finite_only = policy.saturate or fmt.specials is Specials.FINITE or policy.rounding in (
            Rounding.TOWARD_ZERO, Rounding.ODD)
        self.cap = self.cap_finite if finite_only else (
            self.cap_special if policy.rounding in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY) else None)
        self.src_inf = dt((1 << (W - 1)) - (1 << ms))  # the input's infinity pattern
        self.in_bulk = self.small_rounding is not None and fmt.specials is not Specials.FNUZ
        fdt = np.float32 if W == 32 else np.float64
        self.scale = fdt(2.0 ** (m - fmt.emin)) if fits else None
        self.pattern_cap = fdt(2.0 ** fmt.bits - 1)
        self.sign_to_top = fmt.storage_dtype.type(fmt.bits - 1)
        self.mag_out = out_scalar(fmt, fmt.sign_mask - 1)
        self.upper = _UpperWordPlan(self, fmt, policy) if _upper_word_applies(fmt, policy, W) else None


@functools.lru_cache(maxsize=None)
def _overshift_is_zero(dt) -> bool:
    """True when numpy's right_shift of a dt word by a count of W or more gives 0 (as it
    does since numpy 1.18; C leaves it undefined), also for the count 2**W - 1 that an
    arithmetic shift of a sign spreads: :func:`_spread_sign` relies on it."""
    W = np.dtype(dt).itemsize * 8
    counts = np.array([0, W, (1 << W) - 1] * 64, dtype=dt)  # long enough for the vector loop
    got = np.right_shift(dt((1 << (W - 1)) - 1), counts)
    return bool(np.array_equal(got, np.array([(1 << (W - 1)) - 1, 0, 0] * 64, dtype=dt)))


def out_scalar(fmt, value):
    return fmt.storage_dtype.type(value)


# =====================================================================================
# float32 / float64 -> narrow formats (fp16, FP8, FP6, FP4; bf16 from float64): one lookup
# =====================================================================================
#: the most index bits a table may have: float32 -> fp16 (m = 10) has 21, 4 MiB of bits
#: and 2 MiB of flags; FP8 from float32 has 14, from float64 17
TABLE_INDEX_MAX_BITS = 21
#: a block fills a table only if it has at least 1/TABLE_FILL_RATIO as many elements as
#: the table has entries (filling costs about as much per entry as the general path per
#: element); smaller blocks take the plan's other kernel, so a small call never pays
#: for a large table
TABLE_FILL_RATIO = 8
#: the most memory that filled tables keep; beyond it the oldest are dropped (and
#: refilled if needed again)
TABLE_CACHE_BYTES = 64 << 20

_filled: list = []  # table plans holding tables, oldest first
_filled_lock = threading.Lock()


class _TablePlan:
    """The tables of :func:`_by_table` for one (format, input type, policy): the general
    path's bits and flags (packed: softfloat._flagmasks.FLAG_BITS) for one input per index, and
    the kernel that blocks too small to fill them take instead (``fallback``)."""

    @staticmethod
    def applies(fmt: Format, src: Format) -> bool:
        """fmt's emin is at least the input's and the index (W - c bits, with
        c = ms - m - 2 >= 1) has at most TABLE_INDEX_MAX_BITS (see _by_table)."""
        c = _table_cut(fmt, src)
        return fmt.emin >= src.emin and c >= 1 and src.bits - c <= TABLE_INDEX_MAX_BITS

    def __init__(self, fmt: Format, src: Format, policy, fallback):
        self.kernel, self.fmt, self.src, self.policy, self.fallback = _by_table, fmt, src, policy, fallback
        self.dt = src.storage_dtype.type
        self.c = self.dt(_table_cut(fmt, src))
        self.below = self.dt((1 << int(self.c)) - 1)
        self.index_type = np.uint32 if src.bits == 32 else np.int64  # take() wants intp or narrower
        self.entries = 1 << (src.bits - int(self.c))
        # (bits, packed flags, flags raised anywhere, {dtype: quantized values}): one
        # attribute, set at once
        self.tables = None
        self.upper = None if fallback is None else fallback.upper

    def fill(self, general, block_size: int):
        """Fill the tables from ``general`` on one representative input per index (its
        top bits, and bit 0 set when its sticky bit is), if a block of ``block_size``
        elements pays for them; return them (None if not filled).  Two threads may both
        fill them (the same tables): the first to finish keeps its own.  Filled tables
        beyond TABLE_CACHE_BYTES are dropped, oldest first (a caller holding them keeps
        its reference)."""
        if block_size * TABLE_FILL_RATIO < self.entries:
            return None
        index = np.arange(self.entries, dtype=self.src.storage_dtype)
        reps = ((index >> self.dt(1)) << self.dt(self.c + 1)) | (index & self.dt(1))
        bits = np.empty(self.entries, dtype=self.fmt.storage_dtype)
        with np.errstate(all="ignore"):
            flags = general(reps.view(np.dtype(f"f{self.src.bits // 8}")), self.fmt, self.policy, bits)
        packed = flags.packed(self.entries)
        raises = tuple(name for name, mask in flags if mask is not None and mask.any())
        bits.flags.writeable = packed.flags.writeable = False
        with _filled_lock:
            if self.tables is None:  # else another thread filled them meanwhile
                self.tables = (bits, packed, raises, {})
                _filled.append(self)
            tables = self.tables
            _drop_oldest_tables()
        return tables

    def values(self, tables, dtype, decode):
        """The table of the quantized values as ``dtype`` (made once from the bits
        table by ``decode(bits, fmt, out)``, the codec's decoder)."""
        by_dtype = tables[3]
        values = by_dtype.get(dtype)
        if values is None:
            values = np.empty(self.entries, dtype=dtype)
            decode(tables[0], self.fmt, values)
            values.flags.writeable = False
            with _filled_lock:
                values = by_dtype.setdefault(dtype, values)
                _drop_oldest_tables()
        return values

    @property
    def table_bytes(self) -> int:
        tables = self.tables
        if tables is None:
            return 0
        return tables[0].nbytes + tables[1].nbytes + sum(v.nbytes for v in tables[3].values())


def _table_cut(fmt: Format, src: Format) -> int:
    """c = ms - m - 2: the input bits below c + 1 enter the index only as their OR."""
    return src.mantissa_bits - fmt.mantissa_bits - 2


def _drop_oldest_tables() -> None:
    """Drop the oldest filled tables while they hold more than TABLE_CACHE_BYTES (a
    caller holding them keeps its reference).  Call with _filled_lock held."""
    held = sum(p.table_bytes for p in _filled)
    while held > TABLE_CACHE_BYTES and len(_filled) > 1:
        old = _filled.pop(0)
        held -= old.table_bytes
        old.tables = None


def _by_table(p: _TablePlan, tables, blk, want: bool, out, ws):
    """Round float patterns by one table lookup (formats whose index, below, fits
    TABLE_INDEX_MAX_BITS: fp16 from float32, FP8/FP6/FP4 from either).

    Why it is exact (condition checked by _TablePlan.applies): a deterministic rounding
    -- bits and flags, in every mode and option -- sees the input only through its sign,
    exponent, the fraction bits down to the guard bit and the OR of those below (the
    sticky bit).  For a target of m fraction bits the guard bit of a normal-range
    result is fraction bit ms - m - 1 of the input (ms fraction bits); below the
    target's normal range it moves up one bit per binade, never down, because the
    target's emin is at least the input's (input subnormals then lie in the target's
    subnormal range or below it).  NaN results keep the quiet bit and the top m payload
    bits.  So with c = ms - m - 2 the result is a function of

        | s | e ... e | f(ms-1) ... f(c+1) | f(c) or any lower bit |   (W - c bits)

    which is ``(u | ((u & (2**c - 1)) + 2**c - 1)) >> c``: the add carries into bit c
    exactly when a bit below it is set.  The tables hold the general path's results
    for one input per index, so the kernel returns exactly what the general path would.
    """
    if p.upper is not None and not want and _upper_word(p.upper, blk, out, ws):
        return None, None  # float64 -> bf16 in normal range: a tenth faster (see _upper_word)
    idx = _table_index(p, blk, ws)
    np.take(tables[0], idx, out=out, mode="clip")  # every index is in range: no bounds check
    return _table_flags(tables, idx, want, ws), None


def _table_index(p: _TablePlan, blk, ws):
    """The table index of each input (see _by_table), in the block workspace."""
    u = blk.view(p.dt)
    idx = ws.get("fast_index", p.dt, u.size)
    np.bitwise_and(u, p.below, out=idx)
    np.add(idx, p.below, out=idx)  # bit c set iff a bit below c is
    np.bitwise_or(idx, u, out=idx)
    np.right_shift(idx, p.c, out=idx)
    return idx.view(p.index_type)


def _table_flags(tables, idx, want, ws):
    """The FlagMasks of the indexed inputs (None for the flags no entry raises), or None."""
    if not want:
        return None
    _, flag_table, raises, _ = tables
    packed = np.take(flag_table, idx, out=ws.get("fast_flags", np.uint8, idx.size), mode="clip")
    return FlagMasks.unpacked(packed, raises)


def quantize_block(blk, fmt: Format, policy, want: bool, values, ws, general, decode):
    """Quantize a contiguous float block (round into ``fmt``, then back to the input's
    type) into ``values`` by one lookup, or return None (declined).

    Where the encoding takes a table (see _by_table), a second table holds each
    index's result decoded by ``decode(bits, fmt, out)`` (the codec's decoder), so
    this is the encoding followed by the decoding, in one pass.  ``general`` fills the
    encoding's tables as for encode_block.  Returns the FlagMasks (or None when
    not ``want``), as a one-element list so that "no flags" is not "declined".
    """
    if not ENABLED or blk.size == 0 or values.dtype != blk.dtype:
        return None
    plan = _lookup(fmt, blk.dtype.char, policy)
    if plan is None or plan.kernel is not _by_table:
        return None
    tables = plan.tables or plan.fill(general, blk.size)
    if tables is None:
        return None
    table = plan.values(tables, blk.dtype, decode)
    idx = _table_index(plan, blk, ws)
    np.take(table, idx, out=values, mode="clip")
    return [_table_flags(tables, idx, want, ws)]


# =====================================================================================
# float32 -> e8mN: the target pattern is the top of the float32 pattern
# =====================================================================================
def _is_top_of_fp32(fmt: Format) -> bool:
    """True when fmt's pattern is the top ``fmt.bits`` bits of float32's, value for value.

    Same exponent width and bias and the same IEEE special values (so the same
    subnormals, infinities and NaN encodings), fewer fraction bits:

        float32  | s | e e e e e e e e | f22 ... f(23-m) | f(22-m) ... f0 |
        fmt      | s | e e e e e e e e | f22 ... f(23-m) |                  (k = 23 - m cut)
    """
    return (fmt.exponent_bits == fp32.exponent_bits and fmt.bias == fp32.bias
            and fmt.specials is Specials.IEEE and fmt.mantissa_bits < fp32.mantissa_bits)


def _truncating(p: _Plan, blk, want: bool, out, ws):
    """float32 patterns -> e8mN patterns: add an increment below the cut, shift by k.

    Condition (checked by :func:`_is_top_of_fp32`): the target's pattern is the top of
    float32's.  Then for every finite input the target's magnitude pattern rounded in
    any mode is ``(|u| + increment) >> k``, a carry out of the fraction moving into the
    exponent (up to the infinity pattern, which is exactly IEEE's overflow result in the
    modes that overflow to infinity), with subnormals handled alike because both
    formats share emin.  Per mode, with H = 2**(k-1) (the guard bit):

        nearest_even  increment = H - 1 + (bit k of u)     a tie carries only when odd
        nearest_away  increment = H
        toward_zero   increment = 0
        upward        increment = 2**k - 1 for +x, 0 for -x
        downward      increment = 2**k - 1 for -x, 0 for +x
        odd           (u | ((u & (2**k - 1)) + 2**k - 1)) >> k   bit k |= any cut bit

    The sign bit rides along in bit 31: finite |u| <= 0x7F7FFFFF plus an increment
    below 2**k never carries into it.  Infinity patterns have no cut bits and come out
    as infinity in every mode.  Left to the general path: NaN lanes (a NaN can round to
    the infinity pattern or wrap), and where needed tiny lanes (0 < |x| < 2**-126: the
    underflow flag and flush-to-zero depend on tininess) and lanes above max_finite
    with ``saturate``.  Flags of the other lanes: inexact = some cut bit is set;
    overflow = a finite lane came out as the infinity pattern; no underflow (no lane
    left here is tiny: float32 values of 2**-126 and up round to 2**-126 or more).
    """
    u = blk.view(np.uint32)
    n = u.size
    t = ws.get("fast_t", np.uint32, n)
    rest = hi = None
    if want or p.careful:
        mag = ws.get("fast_mag", np.uint32, n)
        np.bitwise_and(u, p.abs_mask, out=mag)
        hi = mag.max()
        checks = []
        if hi >= fp32.infinity_bits:
            checks.append(mag >= np.uint32(fp32.infinity_bits))  # NaN and infinity: general path
        if p.policy.saturate and hi > p.hi:
            checks.append(mag > p.hi)
        if want or not p.policy.subnormals:
            # 0 < |x| < 2**-126: mag - 1 wraps for zero, so one compare finds them
            np.subtract(mag, p.one, out=t)
            tiny = t < np.uint32(fp32.mantissa_mask)
            if tiny.any():
                checks.append(tiny)
        for c in checks:
            rest = c if rest is None else rest | c
        if rest is not None and np.count_nonzero(rest) > _MAX_REST_SHARE * n:
            return None
    else:
        top = blk.max()  # max propagates NaN: one pass finds whether any lane is NaN
        if top != top:
            rest = np.isnan(blk)
    if want:
        np.bitwise_and(u, p.low, out=t)
        inexact = t != 0
    _add_and_shift(p, u, t, out)
    if not want:
        return None, rest
    overflow = None
    if hi > p.hi:  # some lane may have rounded up to infinity
        mag_out = np.bitwise_and(out, p.mag_out, out=ws.get("fast_o", out.dtype, n))
        overflow = mag_out == p.inf_out
        if rest is not None:
            overflow &= ~rest
    return FlagMasks(overflow=overflow, inexact=inexact), rest


def _add_and_shift(p: _Plan, u, t, out):
    """out <- (u + increment) >> k per :func:`_truncating`'s table (u with its sign).

    Passes over the block for float32 -> bf16 without flags, after the one reduction
    that looks for NaNs (each pass is a numpy call over the block; the last one writes
    ``out`` by :func:`_upper_into`, the shift included):

        toward_zero    1   the narrowing copy, straight from the input
        nearest_away   2   + H
        upward         4   sign spread, (2**k - 1) >> s, + u     (:func:`_spread_sign`)
        downward       4   sign spread, s >> (W - k), + u
        odd            4   & (2**k - 1), + (2**k - 1), | u      (:func:`_odd_sticky`)
        nearest_even   5   >> k, & 1, + u, + (H - 1)            (:func:`_nearest_even_sum`)

    tf32 (a 32-bit output) takes the same passes, its last one a shift into ``out``.
    """
    rounding = p.rounding
    if rounding is Rounding.TOWARD_ZERO:
        _shift_into(u, p.k_, out, t)
        return
    if rounding is Rounding.NEAREST_EVEN:
        _nearest_even_sum(p, u, t)
    elif rounding is Rounding.NEAREST_AWAY:
        np.add(u, p.half, out=t)
    elif rounding is Rounding.UPWARD:
        _spread_sign(p, u, t, positive=True)
        np.add(t, u, out=t)
    elif rounding is Rounding.DOWNWARD:
        _spread_sign(p, u, t, positive=False)
        np.add(t, u, out=t)
    elif rounding is Rounding.ODD:
        _odd_sticky(p, u, t)
    else:  # pragma: no cover - stochastic has no plan
        raise AssertionError(rounding)
    _shift_into(t, p.k_, out)


def _nearest_even_sum(p: _Plan, a, t):
    """t <- a + (bit k of a) + the plan's rne_add (H - 1, less the re-bias where there is
    one): with bit k the kept lsb, a tie carries only when it is odd."""
    np.right_shift(a, p.k_, out=t)
    np.bitwise_and(t, p.one, out=t)
    np.add(t, a, out=t)
    np.add(t, p.rne_add, out=t)


def _shift_into(t, k, out, scratch=None):
    """out <- t >> k, narrowed to out's dtype.  A shift in place and then a casting copy
    (numpy narrows contiguous integers with SIMD) beat one shift that casts its output
    (a buffered loop) several times over; where k is the width t's words have beyond
    out's (float32 -> bf16: 16) the copy alone does it (:func:`_upper_into`)."""
    if out.dtype == t.dtype:
        np.right_shift(t, k, out=out)
        return
    if _LITTLE_ENDIAN and int(k) == 8 * (t.itemsize - out.itemsize) and t.flags.c_contiguous:
        _upper_into(t, out)
        return
    dst = t if scratch is None else scratch
    np.right_shift(t, k, out=dst)
    np.copyto(out, dst, casting="unsafe")


#: the upper bytes of a word are the later ones in memory (see _upper_into)
_LITTLE_ENDIAN = sys.byteorder == "little"


def _upper_into(t, out):
    """out <- the upper out-sized part of each word of t (t >> k for k = the extra bits),
    by one narrowing copy with no shift, on a little-endian machine.

    Read from k/8 bytes in, t's bytes form words whose lower part is the upper part of
    t's words (here u32 -> u16, k = 16), and narrowing keeps exactly that part:

        t in memory     | a0 a1 a2 a3 | b0 b1 b2 b3 | c0 c1 c2 c3 |
        words from +2         | a2 a3 b0 b1 | b2 b3 c0 c1 |
        narrowed              | a2 a3 |       | b2 b3 |            = t >> 16, lane by lane

    The last lane has no whole word from there on; it is shifted on its own.  The words
    read this way are unaligned: numpy's contiguous narrowing copy takes them at about
    the speed of aligned ones (0.09 against 0.08 ns/element, where the shift it saves
    costs 0.09).
    """
    n = t.size
    size = t.itemsize
    if n > 1:
        skip = size - out.itemsize
        words = t.view(np.uint8)[skip: skip + (n - 1) * size].view(t.dtype)
        np.copyto(out[:-1], words, casting="unsafe")
    out[-1] = t[-1] >> t.dtype.type(8 * (size - out.itemsize))


def _spread_sign(p: _Plan, u, t, positive: bool):
    """t <- 2**k - 1 where the lane rounds away from zero (upward: +x, downward: -x),
    else 0, in two passes.

    An arithmetic shift of the sign gives s = all ones for -x, 0 for +x:

        downward   s >> (W - k)       logical: keeps k of the ones for -x, 0 for +x
        upward     (2**k - 1) >> s    a shift by 0 for +x; by 2**W - 1 (>= W) for -x,
                                      which numpy defines as 0 (p.overshift_zero, probed
                                      once per plan; else (u >> (W-1)) - 1, then >> (W - k))
    """
    if positive and not p.overshift_zero:
        np.right_shift(u, p.sign_shift, out=t)
        np.subtract(t, p.one, out=t)
        np.right_shift(t, p.spread_shift, out=t)
        return
    np.right_shift(u.view(p.signed), p.signed_sign_shift, out=t.view(p.signed))
    if positive:
        np.right_shift(p.low, t, out=t)
    else:
        np.right_shift(t, p.spread_shift, out=t)


def _odd_sticky(p: _Plan, a, t):
    """t <- a with bit k ORed with "a cut bit is set": (a & low) + low carries into bit k
    exactly then, and stays below 2**(k+1), so ORing it into a changes nothing above."""
    np.bitwise_and(a, p.low, out=t)
    np.add(t, p.low, out=t)
    np.bitwise_or(t, a, out=t)


# =====================================================================================
# float32 / float64 -> narrower formats, lanes in the target's normal range
# =====================================================================================
def _rebias(p: _Plan, blk, want: bool, out, ws):
    """Round by re-biasing the exponent, for lanes in the target's normal range; the
    other lanes go to the general path.

    Condition (checked by :func:`_plan`): the target's exponent range lies inside the
    input's and k >= 2 bits are cut.  With the block's patterns as W-bit words (ms
    fraction bits, bias B), R = (B - bias) << ms and a = |u| (the pattern without its
    sign), the lanes left here satisfy

        a in [min_normal, max_finite]      (as input patterns: [lo, hi])

    There every mode's result is a normal number from min_normal to max_finite (both
    are values of the format), so no subnormal, tininess, flush, overflow or saturation
    question arises, and the target's magnitude pattern is

        (a - R + increment) >> k           (odd: ((a | sticky into bit k) - R) >> k)

    with the increments of :func:`_truncating` (the re-bias subtracts a multiple of
    2**ms, so bit k of a is the kept lsb either way).  The sign goes to bit
    bits - 1 + k of the sum, above the magnitude (the sum is below 2**(bits - 1 + k) in
    range), so the final shift puts it in place.  Flags of these lanes: inexact = a cut
    bit is set, nothing else.

    The other lanes: without flags (and where the plan allows: subnormals kept, a
    format with -0, a mode with a float rounding function), finite lanes above
    max_finite take the same sum clamped by :func:`_clamp_overflow` (the sum of a
    finite input cannot wrap: |u| < 2**(W-1) and R > 0), and lanes below min_normal are
    rounded by :func:`_below_normal`; infinities and NaNs (and every out-of-range lane
    otherwise) go to the general path.
    """
    if p.upper is not None and not want and _upper_word(p.upper, blk, out, ws):
        return None, None
    dt = p.dt
    u = blk.view(dt)
    n = u.size
    mag = ws.get("fast_mag", dt, n)
    t = ws.get("fast_t", dt, n)
    np.bitwise_and(u, p.abs_mask, out=mag)
    # outside [lo, hi] <=> a - lo (wrapping below lo) > hi - lo: one pass, one reduction
    np.subtract(mag, p.lo, out=t)
    rest = small = None
    clamp = False
    if t.max() > p.span:
        if p.in_bulk and not want:
            # zeros and subnormal results rounded in bulk below, overflows clamped: only
            # infinities and NaNs are left
            rest = mag >= p.src_inf
            small = mag < p.lo
            clamp = True
        else:
            rest = t > p.span
        left = np.count_nonzero(rest)
        if left > _MAX_REST_SHARE * n:
            return None
        if left == 0:
            rest = None
    fl = None
    if want:
        np.bitwise_and(mag, p.low, out=t)
        fl = FlagMasks(inexact=t != 0)
    rounding = p.rounding
    if rounding is Rounding.NEAREST_EVEN:
        _nearest_even_sum(p, mag, t)
    elif rounding is Rounding.NEAREST_AWAY:
        np.add(mag, p.rna_add, out=t)
    elif rounding is Rounding.TOWARD_ZERO:
        np.add(mag, p.minus_r, out=t)
    elif rounding is Rounding.ODD:
        _odd_sticky(p, mag, t)
        np.add(t, p.minus_r, out=t)
    else:  # upward, downward
        _spread_sign(p, u, t, positive=rounding is Rounding.UPWARD)
        np.add(t, mag, out=t)
        np.add(t, p.minus_r, out=t)
    if clamp:
        _clamp_overflow(p, u, t, mag)
    # sign: bit W-1 of u -> bit (bits - 1 + k); mag is free again
    np.right_shift(u, p.sign_down, out=mag)
    np.bitwise_and(mag, p.sign_bit, out=mag)
    np.bitwise_or(t, mag, out=t)
    _shift_into(t, p.k_, out)
    if small is not None and small.any():
        with np.errstate(all="ignore"):  # the other lanes may overflow the scaling or be NaN
            _below_normal(p, blk, small, out, ws)
    return fl, rest


# =====================================================================================
# float64 -> 16-bit formats, lanes in the target's normal range: the upper words only
# =====================================================================================
def _upper_word_applies(fmt: Format, policy, W: int) -> bool:
    """The condition of :func:`_upper_word` (checked once per plan): float64 input, a
    16-bit target with 4 <= m <= 19 fraction bits, nearest_even / nearest_away /
    toward_zero, a little-endian machine (the narrowing views), no flags (checked per call)."""
    return (W == 64 and _LITTLE_ENDIAN and fmt.bits == 16 and fmt.storage_dtype == np.uint16
            and 4 <= fmt.mantissa_bits <= 19 and policy.rounding in (
                Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY, Rounding.TOWARD_ZERO))


class _UpperWordPlan:
    """Constants of :func:`_upper_word` as uint32 scalars (see there)."""

    def __init__(self, p: _Plan, fmt: Format, policy):
        m = fmt.mantissa_bits
        s = m - 4  # hw's kept fraction bits (top m of 20) move to bits 16 .. 15 + m
        rebias_h = p.rebias >> 32  # (1023 - bias) << 20
        half = 1 << 15 if policy.rounding is not Rounding.TOWARD_ZERO else 0
        self.nearest_even = policy.rounding is Rounding.NEAREST_EVEN
        self.lo = np.uint32(int(p.lo) >> 32)  # min_normal's upper word (its lower word is 0)
        self.hi = np.uint32(int(p.hi) >> 32)  # max_finite's upper word (lower word 0: m <= 19)
        self.mul = np.uint32((1 << s) - 1)
        self.add = np.uint32((half - (rebias_h << s)) % (1 << 32))
        self.abs_mask = np.uint32(0x7FFFFFFF)
        self.probe_abs = p.abs_mask
        self.probe_lo, self.probe_hi = p.lo, np.uint64((int(self.hi) << 32) | 0xFFFFFFFF)


#: a block with more than this share of lanes at a tie of the upper word (ties in the
#: data) fixes them in whole-block passes rather than by gathering
_UPPER_TIE_SHARE = 1 / 64


#: this many lanes are looked at before the whole block (see _upper_word)
_PROBE_LANES = 2048


def _upper_word(q: _UpperWordPlan, blk, out, ws) -> bool:
    """float64 -> a 16-bit format in nearest_even / nearest_away / toward_zero, no flags,
    when every lane is in the target's normal range; False (nothing written) otherwise.

    Each float64 is two 32-bit words; the upper one, hw, holds the sign, the 11-bit
    exponent and the top 20 fraction bits, the lower one (lw) the other 32:

        hw  | s | e (11) | f51 .. f32 |        lw  | f31 .. f0 |

    Condition (besides :func:`_upper_word_applies`): every lane has
    |hw| in [min_normal's upper word, max_finite's upper word] (both lower words are 0).
    So |x| lies in [min_normal, max_finite + 2**-52 ulp_f64 * 2**32), whose values round,
    in the three modes, to a normal number from min_normal to max_finite; no overflow,
    subnormal, flush or saturation question arises and the sign goes along.

    With m the target's fraction bits, s = m - 4 and R the re-bias (1023 - bias) << 20,
    the 16-bit result is the upper half of one 32-bit word (a narrowing copy, no shift):

        t = hw + (2**s - 1) * |hw| + A  =  sign << 31  +  (|hw| - R) << s  +  H   (mod 2**32)

    (|hw| - R) << s puts the target's magnitude pattern at bits 16 .. 30 with the
    20 - m cut bits of hw below, from bit s up (its top bits, dropped by the shift, are
    those of |hw| - R, which is below 2**(35 - m) in range); it stays below 2**31, so
    the sign bit survives.  H = 2**15 (the guard bit) gives nearest_away; H = 0
    toward_zero -- both exact without lw, since lw only decides between the neighbours
    at hw's own tie.  nearest_even differs from nearest_away only on exact ties with an
    even kept lsb: those lanes have hw's cut bits at exactly their tie (the lower 16
    bits of t are then 0) and lw = 0, and nearest_away gave the odd neighbour above, so
    they lose 1.  Lanes whose t has lower half 0 are few in data off ties (1 in
    2**(20 - m)): they are gathered; many (ties in the data) are fixed in whole-block passes.
    """
    u = blk.view(np.uint64)
    n = u.size
    # the first lanes first: data with many lanes outside the range (zeros, subnormals,
    # overflows) is declined for a small share of the passes below (a strided sample
    # cost a tenth of the kernel: one cache line fetched per lane)
    probe = np.bitwise_and(u[:_PROBE_LANES], q.probe_abs)
    if probe.max() > q.probe_hi or probe.min() < q.probe_lo:
        return False
    hw = ws.get("up_hw", np.uint32, n)
    _upper_into(u, hw)
    mag = ws.get("up_mag", np.uint32, n)
    np.bitwise_and(hw, q.abs_mask, out=mag)
    if mag.max() > q.hi or mag.min() < q.lo:
        return False
    t = mag
    np.multiply(mag, q.mul, out=t)
    np.add(t, hw, out=t)
    np.add(t, q.add, out=t)
    _upper_into(t, out)
    if not q.nearest_even:
        return True
    low = ws.get("up_low", np.uint16, n)
    np.copyto(low, t, casting="unsafe")  # the lower 16 bits of t
    tie = np.equal(low, np.uint16(0), out=ws.get("up_tie", np.bool_, n))
    idx = np.flatnonzero(tie)
    if idx.size == 0:
        return True
    if idx.size <= _UPPER_TIE_SHARE * n:
        exact = (u[idx] & np.uint64(0xFFFFFFFF)) == 0
        o = out[idx]
        o -= (exact & (o & np.uint16(1)).astype(bool)).astype(np.uint16)
        out[idx] = o
        return True
    lw = hw  # free again
    np.copyto(lw, u, casting="unsafe")  # the lower words
    np.logical_and(tie, lw == 0, out=tie)
    np.copyto(low, tie.view(np.uint8), casting="unsafe")
    np.bitwise_and(low, out, out=low)  # 1 where an exact tie went to the odd neighbour
    np.subtract(out, low, out=out)
    return True


def _clamp_overflow(p: _Plan, u, t, c):
    """Clamp rounded sums above max_finite (finite input beyond the format's range) to
    IEEE 754's overflow result (section 7.4): the pattern just above max_finite -- the
    infinity of IEEE formats, the NaN S.1111.111 of fn formats (OCP's non-saturating
    overflow) -- where the mode overflows to infinity, else max_finite.  A sum at or
    below max_finite's (shifted) pattern is a value that rounded to at most max_finite
    and is left alone.  Upward and downward decide per sign; ``c`` is scratch."""
    if p.cap is not None:
        np.minimum(t, p.cap, out=t)
        return
    np.right_shift(u, p.sign_shift, out=c)  # 1 for -x
    np.left_shift(c, p.k_, out=c)
    if p.rounding is Rounding.UPWARD:  # +x -> infinity, -x -> -max_finite
        np.subtract(p.cap_special, c, out=c)
    else:  # downward: -x -> -infinity, +x -> max_finite
        np.add(c, p.cap_finite, out=c)
    np.minimum(t, c, out=t)


def _below_normal(p: _Plan, blk, small, out, ws):
    """Overwrite the lanes below the target's smallest normal (zeros included) with
    their rounded patterns, computed in the input's own float type.

    Condition: |x| < min_normal, no flags wanted, subnormals kept, a format with -0
    (fnuz turns -0 into +0) and a mode with a float rounding function.  Then
    y = x * 2**(m - emin) is exact (a power-of-two scaling up, |y| < 2**m) and counts
    subnormal quanta; numpy's rint / trunc / ceil / floor round it to an integer N in
    nearest_even / toward_zero / upward / downward exactly, ties away is trunc and one
    up where the cut fraction is at least a half (:func:`_round_half_away`), and
    round-to-odd is trunc with the lowest bit set where trunc changed y.  |N| is the target's magnitude
    pattern (2**m, where rounding reached min_normal, is min_normal's pattern), and
    the sign is x's (IEEE: a tiny negative value rounded to zero is -0).  The other
    lanes compute garbage here and keep what the caller wrote.
    """
    n = blk.size
    y = ws.get("fast_y", blk.dtype, n)
    np.multiply(blk, p.scale, out=y)
    odd = p.rounding is Rounding.ODD
    if odd:
        y2 = ws.get("fast_y2", blk.dtype, n)
        np.trunc(y, out=y2)
        cut = y2 != y
        y = y2
    elif p.rounding is not Rounding.NEAREST_AWAY:
        p.small_rounding(y, out=y)
    np.abs(y, out=y)
    # other lanes may hold huge values or inf (NaN only for NaN input), whose casts take
    # a slow path: cap them first
    np.minimum(y, p.pattern_cap, out=y)
    if p.rounding is Rounding.NEAREST_AWAY:  # on |y|, capped: no inf - inf inside
        _round_half_away(y, ws)
    res = ws.get("fast_res", out.dtype, n)
    w = ws.get("fast_w", out.dtype, n)
    np.copyto(res, y, casting="unsafe")  # |N| <= 2**m: exact
    if odd:  # lowest bit |= "trunc cut something"
        np.copyto(w, cut.view(np.uint8), casting="unsafe")
        np.bitwise_or(res, w, out=res)
    negative = np.signbit(blk, out=ws.get("fast_neg", np.bool_, n))
    np.copyto(w, negative.view(np.uint8), casting="unsafe")
    np.left_shift(w, p.sign_to_top, out=w)
    np.bitwise_or(res, w, out=res)
    # out <- res where small: out ^ ((out ^ res) & -small), no masked loop (those are slow)
    np.copyto(w, small.view(np.uint8), casting="unsafe")
    np.negative(w, out=w)
    np.bitwise_xor(res, out, out=res)
    np.bitwise_and(res, w, out=res)
    np.bitwise_xor(out, res, out=out)


def _round_half_away(y, ws):
    """y <- y rounded to an integer, ties away from zero, in place, for finite y >= 0
    (numpy's rint breaks ties to even and has no such sibling).

    t = trunc(y) and the fraction y - t are exact (the fraction is y's own low bits), so
    "one up where the fraction is at least a half" rounds exactly: no y + 0.5, which
    rounds up the float just below a half.
    """
    t = ws.get("fast_y2", y.dtype, y.size)
    np.trunc(y, out=t)
    np.subtract(y, t, out=y)
    up = np.greater_equal(y, 0.5, out=ws.get("fast_up", np.bool_, y.size))
    np.add(t, up, out=y)


# =====================================================================================
# decoding
# =====================================================================================
def decode_by_shift(b, fmt: Format, out) -> bool:
    """Write the values of patterns ``b`` into ``out`` by a left shift, if that is exact.

    Condition: ``out``'s float format has fmt's exponent width and bias and IEEE
    specials, and at least fmt's fraction bits.  Then fmt's pattern is the top of the
    output's pattern, value for value (NaN sign and payload bits included):

        fmt  | s | e..e | f..f |            ->  out  | s | e..e | f..f 0..0 |

    Returns False (nothing written) when the condition does not hold.
    """
    if not ENABLED or fmt.specials is not Specials.IEEE or out.dtype.kind != "f":
        return False
    bits_out = out.dtype.itemsize * 8
    e_out = {16: 5, 32: 8, 64: 11}[bits_out]
    m_out = bits_out - 1 - e_out
    if fmt.exponent_bits != e_out or fmt.bias != (1 << (e_out - 1)) - 1 or fmt.mantissa_bits > m_out:
        return False
    udt = np.dtype(f"u{bits_out // 8}")
    words = out.view(udt)
    np.copyto(words, b, casting="unsafe")  # widen first: a casting shift is much slower
    np.left_shift(words, udt.type(m_out - fmt.mantissa_bits), out=words)
    return True


def decode_by_widening(b, fmt: Format, out, ws=None) -> bool:
    """Write the values of e8mN patterns (bf16, tf32, fp32 itself) into a float64 ``out``
    by way of float32, if that is exact; return False (``out`` partly written) otherwise.

    Condition: fmt's pattern is the top of float32's (:func:`_is_top_of_fp32`) or is
    float32's, so :func:`decode_by_shift` (or a view) gives the float32 values exactly,
    and no lane is a NaN: widening float32 -> float64 is exact for every other value,
    but quiets a signaling NaN (the general decoder keeps its bits).
    """
    if not ENABLED or out.dtype != np.float64:
        return False
    if fmt == fp32 and b.dtype == np.uint32:
        f = b.view(np.float32)
    elif _is_top_of_fp32(fmt):
        f = np.empty(b.size, dtype=np.float32) if ws is None else ws.get("dec_f32", np.float32, b.size)
        decode_by_shift(b, fmt, f)
    else:
        return False
    top = f.max(initial=0.0)
    if top != top:  # max propagates NaN
        return False
    np.copyto(out, f)
    return True


#: (format, output dtype) -> read-only table of the 2**bits values, built once
_TABLES: dict = {}

#: formats of at most this many bits decode by table lookup (2**16 float64 = 512 KiB)
TABLE_MAX_BITS = 16


def decode_table(fmt: Format, dtype, build):
    """The 2**fmt.bits values of fmt as a read-only ``dtype`` array, or None for wider
    formats.  ``build(patterns, out)`` is the general decoder; it runs once per
    (format, dtype), so the table holds exactly its results (NaN payloads included)."""
    if not ENABLED or fmt.bits > TABLE_MAX_BITS:
        return None
    key = (fmt, np.dtype(dtype))
    table = _TABLES.get(key)
    if table is None:
        table = np.empty(1 << fmt.bits, dtype=dtype)
        build(np.arange(1 << fmt.bits, dtype=fmt.storage_dtype), table)
        table.flags.writeable = False
        _TABLES[key] = table  # a race builds the same table twice: harmless
    return table
