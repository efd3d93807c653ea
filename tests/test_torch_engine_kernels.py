"""GemmEngine with softfloat.torch's kernels (every bit-level call on torch tensors) equals
GemmEngine with numpy's kernels (softfloat's functions: the reference, whose compositions
tests/test_recipes.py checks against the bit-level API) bit for bit -- values, records and
delayed-scaling state -- for every recipe and product kind, on random and adversarial
operands (zeros, -0, swamping, cancellation, overflow, inf - inf, NaN, subnormal sums)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

from tests.accumulate_checks import adversarial_operands  # noqa: E402

from softfloat.recipes import KINDS, RECIPES, GemmEngine, OperandRecord  # noqa: E402
from softfloat.recipes.kernels import NUMPY_KERNELS, Kernels  # noqa: E402
from softfloat.torch._engine_kernels import TORCH_KERNELS, TorchKernels  # noqa: E402

M, K, N = 8, 160, 12  # K: two runs of 128 (fp8-block), five MX blocks of 32
#: the format each kind's result is rounded into (as softfloat.torch.emulate does)
_OUT = {"fprop": "activations", "dgrad": "gradients", "wgrad": "gradients"}


def _operands(data: str):
    rng = np.random.default_rng(7)
    if data.startswith("adversarial"):  # float64 (a float64 model's tensors) and float32
        a, b = adversarial_operands(rng, M, K, N)
        bias = rng.standard_normal(N) * 4
        return (a, b, bias) if data == "adversarial" else tuple(v.astype(np.float32) for v in (a, b, bias))
    a = (rng.standard_normal((M, K)) * np.exp2(rng.integers(-30, 10, (M, K)))).astype(np.float32)
    b = (rng.standard_normal((K, N)) * np.exp2(rng.integers(-12, 4, (K, N)))).astype(np.float32)
    return a, b, rng.standard_normal(N).astype(np.float32)


def _same_bits(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    return got.tobytes() == want.tobytes()


def _same_number(x, y) -> bool:
    if x is None or y is None:
        return x is y
    return _same_bits(np.asarray(x, np.float64), np.asarray(y, np.float64))


def same_record(got, want) -> bool:
    """Equal GemmRecords: every count, the amax and scales by their bits."""
    if got is None or want is None:
        return got is want
    if isinstance(want, OperandRecord):
        counts = ("format", "elements", "underflow_zero", "underflow_subnormal", "overflow", "nonfinite")
        return (all(getattr(got, f) == getattr(want, f) for f in counts)
                and _same_number(got.amax, want.amax) and _same_number(got.scale, want.scale))
    return ((got.kind, got.key, got.additions, got.swamped) == (want.kind, want.key, want.additions, want.swamped)
            and all(same_record(getattr(got, f), getattr(want, f)) for f in ("a", "b", "output")))


def _host(values):
    return values.cpu().numpy() if isinstance(values, torch.Tensor) else values


@pytest.mark.parametrize("recipe", sorted(RECIPES))
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("data", ["random", "adversarial", "adversarial32"])
def test_torch_kernels_give_the_numpy_engines_bits(recipe, kind, data):
    a, b, bias = _operands(data)
    out = getattr(RECIPES[recipe], _OUT[kind])
    for bias_epilogue in (False, True):
        engines = {k: GemmEngine(recipe, kernels=k, bias_epilogue=bias_epilogue)
                   for k in (NUMPY_KERNELS, TORCH_KERNELS)}
        for step in range(2):  # delayed scaling: the second step scales by the first's amax
            for record, output, with_bias in ((True, out, True), ("operands", None, False), (False, out, False)):
                got = {}
                for k, eng in engines.items():
                    x, y, c = (a, b, bias) if k is NUMPY_KERNELS else (torch.from_numpy(v) for v in (a, b, bias))
                    got[k] = eng.gemm(x, y, kind, "site", bias=c if with_bias else None, out=output, record=record)
                want, have = got[NUMPY_KERNELS], got[TORCH_KERNELS]
                if record:
                    (want, want_rec), (have, have_rec) = want, have
                    assert same_record(have_rec, want_rec), (step, record, have_rec, want_rec)
                assert isinstance(have, torch.Tensor)
                assert _same_bits(_host(have), want), (step, record, bias_epilogue)
            for eng in engines.values():
                eng.new_step()
        states = [{key: (s.scale, s.amax_history.tolist()) for key, s in eng.states.items()} for eng in engines.values()]
        assert states[0] == states[1]


@pytest.mark.parametrize("recipe", sorted(RECIPES))
@pytest.mark.parametrize("kind", KINDS)
def test_stacks_of_one_call_give_the_numpy_engines_bits(recipe, kind):
    a, b, bias = _operands("random")
    a3 = np.stack([a, a[::-1] * np.float32(2.0**20)])  # a per-tensor scale over both entries
    b3 = np.stack([b, b[:, ::-1]])
    out = getattr(RECIPES[recipe], _OUT[kind])
    want, want_rec = GemmEngine(recipe, bias_epilogue=True).gemm(a3, b3, kind, "s", bias=bias, out=out, record=True)
    have, have_rec = GemmEngine(recipe, bias_epilogue=True, kernels=TORCH_KERNELS).gemm(
        torch.from_numpy(a3), torch.from_numpy(b3), kind, "s", bias=torch.from_numpy(bias), out=out, record=True)
    assert _same_bits(_host(have), want) and same_record(have_rec, want_rec)


def test_torch_kernels_override_every_numpy_operation():
    # a method left to the numpy base class would run numpy on tensors (or on host copies)
    names = {n for n, v in vars(Kernels).items() if callable(v) and not n.startswith("_")} - {"replace"}
    assert names and names <= set(vars(TorchKernels))


def test_tensors_stay_on_their_device_and_their_dtype_is_widened():
    a = torch.tensor([[1.0, 2.0**-9]], dtype=torch.bfloat16)
    b = torch.ones(2, 1, dtype=torch.float16)
    eng = GemmEngine("bf16", kernels=TORCH_KERNELS)
    got = eng.gemm(a, b, "fprop", "l")
    want = eng.gemm(a.float().numpy(), b.float().numpy(), "fprop", "l")  # numpy arrays: numpy's kernels
    assert isinstance(got, torch.Tensor) and got.device == a.device and isinstance(want, np.ndarray)
    assert _same_bits(got.numpy(), want)


def test_kernels_argument_is_checked_and_matmul_is_a_shortcut():
    with pytest.raises(TypeError, match="kernels must be a softfloat.recipes.kernels.Kernels"):
        GemmEngine("bf16", kernels="torch")
    with pytest.raises(TypeError, match="kernels must be"):
        GemmEngine("bf16", kernels=object())
    calls = []

    def spy(*args, **kwargs):
        calls.append(1)
        return TORCH_KERNELS.matmul(*args, **kwargs)
    eng = GemmEngine("bf16", kernels=TORCH_KERNELS, matmul=spy)
    assert isinstance(eng.kernels, TorchKernels) and eng.matmul is spy
    eng.gemm(torch.ones(2, 3), torch.ones(3, 4), "fprop", "l")
    assert calls == [1]
    assert type(GemmEngine("bf16", matmul=spy).kernels) is Kernels


def _nan_operands():
    """float32 a, b (4096 each) with quiet and signaling NaNs of both signs and assorted
    payloads, infinities, zeros and finite values, paired every way."""
    rng = np.random.default_rng(3)
    special = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0xFFA00000, 0x7F800000, 0xFF800000, 0, 0x80000000,
                        0x3F800000, 0x00000001], np.uint32)
    a = rng.choice(special, 4096).view(np.float32).copy()
    b = rng.choice(special, 4096).view(np.float32).copy()
    finite = rng.random(4096) < 0.3
    a[finite] = rng.standard_normal(int(finite.sum())).astype(np.float32)
    return a, b


@pytest.mark.parametrize("op", ["multiply", "add"])
def test_float_arithmetic_gives_the_hosts_nan_bits(op):
    a, b = _nan_operands()
    want = getattr(NUMPY_KERNELS, op)(a, b)
    got = getattr(TORCH_KERNELS, op)(torch.from_numpy(a), torch.from_numpy(b))
    assert _same_bits(got.numpy(), want)


@pytest.mark.parametrize("op", ["multiply", "add"])
def test_a_devices_canonical_nans_become_the_hosts(op):
    # what CUDA's float32 units return for every NaN result (0x7FFFFFFF), put right
    from softfloat.torch._engine_kernels import _host_nans

    a, b = _nan_operands()
    want = getattr(NUMPY_KERNELS, op)(a, b)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    raw = ta * tb if op == "multiply" else ta + tb
    canonical = torch.where(torch.isnan(raw), torch.tensor(0x7FFFFFFF, dtype=torch.int32), raw.view(torch.int32))
    assert _same_bits(_host_nans(ta, tb, canonical.view(torch.float32)).numpy(), want)
