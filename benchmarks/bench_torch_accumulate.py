"""The accumulation models in torch operations (softfloat.torch._accumulate.matmul_bits)
against the numpy reference (softfloat.matmul), same operands, same run: G multiply-adds
per second, ns per multiply-add and the ratio, on the CPU and, where CUDA is present, on
CUDA (whose bits are also compared with the CPU's).  Each case runs once more by the
accumulation's compiled kernels (softfloat.torch._accumulate_compiled, forced on: the
fp32 accumulator's "tiles", the tensor-core models' fused "steps"; their first call --
the compiles -- timed apart).

    python benchmarks/bench_torch_accumulate.py [M K N]     (default 256 1024 1024)
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

import softfloat as sf
from softfloat.torch import _accumulate_compiled
from softfloat.torch._accumulate import matmul_bits

CASES = [("bf16", None, "fp32"), ("fp16", None, "fp32"), ("fp8_e4m3", None, "fp32"),
         ("bf16", None, "h100"), ("fp8_e4m3", None, "h100"), ("fp8_e4m3", "fp8_e5m2", "h100")]


def _best(fn, repeat=2):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(M=256, K=1024, N=1024):
    rng = np.random.default_rng(0)
    macs = M * K * N
    print(f"{M}x{K} @ {K}x{N}: {macs / 1e6:.0f} M multiply-adds; torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads")
    print(f"{'operands':22s} {'accumulator':11s} {'path':10s} {'seconds':>8s} {'G MAC/s':>8s} {'ns/MAC':>8s} "
          f"{'vs numpy':>8s}")
    for fmt, b_fmt, acc in CASES:
        a = sf.encode(rng.standard_normal((M, K)), fmt, saturate=True)
        b = sf.encode(rng.standard_normal((K, N)), b_fmt or fmt, saturate=True)
        t_np, ref = _best(lambda: sf.matmul(a, b, fmt, b_format=b_fmt, accumulator=acc), repeat=1)
        rows = [("numpy", t_np)]
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        switch, kernels = ("MODE", "tiles") if acc == "fp32" else ("FUSED_MODE", "steps")
        for dev, compiled in [(d, c) for d in devices for c in (False, True)]:
            ta = torch.from_numpy(a.astype(np.int64)).to(dev)
            tb = torch.from_numpy(b.astype(np.int64)).to(dev)
            setattr(_accumulate_compiled, switch, "always" if compiled else "never")
            first, _ = _best(lambda: matmul_bits(ta[:8, :64], tb[:64, :8], fmt, b_format=b_fmt, accumulator=acc),
                             repeat=1)  # tables, warm-up (and the compiles)
            t, got = _best(lambda: matmul_bits(ta, tb, fmt, b_format=b_fmt, accumulator=acc),
                           repeat=2 if compiled else 1)
            setattr(_accumulate_compiled, switch, "never")
            same = np.array_equal(got.cpu().numpy().view(ref.dtype), ref)
            path = f"{kernels if compiled else 'torch'} {dev}"
            if compiled:
                print(f"  ({path}: first call {first:.1f} s, the compiles)")
            rows.append((path + ("" if same else " DIFFERS"), t))
        name = fmt if b_fmt is None else f"{fmt} x {b_fmt}"
        for path, t in rows:
            print(f"{name:22s} {acc:11s} {path:10s} {t:8.3f} {macs / t / 1e9:8.3f} {t / macs * 1e9:8.3f} "
                  f"{t_np / t:7.2f}x")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:4]))
