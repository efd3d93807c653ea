"""softfloat.torch.emulate: torch's products, forward and backward, against their
bit-level definitions; call sites and telemetry; errors; torch restored on exit."""

from __future__ import annotations

import logging
import sys
import threading
import warnings

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import torch.nn.functional as F  # noqa: E402

import softfloat as sf  # noqa: E402
import softfloat.torch as sft  # noqa: E402
from tests.torch_checks import bf16_product, tensor  # noqa: E402
from tests.torch_checks import values as _np  # noqa: E402


def _t(shape, seed, spread=8):
    return tensor(shape, seed, spread)


_bf16_product = bf16_product
from softfloat.recipes import GemmEngine  # noqa: E402


def test_linear_bf16_fp32_forward_dgrad_wgrad_are_the_bit_level_products():
    x, w, g = _t((6, 40), 0), _t((5, 40), 1), _t((6, 5), 2).detach()
    with sft.emulate("bf16", accumulator="fp32") as em:
        y = F.linear(x, w)
    y.backward(g)
    assert y.dtype == torch.float32
    assert np.array_equal(_np(y), _bf16_product(_np(x), _np(w).T))
    assert np.array_equal(_np(x.grad), _bf16_product(_np(g), _np(w)))             # dgrad
    assert np.array_equal(_np(w.grad), _bf16_product(_np(x).T, _np(g)).T)         # wgrad
    assert [(r.kind, r.shape) for r in em.telemetry] == [
        ("fprop", (6, 40, 5)), ("dgrad", (6, 5, 40)), ("wgrad", (40, 6, 5))]


def test_linear_bias_is_added_in_the_accumulator_then_rounded_once():
    x, w, b = _t((4, 16), 3), _t((3, 16), 4), _t((3,), 5)
    with sft.emulate("bf16", accumulator="fp32"):
        y = F.linear(x, w, b)
    y.sum().backward()
    a, bw = sf.encode(_np(x), "bf16"), sf.encode(_np(w).T, "bf16")
    acc = sf.decode(sf.matmul(a, bw, "bf16", accumulator="fp32", out_format="fp32"), "fp32")
    expected = sf.quantize((acc + _np(b)).astype(np.float32), "bf16")  # fp32 epilogue, one rounding
    assert np.array_equal(_np(y), expected)
    assert torch.equal(b.grad, torch.ones(4, 3).sum(0))


def test_fp8_h100_is_the_engines_composition():
    x, w, g = _t((8, 64), 6, 3), _t((16, 64), 7, 3), _t((8, 16), 8, 3).detach()
    with sft.emulate("fp8", accumulator="h100") as em:
        y = F.linear(x, w)
    y.backward(g)
    ref = GemmEngine("fp8", accumulator="h100", history="site")
    bf16 = sf.bf16
    assert np.array_equal(_np(y), ref.gemm(_np(x), _np(w).T, "fprop", "linear#1", out=bf16))
    assert np.array_equal(_np(x.grad), ref.gemm(_np(g), _np(w), "dgrad", "linear#1", out=bf16))
    assert np.array_equal(_np(w.grad), ref.gemm(_np(x).T, _np(g), "wgrad", "linear#1", out=bf16).T)
    rec = em.telemetry[0].record
    assert rec.a.format == sf.fp8_e4m3 and em.telemetry[1].record.a.format == sf.fp8_e5m2


def test_matmul_family_against_the_definition():
    a3, b3, b2 = _t((2, 3, 8), 9), _t((2, 8, 4), 10), _t((8, 4), 11)
    c2, c3 = _t((3, 4), 12), _t((2, 3, 4), 13)
    with sft.emulate("bf16", accumulator="fp32") as em:
        batched = a3 @ b3
        folded = torch.matmul(a3, b2)
        vec = torch.matmul(a3[0, 0], b2)
        mm = torch.mm(a3[0], b2)
        bmm = torch.bmm(a3, b3)
        addmm = torch.addmm(c2, a3[1], b2)
        baddbmm = torch.baddbmm(c3, a3, b3)
    for i in range(2):
        assert np.array_equal(_np(batched[i]), _bf16_product(_np(a3[i]), _np(b3[i])))
        assert np.array_equal(_np(bmm[i]), _np(batched[i]))
        assert np.array_equal(_np(folded[i]), _bf16_product(_np(a3[i]), _np(b2)))
    assert np.array_equal(_np(vec), _bf16_product(_np(a3[0, :1]), _np(b2))[0])
    assert np.array_equal(_np(mm), _np(folded[0]))
    eng = GemmEngine("bf16", accumulator="fp32", bias_epilogue=True)
    assert np.array_equal(_np(addmm), eng.gemm(_np(a3[1]), _np(b2), "fprop", "s", bias=_np(c2), out="bf16"))
    assert np.array_equal(_np(baddbmm[1]), eng.gemm(_np(a3[1]), _np(b3[1]), "fprop", "s", bias=_np(c3[1]),
                                                    out="bf16"))
    (batched.sum() + folded.sum()).backward()
    assert {r.kind for r in em.telemetry} == {"fprop", "dgrad", "wgrad"}


def test_dtypes_are_kept():
    for dtype in (torch.float64, torch.bfloat16):
        x, w = _t((3, 8), 14).detach().to(dtype), _t((2, 8), 15).detach().to(dtype)
        with sft.emulate("bf16", accumulator="fp32"):
            y = F.linear(x, w)
        assert y.dtype == dtype
        assert np.array_equal(y.double().numpy(), _bf16_product(x.float().numpy(), w.float().numpy().T))


def test_integer_products_pass_through():
    a = torch.arange(6).reshape(2, 3)
    with sft.emulate("bf16") as em:
        assert torch.equal(a @ a.T, torch.tensor([[5, 14], [14, 50]]))
    assert len(em.telemetry) == 0


@pytest.mark.parametrize("sa, sb", [((3, 0), (0, 5)), ((3, 4), (4, 0)), ((0, 4), (4, 5)), ((2, 3, 0), (0, 4)),
                                    ((2, 3, 4), (2, 4, 0)), ((0, 3, 4), (0, 4, 2))])
def test_products_with_an_empty_axis_are_torchs_forward_and_backward(sa, sb):
    """An empty k gives +0 (the empty sum), an empty m or n an empty result; the
    gradients have the operands' shapes -- torch's own results, exactly."""
    a = torch.ones(sa, requires_grad=True)
    b = torch.ones(sb, requires_grad=True)
    with sft.emulate("bf16"):
        got = a @ b
        got.sum().backward()
    assert torch.equal(got, torch.ones(sa) @ torch.ones(sb))
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    assert not a.grad.any() or a.grad.numel() == 0 or sb[-1] > 0


@pytest.mark.parametrize("dims", [([2], [0]), ([1], [-3])])
def test_tensordot_dims_out_of_range_are_torchs_index_error(dims):
    a, b = torch.ones(2, 3), torch.ones(3, 4)
    with pytest.raises(IndexError) as theirs:
        torch.tensordot(a, b, dims=dims)
    with pytest.raises(IndexError) as ours:
        with sft.emulate("bf16"):
            torch.tensordot(a, b, dims=dims)
    assert str(ours.value) == str(theirs.value)


def test_a_torchscript_module_is_out_of_reach_and_says_so():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit's own deprecation notices
        warnings.filterwarnings("ignore", "`torch.jit", UserWarning)
        scripted = torch.jit.script(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()))
        with pytest.warns(UserWarning, match="RecursiveScriptModule is a TorchScript module") as caught:
            with sft.emulate("bf16") as em:
                scripted(torch.ones(2, 4))
                scripted(torch.ones(2, 4))
    assert len([w for w in caught if "TorchScript module" in str(w.message)]) == 1  # once per block
    assert caught[0].filename == __file__
    assert len(em.telemetry) == 0  # nothing reached the emulation


def test_linear_with_no_inputs_is_the_bias_rounded():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Initializing zero-element tensors", UserWarning)
        layer = torch.nn.Linear(0, 3)
    with torch.no_grad():
        layer.bias.copy_(torch.tensor([0.1, -2.0, 3.3]))
    with sft.emulate("bf16"):
        got = layer(torch.ones(2, 0))
    assert torch.equal(got, layer.bias.detach().expand(2, 3).bfloat16().float())


def test_tracing_under_the_emulation_says_what_to_do():
    """torch.export (fake tensors) and torch.jit.trace cannot record the emulation (numpy
    on the values): a NotImplementedError saying so, not ".numpy() is not supported for
    tensor subclasses" from inside a kernel, nor a broken trace ("aten::view() Expected a
    value of type 'Tensor'")."""
    layer = torch.nn.Linear(3, 2)
    with pytest.raises(NotImplementedError, match=r"input of linear is a tensor being traced \(a fake tensor"):
        with sft.emulate("bf16"):
            torch.export.export(layer, (torch.randn(2, 3),))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "`torch.jit.trace", DeprecationWarning)
        with pytest.raises(NotImplementedError, match=r"being traced \(torch.jit.trace\).*outside softfloat"):
            with sft.emulate("bf16"):
                torch.jit.trace(layer, torch.randn(2, 3))


def test_bad_tensors_and_names():
    with pytest.raises(TypeError, match="input of matmul .*complex"):
        with sft.emulate("bf16"):
            torch.matmul(torch.ones(2, 2, dtype=torch.complex64), torch.ones(2, 2, dtype=torch.complex64))
    with pytest.raises(ValueError, match="device meta"):
        with sft.emulate("bf16"):
            F.linear(torch.ones(2, 2, device="meta"), torch.ones(2, 2, device="meta"))
    with pytest.raises(ValueError, match="^recipe"):
        sft.emulate("fp9")
    w = torch.ones(4, 2)
    for transform in (torch.func.vmap(lambda x: x @ w), torch.func.grad(lambda x: (x @ w).sum())):
        with pytest.raises(NotImplementedError, match="input of matmul is a tensor inside a torch.func transform"):
            with sft.emulate("bf16"):
                transform(torch.ones(3, 4))
    with pytest.raises(NotImplementedError, match="elementwise result is a tensor inside a torch.func"):
        with sft.emulate("bf16-pure", elementwise=True):
            torch.func.vmap(lambda x: x + 1)(torch.ones(3, 4))
    with pytest.raises(ValueError, match="^accumulator"):
        sft.emulate("bf16", accumulator="h900")


def _torch_state():
    from torch.nn.modules import module
    return (torch._C._len_torch_function_stack(), len(module._global_forward_pre_hooks),
            len(module._global_forward_hooks), len(module._global_forward_hooks_always_called))


def test_leaving_restores_torch_even_after_an_error():
    before = _torch_state()
    x, w = _t((3, 8), 16), _t((2, 8), 17)
    with pytest.raises(RuntimeError, match="boom"):
        with sft.emulate("bf16", accumulator="fp32") as em:
            assert _torch_state() != before
            raise RuntimeError("boom")
    assert _torch_state() == before
    assert torch.equal(F.linear(x, w), x @ w.T) and len(em.telemetry) == 0


def test_backward_after_the_block_is_emulated():
    x, w = _t((3, 8), 18), _t((2, 8), 19)
    with sft.emulate("bf16", accumulator="fp32") as em:
        y = F.linear(x, w)
    assert len(em.telemetry) == 1
    y.sum().backward()
    assert [r.kind for r in em.telemetry] == ["fprop", "dgrad", "wgrad"]
    assert np.array_equal(_np(x.grad), _bf16_product(np.ones((3, 2), np.float32), _np(w)))
    assert "linear#1" in em.report()


def test_nested_inner_wins():
    x, w = _t((3, 8), 20), _t((2, 8), 21)
    with sft.emulate("fp32") as outer:
        with sft.emulate("bf16", accumulator="fp32") as inner:
            y = F.linear(x, w)
        z = F.linear(x, w)
    assert len(inner.telemetry) == 1 and len(outer.telemetry) == 1
    assert np.array_equal(_np(y), _bf16_product(_np(x), _np(w).T))
    assert not torch.equal(y, z)


def test_other_threads_run_plain_torch():
    x, w = _t((4, 32), 22).detach(), _t((3, 32), 23).detach()
    seen = {}
    with sft.emulate("bf16", accumulator="fp32") as em:
        thread = threading.Thread(target=lambda: seen.update(y=F.linear(x, w), m=torch.nn.Linear(2, 2)(x[:, :2])))
        thread.start()
        thread.join()
        mine = F.linear(x, w)
    assert torch.equal(seen["y"], torch.mm(x, w.T)) and len(em.telemetry) == 1
    assert np.array_equal(_np(mine), _bf16_product(_np(x), _np(w).T))


class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.Linear(8, 8)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 8))

    def forward(self, x):
        h = self.attn(x)
        return self.mlp(h @ h.transpose(-1, -2) @ h)


def test_call_sites_are_module_paths():
    model = torch.nn.Sequential(_Block(), _Block())
    x = _t((2, 5, 8), 24)
    for _ in range(2):
        with sft.emulate("bf16", accumulator="fp32", model=model) as em:
            model(x).sum().backward()
            torch.ones(2, 2) @ torch.ones(2, 2)
    sites = {r.site for r in em.telemetry}  # a Block's own two products: "0" and "0#2"
    assert {"0.attn", "0.mlp.0", "0.mlp.2", "1.attn", "0", "0#2", "1#2", "matmul#1"} <= sites
    assert {r.kind for r in em.telemetry if r.site == "1.mlp.2"} == {"fprop", "dgrad", "wgrad"}
    text = em.report()
    assert "0.mlp.2" in text and "swamped" in text
    assert len(em.telemetry.rows()) == len(em.telemetry)


def test_to_pandas_names_its_extra(monkeypatch):
    x, w = _t((3, 8), 25), _t((2, 8), 26)
    with sft.emulate("bf16") as em:
        F.linear(x, w)
    pytest.importorskip("pandas")
    assert list(em.telemetry.to_pandas()["kind"]) == ["fprop"]
    monkeypatch.setitem(sys.modules, "pandas", None)   # as if it were not installed
    with pytest.raises(ImportError, match=r"softfloat-emu\[pandas\]"):
        em.telemetry.to_pandas()


def test_elementwise_rounds_activations():
    x = _t((3, 8), 27).detach()
    with sft.emulate("bf16-pure", elementwise=True):
        y = F.gelu(x) + x
    assert np.array_equal(_np(y), sf.quantize(sf.quantize(_np(F.gelu(x)), "bf16") + _np(x), "bf16"))


def test_delayed_scaling_backward_uses_the_forwards_scales():
    # Transformer Engine reuses the forward's FP8 copies of the input and the weight in
    # dgrad and wgrad: the same scales; each iteration's amaxes join the history at the
    # site's next forward product
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 2))
    x = torch.randn(16, 4) * 100
    with sft.emulate("fp8", accumulator="h100", model=model) as em:
        for _ in range(3):
            model(x).square().sum().backward()
    by = {}
    for t in em.telemetry:
        by.setdefault((t.site, t.kind), []).append(t.record)
    for it in range(3):
        fprop0, wgrad0 = by[("0", "fprop")][it], by[("0", "wgrad")][it]
        assert fprop0.a.scale == wgrad0.a.scale          # layer 0's input
        fprop2, dgrad2 = by[("2", "fprop")][it], by[("2", "dgrad")][it]
        assert fprop2.b.scale == dgrad2.b.scale          # layer 2's weight
    # the history moves between iterations (the first scale is 1, then amax-driven)
    assert by[("0", "fprop")][0].a.scale == 1.0 != by[("0", "fprop")][1].a.scale


class _Nested(torch.nn.Module):
    """Modules inside modules, the root named by the first call (the hooks that name call
    sites run inside dynamo's trace of a compiled model)."""

    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU())
                                           for _ in range(2)])
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return self.head(x)


@pytest.mark.filterwarnings("ignore::UserWarning")  # dynamo's notes on what it does not trace
@pytest.mark.parametrize("nested", [False, True])
def test_a_compiled_model_runs_the_same_emulated_products(nested):
    """torch.compile'd models: dynamo breaks the graph around each emulated product (it
    must not trace softfloat's numpy kernels), so the bits, gradients and telemetry are
    the eager model's."""
    torch._dynamo.reset()
    torch.manual_seed(3)
    model = _Nested() if nested else torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                                         torch.nn.Linear(16, 4))
    x = torch.randn(32, 8)

    def run(m):
        model.zero_grad()
        with sft.emulate("bf16", accumulator="fp32", model=None if nested else model) as em:
            out = m(x)
            out.square().sum().backward()
        return out.detach(), [p.grad.clone() for p in model.parameters()], [(r.site, r.kind) for r in em.telemetry]

    eager, compiled = run(model), run(torch.compile(model, backend="eager"))
    assert torch.equal(eager[0], compiled[0])
    assert all(torch.equal(a, b) for a, b in zip(eager[1], compiled[1]))
    assert eager[2] == compiled[2] and len(eager[2]) == (8 if nested else 5)


def test_a_compiled_model_gets_no_note_of_untraceable_hooks():
    """The call-site hooks read the thread's identity, which dynamo cannot trace: it
    warned "Dynamo does not know how to trace the builtin `_thread.get_ident`" at each
    module; the hooks run eagerly (as the products do), and only torch's own note on
    global hooks and torch.compile(module) is left."""
    torch._dynamo.reset()
    model, x = _Nested(), torch.randn(4, 8)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        with sft.emulate("bf16") as em:
            torch.compile(model, backend="eager")(x)
    assert len(em.telemetry) == 3
    assert [str(w.message)[:60] for w in got if "global hooks" not in str(w.message)] == []


class _Attending(torch.nn.Module):
    """Many kinds of torch call between the products (views, cat, softmax, rsqrt)."""

    def __init__(self):
        super().__init__()
        self.a, self.norm, self.b = torch.nn.Linear(8, 8), torch.nn.LayerNorm(8), torch.nn.Linear(8, 8)

    def forward(self, x):
        q = self.a(self.norm(x)).view(2, 4, 2, 4).transpose(1, 2)
        k = torch.cat([q, q], 2)
        y = (torch.softmax(q @ k.transpose(-1, -2) * 0.5, -1) @ k).transpose(1, 2).reshape(2, 4, 8)
        return x + self.b(F.silu(y)) * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-6)


@pytest.mark.filterwarnings("ignore::UserWarning")  # dynamo's notes on what it does not trace
def test_dynamo_does_not_recompile_the_modes_method_as_a_frame(caplog):
    """After each graph break dynamo would compile the mode's __torch_function__ as a
    frame of its own, once per argument type, until its recompile limit (a logged
    warning); the emulation tells it to skip that frame.  The bits stay the eager ones."""
    torch._dynamo.reset()
    torch.manual_seed(5)
    model, x = _Attending(), torch.randn(2, 4, 8)
    with caplog.at_level(logging.WARNING, logger="torch._dynamo"):
        with sft.emulate("bf16"):
            compiled = torch.compile(model, backend="eager")(x)
    with sft.emulate("bf16"):
        eager = model(x)
    assert torch.equal(compiled, eager)
    assert not [r for r in caplog.records if "recompile" in r.getMessage()]


def test_multihead_attention_products_are_the_emulated_steps():
    """nn.MultiheadAttention hands F.multi_head_attention_forward to the mode whole; it
    runs decomposed, so its in-projection, attention and out-projection are emulated --
    equal to those steps written by hand under the same emulation."""
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(16, 2, batch_first=True).eval()
    x = torch.randn(2, 5, 16)
    with torch.no_grad(), sft.emulate("bf16", accumulator="fp32") as em:
        got, _ = mha(x, x, x, need_weights=False)
        n = len(em.telemetry)
        q, k, v = F.linear(x, mha.in_proj_weight, mha.in_proj_bias).chunk(3, dim=-1)

        def heads(t):
            return t.reshape(2, 5, 2, 8).transpose(1, 2)
        o = F.scaled_dot_product_attention(heads(q), heads(k), heads(v))
        want = F.linear(o.transpose(1, 2).reshape(2, 5, 16), mha.out_proj.weight, mha.out_proj.bias)
    assert n > 0 and {r.op for r in em.telemetry[:n]} == {"linear", "attention"}
    assert torch.equal(got, want)
    assert not torch.equal(got, mha(x, x, x, need_weights=False)[0])  # torch's float32 differs


def test_kernels_out_of_reach_warn_once():
    bilinear = torch.nn.Bilinear(3, 4, 5)
    x, y = torch.randn(2, 3), torch.randn(2, 4)
    with sft.emulate("bf16") as em, pytest.warns(UserWarning, match=r"torch.bilinear \(nn.Bilinear\)") as got:
        bilinear(x, y)
        bilinear(x, y)
    assert sum("torch.bilinear" in str(w.message) for w in got) == 1 and len(em.telemetry) == 0


def test_more_of_the_matmul_family_against_the_definition():
    """vdot, tensordot, linalg.matmul, addmv (addmm with a column) and addbmm (ATen's loop
    of addmm_ over the batch: the running result the next bias, rounded each time)."""
    a3, b3, b2 = _t((2, 3, 8), 20), _t((2, 8, 4), 21), _t((8, 4), 22)
    c2, v, u = _t((3, 4), 23), _t((8,), 24), _t((3,), 25)
    eng = GemmEngine("bf16", accumulator="fp32", bias_epilogue=True)
    with sft.emulate("bf16", accumulator="fp32") as em:
        vdot, dot = torch.vdot(v, v), torch.dot(v, v)
        tdot = torch.tensordot(a3, b3, dims=([0, 2], [0, 1]))     # sum over the batch and k
        lm = torch.linalg.matmul(a3[0], b2)
        addmv = torch.addmv(u, a3[0], v)
        addbmm = torch.addbmm(c2, a3, b3)
    assert torch.equal(vdot, dot)
    x = _np(a3).transpose(1, 0, 2).reshape(3, 16)                    # (free, contracted)
    assert np.array_equal(_np(tdot), _bf16_product(x, _np(b3).reshape(16, 4)))
    assert np.array_equal(_np(lm), _bf16_product(_np(a3[0]), _np(b2)))
    want = eng.gemm(_np(a3[0]), _np(v)[:, None], "fprop", "s", bias=_np(u)[:, None], out="bf16")[:, 0]
    assert np.array_equal(_np(addmv), want)
    running = eng.gemm(_np(a3[0]), _np(b3[0]), "fprop", "s", bias=_np(c2), out="bf16")
    running = eng.gemm(_np(a3[1]), _np(b3[1]), "fprop", "s", bias=running, out="bf16")
    assert np.array_equal(_np(addbmm), running)
    assert len(em.telemetry) == 2 + 1 + 1 + 1 + 1 and em.telemetry[-1].batch == 2  # addbmm: one call


def test_linalg_vecdot_is_a_dot_product_per_pair():
    """torch.linalg.vecdot along any dim, with broadcasting: each output the emulated
    torch.dot of its pair (the engine's product of a row and a column); a dim out of
    range is torch's own error."""
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(2, 3, 5, generator=g), torch.randn(3, 5, generator=g)
    with sft.emulate("bf16"):
        got = torch.linalg.vecdot(x, y)
        along = torch.linalg.vecdot(x.transpose(1, 2), y.T, dim=1)
        want = torch.stack([torch.stack([torch.dot(x[i, j], y[j]) for j in range(3)]) for i in range(2)])
        with pytest.raises((IndexError, RuntimeError)):
            torch.linalg.vecdot(x, y, dim=3)
    assert torch.equal(got, want) and torch.equal(along, want)
    assert not torch.equal(got, torch.linalg.vecdot(x, y))  # (bf16 operands and results)
    for xs, ys in (((3, 0), (3, 0)), ((0, 4), (0, 4)), ((2, 1, 4), (3, 4))):  # empty axes, broadcasting
        a, b = torch.randn(*xs, generator=g), torch.randn(*ys, generator=g)
        with sft.emulate("bf16"):
            got = torch.linalg.vecdot(a, b)
        assert got.shape == torch.linalg.vecdot(a, b).shape


@pytest.mark.parametrize("call", [
    lambda: torch.gru(torch.randn(3, 1, 2), torch.zeros(1, 1, 3), [torch.randn(9, 2), torch.randn(9, 3)],
                      has_biases=False, num_layers=1, dropout=0.0, train=False, bidirectional=False,
                      batch_first=False),  # keyword arguments: not written out
    lambda: torch.linalg.matrix_power(torch.randn(3, 3), -3),
    lambda: torch.nn.Bilinear(3, 4, 5)(torch.randn(2, 3), torch.randn(2, 4)),
    lambda: torch.matrix_exp(torch.randn(3, 3)),
    lambda: torch.randn(2, 3, 3).matrix_exp(),
    lambda: torch.nn.EmbeddingBag(10, 4, mode="sum")(torch.tensor([1, 2, 4, 5]), torch.tensor([0, 2]),
                                                     per_sample_weights=torch.rand(4)),
    lambda: F.embedding_bag(torch.tensor([[1, 2]]), torch.randn(5, 3), mode="sum",
                            per_sample_weights=torch.rand(1, 2)),
    lambda: torch.cov(torch.randn(3, 6)),
    lambda: torch.conv_tbc(torch.randn(5, 1, 2), torch.randn(3, 2, 4), torch.zeros(4)),
    lambda: torch._addmm_activation(torch.randn(5), torch.randn(3, 4), torch.randn(4, 5)),
    lambda: torch.randn(3, 6).corrcoef(),
    lambda: torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(4, 3), orthogonal_map="householder"),
    lambda: F.affine_grid(torch.randn(2, 2, 3), (2, 1, 4, 4), align_corners=False),  # (it was silent)
])
def test_other_products_run_in_torch_and_say_so(call):
    with sft.emulate("bf16") as em, pytest.warns(UserWarning, match="not emulated under softfloat.torch.emulate"):
        call()
    assert len(em.telemetry) == 0


@pytest.mark.skipif(not hasattr(F, "linear_cross_entropy"), reason="F.linear_cross_entropy: torch >= 2.13")
@pytest.mark.parametrize("chunked", [False, True])
def test_linear_cross_entropy_is_its_definition(chunked):
    """F.linear_cross_entropy handed itself whole to the mode, which ran it in torch
    (its logits' product unemulated, unwarned); it runs as defined,
    cross_entropy(linear(input, weight, bias), target), its ``options`` (torch's chunking
    of that work) aside: the bits and gradients of the emulated definition."""
    torch.manual_seed(9)
    x, w, b = torch.randn(6, 8, requires_grad=True), torch.randn(10, 8, requires_grad=True), torch.randn(10)
    target = torch.randint(0, 10, (6,))
    options = {"options": torch.nn.LinearCrossEntropyOptions()} if chunked else {"label_smoothing": 0.1}
    with sft.emulate("bf16", accumulator="fp32") as em:
        got = F.linear_cross_entropy(x, w, target, linear_bias=b, **options)
        grads = torch.autograd.grad(got, (x, w))
    with sft.emulate("bf16", accumulator="fp32"):
        want = F.cross_entropy(F.linear(x, w, b), target, label_smoothing=options.get("label_smoothing", 0.0))
        want_grads = torch.autograd.grad(want, (x, w))
    assert torch.equal(got, want) and all(torch.equal(a, c) for a, c in zip(grads, want_grads))
    assert [r.kind for r in em.telemetry] == ["fprop", "dgrad", "wgrad"]


def test_scaled_and_grouped_gemm_kernels_say_they_are_out_of_reach():
    """F.grouped_mm / F.scaled_mm (and torch._grouped_mm, _scaled_mm) are kernels of their
    own: they warn as out of reach (torch's CPU kernel may then refuse the operands)."""
    a, b = torch.randn(2, 3, 8, dtype=torch.bfloat16), torch.randn(2, 8, 8, dtype=torch.bfloat16)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        with sft.emulate("bf16"):
            try:
                torch._grouped_mm(a, b)
            except RuntimeError:
                pass
    assert any("scaled or grouped GEMM kernel" in str(w.message) for w in got)


def test_an_embedding_bag_without_weights_is_a_sum_and_says_nothing():
    """An embedding bag's plain sums and means are torch's sums (not products, as
    torch.sum): no warning; with per_sample_weights its weighted sums warn (above)."""
    bag = torch.nn.EmbeddingBag(10, 4, mode="mean")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with sft.emulate("bf16"):
            got = bag(torch.tensor([[1, 2], [4, 5]]))
    assert torch.equal(got, bag(torch.tensor([[1, 2], [4, 5]])))


@pytest.mark.filterwarnings("ignore:LSTM with projections:UserWarning")  # torch's own note on oneDNN
@pytest.mark.parametrize("cls, options, products", [
    (torch.nn.LSTM, {}, 1 + 6),
    (torch.nn.LSTM, {"num_layers": 2, "bidirectional": True, "proj_size": 3}, 2 * 2 * (1 + 6 + 6)),
    (torch.nn.GRU, {"num_layers": 2, "batch_first": True, "bias": False}, 2 * (1 + 6)),
    (torch.nn.RNN, {"nonlinearity": "relu", "bidirectional": True}, 2 * (1 + 6)),
])
def test_recurrent_layers_are_written_out_as_torchs_equations(cls, options, products):
    """nn.LSTM/GRU/RNN run their products inside torch's kernel; under emulate they are
    written out (softfloat.torch._recurrent): with fp32 products the outputs, states and
    gradients are torch's own to float32 rounding, and each product is emulated."""
    torch.manual_seed(1)
    model = cls(5, 4, **options)
    x = torch.randn(4, 6, 5) if options.get("batch_first") else torch.randn(6, 4, 5)
    x.requires_grad_(True)
    want = model(x)
    want_grad = torch.autograd.grad(want[0].square().sum(), x)[0]
    with sft.emulate("fp32", accumulator="fp32") as em:
        got = model(x)
        got_grad = torch.autograd.grad(got[0].square().sum(), x)[0]
    flat = (lambda r: [r[0], *(r[1] if isinstance(r[1], tuple) else (r[1],))])
    for a, b in zip(flat(got), flat(want)):
        assert a.shape == b.shape and torch.allclose(a, b, atol=1e-6, rtol=1e-5)
    assert torch.allclose(got_grad, want_grad, atol=1e-5, rtol=1e-4)
    assert sum(r.kind == "fprop" for r in em.telemetry) == products
    with sft.emulate("bf16", accumulator="fp32"):
        low = model(x)[0]
    assert not torch.equal(low, want[0])  # bf16 products: other bits


@pytest.mark.parametrize("shapes", [[(2, 30), (30, 4), (4, 50)], [(4, 3), (3, 9), (9, 2), (2, 8), (8, 5)],
                                    [(5,), (5, 6), (6, 2), (2, 7), (7,)],
                                    [(10, 2), (2, 10), (10, 2), (2, 10), (10, 3), (3, 9)]])
def test_multi_dot_takes_atens_order(shapes):
    """The products torch's own multi_dot makes (seen at the aten level by a dispatch
    mode) are the ones the emulation makes: the same parenthesisation."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Products(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.shapes = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is torch.ops.aten.mm.default:
                self.shapes.append((args[0].shape[0], args[0].shape[1], args[1].shape[1]))
            return func(*args, **(kwargs or {}))

    torch.manual_seed(4)
    ts = [torch.randn(s) for s in shapes]
    with Products() as seen:
        want = torch.linalg.multi_dot(ts)
    with sft.emulate("fp32", accumulator="fp32") as em:
        got = torch.linalg.multi_dot(ts)
    assert sorted(r.shape for r in em.telemetry) == sorted(seen.shapes)
    assert got.shape == want.shape and torch.allclose(got, want, atol=1e-5, rtol=1e-5)


def test_chain_matmul_is_multi_dot():
    """torch.chain_matmul (ATen: linalg_multi_dot of its matrices) was left to torch with
    an "inside one torch kernel" warning; it is multi_dot's products, bit for bit, with
    gradients; one matrix is its copy, no product."""
    torch.manual_seed(5)
    a, b, c = torch.randn(4, 3, requires_grad=True), torch.randn(3, 9), torch.randn(9, 2)
    with sft.emulate("bf16", accumulator="fp32") as em:
        got = torch.chain_matmul(a, b, c)
        grad, = torch.autograd.grad(got.sum(), a)
        with warnings.catch_warnings():  # torch's (once per process)
            warnings.filterwarnings("ignore", "torch.chain_matmul is deprecated", UserWarning)
            alone = torch.chain_matmul(b)
    with sft.emulate("bf16", accumulator="fp32") as ref:
        want = torch.linalg.multi_dot([a, b, c])
        want_grad, = torch.autograd.grad(want.sum(), a)
    assert torch.equal(got, want) and torch.equal(grad, want_grad)
    assert [(r.site, r.kind, r.shape) for r in em.telemetry] == [
        (r.site.replace("multi_dot", "chain_matmul"), r.kind, r.shape) for r in ref.telemetry]
    assert torch.equal(alone, b) and alone is not b


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 6, 7, 13, 22])
def test_matrix_power_takes_atens_products(n):
    """With fp32 products on these small matrices torch's own matrix_power and the
    emulated one agree bit for bit only in ATen's order of products (n = 2, 3 directly,
    else by the bits of n); batches too.  A negative power (an inverse) warns."""
    torch.manual_seed(n)
    a, b = torch.randn(3, 3) * 0.7, torch.randn(2, 4, 4) * 0.5
    with sft.emulate("fp32", accumulator="fp32") as em:
        got, got_b = torch.linalg.matrix_power(a, n), b.matrix_power(n)
    assert torch.equal(got, torch.linalg.matrix_power(a, n)) and torch.equal(got_b, b.matrix_power(n))
    assert (len(em.telemetry) > 0) is (n >= 2)
    with sft.emulate("fp32"), pytest.warns(UserWarning, match="negative power"):
        torch.linalg.matrix_power(a, -2)


@pytest.mark.parametrize("s1, s2, options", [((30, 3), (40, 3), {}), ((3, 3), (4, 3), {}),
                                             ((2, 30, 5), (2, 10, 5), {}),
                                             ((5, 3), (6, 3), {"compute_mode": "use_mm_for_euclid_dist"}),
                                             ((30, 3), (40, 3), {"p": 1.0})])
def test_cdist_takes_a_product_where_aten_does(s1, s2, options):
    """torch's own cdist, watched at the aten level, makes a matrix product exactly where
    the emulation makes one (p = 2 and its compute_mode's size rule); the values are
    torch's to float32 rounding with fp32 products, identical where no product is made."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Products(TorchDispatchMode):
        count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is torch.ops.aten._euclidean_dist.default:  # ATen's product route
                self.count += 1
            return func(*args, **(kwargs or {}))

    torch.manual_seed(7)
    a, b = torch.randn(s1), torch.randn(s2)
    with Products() as seen:
        want = torch.cdist(a, b, **options)
    with sft.emulate("fp32", accumulator="fp32") as em:
        got = torch.cdist(a, b, **options)
    assert (len(em.telemetry) > 0) is (seen.count > 0)
    assert torch.allclose(got, want, atol=1e-5) and (seen.count > 0 or torch.equal(got, want))


@pytest.mark.parametrize("x_shape", [(3, 8), (8,)])
def test_linear_with_a_vector_weight_is_its_product(x_shape):
    """F.linear(x, w) with a 1-d weight is torch's x @ w (one output per row); it raised
    the engine's ValueError.  A bias: torch's error for a 2-d x, added in the epilogue
    of a 1-d x's dot product."""
    x, w = _t(x_shape, 40), _t((8,), 41)
    with sft.emulate("bf16", accumulator="fp32") as em:
        y = F.linear(x, w)
    y.sum().backward()
    assert y.shape == x_shape[:-1] and len(em.telemetry) == 3
    assert np.array_equal(_np(y).reshape(-1), _bf16_product(_np(x).reshape(-1, 8), _np(w)[:, None]).reshape(-1))
    assert x.grad.shape == x.shape and w.grad.shape == w.shape
    bias = torch.tensor(0.5)
    if x.dim() == 2:
        with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
            with sft.emulate("bf16"):
                F.linear(x, w, bias)
        return
    with sft.emulate("bf16", accumulator="fp32") as em:  # a dot product and its bias, one rounding
        y = F.linear(x, w, bias)
    eng = GemmEngine("bf16", accumulator="fp32", bias_epilogue=True)
    want = eng.gemm(_np(x)[None], _np(w)[:, None], "fprop", "s", bias=np.float32([0.5]), out="bf16")
    assert len(em.telemetry) == 1 and np.array_equal(_np(y).reshape(1, 1), want)
