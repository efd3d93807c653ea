"""Comparison helpers for the accumulation tests: building patterns of exact values, and
running softfloat beside the exact reference (tests/accumulate_oracle.py) with every
differing element reported."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from tests import accumulate_oracle as ora
from tests.oracle import nan_pattern, pattern_of

FUNCS = {"sum": sf.sum, "vecdot": sf.vecdot, "matmul": sf.matmul}
REFS = {"sum": ora.ref_sum, "vecdot": ora.ref_vecdot, "matmul": ora.ref_matmul}


# =====================================================================================
# building inputs (patterns of exact values, computed by tests/oracle.py)
# =====================================================================================
def pat(v, fmt) -> int:
    """The bit pattern of a value of fmt: a number (exact), "-0", "inf", "-inf", "nan"
    (canonical quiet), "-nan", "snan" (signalling, IEEE formats), or an int already a
    pattern given as ("bits", n)."""
    if isinstance(v, tuple):
        return v[1]
    if isinstance(v, str):
        m, E = fmt.mantissa_bits, fmt.exponent_bits
        sign = 1 << (fmt.bits - 1)
        if v == "-0":
            return sign
        if v in ("inf", "-inf"):
            return (sign if v[0] == "-" else 0) | (((1 << E) - 1) << m)
        if v == "nan":
            return nan_pattern(fmt, False)
        if v == "-nan":
            return nan_pattern(fmt, True)
        if v == "snan":
            return (((1 << E) - 1) << m) | 1
        raise ValueError(v)
    q = Fraction(v)
    return pattern_of(abs(q), q < 0, fmt)


def pats(values, fmt) -> np.ndarray:
    """Patterns of a (possibly nested) list of values."""
    if len(values) and isinstance(values[0], list):
        return np.stack([pats(row, fmt) for row in values])
    return np.array([pat(v, fmt) for v in values], dtype=fmt.storage_dtype)


# =====================================================================================
# comparing
# =====================================================================================
def _show(bits, fmt) -> str:
    x = ora.decode(int(bits), fmt)
    if x.kind != "num":
        return f"{int(bits):#x}({'-' if x.neg else ''}{x.kind})"
    return f"{int(bits):#x}({'-' if x.neg and x.mag == 0 else ''}{float(x.value)!r})"


def check(kind, *args, _describe="", **kw):
    """Run softfloat's ``kind`` with return_flags and the reference with the same
    arguments; fail with every differing element (up to 8) shown."""
    got_bits, got_flags = FUNCS[kind](*args, return_flags=True, **kw)
    want_bits, want_flags = REFS[kind](*args, **kw)
    fmt = sf.as_format(args[-1])
    b_fmt = None if kw.get("b_format") is None else sf.as_format(kw["b_format"])
    out = ora.resolve(kw.get("accumulator"), fmt, kw.get("out_format"),
                      fmt if kind == "sum" else ora.default_product_accumulator(fmt, b_fmt), b_fmt)[1]
    got_bits = np.asarray(got_bits)
    problems = []
    if got_bits.dtype != out.storage_dtype:
        problems.append(f"dtype {got_bits.dtype}, want {out.storage_dtype}")
    if got_bits.shape != want_bits.shape:
        problems.append(f"shape {got_bits.shape}, want {want_bits.shape}")
    if not problems:
        got = {name: np.asarray(getattr(got_flags, name)) for name in ora.FLAG_FIELDS}
        for name in ora.FLAG_FIELDS:
            if got[name].shape != want_bits.shape:
                problems.append(f"flags.{name} has shape {got[name].shape}, want {want_bits.shape}")
        if not problems:
            bad = (got_bits != want_bits)
            for name in ora.FLAG_FIELDS:
                bad = bad | (got[name] != want_flags[name])
            for idx in list(zip(*np.nonzero(bad)))[:8] if bad.ndim else ([()] if bad else []):
                idx = tuple(int(i) for i in idx)
                fl_got = {n: int(got[n][idx]) for n in ora.FLAG_FIELDS}
                fl_want = {n: int(want_flags[n][idx]) for n in ora.FLAG_FIELDS}
                diff = {n: (fl_got[n], fl_want[n]) for n in ora.FLAG_FIELDS if fl_got[n] != fl_want[n]}
                problems.append(f"at {idx}: got {_show(got_bits[idx], out)} want "
                                f"{_show(want_bits[idx], out)}; flags (got, want) differing: {diff}")
            if bad.any():
                problems.insert(0, f"{int(np.count_nonzero(bad))} of {bad.size} elements differ")
    if problems:
        opts = ", ".join(f"{k}={v!r}" for k, v in kw.items() if not isinstance(v, np.ndarray))
        arrays = "; ".join(f"arg{i}={np.asarray(a).tolist()!r}" for i, a in enumerate(args[:-1]))
        cval = kw.get("c")
        more = "" if cval is None else f"; c={np.asarray(cval).tolist()!r}"
        pytest.fail(f"sf.{kind}(..., {fmt}, {opts}) {_describe}\n  {arrays}{more}\n  "
                    + "\n  ".join(problems), pytrace=False)


def random_patterns(rng, fmt, shape, *, center=0, spread=None, specials=0.0, zeros=0.1,
                     mirror=0.2):
    """Random bit patterns of fmt aimed at interesting sums: exponents within ``spread``
    below 2**center (so terms interact), significands with a random number of trailing
    zeros (ties), some zeros, some exact negations of earlier elements (cancellation),
    and with probability ``specials`` an inf or NaN (quiet or signalling)."""
    m = fmt.mantissa_bits
    n = int(np.prod(shape, dtype=np.int64))
    spread = m + 3 if spread is None else spread
    top = fmt.max_finite_bits >> m
    bias = ora.bias_of(fmt)
    e = np.clip(bias + center - rng.integers(0, spread + 1, n), 0, top)
    f = rng.integers(0, 1 << m, n)
    keep = rng.integers(0, m + 1, n)
    f &= ~((1 << (m - keep)) - 1)
    mag = (e << m) | f
    mag = np.minimum(mag, fmt.max_finite_bits)
    mag[rng.random(n) < zeros] = 0
    sign = rng.integers(0, 2, n) << (fmt.bits - 1)
    out = (mag | sign).astype(np.uint64)
    if n > 1:
        for i in np.nonzero(rng.random(n) < mirror)[0]:
            j = rng.integers(0, n)
            out[i] = out[j] ^ (1 << (fmt.bits - 1))
    if specials:
        choices = [pat(s, fmt) for s in (("inf", "-inf", "nan", "-nan", "snan") if fmt.has_infinity
                                          else ("nan",))]
        for i in np.nonzero(rng.random(n) < specials)[0]:
            out[i] = choices[rng.integers(0, len(choices))]
    return out.astype(fmt.storage_dtype).reshape(shape)


def adversarial_operands(rng, M, K, N, big=60000.0, tiny=2.0 ** -20):
    """A (M, K) and B (K, N) float64 values whose products into fp16/fp32 accumulators
    hit every flag and count: zeros (ReLU-like, whole columns, -0), swamping (2048 + 1 +
    1 ... in fp16; one huge term then terms 2**-40 smaller), cancellation to zero,
    overflow (``big``), inf - inf, NaN, subnormal partial sums (``tiny``)."""
    a = rng.standard_normal((M, K))
    b = rng.standard_normal((K, N))
    a[a < -0.5] = 0.0
    b[:, 0] = 0.0
    b[:, 1] = -0.0
    a[0, :] = 1.0
    b[:, 2] = 1.0
    b[0, 2] = 2048.0
    b[:, 3] = 0.0
    b[0, 3], b[1, 3], b[2, 3] = 3.0, -3.0, -0.0
    b[:, 4] = big
    b[0, 5], b[1, 5] = np.inf, -np.inf
    b[3, 6] = np.nan
    b[2, 7] = np.inf
    b[:, 8] = tiny
    b[::2, 8] = -tiny * (1 + 2.0 ** -10)
    if N > 9:  # a huge term, then terms 2**-40 smaller
        b[:, 9] = 2.0 ** -20
        b[0, 9] = 2.0 ** 20
    return a, b
