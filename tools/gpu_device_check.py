"""Issue 25's device check: softfloat.torch's new torch paths on a GPU against the numpy
reference on the host, bit for bit, and their speed -- one prepared run of about 6 minutes.

softfloat's numpy kernels are the reference; each check reports the share of identical
outputs (all must be identical) and the path that answered.  Sections, each timed, each
catching its own exceptions (and each case inside it), run within ``--budget`` seconds
(default 360) shared between them in proportion to their weights (time a section leaves
unused goes to the later ones; a case that does not fit is recorded as skipped):

1. ``matmul``  ``softfloat.torch._accumulate.matmul_bits`` on the device against
   ``sf.matmul`` on the host: fp16, bf16, fp8_e4m3 and e4m3 x e5m2 (``b_format``); the
   accumulators "fp32", "h100" and "h100-mma"; ``block`` None and 128; inputs random,
   alignment (factors over +-20 binades for bf16, the format's range for the others),
   cancellation (adjacent and far pairs), carries, subnormals and specials (infinities
   and NaNs among random values); fp32 x fp32 with exact products and with products
   rounded into fp32 (the "fp32" and MX recipes' products) in every order; the bits with and
   without ``return_flags="swamped"`` and the swamped counts.  Small products (64 x 520 x
   256) are compared whole; big ones (256 x 1024 x 1024) on the device are compared on a
   sample of rows and columns that the reference computes (an output depends only on its
   row of A and its column of B), and two of them (bf16 "fp32", fp8 "h100") whole.
   ``fell_back`` counts the calls the torch path passed to the reference: a failure
   (every case here has a torch path).
   ``accumulate_compiled``  The accumulation's compiled kernels
   (softfloat.torch._accumulate_compiled, on by default for CUDA tensors since this
   check passed on an H200; ``--kernels`` picks tiles or fused steps), forced on: the fp32 accumulator by compiled tiles (``MODE``; fp16, bf16 -- with
   subnormal fp32 products -- and e4m3 x e5m2, ``block`` None and 128, every input kind,
   bf16 256 x 1024 x 1024 whole) and "h100"/"h100-mma" by compiled fused steps
   (``FUSED_MODE``; fp16, bf16 and e4m3 x e5m2, every kind without promotion, random and
   specials with it; fp8 256 x 1024 x 1024 whole); ``compiled_calls`` counts the compiled
   calls (none, or a compile failure, fails the case); the first case of each kernel
   has its compiles in ``device_seconds``.
2. ``speed``  G multiply-adds per second of matmul_bits on the device (synchronised,
   warm-up, median): bf16 with the "fp32" accumulator (issue target 50) and fp8_e4m3 with
   "h100" (target 10), with and without ``return_flags="swamped"``, at 256 x 1024 x 1024
   and (where the budget allows) 1024 x 4096 x 4096, each again by its compiled kernels
   (tiles for "fp32", fused steps for "h100"); torch's own bf16 matmul and the host
   reference (sf.matmul on a smaller product) beside them.
3. ``scaled``  ``softfloat.torch._scaled.scaled_encode_tensor`` on the device against
   ``sf.scaled_encode`` on the host for e4m3, e5m2 and fp4_e2m1 and every scaling (tensor
   with a given scale, current via ``amax_epsilon``, rows, blocks 1 x 128 and 128 x 128,
   MX with floor and ceil scale rounding), stochastic and toward-zero rounding, bfloat16
   and float16 inputs: bits, scales, scale_inv, amax and the five flags.  Then its time
   against a device-to-device copy of the same tensor (issue 25: nearest even within 3x,
   other modes within 10x).
4. ``emulate``  ``F.linear`` forward and backward (256 x 1024 @ 1024 x 1024, with a bias)
   under ``emulate("bf16", accumulator="fp32")`` and ``emulate("fp8", accumulator="h100")``
   with ``telemetry`` False and True: output, input and weight gradients and the telemetry
   rows on device tensors equal to those on CPU tensors (the numpy engine); the device's
   wall time beside plain torch float32 there; fp8/h100 once more with the operands'
   quantisation compiled (``_kernels_compiled.ENCODE_MODE``, off by default: its first
   call's compile time and steady time decide whether to switch it on;
   ``compile_failures`` lists kernels that fell back to eager); both recipes once more
   with the accumulation's compiled kernels; ``elementwise=True`` under "fp16" and
   "bf16-pure": two GradScaler steps of a small residual MLP on the device, the
   elementwise roundings by the torch kernels equal to the same run's with the numpy
   reference rounding (the device's float32 operations between the roundings differ from
   the CPU's in their last bits -- H200, torch 2.11: 95% of this run's values matched a
   CPU run's -- so a CPU run is recorded beside it, not required to match).
5. ``compiled``  ``softfloat.torch.quantize``'s compiled kernels
   (``softfloat.torch._kernels_compiled.MODE = "always"``), nearest even and stochastic
   into bf16 and e4m3, on 2**24 float32 values whose first part is every rounding
   boundary: the same bits as the eager kernels, ``sf.quantize`` and ``sft.quantize``;
   ``compile_failures()`` empty; time against a device-to-device copy.

Run on the GPU machine (softfloat not installed)::

    PYTHONPATH=. python3 tools/gpu_device_check.py --out $OUT

Dry run on a CPU (CPU tensors stand in for the device; emulate's device route is forced
on them, so the engine's torch kernels and matmul_bits answer there)::

    python tools/gpu_device_check.py --device cpu --quick --out /tmp/devcheck

Writes OUT/gpu_device_check.json (everything) and OUT/gpu_device_check.txt (the log and
the summary, also printed).  Exit status 0 when every comparison is identical and nothing
failed, 1 otherwise, 2 without the device.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import time
import traceback
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import softfloat as sf
import softfloat.torch as sft
from softfloat._random import key_from
from softfloat.attributes import RoundingAttributes
from softfloat.torch import _accumulate, _accumulate_compiled, _compiled, _kernels_compiled, _quantize
from softfloat.torch._accumulate import matmul_bits
from softfloat.torch._kernels import quantize_tensor
from softfloat.torch._scaled import scaled_encode_tensor

SEED = 1234
#: section -> weight of the time budget
WEIGHTS = {"matmul": 3, "accumulate_compiled": 3, "speed": 3, "scaled": 1, "emulate": 2, "compiled": 2}
_SIGNED = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


# =====================================================================================
# the run: device, sizes, budget, log
# =====================================================================================
class Run:
    def __init__(self, args):
        self.args, self.quick = args, args.quick
        self.device = torch.device(args.device)
        self.cuda = self.device.type == "cuda"
        self.t0 = time.perf_counter()
        self.end = self.t0 + args.budget
        self.lines = []
        self.cache = {}
        q = args.quick
        self.small = (6, 160, 10) if q else (64, 520, 256)          # compared whole
        self.big = (16, 256, 32) if q else (256, 1024, 1024)        # compared on a sample
        self.sample = (4, 8) if q else (16, 64)                     # rows, columns
        self.speed_shapes = [(16, 128, 64), (32, 256, 128)] if q else [(256, 1024, 1024), (1024, 4096, 4096)]
        self.cpu_speed_shape = (16, 128, 64) if q else (64, 1024, 256)
        self.scaled_shape = (130, 260) if q else (1040, 2080)
        self.scaled_timed = (256, 256) if q else (4096, 4096)
        self.emulate = ((16, 64), (48, 64)) if q else ((256, 1024), (1024, 1024))   # x, w
        self.log2n = 16 if q else 24
        self.repeat = 2 if q else 5

    def left(self) -> float:
        return self.end - time.perf_counter()

    def log(self, msg: str = "") -> None:
        line = f"[{time.perf_counter() - self.t0:6.1f}s] {msg}" if msg else ""
        print(line, flush=True)
        self.lines.append(line)

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.device)

    def timed(self, fn, repeat=None, warm=1, inner=1) -> float:
        """Median seconds of one ``fn()`` (synchronised; ``inner`` calls per sample)."""
        for _ in range(warm):
            fn()
        self.sync()
        times = []
        for _ in range(repeat or self.repeat):
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            self.sync()
            times.append((time.perf_counter() - t0) / inner)
        return statistics.median(times)

    def to_dev(self, bits) -> torch.Tensor:
        """numpy bit patterns as the torch integer of their width, on the device."""
        bits = np.ascontiguousarray(bits)
        return torch.from_numpy(bits.view(_SIGNED[bits.dtype.itemsize])).to(self.device)


class Section:
    """One section's records and deadline."""

    def __init__(self, run, name, seconds):
        self.run, self.name = run, name
        self.end = time.perf_counter() + seconds
        self.checks = []

    def left(self) -> float:
        return min(self.end, self.run.end) - time.perf_counter()

    def case(self, name, fn, *args, need=0.0):
        """Record ``fn(*args)`` (a dict) as the check ``name``; skipped when fewer than
        ``need`` seconds are left, an error record when it raises."""
        if self.left() < need:
            rec = dict(name=name, status="skipped", reason="budget")
        else:
            t0 = time.perf_counter()
            try:
                rec = dict(name=name, **fn(*args))
                rec.setdefault("status", "ok")
            except Exception as exc:  # noqa: BLE001 - report it, keep the rest
                rec = dict(name=name, status="error", error=f"{type(exc).__name__}: {exc}"[:400],
                           traceback=traceback.format_exc()[-1500:])
            rec["seconds"] = round(time.perf_counter() - t0, 3)
        self.checks.append(rec)
        if rec["status"] != "ok":
            self.run.log(f"  {rec['status'].upper()} {name}: {rec.get('error') or rec.get('reason') or _brief(rec)}")
        return rec


def _brief(rec) -> str:
    keys = ("identical", "total", "swamped_identical", "fell_back", "why")
    return ", ".join(f"{k} {rec[k]}" for k in keys if k in rec)


def _same(got, want) -> int:
    return int((np.asarray(got).reshape(-1) == np.asarray(want).reshape(-1)).sum())


def _status(*ok) -> str:
    return "ok" if all(ok) else "differ"


class FallBacks:
    """Counts the calls softfloat.torch._accumulate passes to the numpy reference
    (``calls``) and the products emulate's device route sends to matmul_bits
    (``products``: calls through the module, as softfloat.torch._engine_kernels makes them)."""

    def __enter__(self):
        self.calls, self.products = 0, 0
        self.real, self.real_bits = _accumulate._reference, _accumulate.matmul_bits

        def spy(*args, **kwargs):
            self.calls += 1
            return self.real(*args, **kwargs)

        def spy_bits(*args, **kwargs):
            self.products += 1
            return self.real_bits(*args, **kwargs)
        _accumulate._reference, _accumulate.matmul_bits = spy, spy_bits
        return self

    def __exit__(self, *exc):
        _accumulate._reference, _accumulate.matmul_bits = self.real, self.real_bits


class CompiledAccumulation:
    """The accumulation's compiled kernels (softfloat.torch._accumulate_compiled): the fp32
    chain's tiles (``kernel`` "accumulate", its MODE) or the fused adder's steps
    ("fused", its FUSED_MODE) forced on ("always"; a dry run compiles with --backend),
    counting the compiled calls of that kernel."""

    _SWITCH = {"accumulate": ("MODE", "accumulation tile"), "fused": ("FUSED_MODE", "fused adder step")}

    def __init__(self, run, kernel):
        self.run, self.kernel, self.calls = run, kernel, 0
        self.switch, self.label = self._SWITCH[kernel]

    def __enter__(self):
        self.saved = getattr(_accumulate_compiled, self.switch), _accumulate_compiled._compile, _compiled.run
        setattr(_accumulate_compiled, self.switch, "always")
        if self.run.args.backend != "inductor":
            _accumulate_compiled._compile = lambda fn: torch.compile(fn, fullgraph=True, dynamic=True,
                                                                     backend=self.run.args.backend)
        real = self.saved[2]

        def spy(name, *args):
            self.calls += name[0] == self.kernel
            return real(name, *args)
        _compiled.run = spy
        return self

    def __exit__(self, *exc):
        setattr(_accumulate_compiled, self.switch, self.saved[0])
        _accumulate_compiled._compile, _compiled.run = self.saved[1:]

    def case(self, fn, *args):
        """``fn(*args)``'s record with the compiled calls it made and the kernel's compile
        failures; "failed" where it made none or a kernel failed to compile."""
        before = self.calls
        rec = fn(*args)
        failures = {k: v[:300] for k, v in _compiled.failures().items() if self.label in k}
        rec.update(compiled_calls=self.calls - before, compile_failures=failures)
        if rec["status"] == "ok" and (failures or not rec["compiled_calls"]):
            rec["status"], rec["why"] = "failed", f"the compiled {self.label}s did not compute it"
        return rec


# =====================================================================================
# 1. matmul_bits against sf.matmul
# =====================================================================================
PAIRS = [("fp16", None), ("bf16", None), ("fp8_e4m3", None), ("fp8_e4m3", "fp8_e5m2")]
ACCUMULATORS = ["fp32", "h100", "h100-mma"]
BLOCKS = [None, 128]
#: the IEEE accumulators checked in the reverse and pairwise orders too (and the 16-bit
#: ones in sequential order with promotion blocks)
ORDER_ACCUMULATORS = ["fp32", "fp16", "bf16"]
KINDS = ["random", "alignment", "cancellation adjacent", "cancellation far", "carries", "subnormals", "specials"]
#: the compiled tiles' input kinds (by "is bf16": two bf16 subnormals' product is not
#: exact in float32, a chain the tiles do not take; a bf16 subnormal times a value about 1
#: is, and is an fp32 subnormal: Triton must not flush it)
TILE_KINDS = {False: KINDS + ["subnormal products"],
              True: [k for k in KINDS if k != "subnormals"] + ["subnormal products"]}
#: per-factor binade half-spread of the "alignment" inputs (the format's range bounds it)
ALIGN = {"fp16": 10, "bf16": 20, "fp8_e4m3": 6, "fp8_e5m2": 10}


def _fields(fmt, sign, exp_field, mant):
    s = np.asarray(sign, np.uint64) << np.uint64(fmt.bits - 1)
    e = np.asarray(exp_field, np.uint64) << np.uint64(fmt.mantissa_bits)
    return (s | e | np.asarray(mant, np.uint64)).astype(fmt.storage_dtype)


def _spread(fmt, shape, lo, hi, rng):
    """Random significands, exponents uniform in [lo, hi], random signs."""
    return _fields(fmt, rng.integers(0, 2, shape), rng.integers(lo, hi + 1, shape) + fmt.bias,
                   rng.integers(0, 1 << fmt.mantissa_bits, shape))


def _negated(fmt, bits, rng):
    """-(b moved by a few ulps): b's partner in a cancelling pair."""
    step = rng.integers(1, 4, bits.shape).astype(np.int64) * rng.choice([-1, 1], bits.shape)
    mag = np.clip((bits.astype(np.int64) & (fmt.sign_mask - 1)) + step, 1,
                  int(sf.encode(np.inf, fmt, saturate=True)))
    return (((bits.astype(np.int64) & fmt.sign_mask) ^ fmt.sign_mask) | mag).astype(fmt.storage_dtype)


def _one(kind, fmt, shape, rng, role):
    """One operand's patterns (``role`` "a" or "b") of an input kind, cancellation aside."""
    if kind == "random":
        v = rng.standard_normal(shape) * 2.0 ** rng.integers(-2, 3, shape)
        return sf.encode(v, fmt, saturate=True)
    if kind == "alignment":
        r = min(ALIGN.get(fmt.name, 6), fmt.emax - 1, -fmt.emin)
        return _spread(fmt, shape, -r, r, rng)
    if kind == "carries":  # positive, all-ones significands: the fused adder carries
        lo, hi = (0, 2) if role == "a" else (-1, 1)
        return _fields(fmt, 0, fmt.bias + rng.integers(lo, hi, shape), (1 << fmt.mantissa_bits) - 1)
    if kind == "specials":  # infinities and NaNs (a signalling one where there is room) among random values
        values = [np.nan, np.inf, -np.inf] if fmt.has_infinity else [np.nan]
        specials = [int(sf.encode(np.array(x), fmt)) for x in values]
        if fmt.has_infinity:
            specials.append(int(fmt.exponent_mask | 1))
        random = _one("random", fmt, shape, rng, role)
        return np.where(rng.random(shape) < 0.03, rng.choice(specials, shape).astype(random.dtype), random)
    if kind == "subnormal products":  # a near and below emin, b about 1: subnormal fp32 products (bf16)
        return _one("subnormals", fmt, shape, rng, "a") if role == "a" else _spread(fmt, shape, -2, 2, rng)
    if kind == "subnormals":
        sub = _fields(fmt, rng.integers(0, 2, shape), 0, rng.integers(1, 1 << fmt.mantissa_bits, shape))
        other = _spread(fmt, shape, fmt.emin, fmt.emin + 2, rng) if role == "a" else _spread(fmt, shape, -2, 2, rng)
        return np.where(rng.random(shape) < (0.5 if role == "a" else 0.25), sub, other)
    raise ValueError(f"kind: unknown input kind {kind!r}")


def operands(kind, fmt, b_fmt, shape, rng):
    """A (M, K) and B (K, N) patterns of ``fmt`` and ``b_fmt`` for one input kind."""
    M, K, N = shape
    if kind.startswith("cancellation"):  # pairs a_i b_i + a_i (-b_i nudged): K even
        a = _one("random", fmt, (M, K // 2), rng, "a")
        b = _one("random", b_fmt, (K // 2, N), rng, "b")
        b2 = _negated(b_fmt, b, rng)
        if kind == "cancellation adjacent":
            B = np.empty((K, N), b_fmt.storage_dtype)
            B[0::2], B[1::2] = b, b2
            return np.repeat(a, 2, axis=1), B
        return np.concatenate([a, a], axis=1), np.concatenate([b, b2], axis=0)
    return _one(kind, fmt, (M, K), rng, "a"), _one(kind, b_fmt, (K, N), rng, "b")


def matmul_case(run, pair, acc, block, kind, shape, seed, sample=None, order="sequential", product=None):
    fmt = sf.as_format(pair[0])
    b_fmt = fmt if pair[1] is None else sf.as_format(pair[1])
    rng = np.random.default_rng(seed)
    a, b = operands(kind, fmt, b_fmt, shape, rng)
    kw = dict(b_format=pair[1], accumulator=acc, out_format="fp32", block=block, order=order, product=product)
    ta, tb = run.to_dev(a), run.to_dev(b)
    with FallBacks() as fb:
        t0 = time.perf_counter()
        plain = matmul_bits(ta, tb, fmt, **kw)
        run.sync()
        device_s = time.perf_counter() - t0
        counted, swamped = matmul_bits(ta, tb, fmt, return_flags="swamped", **kw)
        run.sync()
    plain, counted, swamped = plain.cpu().numpy(), counted.cpu().numpy(), swamped.cpu().numpy()
    if sample is not None:
        rows = np.sort(rng.choice(shape[0], sample[0], replace=False))
        cols = np.sort(rng.choice(shape[2], sample[1], replace=False))
        a, b = a[rows], b[:, cols]
        plain, counted, swamped = (x[np.ix_(rows, cols)] for x in (plain, counted, swamped))
    t0 = time.perf_counter()
    want, want_swamped = sf.matmul(a, b, fmt, return_flags="swamped", **kw)
    reference_s = time.perf_counter() - t0
    plain, counted = plain.view(want.dtype), counted.view(want.dtype)
    total = int(want.size)
    same, same_counted, same_swamped = _same(plain, want), _same(counted, want), _same(swamped, want_swamped)
    rec = dict(fmt=fmt.name, b_format=b_fmt.name, accumulator=acc, block=block, order=order, product=product, kind=kind,
               shape=list(shape),
               sample=None if sample is None else list(sample), total=total, identical=same,
               identical_counted=same_counted, swamped_identical=same_swamped,
               share=min(same, same_counted, same_swamped) / total if total else 1.0,
               swamped_total=int(np.asarray(want_swamped).sum()), fell_back=fb.calls,
               device_seconds=round(device_s, 4), reference_seconds=round(reference_s, 4))
    if same < total:
        i = int(np.flatnonzero(plain.reshape(-1) != want.reshape(-1))[0])
        rec["first_difference"] = dict(index=i, got=hex(int(plain.reshape(-1)[i])), want=hex(int(want.reshape(-1)[i])))
    rec["status"] = _status(rec["share"] == 1.0)
    if rec["status"] == "ok" and fb.calls:
        rec["status"], rec["why"] = "failed", "the torch path passed the call to the reference"
    return rec


def section_matmul(run, sec):
    seed = 0
    for big in (False, True):
        shape = run.big if big else run.small
        kinds = ["random", "alignment"] if big else KINDS
        for pair in PAIRS:
            for acc in ACCUMULATORS:
                for block in BLOCKS:
                    for kind in kinds:
                        seed += 1
                        what = f"{pair[0]}{' x ' + pair[1] if pair[1] else ''} {acc} block={block} {kind} " \
                               f"{'x'.join(map(str, shape))}{' sampled' if big else ''}"
                        sec.case(what, matmul_case, run, pair, acc, block, kind, shape, seed,
                                 run.sample if big else None, need=2.0 if big else 0.5)
    for pair in (("fp16", None), ("fp8_e4m3", None)):  # the IEEE accumulators' other orders, fp16 and bf16 ones
        for acc in ORDER_ACCUMULATORS:
            for order in ("sequential", "reverse", "pairwise") if acc != "fp32" else ("reverse", "pairwise"):
                for block in (None, 16):
                    seed += 1
                    sec.case(f"{pair[0]} {acc} order={order} block={block} random {'x'.join(map(str, run.small))}",
                             matmul_case, run, pair, acc, block, "random", run.small, seed, None, order, need=1.0)
    for acc in ("fp16", "bf16", "fp8_e4m3"):  # infinities and NaNs in the narrow accumulators
        seed += 1
        sec.case(f"fp16 {acc} specials {'x'.join(map(str, run.small))}", matmul_case, run, ("fp16", None), acc, None,
                 "specials", run.small, seed, need=1.0)
    for order in ("sequential", "reverse", "pairwise"):  # fp32 operands, products exact or rounded into fp32
        for block in (None, 16):
            for kind in ("random", "specials"):
                for product in (None, "fp32"):
                    seed += 1
                    sec.case(f"fp32 product={product} order={order} block={block} {kind} "
                             f"{'x'.join(map(str, run.small))}", matmul_case, run, ("fp32", None), "fp32", block, kind,
                             run.small, seed, None, order, product, need=1.0)
    for pair, acc in ((("bf16", None), "fp32"), (("fp8_e4m3", None), "h100")):  # whole, unsampled
        seed += 1
        sec.case(f"{pair[0]} {acc} block=None random {'x'.join(map(str, run.big))} whole", matmul_case, run, pair,
                 acc, None, "random", run.big, seed, need=15.0)
    done = [c for c in sec.checks if c["status"] != "skipped" and "total" in c]
    fell = sorted({f"{c['fmt']}/{c['accumulator']}/{c['kind']}" for c in done if c.get("fell_back")})
    run.log(f"matmul: {sum(c['status'] == 'ok' for c in done)}/{len(sec.checks)} cases identical "
            f"(bits, bits with swamped, swamped counts); reference answered for: {', '.join(fell) or 'none'}")


def section_accumulate_compiled(run, sec):
    """The accumulation's compiled kernels, forced on, against sf.matmul (see the module
    docstring): the fp32 chain's tiles, then the fused adder's steps."""
    seed = 10_000
    kernels = run.args.kernels.split(",")
    with CompiledAccumulation(run, "accumulate") as tiles:  # the fp32 chain by compiled tiles (the first compiles)
        for pair in (("bf16", None), ("fp16", None), ("fp8_e4m3", "fp8_e5m2")) if "tiles" in kernels else ():
            for block in BLOCKS:
                for kind in TILE_KINDS[pair[0] == "bf16"]:
                    seed += 1
                    sec.case(f"{'x'.join(p for p in pair if p)} fp32 block={block} {kind} "
                             f"{'x'.join(map(str, run.small))} compiled tiles", tiles.case, matmul_case, run, pair,
                             "fp32", block, kind, run.small, seed, need=1.0 if tiles.calls else 20.0)
        seed += 1
        if "tiles" in kernels:
            sec.case(f"bf16 fp32 block=None random {'x'.join(map(str, run.big))} whole compiled tiles", tiles.case,
                     matmul_case, run, ("bf16", None), "fp32", None, "random", run.big, seed, need=15.0)
    with CompiledAccumulation(run, "fused") as steps:  # the tensor-core models' steps compiled
        for pair in (("fp16", None), ("bf16", None), ("fp8_e4m3", "fp8_e5m2")) if "fused" in kernels else ():
            for acc in ("h100", "h100-mma"):
                for block in BLOCKS:
                    for kind in KINDS if block is None else ["random", "specials"]:
                        seed += 1
                        sec.case(f"{'x'.join(p for p in pair if p)} {acc} block={block} {kind} "
                                 f"{'x'.join(map(str, run.small))} compiled steps", steps.case, matmul_case, run,
                                 pair, acc, block, kind, run.small, seed, need=1.0 if steps.calls else 20.0)
        seed += 1
        if "fused" in kernels:
            sec.case(f"fp8_e4m3 h100 block=None random {'x'.join(map(str, run.big))} whole compiled steps",
                     steps.case, matmul_case, run, ("fp8_e4m3", None), "h100", None, "random", run.big, seed,
                     need=15.0)
    done = [c for c in sec.checks if c["status"] != "skipped"]
    run.log(f"accumulate_compiled: {sum(c['status'] == 'ok' for c in done)}/{len(sec.checks)} cases identical by the "
            f"compiled kernels; tiles made {tiles.calls} calls, fused steps {steps.calls}")


# =====================================================================================
# 2. speed of matmul_bits
# =====================================================================================
SPEED = [("bf16 fp32", "bf16", "fp32", 50.0), ("fp8 h100", "fp8_e4m3", "h100", 10.0)]


def _random_bits(run, fmt, shape, seed):
    """Random normal values' patterns on the device (kept for the next case)."""
    key = (fmt, shape, seed)
    if key not in run.cache:
        if len(run.cache) > 4:
            run.cache.clear()
        rng = np.random.default_rng(seed)
        run.cache[key] = run.to_dev(sf.encode(rng.standard_normal(shape, dtype=np.float32), fmt, saturate=True))
    return run.cache[key]


def speed_case(run, fmt, acc, shape, flags, repeat):
    M, K, N = shape
    ta, tb = _random_bits(run, fmt, (M, K), 1), _random_bits(run, fmt, (K, N), 2)
    opts = dict(accumulator=acc, out_format="fp32", return_flags="swamped" if flags else False)
    with FallBacks() as fb:
        sec = run.timed(lambda: matmul_bits(ta, tb, fmt, **opts), repeat=repeat)
    rec = dict(fmt=fmt, accumulator=acc, shape=list(shape), swamped=flags, seconds_per_call=sec,
               gmacs=M * N * K / sec / 1e9, fell_back=fb.calls)
    rec["status"] = "ok" if fb.calls == 0 else "failed"
    rec["why"] = None if fb.calls == 0 else "the reference answered: this is not the device path's speed"
    return rec


def torch_mm_case(run, shape, repeat):
    M, K, N = shape
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(M, K, generator=gen).to(run.device, torch.bfloat16)
    b = torch.randn(K, N, generator=gen).to(run.device, torch.bfloat16)
    sec = run.timed(lambda: torch.mm(a, b), repeat=repeat, inner=5 if run.cuda else 1)
    return dict(shape=list(shape), seconds_per_call=sec, gmacs=M * N * K / sec / 1e9)


def reference_case(fmt, acc, shape):
    M, K, N = shape
    rng = np.random.default_rng(3)
    a = sf.encode(rng.standard_normal((M, K)), fmt, saturate=True)
    b = sf.encode(rng.standard_normal((K, N)), fmt, saturate=True)
    t0 = time.perf_counter()
    sf.matmul(a, b, fmt, accumulator=acc, out_format="fp32")
    sec = time.perf_counter() - t0
    return dict(fmt=fmt, accumulator=acc, shape=list(shape), seconds_per_call=sec, gmacs=M * N * K / sec / 1e9)


def section_speed(run, sec):
    rates = {}
    for label, fmt, acc, target in SPEED:
        sec.case(f"host reference sf.matmul {label} {'x'.join(map(str, run.cpu_speed_shape))}", reference_case,
                 fmt, acc, run.cpu_speed_shape, need=1.0)
    for i, shape in enumerate(run.speed_shapes):
        macs = shape[0] * shape[1] * shape[2]
        repeat = run.repeat if i == 0 else 3
        for label, fmt, acc, target in SPEED:
            for flags in (False, True):
                for compiled in (False, True):
                    key = (label, flags, compiled)
                    need = 1.0 if key not in rates else (repeat + 1) * macs / (rates[key] * 1e9) * 1.3 + 2.0
                    name = f"matmul_bits {label}{' swamped' if flags else ''} {'x'.join(map(str, shape))}"
                    if compiled:
                        kernel = "accumulate" if acc == "fp32" else "fused"
                        with CompiledAccumulation(run, kernel) as on:
                            rec = sec.case(name + (" compiled tiles" if acc == "fp32" else " compiled steps"),
                                           on.case, speed_case, run, fmt, acc, shape, flags, repeat,
                                           need=need if key in rates else 5.0)
                    else:
                        rec = sec.case(name, speed_case, run, fmt, acc, shape, flags, repeat, need=need)
                    if "gmacs" in rec:
                        rec["target_gmacs"] = target
                        rec["meets_target"] = bool(rec["gmacs"] >= target)
                        rates[key] = rec["gmacs"]
                        run.log(f"  {rec['name']}: {rec['gmacs']:.2f} G multiply-adds/s (target {target:g}), "
                                f"{rec['seconds_per_call'] * 1e3:.1f} ms per call")
        sec.case(f"torch.mm bf16 {'x'.join(map(str, shape))}", torch_mm_case, run, shape, repeat, need=1.0)
    run.cache.clear()


# =====================================================================================
# 3. scaled_encode_tensor against sf.scaled_encode
# =====================================================================================
SCALINGS = [("tensor scale=0.75", dict(scale=0.75)), ("tensor current", dict(amax_epsilon=1e-12)),
            ("rows", dict(scaling="rows")), ("blocks 1x128", dict(scaling="blocks", block=(1, 128))),
            ("blocks 128x128", dict(scaling="blocks", block=(128, 128))),
            ("mx floor", dict(scaling="mx", block=32, scale_rounding="floor")),
            ("mx ceil", dict(scaling="mx", block=32, scale_rounding="ceil"))]
SCALED_FORMATS = ["fp8_e4m3", "fp8_e5m2", "fp4_e2m1"]
ROUNDINGS = [("stochastic", dict(rounding="stochastic", rng=SEED)), ("toward_zero", dict(rounding="toward_zero"))]


def _scaled_data(shape, seed):
    """float32: normal x 2**[-8, 8), a zero row, a tile scaled into the subnormals, fp32
    subnormals, NaNs of both signs and an infinity."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 2.0 ** rng.integers(-8, 8, shape)).astype(np.float32)
    x[1, :] = 0.0
    x[2:, :128] *= np.float32(2.0**-60)
    flat = x.reshape(-1)
    idx = rng.choice(flat.size, size=6, replace=False)
    flat[idx[:2]] = np.float32(1e-41) * np.sign(flat[idx[:2]])
    flat[idx[2]], flat[idx[3]], flat[idx[4]] = np.nan, -np.inf, -np.nan
    return x


def _nan_times_nan(x, expected):
    """MX lanes where a NaN x meets a NaN block's NaN factor: the host's NaN there depends
    on its SIMD loops, so only "a NaN" is compared (tests/test_torch_scaled.py)."""
    if expected.scaling != "mx":
        return np.zeros(x.shape, dtype=bool)
    block = expected.block[-1]
    nan_block = np.repeat(expected.scales == 0xFF, block, axis=-1)[..., :x.shape[-1]]
    return np.isnan(x) & nan_block


def scaled_case(run, fmt, options, dtype, x):
    t = torch.from_numpy(x).to(dtype)
    host = t.to(torch.float32).numpy() if dtype == torch.bfloat16 else t.numpy()
    with np.errstate(invalid="ignore"):
        want, wflags = sf.scaled_encode(host, fmt, return_flags=True, **options)
    got, gflags = scaled_encode_tensor(t.to(run.device), fmt, return_flags=True, **options)
    bits = got.bits.cpu().numpy()
    bits = bits.view(_UNSIGNED[bits.dtype.itemsize])
    ambiguous = _nan_times_nan(host, want)
    both_nan = ambiguous & np.isnan(sf.decode(bits, fmt)) & np.isnan(sf.decode(want.bits, fmt))
    same = int(((bits == want.bits) | both_nan).sum())
    scales = np.ascontiguousarray(got.scales.cpu().numpy())
    wscales = np.ascontiguousarray(want.scales)
    scales_ok = scales.shape == wscales.shape and scales.dtype == wscales.dtype and bool(
        (scales.view(_UNSIGNED[scales.dtype.itemsize]) == wscales.view(_UNSIGNED[wscales.dtype.itemsize])).all())
    inv_ok = bool(np.array_equal(got.scale_inv.cpu().numpy().astype(np.float64), want.scale_inv, equal_nan=True))
    amax_ok = bool(np.array_equal(got.amax.cpu().numpy().astype(np.float64), want.amax, equal_nan=True))
    flags = {name: _same(getattr(gflags, name).cpu().numpy(), getattr(wflags, name)) for name in sf.FLAG_NAMES}
    total = int(want.bits.size)
    rec = dict(fmt=sf.as_format(fmt).name, dtype=str(dtype).replace("torch.", ""), total=total, identical=same,
               share=same / total, scales_identical=scales_ok, scale_inv_identical=inv_ok, amax_identical=amax_ok,
               flags_identical=flags, nan_lanes_compared_as_nan=int(ambiguous.sum()))
    rec["status"] = _status(same == total, scales_ok, inv_ok, amax_ok, all(v == total for v in flags.values()))
    return rec


def scaled_timing(run, fmt, options, x, copy):
    sec = run.timed(lambda: scaled_encode_tensor(x, fmt, **options), inner=3 if run.cuda else 1)
    mode = options.get("rounding") or "nearest_even"
    target = 3.0 if mode == "nearest_even" else 10.0
    return dict(fmt=fmt, mode=mode, seconds=sec, ratio_to_copy=sec / copy, target_ratio=target,
                meets_target=bool(sec / copy <= target), elements=int(x.numel()))


def section_scaled(run, sec):
    x = _scaled_data(run.scaled_shape, 11)
    for fmt in SCALED_FORMATS:
        for label, options in SCALINGS:
            sec.case(f"{fmt} {label} float32", scaled_case, run, fmt, options, torch.float32, x, need=0.5)
    for label, options in (SCALINGS[1], SCALINGS[3], SCALINGS[5]):
        for rname, extra in ROUNDINGS:
            sec.case(f"fp8_e4m3 {label} {rname} float32", scaled_case, run, "fp8_e4m3", {**options, **extra},
                     torch.float32, x, need=0.5)
    for dtype in (torch.bfloat16, torch.float16):
        for label, options in (SCALINGS[1], SCALINGS[3], SCALINGS[5]):
            sec.case(f"fp8_e4m3 {label} {dtype}", scaled_case, run, "fp8_e4m3", options, dtype, x, need=0.5)
    done = [c for c in sec.checks if "total" in c]
    run.log(f"scaled: {sum(c['status'] == 'ok' for c in done)}/{len(sec.checks)} cases identical "
            "(bits, scales, scale_inv, amax, flags)")
    gen = torch.Generator().manual_seed(5)
    shape = run.scaled_timed
    xt = (torch.randn(shape, generator=gen) * torch.exp2(torch.randint(-8, 8, shape, generator=gen).float()))
    xt = xt.to(run.device)
    dst = torch.empty_like(xt)
    copy = run.timed(lambda: dst.copy_(xt), repeat=10, inner=20 if run.cuda else 1)
    sec.checks.append(dict(name="device-to-device copy", status="ok", seconds=copy, elements=int(xt.numel())))
    timed = [(f, label, o) for f in ("fp8_e4m3",) for label, o in SCALINGS]
    timed += [("fp8_e4m3", f"{label} {r}", {**o, **e}) for label, o in (SCALINGS[1], SCALINGS[5]) for r, e in ROUNDINGS]
    timed += [("fp8_e5m2", SCALINGS[1][0], SCALINGS[1][1]), ("fp4_e2m1", SCALINGS[5][0], SCALINGS[5][1])]
    for fmt, label, options in timed:
        rec = sec.case(f"time {fmt} {label}", scaled_timing, run, fmt, options, xt, copy, need=1.0)
        if "ratio_to_copy" in rec:
            run.log(f"  {rec['name']}: {rec['ratio_to_copy']:.1f}x a copy (target {rec['target_ratio']:g}x)")


# =====================================================================================
# 4. emulate on the device against emulate on the CPU
# =====================================================================================
RECIPES = [("bf16", "fp32"), ("fp8", "h100")]


class _ForcedRoute:
    """On a CPU dry run: emulate's device route (its torch kernels) taken on CPU tensors,
    the elementwise roundings (``elementwise=True``) by the torch kernels too."""

    def __init__(self, force):
        self.force = force

    def __enter__(self):
        self.real, self.route = _accumulate.torch_path, _quantize._CPU_ROUTE
        if self.force:
            _accumulate.torch_path = lambda device: True
            _quantize._CPU_ROUTE = "torch"
        return self

    def __exit__(self, *exc):
        _accumulate.torch_path, _quantize._CPU_ROUTE = self.real, self.route


def _linear_step(run, recipe, acc, telemetry, device, data):
    x, w, bias, g = (t.detach().to(device, copy=True) for t in data)
    x.requires_grad_()
    w.requires_grad_()
    run.sync()
    t0 = time.perf_counter()
    with sft.emulate(recipe, accumulator=acc, telemetry=telemetry) as em:
        y = F.linear(x, w, bias)
        y.backward(g)
    run.sync()
    seconds = time.perf_counter() - t0
    rows = json.dumps([t.row() for t in em.telemetry], default=repr, sort_keys=True)
    return [y.detach().cpu(), x.grad.cpu(), w.grad.cpu()], rows, seconds


def emulate_case(run, recipe, acc, telemetry, data, may_fall_back=False):
    want, want_rows, cpu_s = _linear_step(run, recipe, acc, telemetry, "cpu", data)
    before = dict(_kernels_compiled.compile_failures())  # the operands' encode, where ENCODE_MODE says
    with FallBacks() as fb, _ForcedRoute(not run.cuda):
        got, rows, first_s = _linear_step(run, recipe, acc, telemetry, run.device, data)
        repeats = [_linear_step(run, recipe, acc, telemetry, run.device, data)[2]
                   for _ in range(1 if run.quick else 3)]
    same = {name: _same(g.view(torch.int32).numpy(), w.view(torch.int32).numpy())
            for name, g, w in zip(("output", "input_grad", "weight_grad"), got, want)}
    totals = {name: int(w.numel()) for name, w in zip(("output", "input_grad", "weight_grad"), want)}
    total = sum(totals.values())
    rec = dict(recipe=recipe, accumulator=acc, telemetry=telemetry, identical=same, total=total,
               share=sum(same.values()) / total, telemetry_identical=rows == want_rows, fell_back=fb.calls,
               device_products=fb.products,
               device_seconds=statistics.median(repeats), device_first_seconds=first_s, cpu_seconds=cpu_s,
               compile_failures={k: v[:300] for k, v in _kernels_compiled.compile_failures().items()
                                 if k not in before})
    rec["status"] = _status(rec["share"] == 1.0, rec["telemetry_identical"])
    if rec["status"] == "ok" and ((fb.calls and not may_fall_back) or not fb.products):
        rec["status"], rec["why"] = "failed", "the products did not all run on the device path"
    return rec


def _elementwise_steps(recipe, device, data, emulated=True):
    """Two GradScaler steps of a small residual MLP (linear, layer norm, GELU, cross
    entropy) under ``emulate(recipe, elementwise=True)`` (plain float32 where not
    ``emulated``) on ``device``: the losses and gradients of each step, the parameters
    after them, on the CPU."""
    torch.manual_seed(5)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.LayerNorm(64), torch.nn.Linear(64, 10)).to(device)
    x, y = (t.to(device) for t in data)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (GradScaler on the CPU)
        scaler = torch.amp.GradScaler(device.type, init_scale=2.0 ** 10)
    out = []
    with sft.emulate(recipe, elementwise=True, model=model) if emulated else contextlib.nullcontext():
        for _ in range(2):
            optimizer.zero_grad()
            h = model[0](x)
            h = h + F.gelu(model[1](h)) * 0.5
            loss = F.cross_entropy(model[2](h), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            out += [loss.detach()] + [p.grad.clone() for p in model.parameters()]
    return [t.cpu() for t in out + [p.detach() for p in model.parameters()]]


class _HostRounding:
    """emulate's elementwise roundings of device tensors by the numpy reference instead
    of the torch kernels (each tensor copied to the host, rounded by softfloat.quantize,
    copied back).  The float32 operations between the roundings (layer norm's sums,
    GELU's erf, softmax) are the device's either way, and a GPU's differ from a CPU's in
    their last bits: a device run beside a CPU run compares torch's float32 kernels too;
    a device run beside this one compares the roundings alone."""

    def __enter__(self):
        self.real = real = _quantize.values_in

        def on_host(t, fmt, options):
            route, _quantize._CPU_ROUTE = _quantize._CPU_ROUTE, "numpy"
            try:
                return real(t.detach().cpu(), fmt, options).to(t.device)
            finally:
                _quantize._CPU_ROUTE = route
        _quantize.values_in = on_host
        return self

    def __exit__(self, *exc):
        _quantize.values_in = self.real


def _share_same(got, want):
    """(identical elements, total) over lists of float32 tensors."""
    same = sum(_same(g.view(torch.int32).numpy(), w.view(torch.int32).numpy()) for g, w in zip(got, want))
    return same, sum(int(w.numel()) for w in want)


def elementwise_case(run, recipe):
    """emulate(recipe, elementwise=True) with a GradScaler on the device (elementwise
    roundings by the torch kernels, compiled on CUDA) against the same run with the
    roundings by the numpy reference (:class:`_HostRounding`); beside it, for the
    record, the CPU's run and plain float32's device-to-CPU agreement."""
    gen = torch.Generator().manual_seed(5)
    data = (torch.randn(16, 32, generator=gen), torch.randint(0, 10, (16,), generator=gen))
    on_cpu = _elementwise_steps(recipe, torch.device("cpu"), data)
    with FallBacks() as fb, _ForcedRoute(not run.cuda):
        got = _elementwise_steps(recipe, run.device, data)
    with _ForcedRoute(not run.cuda), _HostRounding():
        want = _elementwise_steps(recipe, run.device, data)
    same, total = _share_same(got, want)
    plain = _share_same(_elementwise_steps(recipe, run.device, data, emulated=False),
                        _elementwise_steps(recipe, torch.device("cpu"), data, emulated=False))
    rec = dict(recipe=recipe, elementwise=True, identical=same, total=total, share=same / total,
               identical_to_cpu_run=_share_same(got, on_cpu)[0], plain_float32_identical_to_cpu=plain[0],
               plain_float32_total=plain[1], fell_back=fb.calls, device_products=fb.products)
    rec["status"] = _status(rec["share"] == 1.0)
    if rec["status"] == "ok" and (fb.calls or not fb.products):
        rec["status"], rec["why"] = "failed", "the products did not all run on the device path"
    return rec


def plain_case(run, data):
    x, w, bias, g = (t.detach().to(run.device, copy=True) for t in data)
    x.requires_grad_()
    w.requires_grad_()

    def step():
        F.linear(x, w, bias).backward(g)
    return dict(device_seconds=run.timed(step, repeat=10 if run.cuda else 3, warm=2))


@contextlib.contextmanager
def _compiled_encode(run):
    """ENCODE_MODE on ("always": on the CPU too, a dry run compiling with --backend)."""
    saved = _kernels_compiled.ENCODE_MODE, _kernels_compiled._compile
    _kernels_compiled.ENCODE_MODE = "always"
    if run.args.backend != "inductor":
        _kernels_compiled._compile = lambda fn: torch.compile(fn, fullgraph=True, dynamic=False,
                                                              backend=run.args.backend)
    try:
        yield
    finally:
        _kernels_compiled.ENCODE_MODE, _kernels_compiled._compile = saved
        _kernels_compiled.reset()


def section_emulate(run, sec):
    (m, k), (n, _) = run.emulate
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(m, k, generator=gen) * torch.exp2(torch.randint(-6, 6, (m, 1), generator=gen).float())
    data = (x, torch.randn(n, k, generator=gen) / k ** 0.5, torch.randn(n, generator=gen),
            torch.randn(m, n, generator=gen) * 2.0 ** -10)
    plain = sec.case(f"plain torch float32 F.linear forward+backward {m}x{k} @ {k}x{n}", plain_case, run, data)
    for recipe, acc in RECIPES:
        for telemetry in (False, True):
            rec = sec.case(f"emulate({recipe!r}, accumulator={acc!r}, telemetry={telemetry}) F.linear "
                           f"{m}x{k} @ {k}x{n}", emulate_case, run, recipe, acc, telemetry, data, need=3.0)
            if "device_seconds" in rec and "device_seconds" in plain:
                rec["ratio_to_plain"] = rec["device_seconds"] / plain["device_seconds"]
                run.log(f"  {rec['name']}: identical {rec['share']:.4f}, device {rec['device_seconds'] * 1e3:.1f} ms "
                        f"({rec['ratio_to_plain']:.0f}x plain torch), cpu {rec['cpu_seconds'] * 1e3:.0f} ms")
    # the operands' quantisation by compiled kernels (ENCODE_MODE, off by default): its first
    # call (the compiles) and its steady time beside the eager kernels' above
    with _compiled_encode(run):
        rec = sec.case(f"emulate('fp8', accumulator='h100', telemetry=False) F.linear {m}x{k} @ {k}x{n}, "
                       "compiled operand encode", emulate_case, run, "fp8", "h100", False, data, need=60.0)
    if "device_seconds" in rec and "device_seconds" in plain:
        rec["ratio_to_plain"] = rec["device_seconds"] / plain["device_seconds"]
        run.log(f"  {rec['name']}: identical {rec['share']:.4f}, device {rec['device_seconds'] * 1e3:.1f} ms, "
                f"first call {rec['device_first_seconds']:.1f} s, compile failures {len(rec['compile_failures'])}")
    for recipe, acc in RECIPES:  # the accumulation by compiled kernels (fp32: tiles; h100: fused steps)
        kernel, what = ("accumulate", "tiles") if acc == "fp32" else ("fused", "steps")
        with CompiledAccumulation(run, kernel) as on:
            rec = sec.case(f"emulate({recipe!r}, accumulator={acc!r}, telemetry=False) F.linear {m}x{k} @ {k}x{n}, "
                           f"compiled accumulation {what}", on.case, emulate_case, run, recipe, acc, False, data,
                           need=60.0)
        if "device_seconds" in rec and "device_seconds" in plain:
            rec["ratio_to_plain"] = rec["device_seconds"] / plain["device_seconds"]
            run.log(f"  {rec['name']}: identical {rec['share']:.4f}, device {rec['device_seconds'] * 1e3:.1f} ms, "
                    f"first call {rec['device_first_seconds']:.1f} s, compiled calls {rec['compiled_calls']}")
    # every recipe, small, with telemetry: the whole product (quantisation included) on the
    # device, "fp32"'s rounded fp32 products and the fp16 recipes' overflowed (infinite)
    # operands included
    gen = torch.Generator().manual_seed(4)
    small = (torch.randn(16, 64, generator=gen) * 3, torch.randn(48, 64, generator=gen) / 8,
             torch.randn(48, generator=gen), torch.randn(16, 48, generator=gen) * 2.0 ** -6)
    small[0][0, :3] = torch.tensor([1e30, -1e-30, 0.0])  # saturation, underflow, a zero
    for recipe in sf.recipes.RECIPES:
        sec.case(f"emulate({recipe!r}, telemetry=True) F.linear 16x64 @ 64x48", emulate_case, run, recipe, None,
                 True, small, False, need=2.0)
    # elementwise=True: an autocast recipe's account and a pure one, a GradScaler's steps
    for recipe in ("fp16", "bf16-pure"):
        sec.case(f"emulate({recipe!r}, elementwise=True) residual MLP, 2 GradScaler steps", elementwise_case, run,
                 recipe, need=5.0)


# =====================================================================================
# 5. the compiled quantisation kernels
# =====================================================================================
COMPILED = [("bf16", "nearest_even"), ("bf16", "stochastic"), ("fp8_e4m3", "nearest_even"),
            ("fp8_e4m3", "stochastic")]
LOWS = [0, 1, 0x0FFF, 0x1000, 0x1001, 0x7FFF, 0x8000, 0x8001, 0xFFFF]


def _quantize_input(run):
    """float32: every 7th (quick: 37th) upper half with the rounding boundaries of every
    target below it, then normal x 2**[-20, 20) up to 2**log2n elements."""
    top = np.arange(0, 1 << 16, 37 if run.quick else 7, dtype=np.uint32) << np.uint32(16)
    edges = (top[:, None] | np.array(LOWS, dtype=np.uint32)[None, :]).reshape(-1).view(np.float32)
    n = 1 << run.log2n
    rng = np.random.default_rng(9)
    rest = (rng.standard_normal(n - edges.size) * 2.0 ** rng.integers(-20, 20, n - edges.size)).astype(np.float32)
    return np.concatenate([edges, rest]), edges.size


def _bits32(t):
    return t.detach().cpu().contiguous().view(torch.int32).numpy()


def compiled_case(run, fmt, mode, x_host, x, copy):
    attrs = RoundingAttributes(mode)
    stochastic = mode == "stochastic"
    key = key_from(np.random.default_rng(SEED)) if stochastic else None
    before = dict(_kernels_compiled.compile_failures())
    t0 = time.perf_counter()
    compiled = _kernels_compiled.quantize_fast(x, sf.as_format(fmt), attrs, key)
    run.sync()
    compile_s = time.perf_counter() - t0
    failures = {k: v for k, v in _kernels_compiled.compile_failures().items() if k not in before}
    eager = quantize_tensor(x, sf.as_format(fmt), attrs, key)
    public = sft.quantize(x, fmt, rounding=mode, rng=SEED if stochastic else None)
    want = sf.quantize(x_host, fmt, attributes=attrs, rng=SEED).astype(np.float32).view(np.int32)
    got, got_eager, got_public = _bits32(compiled), _bits32(eager), _bits32(public)
    total = int(want.size)
    rec = dict(fmt=fmt, mode=mode, total=total, identical=_same(got, want), eager_identical=_same(got_eager, want),
               public_identical=_same(got_public, want), compiled_vs_eager=_same(got, got_eager),
               compile_failures=failures, first_call_seconds=compile_s)
    rec["share"] = min(rec["identical"], rec["eager_identical"], rec["public_identical"]) / total
    fmt_obj = sf.as_format(fmt)
    rec["compiled_seconds"] = run.timed(lambda: _kernels_compiled.quantize_fast(x, fmt_obj, attrs, key),
                                        inner=10 if run.cuda else 1)
    rec["eager_seconds"] = run.timed(lambda: quantize_tensor(x, fmt_obj, attrs, key), inner=3 if run.cuda else 1)
    rec["ratio_to_copy"] = rec["compiled_seconds"] / copy
    rec["eager_ratio_to_copy"] = rec["eager_seconds"] / copy
    rec["target_ratio"] = 3.0 if mode == "nearest_even" else 10.0
    rec["meets_target"] = bool(rec["ratio_to_copy"] <= rec["target_ratio"])
    rec["status"] = _status(rec["share"] == 1.0)
    if failures:
        rec["status"], rec["why"] = "failed", "did not compile: " + next(iter(failures.values()))[:300]
    return rec


def section_compiled(run, sec):
    saved = _kernels_compiled.MODE, _kernels_compiled._compile
    _kernels_compiled.MODE = "always"
    if run.args.backend != "inductor":  # plumbing only (a dry run): dynamo without inductor
        _kernels_compiled._compile = lambda fn: torch.compile(fn, fullgraph=True, dynamic=False,
                                                              backend=run.args.backend)
    _kernels_compiled.reset()
    try:
        x_host, n_edges = _quantize_input(run)
        x = torch.from_numpy(x_host).to(run.device)
        dst = torch.empty_like(x)
        copy = run.timed(lambda: dst.copy_(x), repeat=10, inner=20 if run.cuda else 1)
        sec.checks.append(dict(name="device-to-device copy", status="ok", seconds=copy, elements=int(x.numel()),
                               boundary_elements=int(n_edges), backend=run.args.backend))
        for fmt, mode in COMPILED:
            rec = sec.case(f"compiled {fmt} {mode}", compiled_case, run, fmt, mode, x_host, x, copy, need=5.0)
            if "ratio_to_copy" in rec:
                run.log(f"  {rec['name']}: identical {rec['share']:.4f}; compiled {rec['ratio_to_copy']:.1f}x a copy "
                        f"(target {rec['target_ratio']:g}x), eager {rec['eager_ratio_to_copy']:.1f}x; first call "
                        f"{rec['first_call_seconds']:.1f} s")
        failures = _kernels_compiled.compile_failures()
        sec.checks.append(dict(name="compile_failures() empty", status="ok" if not failures else "failed",
                               compile_failures=failures))
    finally:
        _kernels_compiled.MODE, _kernels_compiled._compile = saved
        _kernels_compiled.reset()


# =====================================================================================
# the report
# =====================================================================================
SECTIONS = [("matmul", section_matmul), ("accumulate_compiled", section_accumulate_compiled),
            ("speed", section_speed), ("scaled", section_scaled),
            ("emulate", section_emulate), ("compiled", section_compiled)]


def _section_status(checks) -> str:
    states = {c["status"] for c in checks}
    for worst in ("error", "differ", "failed"):
        if worst in states:
            return worst
    return "ok"


def summary(run, report) -> list:
    s = report["sections"]
    out = [f"== summary: {report['device']} ({run.device}), torch {report['torch']}, "
           f"{report['seconds']:.0f} s of a {run.args.budget:.0f} s budget"]
    for name, sec in s.items():
        checks = sec.get("checks", [])
        skipped = sum(c["status"] == "skipped" for c in checks)
        bad = [c["name"] for c in checks if c["status"] not in ("ok", "skipped")]
        tail = (f"; not ok: {'; '.join(bad[:6])}" if bad else "") + (f"; {sec['error']}" if "error" in sec else "")
        out.append(f"== {name}: {sec['status']} ({len(checks)} checks, {skipped} skipped, {sec['seconds']:.0f} s)"
                   + tail)
        shares = [c["share"] for c in checks if "share" in c]
        if shares:
            out.append(f"   {len(shares)} comparisons, {sum(v == 1.0 for v in shares)} all identical, lowest share of "
                       f"identical outputs {min(shares):.6f}")
        for c in checks:
            if "gmacs" in c:
                tail = f" (target {c['target_gmacs']:g})" if "target_gmacs" in c else ""
                out.append(f"   {c['name']}: {c['gmacs']:.2f} G multiply-adds/s{tail}")
            elif "ratio_to_copy" in c:
                out.append(f"   {c['name']}: {c['ratio_to_copy']:.1f}x copy (target {c['target_ratio']:g}x)"
                           + (f", eager {c['eager_ratio_to_copy']:.1f}x" if "eager_ratio_to_copy" in c else ""))
            elif "ratio_to_plain" in c:
                out.append(f"   {c['name']}: {c['device_seconds'] * 1e3:.1f} ms, {c['ratio_to_plain']:.0f}x plain "
                           f"torch float32; cpu {c['cpu_seconds'] * 1e3:.0f} ms")
        if name == "matmul":
            fell = [c["name"] for c in checks if c.get("fell_back")]
            out.append(f"   {len(fell)} cases answered by the reference (torch path refused): {'; '.join(fell[:8])}")
    out.append(f"== overall: {'ok' if report['exit_code'] == 0 else 'NOT OK'}")
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for gpu_device_check.json and .txt")
    parser.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu for a dry run")
    parser.add_argument("--quick", action="store_true", help="small sizes (the CPU dry run)")
    parser.add_argument("--budget", type=float, default=360.0, help="seconds for all sections (default 360)")
    parser.add_argument("--sections", default=",".join(n for n, _ in SECTIONS), help="comma-separated subset")
    parser.add_argument("--kernels", default="tiles,fused",
                        help="accumulate_compiled's kernels: tiles (the fp32 chain), fused (the tensor-core "
                             "steps) or both (default)")
    parser.add_argument("--backend", default="inductor",
                        help="torch.compile backend of section 5 (inductor; eager: dynamo only, a plumbing check)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: torch's own; 1 with --device cpu, where a busy "
                             "machine's thread pool otherwise stalls small operations for seconds)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    run = Run(args)
    threads = args.threads or (1 if run.device.type == "cpu" else None)
    if threads:
        torch.set_num_threads(threads)
    if run.cuda and not torch.cuda.is_available():
        run.log("no CUDA device: run with --device cpu --quick for a dry run")
        return dict(exit_code=2, sections={})
    name = torch.cuda.get_device_name(run.device) if run.cuda else platform.processor() or "cpu"
    report = dict(device=name, torch=torch.__version__, cuda=torch.version.cuda, numpy=np.__version__,
                  softfloat=getattr(sf, "__version__", "?"), host_cpus=os.cpu_count(), quick=args.quick,
                  budget=args.budget, sections={})
    run.log(f"softfloat.torch device check on {run.device} ({name}), torch {torch.__version__}, "
            f"budget {args.budget:.0f} s{' (quick)' if args.quick else ''}")
    wanted = [(n, fn) for n, fn in SECTIONS if n in args.sections.split(",")]
    for i, (sname, fn) in enumerate(wanted):
        weights = sum(WEIGHTS[n] for n, _ in wanted[i:])
        sec = Section(run, sname, max(run.left(), 0.0) * WEIGHTS[sname] / weights)
        run.log(f"== {sname} ({sec.left():.0f} s)")
        t0 = time.perf_counter()
        record = dict()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                fn(run, sec)
            except Exception as exc:  # noqa: BLE001 - the section's set-up failed: report it
                record["error"] = f"{type(exc).__name__}: {exc}"[:400]
                record["traceback"] = traceback.format_exc()[-2000:]
                run.log(f"  ERROR {sname}: {record['error']}")
        record.update(status="error" if "error" in record else _section_status(sec.checks),
                      seconds=time.perf_counter() - t0, checks=sec.checks,
                      warnings=sorted({f"{w.category.__name__}: {str(w.message)[:200]}" for w in caught})[:10])
        report["sections"][sname] = record
        run.log(f"== {sname}: {record['status']} ({record['seconds']:.0f} s)")
        _write(run, report, complete=False)
    report["seconds"] = time.perf_counter() - run.t0
    report["exit_code"] = 0 if all(s["status"] == "ok" for s in report["sections"].values()) else 1
    for line in summary(run, report):
        run.log(line)
    _write(run, report, complete=True)
    return report


def _write(run: Run, report: dict, complete: bool) -> None:
    """Write the report and the log so far: after every section, so that a run cut off by the
    machine's time limit still leaves the sections it finished."""
    report["complete"] = complete
    with open(os.path.join(run.args.out, "gpu_device_check.json"), "w") as fh:
        json.dump(report, fh, indent=1, default=repr)
    with open(os.path.join(run.args.out, "gpu_device_check.txt"), "w") as fh:
        fh.write("\n".join(run.lines) + "\n")


if __name__ == "__main__":
    sys.exit(main()["exit_code"])
