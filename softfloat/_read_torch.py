"""``torch.save`` checkpoints (.pt, .pth, .bin) read by torch's safe loader
(``weights_only=True``: softfloat never unpickles arbitrary objects); nested state dicts
flattened to dotted names, float tensors given as views of their bit patterns.  torch is
imported only when such a file comes."""

from __future__ import annotations

import json
import re
import warnings
import zipfile

from . import _validate
from ._checkpoint_source import Checkpoint, TensorSource
from .formats import as_format

__all__ = ["open_pt"]

#: torch's integer dtype of each width whose tensors .numpy() can read: same bytes as
#: the unsigned bit patterns (torch has no uint16 view before 2.3)
_TORCH_INT = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}


def open_pt(path: str) -> Checkpoint:
    """The tensors of a ``torch.save`` checkpoint, read by torch's safe loader.

    - ``torch.load(path, map_location="cpu", weights_only=True, mmap=True)`` (``mmap``
      only for the zip format; torch's legacy format cannot be mapped): torch's
      weights-only unpickler accepts tensors and plain containers and refuses anything
      else, and softfloat never unpickles arbitrary objects (unpickling can run code).
    - Nested containers (``{"model": {...}, "epoch": 3}``, an optimizer's state) are
      flattened to dotted names (``model.layer.weight``; list items by index).  The
      non-tensor leaves (ints, strings, ...; a container holding no tensor is one leaf)
      are not tensors: they go to ``Checkpoint.metadata`` by dotted name, as JSON text
      (``repr`` where JSON has no spelling).  A container met twice (a loop, or one dict
      under two keys) is refused, as is a leaf that would spell out more than
      ``_MAX_LEAF_ITEMS`` items: a pickle can share a list with itself level after level.
    - Float tensors of a softfloat format (float64/32/16, bfloat16, the four FP8 dtypes)
      give bit patterns (``bits=True``, views of torch's memory, no copies); integer,
      bool and complex tensors are kept (numpy values); ``float8_e8m0fnu`` is kept as its
      bytes (safetensors code ``F8_E8M0``).  Other dtypes (packed FP4, quantized) and
      sparse tensors are refused.

    torch is imported here only: without it, a ValueError says how to install it.
    """
    try:
        import torch
    except ImportError:
        raise ValueError(f"{path!r} is a torch.save checkpoint, and reading one needs torch, "
                         f"which is not installed: {_validate.install_hint('torch')}") from None
    import pickle

    legacy = not zipfile.is_zipfile(path)
    try:
        with warnings.catch_warnings():  # torch's own notices (legacy storages), not ours
            warnings.simplefilter("ignore")
            obj = torch.load(path, map_location="cpu", weights_only=True, mmap=not legacy)
    except pickle.UnpicklingError as exc:
        found = re.search(r"Unsupported global: GLOBAL (\S+)", str(exc))
        what = f" (it names {found.group(1)})" if found else ""
        raise ValueError(f"{path!r} holds more than tensors and plain containers{what}: torch's "
                         "safe loader (torch.load with weights_only=True) refused it, and softfloat "
                         "never unpickles arbitrary objects; save a state dict of tensors") from None
    except Exception as exc:  # noqa: BLE001 -- a hostile pickle can make torch raise anything
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"cannot read the torch checkpoint {path!r}: {first}") from None
    if isinstance(obj, torch.Tensor):
        raise ValueError(f"{path!r} holds one bare tensor, not a state dict; save it as "
                         "{'name': tensor} so that it has a name")
    leaves, metadata = _flatten(obj, torch, path)
    tensors = [_pt_tensor(name, t, torch, path) for name, t in leaves]
    return Checkpoint("pt", tensors, metadata)


def _flatten(obj, torch, path: str):
    """([(dotted name, tensor)], {dotted name: JSON text}) of a nested container, in order.

    A pickle can share one container in two places, or put a list inside itself: a
    container that holds tensors is expanded once, and a second sight of it is refused
    (a loop, or a tree that would repeat its tensors under two names).
    """
    holders = _tensor_holders(obj, torch)
    leaves, metadata, seen, expanded = [], {}, set(), set()
    stack = [("", obj)]
    while stack:
        name, value = stack.pop()
        if isinstance(value, (dict, list, tuple)) and id(value) in holders:
            if id(value) in expanded:
                raise ValueError(f"{path!r} holds one container twice (at {name!r}, a shared or "
                                 "circular reference); save a plain tree of tensors")
            expanded.add(id(value))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            children = [(f"{name}.{k}" if name else str(k), v) for k, v in items]
            stack.extend(reversed(children))
            continue
        if name in seen:
            raise ValueError(f"{path!r} names {name!r} twice once nested names are joined "
                             "with dots; rename one of them")
        seen.add(name)
        if isinstance(value, torch.Tensor):
            leaves.append((name, value))
        else:
            metadata[name] = _leaf_text(value, name, path)
    return leaves, metadata


def _tensor_holders(obj, torch) -> set:
    """ids of the containers (dicts, lists, tuples) in ``obj`` with a tensor somewhere
    below them: each container visited once, children before parents."""
    holders, visited = set(), set()
    stack = [(obj, False)]
    while stack:
        value, after_children = stack.pop()
        if not isinstance(value, (dict, list, tuple)):
            continue
        kids = list(value.values()) if isinstance(value, dict) else list(value)
        if after_children:
            if any(isinstance(k, torch.Tensor) or id(k) in holders for k in kids):
                holders.add(id(value))
        elif id(value) not in visited:
            visited.add(id(value))
            stack.append((value, True))
            stack.extend((k, False) for k in kids)
    return holders


_MAX_LEAF_ITEMS = 1_000_000  # items a non-tensor leaf may spell out (shared parts counted each time)


def _leaf_text(value, name: str, path: str) -> str:
    """A non-tensor leaf as JSON text (``repr`` where JSON has no spelling), refused where
    it would spell out more than ``_MAX_LEAF_ITEMS`` items (a loop, or a pickle that shares
    a list with itself level after level)."""
    count, stack = 0, [value]
    while stack:
        v = stack.pop()
        count += 1
        if count > _MAX_LEAF_ITEMS:
            raise ValueError(f"{path!r} holds at {name!r} a value of more than "
                             f"{_MAX_LEAF_ITEMS} items (or a circular one); save a smaller one")
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    try:
        return json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        try:
            return repr(value)
        except RecursionError:
            return f"<{type(value).__name__} nested too deeply to show>"


def _pt_tensor(name: str, t, torch, path: str) -> TensorSource:
    where = f"tensor {name!r} of {path!r}"
    t = t.detach()
    if t.layout != torch.strided or t.is_quantized:
        raise ValueError(f"{where} is a {'quantized' if t.is_quantized else str(t.layout)} tensor; "
                         "softfloat reads dense tensors (save t.dequantize() or t.to_dense())")
    shape, nbytes = tuple(t.shape), t.numel() * t.element_size()
    label = str(t.dtype)[len("torch."):]
    if t.dtype.is_floating_point:
        try:
            fmt = as_format(t.dtype, "dtype")
        except ValueError:
            fmt = None
        if fmt is not None:
            def bits(t=t, fmt=fmt):  # a view of the same memory: no copy
                ints = t.view(getattr(torch, _TORCH_INT[t.element_size()]))
                return ints.numpy().view(fmt.storage_dtype)
            return TensorSource(name, shape, label, fmt, load=bits, raw=bits, bits=True, nbytes=nbytes)
        if label == "float8_e8m0fnu":  # MX block scales: kept as their bytes
            byte_view = (lambda t=t: t.view(torch.uint8).numpy())
            return TensorSource(name, shape, "F8_E8M0", None, load=byte_view, raw=byte_view,
                                bits=True, nbytes=nbytes)
    else:
        try:
            t.numpy()
        except (TypeError, RuntimeError):
            pass
        else:
            values = (lambda t=t: t.numpy())
            return TensorSource(name, shape, str(t.numpy().dtype), None, load=values, raw=values,
                                nbytes=nbytes)
    raise ValueError(f"{where} is {t.dtype}, which neither softfloat nor an .npz or .safetensors "
                     "file can carry")
