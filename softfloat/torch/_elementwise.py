"""The elementwise operations whose results ``emulate(..., elementwise=True)`` rounds into
the recipe's activations format, in every spelling torch hands a function mode, and the
optimizer steps during which it rounds nothing.

The operations (:data:`NAMES`): the four arithmetic operations -- ``torch.add``/``sub``/
``mul``/``div`` and their aliases (``subtract``, ``multiply``, ``divide``,
``true_divide``, ``rsub``), the Tensor methods, their in-place forms (``add_``, ...),
Python's operators ``+ - * /`` with their reflected (``3 / x``) and augmented (``x +=
y``) forms, ``out=`` -- and ``pow`` (``**``), ``sqrt``, ``rsqrt``, ``exp``, ``log``,
``sigmoid`` (``torch.special.expit``), ``tanh``, ``relu``, ``gelu``, ``silu``,
``softplus``, ``mish``, ``elu``, ``leaky_relu``, ``hardswish``, ``hardsigmoid``,
``softmax``, ``log_softmax``, ``layer_norm``, ``rms_norm``, ``group_norm``,
``batch_norm``, ``instance_norm`` and ``dropout`` (``dropout1d``/``2d``/``3d``,
``alpha_dropout``, ``feature_alpha_dropout`` too) as ``torch.X``, ``Tensor.X``,
``torch.nn.functional.X`` and ``torch.special.X`` spell them (in place too), and so the
modules that call them (nn.LayerNorm, nn.BatchNorm*, nn.GELU, nn.Softmax, ...); a
complex result (``z * w``: a rotary embedding's) has each part rounded.  Other
operations (reductions such as ``sum``/``mean``, ``neg``/``abs`` and data movement, which
are exact, the rest of torch's functions) are not rounded.  Under an autocast recipe only
those results AMP holds in float16/bfloat16 are rounded, and so are the reductions AMP
returns in float16 (``softfloat.torch._amp``: ``mean`` of an activation).

An in-place operation (``x += y``, ``x.mul_(y)``, ``F.relu(x, inplace=True)``,
``out=``) has its tensor rounded in place.  Inside an optimizer's ``step()`` (global
step hooks, on the emulating thread) nothing is rounded: the parameter and state updates
(``p.add_(...)``) are the optimizer's arithmetic in the parameters' dtype, not
activations.  A ``closure`` handed to ``step()`` (LBFGS calls it inside its step: the
model's forward and backward) runs as outside the step, rounded.
"""

from __future__ import annotations

import functools
import sys
import threading

import torch
import torch.nn.functional as F
from torch.optim import optimizer as _optimizer

__all__ = ["ELEMENTWISE", "NAMES", "Steps", "in_place"]

#: the operations rounded (see the module docstring), by name
NAMES = ("add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "pow", "sqrt",
         "rsqrt", "exp", "log", "sigmoid", "expit", "tanh", "relu", "gelu", "silu", "softplus", "mish", "elu",
         "leaky_relu", "hardswish", "hardsigmoid", "softmax", "log_softmax", "layer_norm", "rms_norm",
         "group_norm", "batch_norm", "instance_norm", "dropout", "dropout1d", "dropout2d", "dropout3d",
         "feature_dropout", "alpha_dropout", "feature_alpha_dropout")
#: Python's operators: x + y, y + x, x += y for each
_OPERATORS = ("add", "sub", "mul", "truediv", "div", "pow")


def _spellings() -> frozenset:
    found = set()
    for name in NAMES:
        for space in (torch, torch.Tensor, F, torch.special):
            for spelling in (name, name + "_"):
                func = getattr(space, spelling, None)
                if callable(func):
                    found.add(func)
    for op in _OPERATORS:
        for dunder in (f"__{op}__", f"__r{op}__", f"__i{op}__"):
            func = getattr(torch.Tensor, dunder, None)
            if callable(func):
                found.add(func)
    return frozenset(found)


#: every spelling of the operations of :data:`NAMES` a function mode is handed
ELEMENTWISE = _spellings()


def in_place(args, kwargs, result) -> bool:
    """Whether ``result`` is a tensor the call wrote into (its ``self`` or ``out=``)."""
    return (bool(args) and result is args[0]) or (kwargs.get("out") is result and result is not None)


class Steps:
    """Whether an optimizer's ``step()`` is running on one thread: global step pre- and
    post-hooks, installed while an emulation is active, and the step's frame (torch runs
    no post-hook after a step that raised: the step ends where its frame is gone)."""

    def __init__(self):
        self.thread = threading.get_ident()
        self.depth = 0
        self.frames = []  # the running steps' frames (torch's wrapper that calls the hooks)
        self.handles = []

    @property
    def active(self) -> bool:
        return self.depth > 0 and self._running()

    def _running(self) -> bool:
        """Whether the innermost step recorded still runs: a step that raised never ran
        its post-hook, and its frame (with any inside it) is dropped here."""
        while self.frames:
            frame, step = sys._getframe(2), self.frames[-1]
            while frame is not None and frame is not step:  # (a few frames up, inside a step)
                frame = frame.f_back
            if frame is not None:
                return True
            self.frames.pop()
            self.depth -= 1
        return self.depth > 0

    def install(self) -> None:
        self.thread, self.depth, self.frames = threading.get_ident(), 0, []
        self.handles = [_optimizer.register_optimizer_step_pre_hook(self._begin),
                        _optimizer.register_optimizer_step_post_hook(self._end)]

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles, self.depth, self.frames = [], 0, []

    def _begin(self, optimizer, args, kwargs):
        if threading.get_ident() != self.thread:
            return None
        self.depth += 1
        self.frames.append(sys._getframe(1))
        # the closure (step's first argument after the optimizer, which torch's hooks
        # receive in args) recomputes the model: outside the step
        if len(args) > 1 and callable(args[1]):
            return (args[0], self._outside(args[1]), *args[2:]), kwargs
        if callable(kwargs.get("closure")):
            return args, {**kwargs, "closure": self._outside(kwargs["closure"])}
        return None

    def _outside(self, closure):
        """``closure`` run with no step active (the step's depth restored after it)."""
        @functools.wraps(closure)
        def run(*args, **kwargs):
            depth, self.depth = self.depth, 0
            try:
                return closure(*args, **kwargs)
            finally:
                self.depth = depth
        return run

    def _end(self, optimizer, args, kwargs):
        if threading.get_ident() == self.thread and self.depth:
            self.depth -= 1
            self.frames.pop()
