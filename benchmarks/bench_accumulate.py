"""Time softfloat's sums and matrix products against numpy's own, same run, same data.

Matrix products: 512 x 512 @ 512 x 512 fp16 inputs (standard normal), beside numpy's own
float16 ``matmul`` (the speed reference the issue names), numpy float32 ``matmul`` (BLAS)
and ml_dtypes' bfloat16 ``matmul`` where installed, for

    fp32 accumulator, sequential, nearest_even    (the native float32 fast path)
    fp32 accumulator, toward_zero                 (the general, correctly rounded path)
    fp32 accumulator, stochastic                  (fp16 products: each step's float64 sum
                                                   rounded by bits, softfloat.accumulate.
                                                   _odd_stochastic)
    fp16 and bf16 accumulators, nearest_even      (each step rounded once: float64 sums
                                                   rounded again, exact steps for ties)
    fp32 x fp32 into fp32, bf16 into bf16         (likewise), and the "fp32" recipe's
                                                   products rounded into fp32
    pairwise order, fp32 accumulator
    the "h100" and "v100" tensor-core models, and FP8 (e4m3) on "h100"
    block=128 promotion with the h100 FP8 model (DeepSeek-V3's recipe)
    the h100 FP8 model with flags, e4m3 x e5m2, and the via-fp16 path ("h100-mma")
    bf16 inputs on "h100", and into fp32 with flags (the swamped counts)

Stochastic running sums (``--sr-size``, default 256): fp32 x fp32 into fp32, fp16 into
fp16, bf16 into bf16, the fast steps beside the general path (every fast path off) in
the same run (least of ``--repeat`` times), bits checked equal.

Sums: 2**24 fp16 values in an fp16 accumulator (numpy's float16 running sum: the native
path) and in fp32, beside ``np.copyto`` of the same array and numpy's ``np.sum``.

Output: seconds, ns per multiply-add (or per element), and the ratio to numpy.

    python benchmarks/bench_accumulate.py
    python benchmarks/bench_accumulate.py --size 256 --repeat 1
"""

from __future__ import annotations

import argparse

import numpy as np

import softfloat as sf
from softfloat import _fastpaths
from timing import best_of, timeit

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - optional
    ml_dtypes = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512, help="M = K = N of the matrix products")
    parser.add_argument("--sum-log2", type=int, default=24, help="log2 of the sum's length")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sr-size", type=int, default=256, help="M = K = N of the stochastic rows")
    args = parser.parse_args()
    n = args.size
    rng = np.random.default_rng(0)
    a16 = rng.standard_normal((n, n)).astype(np.float16)
    b16 = rng.standard_normal((n, n)).astype(np.float16)
    a, b = a16.view(np.uint16), b16.view(np.uint16)
    macs = n ** 3

    ref = timeit(lambda: np.matmul(a16, b16), args.repeat)
    print(f"matmul {n}x{n} @ {n}x{n}, fp16 inputs; reference numpy float16 matmul {ref:.3f} s "
          f"({ref / macs * 1e9:.2f} ns/MAC)")
    a32, b32 = a16.astype(np.float32), b16.astype(np.float32)
    rows = [("numpy float32 matmul (BLAS)", lambda: np.matmul(a32, b32))]
    if ml_dtypes is not None:
        abf, bbf = a16.astype(ml_dtypes.bfloat16), b16.astype(ml_dtypes.bfloat16)
        rows.append(("ml_dtypes bfloat16 matmul", lambda: np.matmul(abf, bbf)))
    e4 = sf.encode(a16, "fp8_e4m3"), sf.encode(b16, "fp8_e4m3")
    e5 = sf.encode(b16, "fp8_e5m2")
    bf = sf.encode(a16, "bf16"), sf.encode(b16, "bf16")
    f32 = sf.encode(rng.standard_normal((n, n)), "fp32"), sf.encode(rng.standard_normal((n, n)), "fp32")
    rows += [
        ("fp32 acc, sequential, nearest_even", lambda: sf.matmul(a, b, "fp16")),
        ("fp32 acc, pairwise, nearest_even", lambda: sf.matmul(a, b, "fp16", order="pairwise")),
        ("fp32 acc, toward_zero", lambda: sf.matmul(a, b, "fp16", rounding="toward_zero")),
        ("fp32 acc, stochastic", lambda: sf.matmul(a, b, "fp16", rounding="stochastic", rng=0)),
        ("fp32 acc, nearest_even, return_flags", lambda: sf.matmul(a, b, "fp16", return_flags=True)),
        ("fp16 acc, nearest_even", lambda: sf.matmul(a, b, "fp16", accumulator="fp16")),
        ("bf16 acc, nearest_even", lambda: sf.matmul(a, b, "fp16", accumulator="bf16")),
        ("h100 model (N=16, F=25)", lambda: sf.matmul(a, b, "fp16", accumulator="h100")),
        ("v100 model (N=4, F=23)", lambda: sf.matmul(a, b, "fp16", accumulator="v100")),
        ("fp8 e4m3 inputs, h100 model", lambda: sf.matmul(*e4, "fp8_e4m3", accumulator="h100")),
        ("fp8 e4m3, h100, block=128 promotion", lambda: sf.matmul(*e4, "fp8_e4m3", accumulator="h100",
                                                                  block=128)),
        ("fp8 e4m3, h100, return_flags", lambda: sf.matmul(*e4, "fp8_e4m3", accumulator="h100",
                                                           return_flags=True)),
        ("fp8 e4m3 x e5m2, h100", lambda: sf.matmul(e4[0], e5, "fp8_e4m3", b_format="fp8_e5m2",
                                                     accumulator="h100")),
        ("fp8 e4m3, h100-mma (via fp16)", lambda: sf.matmul(*e4, "fp8_e4m3", accumulator="h100-mma")),
        ("bf16 inputs, h100 model", lambda: sf.matmul(*bf, "bf16", accumulator="h100")),
        ("bf16 inputs, fp32 acc, return_flags", lambda: sf.matmul(*bf, "bf16", return_flags=True)),
        ("fp16 acc, nearest_even, return_flags", lambda: sf.matmul(a, b, "fp16", accumulator="fp16",
                                                                   return_flags=True)),
        ("bf16 inputs, bf16 acc", lambda: sf.matmul(*bf, "bf16", accumulator="bf16")),
        ("fp32 inputs, fp32 acc", lambda: sf.matmul(*f32, "fp32")),
        ("fp32 inputs, fp32 acc, return_flags", lambda: sf.matmul(*f32, "fp32", return_flags=True)),
        ("fp32 inputs, product='fp32', swamped", lambda: sf.matmul(*f32, "fp32", product="fp32",
                                                                    return_flags="swamped")),
    ]
    print(f"{'':40s} {'s':>8s} {'ns/MAC':>8s} {'x numpy f16':>12s}")
    for label, fn in rows:
        t = timeit(fn, args.repeat)
        print(f"{label:40s} {t:8.3f} {t / macs * 1e9:8.2f} {t / ref:12.2f}")

    stochastic_rows(args.sr_size, args.repeat, rng)

    m = 1 << args.sum_log2
    x16 = rng.standard_normal(m).astype(np.float16)
    x = x16.view(np.uint16)
    dst = np.empty_like(x16)
    copy = timeit(lambda: np.copyto(dst, x16), args.repeat)
    npsum = timeit(lambda: np.sum(x16), args.repeat)
    print(f"\nsum of 2**{args.sum_log2} fp16 values; np.copyto {copy / m * 1e9:.2f} ns/element, "
          f"numpy float16 np.sum (pairwise, float32 inside) {npsum / m * 1e9:.2f} ns/element")
    print(f"{'':40s} {'s':>8s} {'ns/elem':>8s} {'x copy':>8s}")
    for label, fn in [
        ("fp16 acc, sequential, nearest_even", lambda: sf.sum(x, "fp16")),
        ("fp32 acc, sequential, nearest_even", lambda: sf.sum(x, "fp16", accumulator="fp32")),
        ("fp16 acc, pairwise, nearest_even", lambda: sf.sum(x, "fp16", order="pairwise")),
        ("fp16 acc, pairwise, toward_zero", lambda: sf.sum(x, "fp16", order="pairwise", rounding="toward_zero")),
    ]:
        t = timeit(fn, args.repeat)
        print(f"{label:40s} {t:8.3f} {t / m * 1e9:8.2f} {t / copy:8.1f}")


def stochastic_rows(n: int, repeat: int, rng) -> None:
    """Stochastic rounding of every running sum, fast steps against the general path."""
    macs = n ** 3

    def general(fn):
        def call():
            _fastpaths.ENABLED = False
            try:
                return fn()
            finally:
                _fastpaths.ENABLED = True
        return call

    print(f"\nstochastic running sums, {n}x{n} @ {n}x{n}, inputs in the accumulator's format")
    print(f"{'':40s} {'general':>10s} {'fast':>10s} {'speed-up':>9s}   (ns/MAC)")
    for fmt in ("fp32", "fp16", "bf16"):
        a = sf.encode(rng.standard_normal((n, n)), fmt)
        b = sf.encode(rng.standard_normal((n, n)), fmt)
        fast = (lambda: sf.matmul(a, b, fmt, accumulator=fmt, rounding="stochastic", rng=0))
        assert np.array_equal(fast(), general(fast)())
        t_general = best_of(general(fast), repeat)  # (least times: the machine may be shared)
        t_fast = best_of(fast, repeat)
        print(f"{fmt + ' x ' + fmt + ' into ' + fmt:40s} {t_general / macs * 1e9:10.2f} "
              f"{t_fast / macs * 1e9:10.2f} {t_general / t_fast:9.1f}")


if __name__ == "__main__":
    main()
