"""PyTorch programs under softfloat.torch.emulate, round 7: the probe scripts that found
something (recurrent layers, convolutions, norms, torch.func, custom Functions, hooks,
optimizers, distributions, einsum, linalg, sparse and complex tensors ran without a
finding).  Oracles: real CPU autocast where its lists agree with CUDA's, torch's own
float16/bfloat16 CPU arithmetic (correctly rounded per operation), and products of small
integers (exact) rounded once."""

from __future__ import annotations

import warnings

import pytest

from tests.conftest import import_torch

torch = import_torch()

import torch.nn.functional as F  # noqa: E402

import softfloat.torch as sft  # noqa: E402

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def _same(a, b) -> bool:
    """Bit-equal values, NaN where NaN (dtypes aside: the emulation's are float32)."""
    a, b = a.float(), b.float()
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(7.0), b.nan_to_num(7.0))


def _activations(rows: int, features: int, seed: int):
    """Small-integer operands (every product and sum of the linear layer exact in the
    activations format) and a function of them: an activation scaled, with NaNs where
    it is small."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-3, 4, (rows, 6), generator=g).float()
    w = torch.randint(-2, 3, (features, 6), generator=g).float()

    def activation():
        h = F.linear(x, w) * 0.3
        return h.masked_fill(h.abs() < 0.5, float("nan"))
    return activation


@pytest.mark.parametrize("recipe", list(DTYPES))
def test_nanmean_var_mean_std_mean_of_activations_as_real_cpu_autocast(recipe):
    """var_mean/std_mean of an activation are float16 pairs in AMP and nanmean is ATen's
    nansum / count (nansum rounded, the count taken into float16, the quotient rounded):
    under an autocast recipe all three returned torch's float32 results unrounded.  2600
    columns make counts above 2048 in a row (inexact in fp16, bf16 from 257 on); the
    whole-tensor nanmean takes a contiguous row of 200 (CPU's bf16 nansum of a strided
    view rounds partial sums, and CPU takes a whole-tensor nanmean's zero-dimensional
    count as a float32 scalar, unrounded; the emulation rounds every count as in the
    dimensioned case)."""
    activation = _activations(8, 2600, 11)

    def reductions():
        h = activation()
        dense = h.nan_to_num()
        return [torch.nanmean(h, 1), h.nanmean(0, keepdim=True), h[0, :200].nanmean(),
                *torch.var_mean(dense, 1), *torch.std_mean(dense, 0, correction=0), *torch.var_mean(dense)]
    with torch.autocast("cpu", dtype=DTYPES[recipe]):
        want = reductions()
    assert all(t.dtype == DTYPES[recipe] for t in want)
    with sft.emulate(recipe, accumulator="fp32", elementwise=True):
        got = reductions()
    assert [_same(g, w) for g, w in zip(got, want)] == [True] * len(want)
    assert not all(_same(g, g.to(DTYPES[recipe])) for g in reductions())  # the rounding shows


def test_nanmean_of_float32_tensors_and_in_float32_stays_torchs():
    """Only an activation's nanmean is AMP's float16 composite: an input's (float32 in
    AMP), one asked for in float32 (dtype=) and a pure recipe's are torch's own."""
    activation = _activations(4, 300, 12)
    with sft.emulate("bf16", accumulator="fp32", elementwise=True):
        h = activation()
        asked = h.nanmean(1, dtype=torch.float32)
        wide = h.float().nanmean(1)
    assert torch.equal(asked, torch.nanmean(h, 1, dtype=torch.float32))
    assert _same(wide, torch.nanmean(h, 1))
    with sft.emulate("bf16-pure", accumulator="fp32", elementwise=True):
        h = activation()
        got = torch.nanmean(h, 1)
    assert _same(got, torch.nanmean(h, 1))


def _warned(run) -> list[str]:
    """The UserWarnings ``run`` raised, their messages."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        run()
    return [str(w.message) for w in got]


def test_linalg_factorizations_and_solvers_say_they_are_out_of_reach():
    """torch.linalg.solve, inv, cholesky, det, ... (and torch.inverse, Tensor.det, ...)
    compute their inner products inside LAPACK's kernels: they ran silently in float32
    under any recipe.  Each now warns once per block, and still gives torch's own bits."""
    g = torch.Generator().manual_seed(7)
    a = torch.randn(4, 4, generator=g) + 4 * torch.eye(4)
    b, spd = torch.randn(4, 2, generator=g), a.T.mm(a)
    calls = {"torch.linalg.solve": lambda: torch.linalg.solve(a, b), "torch.linalg.inv": lambda: torch.linalg.inv(a),
             "torch.linalg.cholesky": lambda: torch.linalg.cholesky(spd), "torch.inverse": lambda: torch.inverse(a),
             "Tensor.det": lambda: a.det(), "torch.linalg.svdvals": lambda: torch.linalg.svdvals(a),
             "torch.linalg.solve_triangular": lambda: torch.linalg.solve_triangular(a.triu(), b, upper=True)}
    for name, call in calls.items():
        with sft.emulate("bf16") as em:
            messages = _warned(lambda: [call(), call()])
            got = call()
        assert [m.split(" (")[0] for m in messages] == [name]  # once per block
        assert "not emulated" in messages[0]
        assert torch.equal(got, call())
    assert [r.site for r in em.telemetry] == []


def test_a_matrix_2_norm_warns_and_the_frobenius_norm_does_not():
    """Singular values (a matrix's 2-norm, -2, nuclear norm) are LAPACK's; the Frobenius
    and vector norms are sums of squares in torch (no product): those pass, and a
    spectral call after them still warns (the mode's pass-through lane keeps none of
    these functions)."""
    a = torch.arange(12.0).reshape(3, 4)
    with sft.emulate("bf16"):
        quiet = _warned(lambda: [torch.linalg.norm(a), torch.linalg.norm(a[0], 2), torch.norm(a, 2),
                                 torch.linalg.matrix_norm(a), a.norm(dim=1), torch.linalg.vector_norm(a, 2)] * 2)
        loud = _warned(lambda: [torch.linalg.norm(a, 2), torch.linalg.matrix_norm(a, -2), torch.norm(a, "nuc"),
                                a.norm(2, dim=(0, 1))])
    assert quiet == []
    assert [m.split(" runs")[0] for m in loud] == [
        "torch.linalg.norm of order 2 of a matrix", "torch.linalg.matrix_norm of order -2 of a matrix",
        "torch.norm of order 'nuc'", "Tensor.norm of order 2 of a matrix"]


def test_a_multivariate_normal_log_prob_names_its_factorization():
    """A policy head's MultivariateNormal: its mean's product is emulated, its Cholesky
    factor and triangular solve are not and say so (they were silent)."""
    torch.manual_seed(2)
    head = torch.nn.Linear(4, 3)
    with sft.emulate("bf16") as em:
        messages = _warned(lambda: torch.distributions.MultivariateNormal(
            head(torch.randn(2, 4)), covariance_matrix=torch.eye(3) * 2 + 0.5).log_prob(torch.zeros(2, 3)).sum()
            .backward())
    named = {m.split(" (")[0] for m in messages}
    assert "torch.linalg.solve_triangular" in named and named <= {
        "torch.linalg.cholesky", "torch.linalg.cholesky_ex", "torch.linalg.solve_triangular"}
    assert head.weight.grad is not None and [r.kind for r in em.telemetry] == ["fprop", "wgrad"]


def _rotary(x, freqs):
    """LLaMA's apply_rotary_emb: pairs of features as complex numbers, times the
    rotations, in complex64 (``x.float()``), then back into ``x``'s dtype."""
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(pairs * freqs).flatten(-2).type_as(x)


def test_a_rotary_embeddings_complex_product_is_rounded_as_the_bf16_model_casts_it():
    """elementwise=True left complex results unrounded (only real float ones were): a
    pure-bf16 model's rotary embedding -- complex64 arithmetic cast back to bfloat16 --
    kept float32 values.  Now each part is rounded once, giving the bfloat16 model's
    bits (torch's own bfloat16 CPU program as the oracle), and the gradient passes."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 5, 8, generator=g).bfloat16()
    freqs = torch.polar(torch.ones(5, 4), torch.outer(torch.arange(5.0), torch.rand(4, generator=g)))
    want = _rotary(x, freqs)
    leaf = x.float().requires_grad_()
    with sft.emulate("bf16-pure", elementwise=True):
        got = _rotary(leaf, freqs)
        inplace = torch.view_as_complex(leaf.detach().reshape(2, 5, 4, 2).clone()).mul_(freqs)
    assert want.dtype == torch.bfloat16 and torch.equal(got, want.float())
    assert torch.equal(torch.view_as_real(inplace).flatten(-2), want.float())
    got.sum().backward()
    assert torch.equal(leaf.grad, _rotary_gradient(x.float(), freqs))


def _rotary_gradient(x, freqs):
    x = x.clone().requires_grad_()
    _rotary(x, freqs).sum().backward()
    return x.grad


DROPOUTS = {"F.dropout1d": lambda x: F.dropout1d(x.view(4, 4, 4), 0.3),
            "nn.Dropout2d": lambda x: torch.nn.Dropout2d(0.3)(x.view(2, 2, 4, 4)),
            "F.dropout3d": lambda x: F.dropout3d(x.view(1, 4, 2, 2, 4), 0.3),
            "nn.AlphaDropout": lambda x: torch.nn.AlphaDropout(0.3)(x.view(8, 8)),
            "nn.FeatureAlphaDropout": lambda x: torch.nn.FeatureAlphaDropout(0.3)(x.view(2, 8, 4)),
            "torch.feature_dropout": lambda x: torch.feature_dropout(x.view(4, 4, 4), 0.3, True)}


@pytest.mark.parametrize("name", list(DROPOUTS))
def test_every_dropout_is_rounded_as_dropout_is(name):
    """F.dropout's result (x / 0.7, inexact) is rounded under elementwise=True; the
    channel-wise and alpha dropouts (a CNN's nn.Dropout2d, a SELU net's AlphaDropout)
    were not.  Oracle: torch's float32 result on the same draws, rounded once into bf16
    (the definition the elementwise operations share), as activations under the
    autocast recipe too (AMP keeps a dropout in its input's float16)."""
    g = torch.Generator().manual_seed(9)
    x = torch.randn(64, generator=g).bfloat16().float()
    torch.manual_seed(1)
    exact = DROPOUTS[name](x)
    want = exact.bfloat16().float()
    assert not torch.equal(want, exact)  # (inexact: the rounding shows)
    for recipe in ("bf16-pure", "bf16"):
        torch.manual_seed(1)
        with sft.emulate(recipe, elementwise=True):
            h = F.linear(x[None], torch.eye(64))[0]  # an activation, x's values (autocast's account)
            got = DROPOUTS[name](h)
        assert torch.equal(got, want), recipe


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's note on global hooks and torch.compile(module)
@pytest.mark.parametrize("what", ["module", "function"])
def test_a_fullgraph_compile_inside_the_block_says_why_it_cannot(what):
    """torch.compile(..., fullgraph=True) forbids the graph breaks the emulation runs in:
    dynamo's error named a function "wrapped with torch.compiler.disable (reason: None)";
    it now says what to do."""
    torch._dynamo.reset()
    model = torch.nn.Linear(4, 2)
    fn = model if what == "module" else (lambda x: x @ model.weight.T)
    compiled = torch.compile(fn, fullgraph=True, backend="eager")
    with sft.emulate("bf16"), pytest.raises(Exception, match="compile without fullgraph=True"):
        compiled(torch.randn(3, 4))


def test_an_optimizers_own_products_are_its_arithmetic():
    """LBFGS's dot products and Muon's Newton-Schulz products ran through the recipe (an
    FP8 recipe quantised them into FP8) though the optimizer's updates are its own
    arithmetic: they now run as torch runs them.  Oracle: the same step outside the
    block on the same gradients (Muon), and the telemetry (LBFGS: its closure's products
    only)."""
    torch.manual_seed(0)
    model, twin = torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)
    twin.load_state_dict(model.state_dict())
    x = torch.randn(4, 8)
    muon = torch.optim.Muon([model.weight], lr=0.02)
    with sft.emulate("fp8", elementwise=True, model=model) as em:
        model(x).square().sum().backward()
        muon.step()
    assert {r.site for r in em.telemetry} == {"Linear"}  # the model's products only
    twin.weight.grad = model.weight.grad.clone()
    torch.optim.Muon([twin.weight], lr=0.02).step()  # outside: torch's own
    assert torch.equal(model.weight, twin.weight)

    t = torch.randn(4, 8)
    lbfgs = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=3)

    def closure():
        lbfgs.zero_grad()
        loss = F.mse_loss(model(x), t)
        loss.backward()
        return loss
    with sft.emulate("bf16", elementwise=True, model=model) as em:
        lbfgs.step(closure)
    assert {r.site for r in em.telemetry} == {"Linear"} and len(em.telemetry) == 3 * 2  # fprop, wgrad per closure


class _Failing(torch.optim.SGD):
    """An optimizer whose step raises (after torch's pre-hooks ran: no post-hooks)."""

    def step(self, closure=None):
        raise FloatingPointError("a non-finite update")


def test_a_step_that_raised_does_not_leave_the_step_open():
    """torch runs an optimizer's post-hooks only after a step that returned: one that
    raised (caught, training going on) left the emulation inside a step for the rest of
    the block, its products and roundings torch's.  The step's frame is gone: it is no
    longer counted."""
    model = torch.nn.Linear(4, 4)
    failing = _Failing(model.parameters(), lr=0.1)
    x = torch.full((2, 4), 1 + 2.0**-12)
    with sft.emulate("bf16-pure", elementwise=True, model=model) as em:
        with pytest.raises(FloatingPointError):
            failing.step()
        model(x)
        z = x * 1.0
    assert [r.kind for r in em.telemetry] == ["fprop"] and torch.equal(z, torch.ones(2, 4))
