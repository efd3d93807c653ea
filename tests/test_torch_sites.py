"""softfloat.torch.emulate's call sites: every module instance is a site of its own
(modules outside the naming model are ``Type[n]``, numbered in first-use order), so two
models never share FP8 delayed-scaling state, and names hold over an emulation's blocks."""

from __future__ import annotations

from tests.conftest import import_torch

torch = import_torch()

import softfloat.torch as sft  # noqa: E402


def _linear(scale, seed):
    torch.manual_seed(seed)
    layer = torch.nn.Linear(8, 4, bias=False)
    with torch.no_grad():
        layer.weight.mul_(scale)
    return layer


def test_two_models_outside_the_naming_model_keep_their_own_scaling_state():
    small, large = _linear(1e-3, 0), _linear(1e3, 1)
    x = torch.randn(3, 8)
    with sft.emulate("fp8", accumulator="fp32") as em:  # no model=: each Linear its own site
        got = [(small(x), large(x)) for _ in range(3)]
    alone = []
    for layer in (small, large):  # the oracle: each layer alone in an emulation of its own
        with sft.emulate("fp8", accumulator="fp32"):
            alone.append([layer(x) for _ in range(3)])
    for step in range(3):
        assert torch.equal(got[step][0], alone[0][step]) and torch.equal(got[step][1], alone[1][step])
    # the first module called is the root (named by its type); the other is numbered
    assert [r.site for r in em.telemetry[:2]] == ["Linear", "Linear[1]"]


def test_modules_outside_the_given_model_are_numbered_per_type_in_first_use_order():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    other_a, other_b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    x = torch.randn(1, 4)
    em = sft.emulate("bf16", model=model)
    with em:
        y = model(x)
        other_b(y), other_a(y), other_b(y)
    with em:  # a second block of the same emulation: the same names
        other_a(y), model(x)
    assert [r.site for r in em.telemetry] == ["0", "2", "Linear[1]", "Linear[2]", "Linear[1]", "Linear[2]", "0",
                                              "2"]


def test_instance_names_are_not_inherited_by_a_later_module():
    # a module that is gone leaves its number behind: a new one (which may reuse its id)
    # gets the next number, not the old name and its scaling state
    with sft.emulate("bf16") as em:
        torch.nn.Identity()(torch.ones(1))  # the root
        for _ in range(3):
            torch.nn.Linear(2, 2)(torch.ones(1, 2))
    assert [r.site for r in em.telemetry] == ["Linear[1]", "Linear[2]", "Linear[3]"]
