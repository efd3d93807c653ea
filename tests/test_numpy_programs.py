"""Real programs written for ndarrays run unchanged on Arrays and agree with the same
program on float64 within the format's error; flags show up in the context."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def softmax(x):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def layer_norm(x, g, b, eps: float = 1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(variance + eps) + b


def attention(q, k, v, mask):
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def block(x, w_qkv, w_out, w_fc, g, b, n_head=2):
    """picoGPT's transformer block (one layer, pre-norm), verbatim numpy idioms."""
    h = layer_norm(x, g, b) @ w_qkv
    qkv = list(map(lambda t: np.split(t, n_head, axis=-1), np.split(h, 3, axis=-1)))
    causal_mask = (1 - np.tri(x.shape[0], dtype=np.float32)) * -1e10
    heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv)]
    x = x + np.hstack(heads) @ w_out
    return x + gelu(layer_norm(x, g, b) @ w_fc) @ w_fc.T


def test_transformer_block_runs_unchanged_and_the_mask_overflows_fp16():
    rng = np.random.default_rng(0)
    n, d = 5, 8
    wte = rng.standard_normal((11, d)) * 0.5
    inputs = [3, 1, 4, 1, 5]
    params = [rng.standard_normal((d, 3 * d)) * 0.3, rng.standard_normal((d, d)) * 0.3,
              rng.standard_normal((d, 2 * d)) * 0.3, np.ones(d), np.zeros(d)]
    expected = block(wte[inputs], *params)
    emb = sf.asarray(wte, "fp16")
    with sf.context() as ctx:
        got = block(emb[inputs], *(sf.asarray(p, "fp16") for p in params))
    assert isinstance(got, sf.Array) and got.format == sf.fp16 and got.shape == (n, d)
    assert ctx.flags.overflow > 0  # -1e10 is no fp16 value: the mask's entries overflow
    assert np.allclose(got.to_numpy(), expected, rtol=0.05, atol=0.05)


def conjugate_gradient(A, b, iterations):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r
    rs = r @ r
    for _ in range(iterations):
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def test_conjugate_gradient_solves_in_fp32():
    rng = np.random.default_rng(1)
    m = rng.standard_normal((6, 6))
    A = m @ m.T + 6 * np.eye(6)
    b = rng.standard_normal(6)
    expected = np.linalg.solve(A, b)
    got = conjugate_gradient(sf.asarray(A, "fp32"), sf.asarray(b, "fp32"), 12)
    assert got.format == sf.fp32
    assert np.allclose(got.to_numpy(), expected, rtol=1e-4, atol=1e-5)


def kahan(xs):
    total = xs[0] * 0
    c = total
    for x in xs:
        y = x - c
        t = total + y
        c = (t - total) - y
        total = t
    return total


def naive(xs):
    total = xs[0] * 0
    for x in xs:
        total = total + x
    return total


def test_kahan_summation_beats_naive_summation_in_fp16():
    values = np.full(1000, 0.1)
    exact = float(np.sum(sf.asarray(values, "fp16").to_numpy(np.float64)))
    xs = list(sf.asarray(values, "fp16"))
    assert abs(float(kahan(xs)) - exact) < abs(float(naive(xs)) - exact) / 10


def multi_head_scores(x, w, n_head):
    """Multi-head attention weights written with einsum, as einops-style code does."""
    q = np.einsum("td,hde->hte", x, w[0])
    k = np.einsum("td,hde->hte", x, w[1])
    scores = np.einsum("hqe,hke->hqk", q, k) / np.sqrt(q.shape[-1])
    return softmax(scores)


def test_einsum_attention_polyval_and_histograms_run_unchanged():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((5, 8)) * 0.5, rng.standard_normal((2, 2, 8, 4)) * 0.3
    got = multi_head_scores(sf.asarray(x, "fp16"), sf.asarray(w, "fp16"), 2)
    assert got.format == sf.fp16 and got.shape == (2, 5, 5)
    assert np.allclose(got.to_numpy(np.float64), multi_head_scores(x, w, 2), atol=4e-3)
    assert np.allclose(np.sum(got, axis=-1).to_numpy(np.float64), 1.0, atol=4e-3)
    taylor = [1 / 24, 1 / 6, 1 / 2, 1.0, 1.0]  # exp(t) near 0, highest power first
    t = np.linspace(-0.5, 0.5, 11)
    approx = np.polyval(taylor, sf.asarray(t, "bf16"))
    assert approx.format == sf.bf16
    assert np.allclose(approx.to_numpy(np.float64), np.exp(t), rtol=2 ** -6)
    counts, edges = np.histogram(sf.asarray(t, "bf16") - sf.asarray(t, "fp16"), bins=4)
    assert counts.sum() == t.size and edges.dtype == np.float32  # bf16 - fp16 promotes to fp32
    rotation = sf.asarray([[0.0, -1.0], [1.0, 0.0]], "fp8_e4m3")
    assert np.array_equal(np.linalg.matrix_power(rotation, 4).to_numpy(), np.eye(2))
