"""Training memory, item by item: what a precision policy stores per parameter and per
activation value.

The accounting is the one the mixed-precision write-ups use (e.g. the project's seeds): a
model of ``a`` parameters trained with Adam in fp32 holds 4a bytes of weights, 4a of
gradients and 8a of Adam's two moments -- 16a -- plus 4 bytes per activation value kept
for the backward pass; mixed precision with fp32 master weights holds 2a (fp16 weights)
+ 4a (fp32 master copy) + 2a (fp16 gradients) + 8a -- 16a again -- plus 2 bytes per
activation.  The static memory does not shrink; the activations halve.
"""

from __future__ import annotations

from .. import _validate
from ..formats import Format
from .policy import as_policy

__all__ = ["OPTIMIZER_STATES", "memory_footprint"]

#: tensors of optimizer state per parameter: SGD's momentum buffer (the lab's SGD has
#: momentum 0.9), Adam's first and second moments
OPTIMIZER_STATES = {"sgd": 1, "adam": 2}


def _bytes(n: int, fmt: Format | None) -> int:
    """Bytes of ``n`` values of ``fmt`` packed without padding (rounded up to whole bytes)."""
    return 0 if fmt is None else -(-n * fmt.bits // 8)


def memory_footprint(n_params, policy="O2", optimizer="adam", activations=0) -> dict:
    """Bytes a training step holds under ``policy``, item by item.

    Parameters
    ----------
    n_params : int
        The model's parameter count (``a``).
    policy : str or Policy, default "O2"
        Where each tensor lives: the working weights in ``policy.params``, the master copy
        (if any) in ``policy.master``, the weight gradients in ``policy.params`` (a
        parameter's gradient has the parameter's dtype), the optimizer state in
        ``policy.optimizer_state``, activations in ``policy.activations``.
    optimizer : {"adam", "sgd"}, default "adam"
        Adam keeps two state tensors per parameter, SGD with momentum one.
    activations : int, default 0
        Activation values kept for the backward pass (``b``; a batch-size- and
        architecture-dependent count).

    Returns
    -------
    dict
        ``weights``, ``master_weights``, ``gradients``, ``optimizer_state``,
        ``activations`` and their ``total``, in bytes (sub-byte formats packed).

    Examples
    --------
    Adam on a model of ``a = 1000`` parameters: 16 bytes per parameter in fp32 and in mixed
    precision with fp32 master weights alike; the activations take 4 and 2 bytes each.

    >>> from softfloat.training import memory_footprint
    >>> memory_footprint(1000, "fp32", activations=10)
    {'weights': 4000, 'master_weights': 0, 'gradients': 4000, 'optimizer_state': 8000, 'activations': 40, 'total': 16040}
    >>> memory_footprint(1000, "O2", activations=10)
    {'weights': 2000, 'master_weights': 4000, 'gradients': 2000, 'optimizer_state': 8000, 'activations': 20, 'total': 16020}
    """
    n = _validate.count("n_params", n_params)
    b = _validate.count("activations", activations)
    _validate.one_of("optimizer", optimizer, tuple(OPTIMIZER_STATES))
    p = as_policy(policy)
    items = {"weights": _bytes(n, p.params), "master_weights": _bytes(n, p.master),
             "gradients": _bytes(n, p.params),
             "optimizer_state": OPTIMIZER_STATES[optimizer] * _bytes(n, p.optimizer_state),
             "activations": _bytes(b, p.activations)}
    items["total"] = sum(items.values())
    return items
