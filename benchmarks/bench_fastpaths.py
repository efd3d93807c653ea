"""Time the single-thread fast paths (softfloat._fastpaths) against their floors.

Issue 13's "one core" targets, each measured in one run on the same data:

    float32 -> bf16, every deterministic mode     within 2x ml_dtypes' astype(bfloat16)
    float32/float64 -> fp16, nearest_even,        within 1x numpy's astype(float16)
        on normal-range data
    quantize float64, every deterministic mode    within 10x np.copyto (the copy floor)

plus FP8 encoding (a table lookup) beside ml_dtypes' casts, and decode against a copy.  Data: normal-range values (log-uniform over the target's
normal range, both signs) unless said otherwise; ``--wide`` adds the whole-range data of
bench_codec.py (subnormals and overflows included), where the general path does the
work.  Output: ns/element (the least of --repeat runs: on a shared machine the others
were preempted) and the ratio to the reference.
Runs single-threaded (``workers=1`` where the installed softfloat has that option).

    python benchmarks/bench_fastpaths.py              # 2**22 elements
    python benchmarks/bench_fastpaths.py --n 20 --repeat 3
"""

from __future__ import annotations

import argparse
import inspect
import warnings

import numpy as np

import softfloat as sf
from timing import best_of as timeit, log_uniform

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - optional
    ml_dtypes = None

DETERMINISTIC = [m.value for m in sf.Rounding if m.is_deterministic]
ONE_THREAD = {"workers": 1} if "workers" in inspect.signature(sf.encode).parameters else {}


def normal_range(fmt: sf.Format, n: int, dtype, seed: int = 0) -> np.ndarray:
    """n values log-uniform over [min_normal, max_finite / 2], random signs."""
    return log_uniform(fmt.min_normal, fmt.max_finite / 2, n, seed).astype(dtype)


def wide_range(fmt: sf.Format, n: int, dtype, seed: int = 0) -> np.ndarray:
    return log_uniform(fmt.min_subnormal / 4, fmt.max_finite * 4, n, seed).astype(dtype)


def table(title, rows, ref_label, n, target=None):
    ref = dict(rows)[ref_label]
    print(f"\n{title}")
    print(f"  {'':36s} {'ns/elem':>8s} {'x ' + ref_label[:14]:>17s}")
    worst = 0.0
    for label, t in rows:
        ratio = t / ref
        if label.startswith(("encode", "quantize", "decode")) and "flags" not in label:
            worst = max(worst, ratio)
        print(f"  {label:36s} {t / n * 1e9:8.2f} {ratio:17.2f}")
    if target is not None:
        verdict = "met" if worst <= target else "NOT met"
        print(f"  target: every softfloat mode within {target:g}x {ref_label}: {verdict} (worst {worst:.2f}x)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=22, help="log2 of the number of elements (default 22)")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--wide", action="store_true", help="also time whole-range data")
    ap.add_argument("--only", nargs="+", default=["bf16", "fp16", "fp8", "quantize", "decode"],
                    help="sections to run (default: all)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)  # numpy's own casts warn on overflow
    n, rep = 1 << args.n, args.repeat
    print(f"softfloat {sf.__version__}, numpy {np.__version__}, "
          f"ml_dtypes {getattr(ml_dtypes, '__version__', 'not installed')}, n = 2**{args.n}, "
          f"single thread{' (workers=1)' if ONE_THREAD else ''}")
    kinds = [("normal-range", normal_range)] + ([("whole-range", wide_range)] if args.wide else [])

    # ---- float32 -> bf16 / tf32, every deterministic mode ---------------------------------
    for kind, make in kinds if "bf16" in args.only else ():
        for fmt in (sf.bf16, sf.tf32):
            x = make(fmt, n, np.float32)
            floor_out = np.empty_like(x)
            rows = [("np.copyto float32", timeit(lambda: np.copyto(floor_out, x), rep))]
            ref = "np.copyto float32"
            if ml_dtypes is not None and fmt is sf.bf16:
                rows.append(("ml_dtypes astype(bfloat16)", timeit(lambda: x.astype(ml_dtypes.bfloat16), rep)))
                ref = "ml_dtypes astype(bfloat16)"
            for mode in DETERMINISTIC:
                rows.append((f"encode {mode}", timeit(lambda: sf.encode(x, fmt, mode, **ONE_THREAD), rep)))
            rows.append(("encode nearest_even, flags",
                         timeit(lambda: sf.encode(x, fmt, return_flags=True, **ONE_THREAD), rep)))
            target = 2 if ref.startswith("ml_dtypes") else None
            table(f"float32 -> {fmt.name}, {kind}", rows, ref, n, target)

    # ---- float32 / float64 -> fp16, nearest_even --------------------------------------------
    for kind, make in kinds if "fp16" in args.only else ():
        for dtype in (np.float32, np.float64):
            x = make(sf.fp16, n, dtype)
            floor_out = np.empty_like(x)
            rows = [("np.copyto", timeit(lambda: np.copyto(floor_out, x), rep)),
                    ("numpy astype(float16)", timeit(lambda: x.astype(np.float16), rep)),
                    ("encode nearest_even", timeit(lambda: sf.encode(x, sf.fp16, **ONE_THREAD), rep))]
            table(f"{np.dtype(dtype).name} -> fp16, {kind}", rows, "numpy astype(float16)", n,
                  1 if kind == "normal-range" else None)

    # ---- float32 / float64 -> FP8, every deterministic mode (one table lookup) ---------------
    for kind, make in kinds if "fp8" in args.only else ():
        for dtype in (np.float32, np.float64):
            for fmt, theirs in ((sf.fp8_e4m3, "float8_e4m3fn"), (sf.fp8_e5m2, "float8_e5m2")):
                x = make(fmt, n, dtype)
                floor_out = np.empty_like(x)
                rows = [("np.copyto", timeit(lambda: np.copyto(floor_out, x), rep))]
                ref = "np.copyto"
                if ml_dtypes is not None:
                    cast = getattr(ml_dtypes, theirs)
                    rows.append((f"ml_dtypes astype({theirs})", timeit(lambda: x.astype(cast), rep)))
                    ref = rows[-1][0]
                for mode in DETERMINISTIC:
                    rows.append((f"encode {mode}", timeit(lambda: sf.encode(x, fmt, mode, **ONE_THREAD), rep)))
                rows.append(("encode nearest_even, flags",
                             timeit(lambda: sf.encode(x, fmt, return_flags=True, **ONE_THREAD), rep)))
                table(f"{np.dtype(dtype).name} -> {fmt.name}, {kind}", rows, ref, n)

    # ---- quantize float64 (and float32), every deterministic mode ----------------------------
    for kind, make in kinds if "quantize" in args.only else ():
        for dtype in (np.float64, np.float32):
            for fmt in (sf.bf16, sf.fp16, sf.fp8_e4m3):
                x = make(fmt, n, dtype)
                floor_out = np.empty_like(x)
                rows = [("np.copyto (floor)", timeit(lambda: np.copyto(floor_out, x), rep))]
                for mode in DETERMINISTIC:
                    rows.append((f"quantize {mode}", timeit(lambda: sf.quantize(x, fmt, mode, **ONE_THREAD), rep)))
                table(f"quantize {np.dtype(dtype).name} -> {fmt.name}, {kind}", rows, "np.copyto (floor)", n,
                      10 if dtype == np.float64 else None)

    # ---- decode ---------------------------------------------------------------------------
    for fmt in (sf.bf16, sf.fp16, sf.fp8_e4m3) if "decode" in args.only else ():
        bits = sf.encode(normal_range(fmt, n, np.float64), fmt)
        rows = []
        for dtype in (np.float64, np.float32):
            if not sf.as_format("fp32" if dtype == np.float32 else "fp64").holds(fmt):
                continue
            out, src = np.empty(n, dtype=dtype), np.ones(n, dtype=dtype)
            rows.append((f"np.copyto into {np.dtype(dtype).name}", timeit(lambda: np.copyto(out, src), rep)))
            rows.append((f"decode -> {np.dtype(dtype).name}",
                         timeit(lambda: sf.decode(bits, fmt, dtype, **ONE_THREAD), rep)))
        table(f"decode {fmt.name} (patterns of normal-range data)", rows, "np.copyto into float64", n)
    print("\n(timings on a shared machine are noisy: compare ratios within one run)")


if __name__ == "__main__":
    main()
