"""softfloat.torch.emulate: nn.LSTMCell, nn.GRUCell and nn.RNNCell (torch's cell kernels,
whose products torch computes inside) written out: their two products through the
emulated F.linear, the gates as PyTorch's equations -- checked against that
decomposition written by hand from emulated F.linear calls, and against torch's own
cells to float32 rounding with fp32 products."""

from __future__ import annotations

import pytest

from tests.conftest import import_torch

torch = import_torch()

import torch.nn.functional as F  # noqa: E402

import softfloat.torch as sft  # noqa: E402


def _by_hand(cell, x, hx):
    """The cell's documented equations, with its products through F.linear."""
    gi = F.linear(x, cell.weight_ih, cell.bias_ih)
    if isinstance(cell, torch.nn.LSTMCell):
        h, c = hx
        i, f, g, o = (gi + F.linear(h, cell.weight_hh, cell.bias_hh)).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c
    gh = F.linear(hx, cell.weight_hh, cell.bias_hh)
    if isinstance(cell, torch.nn.GRUCell):
        (xr, xz, xn), (hr, hz, hn) = gi.chunk(3, dim=-1), gh.chunk(3, dim=-1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1 - z) * n + z * hx
    return torch.tanh(gi + gh) if cell.nonlinearity == "tanh" else torch.relu(gi + gh)


def _flat(out):
    return list(out) if isinstance(out, tuple) else [out]


_CELLS = [(torch.nn.LSTMCell, {}), (torch.nn.GRUCell, {}), (torch.nn.RNNCell, {}),
          (torch.nn.RNNCell, {"nonlinearity": "relu", "bias": False})]


@pytest.mark.parametrize("cls, options", _CELLS)
@pytest.mark.parametrize("batched", [True, False])
def test_a_cell_is_its_equations_over_emulated_products(cls, options, batched):
    torch.manual_seed(2)
    cell = cls(5, 4, **options)
    x = torch.randn(3, 5) if batched else torch.randn(5)
    state = torch.randn(3, 4) if batched else torch.randn(4)
    hx = (state, state * 0.5) if cls is torch.nn.LSTMCell else state
    x.requires_grad_(True)
    with sft.emulate("bf16", accumulator="fp32") as em:
        got = _flat(cell(x, hx))
        grads = torch.autograd.grad(sum(t.square().sum() for t in got), [x, cell.weight_ih])
    with sft.emulate("bf16", accumulator="fp32") as ref:
        want = _flat(_by_hand(cell, x if batched else x[None], hx if batched else
                              tuple(t[None] for t in hx) if isinstance(hx, tuple) else hx[None]))
        want = want if batched else [t[0] for t in want]
        want_grads = torch.autograd.grad(sum(t.square().sum() for t in want), [x, cell.weight_ih])
    assert all(torch.equal(a, b) for a, b in zip(got, want))
    assert all(torch.equal(a, b) for a, b in zip(grads, want_grads))
    assert [(r.kind, r.shape) for r in em.telemetry] == [(r.kind, r.shape) for r in ref.telemetry]
    assert [r.kind for r in em.telemetry].count("fprop") == 2


@pytest.mark.parametrize("cls, options", _CELLS)
def test_with_fp32_products_a_cell_is_torchs_own_to_float32_rounding(cls, options):
    torch.manual_seed(3)
    cell = cls(6, 5, **options)
    x, h = torch.randn(4, 6), torch.randn(4, 5)
    hx = (h, -h) if cls is torch.nn.LSTMCell else h
    want = _flat(cell(x, hx))
    with sft.emulate("fp32", accumulator="fp32") as em:
        got = _flat(cell(x, hx))
    assert all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(got, want))
    assert len(em.telemetry) == 2
    with sft.emulate("bf16", accumulator="fp32"):
        assert not torch.equal(_flat(cell(x, hx))[0], want[0])  # emulated: other bits
