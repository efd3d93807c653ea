"""The accumulation models' compiled kernels (softfloat.torch._accumulate_compiled, modes
"always") against softfloat.matmul with the numpy reference switched off, bits and
swamped counts: the fp32 accumulator's sequential chain by compiled tiles (tails shorter
than a tile, padded with -0 terms; promotion blocks, c, batches, infinities, NaNs,
subnormals and signed zeros; every pair of FP8 patterns as a one-term chain, the -0
start), and every tensor-core model's fused steps (every format it takes, blocks, c,
specials; every FP8 pair as one product).

Most tests trace the tiles with dynamo and run the traced graph eagerly (backend
"eager": the compiled route's plumbing and the kernel's arithmetic as written), with an
8-k tile whose traces the tests share (tracing a 64-k tile takes seconds each time); one
test compiles the tiles with inductor on the CPU (C++ kernels, a 16-k tile: tens of
seconds; skipped where inductor finds no C++ compiler).  CUDA's Triton kernels
are checked by tools/gpu_device_check.py."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import softfloat as sf  # noqa: E402
from softfloat.torch import _accumulate  # noqa: E402
from tests.torch_checks import check_matmul_bits, require_cpp_compiler  # noqa: E402

tiles = importlib.import_module("softfloat.torch._accumulate_compiled")
shared = importlib.import_module("softfloat.torch._compiled")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")


def _refuse(*args, **kwargs):
    raise AssertionError("fell back to the numpy reference")


#: the traced tests' tile: short tails, whole tiles and several tiles at small K
_TILE = 8


def _route(monkeypatch, compiler, tile):
    """The compiled tiles of ``tile`` k's on CPU tensors with ``compiler``; returns the
    list of the compiled calls, one (kernel, counting, rank) each: kernel "accumulate"
    (the tiles) or "fused" (the fused adder's steps)."""
    monkeypatch.setattr(_accumulate, "_reference", _refuse)
    monkeypatch.setattr(tiles, "MODE", "always")
    monkeypatch.setattr(tiles, "FUSED_MODE", "always")
    monkeypatch.setattr(tiles, "_compile", compiler)
    monkeypatch.setattr(tiles, "TILE", tile)
    calls = []
    real = shared.run

    def spy(name, *args):
        if name[0] == "accumulate":
            calls.append(name[:3])
        elif name[0] == "fused":
            calls.append((name[0],) + name[2:4])
        return real(name, *args)
    monkeypatch.setattr(shared, "run", spy)
    return calls


def _traced_only(fn):
    return torch.compile(fn, fullgraph=True, dynamic=True, backend="eager")


@pytest.fixture
def traced(monkeypatch):
    """The tiles traced by dynamo (artifacts kept from test to test: the same compiler)."""
    yield _route(monkeypatch, _traced_only, _TILE)


@pytest.fixture
def fresh_route():
    """For a test with a compiler of its own: no artifact or failure before or after it."""
    shared.reset()
    yield
    shared.reset()


def _patterns(rng, fmt, shape, specials=0.0, spread=6):
    """Values 2**[-spread, spread] apart with zeros of both signs, subnormals (not for
    bf16: a product of two is not exact in float32, a chain the tiles do not take) and,
    at density ``specials``, infinities and NaNs."""
    f = sf.as_format(fmt)
    v = rng.standard_normal(shape) * 2.0 ** rng.integers(-spread, spread + 1, shape)
    v[rng.random(shape) < 0.05] = 0.0
    bits = sf.encode(v, f, saturate=True).astype(np.int64)
    bits = np.where(rng.random(shape) < 0.05, bits | f.sign_mask, bits)  # -0 among them
    sub = rng.integers(1, 1 << f.mantissa_bits, shape) | (rng.integers(0, 2, shape) * f.sign_mask)
    bits = np.where(rng.random(shape) < (0.0 if f == sf.bf16 else 0.03), sub, bits)
    if specials:
        nans_infs = [int(sf.encode(np.array(x), f)) for x in (np.nan, np.inf, -np.inf)]
        bits = np.where(rng.random(shape) < specials, rng.choice(nans_infs, shape), bits)
    return bits


def _check(a, b, fmt, c=None, accumulator="fp32", **kwargs):
    """matmul_bits (bits; bits and swamped counts) equals sf.matmul."""
    return check_matmul_bits(a, b, fmt, c=c, accumulator=accumulator, **kwargs)


#: K around the tile: one term, a short tile, exactly one, one over, several with a tail
_KS = [1, 5, 8, 9, 37]
_PAIRS = [("fp16", None), ("bf16", None), ("fp8_e4m3", None), ("fp8_e4m3", "fp8_e5m2")]


@pytest.mark.parametrize("pair", _PAIRS, ids=lambda p: "x".join(x for x in p if x))
@pytest.mark.parametrize("K", _KS)
def test_tiles_equal_reference(traced, pair, K):
    fmt, b_fmt = pair
    rng = np.random.default_rng(K)
    a = _patterns(rng, fmt, (9, K), specials=0.01)
    b = _patterns(rng, b_fmt or fmt, (K, 11), specials=0.01)
    _check(a, b, fmt, b_format=b_fmt)
    assert traced and all(kind == "accumulate" and rank == 2 for kind, _, rank in traced)
    assert {counting for _, counting, _ in traced} == {False, True}


@pytest.mark.parametrize("block", [1, 5, 8, 20, 128])
@pytest.mark.parametrize("with_c", [False, True])
def test_tiles_with_promotion_blocks_and_c(traced, block, with_c):
    rng = np.random.default_rng(block)
    a, b = _patterns(rng, "bf16", (7, 45), spread=20), _patterns(rng, "bf16", (45, 5), spread=20)
    c = None
    if with_c:  # fp32 patterns: zeros of both signs, a subnormal, a NaN, values
        c = sf.encode(rng.standard_normal((7, 5)) * 1e3, sf.fp32).astype(np.int64)
        c[0, :4] = [0, 0x8000_0000, 1, 0x7FC0_0000]
    _check(a, b, "bf16", c=c, block=block)
    assert traced


def test_signed_zeros_every_sign_pattern_of_three_terms(traced):
    """Every chain of three terms from {+0, -0, +1, -1, +-smallest subnormal} products
    (fp16): the -0 start and the sign of every zero sum; with c = +0 and -0 too."""
    f = sf.fp16
    values = np.array([0, f.sign_mask, 0x3C00, 0xBC00, 1, 1 | f.sign_mask], dtype=np.int64)
    combos = np.array(np.meshgrid(values, values, values, indexing="ij")).reshape(3, -1).T  # (216, 3)
    one = np.int64(0x3C00)
    a = combos                                            # row i: the three terms' a
    b = np.full((3, 2), one)                              # times 1 and times -1
    b[:, 1] |= f.sign_mask
    _check(a, b, "fp16")
    for zero in (0, 0x8000_0000):
        _check(a, b, "fp16", c=np.full((216, 2), zero, dtype=np.int64))
    assert traced


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
def test_every_fp8_pair_as_one_term(traced, fmt):
    """Every product of two FP8 patterns, infinities and NaNs included, as a chain of one
    term (the -0 start must give each product itself, -0 included)."""
    every = np.arange(256, dtype=np.int64)
    _check(every[:, None], every[None, :], fmt)
    assert traced


def test_batches_broadcast(traced):
    rng = np.random.default_rng(5)
    a = _patterns(rng, "fp16", (2, 1, 6, 20))
    b = _patterns(rng, "fp16", (3, 20, 4))
    _check(a, b, "fp16")
    assert {rank for _, _, rank in traced} == {4}


def test_products_not_exact_stay_eager(traced):
    """Products rounded into fp32 (product="fp32") are not exact: a contracted kernel
    could skip their rounding, so their chain is not compiled; nor the float64 chain of
    exact products that are no float32 values (bf16 subnormals)."""
    rng = np.random.default_rng(6)
    a = sf.encode(rng.standard_normal((5, 80)), sf.fp32).astype(np.int64)
    b = sf.encode(rng.standard_normal((80, 4)), sf.fp32).astype(np.int64)
    _check(a, b, "fp32", product="fp32")
    a16, b16 = _patterns(rng, "bf16", (5, 80)), _patterns(rng, "bf16", (80, 4))
    _check(a16, b16, "bf16", product="fp32")
    a16[0, 0] = b16[0, 0] = 1  # 2**-133 * 2**-133
    _check(a16, b16, "bf16")
    assert traced == []


def test_default_modes_compile_nothing_for_cpu_tensors(monkeypatch, fresh_route):
    """By default ("auto": CUDA tensors with Triton, since the H200 run showed the kernels
    equal there) the eager code answers CPU tensors; "always" compiles the same calls."""
    assert tiles.MODE == "auto" and tiles.FUSED_MODE == "auto"
    monkeypatch.setattr(_accumulate, "_reference", _refuse)
    made = []
    monkeypatch.setattr(tiles, "_compile", lambda fn: made.append(fn) or fn)
    rng = np.random.default_rng(7)
    a, b = _patterns(rng, "bf16", (4, 70)), _patterns(rng, "bf16", (70, 3))
    _check(a, b, "bf16")
    _check(a, b, "bf16", accumulator="h100")
    assert made == []
    monkeypatch.setattr(tiles, "MODE", "always")
    monkeypatch.setattr(tiles, "FUSED_MODE", "always")
    _check(a, b, "bf16")
    _check(a, b, "bf16", accumulator="h100")
    assert len(made) == 4  # tiles and steps, each with and without the swamped count


def test_failing_compiler_falls_back_with_one_warning(monkeypatch, fresh_route):
    def broken(fn):
        def fail(*args):
            raise RuntimeError("no backend")
        return fail
    _route(monkeypatch, broken, _TILE)
    rng = np.random.default_rng(8)
    a, b = _patterns(rng, "fp16", (4, 90)), _patterns(rng, "fp16", (90, 3))
    with pytest.warns(RuntimeWarning, match="torch.compile of the fp32 accumulation tile.*eager"):
        _check(a, b, "fp16")
    failures = shared.failures()
    assert set(failures) == {"fp32 accumulation tile rank 2 cpu", "fp32 accumulation tile counting rank 2 cpu"}
    assert all("RuntimeError: no backend" in m for m in failures.values())


#: the hardware models each input format has (sf.accumulate.hardware_model's table)
_FUSED = {"fp16": ["h100", "h100-mma", "a100", "v100", "ada", "b200"], "bf16": ["h100", "h100-mma", "a100", "ada", "b200"],
          "fp8_e4m3": ["h100", "h100-mma", "ada", "b200"], "fp8_e5m2": ["h100", "h100-mma", "ada", "b200"]}


@pytest.mark.parametrize("fmt, acc", [(f, acc) for f in _FUSED for acc in _FUSED[f]])
def test_fused_steps_equal_reference(traced, fmt, acc):
    """Every tensor-core model on every format it takes: a tail block, promotion blocks,
    c with zeros of both signs and a NaN, infinities and NaNs among the operands."""
    rng = np.random.default_rng(len(fmt) * 31 + len(acc))
    a = _patterns(rng, fmt, (6, 75), specials=0.01, spread=4)
    b = _patterns(rng, fmt, (75, 7), specials=0.01, spread=4)
    _check(a, b, fmt, accumulator=acc)
    _check(a, b, fmt, accumulator=acc, block=40)
    c = sf.encode(rng.standard_normal((6, 7)) * 8, sf.fp32).astype(np.int64)
    c[0, :3] = [0, 0x8000_0000, 0x7FC0_0000]
    _check(a, b, fmt, c=c, accumulator=acc)
    assert {(kind, counting) for kind, counting, _ in traced} == {("fused", False), ("fused", True)}


@pytest.mark.parametrize("acc", ["h100", "a100"])
def test_fused_signed_zeros(traced, acc):
    """Every sign pattern of three products from {+-0, +-1, +-smallest subnormal, +-largest}
    (fp16), from c = +0 and c = -0: an exact zero sum is -0 only where c is -0 and every
    product is -0 (a negative product truncated to nothing does not make it -0)."""
    f = sf.fp16
    values = np.array([0, 1, 0x3C00, 0x7BFF], dtype=np.int64)
    values = np.concatenate([values, values | f.sign_mask])
    a = np.array(np.meshgrid(values, values, values, indexing="ij")).reshape(3, -1).T  # (512, 3)
    b = np.array([[0x3C00, 0xBC00]] * 3, dtype=np.int64)  # times 1 and times -1
    for zero in (0, 0x8000_0000):
        _check(a, b, "fp16", c=np.full((a.shape[0], 2), zero, dtype=np.int64), accumulator=acc)
    assert traced


@pytest.mark.parametrize("acc", ["h100", "h100-mma"])
def test_fused_every_fp8_pair_as_one_product(traced, acc):
    """Every e4m3 x e5m2 product as a step of one term (its sign of zero, infinities and
    NaNs; "h100-mma" through fp16's exponent range)."""
    every = np.arange(256, dtype=np.int64)
    _check(every[:, None], every[None, :], "fp8_e4m3", b_format="fp8_e5m2", accumulator=acc)
    assert traced


def test_inductor_tiles_equal_reference(monkeypatch, fresh_route):
    """The real compiler (inductor's C++ kernels, a 16-k tile to keep the compile short):
    bits and swamped counts equal the reference's, tails, blocks, specials and
    subnormals included, with no compile failure; and the "h100" fused steps."""
    require_cpp_compiler()
    calls = _route(monkeypatch, tiles._compile, 16)
    rng = np.random.default_rng(9)
    a = _patterns(rng, "bf16", (12, 45), specials=0.01, spread=30)
    b = _patterns(rng, "bf16", (45, 10), specials=0.01, spread=30)
    _check(a, b, "bf16")
    _check(a, b, "bf16", block=20)
    _check(_patterns(rng, "fp16", (8, 33)), _patterns(rng, "fp16", (33, 6)), "fp16")
    e4m3, e5m2 = _patterns(rng, "fp8_e4m3", (8, 40), specials=0.02), _patterns(rng, "fp8_e5m2", (40, 6), specials=0.02)
    _check(e4m3, e5m2, "fp8_e4m3", b_format="fp8_e5m2", accumulator="h100", block=36)
    assert {kind for kind, _, _ in calls} == {"accumulate", "fused"} and shared.failures() == {}


def test_compiled_kernels_compile_once_inside_and_outside_emulate(monkeypatch, fresh_route):
    """A compiled call runs with no torch function mode on the stack and its float
    constants specialised (softfloat.torch._compiled): emulate's forward products (its
    mode on the stack) and backward ones (none) share one artifact per kernel -- with
    the mode left on, dynamo guarded on the stack and compiled each kernel again, and on
    torch 2.11 that recompile failed (found on an H200).  The bits stay the reference's."""
    from torch._dynamo.testing import CompileCounter

    import softfloat.torch as sft
    from softfloat.torch import _quantize

    counter = CompileCounter()
    _route(monkeypatch, lambda fn: torch.compile(fn, fullgraph=True, dynamic=True, backend=counter), 64)
    monkeypatch.setattr(_accumulate, "_reference", _refuse)
    gen = torch.Generator().manual_seed(3)
    x, w = torch.randn(8, 40, generator=gen), torch.randn(24, 40, generator=gen)
    g = torch.randn(8, 24, generator=gen)

    def step():
        xs, ws = x.clone().requires_grad_(), w.clone().requires_grad_()
        with sft.emulate("fp8", accumulator="h100"):
            y = torch.nn.functional.linear(xs, ws)
            y.backward(g)
        return [t.detach().view(torch.int32) for t in (y, xs.grad, ws.grad)]

    want = step()  # CPU tensors: the numpy engine
    monkeypatch.setattr(_accumulate, "torch_path", lambda device: True)
    monkeypatch.setattr(_quantize, "_CPU_ROUTE", "torch")
    got = step()
    assert all(torch.equal(a, b) for a, b in zip(got, want))
    names = [n for n in shared._CACHE if n[0] == "fused"]
    assert names and not shared.failures()
    assert counter.frame_count == len(names)
