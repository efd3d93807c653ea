"""Time softfloat on several threads against one, and against the np.copyto floor.

For encode and quantize (fp16, bf16, fp8_e4m3, every rounding mode) and for add, mul and
fma (bf16), at 2**24 elements by default, in the same run on the same data:

    np.copyto        the floor: read and write the input once
    workers=1        today's single thread
    workers=W        W threads (default 2): blocks on a thread pool

Output: ns/element (median of --repeat runs) for each, the W-thread speed-up over one
thread, and the W-thread time as a multiple of the copy floor.  The codec's input is
float32 spread log-uniformly over each format's whole range (subnormals to overflow);
the operations take bf16 patterns of such values.

``--out-of-core MB`` also quantises a .npy of that many MB of float32 to bf16 on disk
with dask, chunk by chunk (the README's recipe), and prints the wall time, the peak
memory traced by tracemalloc and the process's peak RSS.

    python benchmarks/bench_scale.py                         # 2**24 elements, 2 workers
    python benchmarks/bench_scale.py --n 18 --repeat 1       # a quick check that it runs
    python benchmarks/bench_scale.py --workers 4 --out-of-core 4096

Timings on a machine that others are using are noise: measure on a quiet one.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
import tracemalloc

import numpy as np

import softfloat as sf
from timing import log_uniform, timeit

MODES = [r.value for r in sf.Rounding]


def wide_range_data(fmt: sf.Format, n: int, seed: int = 0) -> np.ndarray:
    with np.errstate(over="ignore"):
        return log_uniform(fmt.min_subnormal / 4, fmt.max_finite * 4, n, seed).astype(np.float32)


def row(label, n, floor, one, many, workers):
    ns = lambda t: 1e9 * t / n  # noqa: E731
    print(f"{label:<34} {ns(one):9.2f} {ns(many):9.2f} {one / many:8.2f}x {many / floor:9.1f}x")


def header(workers):
    print(f"{'':<34} {'1 thread':>9} {f'{workers} thr.':>9} {'speed-up':>9} {'/ copyto':>10}")


def codec(n, workers, repeat, formats, modes):
    for name in formats:
        fmt = sf.as_format(name)
        x = wide_range_data(fmt, n)
        out = np.empty_like(x)
        floor = timeit(lambda: np.copyto(out, x), repeat)
        print(f"\n{name}: float32 input, np.copyto {1e9 * floor / n:.2f} ns/element")
        header(workers)
        for fn in (sf.encode, sf.quantize):
            for mode in modes:
                one = timeit(lambda: fn(x, fmt, mode, rng=0, workers=1), repeat)
                many = timeit(lambda: fn(x, fmt, mode, rng=0, workers=workers), repeat)
                row(f"{fn.__name__} {mode}", n, floor, one, many, workers)


def operations(n, workers, repeat, modes):
    fmt = sf.as_format("bf16")
    a, b, c = (sf.encode(wide_range_data(fmt, n, seed) / 2**60, fmt) for seed in (1, 2, 3))
    out = np.empty_like(a)
    floor = timeit(lambda: np.copyto(out, a), repeat)
    print(f"\nbf16 operations: np.copyto of the uint16 patterns {1e9 * floor / n:.2f} ns/element")
    header(workers)
    for name, fn, args in (("add", sf.add, (a, b)), ("mul", sf.mul, (a, b)), ("fma", sf.fma, (a, b, c))):
        for mode in modes:
            one = timeit(lambda: fn(*args, fmt, mode, rng=0, workers=1), repeat)
            many = timeit(lambda: fn(*args, fmt, mode, rng=0, workers=workers), repeat)
            row(f"{name} {mode}", n, floor, one, many, workers)


def out_of_core(megabytes, chunk):
    import dask.array as da

    n = megabytes * (1 << 20) // 4
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "w.npy"), os.path.join(tmp, "w_bf16.npy")
        src_file = np.lib.format.open_memmap(src, mode="w+", dtype=np.float32, shape=(n,))
        step = 1 << 24
        rng = np.random.default_rng(0)
        for i in range(0, n, step):  # written piece by piece too
            src_file[i:i + step] = rng.standard_normal(min(step, n - i), dtype=np.float32)
        src_file.flush()
        del src_file
        da.store(sf.encode(da.ones(10, chunks=5), "bf16"), np.empty(10, np.uint16))  # imports first
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tracemalloc.start()
        t0 = time.perf_counter()
        bits = sf.encode(sf.from_npy(src, chunks=chunk), "bf16")
        sf.to_npy(bits, dst)  # chunk by chunk into a temporary file, renamed at the end
        seconds = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"\nout of core: {megabytes} MB of float32 -> bf16 on disk, chunks of {chunk} values")
    print(f"  {seconds:.2f} s ({1e9 * seconds / n:.2f} ns/element), peak traced memory "
          f"{peak / 2**20:.1f} MB, peak RSS {rss / 1024:.0f} MB (before: {rss_before / 1024:.0f} MB; "
          "RSS counts page-cache pages of the memory maps too)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=24, help="log2 of the number of elements (default 24)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--formats", nargs="+", default=["fp16", "bf16", "fp8_e4m3"])
    ap.add_argument("--modes", nargs="+", default=MODES)
    ap.add_argument("--out-of-core", type=int, default=0, metavar="MB",
                    help="also quantise a .npy of this many MB with dask (0: skip)")
    ap.add_argument("--chunk", type=int, default=1 << 22, help="dask chunk, in values (out of core)")
    args = ap.parse_args(argv)
    n = 1 << args.n
    print(f"{n} elements, {args.workers} workers against 1 ({sf.get_workers()} cores available)")
    codec(n, args.workers, args.repeat, args.formats, args.modes)
    operations(n, args.workers, args.repeat, args.modes)
    if args.out_of_core:
        out_of_core(args.out_of_core, args.chunk)


if __name__ == "__main__":
    main()
