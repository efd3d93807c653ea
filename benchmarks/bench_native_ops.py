"""fp16 / bf16 add, sub, mul, div and sqrt on large arrays against numpy's float16 ufuncs,
torch's CPU float16 / bfloat16 ops (one thread and its default count) and a plain copy
of the operand, same run, same data (issue 23, item 5).

Operands: 2**n bit patterns, finite values log-uniform over the whole format range
("wide", subnormals to max_finite) or in [1, 2) ("normal"); sqrt takes the first
operand's magnitudes.  Each softfloat figure is timed without flags and with
``return_flags=True``; output in ns/element (the fastest of --repeat runs: the machine
may be shared), and the nearest-even figures' ratios to numpy and to torch on one and
on its default threads.

    python benchmarks/bench_native_ops.py
    python benchmarks/bench_native_ops.py --n 20 --formats fp16 --ops mul --modes nearest_even
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import softfloat as sf
from timing import best_of as timeit, log_uniform


try:
    import torch
except ImportError:  # pragma: no cover - optional
    torch = None

UFUNC = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "sqrt": np.sqrt}
TORCH = {"fp16": "float16", "bf16": "bfloat16"}


def operands(fmt, n, kind, seed):
    if kind == "normal":
        x = np.random.default_rng(seed).uniform(1.0, 2.0, n)
    else:
        x = log_uniform(fmt.min_subnormal, fmt.max_finite, n, seed)
    return sf.encode(x, fmt)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=22)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--formats", nargs="+", default=["fp16", "bf16"])
    ap.add_argument("--ops", nargs="+", default=["add", "sub", "mul", "div", "sqrt"])
    ap.add_argument("--modes", nargs="+",
                    default=["nearest_even", "toward_zero", "upward", "downward", "nearest_away", "odd"])
    ap.add_argument("--data", nargs="+", default=["wide", "normal"])
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)
    n = 1 << args.n
    print(f"softfloat {sf.__version__}, numpy {np.__version__}, torch "
          f"{getattr(torch, '__version__', 'not installed')} ({torch.get_num_threads() if torch else 0} threads), "
          f"n = 2**{args.n}, ns/element")
    threads = torch.get_num_threads() if torch else 0
    for name in args.formats:
        fmt = sf.as_format(name)
        for kind in args.data:
            a, b = (operands(fmt, n, kind, seed) for seed in (1, 2))
            copied = np.empty_like(a)
            copy = timeit(lambda: np.copyto(copied, a), args.repeat)
            print(f"\n{fmt.name}, {kind} data (np.copyto of one operand: {copy / n * 1e9:.2f})")
            for op in args.ops:
                xs = (a & np.uint16(0x7FFF),) if op == "sqrt" else (a, b)
                ref = {}
                if name == "fp16":
                    vs = [v.view(np.float16) for v in xs]
                    ref["numpy"] = timeit(lambda: UFUNC[op](*vs), args.repeat)
                if torch is not None:
                    dt = getattr(torch, TORCH[name])
                    ts = [torch.from_numpy(v.view(np.int16)).view(dt) for v in xs]
                    fn = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
                          "sqrt": torch.sqrt}[op]
                    for count in (1, threads):
                        torch.set_num_threads(count)
                        ref[f"torch/{count}"] = timeit(lambda: fn(*ts), args.repeat)
                    torch.set_num_threads(threads)
                print(f"  {op}: " + "  ".join(f"{k} {t / n * 1e9:.2f}" for k, t in ref.items()))
                f = getattr(sf, op)
                for mode in args.modes:
                    t0 = timeit(lambda: f(*xs, fmt, mode), args.repeat)
                    t1 = timeit(lambda: f(*xs, fmt, mode, return_flags=True), args.repeat)
                    ratios = "" if mode != "nearest_even" else "   x " + "  ".join(
                        f"{k} {t0 / t:.1f}" for k, t in list(ref.items()) + [("copy", copy)])
                    print(f"    {mode:13s} {t0 / n * 1e9:8.2f}  flags {t1 / n * 1e9:8.2f}{ratios}")


if __name__ == "__main__":
    main()
