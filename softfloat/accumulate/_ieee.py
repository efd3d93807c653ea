"""IEEE accumulators: every addition rounded once in the accumulator format.

The orders, ``c``, ``product`` and ``block`` are defined in the package docstring; this
module carries them out tile by tile.  Each step hands the exact sum to the operations'
own kernels (``softfloat.ops``: float64 error-free transformations, exact rational
arithmetic on the rare hazard lanes) and their rounding point, then decodes the rounded
bits back to exact float64 values for the next step.  Work is vectorised over the
output elements of a tile; the pairwise order is also vectorised over the pairs of a
level, and the leaves of a chunk of k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _fastpaths
from .._decode import decode_block
from .._flagmasks import FlagMasks
from ..attributes import RoundingAttributes
from .._workspace import Workspace
from ..formats import Format, fp64
from ..rounding import Rounding
from ..ops.kernels import (
    Exact,
    Target,
    add_exact,
    add_kernel,
    fma_exact,
    fma_kernel,
    is_narrow,
    mul_exact,
    mul_kernel,
    round_block,
)
from . import _binade, _draws, _scalar_chain
from ._operands import invalid_products

__all__ = ["Arithmetic", "Rounder", "Spec", "TileFlags", "join"]

#: outputs per tile up to which a sequential chain is taken a window of steps at a time,
#: and up to which a chain of at least LONG_CHAIN steps is (beyond them, or for shorter
#: chains, one vectorised step over every output costs less than the windows' set-up;
#: measured with fp16/bf16 accumulators on positive terms and on random walks)
WINDOW_LANES, WINDOW_LANES_LONG, LONG_CHAIN = 8, 256, 1024


@dataclass(frozen=True)
class Spec:
    """Everything one reduction call fixes (already validated: a _spec.ReductionSpec's
    fields, the accumulator as the IEEE arithmetic sees it, and a dask chunk's place)."""

    fmt: Format  # the inputs
    acc: Format  # the accumulator A
    out: Format  # out_format O
    product: Format | None
    order: str
    block: int | None
    attrs: RoundingAttributes
    key: np.uint64 | None  # stochastic rounding only
    want: bool
    positions: object = None  # a softfloat._random.Positions: this output's place in a whole one (dask)
    # only the swamped counts are wanted (want is True): the native and fused fast paths
    # count them alone; the arithmetic here computes every flag either way
    swamped_only: bool = False


def join(f: Format, g: Format) -> Format:
    """An IEEE format holding every value of ``f`` and of ``g`` (it picks the kernels'
    float64 path: see ``softfloat.ops.kernels.is_narrow`` and ``sums_are_exact``).  fn,
    fnuz and finite formats reach one binade higher than IEEE ones: one more exponent bit."""
    wider = any(h.specials.value != "ieee" for h in (f, g))
    e = min(max(f.exponent_bits, g.exponent_bits) + wider, 11)
    return Format(e, max(f.mantissa_bits, g.mantissa_bits))


class TileFlags:
    """The flags and swamped counts of one tile's outputs, ORed / added over its steps."""

    def __init__(self, n: int, want: bool):
        self.n = n
        self.masks = FlagMasks.zeros(n) if want else None
        self.swamped = np.zeros(n, dtype=np.int64) if want else None

    def add(self, fl: FlagMasks, swamped=None):
        """OR in a step's flags (masks of shape (n,) or (rows * n,)); add swamped counts."""
        if self.masks is None:
            return
        self.masks.or_(fl)
        if swamped is not None:
            n = self.n
            self.swamped += swamped.reshape(n) if swamped.size == n else swamped.reshape(-1, n).sum(axis=0)


class Rounder:
    """Rounds kernels' exact results into one format and returns exact float64 values."""

    def __init__(self, fmt: Format, attrs: RoundingAttributes, want: bool):
        self.fmt, self.attrs, self.want = fmt, attrs, want
        self.target = Target(fmt, attrs, want)
        self.ws = Workspace(0)
        # a format whose NaNs are signed and that has no infinity (fn): the NaN a
        # non-NaN value rounds to (overflow, or an infinity) keeps that value's sign, as
        # in sf.encode, and reaches reduce._store as a float64 NaN of that sign
        self.signed_nan = fmt.specials.value == "fn"
        # round_block leaves NaN lanes to the caller (the operations' NaN rules): where
        # a pair goes to the rounding point as significands (fp64, stochastic rounding)
        # they come back as zeros, so every format with a NaN writes its NaN in them
        self.has_nan = fmt.has_nan
        # binary64 to nearest even: a pair's hi is the rounded result (see _binary64)
        self.binary64 = (fmt.precision == 53 and fmt.exponent_bits == 11 and fmt.specials.value == "ieee"
                         and attrs.rounding is Rounding.NEAREST_EVEN)
        self.normal = (float(fmt.min_normal), float(fmt.max_finite))

    def __call__(self, res: Exact, exact, xs, rand):
        """(values, FlagMasks or None): res rounded into fmt, NaN lanes flagged invalid
        where no operand was a NaN, and cleared of the other flags."""
        if self.binary64 and res.lo is not None and _fastpaths.ENABLED:
            found = self._binary64(res)
            if found is not None:
                return found
        n = res.hi.size
        if self.ws.size < n:
            self.ws = Workspace(n)
        bits = self.ws.get("rounded", self.fmt.storage_dtype, n)
        fl = round_block(res, exact, xs, self.target, rand, bits, self.ws)
        values = decode_block(bits, self.fmt, np.empty(n), self.ws)
        nan = np.isnan(res.hi)
        if self.has_nan and nan.any():
            values[nan] = np.nan  # a NaN passed on or made by an operation: canonical (+)
        if not self.want:
            return values, None
        if nan.any():
            made = nan.copy()
            for x in xs:
                made &= ~np.isnan(x)
            if res.invalid is not None:
                made |= res.invalid
            fl.or_(FlagMasks(invalid=made))  # (fl's own: a NaN into a format without NaN)
            fl.clear_at_nan(nan)
        elif res.invalid is not None:  # the kernel's invalid (inf - inf, 0 * inf) beside
            fl.or_(FlagMasks(invalid=res.invalid))  # the rounding's (inf into a format without inf)
        return values, fl


    def _binary64(self, res: Exact):
        """The rounding into a binary64 format to nearest even of an add, mul or fma
        kernel's pair (hi, lo) where every lane is finite, no hazard, and |hi| above the
        smallest normal value: ``(hi, inexact where lo != 0)``; else None (the rounding
        point's significand path).

        Why: hi is the float64 (binary64) nearest-even rounding of the exact result V.
        add and mul give an exact pair (TwoSum, Dekker's product: hi = fl(V)); fma gives
        hi = fl(sh + RO(sl + pl)), which is RN(V) (Boldo and Melquiond's emulated FMA).
        |hi| > the smallest normal makes V at least the midpoint above it: no tininess by
        either rule; hi finite and at most max_finite: no overflow.  Inexact iff lo != 0,
        exactly what the significand path reads from the pair: there hi + lo rounds to hi
        (lo the TwoSum error of hi), inexact iff it is no float64; and for fma, V is a
        float64 iff the tail sl + pl was exact and lo == 0 (an inexact tail has 53 bits
        below sh's last place with an odd last bit, which no float64 near sh holds)."""
        hi, lo = res.hi, res.lo
        if (res.hazard is not None and res.hazard.any()) or (res.invalid is not None and res.invalid.any()):
            return None
        mag = np.abs(hi)
        smallest, largest = self.normal
        if not ((mag > smallest) & (mag <= largest)).all():
            return None
        return hi.copy(), (FlagMasks(inexact=lo != 0) if self.want else None)


class Arithmetic:
    """The roundings of one call: terms, sequential additions, pair additions, promotions."""

    def __init__(self, spec: Spec, is_product: bool):
        self.spec = spec
        p = spec.attrs
        self.to_acc = Rounder(spec.acc, p, spec.want)
        self.to_product = Rounder(spec.product, p, spec.want) if spec.product is not None else None
        self.to_out = Rounder(spec.out, p, spec.want)
        # the format that selects each kernel's float64 path: one holding every operand
        # (see join); exact products of narrow inputs are sums of arbitrary float64s
        fused = is_product and spec.product is None
        self.sum_format = fp64 if fused else join(spec.acc, spec.product or spec.fmt)
        self.product_format = spec.fmt if is_narrow(spec.fmt) else fp64

    def rand(self, kind, step, q0, n, level=0):
        key = self.spec.key
        return None if key is None else _draws.draws(key, kind, step, q0, n, level, self.spec.positions)

    # ---- terms -------------------------------------------------------------------------
    def terms(self, X, Y, ks, q0, n, flags: TileFlags):
        """Exact values of the terms with indices ``ks`` (rows of X*Y, or X), flat, for the
        additions that take them; None when the products must stay fused (wide inputs)."""
        if Y is None:
            return X.reshape(-1)
        if self.spec.product is None and not is_narrow(self.spec.fmt):
            return None
        with np.errstate(all="ignore"):
            t = np.multiply(X, Y).reshape(-1)  # exact: is_narrow(fmt)
        if self.spec.product is None:
            if flags.masks is not None:
                flags.add(FlagMasks(invalid=invalid_products(X, Y, t)))
            return t
        xs = list(_flat_factors(X, Y))
        res = mul_kernel(self.product_format, self.spec.attrs, *xs)
        rand = None if self.spec.key is None else self.rand(_draws.PRODUCT, np.asarray(ks), q0, n).reshape(-1)
        values, fl = self.to_product(res, mul_exact, xs, rand)
        if fl is not None:
            flags.add(fl)
        return values

    # ---- one sequential step -----------------------------------------------------------
    def add(self, s, t, factors, k, q0, n, flags: TileFlags):
        """s + t_k rounded into A (s None: t_k alone); t None means the fused product of
        ``factors`` (flat float64 arrays)."""
        spec = self.spec
        rand = self.rand(_draws.ADD, k, q0, n)
        if t is None:
            x, y = factors
            if s is None:
                res, exact, xs = mul_kernel(fp64, spec.attrs, x, y), mul_exact, [x, y]
            else:
                res, exact, xs = fma_kernel(fp64, spec.attrs, x, y, s), fma_exact, [x, y, s]
        elif s is None:
            res, exact, xs = Exact(t.copy()), None, [t]
        else:
            res, exact, xs = add_kernel(self.sum_format, spec.attrs, s, t), add_exact, [s, t]
        values, fl = self.to_acc(res, exact, xs, rand)
        if fl is not None:
            swamped = None
            if s is not None:
                addend_ok = _nonzero_finite(t) if t is not None else (
                    _nonzero_finite(factors[0]) & _nonzero_finite(factors[1]))
                swamped = addend_ok & np.isfinite(s) & (values == s)
            flags.add(fl, swamped)
        return values

    def add_pairs(self, left, right, q0, n, steps, level, flags: TileFlags, to=None):
        """Rows left[i] + right[i] rounded into A (or ``to``): pair additions or
        promotions, vectorised over the rows.  A pair addition is swamped when the result
        equals either operand and the other is non-zero; a promotion (``to`` given) when
        the running total (left) absorbs a non-zero run sum."""
        rounder = to or self.to_acc
        kind = _draws.PROMOTE if to is not None else _draws.PAIR
        a, b = left.reshape(-1), right.reshape(-1)
        res = add_kernel(join(rounder.fmt, self.spec.acc), self.spec.attrs, a, b)
        rand = None if self.spec.key is None else self.rand(kind, np.asarray(steps), q0, n, level).reshape(-1)
        values, fl = rounder(res, add_exact, [a, b], rand)
        if fl is not None:
            swamped = _nonzero_finite(b) & np.isfinite(a) & (values == a)
            if to is None:
                swamped |= _nonzero_finite(a) & np.isfinite(b) & (values == b)
            flags.add(fl, swamped)
        return values.reshape(left.shape)


    # ---- the pieces the orders are made of (see _orders) -------------------------------
    def chain(self, s, tile, c0, c1, reverse, flags: TileFlags):
        """s, then terms c0 .. c1-1 (backwards if ``reverse``) added one at a time."""
        if tile.n == 1 and c1 > c0:
            done = self._one_output(s, tile, c0, c1, reverse, flags)
            if done is not None:
                return done
        X, Y = tile.factors(c0, c1)
        if ((tile.n <= WINDOW_LANES or (tile.n <= WINDOW_LANES_LONG and c1 - c0 >= LONG_CHAIN))
                and c1 - c0 > 1 and flags.masks is None
                and _binade.supports(self.spec.attrs.rounding)
                and (Y is None or self.spec.product is not None or is_narrow(self.spec.fmt))):
            return self._windows(s, tile, X, Y, c0, c1, reverse, flags)
        for i in (range(c1 - c0 - 1, -1, -1) if reverse else range(c1 - c0)):
            x = X[i]
            if Y is None:
                t, factors = np.ascontiguousarray(np.broadcast_to(x, tile.shape)).reshape(-1), None
            else:
                y = Y[i]
                t = self.terms(x[None], y[None], [c0 + i], tile.q0, tile.n, flags)
                factors = None if t is not None else _flat_factors(x, y)
            s = self.add(s, t, factors, c0 + i, tile.q0, tile.n, flags)
        return s

    def _one_output(self, s, tile, c0, c1, reverse, flags):
        """:meth:`chain` for a single output, step by step on Python floats
        (softfloat.accumulate._scalar_chain), each declined step vectorised; None where
        it does not apply (an accumulator wider than 16 bits, fused wide products)."""
        spec = self.spec
        values = _fastpaths.scalar_values(spec.acc, lambda p: decode_block(p, spec.acc, np.empty(p.size)),
                                          finite=True)
        if values is None:
            return None
        X, Y = tile.factors(c0, c1)
        if Y is not None and spec.product is None and not is_narrow(spec.fmt):
            return None  # fused products of wide inputs: no exact float64 term
        ks = np.arange(c0, c1)
        if Y is None:
            T = np.ascontiguousarray(np.broadcast_to(X, (c1 - c0,) + tile.shape)).reshape(-1)
        else:
            T = self.terms(X, Y, ks, tile.q0, 1, flags)
        if reverse:
            T, ks = T[::-1], ks[::-1]
        terms = T.tolist()
        rands = None if spec.key is None else self.rand(_draws.ADD, ks, tile.q0, 1).reshape(-1).tolist()
        value = None if s is None else float(s[0])
        i = code = swamped = 0
        while True:
            value, c, w, done, _ = _scalar_chain.steps(value, terms[i:] if i else terms,
                                                    rands[i:] if i and rands else rands, spec.acc, spec.attrs, values)
            code, swamped, i = code | c, swamped + w, i + done
            if i == len(terms):
                break
            s1 = self.add(None if value is None else np.array([value]), np.array([terms[i]]), None, int(ks[i]),
                          tile.q0, 1, flags)
            value, i = float(s1[0]), i + 1
        if flags.masks is not None:
            flags.add(FlagMasks(underflow=np.array([bool(code & _fastpaths.SCALAR_UNDERFLOW)]),
                                inexact=np.array([bool(code & _fastpaths.SCALAR_INEXACT)])),
                      np.array([swamped]))
        return np.array([value])

    def _windows(self, s, tile, X, Y, c0, c1, reverse, flags):
        """A chain over few outputs, taken a window of steps at a time (see _binade)."""
        ks = np.arange(c0, c1)
        if Y is None:
            T = np.ascontiguousarray(np.broadcast_to(X, (c1 - c0,) + tile.shape)).reshape(c1 - c0, tile.n)
        else:
            T = self.terms(X, Y, ks, tile.q0, tile.n, flags).reshape(c1 - c0, tile.n)
        if reverse:
            T, ks = T[::-1], ks[::-1]
        first = 0
        if s is None:
            s, first = self.add(None, T[0], None, ks[0], tile.q0, tile.n, flags), 1

        def exact_add(s, t):  # deterministic modes, no flag masks: no draws, nothing to record
            return self.add(s, t, None, None, tile.q0, s.size, flags)
        p = self.spec.attrs
        last = None
        if self.to_acc.signed_nan and T.shape[0] - first > 1:
            # the windows keep a NaN sum as it is; the definition's next step has a NaN
            # operand (the canonical NaN): only the last step may keep an overflow's sign
            T, last = T[:-1], T[-1]
        s = _binade.chain(s, T[first:], self.spec.acc, p.rounding, p.subnormals, exact_add)
        return s if last is None else exact_add(s, last)

    def leaves(self, tile, a, b, flags: TileFlags):
        """The terms a .. b-1 each rounded into A, as rows."""
        X, Y = tile.factors(a, b)
        ks = np.arange(a, b)
        n = tile.n
        if Y is None:
            t = np.ascontiguousarray(np.broadcast_to(X, (b - a,) + tile.shape)).reshape(-1)
        else:
            t = self.terms(X, Y, ks, tile.q0, n, flags)
        if t is None:  # wide inputs: the products rounded into A
            xs = list(_flat_factors(X, Y))
            res, exact = mul_kernel(fp64, self.spec.attrs, *xs), mul_exact
        else:
            res, exact, xs = Exact(t.copy()), None, [t]
        rand = None if self.spec.key is None else self.rand(_draws.LEAF, ks, tile.q0, n).reshape(-1)
        values, fl = self.to_acc(res, exact, xs, rand)
        if fl is not None:
            flags.add(fl)
        return values.reshape(b - a, n)

    def pairs(self, left, right, tile, steps, level, flags: TileFlags):
        """Pair additions of one level, rounded into A."""
        return self.add_pairs(left, right, tile.q0, tile.n, steps, level, flags)

    def add_c(self, start, total, tile, K, flags: TileFlags):
        """c + P for the pairwise order, rounded into A (c held exactly)."""
        res = add_kernel(join(self.spec.out, self.spec.acc), self.spec.attrs, start, total)
        values, fl = self.to_acc(res, add_exact, [start, total], self.rand(_draws.ADD, K, tile.q0, tile.n))
        if fl is not None:
            flags.add(fl, _nonzero_finite(total) & np.isfinite(start) & (values == start))
        return values

    def promote(self, total, run, j, tile, flags: TileFlags):
        """The running total in out_format plus run sum j (total None: the run alone)."""
        if total is None:
            values, fl = self.to_out(Exact(run.copy()), None, [run],
                                     self.rand(_draws.PROMOTE, j, tile.q0, tile.n))
            if fl is not None:
                flags.add(fl)
            return values
        return self.add_pairs(total[None], run[None], tile.q0, tile.n, [j], 0, flags, to=self.to_out)[0]

    def finish(self, s, tile, flags: TileFlags):
        """s rounded into out_format."""
        if self.spec.acc == self.spec.out:
            return s
        values, fl = self.to_out(Exact(s.copy()), None, [s], self.rand(_draws.FINAL, 0, tile.q0, tile.n))
        if fl is not None:
            flags.add(fl)
        return values

    def start(self, c_values):
        """c's values; a NaN c is a NaN operand, passed on as the canonical NaN (+)."""
        if c_values is not None and self.spec.out.specials.value == "fn":
            c_values = np.where(np.isnan(c_values), np.nan, c_values)
        return c_values

    def zeros(self, n):
        return np.zeros(n)

def _nonzero_finite(x):
    return (x != 0) & np.isfinite(x)


def _flat_factors(X, Y):
    shape = np.broadcast_shapes(X.shape, Y.shape)
    return (np.ascontiguousarray(np.broadcast_to(X, shape)).reshape(-1),
            np.ascontiguousarray(np.broadcast_to(Y, shape)).reshape(-1))
