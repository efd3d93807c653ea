"""Which results ``emulate(..., elementwise=True)`` leaves in float32 under an autocast
recipe, as torch's automatic mixed precision does: autocast's float32 operations, and
what follows from their results by torch's type promotion.

Under ``torch.autocast`` (recipes "fp16", "bf16", "O1", "O2", "fp8", ...: a loss format
wider than the activations) the operations of :data:`FLOAT32_NAMES` -- the losses,
softmax, log_softmax, exp/log/pow, the norms, sum/cumsum/prod -- cast their inputs to
float32 and return float32; an elementwise operation then runs in the dtype torch's type
promotion gives its tensor operands (float32 wins over float16 among tensors of the same
kind, dimensioned tensors over zero-dimensional ones, Python numbers never count), so a
loss's arithmetic -- ``torch.amp.GradScaler.scale``'s ``loss * scale`` -- stays float32.
:class:`Widths` keeps the same account of the emulation's float32 tensors (which hold
activations-format values where the real run holds float16): results of these
operations and of ``.float()``/``.double()``/``.to(torch.float32)`` are float32 ("wide"),
products' and rounded results are float16 ("narrow"), and a result takes the width its
marked operands promote to; ``.type_as(t)``/``.to(t)`` of a wide tensor into one that
is not rounds it into the activations format (the cast to float16).  Tensors made
otherwise (inputs, parameters, factories' results) are neutral: an elementwise result
of those alone is rounded, as before (where real AMP would keep a float32 input's
arithmetic in float32, and promote ``activation * fp32_parameter`` to float32).

The list is the one torch documents for CUDA (docs/source/amp.rst, "CUDA Ops that can
autocast to float32", and ATen's ``AT_FORALL_FP32`` and ``AT_FORALL_FP32_SET_OPT_DTYPE``
in autocast_mode.h): the recipes model GPU training.  CPU autocast's list is shorter (its
losses and cdist, not softmax, exp or the norms); the tests compare with it where the two
coincide.  Pure recipes ("O3", "bf16-pure": the loss in the activations format) use no
autocast: every listed elementwise operation is rounded there.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.utils.weak import WeakIdKeyDictionary

__all__ = ["FLOAT32", "FLOAT32_NAMES", "Widths"]

#: the operations CUDA autocast runs in float32 (see the module docstring), by name
FLOAT32_NAMES = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
    "sinh", "tan", "pow", "float_power", "softplus", "layer_norm", "group_norm", "norm", "normalize",
    "frobenius_norm", "nuclear_norm", "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss",
    "nll_loss", "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
    "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "binary_cross_entropy_with_logits", "cross_entropy", "dist", "pdist", "renorm",
    "logsumexp", "prod", "softmax", "log_softmax", "softmin", "cumprod", "cumsum", "sum",
    # Python's operators autocast lists: x ** y, y ** x, 3 / x (a reciprocal)
    "__pow__", "__rpow__", "__rtruediv__", "__rdiv__")


def _spellings() -> frozenset:
    found = set()
    for name in FLOAT32_NAMES:
        for space in (torch, torch.Tensor, F, torch.special, torch.linalg):
            func = getattr(space, name, None)
            if callable(func):
                found.add(func)
    return frozenset(found)


#: every spelling (torch.X, Tensor.X, F.X, torch.special.X) of :data:`FLOAT32_NAMES`; not
#: the in-place forms, which autocast leaves alone (they keep their tensor's dtype)
FLOAT32 = _spellings()

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
    """The account of one emulation with an autocast recipe: which of its tensors are
    float32 ("wide", True) and which float16 activations (False: products' results,
    rounded results and what promotes to them); weakly held, the account ends with the
    tensors.  Tensors made otherwise (inputs, parameters, factories) are in neither."""

    def __init__(self):
        self.marks = WeakIdKeyDictionary()

    def mark(self, result, wide: bool) -> None:
        for t in _results(result):
            if t.dtype.is_floating_point:
                self.marks[t] = wide

    def promoted(self, args, kwargs):
        """Whether torch's type promotion of the call's marked float tensor operands gives
        float32 (True) or float16 (False); None where none is marked.  Among tensors of
        one kind, float32 wins; dimensioned tensors count before zero-dimensional ones."""
        dimensioned = scalar = None
        for t in _tensors(args, kwargs):
            mark = self.marks.get(t) if t.dtype.is_floating_point else None
            if mark is None:
                continue
            if t.ndim:
                dimensioned = bool(dimensioned) or mark
            else:
                scalar = bool(scalar) or mark
        return scalar if dimensioned is None else dimensioned

    def follow(self, func, args, kwargs, result, in_place: bool):
        """After ``func`` ran: ``(result, verdict)``, verdict "wide" where the result is
        float32 under autocast (marked so; a cast that returned its own tensor gives an
        alias of it, marked), "round" where it is a wide tensor cast into an activation's
        type (into the activations format), else "as is" (an activation, or unmarked)."""
        casts = func in (torch.Tensor.float, torch.Tensor.double) or (
            func in _CASTS and any(isinstance(v, torch.dtype) and v in _WIDE_DTYPES for v in (*args[1:], *kwargs.values())))
        narrows = func in _CASTS_INTO and len(args) > 1 and isinstance(args[1], torch.Tensor) \
            and isinstance(args[0], torch.Tensor) and args[1].dtype.is_floating_point \
            and not self.marks.get(args[1]) and bool(self.marks.get(args[0]))
        if (casts or narrows) and result is args[0]:  # a float32 tensor's own: a new one in AMP
            with torch._C.DisableTorchFunction():
                result = result.view_as(result)
        elif in_place:  # an in-place result keeps its tensor's dtype (a foreach op's: a list)
            return result, "wide" if isinstance(result, torch.Tensor) and self.marks.get(result) else "as is"
        if narrows:
            return result, "round"
        if casts or func in FLOAT32 or getattr(func, "__name__", "").startswith("_foreach_"):
            # (torch's foreach operations take lists of parameters or gradients -- the
            # optimizers', clip_grad_norm_'s -- float32 tensors in AMP, never activations)
            self.mark(result, True)
            return result, "wide"
        if self.marks:
            wide = self.promoted(args, kwargs)
            if wide is not None:
                self.mark(result, wide)
                return result, "wide" if wide else "as is"
        return result, "as is"
