"""emulate(..., elementwise=True) under an autocast recipe keeps float32 where torch's
automatic mixed precision does (softfloat.torch._amp): autocast's float32 operations --
the losses first -- and what their results promote to, so that GradScaler's ``loss *
scale`` is a float32 product, not an fp16 one that overflows.  The oracle: real CPU
autocast (torch.autocast("cpu", dtype=float16/bfloat16)) where its lists and CUDA's
coincide, on operands whose products are exact (so the accumulation order is moot)."""

from __future__ import annotations

import warnings

import pytest

from tests.conftest import import_torch

torch = import_torch()

import torch.nn.functional as F  # noqa: E402

import softfloat.torch as sft  # noqa: E402
from softfloat.torch._amp import FLOAT32_NAMES  # noqa: E402

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}

#: the losses on both CPU's and CUDA's float32 lists, called on (activation, target)
LOSSES = {
    "mse_loss": lambda h, t, c: F.mse_loss(h, t), "l1_loss": lambda h, t, c: F.l1_loss(h, t),
    "smooth_l1_loss": lambda h, t, c: F.smooth_l1_loss(h, t), "huber_loss": lambda h, t, c: F.huber_loss(h, t),
    "cross_entropy": lambda h, t, c: F.cross_entropy(h, c), "nll_loss": lambda h, t, c: F.nll_loss(h, c),
    "soft_margin_loss": lambda h, t, c: F.soft_margin_loss(h, t.sign()),
    "binary_cross_entropy_with_logits": lambda h, t, c: F.binary_cross_entropy_with_logits(h, t.abs()),
    "kl_div": lambda h, t, c: F.kl_div(h, t.abs(), reduction="batchmean"),
}


def _data():
    """Small integers: every product and sum of the linear layers is exact in fp16."""
    g = torch.Generator().manual_seed(3)
    x = torch.randint(-3, 4, (8, 6), generator=g).float()
    w1 = torch.randint(-2, 3, (12, 6), generator=g).float()
    w2 = torch.randint(-2, 3, (5, 12), generator=g).float()
    target = torch.randint(-3, 4, (8, 5), generator=g).float() / 4
    classes = torch.randint(0, 5, (8,), generator=g)
    return x, w1, w2, target, classes


def _forward(x, w1, w2, target, classes, loss):
    """An activation path (products, elementwise arithmetic, relu) into a loss, scaled."""
    h = F.linear(x, w1)
    h = F.relu(h * 0.3 + h / 7)
    out = F.linear(h, w2) * 0.01
    value = LOSSES[loss](out, target, classes)
    return [h, out, value, value * torch.full((1,), 65536.0)]


def test_the_listed_names_exist_in_torch():
    spaces = (torch, torch.Tensor, F, torch.special, torch.linalg)
    assert all(any(callable(getattr(s, n, None)) for s in spaces) for n in FLOAT32_NAMES)


@pytest.mark.parametrize("recipe", list(DTYPES))
@pytest.mark.parametrize("loss", list(LOSSES))
def test_a_loss_and_its_scaling_match_real_cpu_autocast(recipe, loss):
    args = _data()
    with torch.autocast("cpu", dtype=DTYPES[recipe]):
        want = _forward(*args, loss)
    assert [t.dtype for t in want] == [DTYPES[recipe]] * 2 + [torch.float32] * 2  # the lists coincide here
    with sft.emulate(recipe, accumulator="fp32", elementwise=True):
        got = _forward(*args, loss)
    for g, w in zip(got, want):
        assert torch.equal(g, w.float())


def _promotions(x, w1, w2, target, classes):
    """float32 tensors (an embedding's, a parameter, a 0-d scale) meeting activations."""
    table = torch.nn.functional.embedding(classes, w1)            # float32 (its weight's)
    stream = table + F.linear(table, w1[:6])                      # float32 + activation
    h = F.relu(F.linear(x, w1))                                   # an activation
    scaled = h * w1[:, 0]                                         # act * float32 parameter: float32
    narrow = h * 0.25 - h / 2                                     # activations and numbers: rounded
    loss = (F.linear(h, w2) * 0.01).abs().amax()                  # an activation, 0-d
    return [table, stream, h, scaled, narrow, loss, loss * torch.tensor(65536.0), stream.relu() * 1.1,
            torch.cat([h, scaled]) / 3]


@pytest.mark.parametrize("recipe", list(DTYPES))
def test_float32_tensors_promote_as_in_real_cpu_autocast(recipe):
    """AMP's dtypes follow torch's type promotion: a residual stream from a float32
    embedding stays float32, an activation times a float32 parameter is float32, and a
    0-d float16 loss times GradScaler's 0-d float32 scale is float32 (these were rounded,
    the last to inf past 65504)."""
    args = _data()
    with torch.autocast("cpu", dtype=DTYPES[recipe]):
        want = _promotions(*args)
    low = DTYPES[recipe]
    assert [t.dtype for t in want] == [torch.float32] * 2 + [low] + [torch.float32] + [low] * 2 + [torch.float32] * 3
    with sft.emulate(recipe, accumulator="fp32", elementwise=True):
        got = _promotions(*args)
    for g, w in zip(got, want):
        assert torch.equal(g, w.float())


def test_normalisations_keep_their_inputs_width():
    """batch_norm, instance_norm, rms_norm and dropout return their input's dtype whatever
    their float32 weights: rounded for an activation (torch's float32 result, rounded
    once), float32 for a float32 input."""
    x, w1, *_ = _data()
    norm = torch.nn.BatchNorm1d(12)
    torch.manual_seed(0)
    with sft.emulate("bf16", accumulator="fp32", elementwise=True):
        h = F.linear(x, w1)
        got = [norm(h), F.rms_norm(h, (12,), norm.weight), F.dropout(h, 0.5)]
        wide = norm(w1.T * 1.0)
    torch.manual_seed(0)
    want = [norm(h), F.rms_norm(h, (12,), norm.weight), F.dropout(h, 0.5)]
    for g, w in zip(got, want):
        assert torch.equal(g, w.to(torch.bfloat16).float())
    assert not torch.equal(got[0], want[0])  # (off the bf16 grid before)
    assert torch.equal(wide, norm(w1.T))


def test_explicit_float_and_type_as_cast_as_autocast():
    """``.float()`` leaves the activations' format (the alias, not the activation, is
    float32); ``.type_as(activation)`` of a float32 result comes back into it."""
    x, w1, *_ = _data()
    with torch.autocast("cpu", dtype=torch.float16):
        h = F.linear(x, w1)
        wide = h.float() / 3
        back = wide.type_as(h) + 0
        again = h / 3
    with sft.emulate("fp16", accumulator="fp32", elementwise=True):
        eh = F.linear(x, w1)
        ewide = eh.float() / 3
        eback = ewide.type_as(eh) + 0
        eagain = eh / 3
    for g, w in ((ewide, wide), (eback, back), (eagain, again)):
        assert torch.equal(g, w.float())
    assert not torch.equal(ewide, eagain)


def test_a_grad_scaler_loop_no_longer_overflows():
    """loss ~ 2: loss * 2**16 passes fp16's largest value (65504); AMP scales the float32
    loss, so the scaled loss is finite (it was inf; its gradient passed straight through
    the rounding, so the steps were still taken), the steps are taken and the scale kept."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    x, y = torch.randn(32, 6), torch.randn(32, 4) * 2
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (GradScaler on the CPU)
        scaler = torch.amp.GradScaler("cpu")
    losses = []
    with sft.emulate("fp16", elementwise=True, model=model):
        for _ in range(3):
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            scaled = scaler.scale(loss)
            assert scaled.item() == loss.item() * 65536 > 65504  # float32's product, exact (a power of 2)
            scaled.backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
    assert scaler.get_scale() == 65536.0
    assert losses[2] < losses[1] < losses[0]  # the steps were taken


def test_a_pure_recipe_still_rounds_its_loss_arithmetic():
    """O3 keeps its loss in fp16 (no autocast): the scaled loss overflows, by definition."""
    x, w1, w2, target, classes = _data()
    with sft.emulate("O3", elementwise=True):
        loss = F.mse_loss(F.linear(F.linear(x, w1), w2) * 0.01, target)
        assert torch.isinf(loss * 1e6)


def test_gradient_clipping_inside_the_block_is_float32s():
    """clip_grad_norm_ runs torch's foreach operations on lists of gradients (float32 in
    AMP): the norm and the clipping coefficient stay float32 (the account raised
    TypeError looking a list up as a tensor), as torch's clipping of the same gradients."""
    torch.manual_seed(2)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.GELU(), torch.nn.Linear(8, 2))
    x = torch.randn(4, 6)
    with sft.emulate("bf16", elementwise=True, model=model):
        model(x).sum().backward()
        raw = [p.grad.clone() for p in model.parameters()]
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1, foreach=True)
        moved = model(x).to(x)
    assert moved.shape == (4, 2)
    twin = [torch.nn.Parameter(torch.zeros_like(g)) for g in raw]
    for p, g in zip(twin, raw):
        p.grad = g
    want = torch.nn.utils.clip_grad_norm_(twin, 0.1, foreach=True)
    assert torch.equal(norm, want) and norm > 0.1
    assert all(torch.equal(p.grad, q.grad) for p, q in zip(model.parameters(), twin))


@pytest.mark.parametrize("cls", [torch.nn.LSTM, torch.nn.GRU, torch.nn.LSTMCell])
def test_recurrent_states_are_activations(cls):
    """autocast casts a recurrent layer's (or cell's) states into its dtype: the states
    and every gate are activations, rounded as under the pure recipe (the cell state of
    an LSTM stayed float32: the zeros it starts from counted as a float32 input)."""
    torch.manual_seed(4)
    layer = cls(5, 6)
    x = torch.randn(7, 5) if cls is torch.nn.LSTMCell else torch.randn(4, 3, 5)
    got = {}
    for recipe in ("bf16", "bf16-pure"):
        with sft.emulate(recipe, accumulator="fp32", elementwise=True, model=layer):
            out = layer(x)
        got[recipe] = torch.cat([t.flatten() for t in (out if isinstance(out, tuple) else (out,))
                                 for t in (t if isinstance(t, tuple) else (t,))])
    assert torch.equal(got["bf16"], got["bf16-pure"])
    assert torch.equal(got["bf16"], got["bf16"].to(torch.bfloat16).float())


def _reductions(x, w1, *_):
    """Reductions of an activation that AMP returns in its dtype (ATen reduces in float32
    and rounds once), and one asked for in float32."""
    h = F.linear(x, w1) * 0.3
    return [h.mean(), h.mean(0), torch.mean(h, 1, True), h.var(), h.std(1), torch.var(h, 0, correction=0),
            torch.nansum(h), h.mean(dtype=torch.float32)]


@pytest.mark.parametrize("recipe", list(DTYPES))
def test_reductions_of_activations_are_rounded_as_in_real_cpu_autocast(recipe):
    """h.mean() of a float16 activation is float16 in AMP (mean is on neither float32
    list): its float32 mean was left unrounded (a loss h.mean() then differed)."""
    args = _data()
    with torch.autocast("cpu", dtype=DTYPES[recipe]):
        want = _reductions(*args)
    assert [t.dtype for t in want] == [DTYPES[recipe]] * 7 + [torch.float32]
    with sft.emulate(recipe, accumulator="fp32", elementwise=True):
        got = _reductions(*args)
    for g, w in zip(got, want):
        assert torch.equal(g, w.float())
    assert not all(torch.equal(g, g.to(DTYPES[recipe]).float()) for g in _reductions(*args))  # rounding shows


def test_a_pure_recipe_leaves_reductions_unrounded():
    """The pure recipes' documented rule: reductions are not rounded (their float32
    results, as torch computes them from the rounded activations)."""
    x, w1, *_ = _data()
    with sft.emulate("bf16-pure", accumulator="fp32", elementwise=True):
        h = F.linear(x, w1) * 0.3
        got = [h.mean(), h.var(), torch.nansum(h)]
    assert [torch.equal(g, w) for g, w in zip(got, [h.mean(), h.var(), torch.nansum(h)])] == [True] * 3
