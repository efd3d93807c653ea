"""The owed hardware cross-check of issue 25: softfloat's numpy reference against a real GPU.

softfloat is the reference; the GPU is what is measured.  Every check reports the share of
identical bit patterns and, for mismatches, up to 5 examples (inputs, both results in hex,
the difference in ulps: GPU minus softfloat, counted through zero).  Sections, run in the
order 1, 3, 2 (the NaN checks before any hand-written kernel touches the device), each
timed and caught on its own, the whole within ``--budget`` seconds (default 210; about
1.5-2 minutes on an H100/H200 host with 16 cores):

1. ``conversions``  float32 -> fp16 / bf16 / fp8_e4m3 / fp8_e5m2 by torch ``.to`` against
   ``sf.encode`` (FP8 against both ``saturate=False`` and ``saturate=True``), on a
   stratified sample of all float32 patterns plus every rounding-boundary neighbourhood
   (halfway, one below, one above, for every exponent: subnormal results, overflow
   thresholds); ``decodes``: every fp16 / bf16 / FP8 pattern widened to float32.
2. ``matmul``  fp16 and bf16 with fp32 output (``torch.mm(out_dtype=float32)`` with
   reduced-precision reductions off, the 16-bit-output ``torch.mm``, and a ``mma.sync``
   m16n8k16 kernel compiled by cupy) against ``sf.matmul(..., accumulator="h100")``;
   FP8 by ``torch._scaled_mm`` (fast accumulation on and off) and a ``mma.sync`` m16n8k32
   e4m3 kernel against the native preset, the "via fp16" model, promotion every
   ``block`` terms and a plain fp32 sum.  Inputs: random normal, alignment, cancellation,
   carries, subnormals, a K that is no multiple of the block, a long K.  cuBLAS runs on
   2048 x 2048 outputs (enough tiles that it has no reason to split k) and the reference
   on a sample of rows and columns; one small 128 x 128 x 4096 product shows what a
   split-k heuristic does.  Where a path differs from the preset, a grid of
   ``FusedAccumulator`` models is swept on a failing case, and a full match is rerun on
   every case of that path.
3. ``nan``  add / sub / mul / div / sqrt of NaN operands (both signs, quiet and
   signalling, payloads), infinities and zeros on the device against softfloat's ops with
   ``RoundingAttributes(platform="cuda")``.

Run (GPU machine, softfloat not installed)::

    cd repo && PYTHONPATH=. python3 tools/gpu_crosscheck.py --out OUTDIR

Dry run on a CPU (torch CPU stands in for the GPU; the CUDA-only parts say "skipped")::

    python tools/gpu_crosscheck.py --device cpu --quick --out /tmp/xcheck

Writes OUTDIR/crosscheck.json (everything) and OUTDIR/crosscheck.txt (the summary, also
printed).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import multiprocessing
import os
import platform
import sys
import time
import traceback
from pathlib import Path

import numpy as np

import softfloat as sf
from softfloat.accumulate import FusedAccumulator, hardware_model

RA = sf.RoundingAttributes
T0 = time.perf_counter()
MAX_EXAMPLES = 5
EXAMPLE_TERMS = 64  # matmul examples list at most this many input terms


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T0:7.1f}s] {msg}", flush=True)


# =====================================================================================
# context, configuration and the comparison record
# =====================================================================================
class Config:
    def __init__(self, quick: bool):
        self.quick = quick
        self.strata = 1 << (16 if quick else 24)        # float32 stratified sample
        self.prefixes = 4 if quick else 256              # kept-bit prefixes per boundary exponent
        self.gpu_mn = 32 if quick else 2048              # cuBLAS / _scaled_mm output size
        self.sample = 32 if quick else 128               # rows and columns the reference computes
        self.ks = (16, 32, 64) if quick else (16, 32, 64, 128, 1024)
        self.ragged = {16: 40, 8: 48} if quick else {16: 1000, 8: 1008}   # by input width
        self.long_k = 128 if quick else 4096
        self.split_probe = (32, 128) if quick else (128, 4096)           # (M = N, K)
        self.sweep_outputs = 12 if quick else 64
        self.sweep_limit = 12 if quick else None         # models per sweep (None: the whole grid)


class Context:
    def __init__(self, args, pool):
        import torch

        self.torch, self.pool, self.args = torch, pool, args
        self.cfg = Config(args.quick)
        want_cuda = args.device in ("auto", "cuda")
        self.cuda = want_cuda and torch.cuda.is_available()
        self.device = torch.device("cuda" if self.cuda else "cpu")
        self.deadline = T0 + args.budget
        self.rng = np.random.default_rng(args.seed)

    def time_left(self) -> float:
        return self.deadline - time.perf_counter()


def hexs(bits, nbits: int) -> str:
    return f"0x{int(bits):0{max(nbits // 4, 1)}x}"


def ordered(bits: np.ndarray, nbits: int) -> np.ndarray:
    """Sign-magnitude patterns as integers in value order (ulp distances are differences)."""
    b = bits.astype(np.uint64).astype(np.int64) if nbits < 64 else bits.view(np.int64)
    if nbits == 64:
        return np.where(b < 0, -(b & np.int64(0x7FFFFFFFFFFFFFFF)), b)
    sign = np.int64(1) << np.int64(nbits - 1)
    return np.where(b & sign, -(b & (sign - 1)), b)


def compare(name, got, want, fmt, describe=None, **extra) -> dict:
    """The record of one check: the share of identical patterns and up to 5 mismatches."""
    fmt = sf.as_format(fmt)
    got, want = np.asarray(got).reshape(-1), np.asarray(want).reshape(-1)
    same = got == want
    rec = {"name": name, "total": int(same.size), "identical": int(same.sum()),
           "share": float(same.mean()) if same.size else None, **extra}
    bad = np.flatnonzero(~same)
    if bad.size:
        g, w = got[bad], want[bad]
        gnan, wnan = np.isnan(sf.decode(g, fmt)), np.isnan(sf.decode(w, fmt))
        rec["mismatch_both_nan"] = int((gnan & wnan).sum())
        rec["share_ignoring_nan_payloads"] = (rec["identical"] + rec["mismatch_both_nan"]) / same.size
        rec["mismatch_one_nan"] = int((gnan ^ wnan).sum())
        num = ~(gnan | wnan)
        if num.any():
            ulps = ordered(g[num], fmt.bits) - ordered(w[num], fmt.bits)
            rec["ulps_min"], rec["ulps_max"] = int(ulps.min()), int(ulps.max())
        rec["examples"] = []   # numeric mismatches first, then NaN ones
        picks = np.concatenate([bad[num][:MAX_EXAMPLES - 2], bad[~num][:2], bad[num][MAX_EXAMPLES - 2:MAX_EXAMPLES]])
        for i in picks[:MAX_EXAMPLES]:
            ex = {"index": int(i), "gpu": hexs(got[i], fmt.bits), "softfloat": hexs(want[i], fmt.bits)}
            if not (np.isnan(sf.decode(got[i:i + 1], fmt))[0] or np.isnan(sf.decode(want[i:i + 1], fmt))[0]):
                ex["ulps"] = int(ordered(got[i:i + 1], fmt.bits)[0] - ordered(want[i:i + 1], fmt.bits)[0])
            if describe is not None:
                ex.update(describe(int(i)))
            rec["examples"].append(ex)
    return rec


def guarded(section: dict, name: str, fn, *args):
    """Run one check; an exception becomes an error record and the section goes on."""
    t = time.perf_counter()
    try:
        out = fn(*args)
        if type(out) not in (dict, list):   # a value, not check records
            return out
    except Exception as exc:  # noqa: BLE001 - every failure is recorded, none is fatal
        out = {"name": name, "status": "error", "error": f"{type(exc).__name__}: {exc}"[:500],
               "traceback": traceback.format_exc()[-2000:]}
        log(f"  ERROR in {name}: {out['error']}")
    for rec in out if isinstance(out, list) else [out]:
        if rec is not None:
            rec.setdefault("seconds", round(time.perf_counter() - t, 3))
            section["checks"].append(rec)
    return out


def skipped(name: str, why: str) -> dict:
    return {"name": name, "status": "skipped", "reason": why}


# ----- torch <-> numpy bit patterns ------------------------------------------------
_SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def to_torch(ctx, bits: np.ndarray, dtype):
    torch = ctx.torch
    t = torch.from_numpy(np.ascontiguousarray(bits).view(_SIGNED[bits.itemsize]))
    if bits.itemsize == 1:
        t = t.view(torch.uint8)
    return t.to(ctx.device).view(dtype)


def from_torch(ctx, t) -> np.ndarray:
    torch = ctx.torch
    size = t.element_size()
    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size]
    return t.contiguous().view(ints).cpu().numpy().view(f"u{size}")


def torch_dtype(ctx, fmt_name: str):
    t = ctx.torch
    return {"fp16": t.float16, "bf16": t.bfloat16, "fp32": t.float32, "fp64": t.float64,
            "fp8_e4m3": t.float8_e4m3fn, "fp8_e5m2": t.float8_e5m2}[fmt_name]


# =====================================================================================
# 1. conversions and decodes
# =====================================================================================
def stratified_float32(n: int, rng) -> np.ndarray:
    """One random pattern from each of n equal strata of the 2**32 float32 patterns."""
    stride = (1 << 32) // n
    base = np.arange(n, dtype=np.uint64) * np.uint64(stride)
    return (base + rng.integers(0, stride, n, dtype=np.uint64)).astype(np.uint32)


def boundary_float32(fmt, cap: int, rng) -> np.ndarray:
    """float32 patterns at, one below and one above every rounding point of ``fmt``: for
    each float32 exponent the dropped low bits (more of them where the result is
    subnormal) are 0, 1, half - 1, half, half + 1 and all ones under up to ``cap`` kept
    prefixes (all of them when they are few: the overflow threshold included); both
    signs, and infinities and NaNs."""
    m, emin, parts = fmt.mantissa_bits, fmt.emin, []
    for biased in range(255):
        d = min(max(23 - m + max(0, emin - (max(biased, 1) - 127)), 1), 23)
        half = 1 << (d - 1)
        lows = np.unique(np.array([0, 1, half - 1, half, half + 1, 2 * half - 1], dtype=np.uint64)
                         & np.uint64(2 * half - 1))
        kept = 1 << (23 - d)
        prefixes = (np.arange(kept, dtype=np.uint64) if kept <= cap else
                    np.unique(np.r_[0, kept - 1, rng.integers(0, kept, cap)].astype(np.uint64)))
        mant = (prefixes[:, None] << np.uint64(d)) | lows[None, :]
        parts.append((np.uint64(biased) << np.uint64(23)) | mant.reshape(-1))
    specials = np.array([0x7F800000, 0x7F800001, 0x7FA00000, 0x7FC00000, 0x7FC00001, 0x7FFFFFFF],
                        dtype=np.uint64)
    pats = np.concatenate(parts + [specials])
    return np.unique(np.concatenate([pats, pats | np.uint64(0x80000000)])).astype(np.uint32)


def conversion_checks(ctx, fmt_name, strata) -> list:
    fmt = sf.as_format(fmt_name)
    bounds = boundary_float32(fmt, ctx.cfg.prefixes, ctx.rng)
    x = np.concatenate([strata, bounds])
    n_strata = strata.size
    t = to_torch(ctx, x, ctx.torch.float32)
    got = from_torch(ctx, t.to(torch_dtype(ctx, fmt_name)))
    values = x.view(np.float32)

    def describe(i):
        return {"input": hexs(x[i], 32), "value": repr(float(values[i])),
                "subset": "stratified" if i < n_strata else "boundary"}

    variants = [("", {})] if fmt.bits == 16 else [(" saturate=False", {"saturate": False}),
                                                 (" saturate=True", {"saturate": True})]
    recs = []
    for label, kw in variants:
        want = sf.encode(values, fmt, **kw)
        rec = compare(f"fp32 -> {fmt_name} (torch .to vs sf.encode{label})", got, want, fmt, describe)
        same = got == want
        rec["share_stratified"] = float(same[:n_strata].mean())
        rec["share_boundary"] = float(same[n_strata:].mean())
        rec["boundary_inputs"] = int(bounds.size)
        recs.append(rec)
    if fmt.bits == 8:
        probes = np.array([448, 464, 465, 480, 500, 57344, 61440, 65536, 1e6, np.inf, -np.inf, -500, np.nan,
                           -np.nan], dtype=np.float32)
        pb = from_torch(ctx, to_torch(ctx, probes.view(np.uint32), ctx.torch.float32).to(torch_dtype(ctx, fmt_name)))
        recs[0]["probes"] = {f"{float(v)!r} ({hexs(p, 32)})": {"gpu": hexs(g, 8), "sf_saturate_false": hexs(f, 8),
                                                                "sf_saturate_true": hexs(s, 8)}
                             for v, p, g, f, s in zip(probes, probes.view(np.uint32), pb,
                                                      sf.encode(probes, fmt, saturate=False),
                                                      sf.encode(probes, fmt, saturate=True))}
        recs[0]["matches"] = [lab.strip() for (lab, _), r in zip(variants, recs) if r["share"] == 1.0] or ["neither"]
        recs[0]["matches_ignoring_nan_payloads"] = [
            lab.strip() for (lab, _), r in zip(variants, recs)
            if r["share"] == 1.0 or r.get("share_ignoring_nan_payloads") == 1.0] or ["neither"]
    return recs


def decode_check(ctx, fmt_name) -> dict:
    fmt = sf.as_format(fmt_name)
    bits = np.arange(1 << fmt.bits, dtype=fmt.storage_dtype)
    got = from_torch(ctx, to_torch(ctx, bits, torch_dtype(ctx, fmt_name)).to(ctx.torch.float32))
    want = sf.decode(bits, fmt, dtype=np.float32).view(np.uint32)
    rec = compare(f"{fmt_name} -> fp32 (every pattern)", got, want, "fp32",
                  lambda i: {"input": hexs(bits[i], fmt.bits)})
    nan = np.isnan(sf.decode(bits, fmt))
    rec["nan_inputs"] = int(nan.sum())
    rec["nan_results_gpu"] = sorted({hexs(v, 32) for v in np.unique(got[nan])})[:8]
    rec["nan_results_softfloat"] = sorted({hexs(v, 32) for v in np.unique(want[nan])})[:8]
    return rec


def section_conversions(ctx, section):
    strata = stratified_float32(ctx.cfg.strata, ctx.rng)
    section["inputs"] = {"stratified": int(strata.size)}
    for fmt_name in ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2"):
        log(f"  conversion fp32 -> {fmt_name}")
        guarded(section, f"fp32 -> {fmt_name}", conversion_checks, ctx, fmt_name, strata)
    for fmt_name in ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2"):
        guarded(section, f"{fmt_name} -> fp32", decode_check, ctx, fmt_name)


# =====================================================================================
# 2. matrix products
# =====================================================================================
def fields(fmt, sign, exp_field, mant) -> np.ndarray:
    """Bit patterns from (sign, biased exponent field, trailing significand) arrays."""
    s = np.asarray(sign, np.uint64) << np.uint64(fmt.bits - 1)
    e = np.asarray(exp_field, np.uint64) << np.uint64(fmt.mantissa_bits)
    return (s | e | np.asarray(mant, np.uint64)).astype(fmt.storage_dtype)


def spread(fmt, shape, lo, hi, rng) -> np.ndarray:
    """Random significands with exponents uniform in [lo, hi] and random signs."""
    m = fmt.mantissa_bits
    return fields(fmt, rng.integers(0, 2, shape), rng.integers(lo, hi + 1, shape) + fmt.bias,
                  rng.integers(0, 1 << m, shape))


def nudged_negation(fmt, bits, rng) -> np.ndarray:
    """-(b + a few ulps): the partner of b in a cancelling pair."""
    step = rng.integers(1, 4, bits.shape).astype(np.int64) * rng.choice([-1, 1], bits.shape)
    mag = bits.astype(np.int64) & (fmt.sign_mask - 1)
    mag = np.clip(mag + step, 1, int(sf.encode(np.inf, fmt, saturate=True)))   # up to max_finite
    sign = (bits.astype(np.int64) & fmt.sign_mask) ^ fmt.sign_mask
    return (sign | mag).astype(fmt.storage_dtype)


#: per-factor binade half-spread of the "alignment" inputs (products span twice that)
ALIGN = {"fp16": 10, "bf16": 20, "fp8_e4m3": 6, "fp8_e5m2": 10}


def operands(kind, fmt_name, M, N, K, rng):
    """A (M, K) and B (K, N) bit patterns of ``fmt_name`` for one input kind."""
    fmt = sf.as_format(fmt_name)
    if kind in ("normal", "ragged K", "long K", "split-k probe"):
        return sf.encode(rng.standard_normal((M, K)), fmt), sf.encode(rng.standard_normal((K, N)), fmt)
    if kind == "alignment":
        r = ALIGN[fmt_name]
        return spread(fmt, (M, K), -r, r, rng), spread(fmt, (K, N), -r, r, rng)
    if kind.startswith("cancellation"):
        h = K // 2
        a = sf.encode(rng.standard_normal((M, h)), fmt)
        b = sf.encode(rng.standard_normal((h, N)), fmt)
        b2 = nudged_negation(fmt, b, rng)
        if kind == "cancellation adjacent":   # pairs (k, k+1)
            A, B = np.repeat(a, 2, axis=1), np.empty((K, N), fmt.storage_dtype)
            B[0::2], B[1::2] = b, b2
            return A, B
        return np.concatenate([a, a], axis=1), np.concatenate([b, b2], axis=0)   # pairs (k, k + K/2)
    if kind == "carries":   # positive, all-ones significands: the fused adder carries
        ones = (1 << fmt.mantissa_bits) - 1
        A = fields(fmt, 0, fmt.bias + rng.integers(0, 2, (M, K)), ones)
        return A, fields(fmt, 0, fmt.bias + rng.integers(-1, 1, (K, N)), ones)
    if kind == "subnormals":
        m = fmt.mantissa_bits
        sub_a = fields(fmt, rng.integers(0, 2, (M, K)), 0, rng.integers(1, 1 << m, (M, K)))
        near = spread(fmt, (M, K), fmt.emin, fmt.emin + 2, rng)
        A = np.where(rng.random((M, K)) < 0.5, sub_a, near)
        sub_b = fields(fmt, rng.integers(0, 2, (K, N)), 0, rng.integers(1, 1 << m, (K, N)))
        B = np.where(rng.random((K, N)) < 0.25, sub_b, spread(fmt, (K, N), -2, 2, rng))
        return A, B
    raise ValueError(f"kind: unknown input kind {kind!r}")


def cases(cfg, width: int):
    kinds = ("normal", "alignment", "cancellation adjacent", "cancellation far", "carries", "subnormals")
    for K in cfg.ks:
        for kind in kinds:
            yield kind, K, cfg.gpu_mn
    yield "ragged K", cfg.ragged[width], cfg.gpu_mn
    yield "long K", cfg.long_k, cfg.gpu_mn
    yield "split-k probe", cfg.split_probe[1], cfg.split_probe[0]


VIA_FP16 = FusedAccumulator(32, 25, "fp32", "toward_zero", fp8="via_fp16", name="via_fp16")


def reference_models(fmt_name: str) -> dict:
    """name -> (accumulator, out_format, block): the models every case is computed with."""
    if fmt_name in ("fp16", "bf16"):
        return {"h100": ("h100", "fp32", None), "ieee fp32": ("fp32", "fp32", None),
                "h100 -> " + fmt_name: (hardware_model("h100", sf.as_format(fmt_name)), fmt_name, None)}
    models = {"h100": ("h100", "fp32", None), "h100-mma": ("h100-mma", "fp32", None),
              "via_fp16": (VIA_FP16, "fp32", None)}
    for b in (32, 64, 128, 256, 512):
        models[f"h100 + promote every {b}"] = ("h100", "fp32", b)
    models["ieee fp32"] = ("fp32", "fp32", None)
    return models


def submit_model(ctx, a, b, fmt_name, model):
    acc, out, block = model
    return ctx.pool.submit(sf.matmul, a, b, fmt_name, accumulator=acc, out_format=out, block=block)


# ----- GPU paths ---------------------------------------------------------------------
def probe_mm_out_dtype(ctx) -> dict:
    torch = ctx.torch
    a = torch.ones((16, 16), dtype=torch.float16, device=ctx.device)
    try:
        out = torch.mm(a, a, out_dtype=torch.float32)
        return {"supported": out.dtype == torch.float32}
    except Exception as exc:  # noqa: BLE001
        return {"supported": False, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}


def gpu_products_16(ctx, fmt_name, A, B, have_out_dtype):
    """{path: (M, N) result tensor} of torch's 16-bit GEMMs."""
    torch = ctx.torch
    dt = torch_dtype(ctx, fmt_name)
    a, b = to_torch(ctx, A, dt), to_torch(ctx, B, dt)
    res = {f"torch.mm ({fmt_name} out)": torch.mm(a, b)}
    if have_out_dtype:
        res["torch.mm(out_dtype=fp32)"] = torch.mm(a, b, out_dtype=torch.float32)
    else:   # what exists without out_dtype: the fp32 GEMM of the widened inputs
        res["torch.mm(fp32 of widened inputs)"] = torch.mm(a.float(), b.float())
    return res


def gpu_products_fp8(ctx, A, B, a_fmt="fp8_e4m3", b_fmt="fp8_e4m3"):
    torch = ctx.torch
    a = to_torch(ctx, A, torch_dtype(ctx, a_fmt))
    bt = to_torch(ctx, np.ascontiguousarray(B.T), torch_dtype(ctx, b_fmt))
    one = torch.tensor(1.0, device=ctx.device)
    res = {}
    for fast in (True, False):
        res[f"_scaled_mm(use_fast_accum={fast})"] = torch._scaled_mm(
            a, bt.t(), scale_a=one, scale_b=one, out_dtype=torch.float32, use_fast_accum=fast)
    return res


MMA_SOURCE = r"""
__device__ __forceinline__ unsigned pack2(unsigned short lo, unsigned short hi) {
    return (unsigned)lo | ((unsigned)hi << 16);
}
__device__ __forceinline__ unsigned pack4(const unsigned char* p) {
    return (unsigned)p[0] | ((unsigned)p[1] << 8) | ((unsigned)p[2] << 16) | ((unsigned)p[3] << 24);
}
__device__ __forceinline__ void store(float* D, int N, float c0, float c1, float c2, float c3) {
    const int g = threadIdx.x >> 2, t = threadIdx.x & 3;
    float* lo = D + (size_t)(blockIdx.y * 16 + g) * N + blockIdx.x * 8 + 2 * t;
    float* hi = lo + (size_t)8 * N;
    lo[0] = c0; lo[1] = c1; hi[0] = c2; hi[1] = c3;   // c0,c1: row g; c2,c3: row g + 8
}
// A (M, K) row-major, Bt (N, K) row-major (B column-major), D (M, N); one warp per 16 x 8
// tile; the k16 steps chained in k order from c = 0.  PTX ISA fragments of m16n8k16:
// a0,a1 (g, 2t..2t+1)  a2,a3 (g+8, 2t..)  a4,a5 (g, 2t+8..)  a6,a7 (g+8, 2t+8..);
// b0,b1 (k 2t..2t+1, n g)  b2,b3 (k 2t+8.., n g); lower element in the low half.
#define MMA16(NAME, TYPE)                                                                   \
extern "C" __global__ void NAME(const unsigned short* A, const unsigned short* Bt, float* D,  \
                                int N, int K) {                                             \
    const int g = threadIdx.x >> 2, t = threadIdx.x & 3;                                    \
    const unsigned short* a_lo = A + (size_t)(blockIdx.y * 16 + g) * K;                     \
    const unsigned short* a_hi = a_lo + (size_t)8 * K;                                      \
    const unsigned short* b = Bt + (size_t)(blockIdx.x * 8 + g) * K;                        \
    float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;                                       \
    for (int k0 = 0; k0 < K; k0 += 16) {                                                    \
        const int k = k0 + 2 * t;                                                           \
        unsigned a0 = pack2(a_lo[k], a_lo[k + 1]), a1 = pack2(a_hi[k], a_hi[k + 1]);        \
        unsigned a2 = pack2(a_lo[k + 8], a_lo[k + 9]), a3 = pack2(a_hi[k + 8], a_hi[k + 9]); \
        unsigned b0 = pack2(b[k], b[k + 1]), b1 = pack2(b[k + 8], b[k + 9]);                \
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE ".f32 "          \
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"              \
                     : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)                               \
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));               \
    }                                                                                       \
    store(D, N, c0, c1, c2, c3);                                                            \
}
MMA16(mma_f16, "f16")
MMA16(mma_bf16, "bf16")
// m16n8k32 e4m3: a0..a3 (g, 4t..4t+3)  a4..a7 (g+8, 4t..)  a8..a11 (g, 4t+16..)
// a12..a15 (g+8, 4t+16..);  b0..b3 (k 4t..4t+3, n g)  b4..b7 (k 4t+16.., n g).
extern "C" __global__ void mma_e4m3(const unsigned char* A, const unsigned char* Bt, float* D, int N, int K) {
    const int g = threadIdx.x >> 2, t = threadIdx.x & 3;
    const unsigned char* a_lo = A + (size_t)(blockIdx.y * 16 + g) * K;
    const unsigned char* a_hi = a_lo + (size_t)8 * K;
    const unsigned char* b = Bt + (size_t)(blockIdx.x * 8 + g) * K;
    float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 32) {
        const int k = k0 + 4 * t;
        unsigned a0 = pack4(a_lo + k), a1 = pack4(a_hi + k), a2 = pack4(a_lo + k + 16), a3 = pack4(a_hi + k + 16);
        unsigned b0 = pack4(b + k), b1 = pack4(b + k + 16);
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    store(D, N, c0, c1, c2, c3);
}
"""
MMA_KERNELS = {"fp16": ("mma_f16", 16), "bf16": ("mma_bf16", 16), "fp8_e4m3": ("mma_e4m3", 32)}


class Mma:
    """The cupy-compiled mma.sync kernels, each checked first on small integers."""

    def __init__(self, ctx, section):
        import cupy as cp

        self.cp = cp
        module = cp.RawModule(code=MMA_SOURCE)
        self.fns = {f: module.get_function(name) for f, (name, _) in MMA_KERNELS.items()}
        self.layout_ok = {}
        rng = np.random.default_rng(7)
        for fmt_name in MMA_KERNELS:
            a, b = rng.integers(-3, 4, (32, 96)), rng.integers(-3, 4, (96, 16))
            got = self.product(fmt_name, sf.encode(a, fmt_name), sf.encode(b, fmt_name)).view(np.float32)
            ok = bool(np.array_equal(got, (a @ b).astype(np.float32)))
            self.layout_ok[fmt_name] = ok
            msg = "ok" if ok else "FAILED: the fragment layout is wrong, the mma results are not valid"
            log(f"  mma.sync {fmt_name} layout check on small integers: {msg}")
            section["checks"].append({"name": f"mma.sync {fmt_name} fragment layout check (exact integers)",
                                      "status": "ok" if ok else "FAILED", "identical": int((got == a @ b).sum()),
                                      "total": int(got.size)})

    def product(self, fmt_name, A, B) -> np.ndarray:
        """(M, N) fp32 patterns; K is padded with zeros to the instruction's k."""
        cp = self.cp
        name, kstep = MMA_KERNELS[fmt_name]
        M, K = A.shape
        N = B.shape[1]
        pad = -K % kstep
        A = np.pad(A, ((0, 0), (0, pad)))
        Bt = np.pad(np.ascontiguousarray(B.T), ((0, 0), (0, pad)))
        d = cp.zeros((M, N), dtype=cp.float32)
        self.fns[fmt_name]((N // 8, M // 16), (32,), (cp.asarray(A), cp.asarray(Bt), d, np.int32(N),
                                                     np.int32(K + pad)))
        return cp.asnumpy(d).view(np.uint32)


# ----- the section ---------------------------------------------------------------
class Case(dict):
    """One product's inputs, sampled GPU results and reference futures (not a record)."""


def run_case(ctx, fmt_name, kind, K, mn, extras):
    """GPU results on the sampled outputs and the reference futures of one case."""
    rng = ctx.rng
    A, B = operands(kind, fmt_name, mn, mn, K, rng)
    S = min(ctx.cfg.sample, mn)
    rows = np.sort(rng.choice(mn, S, replace=False))
    cols = np.sort(rng.choice(mn, S, replace=False))
    As, Bs = np.ascontiguousarray(A[rows]), np.ascontiguousarray(B[:, cols])
    gpu, errors = {}, {}
    try:
        full = (gpu_products_fp8(ctx, A, B) if fmt_name == "fp8_e4m3"
                else gpu_products_16(ctx, fmt_name, A, B, extras["out_dtype"]))
        r_t, c_t = (ctx.torch.from_numpy(i).to(ctx.device) for i in (rows, cols))
        gpu.update({p: from_torch(ctx, r[r_t][:, c_t]) for p, r in full.items()})
    except Exception as exc:  # noqa: BLE001
        errors["torch"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    mma = extras.get("mma")
    if isinstance(mma, Mma) and mma.layout_ok.get(fmt_name) and kind != "split-k probe":
        try:
            gpu[f"mma.sync ({fmt_name})"] = mma.product(fmt_name, As, Bs)
        except Exception as exc:  # noqa: BLE001
            errors["mma"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    refs = {name: submit_model(ctx, As, Bs, fmt_name, model) for name, model in reference_models(fmt_name).items()}
    return Case(fmt=fmt_name, kind=kind, K=K, gpu_shape=[mn, K, mn], sample=[S, S], As=As, Bs=Bs, gpu=gpu,
                refs=refs, errors=errors)


def finish_case(ctx, case) -> dict:
    """Compare the GPU paths with the reference models; keep what the sweep needs."""
    fmt_name, out = case["fmt"], {}
    wanted = {}
    for name, fut in case["refs"].items():
        try:
            wanted[name] = fut.result(timeout=max(ctx.time_left(), 1))
        except Exception as exc:  # noqa: BLE001
            case["errors"][f"reference {name}"] = f"{type(exc).__name__}: {exc}"[:300]
    As, Bs, S = case["As"], case["Bs"], case["sample"][1]

    def describe(i):
        r, c = divmod(i, S)
        return {"row": r, "col": c, "a_row": [hexs(v, As.itemsize * 8) for v in As[r, :EXAMPLE_TERMS]],
                "b_col": [hexs(v, Bs.itemsize * 8) for v in Bs[:EXAMPLE_TERMS, c]],
                "terms_listed": min(EXAMPLE_TERMS, As.shape[1]), "K": int(As.shape[1])}

    for path, got in case["gpu"].items():
        recs = {}
        for name, want in wanted.items():   # the models with this path's output format
            if want.itemsize == got.itemsize:
                o_fmt = "fp32" if want.itemsize == 4 else fmt_name
                recs[name] = compare(f"{path} vs {name}", got, want, o_fmt, describe if not recs else None)
        out[path] = recs
    case["wanted"] = wanted
    head = f"{fmt_name} {case['kind']} K={case['K']} (GPU {case['gpu_shape']}, sample {case['sample']})"
    return {"name": head, "fmt": fmt_name, "kind": case["kind"], "K": case["K"], "gpu_shape": case["gpu_shape"],
            "sample": case["sample"], "errors": case["errors"], "paths": out}


def overall(fmt_name, records) -> dict:
    """Identical outputs of each GPU path against each model, summed over the cases."""
    sums = {}
    for rec in records:
        for path, models in (rec.get("paths", {}) if isinstance(rec, dict) else {}).items():
            for model, r in models.items():
                same, total = sums.setdefault(path, {}).get(model, (0, 0))
                sums[path][model] = (same + r["identical"], total + r["total"])
    table = {path: {m: {"identical": s, "total": t, "share": s / t} for m, (s, t) in models.items()}
             for path, models in sums.items()}
    return {"name": f"{fmt_name} overall (all cases)", "overall": table,
            "matching_models": {p: [m for m, r in ms.items() if r["share"] == 1.0] for p, ms in table.items()}}


def sweep_grid(fmt_name: str, path: str):
    """Alternative fused-adder models (and promotions) to try on a failing case; the first,
    one term per step kept to 48 bits and rounded to nearest, is an fp32 FMA chain."""
    grid = [(FusedAccumulator(1, 48, "fp32", "nearest_even"), None)]
    if fmt_name in ("fp16", "bf16"):
        for terms in (4, 8, 16, 32, 64):
            for F in (22, 23, 24, 25, 26, 27):
                for rnd in ("toward_zero", "nearest_even"):
                    grid.append((FusedAccumulator(terms, F, "fp32", rnd), None))
        return grid
    blocks = (None, 64, 128, 256) if "False" in path else (None,)
    for block in blocks:
        for terms in (16, 32, 64):
            for F in (12, 13, 14, 15, 16, 23, 24, 25):
                for mant in (13, 14, 23):
                    for rnd in ("toward_zero", "nearest_even"):
                        grid.append((FusedAccumulator(terms, F, "fp32", rnd, output_mantissa_bits=mant), block))
        for F in (23, 24, 25, 26):
            for rnd in ("toward_zero", "nearest_even"):
                grid.append((FusedAccumulator(32, F, "fp32", rnd, fp8="via_fp16"), block))
    return grid


def sweep(ctx, fmt_name, path, failing, all_cases) -> dict:
    """Try the grid on cfg.sweep_outputs outputs (three quarters of them mismatching, drawn at
    random) of one failing case -- the longest "normal" one, else the shortest -- and rerun
    up to three full matches on every case of the path (a few outputs can fit several)."""
    normal = [c for c in failing if c["kind"] == "normal"]
    case = max(normal, key=lambda c: c["K"]) if normal else min(failing, key=lambda c: c["K"])
    got = case["gpu"][path].reshape(-1)
    want = case["wanted"]["h100"].reshape(-1)
    bad, good = ctx.rng.permutation(np.flatnonzero(got != want)), ctx.rng.permutation(np.flatnonzero(got == want))
    n = ctx.cfg.sweep_outputs
    pick = np.concatenate([bad[: n * 3 // 4], good[: n - min(bad.size, n * 3 // 4)]])
    S = case["sample"][1]
    r, c = np.divmod(pick, S)
    a_rows, b_cols = case["As"][r], np.ascontiguousarray(case["Bs"][:, c].T)
    grid = sweep_grid(fmt_name, path)
    if ctx.cfg.sweep_limit:   # the dry run: a spread of the grid
        grid = grid[:: max(len(grid) // ctx.cfg.sweep_limit, 1)][: ctx.cfg.sweep_limit]
    futs = [ctx.pool.submit(sf.vecdot, a_rows, b_cols, fmt_name, accumulator=acc, out_format="fp32", block=blk)
            for acc, blk in grid]
    results = []
    for (acc, blk), fut in zip(grid, futs):
        try:
            res = fut.result(timeout=max(ctx.time_left(), 1))
            results.append((float((res == got[pick]).mean()), repr(acc) + (f", block={blk}" if blk else ""),
                            acc, blk))
        except Exception as exc:  # noqa: BLE001
            results.append((-1.0, f"{acc!r}: {type(exc).__name__}: {exc}"[:200], acc, blk))
    results.sort(key=lambda t: -t[0])
    full = [t for t in results if t[0] == 1.0]
    rec = {"name": f"sweep {fmt_name} {path}", "case": f"{case['kind']} K={case['K']}",
           "outputs": int(pick.size), "mismatching_outputs": int(min(bad.size, n * 3 // 4)),
           "models_tried": len(grid), "full_matches": [t[1] for t in full][:20],
           "best": [[round(t[0], 4), t[1]] for t in results[:8]]}
    rec["confirmed_on_all_cases"] = [confirm(ctx, fmt_name, path, all_cases, t) for t in full[:3]]
    return rec


def confirm(ctx, fmt_name, path, all_cases, found) -> dict:
    """A sweep's full match rerun on every case of the path."""
    _, label, acc, blk = found
    try:
        return _confirm(ctx, fmt_name, path, all_cases, acc, blk) | {"model": label}
    except Exception as exc:  # noqa: BLE001
        return {"model": label, "share": None, "error": f"{type(exc).__name__}: {exc}"[:300]}


def _confirm(ctx, fmt_name, path, all_cases, acc, blk) -> dict:
    futs = [(cs, ctx.pool.submit(sf.matmul, cs["As"], cs["Bs"], fmt_name, accumulator=acc, out_format="fp32",
                                 block=blk)) for cs in all_cases if path in cs["gpu"]]
    same = total = 0
    for cs, fut in futs:
        res = fut.result(timeout=max(ctx.time_left(), 1))
        same += int((res == cs["gpu"][path]).sum())
        total += res.size
    return {"identical": same, "total": total, "share": same / total if total else None}


def profile_kernels(ctx, fmt_name, mn, K):
    """cuBLAS kernel names of one call (a split-k GEMM shows a reduction kernel)."""
    torch = ctx.torch
    A, B = operands("normal", fmt_name, mn, mn, K, ctx.rng)
    act = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=act) as prof:
        if fmt_name == "fp8_e4m3":
            gpu_products_fp8(ctx, A, B)
        else:
            gpu_products_16(ctx, fmt_name, A, B, True)
        torch.cuda.synchronize()
    names = sorted({e.key for e in prof.key_averages()})
    return {"name": f"kernels of {fmt_name} {mn}x{K}x{mn}", "kernels": [n[:160] for n in names][:24]}


def section_matmul(ctx, section):
    torch = ctx.torch
    extras = {"out_dtype": False}
    if ctx.cuda:
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
        torch.backends.cuda.matmul.allow_tf32 = False
    probe = probe_mm_out_dtype(ctx)
    extras["out_dtype"] = probe["supported"]
    section["checks"].append({"name": "probe torch.mm(out_dtype=torch.float32)", **probe})
    if ctx.cuda:
        mma = guarded(section, "mma.sync kernels", Mma, ctx, section)
        extras["mma"] = mma if isinstance(mma, Mma) else None
    else:
        section["checks"].append(skipped("mma.sync kernels (fp16, bf16, e4m3)", "no CUDA"))
    budget_end = time.perf_counter() + 0.85 * max(ctx.time_left() - 30, 10)
    for fmt_name in ("fp16", "bf16", "fp8_e4m3"):
        width = 8 if fmt_name.startswith("fp8") else 16
        started = []
        for kind, K, mn in cases(ctx.cfg, width):
            if time.perf_counter() > budget_end:
                section["checks"].append(skipped(f"{fmt_name} {kind} K={K}", "time budget"))
                continue
            log(f"  matmul {fmt_name} {kind} K={K} ({mn}x{K}x{mn})")
            case = guarded(section, f"{fmt_name} {kind} K={K}", run_case, ctx, fmt_name, kind, K, mn, extras)
            if isinstance(case, Case):
                started.append(case)
        failing, records = {}, []
        for case in started:
            records.append(guarded(section, f"{fmt_name} {case['kind']} K={case['K']} results", finish_case, ctx, case))
            for path, got in case["gpu"].items():
                if "h100" in case.get("wanted", {}) and got.itemsize == 4 and (got != case["wanted"]["h100"]).any():
                    failing.setdefault(path, []).append(case)
        section["checks"].append(overall(fmt_name, records))
        for path, fails in failing.items():
            if ctx.time_left() < 20:
                section["checks"].append(skipped(f"sweep {fmt_name} {path}", "time budget"))
                continue
            log(f"  sweep {fmt_name} {path} ({len(fails)} failing cases)")
            guarded(section, f"sweep {fmt_name} {path}", sweep, ctx, fmt_name, path, fails, started)
        for case in started:   # free the inputs
            case.clear()
    guarded(section, "fp8 e5m2 x e4m3", mixed_fp8, ctx)
    if ctx.cuda and ctx.time_left() > 20:
        for fmt_name, mn, K in (("fp16", ctx.cfg.gpu_mn, 1024), ("fp16",) + ctx.cfg.split_probe,
                                ("fp8_e4m3", ctx.cfg.gpu_mn, 1024)):
            guarded(section, f"kernels {fmt_name} {mn}x{K}", profile_kernels, ctx, fmt_name, mn, K)


def mixed_fp8(ctx) -> list:
    """e5m2 (A) x e4m3 (B) by _scaled_mm against sf.matmul(..., b_format=...) with the
    h100 preset (its FP8 path), with and without promotion every 128 terms."""
    recs, mn, S = [], ctx.cfg.gpu_mn, ctx.cfg.sample
    for K in [k for k in ctx.cfg.ks if k >= 32][::2]:
        A8, _ = operands("normal", "fp8_e5m2", mn, mn, K, ctx.rng)
        _, B8 = operands("normal", "fp8_e4m3", mn, mn, K, ctx.rng)
        gpu = gpu_products_fp8(ctx, A8, B8, "fp8_e5m2", "fp8_e4m3")
        for block in (None, 128):
            want = sf.matmul(A8[:S], B8[:, :S], "fp8_e5m2", b_format="fp8_e4m3", accumulator="h100",
                             out_format="fp32", block=block)
            for path, got in gpu.items():
                got = from_torch(ctx, got[:S, :S])
                label = "h100" + (f" + promote every {block}" if block else "")
                recs.append(compare(f"e5m2 x e4m3 K={K} {path} vs {label}", got, want, "fp32"))
    return recs


# =====================================================================================
# 3. NaN behaviour of the "cuda" platform preset
# =====================================================================================
def nan_grid(fmt) -> np.ndarray:
    e, s, q = fmt.exponent_mask, fmt.sign_mask, 1 << (fmt.mantissa_bits - 1)
    nans = [e | q, e | q | 5, s | e | q, s | e | q | 7, e | 1, e | 3, s | e | 9, s | e | (q >> 1),
            e | (q - 1), s | e | q | (q - 1)]
    others = [e, s | e, 0, s, int(sf.encode(1.5, fmt)), int(sf.encode(-2.0, fmt)), int(sf.encode(-1.0, fmt)), 1]
    return np.array(nans + others, dtype=fmt.storage_dtype)


def nan_checks(ctx, fmt_name) -> list:
    torch, fmt = ctx.torch, sf.as_format(fmt_name)
    grid = nan_grid(fmt)
    a, b = np.repeat(grid, grid.size), np.tile(grid, grid.size)
    dt = torch_dtype(ctx, fmt_name)
    ta, tb = to_torch(ctx, a, dt), to_torch(ctx, b, dt)
    cuda = RA(platform="cuda")
    ops = {"add": (torch.add, sf.add), "sub": (torch.sub, sf.sub), "mul": (torch.mul, sf.mul),
           "div": (torch.div, sf.div)}
    recs = []
    for op, (tfn, sfn) in ops.items():
        got, want = from_torch(ctx, tfn(ta, tb)), sfn(a, b, fmt, attributes=cuda)
        rec = compare(f"{fmt_name} {op}", got, want, fmt,
                      lambda i: {"a": hexs(a[i], fmt.bits), "b": hexs(b[i], fmt.bits)})
        rec["gpu_nan_results"] = sorted({hexs(v, fmt.bits) for v in got[np.isnan(sf.decode(got, fmt))]})[:8]
        recs.append(rec)
    got, want = from_torch(ctx, torch.sqrt(to_torch(ctx, grid, dt))), sf.sqrt(grid, fmt, attributes=cuda)
    recs.append(compare(f"{fmt_name} sqrt", got, want, fmt, lambda i: {"a": hexs(grid[i], fmt.bits)}))
    return recs


def section_nan(ctx, section):
    if not ctx.cuda:
        section["note"] = "torch CPU stands in for the GPU: mismatches are expected (x86 keeps NaN payloads)"
    for fmt_name in ("fp32", "fp64", "fp16", "bf16"):
        guarded(section, f"nan {fmt_name}", nan_checks, ctx, fmt_name)


# =====================================================================================
# the report
# =====================================================================================
def summary_lines(report) -> list:
    lines = [f"softfloat GPU cross-check  device: {report['meta'].get('device')}  "
             f"total {report['meta'].get('seconds')} s"]
    for name, sec in report["sections"].items():
        lines.append(f"\n== {name}: {sec['status']} ({sec.get('seconds')} s) {sec.get('error', '')}")
        if sec.get("note"):
            lines.append(f"   note: {sec['note']}")
        for rec in sec["checks"]:
            lines.extend(safe_lines(check_lines, rec))
    return lines


def safe_lines(fn, rec) -> list:
    try:
        return fn(rec)
    except Exception as exc:  # noqa: BLE001 - a summary line must never lose the report
        return [f"  {rec.get('name')}: (unprintable: {type(exc).__name__}: {exc})"]


def headline_lines(report) -> list:
    """The verdicts only, printed last (a tool that keeps the end of the output keeps these)."""
    lines = ["", "=" * 30 + " HEADLINES " + "=" * 30, f"device: {report['meta'].get('device')}"]
    for name, sec in report["sections"].items():
        lines.append(f"[{name}] {sec['status']} {sec.get('error', '')}")
        for rec in sec["checks"]:
            lines.extend(safe_lines(headline, rec))
    return lines


def headline(rec) -> list:
    if "overall" in rec:
        return check_lines(rec)
    if "full_matches" in rec:   # the sweep's first line, its best model if none fits, the confirmations
        lines = check_lines(rec)
        return lines[:1] + ([] if rec["full_matches"] else lines[1:2]) + lines[4:]
    if "fragment layout" in rec["name"] or rec["name"].startswith("probe"):
        return [f"  {rec['name']}: {rec.get('status', '')} {rec.get('supported', '')} {rec.get('error', '')}"]
    if rec.get("status") in ("skipped", "error", "FAILED"):
        return check_lines(rec)[:1]
    if "share" in rec and rec["share"] is not None and "paths" not in rec:
        line = f"  {rec['name']}: {rec['share']:.6%}"
        if rec.get("share_ignoring_nan_payloads") not in (None, rec["share"]):
            line += f" ({rec['share_ignoring_nan_payloads']:.6%} ignoring NaN payloads)"
        if "matches" in rec:
            line += f"  matches: {rec['matches']} / ignoring NaN payloads: {rec['matches_ignoring_nan_payloads']}"
        return [line]
    return []


def check_lines(rec) -> list:
    if "paths" in rec:   # a matmul case
        out = [f"  {rec['name']}" + (f"  errors: {rec['errors']}" if rec.get("errors") else "")]
        for path, models in rec["paths"].items():
            cells = ", ".join(f"{m} {r['share']:.4%}" for m, r in models.items())
            out.append(f"    {path}: {cells}")
            for r in list(models.values())[:1]:
                for ex in r.get("examples", [])[:2]:
                    out.append(f"      e.g. [{ex['row']},{ex['col']}] gpu {ex['gpu']} sf {ex['softfloat']} "
                               f"ulps {ex.get('ulps')}")
        return out
    if "overall" in rec:
        out = [f"  {rec['name']}:"]
        for path, models in rec["overall"].items():
            cells = ", ".join(f"{m} {r['share']:.4%}" for m, r in models.items())
            out.append(f"    {path}: {cells}  -> matching: {rec['matching_models'][path] or 'none'}")
        return out
    if "full_matches" in rec:   # a sweep
        out = [f"  {rec['name']}: on {rec['case']} ({rec['outputs']} outputs, {rec['mismatching_outputs']} "
               f"mismatching), {rec['models_tried']} models, {len(rec['full_matches'])} full matches"]
        out += [f"    best {share:.2%}: {label}" for share, label in rec["best"][:3]]
        out += [f"    confirmed on all cases: {c['share']:.4%} {c['model']}" if c.get("share") is not None else
                f"    confirmation failed: {c['model']} {c.get('error')}" for c in rec["confirmed_on_all_cases"]]
        return out
    if rec.get("status") in ("skipped", "error", "FAILED"):
        return [f"  {rec['name']}: {rec['status']} {rec.get('reason', '')}{rec.get('error', '')}"]
    if "share" in rec and rec["share"] is not None:
        line = f"  {rec['name']}: {rec['identical']}/{rec['total']} identical ({rec['share']:.6%})"
        if "ulps_max" in rec:
            line += f", ulps {rec['ulps_min']}..{rec['ulps_max']}"
        if rec.get("mismatch_both_nan"):
            line += f", {rec['mismatch_both_nan']} NaN-vs-NaN"
        out = [line]
        for key in ("matches", "matches_ignoring_nan_payloads", "share_ignoring_nan_payloads", "share_boundary", "confirmed_on_all_cases", "nan_results_gpu",
                    "nan_results_softfloat", "gpu_nan_results", "probes"):
            if key in rec:
                out.append(f"    {key}: {rec[key]}")
        for ex in rec.get("examples", [])[:3]:
            out.append(f"    e.g. {ex}")
        return out
    keep = {k: v for k, v in rec.items() if k not in ("name", "seconds", "traceback")}
    return [f"  {rec['name']}: {keep}"]


def jsonable(x):
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return x


def report_json(report, limit: int = 15 << 20) -> str:
    """The report as JSON, under ``limit`` bytes (the device tool returns files up to
    16 MiB): too big, the matmul examples lose their input terms, then the indentation."""
    text = json.dumps(jsonable(report), indent=1)
    if len(text) > limit:
        for sec in report["sections"].values():
            for rec in sec["checks"]:
                for models in rec.get("paths", {}).values():
                    for r in models.values():
                        for ex in r.get("examples", []):
                            ex.pop("a_row", None), ex.pop("b_col", None)
        text = json.dumps(jsonable(report), indent=1)
    return text if len(text) <= limit else json.dumps(jsonable(report))


def meta(ctx) -> dict:
    torch = ctx.torch
    info = {"python": sys.version.split()[0], "numpy": np.__version__, "torch": torch.__version__,
            "softfloat": getattr(sf, "__version__", "?"), "host": platform.node(), "cpus": os.cpu_count(),
            "quick": ctx.cfg.quick, "seed": ctx.args.seed, "workers": ctx.args.workers}
    if ctx.cuda:
        info.update(device=torch.cuda.get_device_name(0), capability=list(torch.cuda.get_device_capability(0)),
                    cuda=torch.version.cuda)
        try:
            import cupy

            info["cupy"] = cupy.__version__
        except Exception as exc:  # noqa: BLE001
            info["cupy"] = f"unavailable: {exc}"[:200]
    else:
        info["device"] = "cpu (torch CPU stands in for the GPU: a dry run)"
    return info


class _Inline:
    """An executor that runs each job at once (``--workers 1``)."""

    def submit(self, fn, *args, **kwargs):
        fut = cf.Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001
            fut.set_exception(exc)
        return fut

    def shutdown(self, **_):
        pass


def make_pool(workers: int):
    """Worker processes for the reference computations.  They are spawned, not forked (the
    parent has threads: BLAS, torch, a test runner's), and run only softfloat's public
    functions, which pickle by reference; started now, before torch and CUDA."""
    if workers <= 1:
        return _Inline()
    pool = cf.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    list(pool.map(abs, range(4 * workers)))   # start them all
    return pool


#: in this order: the NaN checks run before any hand-written kernel touches the device
SECTIONS = {"conversions": section_conversions, "nan": section_nan, "matmul": section_matmul}


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="crosscheck_out", help="output folder")
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    p.add_argument("--quick", action="store_true", help="small sizes (the CPU dry run)")
    p.add_argument("--budget", type=float, default=210.0, help="seconds for the whole run")
    p.add_argument("--workers", type=int, default=min(os.cpu_count() or 1, 16))
    p.add_argument("--seed", type=int, default=2025)
    p.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated subset")
    return p.parse_args(argv)


def main(argv=None) -> dict:
    global T0
    T0 = time.perf_counter()
    args = parse(argv)
    pool = make_pool(args.workers)
    log(f"pool of {args.workers} workers ready; importing torch")
    ctx = Context(args, pool)
    report = {"meta": meta(ctx), "sections": {}}
    log(f"device: {report['meta']['device']}")
    try:
        for name in args.sections.split(","):
            section = report["sections"][name] = {"status": "ok", "checks": []}
            t = time.perf_counter()
            log(f"section {name}")
            try:
                SECTIONS[name](ctx, section)
            except Exception as exc:  # noqa: BLE001
                section.update(status="error", error=f"{type(exc).__name__}: {exc}"[:500],
                               traceback=traceback.format_exc()[-3000:])
                log(f"  section {name} failed: {section['error']}")
            section["seconds"] = round(time.perf_counter() - t, 2)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        report["meta"]["seconds"] = round(time.perf_counter() - T0, 1)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "crosscheck.json").write_text(report_json(report))
        text = "\n".join(summary_lines(report) + headline_lines(report))
        (out / "crosscheck.txt").write_text(text + "\n")
        print(text, flush=True)
        log(f"wrote {out / 'crosscheck.json'} and {out / 'crosscheck.txt'}")
    return report


if __name__ == "__main__":
    main()
