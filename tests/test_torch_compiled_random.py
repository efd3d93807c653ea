"""Stochastic rounding through the compiled route of softfloat.torch.quantize
(softfloat.torch._kernels_compiled) with the real torch.compile -- inductor, which builds
C++ kernels on the CPU -- against the numpy reference, softfloat.quantize, bit for bit.

The compiled stochastic kernel once failed on CUDA (an H200, torch 2.11): inductor's index
propagation folded the SplitMix64 counter ``(i + 1) * GOLDEN`` of
softfloat.torch._kernels_random into one index expression, ``GOLDEN*x0 + GOLDEN``, and
Triton evaluates index expressions in int32 ("Scalar -7046029254386353131 is out of range
for type int32").  The CPU compiler indexes in int64 and compiled that kernel, so the
failure itself does not show here; what does show is the fold: the C++ kernel held
``(-7046029254386353131L)*x0``.  The test on the generated code checks that the
multiplier no longer meets an index variable (the counter is ``(i + 1 + key / GOLDEN) *
GOLDEN``, the key a tensor argument, so the fold stops at ``i + 1``).

A compile takes about 10 s on a quiet 2-core machine with an empty inductor cache (4-28 s
in a busy one): the default run compiles two kernels (a 32-bit word layout, e4m3 from
float32, and a 64-bit one, bf16 from float64); the sweep over every format family, the
option sets and the input dtypes (27 compiles) is marked slow.  The tests skip where
inductor finds no C++ compiler.
"""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import softfloat as sf  # noqa: E402
import softfloat.torch as sft  # noqa: E402
from tests.torch_checks import require_cpp_compiler  # noqa: E402

compiled_module = importlib.import_module("softfloat.torch._kernels_compiled")
quantize_module = importlib.import_module("softfloat.torch._quantize")

# inductor's first import meets torch's own deprecations (torch.jit.script_method in
# torch.utils.mkldnn), which the suite's "error" filter would turn into compile failures
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")

#: the SplitMix64 multiplier as the int64 literal inductor writes into its kernels
GOLDEN_LITERAL = "-7046029254386353131"
SEEDS = (1, 7, 2**40 + 3)
#: a whole bucket, a padded length in the same bucket (one artifact for both)
LENGTHS = (1 << 16, 40001)


@pytest.fixture
def compiled(monkeypatch):
    """softfloat.torch.quantize on the CPU through the compiled route with the real
    torch.compile; yields the list of the functions it compiled and the generated code."""
    require_cpp_compiler()
    from torch._inductor.graph import GraphLowering

    monkeypatch.setattr(quantize_module, "_CPU_ROUTE", "torch")
    monkeypatch.setattr(compiled_module, "MODE", "always")
    compiled_module.reset()
    made, code = [], []
    real = compiled_module._compile

    def record(fn):
        made.append(fn)
        return real(fn)
    monkeypatch.setattr(compiled_module, "_compile", record)
    monkeypatch.setattr(GraphLowering, "save_output_code", code.append, raising=False)
    yield made, code
    compiled_module.reset()


def _bits(a):
    a = np.asarray(a)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _float32_data(n=1 << 16):
    """float32 patterns: every top half with low halves at the 13-, 16- and 23-bit cuts'
    boundaries, repeated to ``n`` elements."""
    lows = np.array([0, 1, 0x0FFF, 0x1000, 0x1001, 0x7FFF, 0x8000, 0x8001, 0xFFFF], dtype=np.uint32)
    top = np.arange(0, 1 << 16, 9, dtype=np.uint32) << np.uint32(16)
    return np.resize((top[:, None] | lows[None, :]).reshape(-1).view(np.float32), n)


def _float64_data(n=1 << 16):
    rng = np.random.default_rng(25)
    with np.errstate(over="ignore"):
        scaled = rng.standard_normal(n // 2) * 2.0 ** rng.integers(-1080, 1030, n // 2)
    patterns = rng.integers(0, 2**64 - 1, n - n // 2, dtype=np.uint64, endpoint=True).view(np.float64)
    return np.concatenate([scaled, patterns])


def _data(dtype, n=1 << 16):
    """(numpy values, the tensor of them in ``dtype``); bfloat16 from float32 patterns by
    their top halves (torch's float32 -> bfloat16 cast would round)."""
    if dtype == torch.float64:
        x = _float64_data(n)
        return x, torch.from_numpy(x)
    halves = np.resize(np.arange(1 << 16, dtype=np.uint16), n)
    if dtype == torch.float16:
        x = halves.view(np.float16)
        return x, torch.from_numpy(x)
    if dtype == torch.bfloat16:
        x = (halves.astype(np.uint32) << np.uint32(16)).view(np.float32)
        return x, torch.from_numpy(halves.view(np.int16)).view(torch.bfloat16)
    x = _float32_data(n)
    return x, torch.from_numpy(x)


def _check(fmt, dtype, options=(False, True, "after"), lengths=LENGTHS, seeds=SEEDS):
    """The compiled route equals softfloat.quantize bit for bit (stochastic rounding)."""
    saturate, subnormals, tininess = options
    for n in lengths:
        x, t = _data(dtype, n)
        for seed in seeds:
            got = sft.quantize(t, fmt, "stochastic", rng=seed, saturate=saturate, subnormals=subnormals,
                               tininess=tininess)
            expected = sf.quantize(x, fmt, "stochastic", rng=seed, saturate=saturate, subnormals=subnormals,
                                   tininess=tininess)
            got = got.float() if got.dtype == torch.bfloat16 else got  # exact, NaNs too
            wrong = np.nonzero(_bits(got.numpy()) != _bits(expected))[0]
            assert wrong.size == 0, (f"{fmt} from {dtype}, {options}, n={n}, seed={seed}: {wrong.size} differ, "
                                     f"e.g. x={x[wrong[:3]]} got {got.numpy()[wrong[:3]]} "
                                     f"expected {expected[wrong[:3]]}")
    assert compiled_module.compile_failures() == {}


def test_stochastic_kernel_compiles_without_the_multiplier_in_an_index(compiled):
    made, code = compiled
    _check("e4m3", torch.float32)
    assert len(made) == 1  # compiled (once, both lengths in one bucket), no fallback
    assert code, "inductor wrote no kernel: the route did not compile"
    lines = "\n".join(code).splitlines()
    with_golden = [line for line in lines if GOLDEN_LITERAL in line]
    assert with_golden, "the SplitMix64 multiplier is not in the generated kernel"
    index = re.compile(r"\bx\d+\b|\bxindex\b|arange")  # an index variable, a vectorised index
    folded = [line.strip() for line in with_golden if index.search(line)]
    assert folded == [], f"the multiplier was folded into an index expression: {folded[:2]}"


def test_stochastic_kernel_compiled_64_bit_words(compiled):
    made, _ = compiled
    _check("bf16", torch.float64, lengths=(1 << 16, 3))  # 3 elements: padded into the same bucket
    assert len(made) == 1


FAMILIES = [sf.fp64, sf.fp32, sf.tf32, sf.fp16, sf.bf16, sf.fp8_e4m3, sf.fp8_e5m2, sf.fp8_e4m3fnuz,
            sf.fp8_e5m2fnuz, sf.fp6_e3m2, sf.fp6_e2m3, sf.fp4_e2m1, sf.Format(9, 5), sf.Format(11, 30),
            sf.Format(10, 52, "fn"), sf.Format(8, 23, "fnuz"), sf.Format(3, 12, "fn")]
CASES = ([(fmt, torch.float32, (False, True, "after")) for fmt in FAMILIES]
         + [(fmt, torch.float32, options) for fmt in (sf.bf16, sf.fp8_e4m3, sf.fp4_e2m1)
            for options in ((True, False, "after"), (False, False, "before"))]
         + [(sf.fp8_e5m2, torch.float16, (False, True, "after")), (sf.fp16, torch.bfloat16, (True, True, "after")),
            (sf.fp16, torch.float64, (False, False, "before")), (sf.Format(10, 52, "fn"), torch.float64,
                                                                  (False, True, "after")),
            (sf.fp8_e4m3, torch.bfloat16, (False, True, "after"))])


@pytest.mark.slow
@pytest.mark.parametrize("fmt, dtype, options", CASES, ids=lambda v: str(getattr(v, "name", v)))
def test_stochastic_compiled_every_family(compiled, fmt, dtype, options):
    made, _ = compiled
    lengths = LENGTHS + ((1 << 17) + 3,) if fmt is sf.bf16 and dtype == torch.float32 else LENGTHS
    _check(fmt, dtype, options, lengths=lengths)
    assert len(made) == 1
