"""Time np.nanmean / np.nanvar / np.nanstd on small Arrays beside np.mean / np.var (us per call).

The nan- statistics of a handful of values cost about 1 ms before round 4 of the numpy
program probe: the NaNs went through the deviations and squares.  This script prints, in
one run, each nan- function on 6 fp16 values with one NaN and on 5 without, beside np.mean
and np.var of the 5 (the baseline the nan- functions should stay near) and numpy float16's
own nanvar.  To compare two trees, run it under each (``PYTHONPATH=<tree>``), alternating,
and keep each cell's minimum.

    python benchmarks/bench_nan_statistics.py --repeat 9
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
    h = np.array([1.5, 2.25, 3.1, -0.7, 4.4, np.nan], dtype=np.float16)
    for fmt in ("fp16", "bf16", "fp8_e4m3"):
        with_nan, without = sf.asarray(h, fmt), sf.asarray(h[:5], fmt)
        cases = (("np.nanmean, 1 NaN in 6", lambda: np.nanmean(with_nan)), ("np.nanmean, no NaN", lambda: np.nanmean(without)),
                 ("np.nanvar, 1 NaN in 6", lambda: np.nanvar(with_nan)), ("np.nanvar, no NaN", lambda: np.nanvar(without)),
                 ("np.nanstd, 1 NaN in 6", lambda: np.nanstd(with_nan)),
                 ("np.mean (baseline)", lambda: np.mean(without)), ("np.var (baseline)", lambda: np.var(without)))
        for name, fn in cases:
            print(f"{fmt:9s} {name:24s} {per_call(fn, args.repeat):9.1f} us")
    print(f"{'float16':9s} {'numpy nanvar, 1 NaN in 6':24s} {per_call(lambda: np.nanvar(h), args.repeat):9.1f} us")


if __name__ == "__main__":
    main()
