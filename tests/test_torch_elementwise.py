"""softfloat.torch.emulate(..., elementwise=True): every spelling of + - * / (functions,
methods, operators, reflected, in place, out=) and the listed transcendental and
normalisation operations give torch's result rounded into the activations format --
checked against torch's own cast to bfloat16 -- and nothing inside an optimizer step:
every operand under a pure recipe ("bf16-pure"), activations under an autocast one
("bf16": see tests/test_torch_amp.py)."""

from __future__ import annotations

import operator

import pytest

from tests.conftest import import_torch

torch = import_torch()

import torch.nn.functional as F  # noqa: E402

import softfloat.torch as sft  # noqa: E402


def _bf16(t):
    """The oracle: torch's float32 result, cast to bfloat16 by torch (nearest even)."""
    return t.to(torch.bfloat16).float()


def _activation(t):
    """``t`` (on the bf16 grid) as a product's result inside the block: the same values,
    an activation (float16/bfloat16 in AMP)."""
    return (t[..., None] @ torch.ones(1, 1))[..., 0]


def _operands():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, generator=g) * 3 + 0.1
    y = torch.randn(64, generator=g) + 4.0  # away from 0 (divisors)
    return x, y


def _inplace(op):
    def run(x, y):
        z = x.clone()
        assert op(z, y) is z  # the tensor itself, written (rounded) in place
        return z
    return run


def _out(func):
    def run(x, y):
        out = torch.empty_like(x)
        func(x, y, out=out)
        return out
    return run


SPELLINGS = {
    "x + y": operator.add, "x - y": operator.sub, "x * y": operator.mul, "x / y": operator.truediv,
    "0.3 + x": lambda x, y: 0.3 + x, "0.3 - x": lambda x, y: 0.3 - x, "0.3 * x": lambda x, y: 0.3 * x,
    "3 / x": lambda x, y: 3 / y, "x ** 2": lambda x, y: x ** 2, "2 ** x": lambda x, y: 2 ** x,
    "torch.add": torch.add, "torch.sub": torch.sub, "torch.mul": torch.mul, "torch.div": torch.div,
    "torch.true_divide": torch.true_divide, "torch.subtract": torch.subtract, "torch.multiply": torch.multiply,
    "torch.divide": torch.divide, "torch.rsub": torch.rsub, "torch.add alpha": lambda x, y: torch.add(x, y, alpha=0.3),
    "Tensor.add": lambda x, y: x.add(y), "Tensor.sub": lambda x, y: x.sub(y), "Tensor.mul": lambda x, y: x.mul(y),
    "Tensor.div": lambda x, y: x.div(y), "x += y": _inplace(operator.iadd), "x -= y": _inplace(operator.isub),
    "x *= y": _inplace(operator.imul), "x /= y": _inplace(operator.itruediv),
    "add_": _inplace(lambda z, y: z.add_(y)), "sub_": _inplace(lambda z, y: z.sub_(y)),
    "mul_": _inplace(lambda z, y: z.mul_(y)), "div_": _inplace(lambda z, y: z.div_(y)),
    "torch.add out=": _out(torch.add), "torch.div out=": _out(torch.div),
}


#: the spellings autocast runs in float32 (softfloat.torch._amp): x ** y, y ** x, 3 / x
WIDE = {"3 / x", "x ** 2", "2 ** x"}


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_every_arithmetic_spelling_is_rounded(spelling):
    x, y = _operands()
    want = SPELLINGS[spelling](x, y)
    with sft.emulate("bf16-pure", elementwise=True):  # a pure recipe: every one rounded
        got = SPELLINGS[spelling](x, y)
    assert not torch.equal(want, _bf16(want))  # torch's float32 result is off the bf16 grid
    assert torch.equal(got, _bf16(want))
    # an autocast recipe: operands that are activations (products' results: float16 in
    # AMP) give rounded results but for autocast's float32 operations
    x, y = _bf16(x), _bf16(y)
    want = SPELLINGS[spelling](x, y)
    with sft.emulate("bf16", elementwise=True):
        got = SPELLINGS[spelling](_activation(x), _activation(y))
    assert torch.equal(got, want if spelling in WIDE else _bf16(want))
    with sft.emulate("bf16"):  # elementwise=False: torch's own
        assert torch.equal(SPELLINGS[spelling](x, y), want)


def test_the_issues_example():
    x = torch.tensor([1 + 2.0**-12])
    with sft.emulate("bf16-pure", elementwise=True):
        got = [x + 0, x - 0, x / 1, torch.sub(x, 0)]
    assert [t.item() for t in got] == [1.0] * 4


OPERATIONS = {
    "sigmoid": torch.sigmoid, "Tensor.sigmoid": lambda x: x.sigmoid(), "expit": torch.special.expit,
    "F.sigmoid": F.sigmoid, "exp": torch.exp, "Tensor.exp": lambda x: x.exp(), "log": lambda x: torch.log(x.abs()),
    "sqrt": lambda x: x.abs().sqrt(), "rsqrt": lambda x: x.abs().rsqrt(), "tanh": torch.tanh,
    "relu (in place)": lambda x: F.relu(x.clone(), inplace=True), "gelu": F.gelu, "silu": F.silu,
    "softplus": F.softplus, "mish": F.mish, "elu": F.elu, "leaky_relu": lambda x: F.leaky_relu(x, 0.3),
    "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid,
    "softmax": lambda x: F.softmax(x.view(8, 8), -1), "log_softmax": lambda x: F.log_softmax(x.view(8, 8), -1),
    "Tensor.log_softmax": lambda x: x.view(8, 8).log_softmax(-1),
    "layer_norm": lambda x: F.layer_norm(x.view(8, 8), (8,)), "rms_norm": lambda x: F.rms_norm(x.view(8, 8), (8,)),
    "nn.GroupNorm": lambda x: torch.nn.GroupNorm(2, 4)(x.view(4, 4, 4)),
    "nn.BatchNorm1d": lambda x: torch.nn.BatchNorm1d(8)(x.view(8, 8)),
    "nn.InstanceNorm1d": lambda x: torch.nn.InstanceNorm1d(4)(x.view(4, 4, 4)),
    "dropout": lambda x: F.dropout(x, 0.3),  # the same draws: the seed set before each
}

#: those autocast (CUDA's list) runs in float32
WIDE_OPERATIONS = {"exp", "Tensor.exp", "log", "rsqrt", "softplus", "softmax", "log_softmax",
                   "Tensor.log_softmax", "layer_norm", "nn.GroupNorm"}


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_transcendental_and_normalisation_results_are_rounded(name):
    x, _ = _operands()
    torch.manual_seed(1)
    want = OPERATIONS[name](x)
    torch.manual_seed(1)
    with sft.emulate("bf16-pure", elementwise=True):
        got = OPERATIONS[name](x)
    assert torch.equal(got, _bf16(want))
    x = _bf16(x)
    torch.manual_seed(1)
    want = OPERATIONS[name](x)
    torch.manual_seed(1)
    with sft.emulate("bf16", elementwise=True):  # an activation: autocast's float32 ones are not rounded
        got = OPERATIONS[name](_activation(x))
    assert torch.equal(got, want if name in WIDE_OPERATIONS else _bf16(want))


def test_reductions_are_not_rounded_as_documented():
    x, _ = _operands()
    with sft.emulate("bf16-pure", elementwise=True):
        total, mean = x.sum(), x.mean()
    assert torch.equal(total, x.sum()) and torch.equal(mean, x.mean())


def test_in_place_rounding_keeps_the_tensor_and_its_gradient():
    x, y = _operands()
    w = x.clone().requires_grad_(True)
    with sft.emulate("bf16-pure", elementwise=True):
        z = w * 1.0
        same = z
        z += y
        z.mul_(y)
    assert z is same and torch.equal(z, _bf16(_bf16(_bf16(x) + y) * y))
    z.sum().backward()
    assert torch.equal(w.grad, y)  # straight through the roundings: d(z)/dw = y


def test_an_optimizer_step_inside_the_block_is_not_rounded():
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    twin = torch.nn.Linear(8, 1)
    twin.load_state_dict(model.state_dict())
    x = torch.randn(4, 8)
    with sft.emulate("bf16-pure", elementwise=True, model=model):
        model(x).sum().backward()
        grads = [p.grad.clone() for p in model.parameters()]
        torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9).step()
        after = x + 0.1  # rounding resumes after the step
    for p, g in zip(twin.parameters(), grads):
        p.grad = g
    torch.optim.SGD(twin.parameters(), lr=1e-3, momentum=0.9).step()  # outside: torch's own update
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), twin.parameters()))
    assert not torch.equal(model.weight, _bf16(model.weight))  # not on the bf16 grid
    assert torch.equal(after, _bf16(x + 0.1))


@pytest.mark.parametrize("by_keyword", [False, True])
def test_a_closure_inside_an_optimizer_step_is_rounded(by_keyword):
    """LBFGS runs its closure -- the model's forward and backward -- inside step(): those
    activations are rounded as outside the step (they were left in float32); the step's
    own updates are not."""
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 1))
    x = torch.randn(5, 4)
    optimizer = torch.optim.LBFGS(model.parameters(), max_iter=2)
    seen = []

    def closure():
        optimizer.zero_grad()
        hidden = torch.tanh(x * 1.1)
        seen.append(hidden.detach().clone())
        loss = (model(hidden) ** 2).mean()
        loss.backward()
        return loss

    with sft.emulate("bf16-pure", accumulator="fp32", elementwise=True, model=model):
        optimizer.step(closure=closure) if by_keyword else optimizer.step(closure)
        after = x + 0.1  # the step's end: rounding as before
    assert len(seen) >= 2 and all(torch.equal(h, _bf16(h)) for h in seen)
    assert not torch.equal(model[0].weight, _bf16(model[0].weight))  # the update: the optimizer's own
    assert torch.equal(after, _bf16(x + 0.1))


@pytest.mark.parametrize("recipe", ["fp32", "bf16", "bf16-pure", "fp16"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_half_model_keeps_its_dtype(recipe, dtype):
    """model.half()/.bfloat16() with elementwise=True: the rounded results keep the
    tensors' dtype, as the products' do (a float16 GELU under the fp32 or bf16 recipe came
    back float32 and the next Linear raised a dtype mismatch); each value is the
    activations format's rounding, cast back (exact under the fp32 recipe)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 2)).to(dtype)
    x = torch.randn(4, 8, dtype=dtype)
    with sft.emulate(recipe, elementwise=True, model=model):
        h = model[0](x)
        g = model[1](h * 1.0)
        y = model[2](g)
    assert g.dtype == y.dtype == dtype
    fmt = {"fp32": torch.float32, "fp16": torch.float16}.get(recipe, torch.bfloat16)
    assert torch.equal(g, F.gelu(h * 1.0).to(fmt).to(dtype))
    if recipe == "fp32":
        with torch.no_grad():
            assert torch.equal(y, model(x))
