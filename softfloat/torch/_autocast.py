"""Inside ``torch.autocast``: which emulated products torch would run in autocast's
lower-precision dtype (bfloat16/float16), so that the emulation casts their float
operands as autocast does and returns that dtype.

torch's lists of such operations differ per device type and version; rather than copy
them, :func:`lowered` asks torch once per product name, device type and autocast dtype:
it runs the product on tiny float32 tensors under the active autocast and reads the
result's dtype (cached).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["lowered"]


def _conv(func, dims: int):
    shape = (1, 1) + (1,) * dims
    return lambda t: func(t(*shape), t(*shape))


#: per product name: a call of it on tensors made by ``t(*shape)``
_PROBES = {
    "linear": lambda t: F.linear(t(1, 1), t(1, 1)),
    "matmul": lambda t: torch.matmul(t(1, 1), t(1, 1)),
    "rmatmul": lambda t: torch.matmul(t(1, 1), t(1, 1)),
    "mm": lambda t: torch.mm(t(1, 1), t(1, 1)),
    "bmm": lambda t: torch.bmm(t(1, 1, 1), t(1, 1, 1)),
    "addmm": lambda t: torch.addmm(t(1, 1), t(1, 1), t(1, 1)),
    "baddbmm": lambda t: torch.baddbmm(t(1, 1, 1), t(1, 1, 1), t(1, 1, 1)),
    "mv": lambda t: torch.mv(t(1, 1), t(1)),
    "dot": lambda t: torch.dot(t(1), t(1)),
    "vdot": lambda t: torch.vdot(t(1), t(1)),
    "inner": lambda t: torch.inner(t(1), t(1)),
    "addmv": lambda t: torch.addmv(t(1), t(1, 1), t(1)),
    "addbmm": lambda t: torch.addbmm(t(1, 1), t(1, 1, 1), t(1, 1, 1)),
    "tensordot": lambda t: torch.tensordot(t(1, 1), t(1, 1), dims=1),
    "multi_dot": lambda t: torch.linalg.multi_dot([t(1, 1), t(1, 1)]),
    # ATen's chain_matmul is linalg_multi_dot (probed as that: chain_matmul warns, deprecated)
    "chain_matmul": lambda t: torch.linalg.multi_dot([t(1, 1), t(1, 1)]),
    "matrix_power": lambda t: torch.linalg.matrix_power(t(1, 1), 2),
    "cdist": lambda t: torch.cdist(t(1, 1), t(1, 1)),
    "vecdot": lambda t: torch.linalg.vecdot(t(1), t(1)),
    "outer": lambda t: torch.outer(t(1), t(1)),  # (CUDA's list has addr, not outer or kron)
    "kron": lambda t: torch.kron(t(1), t(1)),
    "addr": lambda t: torch.addr(t(1, 1), t(1), t(1)),
    "einsum": lambda t: torch.einsum("ij,jk->ik", t(2, 2), t(2, 2)),  # (1x1 would take no product)
    "attention": lambda t: F.scaled_dot_product_attention(t(1, 1, 1), t(1, 1, 1), t(1, 1, 1)),
    **{f"conv{d}d": _conv(getattr(F, f"conv{d}d"), d) for d in (1, 2, 3)},
    **{f"conv_transpose{d}d": _conv(getattr(F, f"conv_transpose{d}d"), d) for d in (1, 2, 3)},
    "convolution": lambda t: torch.convolution(t(1, 1, 1), t(1, 1, 1), None, [1], [0], [1], False, [0], 1),
    "_convolution": lambda t: torch._convolution(t(1, 1, 1), t(1, 1, 1), None, [1], [0], [1], False, [0], 1,
                                                 False, False, True, True),
    # not a product: the whole of nn.LSTM, which torch runs in autocast's dtype where its
    # CPU kernel is oneDNN's (mkldnn_rnn_layer, on autocast's list; the written-out LSTM
    # casts its inputs as autocast does)
    "lstm": lambda t: torch.lstm(t(1, 1, 1), (t(1, 1, 1), t(1, 1, 1)), [t(4, 1), t(4, 1)],
                                 False, 1, 0.0, False, False, False)[0],
}

_FOUND: dict = {}


def lowered(name: str, device: torch.device):
    """The dtype autocast, active on ``device``'s type, runs product ``name`` in where
    that is a lower precision than float32 (its operands are cast into it); else None
    (autocast off, an in-place product, or a product autocast leaves alone)."""
    kind = device.type
    try:
        if name not in _PROBES or not torch.is_autocast_enabled(kind):
            return None
    except RuntimeError:  # a device type autocast does not know (meta)
        return None
    # (torch's choice of oneDNN for an LSTM depends on grad mode and its flag)
    key = (name, kind, torch.get_autocast_dtype(kind), torch.is_grad_enabled(), torch.backends.mkldnn.enabled)
    if key not in _FOUND:
        with torch._C.DisableTorchFunction():
            dtype = _PROBES[name](lambda *shape: torch.ones(shape, device=device)).dtype
        _FOUND[key] = dtype if dtype in (torch.float16, torch.bfloat16) else None
    return _FOUND[key]
