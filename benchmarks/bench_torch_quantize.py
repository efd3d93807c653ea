"""Time softfloat.torch.quantize's two CPU routes on the same float32 tensor, same run.

    numpy    softfloat.quantize on a numpy view of the tensor (its fast paths and blocks)
    torch    the torch kernels of softfloat.torch._kernels (elementwise integer ops)
    copy     torch's own tensor.clone(), the floor

for 2**22 elements (``--log2n``) into fp16, bf16 and e4m3 in nearest_even and stochastic
(``--modes``).  Output: ns per element and the ratios; both routes give the same bits
(checked here too).  softfloat.torch.quantize takes, on the CPU, the route measured faster
here (see _CPU_ROUTE in softfloat/torch/_quantize.py).

    python benchmarks/bench_torch_quantize.py
    python benchmarks/bench_torch_quantize.py --log2n 20 --repeat 2
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import softfloat as sf
from softfloat._random import key_from
from softfloat.attributes import RoundingAttributes
from softfloat.torch._kernels import quantize_tensor
from timing import timeit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=22)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--formats", default="fp16,bf16,e4m3")
    parser.add_argument("--modes", default="nearest_even,stochastic,toward_zero")
    args = parser.parse_args()
    n = 1 << args.log2n
    gen = torch.Generator().manual_seed(0)
    t = torch.randn(n, generator=gen) * torch.exp2(torch.randint(-20, 20, (n,), generator=gen).float())
    x = t.numpy()
    copy = timeit(lambda: t.clone(), args.repeat)
    print(f"float32 -> format, {n} elements, torch threads {torch.get_num_threads()}; "
          f"copy {copy / n * 1e9:.2f} ns/element")
    print(f"{'format':8s} {'mode':14s} {'numpy ns/el':>12s} {'torch ns/el':>12s} {'torch/numpy':>12s} "
          f"{'torch/copy':>11s} same")
    for name in args.formats.split(","):
        fmt = sf.as_format(name)
        for mode in args.modes.split(","):
            attrs = RoundingAttributes(mode)
            key = key_from(np.random.default_rng(1)) if mode == "stochastic" else None
            ref = sf.quantize(x, fmt, attributes=attrs, rng=1)
            got = quantize_tensor(t, fmt, attrs, key).numpy()
            same = np.array_equal(ref.view(np.uint32), got.view(np.uint32))
            tn = timeit(lambda: sf.quantize(x, fmt, attributes=attrs, rng=1), args.repeat)
            tt = timeit(lambda: quantize_tensor(t, fmt, attrs, key), args.repeat)
            print(f"{name:8s} {mode:14s} {tn / n * 1e9:12.2f} {tt / n * 1e9:12.2f} {tt / tn:12.2f} "
                  f"{tt / copy:11.1f} {same}")


if __name__ == "__main__":
    main()
