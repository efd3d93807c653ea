"""Time divmod, //, % and np.fmod on small and 1,000-element Arrays beside a / b (us per call).

divmod(x, y) of 8 fp16 elements cost about 350 us before round 5 of the numpy program
probe: floor_divide and remainder each decoded the operands, took fmod and rounded on
their own, and remainder sent every lane through the format's addition.  This script
prints, in one run, each of them on 8 and 1,000 elements of mixed signs (so remainder
adds the divisor to about half the lanes) in fp16, bf16 and fp32, beside ``x / y`` (the
baseline they should stay near) and numpy float16's and float32's divmod.  To compare
two trees, run it under each (``PYTHONPATH=<tree>``), alternating, and keep each cell's
minimum.

    python benchmarks/bench_divmod.py --repeat 9
"""

from __future__ import annotations

import argparse

import numpy as np

import softfloat as sf
from timing import us_per_call as per_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"softfloat {sf.__version__} ({sf.__file__}), numpy {np.__version__}; minimum of {args.repeat}")
    rng = np.random.default_rng(5)
    for n in (8, 1000):
        v, w = rng.standard_normal(n) * 10, rng.standard_normal(n) + 0.1
        for fmt in ("fp16", "bf16", "fp32"):
            x, y = sf.asarray(v, fmt), sf.asarray(w, fmt)
            cases = (("divmod(x, y)", lambda: divmod(x, y)), ("x // y", lambda: x // y), ("x % y", lambda: x % y),
                     ("np.fmod(x, y)", lambda: np.fmod(x, y)), ("x / y (baseline)", lambda: x / y))
            for name, fn in cases:
                print(f"{n:5d} {fmt:6s} {name:18s} {per_call(fn, args.repeat):9.1f} us")
        for dtype in (np.float16, np.float32):
            h, g = v.astype(dtype), w.astype(dtype)
            print(f"{n:5d} {np.dtype(dtype).name:7s} {'numpy divmod':17s} {per_call(lambda: np.divmod(h, g), args.repeat):9.1f} us")


if __name__ == "__main__":
    main()
