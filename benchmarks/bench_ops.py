"""Time softfloat's arithmetic against numpy's and ml_dtypes' own ufuncs, same run, same data.

For each format, operands are 2**22 bit patterns drawn two ways:

    wide    finite values log-uniform over the whole range, subnormals to overflow
    normal  values in [1, 2)

(fp64 can be added with --formats; its lanes with magnitudes beyond 2**995 or below
2**-968 take an exact slow path, and the share of such lanes is printed.)

and each operation is timed in nearest_even and the directed modes, beside numpy's
float16/float32 ufuncs on the same values (fp16 and fp32) and ml_dtypes' bfloat16 ufuncs
(bf16), which compute in float32 and round -- not always correctly; they are the speed
reference, not the oracle.  Output: ns/element (median of --repeat runs) and the ratio to
the native ufunc.

    python benchmarks/bench_ops.py
    python benchmarks/bench_ops.py --n 20 --formats fp16 --ops add mul
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import softfloat as sf
from timing import log_uniform, timeit
from softfloat.ops.kernels import is_narrow, safe_magnitude

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - optional
    ml_dtypes = None

NATIVE = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def operands(fmt: sf.Format, n: int, kind: str, seed: int) -> np.ndarray:
    if kind == "normal":
        x = np.random.default_rng(seed).uniform(1.0, 2.0, n)
    else:
        x = log_uniform(fmt.min_subnormal, fmt.max_finite, n, seed)
    return sf.encode(x, fmt)


def native_dtype(name: str):
    if name in NATIVE:
        return NATIVE[name]
    if name == "bf16" and ml_dtypes is not None:
        return ml_dtypes.bfloat16
    if name == "fp8_e4m3" and ml_dtypes is not None:
        return ml_dtypes.float8_e4m3fn
    return None


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=22, help="log2 of the number of elements (default 22)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--formats", nargs="+", default=["fp16", "bf16", "fp32", "fp8_e4m3"])
    ap.add_argument("--ops", nargs="+", default=["add", "sub", "mul", "div", "sqrt", "fma"])
    ap.add_argument("--modes", nargs="+", default=["nearest_even", "toward_zero", "upward", "downward"])
    ap.add_argument("--data", nargs="+", default=["wide", "normal"])
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)
    n = 1 << args.n
    print(f"softfloat {sf.__version__}, numpy {np.__version__}, "
          f"ml_dtypes {getattr(ml_dtypes, '__version__', 'not installed')}, n = 2**{args.n}")
    for name in args.formats:
        fmt = sf.as_format(name)
        dt = native_dtype(name)
        for kind in args.data:
            a, b, c = (operands(fmt, n, kind, seed) for seed in (1, 2, 3))
            if kind == "normal":
                b = sf.encode(np.abs(sf.decode(b, fmt)), fmt)  # sqrt of [1, 2) stays real
            print(f"\n{fmt.name}, {kind} data       ns/elem   native   ratio")
            if not is_narrow(fmt):
                # wide formats compute lanes with extreme magnitudes exactly in Python
                xa, xb = sf.decode(a, fmt), sf.decode(b, fmt)
                with np.errstate(all="ignore"):
                    outside = ~(safe_magnitude(xa) & safe_magnitude(xb) & safe_magnitude(xa * xb))
                print(f"  (share of mul lanes on the exact slow path: {outside.mean():.2%})")
            for op in args.ops:
                native = None
                if dt is not None:
                    va, vb, vc = (sf.decode(v, fmt).astype(dt) for v in (a, b, c))
                    if op in BINARY:
                        native = timeit(lambda: BINARY[op](va, vb), args.repeat)
                    elif op == "sqrt":
                        native = timeit(lambda: np.sqrt(vb), args.repeat)
                for mode in args.modes:
                    f = getattr(sf, op)
                    if op == "sqrt":
                        t = timeit(lambda: f(b, fmt, mode), args.repeat)
                    elif op == "fma":
                        t = timeit(lambda: f(a, b, c, fmt, mode), args.repeat)
                    else:
                        t = timeit(lambda: f(a, b, fmt, mode), args.repeat)
                    ref = f"{native / n * 1e9:8.2f} {t / native:7.2f}" if native else f"{'-':>8s} {'-':>7s}"
                    print(f"  {op:4s} {mode:13s} {t / n * 1e9:8.2f} {ref}")


if __name__ == "__main__":
    main()
