"""quantize of float64 / float32 input into a narrower IEEE format, in the input's own
type -- every deterministic mode, without flags: blocks in the target's normal range by
integer operations on the input's own patterns (:func:`round_normal_block`), every other
block by rounding each value on its grid: a scale, numpy's rint / trunc / ceil / floor,
and an unscale (:func:`round_block`); and encode of the same (:func:`encode_block`): the
grid's values, then their patterns by a power-of-two scale in float32 and a shift.

The grid kernel (:func:`round_block`)
------------------------------------
For one lane ``x`` (of float type T: float64 or float32, ``P`` significand bits, largest
exponent ``E_T``) and a target of precision ``p``, exponents ``emin..emax``, with
infinities (fp16, bf16, ...), let ``a = max(2**e, 2**emin)`` where ``2**e`` is ``x``'s
pattern with its sign and fraction bits cleared (one AND: the power of two of its binade,
0 for T's zeros and subnormals, infinity for infinities and NaNs) -- one maximum, no
table.  With ``q = a * 2**(1-p)`` (the grid's spacing at ``x``; for odd, ``2q``: the
first scale is ``2**(p-2)``, see below):

    y = (x / a) * 2**(p-1);   y = R(y);   result = y * a * 2**(1-p),  then  * 2**k * 2**-k  and/or  clip

(``y`` is ``x / q``) where ``R`` is the mode's rounding to an integer: rint
(nearest_even: numpy's rint is the IEEE roundToIntegralTiesToEven), trunc
(toward_zero), ceil (upward), floor (downward), and for nearest_away and odd the
compositions below; ``k = E_T - emax``.  The products by ``2**k`` and ``2**-k`` are made
by the modes that round some sign to nearest or away from zero (nearest_even,
nearest_away, upward, downward: ``2**(1-p)`` and ``2**k`` as one scale); the clip to
``[-max_finite, max_finite]`` on the sides that round toward zero (toward_zero and odd:
both; upward: the negative side; downward: the positive side).

Why the bits equal ``decode(encode(x))``:

* Binades ``e`` in ``[emin, emax]`` (``x`` in ``[2**e, 2**(e+1))``): ``a = 2**e``, the
  target's neighbours of ``x`` are the multiples of ``q = 2**(e-p+1)``; ``x / a`` is in
  ``[1, 2)`` and ``y`` in ``[2**(p-1), 2**p)``, both exact (power-of-two scales with
  normal results), and ``R(y) * q`` is the mode's rounding of ``x`` on the target's grid
  with unbounded exponent, exact (``R(y) * a`` is an integer below ``2**p`` times a
  power of two, then scaled by powers of two).  The only value above max_finite it can
  give is ``2**(emax+1)`` (``R(y) = 2**p`` in binade emax: IEEE's overflow after
  rounding, which only the nearest and away-from-zero roundings reach); times ``2**k``
  it is ``2**(E_T+1)``, T's overflow: infinity, which ``2**-k`` keeps -- IEEE's result
  for those modes -- while every value ``<= max_finite`` comes back exactly
  (``max_finite * 2**k < 2**(E_T+1)``).
* Binades below ``emin`` (the target's subnormal range and below, T's subnormals and
  zeros included): ``a = 2**emin`` and the grid is the fixed ``q = min_subnormal =
  2**(emin-p+1)``; ``x / a`` scales up (``2**emin <= 1``), so ``y`` is exact and
  ``R(y) * q`` is the rounding on the subnormal grid, 0 and min_subnormal included.
* Binades above ``emax`` (finite): overflow.  ``a = 2**e`` as in the normal range, so
  ``y`` is in ``[2**(p-1), 2**p)``, every rounding keeps ``|R(y)| >= 2**(p-1)`` and
  ``|R(y) * q| >= 2**e >= 2**(emax+1)`` (or T's infinity, where ``R(y) * a`` overflows).
  On the nearest and away-from-zero sides the ``2**k`` pair makes that infinity; on the
  toward-zero sides the clip makes it ``max_finite``: IEEE's results.  The clip changes
  nothing else (every other result is ``<= max_finite``); on a side that has both
  (upward's negative side), ``-inf`` from the ``2**k`` pair clips to ``-max_finite``,
  as it should.
* Exponent field all ones: ``a = inf`` and ``x / a`` is NaN (``inf / inf``, or a NaN
  input).  Every lane whose result is NaN (so infinities and NaNs, which the general
  path keeps or quiets by the codec's rules) is left to the caller: :func:`round_block`
  returns True when the block has any (one max, which propagates NaN), and the caller
  recomputes those lanes on the general path.
* Signs and zeros: the divisions and products are by positive powers of two and the
  roundings to integral keep the sign (rint/trunc/ceil/floor of a value in (-1, 0]
  give -0), so the sign of ``x`` is kept, -0 included.

nearest_away: ``R(y) = trunc(y - (trunc(y) - y))``.  With ``n = trunc(y)`` and
``y = n + f`` (``|f| < 1``, ``f`` of ``y``'s sign or zero), ``y - (n - y) = n + 2f`` and
``trunc(n + 2f)`` is ``n +- 1`` exactly when ``|f| >= 1/2``: ``y`` rounded to nearest,
ties away.  Every step is exact: ``n - y`` is a multiple of ``y``'s ulp below 1 in
magnitude, and ``n + 2f = 2y - n`` a multiple of ``y``'s ulp (of twice it, where it
reaches the next binade: ``n`` is an integer and ``y < 2**52``; from ``2**52`` on
``n = y``).  A zero result keeps ``y``'s sign: ``-0 - (+0) = -0``.

odd: the first scale is ``2**(p-2)`` (so ``y`` here is ``x / (2q)``, half the grid's
``y``), and ``R = (floor(y) + ceil(y)) / 2``, then the product by ``2q`` (the halving
and the doubling cancel: the scales after ``R`` are the other modes').  With ``Y = 2y``
the value on the grid: where ``Y`` is an even integer, ``floor(y) = ceil(y) = y`` and
``2R = Y``; else ``2R = 2 floor(y) + 1`` (``y > 0``) or ``2 ceil(y) - 1`` (``y < 0``), the
odd integer between the even integers on either side of ``Y``: truncation with the last
bit set when inexact.  At ``2**(p-1) <= Y < 2**p`` that odd integer is below ``2**p``
(no overflow); below ``2**(p-1)`` it is the subnormal grid's odd neighbour.  Every step
is exact (integers below ``2**p``, halved), and a zero ``y`` gives ``floor = ceil = y``:
its sign is kept.  (No ``np.sign``: it branches per lane, several times slower on
random signs.)

The normal-range kernel (:func:`round_normal_block`)
---------------------------------------------------
Where every lane of a block lies in ``[min_normal, max_finite]`` in magnitude (checked on
the doubled pattern ``bits << 1``, which drops the sign: its minimum ``>= min_normal``'s
doubled pattern and its maximum ``<= max_finite``'s; zeros, NaNs, infinities, tiny and
overflowing lanes all fail it, and the block goes to the grid kernel), the target's
neighbours of ``x`` are ``x``'s pattern with its low ``d = P - p`` bits cleared
(``keep``) and that plus one unit of bit ``d``; as integers, T's patterns of one sign
are monotone in magnitude and a carry out of the significand steps into the next
binade with significand 0 -- again a neighbour.  So, on the pattern with its sign:
toward_zero ``b & keep``; nearest_away ``(b + 2**(d-1)) & keep``; nearest_even
``(b + 2**(d-1) - 1 + lsb) & keep`` with ``lsb = (b >> d) & 1``; away from zero (upward on
positive lanes, downward on negative ones) ``(b + 2**d - 1) & keep``; odd
``(b | ((b & low) + low)) & keep`` with ``low = 2**d - 1`` (bit ``d`` of
``(b & low) + low`` is set exactly when some bit below ``d`` is).  No result exceeds
``max_finite``: ``|x| <= max_finite`` and max_finite is a neighbour of itself; none is
below min_normal.  The signs, and the input's exponent field above the cut, stay as
they are.  The first PROBE_LANES lanes are checked first, so that whole-range blocks
skip the full check.

The pattern kernel (:func:`encode_block`)
----------------------------------------
The grid's results are values of the target or infinities (NaN lanes are the caller's).
For a 16-bit target with at most 8 exponent bits whose values float32 holds (``emax <=
127``, ``emin - m >= -149``; fp16, bf16), a value ``v`` (cast to float32: exact) times
``2**(b - 127)`` (``b`` the target's bias, ``m`` its fraction bits) has the float32
pattern ``magnitude(v) << (23 - m)`` with ``v``'s sign: a normal ``2**e * 1.f`` goes to
biased exponent ``e + b`` (1 .. 2**w - 2, a normal float32) with ``f`` at the top of the
fraction; a subnormal ``c * 2**(emin - m)`` to ``c * 2**(-126 - m) = (c << (23 - m)) *
2**-149``, a float32 subnormal (numpy sets no flush-to-zero); zeros keep their sign.
All of it is exact (a power-of-two scale that drops no bit).  So the low 15 bits of the
pattern shifted right by ``23 - m`` are the target's magnitude bits, and bit 31 its sign
(bit 15 after a shift by 16).  Infinities: float32's ``0x7F800000`` shifted gives ones in
bits ``m .. m + 7``, whose low 15 bits are the target's infinity (its exponent field all
ones, fraction 0).

Conditions (:func:`plan`): T float64 or float32, the target narrower (``p <= P - 2``),
with IEEE infinities and NaNs, its range inside T's (``emax < E_T``,
``emin - p + 1 > 1 - E_T - P + 1``, ``p - 1 - emin >= 0``); a deterministic mode; gradual
underflow (``subnormals``); no saturation; no flags (the caller's); numpy's default
floating-point environment (round to nearest even, no flush-to-zero), which the codec
assumes everywhere.
"""

from __future__ import annotations

import numpy as np

from ..formats import Format
from ..rounding import Rounding

__all__ = ["ENCODE_CHUNK", "PROBE_LANES", "ValueGridPlan", "encode_block", "plan", "round_block",
           "round_normal_block"]

#: (positive, negative): whether the mode rounds lanes of that sign toward zero (its
#: overflow is then +-max_finite), else to nearest or away from zero (infinity)
_TOWARD_ZERO = {Rounding.TOWARD_ZERO: (True, True), Rounding.ODD: (True, True),
                              Rounding.UPWARD: (False, True), Rounding.DOWNWARD: (True, False),
                              Rounding.NEAREST_EVEN: (False, False), Rounding.NEAREST_AWAY: (False, False)}

#: the lanes :func:`round_normal_block` looks at before it checks the whole block
PROBE_LANES = 256

_PLANS: dict = {}


class ValueGridPlan:
    """The constants of one (format, input type, mode): ``grid`` (the exponent field's
    mask, ``2**emin`` and the scales ``2**(p-1)`` -- ``2**(p-2)`` for odd -- and the
    one after the product by ``a``), ``up`` (the pair ``2**(k-p+1), 2**-k`` or None),
    ``clamp`` (the bounds or None), ``patterns`` (:func:`encode_block`'s constants, or
    None where the target is not one it takes)."""

    __slots__ = ("dtype", "uint", "shift", "grid", "up", "clamp", "mode", "normal", "grid_pays", "floors",
                 "patterns")

    def __init__(self, dtype, uint, shift, grid, up, clamp, mode, normal, grid_pays):
        self.dtype, self.uint, self.shift = dtype, uint, shift
        self.grid, self.up, self.clamp, self.mode, self.normal = grid, up, clamp, mode, normal
        #: whether round_block beats the codec's encoders on blocks that leave the normal
        #: range: for targets with narrow exponent ranges (fp16: a whole-range block has
        #: about a third of its lanes outside it); with 8 exponent bits or more (bf16) the
        #: encoders' masked passes over the few lanes outside were faster (bench_codec)
        self.grid_pays = grid_pays
        self.floors = (self.dtype.char, float(grid[1]))  # the key of its lanes of 2**emin in _FLOORS

    def floor(self, n: int):
        """``n`` lanes of ``2**emin`` (numpy's maximum is several times faster against an
        array than against a scalar), shared by the plans of one input type and emin."""
        floors = _FLOORS.get(self.floors)
        if floors is None or floors.size < n:
            floors = np.full(n, self.grid[1], self.dtype)
            floors.flags.writeable = False
            _FLOORS[self.floors] = floors  # (one assignment: safe to race)
        return floors[:n]


#: (input type, 2**emin) -> that value in as many lanes as the longest block asked for
_FLOORS: dict = {}


def plan(fmt: Format, dtype, attrs):
    """The plan for quantizing ``dtype`` input into ``fmt`` under ``attrs`` (flags are
    the caller's to exclude), or None where the module's conditions do not hold."""
    dtype = np.dtype(dtype)
    r = attrs.rounding
    if dtype.char not in "fd" or not dtype.isnative or r not in _TOWARD_ZERO or attrs.saturate \
            or not attrs.subnormals:
        return None
    key = (fmt, dtype.char, r)
    found = _PLANS.get(key)
    if found is None and key not in _PLANS:
        found = _PLANS[key] = _build(fmt, dtype, r)
    return found


def _build(fmt: Format, dtype, r):
    info = np.finfo(dtype)
    P, ew = info.nmant + 1, info.nexp
    bias = (1 << (ew - 1)) - 1
    p, emin, emax = fmt.precision, fmt.emin, fmt.emax
    if not (fmt.has_infinity and fmt.has_nan and fmt.specials == "ieee" and p <= P - 2 and emax < bias
            and emin - p + 1 > 1 - bias - P + 1 and p - 1 - emin >= 0
            and float(fmt.max_finite) == (2.0 - 2.0 ** (1 - p)) * 2.0 ** emax):
        return None
    toward = _TOWARD_ZERO[r]
    odd = r is Rounding.ODD
    uint = np.dtype(f"u{dtype.itemsize}")
    maxf = dtype.type(fmt.max_finite)
    k = bias - emax
    up = None if toward == (True, True) else (dtype.type(2.0 ** (k - p + 1)), dtype.type(2.0 ** -k))
    clamp = None if toward == (False, False) else (-maxf if toward[1] else -np.inf, maxf if toward[0] else np.inf)
    scales = (dtype.type(2.0 ** (p - 1 - odd)), up[0] if up else dtype.type(2.0 ** (1 - p)))
    grid = (uint.type(((1 << ew) - 1) << (P - 1)), dtype.type(2.0 ** emin), scales)
    m = p - 1
    patterns = None if not (fmt.bits == 16 and fmt.exponent_bits <= 8 and emax <= 127 and emin - m >= -149) else (
        np.float32(2.0 ** (fmt.bias - 127)), np.uint32(23 - m), np.uint32(16), np.uint16(0x7FFF), np.uint16(0x8000))
    d = P - p  # the pattern bits below the target's last significand bit, in its normal range
    u = uint.type
    normal = dict(lo=u((bias + emin) << P), hi=u(np.array(maxf, dtype).view(uint) << u(1)), d=u(d),
                  one=u(1), keep=~u((1 << d) - 1), low=u((1 << d) - 1), half=u(1 << (d - 1)),
                  below_half=u((1 << (d - 1)) - 1), sign=u(8 * dtype.itemsize - 1))
    found = ValueGridPlan(dtype, uint, uint.type(P - 1), grid, up, clamp, r, normal, fmt.exponent_bits < 8)
    found.patterns = patterns
    return found


def round_normal_block(pl: ValueGridPlan, blk, out, ws) -> bool:
    """Round ``blk`` into ``out`` by the normal-range integer kernel (see the module's
    docstring) and return True, or return False (nothing written) when some lane of the
    block is not a zero-free normal-range value: then :func:`round_block` takes it."""
    c = pl.normal
    bits, w = blk.view(pl.uint), out.view(pl.uint)
    head = bits[:PROBE_LANES] << c["one"]  # the magnitudes' patterns, doubled
    if head.min() < c["lo"] or head.max() > c["hi"]:
        return False  # (a whole-range block, most likely: not worth the full check)
    np.left_shift(bits, c["one"], out=w)
    if w.min() < c["lo"] or w.max() > c["hi"]:
        return False
    _INTEGER[pl.mode](bits, w, c, ws.get("value_grid.word", pl.uint, bits.size))
    return True


def _int_nearest_even(b, w, c, t):
    np.right_shift(b, c["d"], out=t)
    np.bitwise_and(t, c["one"], out=t)
    np.add(b, t, out=w)
    np.add(w, c["below_half"], out=w)
    np.bitwise_and(w, c["keep"], out=w)


def _int_nearest_away(b, w, c, t):
    np.add(b, c["half"], out=w)
    np.bitwise_and(w, c["keep"], out=w)


def _int_toward_zero(b, w, c, t):
    np.bitwise_and(b, c["keep"], out=w)


def _int_upward(b, w, c, t):  # away from zero on positive lanes
    np.right_shift(b, c["sign"], out=t)
    np.subtract(t, c["one"], out=t)  # all ones where positive, 0 where negative
    np.bitwise_and(t, c["low"], out=t)
    np.add(b, t, out=w)
    np.bitwise_and(w, c["keep"], out=w)


def _int_downward(b, w, c, t):  # away from zero on negative lanes
    np.right_shift(b, c["sign"], out=t)
    np.multiply(t, c["low"], out=t)
    np.add(b, t, out=w)
    np.bitwise_and(w, c["keep"], out=w)


def _int_odd(b, w, c, t):
    np.bitwise_and(b, c["low"], out=t)
    np.add(t, c["low"], out=t)  # bit d set exactly where some lower bit is
    np.bitwise_or(b, t, out=w)
    np.bitwise_and(w, c["keep"], out=w)


def round_block(pl: ValueGridPlan, blk, out, ws) -> bool:
    """Round the contiguous ``blk`` (``pl.dtype``) into ``out`` (same dtype and size) by
    the module's kernel; ``ws.get(name, dtype, n)`` lends scratch buffers.  Returns True
    when some lanes of ``out`` are NaN (placeholders: the caller recomputes every NaN
    lane of ``out`` on the general path), else False."""
    n = blk.size
    mask, _, (pre, post) = pl.grid
    a = ws.get("value_grid.grid", pl.dtype, n)
    np.bitwise_and(blk.view(pl.uint), mask, out=a.view(pl.uint))  # 2**e, 0 or inf
    np.maximum(a, pl.floor(n), out=a)
    np.divide(blk, a, out=out)
    np.multiply(out, pre, out=out)
    _ROUND[pl.mode](out, ws, pl.dtype)
    np.multiply(out, a, out=out)
    np.multiply(out, post, out=out)
    if pl.up is not None:
        np.multiply(out, pl.up[1], out=out)
    if pl.clamp is not None:
        np.clip(out, pl.clamp[0], pl.clamp[1], out=out)
    top = out.max()
    return bool(top != top)


#: lanes :func:`encode_block` rounds at a time (the encoders' blocks are longer): 2**17 was
#: a little faster than 2**16 (fewer numpy calls) and 2**18 (buffers in L2) on one thread
ENCODE_CHUNK = 1 << 17


def encode_block(pl: ValueGridPlan, blk, out, ws):
    """The patterns of the contiguous ``blk`` (``pl.dtype``) rounded into the plan's
    format (``pl.patterns`` not None), into the uint16 ``out``: :func:`round_block`, then
    the pattern kernel (see the module's docstring), ENCODE_CHUNK lanes at a time.
    Returns the mask of lanes left to the caller's general path (NaN results: the
    grid's infinity and NaN inputs; their ``out`` lanes are placeholders), or None."""
    with np.errstate(all="ignore"):  # (callers outside the codec's streams too: infinities give NaN)
        return _encode_chunks(pl, blk, out, ws)


def _encode_chunks(pl: ValueGridPlan, blk, out, ws):
    align, cut, down, magnitude, sign = pl.patterns
    rest = None
    for start in range(0, blk.size, ENCODE_CHUNK):
        stop = min(start + ENCODE_CHUNK, blk.size)
        n, dst = stop - start, out[start:stop]
        values = ws.get("value_grid.values", pl.dtype, n)
        if round_block(pl, blk[start:stop], values, ws):
            rest = np.zeros(blk.size, dtype=bool) if rest is None else rest
            np.isnan(values, out=rest[start:stop])
        narrow = values
        if pl.dtype != np.float32:
            narrow = ws.get("value_grid.narrow", np.float32, n)
            np.copyto(narrow, values, casting="same_kind")  # values of the format: exact
        np.multiply(narrow, align, out=narrow)
        word = narrow.view(np.uint32)
        np.right_shift(word, cut, out=dst, casting="unsafe")
        np.bitwise_and(dst, magnitude, out=dst)
        top = ws.get("value_grid.sign", np.uint16, n)
        np.right_shift(word, down, out=top, casting="unsafe")
        np.bitwise_and(top, sign, out=top)
        np.bitwise_or(dst, top, out=dst)
    return rest


def _nearest_away(y, ws, dtype):
    n = ws.get("value_grid.n", dtype, y.size)
    np.trunc(y, out=n)
    np.subtract(n, y, out=n)
    np.subtract(y, n, out=y)
    np.trunc(y, out=y)


def _odd(y, ws, dtype):  # y = x / (2q): half the grid's y (the halving: in the scale after)
    t = ws.get("value_grid.n", dtype, y.size)
    np.floor(y, out=t)
    np.ceil(y, out=y)
    np.add(y, t, out=y)


_ROUND = {Rounding.NEAREST_EVEN: lambda y, ws, dt: np.rint(y, out=y),
          Rounding.TOWARD_ZERO: lambda y, ws, dt: np.trunc(y, out=y),
          Rounding.UPWARD: lambda y, ws, dt: np.ceil(y, out=y),
          Rounding.DOWNWARD: lambda y, ws, dt: np.floor(y, out=y),
          Rounding.NEAREST_AWAY: _nearest_away,
          Rounding.ODD: _odd}
_INTEGER = {Rounding.NEAREST_EVEN: _int_nearest_even, Rounding.NEAREST_AWAY: _int_nearest_away,
            Rounding.TOWARD_ZERO: _int_toward_zero, Rounding.UPWARD: _int_upward, Rounding.DOWNWARD: _int_downward,
            Rounding.ODD: _int_odd}
