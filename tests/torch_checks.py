"""Shared helpers of the softfloat.torch tests: random leaf tensors spread over binades,
their values, the pencil-and-paper product of the "bf16" recipe, matmul_bits checked
against softfloat.matmul, and whether torch.compile can build CPU kernels here."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

import softfloat as sf


def tensor(shape, seed, spread):
    """A float32 leaf tensor (requires_grad) of normal values times 2**[-spread, spread)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-spread, spread, shape)
    return torch.tensor(x.astype(np.float32), requires_grad=True)


def values(t):
    """The tensor's values as a numpy array (no copy on the CPU)."""
    return t.detach().numpy()


def bf16_product(a, b):
    """bf16 operands, fp32 accumulator in sequential k order, bf16 result: the
    definition of emulate("bf16", accumulator="fp32")'s products, as float32 values."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    bits = sf.matmul(sf.encode(a, "bf16"), sf.encode(b, "bf16"), "bf16", accumulator="fp32", out_format="bf16")
    return sf.decode(bits, "bf16").astype(np.float32)


@functools.lru_cache(maxsize=None)
def cpp_compiler():
    """The C++ compiler inductor would build its CPU kernels with, or None."""
    try:
        from torch._inductor.cpp_builder import get_cpp_compiler
        return get_cpp_compiler()
    except Exception:  # noqa: BLE001 - no compiler found (or no inductor)
        return None


def require_cpp_compiler():
    """Skip the calling test where inductor finds no C++ compiler."""
    if cpp_compiler() is None:
        pytest.skip("torch.compile on the CPU needs a C++ compiler (inductor builds its kernels "
                    "with g++ or clang++; set CXX): none found")


def check_matmul_bits(a, b, fmt, c=None, **kwargs):
    """softfloat.torch's matmul_bits on CPU tensors equals sf.matmul on the patterns ``a``,
    ``b`` (and ``c``): the bits, and the bits and swamped counts of
    ``return_flags="swamped"``; returns the reference's bits."""
    from softfloat.torch._accumulate import matmul_bits
    ref = sf.matmul(a, b, fmt, c=c, **kwargs)
    ref_bits, ref_swamped = sf.matmul(a, b, fmt, c=c, return_flags="swamped", **kwargs)
    tc = None if c is None else torch.from_numpy(np.asarray(c, np.int64))
    ta, tb = torch.from_numpy(np.asarray(a, np.int64)), torch.from_numpy(np.asarray(b, np.int64))
    got = matmul_bits(ta, tb, fmt, c=tc, **kwargs).numpy().view(ref.dtype)
    bits, swamped = matmul_bits(ta, tb, fmt, c=tc, return_flags="swamped", **kwargs)
    for g, r, what in ((got, ref, "bits"), (bits.numpy().view(ref.dtype), ref_bits, "bits (counting)"),
                       (swamped.numpy(), np.asarray(ref_swamped), "swamped counts")):
        bad = np.flatnonzero(g.reshape(-1) != r.reshape(-1))
        assert not bad.size, f"{what}: {bad.size} differ, first at {bad[0]}: {g.reshape(-1)[bad[0]]:#x} " \
                             f"!= {r.reshape(-1)[bad[0]]:#x}"
    return ref
