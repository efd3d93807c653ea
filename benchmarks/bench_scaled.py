"""Time softfloat's scaled_encode / scaled_decode against numpy + ml_dtypes and a plain copy.

The input is a float32 (rows, 4096) matrix of normal values spread over 2**-20..2**20
(per-row magnitudes differ, as activations do).  Every figure in a table comes from the
same run on the same data:

    np.copyto                         the floor: read and write once
    numpy + ml_dtypes (torchao-like)  amax, fp32 scale, x * scale, clip, astype(float8)
                                      (tensor scaling only; needs ml_dtypes)
    softfloat scaled_encode           tensor, rows, blocks (1, 128), blocks (128, 128),
                                      mx (floor and ceil), fp32 and exact products
    softfloat scaled_decode

Output: ns/element (the median of --repeat runs) and the ratio to the np.copyto floor.

    python benchmarks/bench_scaled.py                 # 2**22 elements
    python benchmarks/bench_scaled.py --n 20 --repeat 5
"""

from __future__ import annotations

import argparse

import numpy as np

import softfloat as sf
from timing import timeit

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - optional
    ml_dtypes = None

CASES = [
    ("tensor", dict()),
    ("tensor, exact product", dict(multiply="exact")),
    ("tensor, stochastic", dict(rounding="stochastic", rng=0)),
    ("rows", dict(scaling="rows")),
    ("blocks (1, 128)", dict(scaling="blocks", block=(1, 128))),
    ("blocks (128, 128)", dict(scaling="blocks", block=(128, 128))),
    ("mx (OCP floor)", dict(scaling="mx")),
    ("mx (TE ceil)", dict(scaling="mx", scale_rounding="ceil")),
]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=22, help="log2 of the number of elements (default 22)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--format", default="e4m3")
    args = ap.parse_args(argv)
    n = 1 << args.n
    cols = 4096
    rows = max(n // cols, 1)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((rows, cols)) * np.exp2(rng.integers(-20, 21, (rows, 1)))).astype(np.float32)
    fmt = sf.as_format(args.format)
    size = x.size

    out = np.empty_like(x)
    floor = timeit(lambda: np.copyto(out, x), args.repeat)
    rows_out = [("np.copyto", floor)]

    if ml_dtypes is not None and fmt.name in ("fp8_e4m3", "fp8_e5m2"):
        target = {"fp8_e4m3": ml_dtypes.float8_e4m3fn, "fp8_e5m2": ml_dtypes.float8_e5m2}[fmt.name]
        m = np.float32(fmt.max_finite)

        def torchao_like():
            scale = m / np.max(np.abs(x))
            return np.clip(x * scale, -m, m).astype(target)
        rows_out.append(("numpy + ml_dtypes (tensor)", timeit(torchao_like, args.repeat)))

    for name, kw in CASES:
        kw = dict(kw)
        rounding = kw.pop("rounding", "nearest_even")
        rows_out.append((f"scaled_encode {name}", timeit(lambda: sf.scaled_encode(x, fmt, rounding, **kw),
                                                          args.repeat)))
    st = sf.scaled_encode(x, fmt, scaling="mx")
    rows_out.append(("scaled_decode mx", timeit(lambda: sf.scaled_decode(st), args.repeat)))

    print(f"{size} float32 elements ({rows} x {cols}) -> {fmt.name}")
    print(f"{'':36s} {'ns/elem':>9s} {'x copy':>8s}")
    for name, t in rows_out:
        print(f"{name:36s} {t / size * 1e9:9.2f} {t / floor:8.1f}")


if __name__ == "__main__":
    main()
