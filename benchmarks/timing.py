"""Shared by the benchmark scripts: median or least wall time and wide-range test data."""

from __future__ import annotations

import statistics
import time

import numpy as np


def timeit(fn, repeat: int) -> float:
    """Median seconds of ``repeat`` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def best_of(fn, repeat: int) -> float:
    """Least seconds of ``repeat`` calls after one warm-up call: on a machine shared
    with other work the least is the run that was not preempted."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def us_per_call(fn, repeat: int, budget: float = 0.02, summary=min) -> float:
    """Microseconds per call, ``summary`` (least by default) of ``repeat`` samples, each a
    batch of calls of about ``budget`` seconds (the batch sized by one timed call after a
    warm-up): for calls of a few us, where one call is below the clock's resolution."""
    fn()
    t0 = time.perf_counter()
    fn()
    batch = max(1, int(budget / max(time.perf_counter() - t0, 1e-7)))
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        samples.append((time.perf_counter() - t0) / batch)
    return summary(samples) * 1e6


def log_uniform(lo: float, hi: float, n: int, seed: int) -> np.ndarray:
    """n float64 values with log2|x| uniform in [log2 lo, log2 hi] and random signs."""
    rng = np.random.default_rng(seed)
    return np.exp2(rng.uniform(np.log2(lo), np.log2(hi), n)) * rng.choice([-1.0, 1.0], n)
