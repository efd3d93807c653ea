"""Time one training step of the lab's MLP under O2 against the same step in plain float32 numpy.

    default  64-128-10,  batch 64   (target: O2 at most 50x the float32 step)
    wide     64-1024-10, batch 256  (target: at most 15x)

Both steps do the same work: forward (two Linear layers, ReLU), softmax cross-entropy,
backward (weight and bias gradients of both layers, the hidden-activation gradient),
SGD with momentum.  The float32 step is numpy's own arithmetic and BLAS, no rounding
emulation; the O2 step is :meth:`softfloat.training.Trainer.step` (fp16 products with fp32
accumulation through softfloat.matmul, dynamic loss scaling, fp32 master weights), with
telemetry on and off.  Then a cProfile summary of the O2 step: where the time goes.

Output: ms per step and the ratio, the median of ``--repeat`` pairs (a few float32 steps,
then one O2 step, in turn: the ratio of neighbours holds when the machine's speed drifts).
Timings on a shared machine are noisy: re-measure on a quiet one.

    python benchmarks/bench_training.py
    python benchmarks/bench_training.py --repeat 5 --no-profile
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import time

# one BLAS thread: the emulation is single-threaded, and on a shared 2-core machine a
# multithreaded BLAS oversubscribes the cores (the float32 baseline then slows 100x)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402  (after the thread settings)

from softfloat import training  # noqa: E402


class Float32Step:
    """The same MLP step in plain float32 numpy (the baseline)."""

    def __init__(self, sizes, seed=0):
        rng = np.random.default_rng(seed)
        self.params = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            bound = 1 / np.sqrt(fan_in)
            self.params += [rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32),
                            rng.uniform(-bound, bound, fan_out).astype(np.float32)]
        self.velocity = [np.zeros_like(p) for p in self.params]

    def step(self, x, y, lr=np.float32(0.1), mu=np.float32(0.9)):
        w1, b1, w2, b2 = self.params
        z1 = x @ w1 + b1
        h = np.maximum(z1, 0)
        z2 = h @ w2 + b2
        e = np.exp(z2 - z2.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        n = len(y)
        loss = -np.log(p[np.arange(n), y]).mean()
        p[np.arange(n), y] -= 1
        d2 = p / np.float32(n)
        dh = (d2 @ w2.T) * (z1 > 0)
        grads = [x.T @ dh, dh.sum(0), h.T @ d2, d2.sum(0)]
        for i, g in enumerate(grads):
            self.velocity[i] = mu * self.velocity[i] + g
            self.params[i] -= lr * self.velocity[i]
        return loss


def paired(baseline, step, repeat: int, inner: int):
    """Median seconds of ``baseline`` (the mean of ``inner`` calls) and of ``step``, timed
    in turn, and the median of their ratios pair by pair: a ratio taken from neighbouring
    measurements holds when the machine's speed drifts during the run."""
    baseline()
    step()
    times_a, times_b, ratios = [], [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            baseline()
        t1 = time.perf_counter()
        step()
        t2 = time.perf_counter()
        times_a.append((t1 - t0) / inner)
        times_b.append(t2 - t1)
        ratios.append(times_b[-1] / times_a[-1])
    return statistics.median(times_a), statistics.median(times_b), statistics.median(ratios)


def bench(hidden: int, batch: int, repeat: int, profile: bool) -> None:
    data = training.data.load()
    x = data.x_train[:batch]
    y = data.y_train[:batch]
    base = Float32Step((64, hidden, 10))
    inner = 20 if hidden <= 128 else 3
    parts = []
    for telemetry in (True, False):
        trainer = training.Trainer("O2", seed=0, hidden=hidden, batch_size=batch, telemetry=telemetry)
        t_np, t_o2, ratio = paired(lambda: base.step(x, y), lambda: trainer.step(x, y), repeat, inner)
        parts.append(f"{'with' if telemetry else 'without'} telemetry: O2 {t_o2 * 1e3:.2f} ms against "
                     f"float32 {t_np * 1e3:.3f} ms, {ratio:.0f}x")
    print(f"64-{hidden}-10, batch {batch} (median of {repeat} pairs): " + "; ".join(parts))
    if profile:
        trainer = training.Trainer("O2", seed=0, hidden=hidden, batch_size=batch, telemetry=True)
        trainer.step(x, y)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(repeat):
            trainer.step(x, y)
        prof.disable()
        _where_the_time_goes(pstats.Stats(prof))


#: (label, test on "file:function") in order; the first match takes a function's own time
_GROUPS = (
    ("accumulate: the k-loop kernel (numpy adds of exact products)",
     lambda f, fn: "accumulate/_fast" in f and fn in ("_outer_chain", "_running_sums", "chain")),
    ("accumulate: per-call work (operand layout and decoding, storing results as bits)",
     lambda f, fn: any(k in f for k in ("softfloat/accumulate", "softfloat/_encode", "softfloat/_decode",
                                        "softfloat/_round", "softfloat/_validate", "softfloat/formats",
                                        "softfloat/_options", "softfloat/flags"))),
    ("lab telemetry (per-tensor counts, exponent histograms)",
     lambda f, fn: "training/telemetry" in f or fn in ("of", "__iadd__", "shares")),
    ("lab roundings and conversions (round_to, bits_of, values_of, Arith)",
     lambda f, fn: "training/_numerics" in f),
    ("lab model, loss, optimizer, loop", lambda f, fn: "softfloat/training" in f),
    ("numpy and Python internals called from numpy's own Python code", lambda f, fn: True),
)


def _group(filename: str, fn: str) -> str:
    return next(label for label, test in _GROUPS if test(filename, fn))


def _where_the_time_goes(stats: pstats.Stats) -> None:
    """Own time per group of functions, as shares of the profiled total; the time of a
    built-in or numpy-internal function is charged to the groups of its callers."""
    totals = dict.fromkeys((label for label, _ in _GROUPS), 0.0)
    grand = 0.0
    for (filename, _line, fn), (_cc, _nc, tottime, _ct, callers) in stats.stats.items():
        grand += tottime
        internal = filename == "~" or "site-packages/numpy" in filename or "/lib/python3" in filename
        if internal and callers:
            for (cf, _cl, cfn), caller_stats in callers.items():
                totals[_group(cf, cfn)] += caller_stats[2]  # this function's own time under that caller
        else:
            totals[_group(filename, fn)] += tottime
    print("  where the O2 step's time goes (cProfile, own time; numpy built-ins charged to their callers):")
    for label, t in totals.items():
        print(f"    {100 * t / grand:5.1f}%  {label}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args()
    bench(128, 64, args.repeat, not args.no_profile)
    bench(1024, 256, max(args.repeat // 3, 1), not args.no_profile)


if __name__ == "__main__":
    main()
