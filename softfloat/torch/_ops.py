"""torch's matrix-product functions as 2-d emulated products: F.linear, matmul (and
``@``), mm, bmm, addmm, baddbmm, addmv, addbmm (and in place: addmm_, baddbmm_,
addmv_, addbmm_), mv, dot, inner,
einsum (several operands in torch's pairs), conv1d/conv2d and scaled_dot_product_attention.

Each handler binds torch's arguments, checks the operands, and writes the call as
products of 2-d matrices (:func:`softfloat.torch._products.gemm`) joined by reshapes,
expands and stacks, whose gradients torch's autograd takes care of:

- ``linear(x, w, b)`` over (..., K) inputs is one (M, K) x (K, N) product, M the
  product of the leading axes, the bias added in the accumulator;
- ``matmul`` follows torch's rules (1-d operands become a row or a column, batch axes
  broadcast); a 2-d right operand makes it one product, else one batched call: a
  stack of one product per batch entry (:func:`softfloat.torch._products.batched`; a
  per-tensor scale covers the whole call, as for bmm, baddbmm and einsum's batches);
- ``addmm``/``baddbmm`` with ``beta == alpha == 1`` add ``input`` in the accumulator; with
  other factors the product is scaled and added in the caller's dtype and the sum
  rounded again into the output format; ``beta == 0`` ignores ``input`` (as torch does);
  ``addmm_``/``baddbmm_`` (``addmv_``/``addbmm_``) compute the same and copy it into
  ``self`` (autograd's copy_);
- ``mv``, ``dot`` and ``vdot`` are ``matmul``'s 1-d cases; ``inner(a, b)`` of (..., K)
  tensors and ``tensordot`` are one (M, K) x (K, N) product (0-d operands of ``inner``:
  torch's own multiplication); ``addmv`` is ``addmm`` with a column; ``addbmm`` is
  ATen's loop of ``addmm_`` over the batch, each step rounded into the output (the
  entries' products one batched call); ``linalg.multi_dot`` (and ``chain_matmul``) is ATen's chain of products
  in ATen's order; ``matrix_power`` ATen's products by the bits of n (a negative power,
  an inverse, is torch's own) -- a chain's products (and einsum's pairs) are sub-sites
  ``<site>.1``, ``<site>.2``, ... in the order they run, each with its own scaling state;
  ``cdist`` with p = 2, where ATen takes a product for it, is its ``_euclidean_dist``;
- ``einsum`` with two operands: one batched product (:func:`softfloat.torch._einsum.plan`),
  diagonals taken and labels of one operand alone summed first in torch
  (:func:`softfloat.torch._einsum.simplified`); one-operand equations, elementwise
  products and equations with no float operand run in torch, as ``torch.sum`` and
  ``a * b`` do; "..." with three or more operands raises NotImplementedError;
- ``conv1d``/``2d``/``3d``: :func:`softfloat.torch._conv.convolution`;
  ``conv_transpose1d``/``2d``/``3d``: :func:`softfloat.torch._conv.transposed` (a
  convolution of the zero-stuffed input); ``torch.convolution`` (and ``_convolution``)
  is either, by its ``transposed`` flag;
- ``scaled_dot_product_attention``: :func:`softfloat.torch._attention.attention`;
- ``outer`` (``ger``, its call sites ``ger#N``), ``addr`` (``addr_``), ``kron``: products of one term
  (:mod:`softfloat.torch._outer`, with addmm's epilogue for addr).

Integer operands are passed to torch unchanged (integer products are exact; nothing to
emulate); complex and sparse ones are a TypeError (torch.sparse's own products are
out of reach: :data:`OPAQUE`).  ``out=`` receives a copy of the result.
"""

from __future__ import annotations

import functools
import itertools
import math

import torch
import torch.nn.functional as F

from ._attention import attention
from ._autocast import lowered
from ._conv import convolution, transposed
from ._einsum import pairwise, plan, simplified
from ._opaque import OPAQUE, may_reach_out, out_of_reach
from ._outer import addr, addr_shapes, in_place, kron, outer, scaled
from ._products import batched, gemm, rows
from ._tensors import check_dense, check_device

__all__ = ["FUNCTIONS", "OPAQUE", "dispatch", "may_reach_out", "out_of_reach"]

_CONVOLUTION = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")
_TRANSPOSED = ("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation")
_GENERAL = ("input", "weight", "bias", "stride", "padding", "dilation", "transposed", "output_padding", "groups")
#: argument names of each function, in torch's order (self first for methods)
_SIGNATURES = {
    "linear": ("input", "weight", "bias"),
    "matmul": ("input", "other"), "rmatmul": ("input", "other"),
    "mm": ("input", "mat2"), "bmm": ("input", "mat2"),
    "addmm": ("input", "mat1", "mat2"), "baddbmm": ("input", "batch1", "batch2"),
    "addmm_": ("input", "mat1", "mat2"), "baddbmm_": ("input", "batch1", "batch2"),
    "mv": ("input", "vec"), "dot": ("input", "tensor"), "inner": ("input", "other"),
    **{f"conv{d}d": _CONVOLUTION for d in (1, 2, 3)},
    **{f"conv_transpose{d}d": _TRANSPOSED for d in (1, 2, 3)},
    "attention": ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa"),
    "vdot": ("input", "other"), "addmv": ("input", "mat", "vec"), "addbmm": ("input", "batch1", "batch2"),
    "addmv_": ("input", "mat", "vec"), "addbmm_": ("input", "batch1", "batch2"),
    "tensordot": ("a", "b", "dims"),
    "outer": ("input", "vec2"), "ger": ("input", "vec2"), "kron": ("input", "other"),
    "addr": ("input", "vec1", "vec2"), "addr_": ("input", "vec1", "vec2"),
    "multi_dot": ("tensors",), "chain_matmul": ("tensors",), "matrix_power": ("input", "n"), "cdist": ("x1", "x2", "p", "compute_mode"),
    "vecdot": ("x", "y"),
    "convolution": _GENERAL, "_convolution": _GENERAL + ("benchmark", "deterministic", "cudnn_enabled", "allow_tf32"),
}
#: the arguments whose dtypes decide (others, like a boolean attn_mask, are checked by the handler)
_OPERANDS = {"attention": ("query", "key", "value"), "einsum": ("input", "other")}
#: handlers whose operands are a list (checked one by one)
_LISTS = {"multi_dot": "tensors", "chain_matmul": "tensors"}
#: the product name a call site is named after
_SITE = {"addr_": "addr", "rmatmul": "matmul", "addmm_": "addmm", "baddbmm_": "baddbmm", "addmv_": "addmv", "addbmm_": "addbmm"}


def _bind(name: str, args, kwargs) -> dict:
    bound = dict(zip(_SIGNATURES[name], args))
    for key, value in kwargs.items():
        bound[key] = value
    return bound


def _operands(name: str, bound: dict) -> str:
    """"emulate", or "torch" where an integer operand makes it torch's own product; a
    TypeError for complex operands, a ValueError for tensors without values."""
    keys = _OPERANDS[name] if name in _OPERANDS else _SIGNATURES[name]
    tensors = [(k, bound[k]) for k in keys if isinstance(bound.get(k), torch.Tensor)]
    if name in _LISTS:
        tensors = [(f"{_LISTS[name]}[{i}]", t) for i, t in enumerate(bound[_LISTS[name]])
                   if isinstance(t, torch.Tensor)]
    for key, t in tensors:
        check_dense(f"{key} of {name}", t)
        if t.dtype.is_complex:
            raise TypeError(f"{key} of {name} must be a real float tensor under softfloat.torch.emulate; "
                            f"got a complex tensor of dtype {t.dtype} (complex products are not emulated)")
    if any(not t.dtype.is_floating_point for _, t in tensors):
        return "torch"
    if len({t.dtype for _, t in tensors}) > 1:
        return "torch"  # torch's own dtype error
    for key, t in tensors:
        check_device(f"{key} of {name}", t)
    return "emulate"


def _finish(result, bound: dict):
    out = bound.get("out")
    if out is None:
        return result
    with torch.no_grad():
        out.resize_(result.shape).copy_(result)
    return out


def _linear(run, b):
    x, w, bias = b["input"], b["weight"], b.get("bias")
    if w.dim() == 1:  # torch's x @ w: one output per row (a bias only for a 1-d x: _SHAPES)
        return gemm(run, rows(x), w[:, None], None if bias is None else bias.reshape(1),
                    checked=True).reshape(x.shape[:-1])
    y = gemm(run, rows(x), w.t(), bias, checked=True)  # (views of the operands _operands checked)
    return y.reshape(*x.shape[:-1], w.shape[0])


def _matmul(run, a, b):
    if a.dim() == 1 and b.dim() == 1:
        return _matmul(run, a[None], b[:, None]).reshape(())
    if a.dim() == 1:
        return _matmul(run, a[None], b).squeeze(-2)
    if b.dim() == 1:
        return _matmul(run, a, b[:, None]).squeeze(-1)
    if b.dim() == 2:
        return gemm(run, rows(a), b, checked=True).reshape(*a.shape[:-1], b.shape[-1])
    return batched(run, a, b, None)



HANDLERS = {
    "linear": lambda run, b, r: _linear(run, b),
    "matmul": lambda run, b, r: _matmul(run, b["input"], b["other"]),
    "rmatmul": lambda run, b, r: _matmul(run, b["other"], b["input"]),
    "mm": lambda run, b, r: gemm(run, b["input"], b["mat2"], checked=True),
    "bmm": lambda run, b, r: batched(run, b["input"], b["mat2"], None),
    "addmm": lambda run, b, r: scaled(run, b, "mat1", "mat2", r),
    "baddbmm": lambda run, b, r: scaled(run, b, "batch1", "batch2", r),
    "addmm_": lambda run, b, r: in_place(b, scaled(run, b, "mat1", "mat2", r)),
    "baddbmm_": lambda run, b, r: in_place(b, scaled(run, b, "batch1", "batch2", r)),
    "mv": lambda run, b, r: _matmul(run, b["input"], b["vec"]),
    "dot": lambda run, b, r: _matmul(run, b["input"], b["tensor"]),
    "inner": lambda run, b, r: _inner(run, b["input"], b["other"]),
    "conv1d": lambda run, b, r: convolution(run, b, 1),
    "conv2d": lambda run, b, r: convolution(run, b, 2),
    "attention": attention,
    "vdot": lambda run, b, r: _matmul(run, b["input"], b["other"]),
    "addmv": lambda run, b, r: _addmv(run, b, r),
    "addbmm": lambda run, b, r: _addbmm(run, b, r),
    "addmv_": lambda run, b, r: in_place(b, _addmv(run, b, r)),
    "addbmm_": lambda run, b, r: in_place(b, _addbmm(run, b, r)),
    "tensordot": lambda run, b, r: _tensordot(run, b["a"], b["b"], b.get("dims", 2)),
    "multi_dot": lambda run, b, r: _multi_dot(run, list(b["tensors"])),
    "chain_matmul": lambda run, b, r: _multi_dot(run, list(b["tensors"])),  # ATen: linalg_multi_dot
    "matrix_power": lambda run, b, r: _matrix_power(run, b["input"], b["n"]),
    "cdist": lambda run, b, r: _euclidean(run, b["x1"], b["x2"]),
    "vecdot": lambda run, b, r: _vecdot(run, b["x"], b["y"], b.get("dim", -1)),
    "conv3d": lambda run, b, r: convolution(run, b, 3),
    "conv_transpose3d": lambda run, b, r: transposed(run, b, 3),
    # torch.convolution (and _convolution): either kind, as many dimensions as the weight has
    "convolution": lambda run, b, r: (transposed if b["transposed"] else convolution)(run, b, b["weight"].dim() - 2),
    "_convolution": lambda run, b, r: (transposed if b["transposed"] else convolution)(run, b, b["weight"].dim() - 2),
    "conv_transpose1d": lambda run, b, r: transposed(run, b, 1),
    "conv_transpose2d": lambda run, b, r: transposed(run, b, 2),
    # products of one term (softfloat.torch._outer)
    "outer": lambda run, b, r: outer(run, b["input"], b["vec2"]),
    "ger": lambda run, b, r: outer(run, b["input"], b["vec2"]),  # outer's alias, its sites named "ger#N"
    "kron": lambda run, b, r: kron(run, b["input"], b["other"]),
    "addr": lambda run, b, r: addr(run, b, r),
    "addr_": lambda run, b, r: in_place(b, addr(run, b, r)),
}
#: shapes each handler takes; other shapes go to torch, which raises its own error
_SHAPES = {
    **{name: (lambda b, k=keys, d=dims: all(isinstance(b.get(key), torch.Tensor) and b[key].dim() == d
                                            for key in k)) for name, keys, dims in (
        ("mm", ("input", "mat2"), 2), ("addmm", ("mat1", "mat2"), 2), ("addmm_", ("mat1", "mat2"), 2),
        ("bmm", ("input", "mat2"), 3), ("baddbmm", ("batch1", "batch2"), 3),
        ("baddbmm_", ("batch1", "batch2"), 3))},
    "linear": lambda b: b["weight"].dim() == 2 or (b["weight"].dim() == 1 and (
        b.get("bias") is None or (b["input"].dim() == 1 and b["bias"].numel() == 1))),
    "mv": lambda b: b["input"].dim() == 2 and b["vec"].dim() == 1,
    "dot": lambda b: b["input"].dim() == 1 and b["tensor"].dim() == 1,
    "inner": lambda b: b["input"].dim() >= 1 and b["other"].dim() >= 1,
    "vdot": lambda b: b["input"].dim() == 1 and b["other"].dim() == 1,
    "addmv": lambda b: b["mat"].dim() == 2 and b["vec"].dim() == 1,
    "addbmm": lambda b: b["batch1"].dim() == 3 and b["batch2"].dim() == 3,
    "addmv_": lambda b: b["mat"].dim() == 2 and b["vec"].dim() == 1,
    "addbmm_": lambda b: b["batch1"].dim() == 3 and b["batch2"].dim() == 3,
    "matrix_power": lambda b: isinstance(b.get("n"), int) and b["n"] >= 0 and b["input"].dim() >= 2,
    "cdist": lambda b: _cdist_by_product(b),  # (defined below)
    "vecdot": lambda b: _vecdot_shapes(b["x"], b["y"], b.get("dim", -1)),
    # one matrix: torch's copy (no product); other dimensions: torch's error
    "chain_matmul": lambda b: len(b["tensors"]) > 1 and all(t.dim() == 2 for t in b["tensors"]),
    "convolution": lambda b: _general(b), "_convolution": lambda b: _general(b),
    **{name: lambda b: all(isinstance(b.get(k), torch.Tensor) and b[k].dim() == 1 for k in ("input", "vec2"))
       for name in ("outer", "ger")},
    "kron": lambda b: all(isinstance(b.get(k), torch.Tensor) for k in ("input", "other")),
    "addr": lambda b: addr_shapes(b), "addr_": lambda b: addr_shapes(b, exact=True),
}



def _general(b) -> bool:
    """torch.convolution's arguments the conv handlers take: batched 1-3-d, all given."""
    return len(b) >= len(_GENERAL) and 3 <= b["weight"].dim() <= 5 and b["input"].dim() == b["weight"].dim()


def _addmv(run, b, round_again):
    """addmv: addmm with ``vec`` as a column and ``input`` broadcast to one."""
    mat, vec = b["mat"], b["vec"]
    column = {**b, "input": b["input"].expand(mat.shape[0])[:, None], "mat1": mat, "mat2": vec[:, None]}
    return scaled(run, column, "mat1", "mat2", round_again)[:, 0]


def _addbmm(run, b, round_again):
    """addbmm as ATen computes it: ``addmm_`` of each batch entry into the result in
    turn (beta on the first only), each rounded into the output.  The entries' products
    are one call (a stack: one per-tensor scale per operand over the batch), left in the
    accumulator's fp32; each step then ends as :func:`softfloat.torch._outer.scaled` ends one addmm: with
    beta == alpha == 1 the running result added in fp32 (the epilogue) and the sum
    rounded once, else the product rounded, scaled, added and rounded again."""
    x, y = b["batch1"], b["batch2"]
    result, beta, alpha = b["input"].expand(x.shape[1], y.shape[2]), b.get("beta", 1), b.get("alpha", 1)
    if x.shape[0] == 0:
        return result * beta
    dtype = result.dtype
    for acc in gemm(run, x, y, rounded=False):
        if beta == 1 and alpha == 1:
            result = round_again(acc.to(torch.float32) + result.to(torch.float32)).to(dtype)  # fp32(acc + c)
        else:
            product = round_again(acc).to(dtype)
            result = product if beta == 0 and alpha == 1 else round_again(
                alpha * product if beta == 0 else beta * result + alpha * product)
        beta = 1
    return result


def _multi_dot(run, ts):
    """linalg.multi_dot (and chain_matmul) in the order ATen chooses: two matrices one
    product; three by its cost rule ((a c)(b + d) against (b d)(a + c)); more by the
    matrix-chain order (the first split of least cost).  A 1-d first (last) operand is a
    row (column), squeezed from the result.  Each product is rounded into the output."""
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    row, column = ts[0].dim() == 1, ts[-1].dim() == 1
    ts = [ts[0][None] if row else ts[0], *ts[1:-1], ts[-1][:, None] if column else ts[-1]]
    p = [ts[0].shape[0]] + [t.shape[1] for t in ts]
    n = len(ts)
    split = {}
    if n == 3:
        a, b, c, d = p
        split[(0, 2)] = 0 if (a * c) * (b + d) > (b * d) * (a + c) else 1
    elif n > 3:
        cost = {(i, i): 0 for i in range(n)}
        for length in range(1, n):
            for i in range(n - length):
                j = i + length
                cost[(i, j)] = None
                for k in range(i, j):
                    q = cost[(i, k)] + cost[(k + 1, j)] + p[i] * p[k + 1] * p[j + 1]
                    if cost[(i, j)] is None or q < cost[(i, j)]:
                        cost[(i, j)], split[(i, j)] = q, k

    step = _numbered(run)

    def chain(i, j):
        if i == j:
            return ts[i]
        k = split.get((i, j), i)  # two matrices: one product
        left, right = chain(i, k), chain(k + 1, j)
        return gemm(step(), left, right)
    result = chain(0, n - 1)
    if row:
        result = result[0]
    if column:
        result = result[..., 0]
    return result


def _matrix_power(run, a, n: int):
    """a ** n (n >= 0) as ATen multiplies: the identity and a copy for n = 0 and 1, n = 2
    and 3 directly ((a a) a), else by the bits of n from the least significant: z squared
    at each step, the result multiplied by z where the bit is set."""
    if n < 2:
        return torch.eye(a.shape[-1], dtype=a.dtype, device=a.device).expand_as(a).clone() if n == 0 \
            else a.clone()
    step = _numbered(run)
    if n in (2, 3):
        square = _matmul(step(), a, a)
        return square if n == 2 else _matmul(step(), square, a)
    z = result = None
    while n:
        n, bit = divmod(n, 2)
        z = a if z is None else _matmul(step(), z, z)
        if bit:
            result = z if result is None else _matmul(step(), result, z)
    return result


def _numbered(run):
    """A function giving the engine call of a chain's next product: sub-sites ".1",
    ".2", ... in the order the products run, so that each product of a chain (whose
    operands differ) keeps its own scaling state, updated once per call."""
    count = itertools.count(1)
    return lambda: functools.partial(run, part=f".{next(count)}")


def _cdist_by_product(b) -> bool:
    """Whether ATen computes this cdist by a matrix product (p = 2, and its compute_mode
    asks for one, or leaves it to sizes above 25 rows); else its direct differences,
    which hold no product."""
    if b.get("p", 2.0) != 2 or b["x1"].dim() < 2 or b["x2"].dim() < 2:
        return False
    mode = b.get("compute_mode") or "use_mm_for_euclid_dist_if_necessary"
    if mode == "use_mm_for_euclid_dist":
        return True
    return mode == "use_mm_for_euclid_dist_if_necessary" and max(b["x1"].shape[-2], b["x2"].shape[-2]) > 25


def _euclidean(run, x1, x2):
    """ATen's ``_euclidean_dist``: [-2 x1, |x1|^2, 1] times [x2, 1, |x2|^2]^T (the
    product emulated; the norms, the clamp at 1e-30 and the square root in the tensors'
    dtype)."""
    n1, n2 = x1.pow(2).sum(-1, keepdim=True), x2.pow(2).sum(-1, keepdim=True)
    a = torch.cat([x1 * -2, n1, torch.ones_like(n1)], -1)
    b = torch.cat([x2, torch.ones_like(n2), n2], -1)
    return _matmul(run, a, b.mT).clamp_min(1e-30).sqrt()


def _tensordot(run, a, b, dims):
    """tensordot as one (M, K) x (K, N) product: a's free axes first, then the contracted
    ones in the order given, against b's contracted then free axes."""
    if isinstance(dims, int):
        dims_a, dims_b = list(range(a.dim() - dims, a.dim())), list(range(dims))
    elif isinstance(dims, torch.Tensor):
        return _tensordot(run, a, b, dims.item() if dims.dim() == 0 else dims.tolist())
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    dims_a, dims_b = _dims(dims_a, a), _dims(dims_b, b)
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    k = 1
    for d in dims_a:
        k *= a.shape[d]
    x = a.permute(free_a + dims_a).reshape(math.prod(a.shape[d] for d in free_a), k)
    y = b.permute(dims_b + free_b).reshape(k, math.prod(b.shape[d] for d in free_b))
    return gemm(run, x, y).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])


def _dims(dims, t) -> list:
    """``dims`` of ``t`` counted from 0, or torch's IndexError for one out of range."""
    for d in dims:
        if not -t.dim() <= d < t.dim():
            raise IndexError(f"Dimension out of range (expected to be in range of [{-t.dim()}, {t.dim() - 1}], "
                             f"but got {d})")
    return [d % t.dim() for d in dims]


def _vecdot_shapes(x, y, dim) -> bool:
    """linalg.vecdot's operands: broadcasting shapes, ``dim`` (an int) within the
    broadcast one (else torch raises its own error)."""
    try:
        shape = torch.broadcast_shapes(x.shape, y.shape)
    except RuntimeError:
        return False
    return isinstance(dim, int) and len(shape) > 0 and -len(shape) <= dim < len(shape)


def _vecdot(run, x, y, dim):
    """linalg.vecdot of real operands: x and y broadcast, then the dot products along
    ``dim``, each one product of a row and a column, as ``torch.dot`` of each pair."""
    x, y = (t.movedim(dim, -1) for t in torch.broadcast_tensors(x, y))
    return batched(run, rows(x)[:, None, :], rows(y)[:, :, None]).reshape(x.shape[:-1])


def _inner(run, a, b):
    y = gemm(run, rows(a), rows(b).t())
    return y.reshape(a.shape[:-1] + b.shape[:-1])  # () for two vectors


def _opt_einsum_path(equation, operands):
    """opt_einsum's contraction path where torch would take it (installed and enabled),
    else None (left to right, torch's order without it)."""
    backend = torch.backends.opt_einsum
    if not (backend.is_available() and backend.enabled):
        return None
    import opt_einsum
    return opt_einsum.contract_path(equation, *operands, optimize=backend.strategy)[0]


def _einsum(args, run_for):
    """An emulated einsum (several operands: pair by pair, :func:`pairwise`), or
    NotImplemented where torch runs it itself."""
    equation, operands = args[0], list(args[1:])
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    if not isinstance(equation, str) or not all(isinstance(t, torch.Tensor) for t in operands):
        return NotImplemented
    if not any(t.dtype.is_floating_point or t.dtype.is_complex for t in operands):
        return NotImplemented  # integer/bool: exact, torch's own
    if len(operands) == 1:
        return NotImplemented  # moves (exact) and sums: torch's own, as torch.sum
    if len(operands) > 2:  # torch's own way: pairs (opt_einsum's path where torch takes it)
        if len({t.dtype for t in operands}) > 1 or not operands[0].dtype.is_floating_point:
            return NotImplemented  # torch's own error, or its integer product
        step_run = _numbered(run_for("einsum"))  # one site, a sub-site per pair
        for i, j, step in pairwise(equation, len(operands), _opt_einsum_path(equation, operands)):
            try:
                run = step_run()
                pair = _einsum((step, operands[i], operands[j]), lambda _name, run=run: run)
            except NotImplementedError as exc:
                raise NotImplementedError(f"einsum {equation!r}: its step {step!r} is not emulated ({exc})") from None
            operands = [t for k, t in enumerate(operands) if k not in (i, j)] + [pair]
        return operands[0]
    if len(operands) != 2:
        raise NotImplementedError(f"einsum {equation!r} with {len(operands)} operand(s) is not emulated under "
                                  "softfloat.torch.emulate (contractions of two or more are)")
    bound = {"input": operands[0], "other": operands[1]}
    if _operands("einsum", bound) == "torch":
        return NotImplemented
    found = simplified(equation, *operands)
    if found is None:
        return NotImplemented  # an elementwise product: torch's own, as a * b
    big_a, big_b, finish = plan(*found)
    run = run_for("einsum")
    product = gemm(run, big_a[0], big_b[0])[None] if big_a.shape[0] == 1 else batched(run, big_a, big_b)
    return finish(product)

#: torch's functions and methods -> the handler's name
FUNCTIONS = {
    F.linear: "linear",
    torch.matmul: "matmul", torch.Tensor.matmul: "matmul", torch.Tensor.__matmul__: "matmul",
    torch.Tensor.__rmatmul__: "rmatmul",
    torch.mm: "mm", torch.Tensor.mm: "mm",
    torch.bmm: "bmm", torch.Tensor.bmm: "bmm",
    torch.addmm: "addmm", torch.Tensor.addmm: "addmm",
    torch.baddbmm: "baddbmm", torch.Tensor.baddbmm: "baddbmm",
    torch.Tensor.addmm_: "addmm_", torch.Tensor.baddbmm_: "baddbmm_",
    torch.mv: "mv", torch.Tensor.mv: "mv", torch.dot: "dot", torch.Tensor.dot: "dot",
    torch.inner: "inner", torch.Tensor.inner: "inner",
    F.conv1d: "conv1d", F.conv2d: "conv2d",
    F.scaled_dot_product_attention: "attention",
    torch.einsum: "einsum",
    torch.linalg.matmul: "matmul", torch.vdot: "vdot", torch.Tensor.vdot: "vdot",
    torch.addmv: "addmv", torch.Tensor.addmv: "addmv", torch.addbmm: "addbmm", torch.Tensor.addbmm: "addbmm",
    torch.Tensor.addmv_: "addmv_", torch.Tensor.addbmm_: "addbmm_", torch.addmv_: "addmv_",
    torch.tensordot: "tensordot",
    F.conv_transpose1d: "conv_transpose1d", F.conv_transpose2d: "conv_transpose2d",
    F.conv3d: "conv3d", F.conv_transpose3d: "conv_transpose3d",
    torch.convolution: "convolution", torch._convolution: "_convolution",
    torch.linalg.multi_dot: "multi_dot", torch.chain_matmul: "chain_matmul", torch.linalg.matrix_power: "matrix_power",
    torch.matrix_power: "matrix_power", torch.Tensor.matrix_power: "matrix_power",
    torch.cdist: "cdist", torch.linalg.vecdot: "vecdot",
    torch.outer: "outer", torch.Tensor.outer: "outer", torch.ger: "ger", torch.Tensor.ger: "ger",
    torch.kron: "kron", torch.Tensor.kron: "kron",
    torch.addr: "addr", torch.Tensor.addr: "addr", torch.Tensor.addr_: "addr_",
}

def passes_through(func) -> bool:
    """Whether ``func`` is no product of :data:`FUNCTIONS` and never out of reach
    (:func:`out_of_reach` says None for every call of it)."""
    return func not in FUNCTIONS and not may_reach_out(func)


def dispatch(name: str, args, kwargs, run_for, round_again):
    """The emulated result of torch function ``name``, or NotImplemented where torch
    should run it itself (integer operands).  ``run_for(name)`` gives the engine call
    bound to the product's call site."""
    lower = lowered(name, _device_of(args, kwargs))
    if lower is not None:  # inside torch.autocast: its casts of the float operands first
        args, kwargs = _cast(args, lower), _cast(kwargs, lower)
    if name == "einsum":
        return _einsum(args, run_for)
    if name == "chain_matmul":  # chain_matmul(*matrices) hands the matrices over one by one
        args = (list(args),)
    bound = _bind(name, args, kwargs)
    if _operands(name, bound) == "torch":
        return NotImplemented
    if name in _SHAPES and not _SHAPES[name](bound):
        return NotImplemented
    result = HANDLERS[name](run_for(_SITE.get(name, name)), bound, round_again)
    return _finish(result, bound)


def _device_of(args, kwargs):
    """The device of the first tensor among the arguments (lists included), or the CPU."""
    for value in (*args, *kwargs.values()):
        for t in (value if isinstance(value, (list, tuple)) else (value,)):
            if isinstance(t, torch.Tensor):
                return t.device
    return torch.device("cpu")


def _cast(value, dtype):
    """``value`` with every float tensor in it (in lists, tuples and dicts too) cast to
    ``dtype``, as autocast casts the arguments of its lower-precision operations."""
    if isinstance(value, torch.Tensor):
        return value.to(dtype) if value.dtype.is_floating_point else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: (v if k == "out" else _cast(v, dtype)) for k, v in value.items()}
    return value
