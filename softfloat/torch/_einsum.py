"""Two-operand ``torch.einsum`` contractions rewritten as one batched matrix product
(see :func:`plan`), after the exact moves and torch's own sums that make an equation one
(:func:`simplified`); several operands as torch pairs them (:func:`pairwise`)."""

from __future__ import annotations

import torch

__all__ = ["pairwise", "plan", "simplified"]


def plan(equation: str, a, b):
    """``(A, B, finish)`` with ``einsum(equation, a, b) == finish(A @ B)``: A (Bt, M, K)
    and B (Bt, K, N) are permutes, broadcasts and reshapes of ``a`` and ``b`` (exact data
    movement), ``finish`` reshapes and permutes the (Bt, M, N) product into the output.

    The labels fall into four classes: batch (in both operands and the output), left
    (only in ``a`` and the output: M), right (only in ``b`` and the output: N) and
    contracted (in both operands, not in the output: K).  Batch, left and right labels
    are taken in the output's order; the contracted ones in their order in ``a``, which
    is the k order of the product (first label major).  "..." spans broadcast axes
    (right-aligned, as torch); without "->" the output is "..." followed by the labels
    used once, sorted (torch's implicit rule).  Size-1 axes broadcast.

    Raises NotImplementedError, naming the equation, for what is not a matrix product:
    a label repeated within an operand (a diagonal), a label summed in one operand only
    (a reduction), and products with no contracted, left or right label (elementwise).
    """
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    specs = lhs.split(",")
    if len(specs) != 2:
        raise ValueError(f"equation {equation!r} must name two operands (it is given two)")
    sa, sb = (_expand(s, t, equation) for s, t in zip(specs, (a, b)))
    dots = max(len(sa[1]), len(sb[1]))
    ell = [chr(0x100 + i) for i in range(dots)]  # labels of the "..." axes, right-aligned
    la = ell[dots - len(sa[1]):] if sa[1] else []
    lb = ell[dots - len(sb[1]):] if sb[1] else []
    labels_a, labels_b = sa[0](la), sb[0](lb)
    for labels in (labels_a, labels_b):
        if len(set(labels)) != len(labels):
            raise NotImplementedError(f"einsum {equation!r}: a label repeated within an operand (a diagonal) "
                                      "is not emulated")
    if arrow:
        if out.count("...") > 1:
            raise ValueError(f"equation {equation!r} has more than one '...' in its output")
        head, _, tail = out.partition("...")
        output = list(head) + (ell if "..." in out else []) + list(tail)
    else:
        once = sorted(c for c in set(labels_a + labels_b) if c not in ell and (labels_a + labels_b).count(c) == 1)
        output = ell + once
    if len(set(output)) != len(output) or any(c not in labels_a and c not in labels_b for c in output):
        raise ValueError(f"equation {equation!r}: every output label must come from an operand, once")
    batch = [c for c in output if c in labels_a and c in labels_b]
    left = [c for c in output if c in labels_a and c not in labels_b]
    right = [c for c in output if c in labels_b and c not in labels_a]
    summed = [c for c in labels_a if c in labels_b and c not in output]
    if any(c not in output and c not in summed for c in labels_a + labels_b):
        raise NotImplementedError(f"einsum {equation!r}: a label summed within one operand (a reduction) is "
                                  "not emulated")
    if not (summed or left or right):
        raise NotImplementedError(f"einsum {equation!r} is an elementwise product, not a contraction; "
                                  "it is not emulated")
    size = {}
    for labels, t, name in ((labels_a, a, "a"), (labels_b, b, "b")):
        for c, n in zip(labels, t.shape):
            have = size.get(c, 1)
            if have not in (1, n) and n != 1:
                raise ValueError(f"einsum {equation!r}: operand sizes {tuple(a.shape)} and {tuple(b.shape)} "
                                 "do not broadcast")
            size[c] = n if have == 1 else have  # a size 1 broadcasts (to 0 too)
    big_a = _arranged(a, labels_a, batch + left + summed, size)
    big_b = _arranged(b, labels_b, batch + summed + right, size)
    nb, m, k, n = (_count(size, g) for g in (batch, left, summed, right))
    grid = batch + left + right
    perm = [grid.index(c) for c in output]

    def finish(product):
        return product.reshape([size[c] for c in grid]).permute(perm)
    return big_a.reshape(nb, m, k), big_b.reshape(nb, k, n), finish


def pairwise(equation: str, count: int, path=None):
    """The two-operand steps of an einsum of ``count`` operands: ``[(i, j, sub_equation)]``,
    each contracting operands ``i`` and ``j`` of the current list (removed from it, the
    result appended at the end), as torch runs it -- ``path`` (opt_einsum's pairs, where
    torch takes them) or left to right.  An intermediate keeps the labels a later operand
    or the output needs, the output's first (in its order), then the others alphabetically
    (torch's label order).  Raises NotImplementedError for "..." (not emulated here)."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    specs = lhs.split(",")
    if len(specs) != count:
        raise ValueError(f"equation {equation!r} names {len(specs)} operand(s); {count} given")
    if "." in eq:
        raise NotImplementedError(f"einsum {equation!r}: '...' with more than two operands is not emulated")
    if not arrow:
        out = "".join(sorted(c for c in set(lhs) if c != "," and lhs.count(c) == 1))
    rank = {c: i for i, c in enumerate(out)}

    def order(labels):
        return "".join(sorted(set(labels), key=lambda c: (rank.get(c, len(rank)), c)))
    steps = []
    if path is None:  # left to right: the running result stays first
        path = [(0, 1)] + [(0, count - 1 - s) for s in range(1, count - 1)]
    for i, j in path:
        i, j = sorted((i, j))
        a, b = specs[i], specs[j]
        rest = [sp for k, sp in enumerate(specs) if k not in (i, j)]
        kept = out if not rest else order(c for c in a + b if c in out or any(c in sp for sp in rest))
        steps.append((i, j, f"{a},{b}->{kept}"))
        specs = rest + [kept]
    return steps


def simplified(equation: str, a, b):
    """``(equation, a, b)`` of a two-operand einsum without "..." made a contraction
    :func:`plan` takes: a label repeated within an operand takes its diagonal
    (``torch.diagonal``, exact), a label in one operand only and not in the output is
    summed there first (``torch.sum``: torch's own sum, as any sum under the emulation).
    None where what is left is an elementwise product (no label summed, none in one
    operand only): torch runs it, as it runs ``a * b``.  Equations with "..." come back
    as they are (:func:`plan` says what it does not take)."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    specs = lhs.split(",")
    if "." in eq or len(specs) != 2 or any(not c.isalpha() for c in "".join(specs) + out):
        return equation, a, b
    if not arrow:
        out = "".join(sorted(c for c in set(lhs) if c != "," and lhs.count(c) == 1))
    (a, sa), (b, sb) = _diagonals(a, specs[0]), _diagonals(b, specs[1])
    a, sa = _summed_alone(a, sa, sb + out)
    b, sb = _summed_alone(b, sb, sa + out)
    if set(sa) == set(sb) and set(sa) <= set(out):
        return None  # the same labels in both, none summed: elementwise
    return f"{sa},{sb}->{out}", a, b


def _diagonals(t, labels: str):
    while len(set(labels)) != len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i = labels.index(c)
        j = labels.index(c, i + 1)
        t = torch.diagonal(t, dim1=i, dim2=j)  # the diagonal goes last
        labels = labels[:i] + labels[i + 1:j] + labels[j + 1:] + c
    return t, labels


def _summed_alone(t, labels: str, elsewhere: str):
    alone = [c for c in labels if c not in elsewhere]
    if not alone:
        return t, labels
    return t.sum(dim=[labels.index(c) for c in alone]), "".join(c for c in labels if c not in alone)


def _expand(spec: str, t, equation: str):
    """(labels given the "..." labels, the "..." axes' count) of one operand."""
    if spec.count("...") > 1 or any(not (c.isalpha() or c == ".") for c in spec):
        raise ValueError(f"equation {equation!r}: operand spec {spec!r} is not a valid einsum spec")
    head, dots, tail = spec.partition("...")
    free = t.dim() - len(head) - len(tail)
    if (not dots and free != 0) or free < 0:
        raise ValueError(f"equation {equation!r}: operand spec {spec!r} does not fit a tensor of shape "
                         f"{tuple(t.shape)}")
    return (lambda ell: list(head) + list(ell) + list(tail)), [None] * free


def _arranged(t, labels, order, size):
    """``t`` with its axes in ``order`` (labels), size-1 axes broadcast to ``size``."""
    t = t.permute([labels.index(c) for c in order])
    return t.expand([size[c] for c in order])


def _count(size, labels) -> int:
    n = 1
    for c in labels:
        n *= size[c]
    return n
