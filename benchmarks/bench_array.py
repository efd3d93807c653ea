"""Time the Array layer against the bit-level operations it calls, same run, same data.

    a + b     on 2**20 fp16 elements and on 1-element Arrays, beside ``sf.add`` on the bits
              (with and without flags: an Array operation computes them for the context's
              sticky counts, unless the context says ``track_flags=False``)
    A @ B     on 512 x 512 fp16 Arrays, beside ``sf.matmul`` on the bits (with flags: the
              native float32 path with every addition's flags; without: the plain native path)

Each Array figure is taken twice: flags tracked (the default) against the bit-level call
with flags, and ``track_flags=False`` against the call without.

Output: time per call and the Array layer's ratio (or added microseconds).

    python benchmarks/bench_array.py
    python benchmarks/bench_array.py --size 256 --repeat 1
"""

from __future__ import annotations

import argparse

import numpy as np

import softfloat as sf
from timing import timeit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512, help="M = K = N of the matrix product")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    n = 1 << 20
    a, b = (sf.asarray(rng.standard_normal(n), "fp16") for _ in range(2))
    t_arr = timeit(lambda: a + b, args.repeat)
    t_flags = timeit(lambda: sf.add(a.bits, b.bits, "fp16", return_flags=True), args.repeat)
    t_bits = timeit(lambda: sf.add(a.bits, b.bits, "fp16"), args.repeat)
    with sf.context(track_flags=False):
        t_untracked = timeit(lambda: a + b, args.repeat)
    print(f"a + b, 2**20 fp16: Array {t_arr / n * 1e9:.2f} ns/element vs bits with flags "
          f"{t_flags / n * 1e9:.2f} ({t_arr / t_flags:.2f}x); untracked Array {t_untracked / n * 1e9:.2f} vs "
          f"bits without {t_bits / n * 1e9:.2f} ({t_untracked / t_bits:.2f}x)")

    x, y = sf.asarray([1.5], "fp16"), sf.asarray([2.25], "fp16")
    reps = 50 * args.repeat
    t_arr = timeit(lambda: [x + y for _ in range(100)], reps) / 100
    t_flags = timeit(lambda: [sf.add(x.bits, y.bits, "fp16", return_flags=True) for _ in range(100)], reps) / 100
    t_bits = timeit(lambda: [sf.add(x.bits, y.bits, "fp16") for _ in range(100)], reps) / 100
    with sf.context(track_flags=False):
        t_untracked = timeit(lambda: [x + y for _ in range(100)], reps) / 100
    print(f"a + b, 1 element: Array {t_arr * 1e6:.1f} us vs bits with flags {t_flags * 1e6:.1f} us "
          f"(+{(t_arr - t_flags) * 1e6:.1f}); untracked Array {t_untracked * 1e6:.1f} us vs bits without "
          f"{t_bits * 1e6:.1f} us (+{(t_untracked - t_bits) * 1e6:.1f})")

    m = args.size
    A, B = (sf.asarray(rng.standard_normal((m, m)), "fp16") for _ in range(2))
    reps = max(1, args.repeat // 2)
    t_arr = timeit(lambda: A @ B, reps)
    t_flags = timeit(lambda: sf.matmul(A.bits, B.bits, "fp16", out_format="fp16", return_flags=True), reps)
    t_bits = timeit(lambda: sf.matmul(A.bits, B.bits, "fp16", out_format="fp16"), reps)
    with sf.context(track_flags=False):
        t_untracked = timeit(lambda: A @ B, reps)
    print(f"A @ B, {m}x{m} fp16: Array {t_arr:.3f} s vs bits with flags {t_flags:.3f} s ({t_arr / t_flags:.2f}x); "
          f"untracked Array {t_untracked:.3f} s vs bits without {t_bits:.3f} s ({t_untracked / t_bits:.2f}x)")


if __name__ == "__main__":
    main()
