"""The plumbing every compiled kernel of softfloat.torch shares: when one is wanted (a
mode per family of kernels), one artifact per name built on first use, and any failure
sending that name to the eager kernels for good, with one RuntimeWarning per process.

A family (softfloat.torch._kernels_compiled's quantisation and encode kernels,
softfloat.torch._accumulate_compiled's accumulation tiles) owns its mode, its compiler
call and its names; what happens around a compiled call -- the cache, the failures, the
warning -- is written here once.  A compiled kernel computes the same bits as the eager
one it stands for, so falling back changes speed only.

A compiled call runs with no torch function mode on the stack and with its Python float
constants specialised (:func:`_plain_call`): the kernels are arithmetic on plain tensors,
so a mode (``emulate``'s, in a forward pass but not in a backward one) only made dynamo
guard on it and compile each kernel twice, and a float constant left symbolic made torch
2.11's inductor fail on the recompiled graph ("prims::convert_element_type ...
MetaProxy"): seen on torch 2.11, where the ``emulate`` cases of tools/gpu_device_check.py
fell back to the eager kernels.
"""

from __future__ import annotations

import contextlib
import types
import warnings

import torch

__all__ = ["MODES", "failures", "fresh", "reset", "run", "wanted"]

#: "auto" (CUDA tensors, where Triton is present), "always" (every device: benchmarks,
#: tests with a stand-in compiler), "never"
MODES = ("auto", "always", "never")

_CACHE: dict = {}
_FAILURES: dict = {}
_WARNED = [False]
_TRITON: list = []


def reset() -> None:
    """Forget every compiled kernel and failure (tests; after changing a mode)."""
    _CACHE.clear()
    _FAILURES.clear()
    _WARNED[0] = False


def failures() -> dict:
    """{label: "Error: message"} of the kernels that fell back to eager."""
    return dict(_FAILURES.values())


def _triton() -> bool:
    if not _TRITON:
        try:
            from torch.utils._triton import has_triton
            _TRITON.append(bool(has_triton()))
        except Exception:  # noqa: BLE001 - a torch without the helper: no Triton
            _TRITON.append(False)
    return _TRITON[0]


def wanted(t: torch.Tensor, mode: str) -> bool:
    """Should work on ``t`` take a compiled kernel under ``mode`` (one of :data:`MODES`)?
    Never inside a caller's own torch.compile (the eager kernels trace into its graph)."""
    if mode == "never" or t.numel() < 2 or torch.compiler.is_compiling():
        return False
    if mode == "always":
        return True
    return t.device.type == "cuda" and _triton()


def fresh(fn):
    """``fn`` on a code object of its own: dynamo keeps a cache and a recompile count per
    code object, so each kernel built from one template compiles separately."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def run(name, describe, build, *args):
    """The compiled kernel ``name`` (``build()`` makes it on first use) on ``args``, or
    None where it failed, now or before: the caller then runs the eager kernels.
    ``describe()`` says which kernel, in the warning and in :func:`failures` (called on a
    failure only: a label's formatting would cost microseconds on every call)."""
    if name in _FAILURES:
        return None
    try:
        fn = _CACHE.get(name)
        if fn is None:
            fn = _CACHE[name] = build()
        with _plain_call():
            return fn(*args)
    except Exception as exc:  # noqa: BLE001 - any compiler or runtime failure: eager, same bits
        label = describe()
        _CACHE.pop(name, None)
        _FAILURES[name] = (label, f"{type(exc).__name__}: {exc}"[:500])
        if not _WARNED[0]:
            _WARNED[0] = True
            warnings.warn(f"softfloat.torch: torch.compile of the {label} kernel failed ({type(exc).__name__}: "
                          f"{str(exc)[:200]}); the eager torch kernels run instead (the same bits, slower). "
                          "Further failures are not reported; see "
                          "softfloat.torch._kernels_compiled.compile_failures()", RuntimeWarning, stacklevel=4)
        return None


@contextlib.contextmanager
def _plain_call():
    """The torch function modes off the stack (restored after) and dynamo's float
    specialisation on, around one compiled call (see the module's docstring)."""
    modes = []
    while torch._C._len_torch_function_stack():
        modes.append(torch.overrides._pop_mode())
    try:
        with torch._dynamo.config.patch(specialize_float=True):
            yield
    finally:
        for mode in reversed(modes):
            torch.overrides._push_mode(mode)
