"""Precision policies: where each tensor of a training step lives, and the named presets.

A :class:`Policy` is frozen data; the model, the optimizer and the loss scaler read it and
never branch on a policy's name.  :data:`PRESETS` holds the named ones, each documented
with the recipe it reproduces; :func:`as_policy` looks one up and applies overrides.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from .. import _validate
from ..formats import Format, as_format
from ..rounding import Rounding, as_rounding

__all__ = ["FP8_RECIPES", "PRESETS", "Policy", "as_policy"]

#: how FP8 GEMM operands are scaled (see :class:`Policy`)
FP8_RECIPES = ("delayed", "current", "blocks", "mx")


@dataclass(frozen=True)
class Policy:
    """Where each tensor of a training step lives (a frozen description).

    Parameters
    ----------
    name : str
    params : Format
        The weights the model computes with (the working copy).
    master : Format or None
        The master copy the optimizer updates (None: the update goes into ``params``
        itself, as in Apex O3 and pure-bf16 training).
    activations : Format
        Layer outputs (matmul outputs, bias additions, nonlinearities).
    gradients : Format
        Activation and weight gradients as the backward pass produces them.
    loss : Format
        Softmax, cross-entropy and the gradient of the loss with respect to the logits are
        computed in float64 and rounded once into this format (the seeds: "softmax and
        loss in fp32").
    matmul_inputs : Format
        What both operands of every matrix product are rounded into (O1 casts fp32
        weights to fp16 here, per product).
    accumulator : str or Format
        Of every matrix product and bias-gradient sum: a format ("fp32", "fp16") or a
        hardware model name ("h100", ...) of :mod:`softfloat.accumulate`.
    product : Format or None
        None: exact products fused into the additions; a format: each product rounded
        into it first (fp32 products for the fp32 baseline, as a non-FMA loop does).
    accumulate_block : int or None
        Promote partial sums into the output every this many products (DeepSeek-V3: 128).
    optimizer_state : Format
        Momentum / Adam moments and every optimizer operation.
    update_rounding : Rounding
        How ``weight - update`` is rounded into the stored weights: "nearest_even" or
        "stochastic" (the known cure for swamped bf16 updates).
    loss_scale : "dynamic", "none" or float
        Dynamic loss scaling with :class:`~softfloat.training.LossScaler`'s defaults
        (torch.amp.GradScaler's), none, or a static factor such as 1024.
    fp8 : None or one of FP8_RECIPES
        GEMM operands are scaled and rounded into FP8: "delayed" (Transformer Engine's
        per-tensor delayed scaling), "current" (torchao's tensorwise current scaling),
        "blocks" (DeepSeek-V3: 1x128 tiles, 128x128 weight blocks), "mx" (OCP MX v1.0
        blocks of 32 with an E8M0 scale).
    fp8_forward, fp8_backward : Format or None
        The FP8 formats of the forward operands (activations, weights) and of the
        gradients in the backward products.
    mx_scale_rounding : {"floor", "ceil"}
        The MX scale exponent: OCP's floor(log2 amax) - emax_elem ("floor"), or
        Transformer Engine's variant that rounds the exponent up so that amax / scale
        never exceeds the element format's largest value ("ceil"); the
        ``scale_rounding`` of :func:`softfloat.scaled_encode`.
    description : str
        What the preset reproduces.

    Examples
    --------
    >>> from softfloat.training import as_policy
    >>> p = as_policy("O2")
    >>> p.params.name, p.master.name, p.loss_scale
    ('fp16', 'fp32', 'dynamic')
    >>> as_policy("bf16-pure", update_rounding="stochastic").update_rounding.value
    'stochastic'
    """

    name: str
    params: Format
    master: Format | None
    activations: Format
    gradients: Format
    loss: Format
    matmul_inputs: Format
    accumulator: object = "fp32"
    product: Format | None = None
    accumulate_block: int | None = None
    optimizer_state: Format = as_format("fp32")
    update_rounding: Rounding = Rounding.NEAREST_EVEN
    loss_scale: object = "none"
    fp8: str | None = None
    fp8_forward: Format | None = None
    fp8_backward: Format | None = None
    mx_scale_rounding: str = "floor"
    description: str = ""

    def __post_init__(self):
        for f in ("params", "activations", "gradients", "loss", "matmul_inputs", "optimizer_state"):
            object.__setattr__(self, f, as_format(getattr(self, f), f))
        for f in ("master", "product", "fp8_forward", "fp8_backward"):
            if getattr(self, f) is not None:
                object.__setattr__(self, f, as_format(getattr(self, f), f))
        object.__setattr__(self, "update_rounding", as_rounding(self.update_rounding))
        if self.update_rounding not in (Rounding.NEAREST_EVEN, Rounding.STOCHASTIC):
            raise ValueError(f"update_rounding must be 'nearest_even' or 'stochastic'; got "
                             f"{self.update_rounding.value!r}")
        object.__setattr__(self, "loss_scale", _loss_scale(self.loss_scale))
        if self.fp8 is not None and self.fp8 not in FP8_RECIPES:
            raise ValueError(f"fp8 must be None or one of {', '.join(map(repr, FP8_RECIPES))}; got {self.fp8!r}")
        if self.fp8 is not None and (self.fp8_forward is None or self.fp8_backward is None):
            raise ValueError(f"fp8={self.fp8!r} needs fp8_forward and fp8_backward formats")
        if self.mx_scale_rounding not in ("floor", "ceil"):
            raise ValueError(f"mx_scale_rounding must be 'floor' or 'ceil'; got {self.mx_scale_rounding!r}")
        if self.accumulate_block is not None:
            _validate.int_in_range("accumulate_block", self.accumulate_block, 1, 2**31)

    @property
    def weights(self) -> Format:
        """The format the optimizer's update is rounded into (master, else params)."""
        return self.master if self.master is not None else self.params


def _loss_scale(value):
    if isinstance(value, str):
        if value in ("dynamic", "none"):
            return value
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"loss_scale must be 'dynamic', 'none' or a positive number such as 1024; "
                             f"got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"loss_scale must be 'dynamic', 'none' or a positive number such as 1024; got "
                        f"{_validate.describe(value)}")
    if not (value > 0 and value != float("inf")):
        raise ValueError(f"loss_scale must be a positive finite number; got {value!r}")
    return float(value)


def _preset(name, description, **kw) -> Policy:
    return Policy(name=name, description=description, **kw)


_F32 = dict(params="fp32", master=None, activations="fp32", gradients="fp32", loss="fp32", matmul_inputs="fp32")

#: the named presets (see each one's ``description``)
PRESETS: dict[str, Policy] = {p.name: p for p in (
    _preset("fp32", "Apex O0 / plain fp32 training: every tensor fp32, products rounded to fp32 and "
            "added in fp32 (no FMA), no loss scaling.", **_F32, product="fp32"),
    _preset("O1", "Apex O1 / torch.autocast(float16): fp32 weights cast to fp16 for each matrix "
            "product (fp32 accumulation, fp16 outputs), fp16 activations and gradients, softmax and "
            "loss in fp32, weight gradients unscaled into fp32, dynamic loss scaling.",
            params="fp32", master=None, activations="fp16", gradients="fp16", loss="fp32",
            matmul_inputs="fp16", loss_scale="dynamic"),
    _preset("O2", "Apex O2: fp16 model and activations, fp32 master weights updated by an fp32 "
            "optimizer, loss in fp32, fp32 accumulation of the fp16 products, dynamic loss scaling "
            "(the seeds' recipe: Micikevicius et al. 2018).",
            params="fp16", master="fp32", activations="fp16", gradients="fp16", loss="fp32",
            matmul_inputs="fp16", loss_scale="dynamic"),
    _preset("O3", "Apex O3: pure fp16 -- weights, optimizer state, loss and gradients in fp16, the "
            "update rounded into the fp16 weights (no master copy), no loss scaling.",
            params="fp16", master=None, activations="fp16", gradients="fp16", loss="fp16",
            matmul_inputs="fp16", optimizer_state="fp16"),
    _preset("bf16", "torch.autocast(bfloat16) with fp32 master weights: bf16 compute and gradients, "
            "fp32 accumulation, fp32 optimizer, no loss scaling (bf16 has fp32's exponent range).",
            params="bf16", master="fp32", activations="bf16", gradients="bf16", loss="fp32",
            matmul_inputs="bf16"),
    _preset("bf16-pure", "Pure bf16 training: weights, optimizer state, loss and gradients in bf16, the "
            "update rounded into the bf16 weights (nearest even; pass update_rounding='stochastic' "
            "for the stochastic-rounding cure), no loss scaling.",
            params="bf16", master=None, activations="bf16", gradients="bf16", loss="bf16",
            matmul_inputs="bf16", optimizer_state="bf16"),
    _preset("fp8", "Transformer Engine's HYBRID recipe: e4m3 activations and weights in the forward "
            "products, e5m2 gradients in the backward ones, per-tensor delayed scaling (amax history "
            "1024, max over the window, margin 0: softfloat.DelayedScaling, scale = fp32(fp8 max / "
            "amax), the old scale kept when amax is 0 or not finite), fp32 accumulation, bf16 elsewhere, fp32 master "
            "weights.", params="bf16", master="fp32", activations="bf16", gradients="bf16", loss="fp32",
            matmul_inputs="bf16", fp8="delayed", fp8_forward="fp8_e4m3", fp8_backward="fp8_e5m2"),
    _preset("fp8-current", "torchao's default 'tensorwise' float8 recipe: per-tensor current scaling "
            "(scale = fp32(fp8 max / max(amax, 1e-12)), saturating cast), e4m3 forward, e5m2 gradients, "
            "fp32 accumulation, bf16 elsewhere, fp32 master weights.",
            params="bf16", master="fp32", activations="bf16", gradients="bf16", loss="fp32",
            matmul_inputs="bf16", fp8="current", fp8_forward="fp8_e4m3", fp8_backward="fp8_e5m2"),
    _preset("fp8-block", "DeepSeek-V3's FP8 training: e4m3 for all three products, 1x128 tiles of "
            "activations and gradients and 128x128 blocks of weights each with its own scale "
            "(softfloat.scaled_encode's fp32(448 / amax), dequantised by its fp32 reciprocal; "
            "DeepSeek's kernels divide by fp32(amax / 448)), partial sums of the 'h100' accumulator model promoted into fp32 every 128 "
            "products, bf16 elsewhere, fp32 master weights.",
            params="bf16", master="fp32", activations="bf16", gradients="bf16", loss="fp32",
            matmul_inputs="bf16", accumulator="h100", accumulate_block=128, fp8="blocks",
            fp8_forward="fp8_e4m3", fp8_backward="fp8_e4m3"),
    _preset("mxfp8", "OCP Microscaling v1.0 MXFP8: blocks of 32 elements along the contraction sharing "
            "an E8M0 scale 2**(floor(log2 amax) - emax_elem), elements rounded to nearest even and "
            "clamped; e4m3 forward, e5m2 gradients, fp32 accumulation, bf16 elsewhere, fp32 master "
            "weights (mx_scale_rounding='ceil' gives Transformer Engine's variant).",
            params="bf16", master="fp32", activations="bf16", gradients="bf16", loss="fp32",
            matmul_inputs="bf16", fp8="mx", fp8_forward="fp8_e4m3", fp8_backward="fp8_e5m2"),
)}


def as_policy(policy, **overrides) -> Policy:
    """A :class:`Policy` from a preset name (or a Policy), with ``overrides`` applied.

    Examples
    --------
    >>> from softfloat.training import as_policy
    >>> as_policy("O2", accumulator="fp16").accumulator
    'fp16'
    >>> sorted(as_policy("fp32").__dataclass_fields__)[:3]
    ['accumulate_block', 'accumulator', 'activations']
    """
    if isinstance(policy, Policy):
        base = policy
    elif isinstance(policy, str):
        key = {p.lower(): p for p in PRESETS}.get(policy.strip().lower())
        if key is None:
            raise ValueError(f"policy {policy!r} is not a preset; choose one of {', '.join(PRESETS)} "
                             "or pass a softfloat.training.Policy")
        base = PRESETS[key]
    else:
        raise TypeError(f"policy must be a preset name such as 'O2' or a softfloat.training.Policy; got "
                        f"{_validate.describe(policy)}")
    if not overrides:
        return base
    known = {f.name for f in fields(Policy)}
    unknown = set(overrides) - known
    if unknown:
        raise TypeError(f"unknown policy field(s) {sorted(unknown)}; the fields are {', '.join(sorted(known))}")
    if "name" not in overrides:
        label = ",".join(f"{k}={getattr(v, 'value', getattr(v, 'name', v))}" for k, v in sorted(overrides.items()))
        overrides = {**overrides, "name": f"{base.name}[{label}]"}
    return replace(base, **overrides)
