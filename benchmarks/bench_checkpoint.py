"""Time ``softfloat quantize`` on a .safetensors checkpoint, and the zero-copy exchange.

Writes a checkpoint of float32 (or bfloat16) tensors to a temporary folder, then times,
in the same run:

    np.copyto                     the floor: read and write each tensor once
    ml_dtypes astype              ml_dtypes' cast of each tensor into the target dtype
    softfloat quantize (CLI)      whole file -> file, with and without --scaling tensor

as ns/element over all elements, and the ratio to the floor.  Also times bits_of /
to_ml_dtypes / to_torch on one tensor, which are views and should cost microseconds
whatever the size.

    python benchmarks/bench_checkpoint.py                 # 8 tensors of 2**21, fp8_e4m3
    python benchmarks/bench_checkpoint.py --tensors 4 --n 22 --format bf16 --source bf16
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import tempfile

import ml_dtypes
import numpy as np

import softfloat as sf
from softfloat.cli import main
from timing import timeit

ML = {"bf16": ml_dtypes.bfloat16, "fp8_e4m3": ml_dtypes.float8_e4m3fn,
      "fp8_e5m2": ml_dtypes.float8_e5m2, "fp16": np.float16}


def run_cli(*argv):
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([str(a) for a in argv]) == 0


def bench(args):
    from safetensors.numpy import save_file

    n = 1 << args.n
    rng = np.random.default_rng(0)
    src_type = np.float32 if args.source == "fp32" else ml_dtypes.bfloat16
    tensors = {f"layer{i}.weight": (rng.standard_normal(n) * 0.02).astype(np.float32).astype(src_type)
               for i in range(args.tensors)}
    total = n * args.tensors
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "model.safetensors")
        save_file(tensors, src)
        out = os.path.join(tmp, "out.safetensors")
        dst = np.empty(n, dtype=src_type)

        def copy():
            for t in tensors.values():
                np.copyto(dst, t)

        def ml_cast():
            for t in tensors.values():
                t.astype(ML[args.format])

        rows = [("np.copyto", timeit(copy, args.repeat)),
                ("ml_dtypes astype", timeit(ml_cast, args.repeat)),
                ("quantize CLI", timeit(lambda: run_cli("quantize", src, out, "-f", args.format), args.repeat)),
                ("quantize CLI --scaling tensor",
                 timeit(lambda: run_cli("quantize", src, out, "-f", args.format, "--scaling", "tensor"),
                        args.repeat))]
        floor = rows[0][1]
        print(f"{args.tensors} tensors of 2**{args.n} {args.source} -> {args.format} "
              f"({total} elements; medians of {args.repeat})")
        for name, t in rows:
            print(f"  {name:32s} {t / total * 1e9:8.2f} ns/element  {t / floor:7.1f}x copy")
    one = tensors["layer0.weight"]
    bits, fmt = sf.bits_of(one)
    views = [("bits_of", lambda: sf.bits_of(one)), ("to_ml_dtypes", lambda: sf.to_ml_dtypes(bits, fmt))]
    try:
        import torch  # noqa: F401

        views.append(("to_torch", lambda: sf.to_torch(bits, fmt)))
    except ImportError:
        pass
    for name, fn in views:
        print(f"  {name:32s} {timeit(fn, 50) * 1e6:8.2f} us per call on 2**{args.n} elements (a view)")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=21, help="log2 of the elements per tensor")
    p.add_argument("--tensors", type=int, default=8)
    p.add_argument("--format", default="fp8_e4m3", choices=sorted(ML))
    p.add_argument("--source", default="fp32", choices=("fp32", "bf16"))
    p.add_argument("--repeat", type=int, default=3)
    bench(p.parse_args())
