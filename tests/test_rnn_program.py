"""A vanilla RNN trained with backpropagation through time and Adagrad (Karpathy's
min-char-rnn, verbatim numpy idioms: one-hot columns by item assignment, ``np.tanh``,
a softmax by ``np.exp`` and ``np.sum``, ``dy[target] -= 1``, gradients accumulated with
``+=``, ``np.clip(dparam, -5, 5, out=dparam)``, Adagrad's ``mem += dparam * dparam`` and
``param += -lr * dparam / np.sqrt(mem + 1e-8)``) runs unchanged with its parameters as
fp32 and as bf16 Arrays and agrees with the same program on float64 within the format's
error; the parameters stay Arrays of their format through the in-place updates, and the
context counts the flags.

The tolerance.  Every elementary operation of the emulated program is one rounding in
the format, of relative error at most u = 2**-p (p the precision: 24 for fp32, 8 for
bf16).  exp, tanh and log are float64 libm rounded once, so within u (1 + 2**-50); the
weak float64 operands (1, 1e-8, the one-hot columns) are rounded once; matrix products
are summed in the fp32 accumulator (each addition within u_fp32 = 2**-24) and rounded
once into the format.  Per time step the chain in the format has ROUNDINGS_PER_TIME_STEP
= 24 roundings (forward: two products, three additions, tanh, the logits' product and
addition, exp, sum, division, log, the loss's addition; backward: ``dy[t] -= 1``, six
products, five additions), Adagrad adds 7 per step, and the parameters feed the next
step: L = 24 * seq_len * steps + 7 * steps roundings in the format, and (the inner
dimensions of the products) VOCAB + HIDDEN + HIDDEN + VOCAB + HIDDEN per time step in the
accumulator.  The worst-case bound L * u is vacuous for bf16 (L * u > 1); the
probabilistic bound of Higham and Mary (SIAM J. Sci. Comput. 41, 2019: with independent
mean-zero rounding errors, a chain of L roundings is within lambda * sqrt(L) * u except
with probability below 2 L exp(-lambda**2 / 2)) with lambda = 6 gives the relative
tolerance ``relative_bound``.  Cancellation makes small gradient entries' relative
error large, so the parameters are compared absolutely: Adagrad moves an entry by at
most LR per step, so each step's update is within LR times the relative bound (twice it,
for the update's normalisation by the root of the squared gradients), plus the
parameter's own rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf

VOCAB, HIDDEN, SEQ_LEN, STEPS, LR = 5, 6, 4, 3, 0.1
ROUNDINGS_PER_TIME_STEP, ROUNDINGS_PER_UPDATE = 24, 7
LAMBDA = 6.0


def loss_fun(inputs, targets, hprev, Wxh, Whh, Why, bh, by):
    """min-char-rnn's lossFun, unchanged but for ``@`` in place of ``np.dot``."""
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0
    for t in range(len(inputs)):
        xs[t] = np.zeros((VOCAB, 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(Wxh @ xs[t] + Whh @ hs[t - 1] + bh)
        ys[t] = Why @ hs[t] + by
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
        loss += -np.log(ps[t][targets[t], 0])
    dWxh, dWhh, dWhy = np.zeros_like(Wxh), np.zeros_like(Whh), np.zeros_like(Why)
    dbh, dby = np.zeros_like(bh), np.zeros_like(by)
    dhnext = np.zeros_like(hs[0])
    for t in reversed(range(len(inputs))):
        dy = np.copy(ps[t])
        dy[targets[t]] -= 1
        dWhy += dy @ hs[t].T
        dby += dy
        dh = Why.T @ dy + dhnext
        dhraw = (1 - hs[t] * hs[t]) * dh
        dbh += dhraw
        dWxh += dhraw @ xs[t].T
        dWhh += dhraw @ hs[t - 1].T
        dhnext = Whh.T @ dhraw
    for dparam in [dWxh, dWhh, dWhy, dbh, dby]:
        np.clip(dparam, -5, 5, out=dparam)
    return loss, dWxh, dWhh, dWhy, dbh, dby, hs[len(inputs) - 1]


def train(params, data, steps=STEPS):
    """min-char-rnn's training loop (Adagrad), on ``params`` in place; the losses."""
    Wxh, Whh, Why, bh, by = params
    mems = [np.zeros_like(p) for p in params]
    hprev = np.zeros((HIDDEN, 1))
    losses = []
    for n in range(steps):
        inputs, targets = data[n]
        loss, *grads, hprev = loss_fun(inputs, targets, hprev, Wxh, Whh, Why, bh, by)
        for param, dparam, mem in zip(params, grads, mems):
            mem += dparam * dparam
            param += -LR * dparam / np.sqrt(mem + 1e-8)
        losses.append(loss)
    return losses, mems


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal((HIDDEN, VOCAB)) * 0.3, rng.standard_normal((HIDDEN, HIDDEN)) * 0.3,
              rng.standard_normal((VOCAB, HIDDEN)) * 0.3, np.zeros((HIDDEN, 1)), np.zeros((VOCAB, 1))]
    text = rng.integers(0, VOCAB, size=SEQ_LEN * STEPS + 1).tolist()
    data = [(text[n * SEQ_LEN:(n + 1) * SEQ_LEN], text[n * SEQ_LEN + 1:(n + 1) * SEQ_LEN + 1])
            for n in range(STEPS)]
    return params, data


def relative_bound(fmt: sf.Format) -> float:
    """lambda * (sqrt(L) * u + sqrt(L_acc) * u_acc): the module docstring's tolerance."""
    chain = ROUNDINGS_PER_TIME_STEP * SEQ_LEN * STEPS + ROUNDINGS_PER_UPDATE * STEPS
    chain_acc = (2 * VOCAB + 3 * HIDDEN) * SEQ_LEN * STEPS
    return LAMBDA * (np.sqrt(chain) * 2.0 ** -fmt.precision + np.sqrt(chain_acc) * 2.0 ** -24)


@pytest.mark.parametrize("name", ["fp32", "bf16"])
def test_rnn_trains_unchanged_on_arrays_within_the_formats_error(name):
    params64, data = _problem()
    start = [p.copy() for p in params64]
    losses64, _ = train(params64, data)
    fmt = sf.as_format(name)
    params = [sf.asarray(p, fmt) for p in start]
    ids = [id(p) for p in params]
    with sf.context() as ctx:
        losses, mems = train(params, data)
    bound = relative_bound(fmt)
    for got, want in zip(losses, losses64):
        assert isinstance(got, sf.Array) and got.format == fmt
        assert abs(got.item() - want) <= bound * abs(want)
    for p, p64, p0, i in zip(params, params64, start, ids):
        assert isinstance(p, sf.Array) and p.format == fmt and id(p) == i  # updated in place
        # each entry moves by at most LR per step; the steps agree within the bound
        scale = np.max(np.abs(p64)) + LR * STEPS
        assert np.max(np.abs(p.to_numpy() - p64)) <= STEPS * (2 * LR * bound + scale * 2.0 ** -fmt.precision)
        assert not np.array_equal(p.to_numpy(), p0)  # the updates were written
    assert all(isinstance(m, sf.Array) and m.format == fmt for m in mems)
    assert ctx.flags.inexact > 0 and ctx.flags.operations > 0
    assert ctx.flags.invalid == 0 and ctx.flags.overflow == 0


def test_rnn_errors_measured():
    """The tolerance tracks the precision: bf16's measured disagreement is beyond fp32's
    tolerance (it really rounds to 8 bits, not in a wider format) and within its own."""
    params64, data = _problem()
    start = [p.copy() for p in params64]
    losses64, _ = train(params64, data)
    errors = {}
    for name in ("fp32", "bf16"):
        params = [sf.asarray(p, name) for p in start]
        with sf.context():
            losses, _ = train(params, data)
        errors[name] = max(abs(g.item() - w) / abs(w) for g, w in zip(losses, losses64))
    assert errors["fp32"] <= relative_bound(sf.fp32) < errors["bf16"] <= relative_bound(sf.bf16)
