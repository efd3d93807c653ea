"""Time softfloat on small inputs (0-d, 1 element, 1,000 elements) against numpy float16.

Issue 23 item 4: an operation on a 0-d or 1-element Array in the default context should
cost <= 10 us, on 1,000 elements <= 30 us; a sequential sum or dot product of 4096 terms
into one output in an fp16/bf16/fp8 accumulator <= 5 us per term in any mode.  This
script prints, in one run,

* the bit-level calls ``sf.add/mul/div/sqrt(bits, bits, "fp16")``, ``sf.encode(1.0, fmt)``
  and ``sf.quantize`` on 0-d, 1-element and 1,000-element inputs (us per call);
* 1,000-element ``sf.add/mul/div`` in bf16 and FP8, and ``sf.sum``/``sf.vecdot`` of 1,000
  fp16 terms into one output, without and with flags (``--only narrow``);
* the Array-level ``a + b``, ``a - b``, ``a * b``, ``a / b``, ``np.maximum(a, b)``,
  ``np.sqrt(abs(a))``, ``np.exp(a)``,
  ``a.sum()``, ``a + 1.0``, ``a + 0.1``, ``a.max()``, ``a.mean()``, ``a.std()``,
  ``np.dot(a, b)``, ``a > b`` and ``a.astype(np.float64)`` on Arrays made by ``sf.asarray(..., "fp16")``
  and ``"fp32"``, beside numpy's float16 and float32 doing the same;
* products of small matrices (``A @ B``, ``A @ v``) and reductions along an axis
  (``X.sum(axis=0)``, ``X.mean(axis=0)``, ``np.linalg.norm(X, axis=1)``) on fp16, bf16 and
  fp32 Arrays beside numpy float16, ml_dtypes bfloat16 and numpy float32 (``--only matrices``);
* many short dot products in one call (``np.vecdot`` of 500 vectors, einsum "ij,ij->i",
  ``np.convolve``, ``np.correlate``, ``np.polymul``) and long chains of roundings
  (``np.cumprod``, ``np.prod``, ``np.cumsum`` rounding upward) on fp16 Arrays beside
  numpy float16, and a 20x20 fp64 matrix product (``--only chains``);
* ``sf.sum`` and ``sf.vecdot`` of 4096 fp16 terms into one output with fp16, bf16 and
  fp8_e4m3 accumulators, in nearest_even, toward_zero and stochastic rounding (us per
  term).

Each figure is the median (``--stat min``: the minimum, steadier on a shared machine)
over ``--repeat`` samples of the mean over a batch of calls.  To compare two trees, run
the script under each (``PYTHONPATH=<tree>``; the header names the softfloat it
imported), alternating, and keep each cell's minimum.

    python benchmarks/bench_small.py
    python benchmarks/bench_small.py --repeat 5 --only array
    PYTHONPATH=/tmp/base python benchmarks/bench_small.py --repeat 15 --stat min
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import softfloat as sf
from timing import us_per_call


#: how the samples of a figure are summarised (``--stat``)
STATISTIC = {"median": statistics.median, "min": min}
_summary = statistics.median


def per_call(fn, repeat: int, budget: float = 0.02) -> float:
    """Median (or, with ``--stat min``, minimum) microseconds per call: ``repeat`` samples,
    each a batch of calls of about ``budget`` seconds (at least one call)."""
    return us_per_call(fn, repeat, budget, summary=_summary)


def _inputs(n, seed, dtype=np.float16):
    """fp16 (or ``dtype``) values: a 0-d array for n == 0, else n of them (standard normal)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(max(n, 1)).astype(dtype)
    return x.reshape(()) if n == 0 else x


SIZES = (("0-d", 0), ("1 elem", 1), ("8", 8), ("1000", 1000))


def _row(name, cells):
    print(f"{name:<34}" + "".join(f"{c:>14}" for c in cells))


def bit_level(repeat):
    print("bit level, fp16 (us per call)")
    _row("", [label for label, _ in SIZES] + ["np f16 0-d", "np f16 1000"])
    for name, op, native in (("sf.add", sf.add, np.add), ("sf.mul", sf.mul, np.multiply),
                             ("sf.div", sf.div, np.divide)):
        cells = []
        for _, n in SIZES:
            x, y = _inputs(n, 1), _inputs(n, 2)
            a, b = x.view(np.uint16), y.view(np.uint16)
            cells.append(f"{per_call(lambda: op(a, b, 'fp16'), repeat):.1f}")
        for n in (0, 1000):
            x, y = _inputs(n, 1), _inputs(n, 2)
            x, y = (x[()], y[()]) if n == 0 else (x, y)
            cells.append(f"{per_call(lambda: native(x, y), repeat):.2f}")
        _row(name, cells)
    cells = []
    for _, n in SIZES:
        a = np.abs(_inputs(n, 1)).view(np.uint16)
        cells.append(f"{per_call(lambda: sf.sqrt(a, 'fp16'), repeat):.1f}")
    for n in (0, 1000):
        x = np.abs(_inputs(n, 1))
        x = x[()] if n == 0 else x
        cells.append(f"{per_call(lambda: np.sqrt(x), repeat):.2f}")
    _row("sf.sqrt", cells)
    for fmt in ("fp16", "bf16", "fp8_e4m3"):
        _row(f"sf.encode(1.0, {fmt!r})", [f"{per_call(lambda: sf.encode(1.0, fmt), repeat):.1f}"])
    cells = []
    for _, n in SIZES:
        x = _inputs(n, 3).astype(np.float64) / 3
        cells.append(f"{per_call(lambda: sf.quantize(x, 'fp16'), repeat):.1f}")
    for n in (0, 1000):
        x = _inputs(n, 3).astype(np.float64) / 3
        cells.append(f"{per_call(lambda: x.astype(np.float16).astype(np.float64), repeat):.2f}")
    _row("sf.quantize(float64, 'fp16')", cells)
    cells = []
    for _, n in SIZES:
        a = _inputs(n, 1).view(np.uint16)
        cells.append(f"{per_call(lambda: sf.add(a, a, 'fp16', return_flags=True), repeat):.1f}")
    _row("sf.add(..., return_flags=True)", cells)


def narrow_formats(repeat):
    """1,000-element add/mul/div in bf16 and FP8 (bits only and with flags), and sums and
    dot products of 1,000 fp16 terms into one fp32 output (the array layer's accumulator)."""
    print("bit level, 1,000 elements (us per call; FP8: its pair table, filled by the warm-up)")
    _row("", ["bits", "flags"])
    rng = np.random.default_rng(4)
    for fmt in ("bf16", "fp8_e4m3", "fp8_e5m2"):
        a, b = sf.encode(rng.standard_normal(1000), fmt), sf.encode(rng.standard_normal(1000), fmt)
        for name, op in (("add", sf.add), ("mul", sf.mul), ("div", sf.div)):
            for _ in range(10):  # the pair tables fill after a few thousand elements
                op(a, b, fmt)
            _row(f"sf.{name} {fmt}", [f"{per_call(lambda: op(a, b, fmt), repeat):.1f}",
                                      f"{per_call(lambda: op(a, b, fmt, return_flags=True), repeat):.1f}"])
    x, y = _inputs(1000, 1).view(np.uint16), _inputs(1000, 2).view(np.uint16)
    for label, n in (("1000", 1000), ("1 elem", 1)):
        _row(f"sf.sum fp16 -> fp32, {label}",
             [f"{per_call(lambda: sf.sum(x[:n], 'fp16', accumulator='fp32'), repeat):.1f}",
              f"{per_call(lambda: sf.sum(x[:n], 'fp16', accumulator='fp32', return_flags=True), repeat):.1f}"])
    _row("sf.sum fp16 -> fp16, 1000", [f"{per_call(lambda: sf.sum(x, 'fp16'), repeat):.1f}",
                                       f"{per_call(lambda: sf.sum(x, 'fp16', return_flags=True), repeat):.1f}"])
    dot, dot_flags = (lambda: sf.vecdot(x, y, 'fp16')), (lambda: sf.vecdot(x, y, 'fp16', return_flags=True))
    _row("sf.vecdot fp16 -> fp32, 1000", [f"{per_call(dot, repeat):.1f}", f"{per_call(dot_flags, repeat):.1f}"])


def _sum(method):
    if method == "sum":
        return lambda a: a.sum() if hasattr(a, "sum") else np.add.reduce(a, axis=None)
    return method


#: the Array formats timed, each beside numpy's own type (bf16 beside float32, the type its
#: lean lanes compute in; ml_dtypes' bfloat16 is in the matrices' table)
ARRAY_FORMATS = {"fp16": np.float16, "bf16": np.float32, "fp32": np.float32}


def array_level(repeat, fmt="fp16"):
    dtype = ARRAY_FORMATS[fmt]
    short = np.dtype(dtype).name.replace("float", "f")
    print(f"Array level, {fmt}, default context (us per call)")
    _row("", [label for label, _ in SIZES] + [f"np {short} 0-d", f"np {short} 1", f"np {short} 1000"])
    cases = (("a + b", lambda a, b: a + b), ("a - b", lambda a, b: a - b), ("a * b", lambda a, b: a * b),
             ("a / b", lambda a, b: a / b), ("np.maximum(a, b)", lambda a, b: np.maximum(a, b)),
             ("np.sqrt(abs(a))", lambda a, b: np.sqrt(abs(a))), ("np.exp(a)", lambda a, b: np.exp(a)),
             ("a.sum()", "sum"), ("a + 1.0", lambda a, b: a + 1.0), ("a + 0.1 (inexact scalar)", lambda a, b: a + 0.1),
             ("a.max()", lambda a, b: a.max()), ("a.mean()", lambda a, b: a.mean()), ("a.std()", lambda a, b: a.std()),
             ("np.dot(a, b)", lambda a, b: np.dot(a, b)), ("a > b", lambda a, b: a > b),
             ("a.astype(np.float64)", lambda a, b: a.astype(np.float64)))
    for name, fn in cases:
        cells = []
        for _, n in SIZES:
            x, y = _inputs(n, 1, dtype), _inputs(n, 2, dtype)
            a, b = sf.asarray(x, fmt), sf.asarray(y, fmt)
            f = _sum(fn)
            try:
                cells.append(f"{per_call(lambda: f(a, b) if fn != 'sum' else f(a), repeat):.1f}")
            except TypeError as err:  # a method another change adds
                cells.append(f"n/a ({type(err).__name__})")
        for n in (0, 1, 1000):
            x, y = _inputs(n, 1, dtype), _inputs(n, 2, dtype)
            f = (lambda a: a.sum()) if fn == "sum" else fn
            cells.append(f"{per_call(lambda: f(x, y) if fn != 'sum' else f(x), repeat):.2f}")
        _row(name, cells)


def _native_dtype(fmt):
    """numpy's own type for ``fmt`` (ml_dtypes' bfloat16 for bf16 where it is installed)."""
    if fmt == "bf16":
        try:
            import ml_dtypes
        except ImportError:
            return None
        return ml_dtypes.bfloat16
    return {"fp16": np.float16, "fp32": np.float32}[fmt]


#: small matrix and axis operations: (label, the call on (A, B, v, X)); A, B are 4x4 or
#: 16x16, v a vector of 4 or 16, X 10x3
MATRIX_CASES = (("A @ B, 4x4", 4, lambda A, B, v, X: A @ B), ("A @ v, 4x4", 4, lambda A, B, v, X: A @ v),
                ("A @ B, 16x16", 16, lambda A, B, v, X: A @ B), ("X.sum(axis=0), 10x3", 4, lambda A, B, v, X: X.sum(axis=0)),
                ("X.mean(axis=0), 10x3", 4, lambda A, B, v, X: X.mean(axis=0)),
                ("np.linalg.norm(X, axis=1)", 4, lambda A, B, v, X: np.linalg.norm(X, axis=1)))


def small_matrices(repeat):
    """Products of small matrices and reductions along an axis of a small array (us per
    call), on Arrays and on numpy's (or ml_dtypes') own type."""
    print("small matrices and axis reductions, default context (us per call)")
    _row("", [f"Array {fmt}" for fmt in ("fp16", "bf16", "fp32")] + ["np f16", "ml bf16", "np f32"])
    rng = np.random.default_rng(4)
    for name, n, fn in MATRIX_CASES:
        values = (rng.standard_normal((n, n)), rng.standard_normal((n, n)), rng.standard_normal(n),
                  rng.standard_normal((10, 3)))
        cells = []
        for fmt in ("fp16", "bf16", "fp32"):
            args = [sf.asarray(v, fmt) for v in values]
            cells.append(f"{per_call(lambda: fn(*args), repeat):.1f}")
        for fmt in ("fp16", "bf16", "fp32"):
            dtype = _native_dtype(fmt)
            if dtype is None:
                cells.append("n/a")
                continue
            args = [v.astype(dtype) for v in values]
            try:
                cells.append(f"{per_call(lambda: fn(*args), repeat):.2f}")
            except TypeError:  # (ml_dtypes' bfloat16 lacks some of numpy's loops)
                cells.append("n/a")
        _row(name, cells)


#: calls on Arrays made of many short dot products or of one long chain of roundings:
#: (label, the call on (X, Y, v, a, k, p, q): X, Y 500x5, v and k 5 values, a 500 values
#: near 1, p, q 20 polynomial coefficients), each beside numpy float16 doing the same
CHAIN_CASES = (("np.vecdot(X, v), 500x5", lambda X, Y, v, a, k, p, q: np.vecdot(X, v)),
               ("einsum('ij,ij->i', X, Y), 500x5", lambda X, Y, v, a, k, p, q: np.einsum("ij,ij->i", X, Y)),
               ("np.convolve(a, k), 500 by 5", lambda X, Y, v, a, k, p, q: np.convolve(a, k)),
               ("np.correlate(a, k), 500 by 5", lambda X, Y, v, a, k, p, q: np.correlate(a, k)),
               ("np.polymul(p, q), 20x20", lambda X, Y, v, a, k, p, q: np.polymul(p, q)),
               ("np.cumprod(a), 500", lambda X, Y, v, a, k, p, q: np.cumprod(a)),
               ("np.prod(a), 500", lambda X, Y, v, a, k, p, q: np.prod(a)),
               ("np.cumsum(a), 500, upward", lambda X, Y, v, a, k, p, q: _upward(np.cumsum, a)))


def _upward(fn, *args):
    """``fn(*args)`` in a context rounding upward (numpy's own types ignore it: their
    figure is to nearest even)."""
    with sf.context(rounding="upward"):
        return fn(*args)


def chains(repeat):
    """Many short dot products in one call, and long chains of roundings (us per call), on
    fp16 Arrays beside numpy float16."""
    print("many dot products, long chains: fp16, default context (us per call)")
    _row("", ["Array fp16", "np f16"])
    rng = np.random.default_rng(5)
    values = (rng.standard_normal((500, 5)), rng.standard_normal((500, 5)), rng.standard_normal(5),
              rng.uniform(0.9, 1.1, 500), rng.standard_normal(5), rng.standard_normal(20), rng.standard_normal(20))
    for name, fn in CHAIN_CASES:
        arrays = [sf.asarray(v, "fp16") for v in values]
        natives = [v.astype(np.float16) for v in values]
        _row(name, [f"{per_call(lambda: fn(*arrays), repeat):.1f}", f"{per_call(lambda: fn(*natives), repeat):.2f}"])
    m = rng.standard_normal((20, 20))  # fused multiply-adds in binary64: no exact float64 product
    a = sf.asarray(m, "fp64")
    _row("A @ A, fp64 20x20 (np: float64)", [f"{per_call(lambda: a @ a, repeat):.1f}", f"{per_call(lambda: m @ m, repeat):.2f}"])


def accumulation(repeat, n=4096):
    print(f"sequential accumulation of {n} fp16 terms into one output (us per term)")
    modes = ("nearest_even", "toward_zero", "stochastic")
    short = {"nearest_even": "RNE", "toward_zero": "RZ", "stochastic": "SR"}
    _row("", [f"sum {short[m]}" for m in modes] + [f"vecdot {short[m]}" for m in modes])
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(n) * 0.5).astype(np.float16).view(np.uint16)
    y = (rng.standard_normal(n) * 0.5).astype(np.float16).view(np.uint16)
    for acc in ("fp16", "bf16", "fp8_e4m3"):
        cells = []
        for m in modes:
            kw = dict(accumulator=acc, rounding=m, rng=0 if m == "stochastic" else None)
            cells.append(f"{per_call(lambda: sf.sum(x, 'fp16', **kw), repeat, 0.05) / n:.2f}")
        for m in modes:
            kw = dict(accumulator=acc, rounding=m, rng=0 if m == "stochastic" else None)
            cells.append(f"{per_call(lambda: sf.vecdot(x, y, 'fp16', **kw), repeat, 0.05) / n:.2f}")
        _row(f"accumulator {acc}", cells)
    f16 = x.view(np.float16)
    print(f"  numpy float16 np.sum of {n} (pairwise, not sequential): "
          f"{per_call(lambda: np.sum(f16), repeat) / n * 1e3:.2f} ns per term")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", choices=("bits", "narrow", "array", "matrices", "chains", "accumulate"), default=None)
    parser.add_argument("--stat", choices=sorted(STATISTIC), default="median")
    args = parser.parse_args()
    global _summary
    _summary = STATISTIC[args.stat]
    print(f"softfloat {sf.__version__} ({sf.__file__}), numpy {np.__version__}; fast paths "
          f"{'on' if sf._fastpaths.ENABLED else 'off'}; {args.stat} of {args.repeat} samples")
    if args.only in (None, "bits"):
        bit_level(args.repeat)
    if args.only in (None, "narrow"):
        narrow_formats(args.repeat)
    if args.only in (None, "array"):
        for fmt in ARRAY_FORMATS:
            array_level(args.repeat, fmt)
    if args.only in (None, "matrices"):
        small_matrices(args.repeat)
    if args.only in (None, "chains"):
        chains(args.repeat)
    if args.only in (None, "accumulate"):
        accumulation(args.repeat)


if __name__ == "__main__":
    main()
