"""``F.scaled_dot_product_attention`` decomposed into emulated products and roundings
into the recipe's activations format (see :func:`attention` for the definition)."""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from ._products import batched

__all__ = ["attention", "batched"]


def attention(run, bound: dict, round_act):
    """The emulated ``scaled_dot_product_attention(query, key, value, attn_mask=None,
    dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False)``.

    ``run`` is the engine call of the call site (``run(..., part=".qk")`` names a
    sub-site), ``bound`` torch's arguments by name, ``round_act(t)`` rounds a tensor into
    the recipe's ``activations`` format A (nearest even, straight-through gradient).

    Pencil-and-paper definition, per entry i of the broadcast batch axes (batch x heads),
    with Q (L, E), K (S, E), V (S, Ev) its matrices, ``rnd_A`` one rounding into A of the
    exact value, ``fp32(x)`` one IEEE binary32 rounding (the products of every entry are
    one batched call of their sub-site: an FP8 per-tensor scale covers all heads)::

        K, V  = K, V with each head repeated q_heads // kv_heads times (enable_gqa,
                torch's repeat_interleave along the head axis)
        S     = product(Q, K^T)                      site "<site>.qk": the engine's fprop,
                                                     rounded into A (as every product)
        sc    = fp32(scale if scale is not None else 1 / sqrt(E))
        T     = rnd_A(S * sc)                        S * sc is exact (<= 24 x 24 bits,
                                                     computed in float64): one rounding
        T     = where(attn_mask, T, -inf)            boolean mask (True takes part)
        T     = rnd_A(T + attn_mask)                 float mask: the exact sum, rounded once
                                                     (float64 sum rounded to odd, then into A)
        T     = where(causal, T, -inf)               is_causal: j > i masked (torch's tril)
        P     = rnd_A(softmax_fp32(T))               torch's float32 softmax along S; a row
                                                     masked everywhere gives zeros, as torch's
                                                     math backend's _safe_softmax
        P     = rnd_A(torch.dropout(P, dropout_p, train=True))   only where dropout_p > 0:
                                                     torch's own dropout (its RNG draws, its
                                                     float32 scaling by 1/(1-p))
        O     = product(P, V)                        site "<site>.pv": the engine's fprop

    The result has the query's dtype.  The backward pass is autograd's of this
    decomposition: the two products' dgrad and wgrad run through the engine (dQ = dS K,
    dK^T = Q^T dS, dP = dO V^T, dV = P^T dO, each rounded into the recipe's ``gradients``
    format); the roundings rnd_A pass their gradient straight through; the softmax,
    dropout, mask and scale gradients, and the sum over repeated GQA heads, are torch's
    float32/float64 arithmetic on the emulated values (not emulated: no product there).
    """
    q, k, v = bound["query"], bound["key"], bound["value"]
    mask, causal = bound.get("attn_mask"), bool(bound.get("is_causal", False))
    p, scale = float(bound.get("dropout_p", 0.0)), bound.get("scale")
    _check(q, k, v, mask, causal, p)
    if bound.get("enable_gqa", False) and k.dim() >= 3 and q.shape[-3] != k.shape[-3]:
        k, v = _repeat_heads(q, k), _repeat_heads(q, v)
    length, source, width = q.shape[-2], k.shape[-2], q.shape[-1]
    sc = float(np.float32(1 / math.sqrt(width) if scale is None else scale))
    s = batched(functools.partial(run, part=".qk"), q, k.transpose(-2, -1))
    t = round_act(s.double() * sc)  # exact in float64, one rounding into A
    if mask is not None:
        t = _masked(t, mask, round_act)
    if causal:
        keep = torch.ones(length, source, dtype=torch.bool, device=t.device).tril()
        t = t.masked_fill(~keep, -math.inf)
    weights = round_act(_safe_softmax(t.float()))
    if p > 0:
        weights = round_act(torch.dropout(weights, p, True))
    return batched(functools.partial(run, part=".pv"), weights.to(v.dtype), v).to(q.dtype)


def _check(q, k, v, mask, causal, p) -> None:
    if q.dim() < 2 or k.dim() < 2 or v.dim() < 2:
        raise ValueError(f"query, key and value of scaled_dot_product_attention must have at least 2 axes "
                         f"(..., L, E); got shapes {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(f"query (..., L, E), key (..., S, E) and value (..., S, Ev) of "
                         f"scaled_dot_product_attention do not fit; got shapes {tuple(q.shape)}, "
                         f"{tuple(k.shape)}, {tuple(v.shape)}")
    if mask is not None and causal:
        raise ValueError("attn_mask of scaled_dot_product_attention must be None when is_causal=True "
                         "(as torch requires); got a mask and is_causal=True")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout_p of scaled_dot_product_attention must be in [0, 1]; got {p}")
    if mask is not None and not (isinstance(mask, torch.Tensor) and (mask.dtype == torch.bool
                                                                   or mask.dtype.is_floating_point)):
        got = type(mask).__name__ if not isinstance(mask, torch.Tensor) else f"a tensor of dtype {mask.dtype}"
        raise TypeError(f"attn_mask of scaled_dot_product_attention must be a bool or float tensor; got {got}")


def _repeat_heads(q, t):
    """GQA: each of ``t``'s heads repeated q_heads // kv_heads times (torch's rule)."""
    heads, kv = q.shape[-3], t.shape[-3]
    if heads % kv:
        raise ValueError(f"enable_gqa needs the query's heads ({heads}) to be a multiple of the key's and "
                         f"value's ({kv})")
    return t.repeat_interleave(heads // kv, dim=-3)


def _masked(t, mask, round_act):
    """A boolean mask sets -inf where False; a float mask is added exactly, then rounded
    once into A."""
    if mask.dtype == torch.bool:
        return t.masked_fill(~mask, -math.inf)
    return round_act(_sum_to_odd(t, mask.to(torch.float64)))


def _sum_to_odd(a, b):
    """``a + b`` of float64 tensors of fp32 values, rounded to odd in float64.

    Rounding the result into a format of p <= 51 significant bits is then the exact
    sum's rounding (round to odd with two extra bits, Boldo and Melquiond 2008): where
    the float64 sum is inexact (2Sum's error e != 0) and its last bit even, it moves
    one ulp toward e.  The gradient is the sum's (the nudge is detached).
    """
    s = a + b
    with torch.no_grad():
        bb = s - a
        e = (a - (s - bb)) + (b - bb)  # 2Sum: a + b == s + e exactly (s finite)
        nudge = (e != 0) & torch.isfinite(e) & ((s.view(torch.int64) & 1) == 0)
        odd = torch.nextafter(s, torch.where(e > 0, math.inf, -math.inf).to(s.dtype))
        delta = torch.where(nudge, odd - s, torch.zeros_like(s))  # exactly one ulp, or 0
    return s + delta


def _safe_softmax(x):
    """torch's float32 softmax along the last axis; rows that are -inf everywhere give
    zeros (torch's math backend's rule) with zero gradient."""
    dead = torch.isneginf(x).all(dim=-1, keepdim=True)
    y = torch.softmax(torch.where(dead, torch.zeros_like(x), x), dim=-1)
    return torch.where(dead, torch.zeros_like(y), y)

