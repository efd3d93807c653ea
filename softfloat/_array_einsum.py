"""``np.einsum`` on :class:`~softfloat.Array`: every equation numpy takes, as exact data
movement around rounded contractions.

* A label repeated within an operand ("ii->i", "ii->", "iij,j->i") takes that operand's
  diagonal first (``np.diagonal``: exact).
* One operand: a transpose, then ``np.sum`` over the labels left out (the context's
  accumulator, rounded once into the format).
* Two operands: one matmul (the context's accumulator and order, rounded once): labels in
  both inputs and the output are batch axes, in both inputs only are summed (k order: as
  they come in the first operand), in one input only are free; a label summed within one
  operand alone is summed there first (``np.sum``, rounded into the format).
* More operands: two at a time as numpy's einsum plans them for ``optimize`` (its
  contraction list: which pair, which labels the intermediate keeps, in what order),
  each pair as above; ``optimize=False``, numpy's default, takes the pairs left to right
  (numpy's own float16 einsum computes that case in one float32 pass; an emulation of a
  framework's einsum takes pairs).

numpy's interleaved form (``np.einsum(a, [0, 1], b, [1, 2], [0, 2])``) is the same
equation with integer labels; "..." spans the broadcast axes (written out in unused
labels first).  ``out=`` takes the result; other keywords are refused (a TypeError naming einsum).
"""

from __future__ import annotations

import string

import numpy as np

from ._array_registry import deliver, implements, unsupported
from ._array_ufuncs import matmul as array_matmul

__all__: list = []

_WHY = ("keywords other than optimize= and out= are not defined (the result is in the operands' format; "
        "dtype=: convert the operands with astype first)")


@implements(np.einsum)
def einsum(A, *args, optimize=False, out=None, **kwargs):
    """numpy's einsum, step by step (see the module); ``out=`` (an Array, rounded into
    its format where that differs, or a float ndarray) receives the result, as numpy's."""
    if kwargs:
        raise unsupported("einsum", _WHY)
    return deliver(A, _einsum(A, args, optimize), out, "einsum")


def _einsum(A, args, optimize):
    spec, operands = _equation(args)
    fmt, bits = A.common(*operands)  # ndarray operands are weak: rounded into the format first
    operands = [A.wrap(b, fmt) for b in bits]
    if "." in spec:
        spec = _without_ellipsis(A, spec, operands)
    inputs, arrow, output = spec.partition("->")
    parts = inputs.split(",")
    if len(parts) != len(operands):
        raise ValueError(f"numpy.einsum: {spec!r} names {len(parts)} operand(s); {len(operands)} given")
    if not arrow:  # numpy's implicit output: the labels used once, sorted
        output = "".join(sorted(c for c in set(inputs) if c != "," and inputs.count(c) == 1))
    if set(output) - set(inputs) or len(set(output)) != len(output):
        raise ValueError(f"numpy.einsum: output labels {output!r} must each come from an operand, once")
    if len(parts) > 2:
        return _pairs(A, f"{inputs}->{output}", operands, optimize)
    operands, parts = zip(*(_diagonals(x, p) for x, p in zip(operands, parts)))
    operands, parts = zip(*(_summed_alone(x, p, parts, output) for x, p in zip(operands, parts)))
    if len(parts) == 1:
        (s,), (x,) = parts, operands
        return np.transpose(x, [s.index(c) for c in output])
    return _contraction(A, *parts, output, operands)


def _equation(args):
    """(subscripts without spaces, operands) from numpy's two calling forms."""
    if args and isinstance(args[0], str):
        return args[0].replace(" ", ""), list(args[1:])
    operands, sublists = list(args[0::2]), list(args[1::2])
    output = operands.pop() if len(operands) > len(sublists) else None  # an odd count: the output's
    labels = string.ascii_uppercase + string.ascii_lowercase  # numpy's symbols for 0, 1, ...

    def word(sublist):
        try:
            return "".join("..." if s is Ellipsis else labels[int(s)] for s in sublist)
        except (TypeError, ValueError, IndexError):
            raise ValueError(f"numpy.einsum: subscript lists hold integers in [0, 52) or Ellipsis; got "
                             f"{sublist!r}") from None
    spec = ",".join(word(s) for s in sublists)
    return (spec if output is None else f"{spec}->{word(output)}"), operands


def _without_ellipsis(A, spec: str, operands) -> str:
    """``spec`` with each "..." written out in labels the equation does not use,
    right-aligned across the operands (numpy's broadcasting); without "->" the output is
    the "..." labels, then the labels used once, sorted (numpy's implicit rule)."""
    inputs, arrow, output = spec.partition("->")
    parts = inputs.split(",")
    if len(parts) != len(operands) or any(p.count("...") > 1 or p.replace("...", "").count(".") for p in parts):
        raise ValueError(f"numpy.einsum: {spec!r} is not a valid equation for {len(operands)} operand(s)")
    free = [c for c in string.ascii_letters if c not in spec]
    counts = [np.ndim(x.bits if A.is_array(x) else x) - len(p.replace("...", "")) if "..." in p else 0
              for p, x in zip(parts, operands)]
    if min(counts) < 0:
        raise ValueError(f"numpy.einsum: {spec!r} names more axes than an operand has")
    dots = free[:max(counts)]
    parts = [p.replace("...", "".join(dots[len(dots) - n:])) for p, n in zip(parts, counts)]
    inputs = ",".join(parts)
    if arrow:
        return f"{inputs}->{output.replace('...', ''.join(dots))}"
    once = sorted(c for c in set(inputs) if c != "," and c not in dots and inputs.count(c) == 1)
    return f"{inputs}->{''.join(dots)}{''.join(once)}"


def _diagonals(x, labels: str):
    """``x`` with each repeated label's diagonal taken (moved last, as np.diagonal puts it)."""
    while len(set(labels)) != len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i = labels.index(c)
        j = labels.index(c, i + 1)
        x = np.diagonal(x, axis1=i, axis2=j)
        labels = labels[:i] + labels[i + 1:j] + labels[j + 1:] + c
    return x, labels


def _summed_alone(x, labels: str, parts, output: str):
    """``x`` summed over the labels no other operand and not the output has."""
    alone = [c for c in labels if c not in output and sum(c in p for p in parts) == 1]
    if not alone:
        return x, labels
    x = np.sum(x, axis=tuple(labels.index(c) for c in alone))
    return x, "".join(c for c in labels if c not in alone)


def _contraction(A, sa: str, sb: str, output: str, operands):
    """Two operands with distinct labels, each label in the other operand or the output:
    one matmul between transposes and reshapes."""
    fmt, (x, y) = A.common(*operands)
    summed = [c for c in sa if c in sb and c not in output]
    batch = [c for c in output if c in sa and c in sb]
    free_a = [c for c in sa if c not in sb]
    free_b = [c for c in sb if c not in sa]
    size = {c: max(dict(zip(sa, x.shape)).get(c, 1), dict(zip(sb, y.shape)).get(c, 1)) for c in sa + sb}
    for c in set(sa) & set(sb):
        if {x.shape[sa.index(c)], y.shape[sb.index(c)]} - {1, size[c]}:
            raise ValueError(f"numpy.einsum: label {c!r} has sizes {x.shape[sa.index(c)]} and "
                             f"{y.shape[sb.index(c)]} in the two operands")
    x = np.broadcast_to(x, [size[c] for c in sa])  # size-1 axes stretched (exact)
    y = np.broadcast_to(y, [size[c] for c in sb])
    xa = np.transpose(x, [sa.index(c) for c in batch + free_a + summed])
    yb = np.transpose(y, [sb.index(c) for c in batch + summed + free_b])
    nb = [size[c] for c in batch]
    k = int(np.prod([size[c] for c in summed], dtype=np.int64))
    m = int(np.prod([size[c] for c in free_a], dtype=np.int64))
    n = int(np.prod([size[c] for c in free_b], dtype=np.int64))
    product = array_matmul(A, A.wrap(xa.reshape(nb + [m, k]), fmt), A.wrap(yb.reshape(nb + [k, n]), fmt))
    result = product.reshape(nb + [size[c] for c in free_a + free_b])
    order = batch + free_a + free_b
    return np.transpose(result, [order.index(c) for c in output])


@implements(np.einsum_path)
def einsum_path(A, *args, optimize="greedy", einsum_call=False):
    """numpy's plan, made from the operands' shapes alone (nothing is computed)."""
    spec, operands = _equation(args)
    return np.einsum_path(spec, *_stand_ins(A, operands), optimize=optimize, einsum_call=einsum_call)


def _stand_ins(A, operands):
    """Zero-stride float64 arrays of the operands' shapes (what numpy's planner reads)."""
    return [np.broadcast_to(np.float64(0), np.shape(x.bits if A.is_array(x) else x)) for x in operands]


def _pairs(A, spec: str, operands, optimize):
    """Several operands, two at a time in numpy's plan (``np.einsum_path``'s contraction
    list, as np.einsum runs it)."""
    if optimize is False:
        optimize = ["einsum_path"] + [(0, 1)] * (len(operands) - 1)
    _, steps = np.einsum_path(spec, *_stand_ins(A, operands), optimize=optimize, einsum_call=True)
    pending = list(operands)
    for step in steps:
        taken = [pending.pop(i) for i in step[0]]
        pending.append(einsum(A, next(part for part in step if isinstance(part, str)), *taken))
    return pending[0]
