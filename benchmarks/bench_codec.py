"""Time softfloat's encode and quantize against numpy, ml_dtypes and a plain copy.

For each target format the input is 2**24 float32 or float64 values spread log-uniformly
over the target's whole range -- from a quarter of its smallest subnormal to four times
its largest finite value, both signs -- so subnormal, normal and overflowing inputs all
appear.  Every figure in a table comes from the same run on the same data:

    np.copyto              the floor: read and write once
    numpy astype(float16)  numpy's own conversion (fp16 only)
    ml_dtypes astype       where ml_dtypes is installed
    softfloat encode/quantize in every rounding mode

Output: ns/element (the median of --repeat runs, or with ``--stat min`` the least: the
run that was not preempted, on a shared machine), the ratio to the np.copyto floor
("x copy") and the ratio to numpy's astype(float16) (fp16) or ml_dtypes' astype (other
formats).
``--data normal`` draws the values from the target's normal range only (min_normal to
max_finite), where numpy's cast is fastest and the upper-word kernel takes float64.
Peak extra memory of one encode call is reported too (tracemalloc), as a multiple of
the output size.

    python benchmarks/bench_codec.py                 # all of it, 2**24 elements
    python benchmarks/bench_codec.py --n 22 --formats fp16 --modes nearest_even
    python benchmarks/bench_codec.py --n 22 --formats fp16 bf16 --dtypes float64 --data normal
    python benchmarks/bench_codec.py --n 22 --formats fp16 --dtypes float64 --flags --quantize
    python benchmarks/bench_codec.py --n 22 --formats fp16 bf16 --quantize --stat min --repeat 7
"""

from __future__ import annotations

import argparse
import warnings
import tracemalloc

import numpy as np

import softfloat as sf
from timing import best_of, log_uniform, timeit

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - optional
    ml_dtypes = None

ML_DTYPES = {"bf16": "bfloat16", "fp8_e4m3": "float8_e4m3fn",
             "fp8_e5m2": "float8_e5m2"}


def wide_range_data(fmt: sf.Format, n: int, dtype, seed: int = 0) -> np.ndarray:
    """n values log-uniform over [min_subnormal / 4, 4 * max_finite], random signs."""
    return log_uniform(fmt.min_subnormal / 4, fmt.max_finite * 4, n, seed).astype(dtype)


def normal_range_data(fmt: sf.Format, n: int, dtype, seed: int = 0) -> np.ndarray:
    """n values log-uniform over [min_normal, max_finite], random signs."""
    return log_uniform(fmt.min_normal, fmt.max_finite, n, seed).clip(-fmt.max_finite, fmt.max_finite).astype(dtype)


def peak_ratio(fn, out_nbytes: int) -> float:
    tracemalloc.start()
    tracemalloc.reset_peak()
    result = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return (peak - out_nbytes) / out_nbytes


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=24, help="log2 of the number of elements (default 24)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--stat", choices=["median", "min"], default="median",
                    help="median of --repeat runs (default), or min: the least (the unpreempted run)")
    ap.add_argument("--formats", nargs="+", default=["fp16", "bf16", "fp8_e4m3"])
    ap.add_argument("--dtypes", nargs="+", default=["float64", "float32"])
    ap.add_argument("--modes", nargs="+", default=[m.value for m in sf.Rounding])
    ap.add_argument("--quantize", action="store_true", help="also time quantize (decode included)")
    ap.add_argument("--workers", type=int, default=None,
                    help="threads for softfloat (default: the library's, every core); 1 times one thread")
    ap.add_argument("--flags", action="store_true", help="also time encode with return_flags=True")
    ap.add_argument("--data", choices=["wide", "normal"], default="wide",
                    help="wide: the whole range and beyond (default); normal: the normal range only")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)  # numpy's own casts warn on overflow
    n = 1 << args.n
    measure = timeit if args.stat == "median" else best_of

    print(f"softfloat {sf.__version__}, numpy {np.__version__}, "
          f"ml_dtypes {getattr(ml_dtypes, '__version__', 'not installed')}, n = 2**{args.n}, "
          f"{args.stat} of {args.repeat}, workers {args.workers or 'default'}")
    for dtype in args.dtypes:
        for name in args.formats:
            fmt = sf.as_format(name)
            x = (wide_range_data if args.data == "wide" else normal_range_data)(fmt, n, dtype)
            floor_out = np.empty_like(x)
            floor = measure(lambda: np.copyto(floor_out, x), args.repeat)
            rows = [("np.copyto (floor)", floor)]
            native = None  # numpy's cast for fp16, else ml_dtypes'
            if name == "fp16":
                native = measure(lambda: x.astype(np.float16), args.repeat)
                rows.append(("numpy astype(float16)", native))
            if ml_dtypes is not None and name in ML_DTYPES:
                mdt = getattr(ml_dtypes, ML_DTYPES[name])
                t = measure(lambda: x.astype(mdt), args.repeat)
                native = t if native is None else native
                rows.append((f"ml_dtypes astype({ML_DTYPES[name]})", t))
            nearest = None
            for mode in args.modes:
                t = measure(lambda: sf.encode(x, fmt, mode, rng=0, workers=args.workers), args.repeat)
                nearest = t if mode == "nearest_even" else nearest
                rows.append((f"encode {mode}", t))
                if args.flags:
                    rows.append((f"encode {mode} flags",
                                 measure(lambda: sf.encode(x, fmt, mode, rng=0, return_flags=True, workers=args.workers), args.repeat)))
                if args.quantize:
                    rows.append((f"quantize {mode}", measure(lambda: sf.quantize(x, fmt, mode, rng=0, workers=args.workers), args.repeat)))
            where = "the whole range" if args.data == "wide" else "the normal range"
            print(f"\n{dtype} -> {fmt.name}   ({n} values over {where} of {fmt.name})")
            print(f"  {'':34s} {'ns/elem':>8s} {'x copy':>8s} {'x native':>8s}")
            for label, t in rows:
                vs = f"{t / native:8.2f}" if native else f"{'-':>8s}"
                print(f"  {label:34s} {t / n * 1e9:8.2f} {t / floor:8.1f} {vs}")
            if nearest is not None and "stochastic" in args.modes:
                sto = dict(rows)["encode stochastic"]
                print(f"  stochastic / nearest_even: {sto / nearest:.2f}")
            out_bytes = n * fmt.storage_dtype.itemsize
            print(f"  peak extra memory of encode: {peak_ratio(lambda: sf.encode(x, fmt), out_bytes):.2f} x output")
            if args.quantize:
                q_bytes = n * np.dtype(dtype).itemsize
                print(f"  peak extra memory of quantize: {peak_ratio(lambda: sf.quantize(x, fmt), q_bytes):.2f} x output")


if __name__ == "__main__":
    main()
