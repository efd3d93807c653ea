"""Time float32 -> fp16 rounding of data with many exact zeros (ReLU activations and their
gradients), and the lab's O2 training step that rounds such data.

* ``quantize_small`` (the lab's rounding: :func:`softfloat._fastpaths.quantize_small`,
  the re-bias kernel of :mod:`softfloat._fastpaths._rebias` on a small array) on float32
  arrays with 0%, 50% and 100% zeros (both signs), in ns/element, against numpy's
  ``astype(np.float16)`` on the same array in the same run (numpy's cast is the
  round-to-nearest-even oracle; the ratio is the emulation's cost over the hardware
  conversion);
* the lab's O2 step (64-128-10 MLP, batch 64; :meth:`softfloat.training.Trainer.step`),
  ms per step.

``--baseline-rebias PATH`` loads another copy of ``_rebias.py`` (e.g. the version before a
change, copied aside) and times it in the same process, kernel swapped in by
monkeypatching, so both figures come from the same machine state:

    python benchmarks/bench_zero_lanes.py
    python benchmarks/bench_zero_lanes.py --baseline-rebias /tmp/rebias_orig.py

Timings on a shared machine are noisy: re-measure on a quiet one.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time

# one BLAS thread, as benchmarks/bench_training.py (the emulation is single-threaded)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402  (after the thread settings)

import softfloat as sf  # noqa: E402
from softfloat import _fastpaths, training  # noqa: E402
from softfloat._fastpaths import _plan, _rebias  # noqa: E402
from softfloat.attributes import DEFAULT_ATTRIBUTES  # noqa: E402

SIZES = (4096, 16384)  # quantize_small's arrays: up to one block (BLOCK_SIZE)


def _decode_into(bits, fmt, out):
    out[...] = sf.decode(bits, fmt, out.dtype)


def _use_kernel(kernel) -> None:
    """Make the plans take ``kernel`` as the re-bias kernel (fresh plans)."""
    _rebias.rebias = kernel
    _plan.plan.cache_clear()
    _plan._last = (None, None, None, None)


def _load_rebias(path: str):
    """Another copy of _rebias.py as a module of the same package (its relative imports work)."""
    spec = importlib.util.spec_from_file_location("softfloat._fastpaths._rebias_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def zero_array(n: int, share: float, seed: int = 0) -> np.ndarray:
    """n float32 values, ``share`` of them +0 or -0 (random places), the rest normal-range
    fp16 values' neighbourhood (|x| log-uniform in [2**-10, 2**10])."""
    rng = np.random.default_rng(seed)
    x = (np.exp2(rng.uniform(-10, 10, n)) * rng.choice([-1.0, 1.0], n)).astype(np.float32)
    zeros = rng.choice(n, int(round(share * n)), replace=False)
    x[zeros] = rng.choice(np.array([0.0, -0.0], dtype=np.float32), zeros.size)
    return x


def time_per_call(fn, repeat: int, inner: int) -> float:
    """Median seconds per call over ``repeat`` runs of ``inner`` calls (after a warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times)


def bench_quantize_small(kernels, repeat: int) -> None:
    """Per array: every kernel and numpy's cast timed in turn, ``repeat`` rounds; the best
    time of each (the least disturbed by other work on the machine), their ratio, and
    the median of the ratios of neighbours (which holds when the machine's speed drifts)."""
    rest = lambda xs: sf.quantize(xs, sf.fp16)  # noqa: E731
    for n in SIZES:
        for share in (0.0, 0.5, 1.0):
            x = zero_array(n, share)
            want = x.astype(np.float16).view(np.uint16)

            def ours():
                return _fastpaths.quantize_small(x, sf.fp16, DEFAULT_ATTRIBUTES, _decode_into, rest)

            def cast():
                return x.astype(np.float16)

            inner = max(1, 250_000 // n)
            times = {label: ([], [], []) for label, _ in kernels}  # ours, numpy's, ratio
            for _ in range(repeat):
                for label, kernel in kernels:
                    _use_kernel(kernel)
                    got = ours()
                    assert got is not None and np.array_equal(got.astype(np.float16).view(np.uint16), want), \
                        "not numpy's float16 cast"
                    a = time_per_call(ours, 1, inner)
                    b = time_per_call(cast, 1, inner)
                    for lst, v in zip(times[label], (a, b, a / b)):
                        lst.append(v)
            for label, (a, b, r) in times.items():
                print(f"  [{label:9s}] quantize_small fp16, n={n:6d}, {share:4.0%} zeros: "
                      f"{min(a) / n * 1e9:6.3f} ns/element; numpy astype(float16) {min(b) / n * 1e9:6.3f} "
                      f"ns/element; ratio {min(a) / min(b):5.2f}x (of the best; median of pairs "
                      f"{statistics.median(r):5.2f}x)")


class _Clock:
    """Wraps quantize_small (the lab calls it through the module): its time and calls."""

    def __init__(self):
        self.seconds, self.calls, self.real = 0.0, 0, _fastpaths.quantize_small

    def __call__(self, *args):
        t0 = time.perf_counter()
        try:
            return self.real(*args)
        finally:
            self.seconds += time.perf_counter() - t0
            self.calls += 1


def bench_step(kernels, repeat: int) -> None:
    """The O2 step under every kernel, timed in turn (``repeat`` rounds of 5 steps each),
    and the time the step spends in quantize_small (the best of the rounds, per step)."""
    data = training.data.load()
    x, y = data.x_train[:64], data.y_train[:64]
    for telemetry in (False, True):
        trainers = {label: training.Trainer("O2", seed=0, hidden=128, batch_size=64, telemetry=telemetry)
                    for label, _ in kernels}
        times = {label: [] for label, _ in kernels}
        inside = {label: [] for label, _ in kernels}
        for _ in range(repeat):
            for label, kernel in kernels:
                _use_kernel(kernel)
                trainer = trainers[label]
                times[label].append(time_per_call(lambda: trainer.step(x, y), 1, 5))
                clock = _Clock()
                _fastpaths.quantize_small = clock
                try:
                    for _ in range(5):
                        trainer.step(x, y)
                finally:
                    _fastpaths.quantize_small = clock.real
                inside[label].append(clock.seconds / 5)
        for label, ts in times.items():
            print(f"  [{label:9s}] O2 step 64-128-10 batch 64, telemetry {'on ' if telemetry else 'off'}: "
                  f"{statistics.median(ts) * 1e3:6.3f} ms (median), {min(ts) * 1e3:6.3f} ms (best); "
                  f"in quantize_small {min(inside[label]) * 1e3:6.3f} ms ({clock.calls // 5} calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--baseline-rebias", metavar="PATH", help="another _rebias.py to time beside this tree's")
    args = parser.parse_args()
    current = _rebias.rebias
    kernels = [("this tree", current)]
    if args.baseline_rebias:
        kernels.insert(0, ("baseline", _load_rebias(args.baseline_rebias).rebias))
    try:
        bench_quantize_small(kernels, args.repeat)
        bench_step(kernels, args.repeat)
    finally:
        _use_kernel(current)


if __name__ == "__main__":
    main()
