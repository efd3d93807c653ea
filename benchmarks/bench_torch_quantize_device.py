"""Time softfloat.torch.quantize on a GPU against a device-to-device copy, same run.

    quantize   softfloat.torch.quantize(t, fmt, rounding=mode) on the tensor's device
               (on CUDA with Triton one compiled kernel per format and attributes,
               softfloat.torch._kernels_compiled; its first call, the compile, is not timed)
    copy       t.clone(), the floor the issue's targets are stated against (nearest even
               within 3x of it, every other mode within 10x)

for float32 tensors of 2**24, 2**26 and 2**28 elements (``--log2n``) into bf16, fp16,
e4m3 and e5m2 (``--formats``) in nearest_even, stochastic and toward_zero (``--modes``).
Prints ns per element and the ratio to the copy (median of ``--repeat`` synchronised
calls); the smallest size's bits are checked against softfloat.quantize on the host.

    PYTHONPATH=. python3 benchmarks/bench_torch_quantize_device.py            # on a GPU
    python benchmarks/bench_torch_quantize_device.py --device cpu --log2n 16  # dry run
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import softfloat as sf
import softfloat.torch as sft
from timing import timeit


def _median_seconds(fn, repeat: int, sync) -> float:
    """timing.timeit of ``fn`` with the device synchronised after each call."""
    return timeit(lambda: (fn(), sync()), repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--log2n", default="24,26,28", help="comma-separated sizes, log2 of the elements")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--formats", default="bf16,fp16,e4m3,e5m2")
    parser.add_argument("--modes", default="nearest_even,stochastic,toward_zero")
    args = parser.parse_args()
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"softfloat.torch.quantize on {name}, torch {torch.__version__}")
    print(f"{'n':>10s} {'format':6s} {'mode':13s} {'ns/el':>8s} {'copy ns/el':>10s} {'x copy':>7s} same-as-host")
    for i, log2n in enumerate(int(v) for v in args.log2n.split(",")):
        n = 1 << log2n
        gen = torch.Generator().manual_seed(log2n)
        host = torch.randn(n, generator=gen) * torch.exp2(torch.randint(-20, 20, (n,), generator=gen).float())
        t = host.to(device)
        copy = _median_seconds(lambda: t.clone(), args.repeat, sync)
        for fmt in args.formats.split(","):
            for mode in args.modes.split(","):
                q = _median_seconds(lambda: sft.quantize(t, fmt, rounding=mode, rng=1), args.repeat, sync)
                same = "-"
                if i == 0:
                    got = sft.quantize(t, fmt, rounding=mode, rng=1).cpu().numpy()
                    want = sf.quantize(host.numpy(), fmt, rounding=mode, rng=1)
                    same = str(np.array_equal(got.view(np.uint32), want.view(np.uint32)))
                print(f"{n:10d} {fmt:6s} {mode:13s} {q / n * 1e9:8.4f} {copy / n * 1e9:10.4f} "
                      f"{q / copy:7.2f} {same}", flush=True)


if __name__ == "__main__":
    main()
