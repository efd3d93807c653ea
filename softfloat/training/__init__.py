"""Mixed-precision training lab: precision policies, loss scaling, master weights and
telemetry, bit-exact in numpy.

A small MLP learns scikit-learn's handwritten digits under a :class:`Policy` -- where the
weights, activations, gradients, products, accumulators and optimizer state live -- and
reports per step what underflowed, overflowed or was swamped.  The presets reproduce
Apex's O0-O3 ("fp32", "O1", "O2", "O3"), bf16 with and without fp32 master weights
("bf16", "bf16-pure"), and FP8 training recipes ("fp8", "fp8-current", "fp8-block",
"mxfp8").

Policy, PRESETS, as_policy
    The precision policies.
LossScaler
    Static and dynamic loss scaling with torch.amp.GradScaler's rule (and Apex's cap).
MLP, SGD, Adam
    The model and the optimizers, rounding where the policy says.
run, compare, Report, Table, Trainer
    Training runs and their reports; Records and ExponentHistogram hold the telemetry.
memory_footprint
    Bytes per item (weights, master copy, gradients, optimizer state, activations) that
    a policy stores.
data.load
    The digits (``pip install "softfloat-emu[lab]"``), or a synthetic stand-in.

>>> import softfloat as sf
>>> sf.training.LossScaler().scale
65536.0
"""

from __future__ import annotations

from . import data, plot
from .loss_scaling import LossScaler
from .memory import memory_footprint
from .model import MLP
from .optim import OPTIMIZERS, SGD, Adam
from .policy import PRESETS, Policy, as_policy
from .run import Report, Table, Trainer, compare, run
from .telemetry import ExponentHistogram, Records

__all__ = ["OPTIMIZERS", "Adam", "ExponentHistogram", "LossScaler", "MLP", "PRESETS", "Policy", "Records", "Report", "SGD",
           "Table", "Trainer", "as_policy", "compare", "data", "memory_footprint", "run"]
