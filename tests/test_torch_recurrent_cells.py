"""softfloat.torch.emulate: nn.LSTMCell, nn.GRUCell and nn.RNNCell (torch's cell kernels,
whose products torch computes inside) written out: their two products through the
emulated F.linear, the gates as PyTorch's equations -- checked against that
decomposition written by hand from emulated F.linear calls, and against torch's own
cells to float32 rounding with fp32 products, bit for bit where the products are exact;
and nn.LSTM/GRU/RNN of packed sequences, checked sequence by sequence against the
written-out layers on each sequence alone."""

from __future__ import annotations

import contextlib
import warnings
import zlib

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
        rz = torch.cat([hr, hz], dim=-1) + torch.cat([xr, xz], dim=-1)
        r, z = torch.sigmoid(rz[:, :hr.shape[-1]]), torch.sigmoid(rz[:, hr.shape[-1]:])
        n = torch.tanh(xn + hn * r)
        return (hx - n) * z + n  # ATen's order of (1 - z) * n + z * h
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


def _dyadic(t):
    """``t`` in steps of 1/16 and below 8 in magnitude: the products and sums of a few
    of them are exact in float32, whatever the order (torch's or the emulation's)."""
    return (t.clamp(-7, 7) * 16).round() / 16


@contextlib.contextmanager
def _without_onednn():
    """torch's oneDNN off (its flags() also sets TF32 and warns that this build has no
    Intel GPU: that warning is not the test's)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "TF32 acceleration on top of oneDNN", UserWarning)
        with torch.backends.mkldnn.flags(enabled=False):
            yield


_EXACT = [(torch.nn.GRUCell, {}), (torch.nn.LSTMCell, {}), (torch.nn.RNNCell, {}),
          (torch.nn.GRU, {"bidirectional": True, "batch_first": True}), (torch.nn.GRU, {}),
          (torch.nn.LSTM, {"bidirectional": True}), (torch.nn.RNN, {"nonlinearity": "relu"})]


#: tensor dtype -> the recipe whose products of such exact operands are torch's
_EXACT_RECIPES = {torch.float32: "fp32", torch.float64: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}


@pytest.mark.parametrize("cls, options", _EXACT)
@pytest.mark.parametrize("hidden, dtype", [(5, torch.float32), (19, torch.float32),  # sigmoid/tanh: row
                                           (19, torch.float64), (19, torch.bfloat16),  # tails, vector loops
                                           (19, torch.float16)])
def test_with_exact_products_the_written_out_gates_are_torchs_own_bit_for_bit(cls, options, hidden, dtype):
    """Where every product is exact (in float32, and in the dtype), the emulation with the
    fp32 accumulator and torch compute the same products, so the gates decide: ours must be
    ATen's, operation for operation (the GRU's h' = (h - n) * z + n, sigmoid on each gate's
    columns), bit for bit, in each dtype.  One time step (the next hidden state's products
    are no longer exact); nn.LSTM with oneDNN off (torch's CPU LSTM runs oneDNN's own gate
    arithmetic where it is on)."""
    torch.manual_seed(zlib.crc32(f"{cls.__name__}{options}{hidden}".encode()))
    module = cls(6, hidden, **options)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(_dyadic(2 * p))
    module = module.to(dtype)
    directions = 2 if options.get("bidirectional") else 1
    if cls in (torch.nn.GRUCell, torch.nn.LSTMCell, torch.nn.RNNCell):
        x, h = _dyadic(torch.randn(9, 6)), _dyadic(torch.randn(9, hidden))
    else:
        x = _dyadic(torch.randn(9, 1, 6) if options.get("batch_first") else torch.randn(1, 9, 6))
        h = _dyadic(torch.randn(directions, 9, hidden))
    x, h = x.to(dtype), h.to(dtype)
    state = (h, _dyadic(h / 2)) if cls in (torch.nn.LSTM, torch.nn.LSTMCell) else h
    with _without_onednn():
        want = _flat(module(x, state))
        with sft.emulate(_EXACT_RECIPES[dtype], accumulator="fp32") as em:
            got = _flat(module(x, state))
    want = [t for o in want for t in _flat(o)]
    got = [t for o in got for t in _flat(o)]
    assert em.telemetry, "the products ran emulated"
    for a, b in zip(got, want):
        assert torch.equal(a, b), f"{int((a != b).sum())} of {a.numel()} elements differ from torch's"


_PACKED = [(torch.nn.LSTM, {"num_layers": 2, "bidirectional": True}),
           (torch.nn.LSTM, {"proj_size": 2, "bidirectional": True}),
           (torch.nn.GRU, {"num_layers": 2, "bidirectional": True}), (torch.nn.GRU, {}),
           (torch.nn.RNN, {"nonlinearity": "relu", "bidirectional": True})]


@pytest.mark.parametrize("cls, options", _PACKED)
def test_a_packed_sequence_is_each_sequence_written_out(cls, options):
    """nn.LSTM/GRU/RNN of a PackedSequence (torch's packed kernels, which ran unemulated):
    under emulate each sequence's outputs and final states are, bit for bit, those of the
    same layer run on that sequence alone (the dense written-out layer: rows are
    independent products), forward and reverse; with fp32 products the outputs, states
    and gradients are torch's packed ones to float32 rounding."""
    from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence
    torch.manual_seed(zlib.crc32(f"{cls.__name__}{options}".encode()))
    module = cls(3, 4, **options)
    lengths = [5, 2, 4, 1]
    sequences = [torch.randn(n, 3) for n in lengths]
    layers = (2 if options.get("bidirectional") else 1) * options.get("num_layers", 1)
    h0 = torch.randn(layers, 4, options.get("proj_size", 4))
    hx = (h0, torch.randn(layers, 4, 4)) if cls is torch.nn.LSTM else h0
    packed = pack_sequence(sequences, enforce_sorted=False)

    def states(out):
        return list(out[1]) if isinstance(out[1], tuple) else [out[1]]
    with sft.emulate("bf16", accumulator="fp32") as em:
        got = module(packed, hx)
        padded, _ = pad_packed_sequence(got[0])
        for i, seq in enumerate(sequences):
            alone = module(seq[:, None], tuple(t[:, i:i + 1] for t in hx) if isinstance(hx, tuple)
                           else hx[:, i:i + 1])
            assert torch.equal(padded[:len(seq), i], alone[0][:, 0])
            assert all(torch.equal(a[:, i], b[:, 0]) for a, b in zip(states(got), states(alone)))
    assert em.telemetry
    params = list(module.parameters())
    want = module(packed, hx)
    want_grads = torch.autograd.grad(want[0].data.square().sum() + states(want)[0].sum(), params)
    with sft.emulate("fp32", accumulator="fp32"):
        got = module(packed, hx)
        grads = torch.autograd.grad(got[0].data.square().sum() + states(got)[0].sum(), params)
    for a, b in zip([got[0].data, *states(got), *grads], [want[0].data, *states(want), *want_grads]):
        assert a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=1e-6)
