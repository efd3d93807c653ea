"""Which results ``emulate(..., elementwise=True)`` rounds under an autocast recipe:
those torch's automatic mixed precision holds in float16/bfloat16, by autocast's lists
and torch's type promotion; the rest stays float32, as in AMP.

Under ``torch.autocast`` (recipes "fp16", "bf16", "O1", "O2", "fp8", ...: a loss format
wider than the activations) a product returns the lower precision; the operations of
:data:`FLOAT32_NAMES` -- the losses, softmax, log_softmax, exp/log/pow, the norms,
sum/cumsum/prod -- cast their inputs to float32 and return float32; any other operation
runs in the dtype torch's type promotion gives its tensor operands (float32 wins over
float16 among tensors of the same kind, dimensioned tensors over zero-dimensional ones,
Python numbers never count).  So a loss's arithmetic -- ``torch.amp.GradScaler.scale``'s
``loss * scale`` -- is float32, and so is a residual stream that starts at a float32
embedding.  :class:`Widths` keeps that account over the emulation's float32 tensors:
"narrow" are products' results, results rounded into the activations format, and what
promotes from narrow operands alone (or, for a normalisation or dropout, of
:data:`AS_INPUT_NAMES`, a narrow input whatever its float32 weights); everything else -- inputs, parameters, gradients,
factories' results, the listed operations' results, ``.float()`` -- is float32, and an
elementwise operation on it is not rounded.  A reduction of :data:`REDUCED_NAMES`
(``mean``, ``var``, ``std``, ``nansum``, ``var_mean``, ``std_mean``) of narrow operands
is float16 in AMP: its float32 result is rounded too, and ``nanmean`` is ATen's nansum,
count and quotient, each rounded (a pure recipe rounds no reduction: the README's rule).
``.type_as(h)``/``.to(h)`` of a float32 tensor into a narrow one's type rounds it (the
cast to float16).

The list is the one torch documents for CUDA (docs/source/amp.rst, "CUDA Ops that can
autocast to float32", and ATen's ``AT_FORALL_FP32`` and ``AT_FORALL_FP32_SET_OPT_DTYPE``
in autocast_mode.h; torch keeps its lists in C++, none is exposed to Python): the recipes
model GPU training.  CPU autocast's list is shorter (its
losses and cdist, not softmax, exp or the norms); the tests compare with it where the two
coincide.  Pure recipes ("O3", "bf16-pure": the loss in the activations format) use no
autocast: every listed elementwise operation is rounded there, whatever its operands.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.utils.weak import WeakIdKeyDictionary

__all__ = ["AS_INPUT", "AS_INPUT_NAMES", "FLOAT32", "FLOAT32_NAMES", "NANMEAN", "REDUCED", "REDUCED_NAMES", "Widths",
           "nanmean"]

#: the operations CUDA autocast runs in float32 (see the module docstring), by name
FLOAT32_NAMES = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
    "sinh", "tan", "pow", "softplus", "layer_norm", "group_norm", "norm", "normalize",
    "frobenius_norm", "nuclear_norm", "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss",
    "nll_loss", "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
    "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "binary_cross_entropy_with_logits", "cross_entropy", "dist", "pdist", "renorm",
    "logsumexp", "prod", "softmax", "log_softmax", "softmin", "cumprod", "cumsum", "sum",
    # Python's operators autocast lists: x ** y, y ** x, 3 / x (a reciprocal)
    "__pow__", "__rpow__", "__rtruediv__", "__rdiv__")


#: the operations whose result has their input's dtype whatever their (float32) weights:
#: the normalisations autocast leaves alone, dropout
AS_INPUT_NAMES = ("batch_norm", "instance_norm", "rms_norm", "dropout", "alpha_dropout", "feature_alpha_dropout",
                  "dropout1d", "dropout2d", "dropout3d", "feature_dropout")


def _spellings(names) -> frozenset:
    found = set()
    for name in names:
        for space in (torch, torch.Tensor, F, torch.special, torch.linalg):
            func = getattr(space, name, None)
            if callable(func):
                found.add(func)
    return frozenset(found)


#: the reductions AMP returns in float16/bfloat16 for a float16/bfloat16 input (they are
#: on neither float32 list): ATen's CUDA kernels reduce in float32 and round the result
#: once, so a narrow operand's float32 result (torch's, its sum in torch's order, as the
#: elementwise operations' results are torch's) is rounded once -- each of var_mean's and
#: std_mean's pair.  Not listed: sum, cumsum, prod, logsumexp and the norms (float32,
#: above); amax, median and the like (they select: exact); nanmean, ATen's composite of
#: these (:func:`nanmean`).
REDUCED_NAMES = ("mean", "var", "std", "nansum", "var_mean", "std_mean")

#: torch.nanmean and Tensor.nanmean: run as ATen composes them (:func:`nanmean`)
NANMEAN = frozenset({torch.nanmean, torch.Tensor.nanmean})


def nanmean(input, dim=None, keepdim=False):
    """torch.nanmean as ATen writes it -- ``nansum(x) / count`` with the count (an
    integer) taken into the sum's dtype -- for the mode to run call by call (on its stack),
    so that under AMP the float16 nansum is rounded, the count rounded into float16 (it is
    inexact from 2049 on; bfloat16: 257) and the quotient rounded: three roundings, as
    real CPU autocast gives bit for bit (tests/test_torch_programs_7.py); CPU takes
    a whole-tensor nanmean's zero-dimensional count as an unrounded float32 scalar, which
    differs from 2049 (257) on -- the emulation rounds every count, as above.  A call
    with ``dtype`` or ``out`` is torch's own (the mode does not come here)."""
    total = torch.nansum(input, dim, keepdim=keepdim)
    count = torch.logical_not(torch.isnan(input)).sum(dim, keepdim=keepdim)
    return total / count.type_as(total)


#: every spelling (torch.X, Tensor.X, F.X, torch.special.X) of :data:`FLOAT32_NAMES`; not
#: the in-place forms, which autocast leaves alone (they keep their tensor's dtype)
FLOAT32 = _spellings(FLOAT32_NAMES)
#: every spelling of :data:`AS_INPUT_NAMES`
AS_INPUT = _spellings(AS_INPUT_NAMES)
#: every spelling of :data:`REDUCED_NAMES`
REDUCED = _spellings(REDUCED_NAMES)

_WIDE_DTYPES = (torch.float32, torch.float64)
_CASTS = frozenset({torch.Tensor.to, torch.Tensor.type, torch._C.TensorBase.to, torch._C.TensorBase.type})
_CASTS_INTO = frozenset({torch.Tensor.type_as, torch.Tensor.to, torch._C.TensorBase.type_as, torch._C.TensorBase.to})


def _tensors(args, kwargs):
    """The tensors among a call's arguments, in a list or tuple too (cat, stack)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, torch.Tensor))


def _results(result):
    if isinstance(result, torch.Tensor):
        return (result,)
    if isinstance(result, (list, tuple)):
        return tuple(r for r in result if isinstance(r, torch.Tensor))
    return ()


class Widths:
    """The account of one emulation with an autocast recipe: which of its float32 tensors
    are float16 in the real run ("narrow": products' results, rounded results and what
    promotes to them), weakly held (the account ends with the tensors).  Every other
    tensor is float32 there, as in AMP: inputs, parameters, gradients, factories'
    results, autocast's float32 operations' results."""

    def __init__(self):
        self.narrow = WeakIdKeyDictionary()

    def is_narrow(self, t) -> bool:
        return isinstance(t, torch.Tensor) and t in self.narrow

    def mark(self, result) -> None:
        """Mark ``result`` (a tensor, or a list or tuple of them) narrow."""
        for t in _results(result):
            if t.dtype.is_floating_point:
                self.narrow[t] = True

    def promoted_narrow(self, args, kwargs) -> bool:
        """Whether torch's type promotion of the call's float tensor operands gives
        float16 where the narrow ones are float16 and the rest float32: every dimensioned
        one narrow, or, where none is dimensioned, every zero-dimensional one (float32
        wins among tensors of one kind; Python numbers never count)."""
        dimensioned, scalars = [], []
        for t in _tensors(args, kwargs):
            if t.dtype.is_floating_point:
                (dimensioned if t.ndim else scalars).append(t in self.narrow)
        kind = dimensioned or scalars
        return bool(kind) and all(kind)

    def follow(self, func, args, kwargs, result, in_place: bool):
        """After ``func`` ran: ``(result, verdict)``: "narrow" where the result is float16
        in AMP (marked so: an elementwise result is rounded into the activations
        format), "cast" where it is rounded whatever ``func``: a float32 tensor cast into
        a narrow one's type (``.type_as(h)``, ``.to(h)``) or a reduction of
        :data:`REDUCED` of narrow operands (float16 in AMP), else "wide".  A cast
        to float32 that returned its own tensor gives an alias of it (the narrow tensor
        stays narrow)."""
        casts = func in (torch.Tensor.float, torch.Tensor.double) or (
            func in _CASTS and any(isinstance(v, torch.dtype) and v in _WIDE_DTYPES for v in (*args[1:],
                                                                                            *kwargs.values())))
        narrows = func in _CASTS_INTO and len(args) > 1 and self.is_narrow(args[1]) \
            and isinstance(args[0], torch.Tensor) and args[0] not in self.narrow
        if (casts or narrows) and result is args[0]:  # a tensor's own: a new one in AMP
            with torch._C.DisableTorchFunction():
                result = result.view_as(result)
        elif in_place:  # an in-place result keeps its tensor's dtype (a foreach op's: a list)
            return result, "narrow" if self.is_narrow(result) else "wide"
        if narrows:
            return result, "cast"
        if casts or func in FLOAT32 or getattr(func, "__name__", "").startswith("_foreach_"):
            # (torch's foreach operations take lists of parameters or gradients -- the
            # optimizers', clip_grad_norm_'s -- float32 tensors in AMP, never activations)
            return result, "wide"
        if func in AS_INPUT:
            narrow = bool(args) and self.is_narrow(args[0])
        else:
            narrow = bool(self.narrow) and self.promoted_narrow(args, kwargs)
        if narrow and func in REDUCED and kwargs.get("dtype") in _WIDE_DTYPES:
            return result, "wide"  # h.mean(dtype=torch.float32): float32 in AMP too
        if narrow:
            self.mark(result)
            return result, "cast" if func in REDUCED else "narrow"
        return result, "wide"
