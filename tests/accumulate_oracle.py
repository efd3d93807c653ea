"""An exact, independent reference for ``softfloat.sum``, ``vecdot`` and ``matmul``.

It shares no code with softfloat's kernels.  From a :class:`softfloat.Format` it reads only
the declared layout (``exponent_bits``, ``mantissa_bits``, ``specials``) and the derived
limits the format tests pin against numpy/ml_dtypes (``emin``, ``precision``...); from a
:class:`softfloat.accumulate.FusedAccumulator` only its documented parameters.  Then:

* bit patterns are decoded to exact ``Fraction`` values by integer arithmetic on the three
  fields (:func:`decode`);
* every rounding goes through ``tests.oracle.round_exact`` (MPFR via gmpy2, exact
  Fraction logic for ties-away and round-to-odd, IEEE tininess before/after);
* each definition of the spec (the module docstring of ``softfloat.accumulate``) is a
  plain scalar loop over one output element's terms: :func:`ieee_reduce` for the IEEE
  accumulators (sequential, reverse, pairwise, c, product, block promotion, final
  rounding) and :func:`fused_reduce` for the tensor-core model (steps 1-6 of
  ``softfloat.accumulate.hardware``'s docstring, the "via fp16" FP8 path, promotion).

It is written to be obviously right, not fast: only small arrays go through it.

Interpretation choices where the spec leaves room (each one is checked by a test and
listed in its docstring):

* ``swamped`` compares values (``+0 == -0``), and needs the partial sum, the addend and
  the result all finite; a pair addition of the pairwise order counts when the result
  equals one operand and the other is non-zero; the final ``c + P`` of the pairwise order
  and a promotion ``T + R_j`` are read as sequential steps (c, T the partial sums).
* the fused adder's accumulator is +0 when no c is given; an exact zero block sum is -0
  only when every addend (c included) is -0, else +0.
* a fused block is inexact when a term loses bits in the alignment or the sum in the
  output rounding.
* the final rounding ``round_O`` is the identity when every value of A is a value of O.
* the fused steps round with the hardware's own policy (``output_rounding``, tininess
  after, subnormals kept); the "via fp16" path's IEEE addition of c is an addition like
  any other for ``swamped`` (c left unchanged by a non-zero block sum counts); its
  ``k mod 4`` is the global index k.
* c enters the fused adder with its exact value (only out_formats inside the adder's
  output format are tested with c).

Products of two formats (``b_fmt``, softfloat's ``b_format``): each b pattern is decoded
by b_fmt, each a pattern by fmt, and everything after the exact product is as for one
format; the fused adder clamps each factor's exponent at its own format's emin; the
"via fp16" path is taken when both inputs are FP8 (at most 5 exponent and 3 fraction
bits; a preset's FP8 family is fp8_e4m3 and fp8_e5m2 in any pairing); the default
accumulator of two formats is fp32 when it holds both, else the one holding the other,
else fp64.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
import math

from tests.oracle import nan_pattern, pattern_of, round_exact

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd")


# =====================================================================================
# values
# =====================================================================================
@dataclass(frozen=True)
class X:
    """An IEEE datum: kind "num", "inf" or "nan"; its sign; its exact magnitude (num)."""

    kind: str
    neg: bool = False
    mag: Fraction = Fraction(0)
    signaling: bool = False

    @property
    def value(self) -> Fraction:
        assert self.kind == "num"
        return -self.mag if self.neg else self.mag

    @property
    def is_zero(self) -> bool:
        return self.kind == "num" and self.mag == 0

    @property
    def is_finite(self) -> bool:
        return self.kind == "num"


NAN = X("nan")


def num(v: Fraction, neg_zero: bool = False) -> X:
    """A finite datum from a signed exact value (``neg_zero``: the sign of a zero)."""
    v = Fraction(v)
    return X("num", v < 0 or (v == 0 and neg_zero), abs(v))


def bias_of(fmt) -> int:
    """2**(E-1) - 1, one more for fnuz (OCP/IEEE definitions, restated)."""
    return (1 << (fmt.exponent_bits - 1)) - (0 if fmt.specials.value == "fnuz" else 1)


def decode(bits: int, fmt) -> X:
    """The datum a bit pattern of ``fmt`` denotes, from its sign, exponent and fraction:

        value = (-1)**s * 1.f * 2**(e - bias)   (e > 0),   (-1)**s * 0.f * 2**(1 - bias)   (e = 0)

    "ieee": the all-ones exponent holds inf (f = 0) and NaNs (top fraction bit clear:
    signalling); "fn": only S.1..1.1..1 is NaN, no inf; "fnuz": 1.0..0.0..0 is the only
    NaN; "finite": no specials.
    """
    bits = int(bits)
    m, E = fmt.mantissa_bits, fmt.exponent_bits
    neg = bool((bits >> (m + E)) & 1)
    e = (bits >> m) & ((1 << E) - 1)
    f = bits & ((1 << m) - 1)
    policy = fmt.specials.value
    ones = (1 << E) - 1
    if policy == "ieee" and e == ones:
        if f == 0:
            return X("inf", neg)
        return X("nan", neg, signaling=not (f >> (m - 1)) & 1)
    if policy == "fn" and e == ones and f == (1 << m) - 1:
        return X("nan", neg)
    if policy == "fnuz" and neg and e == 0 and f == 0:
        return X("nan", neg)
    sig = (f | (1 << m)) if e else f
    return X("num", neg, Fraction(sig) * Fraction(2) ** (max(e, 1) - bias_of(fmt) - m))


def is_value_of(v: Fraction, fmt) -> bool:
    """Is the finite v exactly a value of fmt?"""
    a = abs(v)
    if a == 0:
        return True
    if a > Fraction(fmt.max_finite):
        return False
    quantum = Fraction(2) ** (max(floor_log2(a), fmt.emin) - fmt.mantissa_bits)
    return (a / quantum).denominator == 1


def floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e if Fraction(2) ** e <= a else e - 1


def encode(x: X, fmt) -> int:
    """Bit pattern of a datum that is a value of fmt; NaN gives the quiet NaN of its sign
    (canonical NaNs are positive; fnuz has one NaN; FP6/FP4, without NaN: +0 -- the
    caller raises invalid)."""
    if x.kind == "nan":
        return 0 if fmt.specials.value == "finite" else nan_pattern(fmt, x.neg)
    if x.kind == "inf":
        return pattern_of(-math.inf if x.neg else math.inf, x.neg, fmt)
    assert is_value_of(x.value, fmt), (x, fmt)
    return pattern_of(x.mag, x.neg and (x.mag != 0 or fmt.has_negative_zero), fmt)


def fits_in(a, o) -> bool:
    """Is every value (and infinity) of format a also one of format o?"""
    return (a.precision <= o.precision and a.emin >= o.emin
            and a.emin - a.mantissa_bits >= o.emin - o.mantissa_bits
            and Fraction(a.max_finite) <= Fraction(o.max_finite)
            and is_value_of(Fraction(a.max_finite), o)
            and (not a.has_infinity or o.has_infinity))


# =====================================================================================
# flags and rounding
# =====================================================================================
@dataclass
class Flags:
    """Per output element: the OR of the IEEE flags of every rounding, and ``swamped``."""

    invalid: bool = False
    divide_by_zero: bool = False
    overflow: bool = False
    underflow: bool = False
    inexact: bool = False
    swamped: int = 0
    log: list = field(default_factory=list, repr=False)

    def as_tuple(self):
        return (self.invalid, self.divide_by_zero, self.overflow, self.underflow,
                self.inexact, self.swamped)


@dataclass(frozen=True)
class Opts:
    rounding: str = "nearest_even"
    tininess: str = "after"
    subnormals: bool = True


def round_to(x: X, fmt, opts: Opts, flags: Flags) -> X:
    """round_fmt(x) for an exact datum x (IEEE 754 4.3, 7.4, 7.5 through round_exact)."""
    if x.kind == "nan":
        return NAN
    if x.kind == "inf":
        if not fmt.has_infinity:  # sf.encode's rule: the NaN of the infinity's sign, invalid
            if not fmt.has_nan:
                raise NotImplementedError(f"an infinity rounded into {fmt}: outside the tested space")
            flags.invalid = True
            return X("nan", x.neg)
        return x
    if x.mag == 0:
        return X("num", x.neg and fmt.has_negative_zero)
    r = round_exact(x.mag, x.neg, fmt, opts.rounding, tininess=opts.tininess,
                    subnormals=opts.subnormals)
    flags.overflow |= r.overflow
    flags.underflow |= r.underflow
    flags.inexact |= r.inexact
    if isinstance(r.value, float):
        if math.isnan(r.value):  # overflow in a format with NaN but no infinity (fn, fnuz):
            return X("nan", x.neg)  # the NaN of the sum's sign, as sf.encode gives it
        return X("inf", r.value < 0)
    # the sign of a non-zero value; a zero is -0 only where fmt has one (not fnuz)
    return X("num", r.negative and (r.value != 0 or fmt.has_negative_zero), abs(r.value))


def zero_sum_sign(x: X, y: X, mode: str) -> bool:
    """IEEE 754-2019 6.3: the sign of an exact zero sum x + y: x + x keeps the sign when
    both are zeros of one sign; otherwise +0, or -0 under roundTowardNegative."""
    if x.is_zero and y.is_zero and x.neg == y.neg:
        return x.neg
    return mode == "downward"


def exact_sum(x: X, y: X, mode: str, flags: Flags) -> X:
    """x + y exactly (specials by IEEE 754 6.1/7.2), before any rounding."""
    if x.kind == "nan" or y.kind == "nan":
        return NAN
    if x.kind == "inf" and y.kind == "inf" and x.neg != y.neg:
        flags.invalid = True
        return NAN
    if x.kind == "inf":
        return x
    if y.kind == "inf":
        return y
    v = x.value + y.value
    if v == 0:
        return X("num", zero_sum_sign(x, y, mode))
    return num(v)


def exact_product(a: X, b: X, flags: Flags) -> X:
    """a * b exactly (0 * inf invalid)."""
    if a.kind == "nan" or b.kind == "nan":
        return NAN
    neg = a.neg != b.neg
    if a.kind == "inf" or b.kind == "inf":
        if a.is_zero or b.is_zero:
            flags.invalid = True
            return NAN
        return X("inf", neg)
    return X("num", neg, a.mag * b.mag)


def add_round(s: X, t: X, fmt, opts: Opts, flags: Flags, *, pairwise=False) -> X:
    """round_fmt(s + t), counting a swamped addition: the finite non-zero addend t left the
    finite partial sum s unchanged (``pairwise``: the result equals either operand and the
    other is non-zero)."""
    r = round_to(exact_sum(s, t, opts.rounding, flags), fmt, opts, flags)
    if s.is_finite and t.is_finite and r.is_finite:
        if pairwise:
            swamped = (r.value == s.value and t.mag != 0) or (r.value == t.value and s.mag != 0)
        else:
            swamped = r.value == s.value and t.mag != 0
        if swamped:
            flags.swamped += 1
            flags.log.append(("swamped", s, t))
    return r


# =====================================================================================
# the IEEE accumulator
# =====================================================================================
def make_terms(xs, ys, fmt, product, opts: Opts, flags: Flags, b_fmt=None) -> list[X]:
    """The terms t_k as exact data: x_k (a sum), a_k * b_k exactly (product None) or
    round_P(a_k * b_k), b_k decoded by ``b_fmt`` (default fmt).  Signalling NaN inputs
    raise invalid."""
    b_fmt = fmt if b_fmt is None else b_fmt
    terms = []
    for k, xb in enumerate(xs):
        x = decode(xb, fmt)
        flags.invalid |= x.signaling
        if ys is None:
            terms.append(x)
            continue
        y = decode(ys[k], b_fmt)
        flags.invalid |= y.signaling
        p = exact_product(x, y, flags)
        terms.append(p if product is None else round_to(p, product, opts, flags))
    return terms


def _sequential(terms, A, opts, flags, start=None) -> X | None:
    s = start
    for t in terms:
        s = round_to(t, A, opts, flags) if s is None else add_round(s, t, A, opts, flags)
    return s


def _pairwise(terms, A, opts, flags) -> X | None:
    level = [round_to(t, A, opts, flags) for t in terms]
    if not level:
        return None
    while len(level) > 1:
        nxt = [add_round(level[i], level[i + 1], A, opts, flags, pairwise=True)
               for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def _in_order(terms, order):
    if order == "reverse":
        return list(reversed(terms))
    assert order in ("sequential", "pairwise"), order
    return list(terms)


def _run_sum(terms, A, order, opts, flags, start=None) -> X | None:
    """One sum in A by ``order`` over terms already in the order's direction."""
    if order == "pairwise":
        p = _pairwise(terms, A, opts, flags)
        if start is None or p is None:
            return start if p is None else p
        return add_round(start, p, A, opts, flags)  # c is the partial sum, P the addend
    return _sequential(terms, A, opts, flags, start)


def _promote(runs, O, opts, flags, start):
    """T = c; T = round_O(R_j) while undefined, else round_O(T + R_j)."""
    T = start
    for R in runs:
        T = round_to(R, O, opts, flags) if T is None else add_round(T, R, O, opts, flags)
    return T


def finish(result: X, O, flags: Flags) -> int:
    """The output pattern: canonical NaN (FP6/FP4: +0, invalid)."""
    if result.kind == "nan" and O.specials.value == "finite":
        flags.invalid = True
    return encode(result, O)


def ieee_reduce(xs, ys, fmt, A, O, *, c=None, product=None, order="sequential", block=None,
                opts: Opts = Opts(), b_fmt=None) -> tuple[int, Flags]:
    """One output element of an IEEE-accumulator sum (ys None) or dot product.

    xs, ys: the K bit patterns of fmt (ys: of b_fmt, default fmt) in k order; c: a bit
    pattern of O or None.  Returns (bit pattern of O, Flags)."""
    flags = Flags()
    terms = _in_order(make_terms(xs, ys, fmt, product, opts, flags, b_fmt), order)
    start = None
    if c is not None:
        start = decode(c, O)
        flags.invalid |= start.signaling
        if start.kind == "nan":
            start = NAN  # a NaN operand: passed on as the canonical NaN
    if block is None:
        s = _run_sum(terms, A, order, opts, flags, start)
        if s is None:
            s = X("num")  # the empty sum: +0 (with c, s is c itself)
        elif terms and not fits_in(A, O):
            s = round_to(s, O, opts, flags)  # the final rounding round_O(s)
        return finish(s, O, flags), flags
    runs = [_run_sum(terms[i:i + block], A, order, opts, flags)
            for i in range(0, len(terms), block)]
    T = _promote(runs, O, opts, flags, start)
    return finish(X("num") if T is None else T, O, flags), flags


# =====================================================================================
# the fused multi-term adder (softfloat.accumulate.hardware, steps 1-6)
# =====================================================================================
@dataclass(frozen=True)
class Fused:
    """The parameters of a fused accumulator, restated: N terms per step, F alignment bits,
    the output format, its rounding, the fraction bits kept, the FP8 path."""

    terms: int
    fraction_bits: int
    output: object
    output_rounding: str
    output_mantissa_bits: int
    fp8: str = "native"

    @classmethod
    def of(cls, acc) -> "Fused":
        r = acc.output_rounding
        return cls(acc.terms, acc.fraction_bits, acc.output, getattr(r, "value", r),
                   acc.output_mantissa_bits, acc.fp8)


def _exponent(x: X, fmt) -> int:
    """The exponent the adder sees: floor(log2 |x|), clamped at fmt's emin (subnormals)."""
    return max(floor_log2(x.mag), fmt.emin)


def _rounding_format(acc: Fused):
    import softfloat as sf  # only to build a Format from its declared layout
    out = acc.output
    if acc.output_mantissa_bits == out.mantissa_bits:
        return out
    return sf.Format(out.exponent_bits, acc.output_mantissa_bits, out.specials.value)


def _specials_sum(data: list[X], flags: Flags) -> X | None:
    """The result when some addend is inf or NaN (IEEE rules for a many-term sum), else
    None."""
    if any(d.kind == "nan" for d in data):
        return NAN
    infs = {d.neg for d in data if d.kind == "inf"}
    if len(infs) == 2:
        flags.invalid = True
        return NAN
    if infs:
        return X("inf", infs.pop())
    return None


def fused_step(pairs, c: X, in_fmt, acc: Fused, opts: Opts, flags: Flags) -> X:
    """One fused step: products of ``pairs`` (data of in_fmt, or of in_fmt[0] and
    in_fmt[1] when it is a pair of formats) and the accumulator c (a datum of acc.output).

    1. exact products, exponent ea + eb (each clamped at in_fmt.emin); zeros drop out;
    2. M = the largest exponent among the products and c (clamped at the output's emin);
    3. each term truncated toward zero to a multiple of 2**(M - F);
    4. the exact sum of the truncated terms;
    5. rounded (acc.output_rounding) to acc.output_mantissa_bits fraction bits in the
       output's range."""
    products = [(exact_product(a, b, flags), a, b) for a, b in pairs]
    special = _specials_sum([p for p, _, _ in products] + [c], flags)
    if special is not None:
        return special
    out = acc.output
    fa, fb = in_fmt if isinstance(in_fmt, tuple) else (in_fmt, in_fmt)
    # (term, exponent, is a product)
    live = [(p, _exponent(a, fa) + _exponent(b, fb), True)
            for p, a, b in products if p.mag != 0]
    if c.mag != 0:
        live.append((c, _exponent(c, out), False))
    if not live:  # every addend is a zero: -0 only if all of them (c included) are -0
        return X("num", c.neg and all(p.neg for p, _, _ in products))
    M = max(e for _, e, _ in live)
    quantum = Fraction(2) ** (M - acc.fraction_bits)
    total = Fraction(0)
    for t, _, is_product in live:
        kept = math.trunc(t.mag / quantum) * quantum
        if kept != t.mag:
            flags.inexact = True
        if kept == 0 and is_product:  # a non-zero product truncated away entirely
            flags.swamped += 1
            flags.log.append(("truncated", t))
        total += -kept if t.neg else kept
    if total == 0:  # cancellation: +0 (-0 only under a downward output rounding)
        return X("num", acc.output_rounding == "downward")
    # the hardware's own rounding: acc.output_rounding, tininess after, subnormals kept
    return round_to(num(total), _rounding_format(acc), Opts(acc.output_rounding), flags)


def _fused_chain(pairs, start: X, in_fmt, acc: Fused, opts: Opts, flags: Flags, k0=0) -> X:
    """Step 6: the blocks of N products in k order, each block's output the next one's c
    (``k0``: the index k of pairs[0])."""
    s = start
    formats = in_fmt if isinstance(in_fmt, tuple) else (in_fmt,)
    if acc.fp8 == "via_fp16" and all(f.exponent_bits <= 5 and f.mantissa_bits <= 3 for f in formats):
        return _via_fp16_chain(pairs, start, acc, opts, flags, k0)
    for i in range(0, len(pairs), acc.terms):
        s = fused_step(pairs[i:i + acc.terms], s, in_fmt, acc, opts, flags)
    return s


def _via_fp16_chain(pairs, start, acc, opts, flags, k0):
    """FP8 "via fp16": per block of 32 (acc.terms) products, inputs widened exactly to
    fp16 (so exponents are clamped at fp16's emin, not FP8's); a fused step over the
    products with k mod 4 in {0, 1} from +0, a second over k mod 4 in {2, 3} from its
    rounded result; then c + that by an IEEE addition rounded to nearest even in the
    output."""
    import softfloat as sf
    fp16 = sf.fp16
    s = start
    for i in range(0, len(pairs), acc.terms):
        blk = pairs[i:i + acc.terms]
        first = [p for j, p in enumerate(blk) if (k0 + i + j) % 4 in (0, 1)]
        second = [p for j, p in enumerate(blk) if (k0 + i + j) % 4 in (2, 3)]
        h = fused_step(first, X("num"), fp16, acc, opts, flags)
        h = fused_step(second, h, fp16, acc, opts, flags)
        s = add_round(s, h, acc.output, Opts("nearest_even", opts.tininess, True), flags)
    return s


def fused_reduce(xs, ys, fmt, acc: Fused, O, *, c=None, block=None,
                 opts: Opts = Opts(), b_fmt=None) -> tuple[int, Flags]:
    """One output element of a dot product through the fused accumulator ``acc``.

    Without ``block``: the chain of fused steps from c (or +0), then one final rounding
    into O when O is not the accumulator's output format.  With ``block=b``: each run of b
    terms through the chain from +0, the run results promoted into O (IEEE, ``opts``).
    ys are patterns of ``b_fmt`` (default fmt)."""
    flags = Flags()
    pairs = []
    in_fmt = fmt if b_fmt is None or b_fmt == fmt else (fmt, b_fmt)
    for k, xb in enumerate(xs):
        a, b = decode(xb, fmt), decode(ys[k], fmt if b_fmt is None else b_fmt)
        flags.invalid |= a.signaling or b.signaling
        pairs.append((a, b))
    start = None
    if c is not None:
        start = decode(c, O)
        flags.invalid |= start.signaling
        if start.kind == "nan":
            start = NAN  # a NaN operand: passed on as the canonical NaN
    if block is None:
        if not pairs:
            return finish(start if start is not None else X("num"), O, flags), flags
        s = _fused_chain(pairs, start if start is not None else X("num"), in_fmt, acc, opts, flags)
        if O != acc.output:
            s = round_to(s, O, opts, flags)
        return finish(s, O, flags), flags
    runs = [_fused_chain(pairs[i:i + block], X("num"), in_fmt, acc, opts, flags, k0=i)
            for i in range(0, len(pairs), block)]
    T = _promote(runs, O, opts, flags, start)
    return finish(X("num") if T is None else T, O, flags), flags


# =====================================================================================
# the published presets, restated from the papers (not read from softfloat)
# =====================================================================================
#: chip -> input family -> (N terms, F alignment bits); Fasi et al. 2021 (V100, T4,
#: A100), Khattak and Mikaitis 2025 (A2, Ada/L40S, H100/H200, B200), Xie et al. 2025 (FP8)
CHIPS = {
    "v100": {"fp16": (4, 23)},
    "t4": {"fp16": (8, 24)},
    "a100": {"fp16": (8, 24), "bf16": (8, 24), "tf32": (4, 24)},
    "ada": {"fp16": (8, 24), "bf16": (8, 24), "tf32": (4, 24), "fp8": (16, 13)},
    "h100": {"fp16": (16, 25), "bf16": (16, 25), "tf32": (8, 25), "fp8": (32, 13)},
    "b200": {"fp16": (16, 25), "bf16": (16, 25), "tf32": (8, 25), "fp8": (32, 13)},
}
CHIPS["h100-mma"] = CHIPS["h100"]   # Hopper's mma.sync: the same adder, FP8 always via fp16
CHIP_ALIASES = {"a2": "a100", "l40s": "ada", "h200": "h100", "h200-mma": "h100-mma"}
#: FP8 path per chip and output: native (Ada; Hopper with an fp32 output) or via fp16
#: (Hopper with an fp16 output; Blackwell always) -- Xie et al. 2025
FP8_PATH = {("ada", "fp32"): "native", ("ada", "fp16"): "native",
            ("h100", "fp32"): "native", ("h100", "fp16"): "via_fp16",
            ("b200", "fp32"): "via_fp16", ("b200", "fp16"): "via_fp16",
            # measured on an H200: mma.sync FP8 with an fp32 output matches via fp16 on
            # every output (tools/gpu_crosscheck.py), wgmma (cuBLAS) the native path
            ("h100-mma", "fp32"): "via_fp16", ("h100-mma", "fp16"): "via_fp16"}


def preset(chip: str, fmt, out_format=None, b_fmt=None) -> Fused:
    """The fused accumulator of a chip for inputs in fmt (and b_fmt: the same family) and
    the output mode of out_format (fp16: round to nearest even into fp16; else fp32
    truncation, 13 fraction bits on the native FP8 path)."""
    import softfloat as sf
    chip = CHIP_ALIASES.get(chip, chip)
    families = {sf.fp16: "fp16", sf.bf16: "bf16", sf.tf32: "tf32",
                sf.fp8_e4m3: "fp8", sf.fp8_e5m2: "fp8"}
    family = families[fmt]
    assert b_fmt is None or families[b_fmt] == family, (fmt, b_fmt)
    N, F = CHIPS[chip][family]
    half = out_format == sf.fp16
    out, rounding, mant = (sf.fp16, "nearest_even", 10) if half else (sf.fp32, "toward_zero", 23)
    path = "native"
    if family == "fp8":
        path = FP8_PATH[(chip, "fp16" if half else "fp32")]
        if path == "via_fp16":
            N, F = 32, CHIPS[chip]["fp16"][1]
        elif not half:
            mant = 13
    return Fused(N, F, out, rounding, mant, path)


# =====================================================================================
# whole arrays: numpy's shape rules around the scalar definitions above
# =====================================================================================
FLAG_FIELDS = ("invalid", "divide_by_zero", "overflow", "underflow", "inexact", "swamped")


def default_product_accumulator(fmt, b_fmt=None):
    """vecdot/matmul default: fp32 when every value of fmt is an fp32 value and fmt is not
    fp32 itself, else fmt.  Two formats: fp32 when it holds both, else the one of the two
    holding the other, else fp64."""
    import softfloat as sf
    if b_fmt is None or b_fmt == fmt:
        return sf.fp32 if fmt != sf.fp32 and fits_in(fmt, sf.fp32) else fmt
    return next(f for f in (sf.fp32, fmt, b_fmt, sf.fp64) if fits_in(fmt, f) and fits_in(b_fmt, f))


def resolve(accumulator, fmt, out_format, default, b_fmt=None):
    """(A, O, is_fused): the accumulator as a Format or a :class:`Fused`, and the output
    format."""
    import softfloat as sf
    O = None if out_format is None else sf.as_format(out_format)
    if accumulator is None:
        A = default
    elif isinstance(accumulator, str) and accumulator.strip().lower() in CHIPS.keys() | CHIP_ALIASES.keys():
        A = preset(accumulator.strip().lower(), fmt, O, b_fmt)
    elif hasattr(accumulator, "fraction_bits"):  # a FusedAccumulator
        A = Fused.of(accumulator)
    else:
        A = sf.as_format(accumulator)
    fused = isinstance(A, Fused)
    if O is None:
        O = A.output if fused else A
    return A, O, fused


def _one_element(xs, ys, fmt, A, O, fused, c, product, order, block, opts, b_fmt=None):
    if fused:
        if ys is None:  # a sum goes through the fused adder as products x * 1
            ys = [pattern_of(Fraction(1), False, fmt)] * len(xs)
        return fused_reduce(xs, ys, fmt, A, O, c=c, block=block, opts=opts, b_fmt=b_fmt)
    return ieee_reduce(xs, ys, fmt, A, O, c=c, product=product, order=order, block=block, opts=opts,
                       b_fmt=b_fmt)


def _collect(out_shape, elements, fmt, A, O, fused, c, product, order, block, opts, b_fmt=None):
    import numpy as np
    bits = np.zeros(out_shape, dtype=O.storage_dtype)
    flags = {name: np.zeros(out_shape, dtype=np.int64 if name == "swamped" else bool)
             for name in FLAG_FIELDS}
    cb = None if c is None else np.broadcast_to(np.asarray(c), out_shape)
    for idx, xs, ys in elements:
        cv = None if cb is None else int(cb[idx])
        b, f = _one_element([int(v) for v in xs], None if ys is None else [int(v) for v in ys],
                            fmt, A, O, fused, cv, product, order, block, opts, b_fmt)
        bits[idx] = b
        for name, v in zip(FLAG_FIELDS, f.as_tuple()):
            flags[name][idx] = v
    return bits, flags


def ref_sum(x, fmt, *, axis=None, keepdims=False, accumulator=None, out_format=None, c=None,
            order="sequential", block=None, rounding="nearest_even", tininess="after",
            subnormals=True):
    """The reference of softfloat.sum: k runs over the reduced axes in C order (the
    reduced axes in increasing order, the last fastest)."""
    import numpy as np
    import softfloat as sf
    fmt = sf.as_format(fmt)
    x = np.asarray(x)
    if axis is None:
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(sorted(a % x.ndim for a in (axis if isinstance(axis, tuple) else (axis,))))
    keep = tuple(d for d in range(x.ndim) if d not in axes)
    out_shape = tuple(x.shape[d] for d in keep)
    K = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    rows = np.transpose(x, keep + axes).reshape(out_shape + (K,))
    A, O, fused = resolve(accumulator, fmt, out_format, fmt)
    kd = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
    if c is not None and keepdims:  # c broadcasts to the result's (keepdims) shape
        c = np.broadcast_to(np.asarray(c), kd).reshape(out_shape)
    elements = [(idx, rows[idx], None) for idx in np.ndindex(*out_shape)]
    bits, flags = _collect(out_shape, elements, fmt, A, O, fused, c, None, order, block,
                           Opts(rounding, tininess, subnormals))
    if keepdims:
        bits = bits.reshape(kd)
        flags = {k: v.reshape(kd) for k, v in flags.items()}
    return bits, flags


def ref_vecdot(a, b, fmt, *, b_format=None, axis=-1, accumulator=None, out_format=None, c=None,
               product=None, order="sequential", block=None, rounding="nearest_even", tininess="after",
               subnormals=True):
    """The reference of softfloat.vecdot (numpy 2's vecdot shapes; b's patterns of
    b_format)."""
    import numpy as np
    import softfloat as sf
    fmt = sf.as_format(fmt)
    b_fmt = fmt if b_format is None else sf.as_format(b_format)
    am, bm = np.moveaxis(np.asarray(a), axis, -1), np.moveaxis(np.asarray(b), axis, -1)
    out_shape = np.broadcast_shapes(am.shape[:-1], bm.shape[:-1])
    K = am.shape[-1]
    am, bm = np.broadcast_to(am, out_shape + (K,)), np.broadcast_to(bm, out_shape + (K,))
    A, O, fused = resolve(accumulator, fmt, out_format, default_product_accumulator(fmt, b_fmt), b_fmt)
    product = None if product is None else sf.as_format(product)
    elements = [(idx, am[idx], bm[idx]) for idx in np.ndindex(*out_shape)]
    return _collect(out_shape, elements, fmt, A, O, fused, c, product, order, block,
                    Opts(rounding, tininess, subnormals), b_fmt)


def ref_matmul(a, b, fmt, *, b_format=None, accumulator=None, out_format=None, c=None, product=None,
               order="sequential", block=None, rounding="nearest_even", tininess="after",
               subnormals=True):
    """The reference of softfloat.matmul (numpy's matmul shapes: a 1-d a is a row, a 1-d
    b a column, that axis removed from the result; batch axes broadcast; b's patterns of
    b_format)."""
    import numpy as np
    import softfloat as sf
    fmt = sf.as_format(fmt)
    b_fmt = fmt if b_format is None else sf.as_format(b_format)
    a, b = np.asarray(a), np.asarray(b)
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    (M, K), N = a2.shape[-2:], b2.shape[-1]
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a3 = np.broadcast_to(a2, batch + (M, K))
    b3 = np.broadcast_to(b2, batch + (K, N))
    full = batch + (M, N)
    elements = [(idx, a3[idx[:-1]], b3[idx[:-2] + (slice(None), idx[-1])])
                for idx in np.ndindex(*full)]
    shape = full
    if a.ndim == 1:
        shape = shape[:-2] + (N,)
    if b.ndim == 1:
        shape = shape[:-1]
    A, O, fused = resolve(accumulator, fmt, out_format, default_product_accumulator(fmt, b_fmt), b_fmt)
    product = None if product is None else sf.as_format(product)
    cc = None if c is None else np.broadcast_to(np.asarray(c), shape).reshape(full)
    bits, flags = _collect(full, elements, fmt, A, O, fused, cc, product, order, block,
                           Opts(rounding, tininess, subnormals), b_fmt)
    return bits.reshape(shape), {k: v.reshape(shape) for k, v in flags.items()}
