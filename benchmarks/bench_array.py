"""Time the Array layer against the bit-level operations it calls, same run, same data.

    a + b     on 2**20 fp16 elements and on 1-element Arrays, beside ``sf.add`` on the bits
              (with and without flags: an Array operation always computes them, for the
              context's sticky counts)
    A @ B     on 512 x 512 fp16 Arrays, beside ``sf.matmul`` on the bits (with flags: the
              general path; without: the native float32 fast path)

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
    print(f"a + b, 2**20 fp16: Array {t_arr / n * 1e9:.2f} ns/element; bits with flags "
          f"{t_flags / n * 1e9:.2f} ({t_arr / t_flags:.2f}x); bits without {t_bits / n * 1e9:.2f} "
          f"({t_arr / t_bits:.2f}x)")

    x, y = sf.asarray([1.5], "fp16"), sf.asarray([2.25], "fp16")
    reps = 50 * args.repeat
    t_arr = timeit(lambda: [x + y for _ in range(100)], reps) / 100
    t_flags = timeit(lambda: [sf.add(x.bits, y.bits, "fp16", return_flags=True) for _ in range(100)], reps) / 100
    t_bits = timeit(lambda: [sf.add(x.bits, y.bits, "fp16") for _ in range(100)], reps) / 100
    print(f"a + b, 1 element: Array {t_arr * 1e6:.1f} us; bits with flags {t_flags * 1e6:.1f} us "
          f"(+{(t_arr - t_flags) * 1e6:.1f}); bits without {t_bits * 1e6:.1f} us (+{(t_arr - t_bits) * 1e6:.1f})")

    m = args.size
    A, B = (sf.asarray(rng.standard_normal((m, m)), "fp16") for _ in range(2))
    reps = max(1, args.repeat // 2)
    t_arr = timeit(lambda: A @ B, reps)
    t_flags = timeit(lambda: sf.matmul(A.bits, B.bits, "fp16", out_format="fp16", return_flags=True), reps)
    t_bits = timeit(lambda: sf.matmul(A.bits, B.bits, "fp16", out_format="fp16"), reps)
    print(f"A @ B, {m}x{m} fp16: Array {t_arr:.3f} s; bits with flags {t_flags:.3f} s ({t_arr / t_flags:.2f}x); "
          f"bits without (native fp32 path) {t_bits:.3f} s ({t_arr / t_bits:.1f}x)")


if __name__ == "__main__":
    main()
