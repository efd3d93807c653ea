"""The summation orders of the package docstring, over one tile, for any arithmetic.

An arithmetic (``_ieee.Arithmetic``, correctly rounded in any format and mode; or
``_fast.Native``, numpy's own float32/float16/float64 where that is provably the same)
provides the pieces: ``chain`` (sequential additions over a chunk of terms), ``leaves``
(terms rounded into the accumulator), ``pairs`` (one level of pair additions), ``add_c``,
``promote`` (a run sum into the running total in out_format), ``finish`` (the final
rounding into out_format) and ``zeros``.  This module only decides which piece runs when.
"""

from __future__ import annotations

import numpy as np

__all__ = ["accumulate_tile"]

#: lanes (terms of a chunk times outputs of a tile) a sequential chain decodes at once,
#: unless the arithmetic names its own ``chain_lanes``
CHAIN_LANES = 1 << 18
#: lanes (leaves of a chunk times outputs of a tile) the pairwise order holds at once
PAIRWISE_LANES = 1 << 20


def accumulate_tile(arith, spec, tile, c_values, flags):
    """The tile's results, flat, as values of out_format in the arithmetic's dtype."""
    K = tile.layout.K
    reverse = spec.order == "reverse"

    def run(k0, k1, start):
        if spec.order == "pairwise":
            total = _pairwise(arith, tile, k0, k1, flags)
            if total is None or start is None:
                return start if total is None else total
            return arith.add_c(start, total, tile, K, flags)
        return _sequential(arith, tile, k0, k1, reverse, start, flags)

    if spec.block is None:
        s = run(0, K, c_values)
        return arith.zeros(tile.n) if s is None else arith.finish(s, tile, flags)
    total = c_values
    for j, (k0, k1) in enumerate(_runs(K, spec.block, reverse)):
        total = arith.promote(total, run(k0, k1, None), j, tile, flags)
    return arith.zeros(tile.n) if total is None else total


def _runs(K: int, size: int, reverse: bool):
    """Runs of ``size`` consecutive term indices, as (start, stop), in processing order."""
    if reverse:
        return [(max(k1 - size, 0), k1) for k1 in range(K, 0, -size)]
    return [(k0, min(k0 + size, K)) for k0 in range(0, K, size)]


def _sequential(arith, tile, k0, k1, reverse, s, flags):
    """s, then the terms k0 .. k1-1 (or backwards) added one by one."""
    chunk = max(1, getattr(arith, "chain_lanes", CHAIN_LANES) // max(tile.n, 1))
    starts = range(k0, k1, chunk)
    for c0 in (reversed(starts) if reverse else starts):
        s = arith.chain(s, tile, c0, min(c0 + chunk, k1), reverse, flags)
    return s


def _pairwise(arith, tile, k0, k1, flags):
    """The pairwise sum of terms k0 .. k1-1, as the level-by-level tree of the package
    docstring (None for no terms).

    Chunks of 2**c leaves (c fixed, k0 a multiple of 2**c) are reduced level by level and
    their roots merged like a binary counter; the incomplete right part then merges right
    to left.  That is the same tree: an odd last node is carried up a level at a time
    until it pairs with the subtree on its left.  Pair additions are identified by
    (level, index within the level) of the node they make, whatever the chunking.
    """
    n = tile.n
    c = max(0, min((PAIRWISE_LANES // max(n, 1)).bit_length() - 1, max(k1 - k0 - 1, 0).bit_length()))
    chunk = 1 << c
    stack = []  # (level, first leaf, values) of complete subtrees, left to right
    for a in range(k0, k1, chunk):
        b = min(a + chunk, k1)
        nodes = arith.leaves(tile, a, b, flags)
        level = 0
        while nodes.shape[0] > 1:
            m = nodes.shape[0]
            half = m // 2
            js = (a >> (level + 1)) + np.arange(half)
            summed = arith.pairs(nodes[0:2 * half:2], nodes[1:2 * half:2], tile, js, level + 1, flags)
            nodes = np.concatenate([summed, nodes[2 * half:]]) if m % 2 else summed
            level += 1
        root = nodes[0]
        if b - a == chunk:
            while stack and stack[-1][0] == level:
                lvl, start, left = stack.pop()
                root = _merge(arith, tile, left, root, lvl, start, flags)
                a, level = start, lvl + 1
        stack.append((level, a, root))
    while len(stack) > 1:
        _, _, right = stack.pop()
        lvl, start, left = stack.pop()
        stack.append((lvl + 1, start, _merge(arith, tile, left, right, lvl, start, flags)))
    return stack[0][2] if stack else None


def _merge(arith, tile, left, right, level, start, flags):
    """Two subtrees into the node one level above the left one."""
    return arith.pairs(left[None], right[None], tile, [start >> (level + 1)], level + 1, flags)[0]
