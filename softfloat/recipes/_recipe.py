"""Recipes: where each tensor of a mixed-precision training step lives, and the named ones.

A :class:`Recipe` is frozen data; the training lab (:mod:`softfloat.training`, which calls
it a Policy) and the matrix products of :class:`~softfloat.recipes.GemmEngine` read it and
never branch on a recipe's name.  :data:`RECIPES` holds the named ones, each documented with
the recipe it reproduces and its source; :func:`as_recipe` looks one up and applies
overrides (custom recipes by keyword).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from .. import _validate
from ..accumulate import PRESETS as _CHIPS, FusedAccumulator
from ..accumulate.hardware import is_preset
from ..formats import Format, as_format
from ..rounding import Rounding, as_rounding

__all__ = ["RECIPES", "Recipe", "SCALINGS", "as_recipe", "check_accumulator"]

#: how the operands of a scaled low-precision recipe are scaled (see :class:`Recipe`)
SCALINGS = ("delayed", "current", "blocks", "mx")


def check_accumulator(value, name: str = "accumulator"):
    """``value`` if it names an accumulator: a :class:`~softfloat.formats.Format` or a
    format name ("fp32", "fp16"), a hardware model of :mod:`softfloat.accumulate` ("h100",
    ...) or a :class:`~softfloat.accumulate.FusedAccumulator`; else a TypeError/ValueError
    naming ``name``.

    >>> from softfloat.recipes import check_accumulator
    >>> check_accumulator("h100"), check_accumulator("fp32")
    ('h100', 'fp32')
    """
    if isinstance(value, (Format, FusedAccumulator)):
        return value
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a format such as 'fp32', a hardware model such as 'h100' or a "
                        f"softfloat.accumulate.FusedAccumulator; got {_validate.describe(value)}")
    if is_preset(value):  # (each preset models fp16 inputs: hardware_model would take it)
        return value
    try:
        as_format(value, name)
    except ValueError:
        raise ValueError(f"{name}={value!r} is neither a format (such as 'fp32', 'fp16', 'bf16') nor a hardware "
                         f"model of softfloat.accumulate ({', '.join(_CHIPS)})") from None
    return value


@dataclass(frozen=True)
class Recipe:
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
    fp8 : None or one of SCALINGS
        The scaled low-precision recipe, whatever its width (the name is historical: the
        "mxfp4" recipe holds a 4-bit format here): GEMM operands are scaled and rounded
        into ``fp8_forward`` / ``fp8_backward``: "delayed" (Transformer Engine's per-tensor
        delayed scaling), "current" (torchao's tensorwise current scaling), "blocks"
        (DeepSeek-V3: 1x128 tiles, 128x128 weight blocks), "mx" (OCP MX v1.0 blocks of 32
        with an E8M0 scale).  None: no scaling, both operands rounded into
        ``matmul_inputs``.
    fp8_forward, fp8_backward : Format or None
        The element formats of the scaled recipe (FP8, or FP4 for "mxfp4"): of the forward
        operands (activations, weights) and of the gradients in the backward products.
    mx_scale_rounding : {"floor", "ceil"}
        The MX scale exponent: OCP's floor(log2 amax) - emax_elem ("floor"), or
        Transformer Engine's variant that rounds the exponent up so that amax / scale
        never exceeds the element format's largest value ("ceil"); the
        ``scale_rounding`` of :func:`softfloat.scaled_encode`.
    description : str
        What the preset reproduces.

    The training lab's name for it is :class:`softfloat.training.Policy` (the same class).

    Examples
    --------
    >>> from softfloat.recipes import as_recipe
    >>> p = as_recipe("O2")
    >>> p.params.name, p.master.name, p.loss_scale
    ('fp16', 'fp32', 'dynamic')
    >>> as_recipe("bf16-pure", update_rounding="stochastic").update_rounding.value
    'stochastic'
    >>> as_recipe("mxfp4").fp8_forward.name       # "fp8" fields: the scaled recipe, any width
    'fp4_e2m1'
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
        if self.fp8 is not None and self.fp8 not in SCALINGS:
            raise ValueError(f"fp8 must be None or one of {', '.join(map(repr, SCALINGS))}; got {self.fp8!r}")
        if self.fp8 is not None and (self.fp8_forward is None or self.fp8_backward is None):
            raise ValueError(f"fp8={self.fp8!r} needs fp8_forward and fp8_backward formats")
        if self.mx_scale_rounding not in ("floor", "ceil"):
            raise ValueError(f"mx_scale_rounding must be 'floor' or 'ceil'; got {self.mx_scale_rounding!r}")
        check_accumulator(self.accumulator)
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


def _preset(name, description, **kw) -> Recipe:
    return Recipe(name=name, description=description, **kw)


_F32 = dict(params="fp32", master=None, activations="fp32", gradients="fp32", loss="fp32", matmul_inputs="fp32")

#: the named recipes (see each one's ``description``); :data:`softfloat.training.PRESETS`
#: is this dict
RECIPES: dict[str, Recipe] = {p.name: p for p in (
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
    _preset("fp16", "PyTorch AMP with float16 (torch.autocast(device_type, dtype=torch.float16) and "
            "torch.amp.GradScaler): fp32 weights cast to fp16 for each matrix product, fp32 accumulation "
            "(cuBLAS's fp16 GEMMs with an fp32 compute type), fp16 outputs, activations and gradients, "
            "softmax and loss in fp32 (autocast's fp32 op list), an fp32 optimizer, dynamic loss scaling "
            "with GradScaler's defaults (init 2**16, growth 2 every 2000 steps, backoff 0.5).  The "
            "numerics of Apex O1 ('O1'), under PyTorch's name.",
            params="fp32", master=None, activations="fp16", gradients="fp16", loss="fp32",
            matmul_inputs="fp16", loss_scale="dynamic"),
    _preset("mxfp4", "OCP Microscaling v1.0 MXFP4: fp4_e2m1 elements in blocks of 32 along the "
            "contraction sharing an E8M0 scale 2**(floor(log2 amax) - 2), elements rounded to nearest "
            "even and clamped to +-6, for the forward and the backward products alike; fp32 accumulation, "
            "bf16 elsewhere, fp32 master weights.  Published MXFP4 training recipes add stochastic "
            "rounding of the gradients and random Hadamard transforms before quantising (Tseng et al. "
            "2025, 'Training LLMs with MXFP4'; NVIDIA's NVFP4 recipe likewise); this recipe does not "
            "(update_rounding='stochastic' only rounds the weight update).",
            params="bf16", master="fp32", activations="bf16", gradients="bf16", loss="fp32",
            matmul_inputs="bf16", fp8="mx", fp8_forward="fp4_e2m1", fp8_backward="fp4_e2m1"),
)}


def as_recipe(recipe, **overrides) -> Recipe:
    """A :class:`Recipe` from a name of :data:`RECIPES` (or a Recipe), with ``overrides``
    (any of its fields) applied; an override without ``name`` gets a name such as
    ``"O2[accumulator=fp16]"``.  :func:`softfloat.training.as_policy` is this function.

    Examples
    --------
    >>> from softfloat.recipes import as_recipe
    >>> as_recipe("O2", accumulator="fp16").accumulator
    'fp16'
    >>> as_recipe("O2", accumulator="fp16").name
    'O2[accumulator=fp16]'
    >>> sorted(as_recipe("fp32").__dataclass_fields__)[:3]
    ['accumulate_block', 'accumulator', 'activations']
    """
    if isinstance(recipe, Recipe):
        base = recipe
    elif isinstance(recipe, str):
        key = {p.lower(): p for p in RECIPES}.get(recipe.strip().lower())
        if key is None:
            raise ValueError(f"recipe {recipe!r} is not a preset{_validate.did_you_mean(recipe, RECIPES)}; "
                             f"choose one of {', '.join(RECIPES)} "
                             "or pass a softfloat.recipes.Recipe (softfloat.training.Policy)")
        base = RECIPES[key]
    else:
        raise TypeError(f"recipe/policy must be a preset name such as 'O2' or a softfloat.recipes.Recipe "
                        f"(softfloat.training.Policy); got {_validate.describe(recipe)}")
    if not overrides:
        return base
    known = {f.name for f in fields(Recipe)}
    unknown = set(overrides) - known
    if unknown:
        raise TypeError(f"overrides: unknown policy field(s) {sorted(unknown)}; a Recipe (softfloat.training.Policy) "
                        f"has the fields {', '.join(sorted(known))}")
    if "name" not in overrides:
        label = ",".join(f"{k}={getattr(v, 'value', getattr(v, 'name', v))}" for k, v in sorted(overrides.items()))
        overrides = {**overrides, "name": f"{base.name}[{label}]"}
    return replace(base, **overrides)
