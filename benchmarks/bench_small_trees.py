"""Time small-Array calls under two (or more) source trees, alternating, best of N.

The calls users' numpy programs make in loops, on fp16, bf16, fp32 and fp8_e4m3 Arrays:
``x + y``, ``x.sum()``, ``x.mean()`` (8 elements), ``A @ A`` (8x8), and on 1,000
elements ``z.sum()``, ``z @ w`` (a dot product into one output: in fp32 every step
rounds), ``np.cumsum(z)``, ``A2 @ w`` (two outputs), and the bit-level ``sf.vecdot``
rounding upward and ``sf.sum`` toward zero; ``M2 @ v2`` and ``M4 @ v4`` (2x2 and 4x4
matrix-vector products, an RK4 step of a small system) and ``e @ e``, ``e.sum()`` (empty
slices, as Gauss-Seidel loops make them).  Each round runs one child process per tree
(``PYTHONPATH=<tree>``), the trees in turn, so a busy spell of the machine hits both;
every cell is the least microseconds per call over the rounds (each child: the least
over ``--repeat`` batches of about 20 ms).  To compare a branch with the commit it
started from:

    git -C <repo> archive <base commit> | tar -x -C /tmp/base
    python benchmarks/bench_small_trees.py --trees /tmp/base . --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

FORMATS = ("fp16", "bf16", "fp32", "fp8_e4m3")
CASES = ("x + y", "x.sum()", "x.mean()", "A @ A", "z.sum()", "z @ w", "np.cumsum(z)", "A2 @ w",
         "sf.vecdot(z.bits, w.bits, f, rounding='upward')", "sf.sum(z.bits, f, rounding='toward_zero')",
         "M2 @ v2", "M4 @ v4", "e @ e", "e.sum()")


def _child(repeat: int) -> dict:
    """{format + case: least us per call} in this process (the tree on PYTHONPATH)."""
    import numpy as np

    import softfloat as sf

    rng = np.random.default_rng(1)
    found = {"softfloat": sf.__file__}
    for fmt in FORMATS:
        data = {"x": sf.asarray(np.linspace(-3, 5, 8), fmt), "np": np,
                "A": sf.asarray(rng.standard_normal((8, 8)), fmt),
                "z": sf.asarray(rng.standard_normal(1000), fmt), "w": sf.asarray(rng.standard_normal(1000), fmt)}
        data["y"] = sf.asarray(np.linspace(-2, 6, 8), fmt)
        data.update(f=fmt, sf=sf, A2=sf.asarray(rng.standard_normal((2, 1000)), fmt), e=data["x"][:0])
        data.update({f"{n}{k}": sf.asarray(rng.standard_normal(shape), fmt)
                     for k in (2, 4) for n, shape in (("M", (k, k)), ("v", (k,)))})
        for case in CASES:
            code = compile(case, case, "eval")
            for _ in range(20):  # (warm: caches, and lookup tables that fill once calls pay for them)
                eval(code, data)
            t0 = time.perf_counter()
            eval(code, data)
            batch = max(1, int(0.02 / max(time.perf_counter() - t0, 1e-7)))
            best = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                for _ in range(batch):
                    eval(code, data)
                best = min(best, (time.perf_counter() - t0) / batch)
            found[f"{fmt} {case}"] = best * 1e6
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", nargs="+", default=["."], help="source trees to import softfloat from")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5, help="batches per child")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.repeat)))
        return
    trees = [os.path.abspath(t) for t in args.trees]
    best: list[dict] = [{} for _ in trees]
    for _ in range(args.rounds):
        for i, tree in enumerate(trees):
            env = dict(os.environ, PYTHONPATH=tree, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
            out = subprocess.run([sys.executable, __file__, "--child", "--repeat", str(args.repeat)], env=env,
                                 check=True, capture_output=True, text=True).stdout
            for key, value in json.loads(out).items():
                best[i][key] = value if key == "softfloat" else min(value, best[i].get(key, float("inf")))
    for i, tree in enumerate(trees):
        print(f"tree {i}: {tree} (softfloat from {best[i]['softfloat']})")
    print(f"{'us per call (least of ' + str(args.rounds) + ' rounds)':<34}" + "".join(f"{'tree ' + str(i):>12}"
                                                                                 for i in range(len(trees))))
    for key in best[0]:
        if key != "softfloat":
            print(f"{key:<34}" + "".join(f"{b[key]:>12.1f}" for b in best))


if __name__ == "__main__":
    main()
