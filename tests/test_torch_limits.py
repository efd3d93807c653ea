"""softfloat.torch.emulate's documented limits say what they are: sparse operands (a
TypeError naming the argument; torch.sparse's own products warn), complex operands
through the @ operator (the message kept), and second derivatives (a RuntimeError that
names the emulation, not a silently missing term); telemetry=False keeps nothing per
product (bounded memory)."""

from __future__ import annotations

import pytest

from tests.conftest import import_torch

torch = import_torch()

import torch.nn.functional as F  # noqa: E402

import softfloat.torch as sft  # noqa: E402


def _sparse():
    return torch.eye(4).to_sparse()


@pytest.mark.parametrize("call, exc, words", [
    (lambda s, d: torch.mm(s, d), TypeError, r"input of mm must be a dense \(strided\) tensor .*sparse_coo"),
    (lambda s, d: torch.matmul(d.T, s), TypeError, "other of matmul must be a dense"),
    (lambda s, d: s @ d, RuntimeError, "input of matmul must be a dense"),         # not "unsupported operand"
    (lambda s, d: d.T @ s, RuntimeError, "other of matmul must be a dense"),
    (lambda s, d: torch.nn.functional.linear(d.T, s), TypeError, "weight of linear must be a dense"),
    (lambda s, d: sft.quantize(s, "bf16"), TypeError, "t must be a dense"),
])
def test_sparse_operands_are_a_clear_error(call, exc, words):
    with sft.emulate("bf16"), pytest.raises(exc, match=words):
        call(_sparse(), torch.randn(4, 2))


def test_torch_sparse_products_run_as_torch_runs_them_with_a_warning():
    s, d = _sparse(), torch.randn(4, 2)
    with sft.emulate("bf16") as em, pytest.warns(UserWarning, match=r"torch.sparse.mm \(a sparse product\)"):
        got = torch.sparse.mm(s, d)
    assert torch.equal(got, torch.sparse.mm(s, d)) and len(em.telemetry) == 0


@pytest.mark.parametrize("call, exc", [(lambda c: c @ c, RuntimeError), (lambda c: torch.mm(c, c), TypeError),
                                       (lambda c: torch.matmul(c, c), TypeError)])
def test_complex_operands_keep_their_message_through_the_operator(call, exc):
    c = torch.ones(2, 2, dtype=torch.complex64)
    with sft.emulate("bf16"), pytest.raises(exc, match="input of (matmul|mm) must be a real float tensor .* complex"):
        call(c)


def test_a_double_backward_says_it_is_not_supported():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, 2, requires_grad=True)
    with sft.emulate("bf16"):
        y = (x @ w).square().sum()
        g, = torch.autograd.grad(y, x, create_graph=True)
        with pytest.raises(RuntimeError, match="an emulated product has no second derivative"):
            g.norm().backward()


@pytest.mark.parametrize("second", [
    lambda f, x: torch.autograd.functional.hessian(f, x),
    lambda f, x: torch.autograd.grad(torch.autograd.grad(f(x), x, create_graph=True)[0].sum(), x,
                                     allow_unused=True),
])
def test_a_second_derivative_towards_an_input_says_it_is_not_supported(second):
    """autograd.grad towards an input (as torch.autograd.functional.hessian takes it, with
    allow_unused) found no path through the error node, which hung from detached copies
    (once_differentiable's way): the hessian came out all zeros, silently.  The node now
    hangs from the tensors the gradient was computed from, and raises."""
    torch.manual_seed(7)
    model = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    x = torch.randn(3, 4, requires_grad=True)
    with sft.emulate("fp32", accumulator="fp32"):
        with pytest.raises(RuntimeError, match="an emulated product has no second derivative"):
            second(lambda t: model(t).square().sum(), x)


def test_first_derivatives_with_create_graph_are_still_the_emulated_ones():
    x, w = torch.randn(3, 4, requires_grad=True), torch.randn(4, 2, requires_grad=True)
    with sft.emulate("bf16"):
        y = (x @ w).sum()
        plain, = torch.autograd.grad(y, x, retain_graph=True)
        graphed, = torch.autograd.grad(y, x, create_graph=True)
    assert torch.equal(plain, graphed.detach())


def test_telemetry_false_keeps_nothing_per_product_and_clear_forgets():
    x, w = torch.randn(4, 8, requires_grad=True), torch.randn(3, 8, requires_grad=True)
    with sft.emulate("bf16", telemetry=False) as off:
        for _ in range(3):
            F.linear(x, w).sum().backward()
            torch.bmm(x[None], w.T[None])
    assert len(off.telemetry) == 0  # bounded memory: nothing grows with the steps
    with sft.emulate("bf16", telemetry="operands") as on:
        F.linear(x, w).sum().backward()
        assert len(on.telemetry) == 3
        on.telemetry.clear()
        torch.bmm(x[None], w.T[None])
    assert [(r.op, r.batch) for r in on.telemetry] == [("bmm", 1)]


@pytest.mark.parametrize("batched", [
    lambda f, x: torch.autograd.grad(f(x), x, torch.randn(5, 3, 2), is_grads_batched=True),
    lambda f, x: torch.autograd.functional.jacobian(f, x, vectorize=True),
])
def test_batched_gradients_say_they_are_a_transform(batched):
    """autograd.grad(is_grads_batched=True) and jacobian(vectorize=True) run the backward
    under torch's legacy vmap: its batched gradients hold no storage, and were refused as
    "a tensor on device cpu, which holds no values"; they are a transform, and say so."""
    w = torch.randn(2, 4, requires_grad=True)
    x = torch.randn(3, 4, requires_grad=True)
    with sft.emulate("bf16"):
        with pytest.raises(NotImplementedError, match="grad_output is a tensor inside a torch.func transform"):
            batched(lambda t: F.linear(t, w), x)
