"""The lab's scaled (FP8, MX) matrix products: :class:`softfloat.recipes.GemmEngine` with
``history="step"``, whose operand roundings are counted into the engine's per-tensor
telemetry.

The products themselves, each a composition of :func:`softfloat.scaled_encode`,
:func:`softfloat.matmul` and fp32 arithmetic, are stated (with their sources) in
:class:`softfloat.recipes.GemmEngine`; the rules of each scaling in
:mod:`softfloat.scaled`.  Telemetry: the counts of the roundings of the activations, the
weights (forward) and the activation gradients (dgrad's first operand), from the IEEE
flags of those roundings (:class:`softfloat.recipes.OperandRecord`).

Divide or multiply (DeepSeek-V3): the two rules give the same FP8 elements except where
fp32(x / d') and fp32(x * s) fall on different sides of an FP8 rounding boundary (they
differ by at most an fp32 rounding); the dequantisation factors d' and fp32(1/s) differ by
an fp32 ulp or so.  On 4096 tiles of 128 normal values spread over 2**+-10 (seed 0), no
element differed and 32% of the dequantised values differed, by a relative 7e-8 (median),
so the lab does not carry a second rule.
"""

from __future__ import annotations

import numpy as np

from ..recipes import GemmEngine
from ._numerics import Counts

__all__ = ["Recipe"]

#: the telemetry tensors of each product's operands (a, b); None: not counted
_TENSORS = {"fprop": ("activations", "weights"), "dgrad": ("activation_grads", None), "wgrad": (None, None)}


class Recipe:
    """The scaled GEMMs of one policy (``policy.fp8``), with their scaling state."""

    def __init__(self, policy):
        self.policy = policy
        self.engine = GemmEngine(policy, history="step")
        self.counts = None  # the engine's per-tensor counts, set per step

    @property
    def states(self) -> dict:
        """Per (layer, role): the :class:`softfloat.DelayedScaling` of the "delayed" recipe."""
        return self.engine.states

    def new_step(self) -> None:
        """Delayed scaling: record the last step's amaxes (each gives the next scale)."""
        self.engine.new_step()

    def gemm(self, a, b, kind: str, key: str, accumulator=None, block=None, *, bias=None) -> np.ndarray:
        """a @ b (+ ``bias`` in fp32 after the scaling) by the recipe, as fp32 values.

        ``accumulator`` and ``block`` are the policy's (``accumulate_block`` applies to the
        per-tensor recipes; "blocks" promotes every 128 and "mx" not at all); another
        accumulator is a ValueError."""
        if accumulator is not None and accumulator != self.engine.accumulator:
            raise ValueError(f"accumulator must be the policy's {self.engine.accumulator!r}; got {accumulator!r}")
        tensors = _TENSORS[kind]
        counted = self.counts is not None and any(tensors)
        result = self.engine.gemm(a, b, kind, key, bias=bias, record="operands" if counted else False)
        if not counted:
            return result
        values, record = result
        for tensor, op in zip(tensors, (record.a, record.b)):
            if tensor is not None:
                self.counts[tensor] += Counts(op.elements, op.underflow_zero, op.underflow_subnormal, op.overflow,
                                              op.nonfinite)
        return values
