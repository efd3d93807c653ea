"""softfloat.torch.emulate: a batched call (bmm, batched matmul, baddbmm, attention's
heads, a grouped convolution) is one product of its site -- per-tensor FP8 scales are
one per operand over the whole call, from the amax history as it was before the call,
which gains the call's amax once -- checked against the definition written out with
softfloat.DelayedScaling, scaled_encode and matmul."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import torch.nn.functional as F  # noqa: E402

import softfloat as sf  # noqa: E402
import softfloat.torch as sft  # noqa: E402
from tests.torch_checks import tensor  # noqa: E402
from tests.torch_checks import values as _np  # noqa: E402


def _per_tensor(a, b, fa, fb, scale_a=None, scale_b=None):
    """The per-tensor recipe's product of stacks a (B, M, K) and b (B, K, N), written
    out: each operand scaled once (``scale`` given: delayed; None: current, torchao's
    amax floor), each entry's product in an fp32 accumulator, times fp32(sa^-1 sb^-1),
    rounded into bf16.  Returns the values and both operands' amaxes."""
    opts_a = {"scale": scale_a} if scale_a is not None else {"amax_epsilon": 1e-12}
    opts_b = {"scale": scale_b} if scale_b is not None else {"amax_epsilon": 1e-12}
    sa, sb = sf.scaled_encode(a, fa, **opts_a), sf.scaled_encode(b, fb, **opts_b)
    factor = np.float32(sa.scale_inv) * np.float32(sb.scale_inv)
    out = []
    for i in range(a.shape[0]):
        bits = sf.matmul(sa.bits[i], sb.bits[i], fa, b_format=fb, accumulator="fp32", out_format="fp32")
        out.append(sf.decode(bits, "fp32").astype(np.float32) * factor)
    return sf.quantize(np.stack(out), "bf16"), float(sa.amax), float(sb.amax)


class _Bmm(torch.nn.Module):  # one call site for several calls
    def forward(self, a, b):
        return torch.bmm(a, b)


def test_the_issues_example_each_entry_gets_the_calls_scale():
    a = torch.stack([torch.full((2, 2), .01), torch.full((2, 2), 100.)])
    with sft.emulate("fp8"):
        y = torch.bmm(a, torch.ones(2, 2, 2))
    # scale 1 (an empty history) for the whole call: 0.01 -> 5 * 2**-9, 100 -> 96 in e4m3
    assert y[:, 0, 0].tolist() == [2 * 5 * 2.0**-9, 192.0]


def test_delayed_scaling_of_successive_batched_calls_is_the_definition():
    rng = np.random.default_rng(0)
    calls = [(rng.standard_normal((3, 4, 16)) * np.array([1e-2, 1.0, 1e2])[:, None, None],
              rng.standard_normal((3, 16, 5))) for _ in range(3)]
    calls = [(a.astype(np.float32), b.astype(np.float32)) for a, b in calls]
    model = _Bmm()
    with sft.emulate("fp8", accumulator="fp32", model=model) as em:
        got = [model(torch.from_numpy(a), torch.from_numpy(b)) for a, b in calls]
    hist_a, hist_b = sf.DelayedScaling("e4m3"), sf.DelayedScaling("e4m3")
    for (a, b), y in zip(calls, got):
        expected, amax_a, amax_b = _per_tensor(a, b, "e4m3", "e4m3", hist_a.scale, hist_b.scale)
        assert np.array_equal(_np(y), expected)
        hist_a.update(amax_a)  # the whole call's amax, once
        hist_b.update(amax_b)
    assert [(r.site, r.kind, r.batch) for r in em.telemetry] == [("_Bmm", "fprop", 3)] * 3


def test_current_scaling_takes_the_whole_batched_operand():
    a, b = tensor((4, 3, 32), 1, 10).detach(), tensor((4, 32, 6), 2, 4).detach()
    with sft.emulate("fp8-current", accumulator="fp32"):
        y = a @ b
        folded = a @ b[0]                                   # one 2-d product of the rows
        expanded = a @ b[0].expand(4, 32, 6)                # the same values, batched
    expected, _, _ = _per_tensor(_np(a), _np(b), "e4m3", "e4m3")
    assert np.array_equal(_np(y), expected)
    assert torch.equal(folded, expanded)  # batched or folded: the same per-tensor scale


def test_backward_of_a_batched_call_scales_the_whole_gradient_once():
    a, b = tensor((3, 4, 16), 3, 6), tensor((3, 16, 5), 4, 2)
    g = (torch.from_numpy(np.random.default_rng(5).standard_normal((3, 4, 5)).astype(np.float32))
         * torch.tensor([1e-3, 1.0, 1e3])[:, None, None])
    with sft.emulate("fp8-current", accumulator="fp32") as em:
        torch.bmm(a, b).backward(g)
    fa, fb = "e4m3", "e5m2"  # the hybrid recipe: e5m2 gradients
    dgrad, _, _ = _per_tensor(_np(g), _np(b).swapaxes(1, 2), fb, fa)
    wgrad, _, _ = _per_tensor(_np(a).swapaxes(1, 2), _np(g), fa, fb)
    assert np.array_equal(_np(a.grad), dgrad) and np.array_equal(_np(b.grad), wgrad)
    assert [(r.kind, r.batch) for r in em.telemetry] == [("fprop", 3), ("dgrad", 3), ("wgrad", 3)]


@pytest.mark.parametrize("recipe", ["fp8-block", "mxfp8", "bf16"])
def test_row_tile_and_block_scalings_stay_within_each_matrix(recipe):
    # 1x128 tiles, 128x128 blocks and MX blocks never cross a matrix: each entry of a
    # batched call is the product the same matrices give alone
    a, b = tensor((3, 5, 160), 6, 8).detach(), tensor((3, 160, 4), 7, 8).detach()
    with sft.emulate(recipe) as em:
        y = torch.bmm(a, b)
    for i in range(3):
        with sft.emulate(recipe):
            assert torch.equal(y[i], torch.mm(a[i], b[i]))
    assert len(em.telemetry) == 1


def test_attention_heads_and_groups_are_one_call_each():
    q, k, v = (tensor((2, 4, 3, 8), s, 3).detach() for s in (8, 9, 10))
    x, w = tensor((1, 4, 6, 6), 11, 3).detach(), tensor((6, 2, 3, 3), 12, 3).detach()
    with sft.emulate("fp8", accumulator="fp32") as em:
        F.scaled_dot_product_attention(q, k, v)
        F.conv2d(x, w, groups=2)
    assert [(r.site, r.batch) for r in em.telemetry] == [("attention#1.qk", 8), ("attention#1.pv", 8),
                                                         ("conv2d#2", 2)]


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2.0), (0, 1)])
def test_addbmm_is_atens_loop_over_one_call_of_products(beta, alpha):
    a, b, c = tensor((3, 4, 16), 13, 6), tensor((3, 16, 5), 14, 2), tensor((4, 5), 15, 2)
    with sft.emulate("fp8-current", accumulator="fp32") as em:
        y = torch.addbmm(c, a, b, beta=beta, alpha=alpha)
    sa = sf.scaled_encode(_np(a), "e4m3", amax_epsilon=1e-12)   # one scale per operand
    sb = sf.scaled_encode(_np(b), "e4m3", amax_epsilon=1e-12)
    factor = np.float32(sa.scale_inv) * np.float32(sb.scale_inv)
    running, step_beta = _np(c), beta
    for i in range(3):  # addmm_ of each entry in turn, rounded into bf16 each time
        acc = sf.decode(sf.matmul(sa.bits[i], sb.bits[i], "e4m3", accumulator="fp32", out_format="fp32"),
                        "fp32").astype(np.float32) * factor
        if step_beta == 1 and alpha == 1:
            running = sf.quantize((acc + running).astype(np.float32), "bf16")
        else:
            product = sf.quantize(acc, "bf16")
            running = product if (step_beta, alpha) == (0, 1) else sf.quantize(
                (alpha * product if step_beta == 0 else step_beta * running + alpha * product).astype(np.float32),
                "bf16")
        step_beta = 1
    assert np.array_equal(_np(y), running)
    y.sum().backward()  # the gradient of every entry: the one (broadcast) gradient, one call each
    assert [(r.kind, r.batch) for r in em.telemetry] == [("fprop", 3), ("dgrad", 3), ("wgrad", 3)]
    assert a.grad.shape == a.shape and torch.isfinite(b.grad).all()


def test_a_chains_products_are_sub_sites_each_scaled_by_its_own_history():
    a, b, c = tensor((4, 8), 16, 6).detach(), tensor((8, 3), 17, 6).detach(), tensor((3, 5), 18, 6).detach()
    with sft.emulate("fp8", accumulator="fp32") as em:
        for _ in range(2):
            torch.linalg.multi_dot([a, b, c])
    sites = [r.site for r in em.telemetry]
    assert len(set(sites)) == 2 and all(s.endswith((".1", ".2")) for s in sites)
    # the second call's first product is scaled by the history of the first call's
    # first product alone (not by the amaxes of the chain's other product)
    assert em.telemetry[2].site == em.telemetry[0].site
    for side in ("a", "b"):
        hist = sf.DelayedScaling("e4m3")
        hist.update(getattr(em.telemetry[0].record, side).amax)
        assert getattr(em.telemetry[2].record, side).scale == hist.scale
