"""The accumulation models' hot loops by compiled kernels, where a kernel launch per
k (or per block of k) and the (k, M, N) temporaries of the eager code would bound a
GPU's speed.

**The fp32 accumulator's sequential chain**: one kernel per tile of ``TILE`` k's,
computing

    s = s + a_k * b_k        k = k0, k0 + 1, ..., k0 + TILE - 1, in this order

over every output at once.  Eagerly the chain is one addition kernel per k (and one
multiply kernel per tile of k's): a GPU then spends its time launching kernels of a
few microseconds each.  Compiled, each output's TILE steps run in one kernel on values
kept in registers, and the products are never written to memory.

Bit-exactness (the caller's condition): every product a_k * b_k is exact in float32
(softfloat.torch._accumulate_ieee.products_exact; infinite and NaN factors included).
Then each step rounds once, as the definition's, whatever the compiler does with the
expression: contracted into a fused multiply-add, fma(a, b, s) rounds a*b + s once,
which is round(p + s) for the exact product p; and no compiler reassociates the
chain (inductor writes the additions in the order traced, its C++ flags keep unsafe
math and contraction off, Triton does not reassociate floating-point additions).  A
product rounded into fp32 (``product="fp32"``) is not exact, a contraction would skip
its rounding: that chain stays eager.  Subnormals must not be flushed: the CPU's mode
is checked at softfloat's entry points (softfloat._fpenv); on CUDA, Triton's float32
additions keep them (tools/gpu_device_check.py checks subnormal data against the
reference).

Signed zeros: a chain with no value yet starts from -0, since -0 + t = t for every t
(+0 included); a tile short of TILE k's is padded with terms (-0) * (+0) = -0, since
s + (-0) = s for every s.  So one kernel serves every tile, and its
shapes other than TILE are dynamic: one compile per (counting, rank, device type, TILE).

Swamped counts (the ``count`` kernel): per output, the steps r = s + t with t non-zero
and finite, s finite and r == s, tested as softfloat.torch._accumulate_ieee's
swamped_additions does ((r - s) == 0 and t != 0), the padding's -0 terms never
counting; int32 per chain, added to the caller's int64 counts.

**The tensor-core fused adder's step** (softfloat.torch._accumulate_fused's
``_Step.block``, the same function eager and compiled): one kernel per step instead of
a dozen passes over its (T, M, N) float64 products.  Every operation of the step is
exact in float64 (products, scaling by powers of two, truncation, integer sums below
2**53), so neither contraction nor the order of the sum's reduction can change a bit;
the only rounding is the output's, by integer-valued truncation.  Shapes are dynamic
(T included): one compile per (adder constants, counting, rank, device type).
"""

from __future__ import annotations

import torch

from . import _compiled

__all__ = ["FUSED_MODE", "MODE", "TILE", "fused_step", "sequential"]

#: when the compiled tiles are used (softfloat.torch._compiled.MODES): "auto", CUDA
#: tensors with Triton.  On an H200 (torch 2.11, tools/gpu_device_check.py, stop 41) they
#: gave the reference's bits in all 47 cases (every input kind, block None and 128, bf16
#: 256 x 1024 x 1024 whole) at 102 G multiply-adds/s against the eager chain's 24 (1,112
#: against 166 at 1024 x 4096 x 4096); a kernel's first call compiles it (4-28 s).  On
#: the CPU "always" compiles inductor's C++ (6-45 s), after which whole products ran at
#: 3-4x the numpy reference's speed at 128 x 512 x 256 (bench_torch_accumulate.py, 2 cores)
MODE = "auto"
#: the same for the tensor-core fused adder's steps (:func:`fused_step`): "auto".  On the
#: same H200, 55 cases (fp16, bf16, e4m3 x e5m2; "h100" and "h100-mma"; every input kind;
#: fp8 256 x 1024 x 1024 whole) gave the reference's bits, at 51 G multiply-adds/s
#: against the eager steps' 10.5 (275 against 33 at 1024 x 4096 x 4096)
FUSED_MODE = "auto"
#: k's per compiled kernel: the chain's kernel launches are K / TILE
TILE = 64


def _compile(fn):
    """The compiler (tests replace it): shapes dynamic, so one artifact per kernel."""
    return torch.compile(fn, fullgraph=True, dynamic=True)


def _kernel(count: bool):
    """s + a[..., :, 0] * b[..., 0, :] + ... + a[..., :, TILE-1] * b[..., TILE-1, :], each
    addition rounded in float32; with ``count``, the swamped additions added into ``n``."""
    tile = TILE
    if count:
        def chain(s, n, a, b):
            for k in range(tile):
                t = a[..., :, k:k + 1] * b[..., k:k + 1, :]
                r = s + t
                n = n + ((r - s) == 0).logical_and(t != 0).to(torch.int32)
                s = r
            return s, n
    else:
        def chain(s, a, b):
            for k in range(tile):
                s = s + a[..., :, k:k + 1] * b[..., k:k + 1, :]
            return s
    return _compiled.fresh(chain)


def _padded(a, b, k0, k1):
    """Columns k0 .. k1-1 of ``a`` and rows of ``b``, padded to TILE with -0 columns and
    +0 rows (their products -0 change no sum)."""
    x, y = a[..., :, k0:k1], b[..., k0:k1, :]
    short = TILE - (k1 - k0)
    if short:
        x = torch.cat([x, x.new_full(tuple(x.shape[:-1]) + (short,), -0.0)], dim=-1)
        y = torch.cat([y, y.new_zeros(tuple(y.shape[:-2]) + (short, y.shape[-1]))], dim=-2)
    return x, y


def sequential(a, b, k0, k1, s, swamped=None):
    """The sequential float32 sum of the exact products a_k * b_k, k0 <= k < k1, from ``s``
    ((..., M, N) float32, or None: no value yet), by compiled tiles -- or None where
    ``MODE`` declines or compiling fails (the caller's eager chain gives the same bits).
    With ``swamped`` (int64 counts of the output's shape), its swamped additions are
    added in.  ``a`` (..., M, K) and ``b`` (..., K, N) float32."""
    if a.dtype != torch.float32 or b.dtype != torch.float32 or k1 <= k0 or not _compiled.wanted(a, MODE):
        return None
    count = swamped is not None
    shape = torch.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
    name = ("accumulate", count, len(shape), a.device.type, TILE)

    def describe():
        return f"fp32 accumulation tile{' counting' if count else ''} rank {len(shape)} {a.device.type}"
    total = torch.full(shape, -0.0, device=a.device) if s is None else s
    n = torch.zeros(shape, dtype=torch.int32, device=a.device) if count else None
    for t0 in range(k0, k1, TILE):
        x, y = _padded(a, b, t0, min(t0 + TILE, k1))
        args = (total, n, x, y) if count else (total, x, y)
        got = _compiled.run(name, describe, lambda: _compile(_kernel(count)), *args)
        if got is None:
            return None  # nothing written yet: the eager chain starts again from s
        total, n = got if count else (got, None)
    if count:
        swamped += n
    return total


def fused_step(step, args, count: bool):
    """``step.block(*args, count)`` -- one fused step of softfloat.torch._accumulate_fused,
    ``args`` its (a, b, pa, pb, c) -- by a compiled kernel: (result, dropped counts or
    None), or None where ``FUSED_MODE`` declines or compiling fails (the caller runs the
    step eagerly, the same bits).  ``step`` holds the adder's constants, one object per
    set of them (one artifact each)."""
    a = args[0]
    if not _compiled.wanted(a, FUSED_MODE):
        return None
    name = ("fused", step.key, count, a.dim(), a.device.type)

    def describe():
        return f"fused adder step {step.key}{' counting' if count else ''} rank {a.dim()} {a.device.type}"

    def build():
        def kernel(a, b, pa, pb, c):
            return step.block(a, b, pa, pb, c, count)
        return _compile(_compiled.fresh(kernel))
    return _compiled.run(name, describe, build, *args)
