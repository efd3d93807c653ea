"""The torch functions whose matrix products run inside one torch kernel, out of the
emulation's reach: factorizations and solvers (torch.linalg's and their older
spellings), the fused recurrent kernels called with keywords, nn.Bilinear's kernel,
sparse and scaled/grouped GEMM kernels, ...  The mode runs them as torch runs them and
warns once per block and function (:func:`out_of_reach` names them)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["OPAQUE", "may_reach_out", "out_of_reach"]


def _attribute(root, dotted: str):
    """``root.a.b`` for "a.b", or None where torch has no such function."""
    for part in dotted.split("."):
        root = getattr(root, part, None)
    return root


#: torch.linalg's factorizations, solvers and what is computed by them (LAPACK's kernels)
_LINALG = ("solve", "solve_ex", "inv", "inv_ex", "cholesky", "cholesky_ex", "qr", "svd", "svdvals", "eig",
           "eigvals", "eigh", "eigvalsh", "det", "slogdet", "lstsq", "pinv", "solve_triangular", "lu",
           "lu_factor", "lu_factor_ex", "lu_solve", "ldl_factor", "ldl_factor_ex", "ldl_solve", "matrix_rank",
           "cond", "tensorinv", "tensorsolve")
#: their older spellings, as torch.X and Tensor.X
_LEGACY = ("inverse", "det", "logdet", "slogdet", "cholesky", "cholesky_solve", "cholesky_inverse",
           "triangular_solve", "lu", "lu_solve", "_lu_with_info", "qr", "svd", "pinverse", "geqrf", "ormqr",
           "nuclear_norm")

#: torch functions whose products run inside one kernel, out of the emulation's reach
#: (their names for the warning that says so)
OPAQUE = {torch.lstm: "torch.lstm called with keyword arguments (nn.LSTM's calls are written out)",
          torch.gru: "torch.gru called with keyword arguments (nn.GRU's calls are written out)",
          torch.rnn_tanh: "torch.rnn_tanh called with keyword arguments (nn.RNN's calls are written out)",
          torch.rnn_relu: "torch.rnn_relu called with keyword arguments (nn.RNN's calls are written out)",
          torch.bilinear: "torch.bilinear (nn.Bilinear)",
          torch.linalg.matrix_power: "torch.linalg.matrix_power of a negative power (an inverse)",
          torch.matrix_power: "torch.matrix_power of a negative power (an inverse)",
          torch.Tensor.matrix_power: "Tensor.matrix_power of a negative power (an inverse)",
          torch.matrix_exp: "torch.matrix_exp", torch.linalg.matrix_exp: "torch.linalg.matrix_exp",
          torch.Tensor.matrix_exp: "Tensor.matrix_exp",
          torch.cov: "torch.cov", torch.Tensor.cov: "Tensor.cov",  # ATen's mm of the centred rows
          torch.corrcoef: "torch.corrcoef", torch.Tensor.corrcoef: "Tensor.corrcoef",
          torch.linalg.householder_product: "torch.linalg.householder_product (orthogonal parametrization)",
          torch.orgqr: "torch.orgqr", torch.Tensor.orgqr: "Tensor.orgqr",
          torch.conv_tbc: "torch.conv_tbc", torch._addmm_activation: "torch._addmm_activation",
          F.affine_grid: "F.affine_grid (ATen's bmm of the base grid by theta)",
          **{f: f"torch.{n} (a scaled or grouped GEMM kernel)" for n in (
              "nn.functional.scaled_mm", "nn.functional.grouped_mm", "nn.functional.scaled_grouped_mm",
              "_scaled_mm", "_grouped_mm") if (f := _attribute(torch, n)) is not None},
          **{f: f"torch.{n} (a sparse product)" for n in ("sparse.mm", "sparse.addmm", "sparse.sampled_addmm",
                                                             "hspmm", "smm", "sspaddmm")
             if (f := _attribute(torch, n)) is not None},
          **{f: f"Tensor.{n} (a sparse product)" for n in ("hspmm", "smm", "sspaddmm")
             if (f := getattr(torch.Tensor, n, None)) is not None},
          **{f: f"{space}.{n} (a factorization or solver)" for space, root, names in (
              ("torch.linalg", torch.linalg, _LINALG), ("torch", torch, _LEGACY), ("Tensor", torch.Tensor, _LEGACY))
             for n in names if (f := getattr(root, n, None)) is not None}}

#: the norms of a matrix taken from its singular values: function -> (the order's name
#: and position, dim's position, the name for the warning)
_SPECTRAL = {torch.linalg.matrix_norm: ("ord", 1, 2, "torch.linalg.matrix_norm"),
             torch.linalg.norm: ("ord", 1, 2, "torch.linalg.norm"),
             torch.norm: ("p", 1, 2, "torch.norm"), torch.Tensor.norm: ("p", 1, 2, "Tensor.norm")}


#: torch functions whose products run inside one kernel where one argument is given:
#: function -> (the argument's name, its position, the name for the warning)
_OPAQUE_WITH = {
    F.embedding_bag: ("per_sample_weights", 8, "F.embedding_bag with per_sample_weights (nn.EmbeddingBag)"),
    torch.embedding_bag: ("per_sample_weights", 6, "torch.embedding_bag with per_sample_weights"),
}


def out_of_reach(func, args, kwargs):
    """The name the warning gives ``func(*args, **kwargs)`` where its products are out of
    reach (:data:`OPAQUE`; an embedding bag's weighted sums of rows), else None."""
    if func in OPAQUE:
        return OPAQUE[func]
    if func in _SPECTRAL:
        return _spectral(func, args, kwargs)
    found = _OPAQUE_WITH.get(func)
    if found is None:
        return None
    name, position, text = found
    given = kwargs[name] if name in kwargs else args[position] if len(args) > position else None
    return None if given is None else text


def _spectral(func, args, kwargs):
    """The warning's name for a matrix's 2-norm, its inverse's (-2) or its nuclear norm
    (singular values, LAPACK's), else None (the Frobenius norm and vector norms: sums of
    squares in torch, no product)."""
    name, at, dim_at, text = _SPECTRAL[func]
    order = kwargs[name] if name in kwargs else args[at] if len(args) > at else None
    dim = kwargs["dim"] if "dim" in kwargs else args[dim_at] if len(args) > dim_at else None
    if isinstance(order, str):
        return f"{text} of order {order!r}" if order == "nuc" else None
    if order not in (2, -2):
        return None
    if func is torch.linalg.matrix_norm:
        matrix = True
    elif dim is not None:
        matrix = isinstance(dim, (tuple, list)) and len(dim) == 2
    else:  # linalg.norm: a 2-d input's matrix norm; torch.norm: the flattened input's vector norm
        first = args[0] if args else kwargs.get("A", kwargs.get("input"))
        matrix = func is torch.linalg.norm and getattr(first, "ndim", 0) == 2
    return f"{text} of order {order} of a matrix" if matrix else None


def may_reach_out(func) -> bool:
    """Whether some call of ``func`` runs products out of reach (:func:`out_of_reach`
    is not None for it)."""
    return func in OPAQUE or func in _OPAQUE_WITH or func in _SPECTRAL
