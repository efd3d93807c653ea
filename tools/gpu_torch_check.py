"""softfloat's torch quantisation kernels on a GPU: the same bits as numpy, and their speed.

One prepared run (about 2 minutes on an H100/H200 with ``--compile``; needs torch with
CUDA, numpy and softfloat, not gmpy2):

1. Bits, eager kernels.  For every format x every rounding mode (stochastic with a fixed
   seed) x {default, saturate + flush-to-zero, flush-to-zero with tininess before}: the
   kernels on the device, the same kernels on the CPU, and the numpy reference
   softfloat.quantize, on the same data (float32 patterns with every rounding boundary
   of the targets, every fp16 and bf16 pattern, float64 patterns; float16/bfloat16
   tensors too).  Counts of differing elements are reported; all must be 0.
2. Speed (and bits) per mode.  float32 -> bf16 / e4m3 / e5m2 / fp16 of 2**24 elements in
   every mode, eager and (``--compile``) compiled -- the route softfloat.torch.quantize
   takes on CUDA (softfloat.torch._kernels_compiled: one fused kernel per format and
   attributes) -- against a device-to-device copy of the same tensor (torch.cuda.Event
   timing, warm-up, median of repeats); issue 25's targets are 3x the copy for
   nearest_even and 10x for the other modes.  Each timed kernel's bits are checked
   against numpy on the float32 boundary data of step 1 and against the eager kernels
   on the timed tensor.  A kernel that fails to compile is reported and runs eager.
3. emulate on the device.  F.linear forward, dgrad and wgrad under emulate("bf16",
   accumulator="fp32") and emulate("fp8", accumulator="h100"), the same operands on the
   device and on the CPU: the same bits (only the emulated products are compared: torch's
   own float32 elementwise operations differ between CUDA and the CPU).

    PYTHONPATH=. python3 tools/gpu_torch_check.py --out $OUT --compile
    PYTHONPATH=. python3 tools/gpu_torch_check.py --out /tmp/x --device cpu --compile  # dry run

Writes ``gpu_torch_check.json`` and ``gpu_torch_check.txt`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import warnings

import numpy as np
import torch
import torch.nn.functional as F

import softfloat as sf
import softfloat.torch as sft
from softfloat._random import key_from
from softfloat.attributes import RoundingAttributes
from softfloat.torch import _kernels_compiled
from softfloat.torch._kernels import quantize_tensor

FORMATS = [sf.fp64, sf.fp32, sf.tf32, sf.fp16, sf.bf16, sf.fp8_e4m3, sf.fp8_e5m2, sf.fp8_e4m3fnuz,
           sf.fp8_e5m2fnuz, sf.fp6_e3m2, sf.fp6_e2m3, sf.fp4_e2m1, sf.Format(9, 5), sf.Format(11, 30),
           sf.Format(10, 52, "fn")]
MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "stochastic", "odd"]
OPTIONS = {"default": (False, True, "after"), "sat+ftz": (True, False, "after"),
           "ftz-before": (False, False, "before")}
SEED = 1234
LOWS = [0, 1, 0x0FFF, 0x1000, 0x1001, 0x7FFF, 0x8000, 0x8001, 0xFFFF]


def _data():
    """float32, float64, float16 and bfloat16 test arrays (numpy; bf16 as float32 values)."""
    top = np.arange(0, 1 << 16, 7, dtype=np.uint32) << np.uint32(16)
    f32 = (top[:, None] | np.array(LOWS, dtype=np.uint32)[None, :]).reshape(-1).view(np.float32)
    halves = np.arange(1 << 16, dtype=np.uint16)
    rng = np.random.default_rng(5)
    with np.errstate(over="ignore"):
        f64 = np.concatenate([rng.integers(0, 2**64 - 1, 20000, dtype=np.uint64, endpoint=True).view(np.float64),
                              rng.standard_normal(20000) * 2.0 ** rng.integers(-1080, 1030, 20000)])
    return {"float32": f32, "float64": f64, "float16": halves.view(np.float16),
            "bfloat16": (halves.astype(np.uint32) << np.uint32(16)).view(np.float32)}


def _tensor(name, x, device):
    if name == "bfloat16":  # by the bits: torch's float32 -> bfloat16 cast drops NaN signs
        return torch.from_numpy((x.view(np.uint32) >> np.uint32(16)).astype(np.uint16).view(np.int16)) \
            .view(torch.bfloat16).to(device)
    return torch.from_numpy(x).to(device)


def _bits(t):
    a = t.cpu()
    a = a.float() if a.dtype == torch.bfloat16 else a  # bf16 -> float32 is exact, NaNs too
    a = a.numpy()
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def check_bits(device, formats, log):
    """(cases, failing cases) over formats x modes x options x input dtypes (the three
    option sets for nearest_even and stochastic, the default for the other modes)."""
    data = _data()
    cases, failures = 0, []
    for fmt in formats:
        for mode in MODES:
            for label, (sat, sub, tin) in OPTIONS.items():
                if label != "default" and mode not in ("nearest_even", "stochastic"):
                    continue
                attrs = RoundingAttributes(mode, saturate=sat, subnormals=sub, tininess=tin)
                for name, x in data.items():
                    key = key_from(np.random.default_rng(SEED)) if mode == "stochastic" else None
                    ref = sf.quantize(x, fmt, attributes=attrs, rng=SEED)
                    if name == "bfloat16":
                        ref = ref.astype(np.float32) if ref.dtype == np.float32 else ref
                    on_dev = quantize_tensor(_tensor(name, x, device), fmt, attrs, key)
                    on_cpu = quantize_tensor(_tensor(name, x, "cpu"), fmt, attrs, key)
                    ref_bits = ref.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[ref.dtype.itemsize])
                    dev_bits, cpu_bits = _bits(on_dev), _bits(on_cpu)
                    bad = (int((dev_bits != ref_bits).sum()), int((cpu_bits != ref_bits).sum()),
                           int((dev_bits != cpu_bits).sum()))
                    cases += 1
                    if any(bad):
                        failures.append((fmt.name, mode, label, name) + bad)
                        log(f"  DIFFER {fmt.name} {mode} {label} {name}: device/numpy {bad[0]}, "
                            f"cpu/numpy {bad[1]}, device/cpu {bad[2]}")
    return cases, failures


def _timer(device):
    """A function timing ``fn`` (seconds, median of ``repeat`` after ``warm`` calls)."""
    cuda = torch.device(device).type == "cuda"

    def time_it(fn, repeat=10, warm=3):
        for _ in range(warm):
            fn()
        times = []
        for _ in range(repeat):
            if cuda:
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                stop.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(stop) / 1e3)
            else:
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
        return statistics.median(times)
    return time_it


def _numpy_bits(ref):
    return ref.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[ref.dtype.itemsize])


def _compiled(x, fmt, attrs, key):
    """(result, None) by the compiled route, or (None, why) where it fell back."""
    before = set(_kernels_compiled.compile_failures())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = _kernels_compiled.quantize_fast(x, fmt, attrs, key)
    new = {k: v for k, v in _kernels_compiled.compile_failures().items() if k not in before}
    return (None, next(iter(new.values()))) if new else (out, None)


def time_kernels(device, log2n, use_compile, formats, log):
    """Rows of (format, mode, route, seconds, ratio to copy, bits vs numpy, bits vs eager)."""
    n = 1 << log2n
    gen = torch.Generator().manual_seed(0)
    x = (torch.randn(n, generator=gen) * torch.exp2(torch.randint(-20, 20, (n,), generator=gen).float())).to(device)
    check = _data()["float32"]
    check_dev = torch.from_numpy(check).to(device)
    dst = torch.empty_like(x)
    time_it = _timer(device)
    copy = time_it(lambda: dst.copy_(x))
    log(f"\nspeed: float32 -> format, {n} elements on {device}; device-to-device copy "
        f"{copy * 1e6:.1f} us ({2 * 4 * n / copy / 1e9:.0f} GB/s); x copy (target: 3 nearest_even, 10 others); "
        f"bits: = numpy on {check.size} boundary patterns / = eager on the timed tensor")
    _kernels_compiled.MODE = "always"  # the CPU dry run tries the compiler too
    rows, failed = [], {}
    for name in formats:
        fmt = sf.as_format(name)
        line = []
        for mode in MODES:
            attrs = RoundingAttributes(mode)
            key = key_from(np.random.default_rng(SEED)) if mode == "stochastic" else None
            ref = _numpy_bits(sf.quantize(check, fmt, attributes=attrs, rng=SEED))
            eager = quantize_tensor(x, fmt, attrs, key)
            routes = {"eager": lambda: quantize_tensor(x, fmt, attrs, key)}
            t0 = time.perf_counter()
            if use_compile and (len(failed) < 2 or any(r["route"] == "compiled" for r in rows)):
                got, why = _compiled(check_dev, fmt, attrs, key)  # (two failures, no success: no compiler)
                if why is None:
                    routes["compiled"] = lambda: _kernels_compiled.quantize_fast(x, fmt, attrs, key)
                else:
                    failed[f"{name} {mode}"] = why
            compile_s = time.perf_counter() - t0
            cells = []
            for route, fn in routes.items():
                on_check = (quantize_tensor(check_dev, fmt, attrs, key) if route == "eager" else got)
                numpy_same = bool((_bits(on_check) == ref).all())
                eager_same = bool(torch.equal(fn().view(torch.int32), eager.view(torch.int32)))
                sec = time_it(fn)
                rows.append(dict(format=name, mode=mode, route=route, seconds=sec, ratio=sec / copy,
                                 target=3 if mode == "nearest_even" else 10, numpy_bits=numpy_same,
                                 eager_bits=eager_same, compile_seconds=compile_s if route == "compiled" else None))
                ok = "=" if numpy_same and eager_same else "DIFFER"
                cells.append(f"{route[0]}{sec / copy:6.1f}{ok}")
            line.append(f"{mode[:11]:11s} " + " ".join(cells))
        log(f"{name:5s} " + " | ".join(line[:4]))
        log(f"{'':5s} " + " | ".join(line[4:]))
    for what, why in failed.items():
        log(f"  compile failed ({what}): {why.splitlines()[0][:160]}")
    if failed:
        log(f"  {len(failed)} kernels did not compile: they ran eager (same bits)")
    _kernels_compiled.MODE = "auto"
    return copy, rows, failed


def check_emulate(device, log):
    """F.linear forward/dgrad/wgrad under two recipes, the same operands on ``device`` and
    on the CPU: {case: differing elements}."""
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(48, 256, generator=gen) * torch.exp2(torch.randint(-6, 6, (48, 1), generator=gen).float())
    w = torch.randn(96, 256, generator=gen) / 16
    b = torch.randn(96, generator=gen)
    g = torch.randn(48, 96, generator=gen) * 2.0 ** -10
    results = {}
    for recipe, acc in (("bf16", "fp32"), ("fp8", "h100")):
        outs = {}
        for dev in (device, "cpu"):
            xs = x.detach().to(dev, copy=True).requires_grad_()
            ws = w.detach().to(dev, copy=True).requires_grad_()
            with sft.emulate(recipe, accumulator=acc):
                y = F.linear(xs, ws, b.to(dev))
                y.backward(g.to(dev))
            outs[dev] = [t.detach().cpu() for t in (y, xs.grad, ws.grad)]
        for label, a, c in zip(("fprop", "dgrad", "wgrad"), outs[device], outs["cpu"]):
            bad = int((a.view(torch.int32) != c.view(torch.int32)).sum())
            results[f"{recipe}/{acc} {label}"] = bad
    log("\nemulate, F.linear 48x256 @ 256x96 + bias, device vs cpu (differing elements): "
        + ", ".join(f"{k} {v}" for k, v in results.items()))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for gpu_torch_check.json")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--log2n", type=int, default=None, help="elements timed: 2**log2n (24 on CUDA, 18 on CPU)")
    parser.add_argument("--compile", action="store_true", help="also time the kernels under torch.compile")
    parser.add_argument("--skip-bits", action="store_true")
    parser.add_argument("--formats", default=None, help="comma-separated subset of the formats checked")
    parser.add_argument("--time-formats", default="bf16,e4m3,e5m2,fp16", help="formats timed in every mode")
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("no CUDA device: run with --device cpu for a dry run")
        return 2
    os.makedirs(args.out, exist_ok=True)
    lines = []

    def log(line):
        print(line, flush=True)
        lines.append(line)

    device_name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu"
    log(f"softfloat torch kernels on {args.device} ({device_name}); torch {torch.__version__}")
    t0 = time.perf_counter()
    formats = FORMATS if args.formats is None else [sf.as_format(f) for f in args.formats.split(",")]
    cases, failures = (0, []) if args.skip_bits else check_bits(args.device, formats, log)
    log(f"bits: {cases} cases (formats x modes x options x input dtypes), {len(failures)} differ "
        f"({time.perf_counter() - t0:.0f} s)")
    log2n = args.log2n if args.log2n is not None else (24 if args.device.startswith("cuda") else 18)
    t0 = time.perf_counter()
    copy, rows, not_compiled = time_kernels(args.device, log2n, args.compile, args.time_formats.split(","), log)
    log(f"({time.perf_counter() - t0:.0f} s)")
    t0 = time.perf_counter()
    try:
        emulated = check_emulate(args.device, log)
    except Exception as exc:  # report, keep the rest of the run
        emulated = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        log(f"emulate check failed: {emulated['error']}")
    log(f"({time.perf_counter() - t0:.0f} s)")
    bad_rows = [r for r in rows if not (r["numpy_bits"] and r["eager_bits"])]
    bad_emulate = sum(v for v in emulated.values() if isinstance(v, int)) + ("error" in emulated)
    log(f"summary: eager cases differing {len(failures)}/{cases}; timed kernels differing {len(bad_rows)}/"
        f"{len(rows)}; compile failures {len(not_compiled)}; emulate differing elements {bad_emulate}")
    result = dict(device=device_name, torch=torch.__version__, cases=cases, failures=failures,
                  copy_seconds=copy, timings=rows, log2n=log2n, compile_failures=not_compiled,
                  emulate=emulated)
    with open(os.path.join(args.out, "gpu_torch_check.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    with open(os.path.join(args.out, "gpu_torch_check.txt"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return 1 if failures or bad_rows or bad_emulate else 0


if __name__ == "__main__":
    sys.exit(main())
