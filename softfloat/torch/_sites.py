"""Call-site names of the products: the module path of the innermost ``nn.Module``
running (``transformer.h.0.attn.c_attn``), or the product's name and the place in the
caller's source (``matmul#3``) outside any module.

While an emulation is active, global forward pre- and post-hooks keep a stack of the
modules being run on the emulating thread (module hooks are global, so calls from other
threads are ignored); they are removed when it ends.  Names come from
``named_modules()`` of the model given, else of the first module called (the root).
A module outside that model (another model's, one made on the fly) is named by its
type and its number among that type's unnamed instances in the order they first ran
(``Linear[1]``, ``Linear[2]``): each instance is a call site of its own, so that two
models' layers never share delayed-scaling state.  The names (root and instance
numbers) hold for the emulation's lifetime, over all its ``with`` blocks, as its
scaling state does.  A TorchScript module called in the block gets a UserWarning (once
per block): its products run inside TorchScript, which the emulation cannot reach.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
import weakref
from pathlib import Path

import torch
from torch.nn.modules import module as _module

from .._frames import outside

__all__ = ["Sites", "eager"]

#: what dynamo's error says where a model compiled with fullgraph=True meets the emulation
_EAGER = ("softfloat.torch.emulate runs its call-site hooks and products eagerly, between compiled graphs "
          "(graph breaks): inside the block, compile without fullgraph=True")


def eager(fn):
    """``fn`` run eagerly by dynamo (a graph break where a compiled model calls it),
    with the reason its error names where ``fullgraph=True`` forbids the break."""
    try:
        return torch.compiler.disable(fn, reason=_EAGER)
    except TypeError:  # an older torch takes no reason
        return torch.compiler.disable(fn)

#: frames in these folders are torch's and softfloat's, not the caller's
_SKIP = tuple(str(Path(m.__file__).resolve().parent) + os.sep for m in (torch,)) + (
    str(Path(__file__).resolve().parent.parent) + os.sep,)


class Sites:
    """Names the products run on one thread while the hooks are installed."""

    def __init__(self, model=None):
        self.thread = threading.get_ident()
        self.stack: list[list] = []  # [module, products named so far in this call]
        self.names: dict[int, str] = {} if model is None else _names_of(model)
        self.root = model
        self.places: dict[tuple, int] = {}  # (product, file, line) -> its number
        self.unnamed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # module -> "Linear[2]"
        self.counts: dict[str, int] = {}  # type name -> unnamed instances numbered so far
        self.handles = []
        self.warned_script = False

    def install(self) -> None:
        """Register the global forward hooks on the calling thread (removed by
        :meth:`remove`); the names given so far are kept."""
        self.thread = threading.get_ident()
        self.warned_script = False
        # dynamo, tracing a compiled model, runs the stack's hooks eagerly (a graph break:
        # thread identities are not traceable) rather than warn that it cannot trace them
        self.handles = [_module.register_module_forward_pre_hook(eager(self._enter)),
                        _module.register_module_forward_pre_hook(self._script),
                        _module.register_module_forward_hook(eager(self._leave), always_call=True)]

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles = []
        self.stack = []

    def _enter(self, module, args):
        if threading.get_ident() != self.thread:
            return
        if self.root is None:
            self.root, self.names = module, _names_of(module)
        self.stack.append([module, 0])

    def _script(self, module, args):
        """Warns (once) of a TorchScript module; a separate hook that dynamo, tracing a
        compiled model, sees return at once (where no TorchScript module can be)."""
        if torch.compiler.is_compiling():
            return
        if not self.warned_script and isinstance(module, torch.jit.ScriptModule) \
                and threading.get_ident() == self.thread:
            self.warned_script = True
            warnings.warn(f"{type(module).__name__} is a TorchScript module: its operations run in TorchScript, "
                          "out of softfloat.torch.emulate's reach, so its products are torch's own (not "
                          "emulated); call the Python module instead", stacklevel=_user_level())

    def _leave(self, module, args, output):
        if threading.get_ident() != self.thread:
            return
        while self.stack:  # an exception may have skipped inner modules' post-hooks
            if self.stack.pop()[0] is module:
                break

    def name(self, product: str) -> str:
        """The site of a product about to run: the innermost module's path (``#2``,
        ``#3`` for its second and later products in one forward call), or
        ``product#n``, n numbering the caller's source lines in order of first use."""
        if self.stack:
            entry = self.stack[-1]
            entry[1] += 1
            module = entry[0]
            path = self.names.get(id(module)) or self._unnamed(module)
            return path if entry[1] == 1 else f"{path}#{entry[1]}"
        place = (product,) + _caller()
        number = self.places.setdefault(place, len(self.places) + 1)
        return f"{product}#{number}"


    def _unnamed(self, module) -> str:
        """``Type[n]``: a module outside the naming model, numbered among its type's."""
        found = self.unnamed.get(module)
        if found is None:
            kind = type(module).__name__
            self.counts[kind] = self.counts.get(kind, 0) + 1
            found = self.unnamed[module] = f"{kind}[{self.counts[kind]}]"
        return found


def _names_of(model) -> dict[int, str]:
    """Module paths by id; a torch.compile'd model named by the model it wraps (without
    its ``_orig_mod.`` prefix)."""
    model = getattr(model, "_orig_mod", model)
    names = {id(m): name for name, m in model.named_modules()}
    names[id(model)] = type(model).__name__
    return names


def _user_level() -> int:
    """warnings.warn's stacklevel of the first frame outside torch and softfloat (level 2
    being the caller of this function's caller)."""
    _, steps = outside(sys._getframe(2), _SKIP)
    return 2 + steps


def _caller() -> tuple:
    """(file, line) of the first frame outside torch and softfloat."""
    frame, _ = outside(sys._getframe(2), _SKIP)
    return ("?", 0) if frame is None else (frame.f_code.co_filename, frame.f_lineno)


