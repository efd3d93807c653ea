"""Each fast path of the operations, bit for bit against the exact path.

The kernels compute in float64 with error-free transformations and round to odd; lanes
they cannot settle ("hazards") are computed with exact rational arithmetic.  Forcing
every finite lane onto the exact path must change nothing -- results or flags -- in any
mode, format or operation.  This checks the float64 paths against an implementation that
shares none of their arithmetic (it shares only the rounding point, which the codec tests
check against MPFR).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import softfloat as sf
from softfloat.attributes import RoundingAttributes
from softfloat._workspace import Workspace

OPS = {"add": 2, "sub": 2, "mul": 2, "div": 2, "sqrt": 1, "fma": 3}
FORMATS = [sf.fp64, sf.fp32, sf.bf16, sf.fp16, sf.fp8_e4m3, sf.Format(exponent_bits=11, mantissa_bits=40)]
MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]


def _operands(fmt, count, n, seed):
    """Finite patterns: half random bits, half values near 1 (so sums cancel and carry)."""
    rng = np.random.default_rng(seed)
    ops = []
    for _ in range(count):
        bits = rng.integers(0, 1 << fmt.bits, n, dtype=np.uint64).astype(fmt.storage_dtype)
        near_one = sf.encode(rng.uniform(0.5, 2.0, n // 2) * rng.choice([-1.0, 1.0], n // 2), fmt)
        bits[: n // 2] = near_one
        finite = np.isfinite(sf.decode(bits, fmt))
        ops.append(np.where(finite, bits, fmt.storage_dtype.type(0)))
    return ops


def _kernel_module(op):
    return sys.modules[f"softfloat.ops.{op}" if op != "sub" else "softfloat.ops.add"]


def _all_lanes_exact(kernel):
    def forced(fmt, attrs, *xs, ws=None):
        res = kernel(fmt, attrs, *xs, ws=ws)
        # every lane the fast path settles: finite operands and a finite float64 result
        fast = np.logical_and.reduce([np.isfinite(x) for x in xs]) & np.isfinite(res.hi)
        res.hazard = fast if res.hazard is None else res.hazard | fast
        return res
    return forced


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("op", list(OPS))
def test_fast_paths_equal_the_exact_path(op, fmt, monkeypatch):
    operands = _operands(fmt, OPS[op], 1000, seed=sum(map(ord, op + fmt.name)))
    fn = getattr(sf, op)
    fast = {mode: fn(*operands, fmt, mode, return_flags=True) for mode in MODES}
    module = _kernel_module(op)
    name = f"{op}_kernel"
    monkeypatch.setattr(module, name, _all_lanes_exact(getattr(module, name)))
    for mode in MODES:
        bits, flags = fn(*operands, fmt, mode, return_flags=True)
        fast_bits, fast_flags = fast[mode]
        bad = np.flatnonzero(bits != fast_bits)
        assert bad.size == 0, (
            f"{op} {fmt.name} {mode}: fast path differs at {bad[:5]}: "
            f"fast {[hex(v) for v in fast_bits[bad[:5]]]} exact {[hex(v) for v in bits[bad[:5]]]}")
        for (name_, exact_mask), (_, fast_mask) in zip(flags, fast_flags):
            assert np.array_equal(exact_mask, fast_mask), f"{op} {fmt.name} {mode}: flag {name_}"


@pytest.mark.parametrize("op", ["add", "mul", "fma"])
def test_stochastic_pair_path_equals_the_exact_path(op, monkeypatch):
    # add, mul and fma carry an exact low part, so even the random decision is the same
    fmt = sf.fp64
    operands = _operands(fmt, OPS[op], 400, seed=7)
    fn = getattr(sf, op)
    fast = fn(*operands, fmt, "stochastic", rng=3)
    module = _kernel_module(op)
    monkeypatch.setattr(module, f"{op}_kernel", _all_lanes_exact(getattr(module, f"{op}_kernel")))
    assert np.array_equal(fn(*operands, fmt, "stochastic", rng=3), fast)


def _specials(fmt, n, seed):
    """Patterns of every kind: random bits (NaNs, infinities, subnormals, zeros
    included) and the format's own specials spread over the block."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << fmt.bits, n, dtype=np.uint64).astype(fmt.storage_dtype)
    special = [0, fmt.sign_mask, fmt.max_finite_bits, 1, fmt.sign_mask | 1]
    bits[rng.integers(0, n, 64)] = rng.choice(special, 64)
    return sf.decode(bits, fmt)


@pytest.mark.parametrize("mode", ["nearest_even", "downward"])
@pytest.mark.parametrize("fmt", [sf.fp64, sf.fp32, sf.bf16, sf.fp16], ids=lambda f: f.name)
@pytest.mark.parametrize("op", list(OPS))
def test_kernels_compute_the_same_in_a_workspace_and_leave_operands_alone(op, fmt, mode):
    # the stream driver hands kernels a block workspace for their intermediates; the
    # accumulation layer calls them without one
    kernel = getattr(_kernel_module(op), f"{op}_kernel")
    attrs = RoundingAttributes(rounding=sf.Rounding(mode))
    xs = [_specials(fmt, 3000, seed=i + len(op)) for i in range(OPS[op])]
    before = [x.copy() for x in xs]
    with np.errstate(all="ignore"):
        plain = kernel(fmt, attrs, *xs)
        ws = Workspace(3000)
        pooled = kernel(fmt, attrs, *xs, ws=ws)
    for x, b in zip(xs, before):
        assert np.array_equal(x.view(np.uint64), b.view(np.uint64))
    for field in ("hi", "lo", "invalid", "divide_by_zero", "hazard"):
        a, b = getattr(plain, field), getattr(pooled, field)
        assert (a is None) == (b is None), field
        if a is not None:
            assert np.array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8)), field
