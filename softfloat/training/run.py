"""Train the MLP under a policy and report what happened: :func:`run` and :func:`compare`.

One seed fixes everything: the weight initialisation, the order of the mini-batches and
every stochastic rounding draw (three independent streams spawned from it), so two runs
with the same arguments give identical reports.
"""

from __future__ import annotations

import json
import numbers
from dataclasses import dataclass, field

import numpy as np

from .. import _validate
from ._engine import TENSORS, Engine
from ._numerics import Arith, round_to
from .data import load
from .loss_scaling import LossScaler
from .model import MLP
from .optim import make_optimizer
from .policy import Policy, as_policy
from .telemetry import ExponentHistogram, Records

__all__ = ["Report", "Table", "Trainer", "compare", "run"]


@dataclass
class Report:
    """What one training run did.

    Attributes
    ----------
    policy : Policy
    accuracy : float
        Final test accuracy.
    train_accuracy : float
    losses : list of float
        The loss of every step (the loss curve).
    epoch_losses : list of float
        Mean loss per epoch.
    telemetry : Records
        One record per step: step, epoch, loss, loss_scale, skipped, grad_underflow
        (share of weight-gradient elements whose rounding into the gradient format
        underflowed: to zero or to a subnormal, inexactly), grad_overflow (share that
        overflowed), update_swamped (share of the weights with a non-zero update whose
        stored value did not change), then per tensor (weights, activations,
        activation_grads, weight_grads, updates) the shares ``<tensor>_underflow``,
        ``_underflow_zero``, ``_underflow_subnormal``, ``_overflow`` and the count
        ``_nonfinite`` (for the updates: of lr * v rounded into the optimizer-state
        format), and ``updates_swamped`` / ``updates_nonzero``, the counts behind
        ``update_swamped``.
    histograms : dict of ExponentHistogram
        Exponents of the activation and weight gradients before their rounding,
        divided by the loss scale (the seeds' SSD histogram).
    config : dict
        The run's arguments.
    """

    policy: Policy
    accuracy: float
    train_accuracy: float
    losses: list
    epoch_losses: list
    telemetry: Records
    histograms: dict
    config: dict = field(default_factory=dict)

    @property
    def skipped_steps(self) -> int:
        return int(sum(rec["skipped"] for rec in self.telemetry))

    @property
    def loss_scales(self) -> list:
        return self.telemetry.column("loss_scale")

    def summary(self) -> dict:
        """One row: accuracy, loss, underflow and swamping shares over the run, skipped
        steps, final loss scale, and the shares of (unscaled, pre-rounding) activation
        gradients below 2**-24 (zero in fp16) and 2**-14 (subnormal in fp16)."""
        tel = self.telemetry
        n = max(len(tel), 1)
        return {"policy": self.policy.name, "accuracy": self.accuracy, "train_accuracy": self.train_accuracy,
                "final_loss": self.epoch_losses[-1] if self.epoch_losses else float("nan"),
                "grad_underflow": sum(tel.column("grad_underflow")) / n,
                "update_swamped": sum(tel.column("update_swamped")) / n,
                "skipped_steps": self.skipped_steps,
                "final_loss_scale": tel[-1]["loss_scale"] if tel else float("nan"),
                # the seeds' SSD histogram: unscaled activation gradients below fp16's reach
                "act_grads_below_2^-24": self.histograms["activation_grads"].mass_below(2.0**-24),
                "act_grads_below_2^-14": self.histograms["activation_grads"].mass_below(2.0**-14)}

    def to_dict(self) -> dict:
        return {"summary": self.summary(), "config": self.config, "losses": self.losses,
                "epoch_losses": self.epoch_losses, "telemetry": list(self.telemetry),
                "histograms": {k: h.to_dict() for k, h in self.histograms.items()},
                "policy": {k: _plain(v) for k, v in vars(self.policy).items()}}

    def to_json(self, **kwargs) -> str:
        """The whole report as JSON."""
        return json.dumps(self.to_dict(), **kwargs)


def _plain(v):
    if v is None or isinstance(v, (int, float, str)):
        return v
    return getattr(v, "name", None) or getattr(v, "value", None) or str(v)


class Table(list):
    """Rows of :meth:`Report.summary` (one per policy), printable, JSON- and pandas-ready."""

    def to_json(self, **kwargs) -> str:
        return json.dumps(list(self), **kwargs)

    def to_pandas(self):
        """A pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Table.to_pandas needs pandas, which is not installed: pip install pandas") from None
        return pd.DataFrame(list(self))

    def __str__(self) -> str:
        head = ["policy", "test acc", "loss", "grad underflow", "swamped updates", "skipped", "loss scale"]
        rows = [[r["policy"], f"{100 * r['accuracy']:.1f}%", f"{r['final_loss']:.4f}",
                 f"{100 * r['grad_underflow']:.3f}%", f"{100 * r['update_swamped']:.2f}%",
                 str(r["skipped_steps"]), f"{r['final_loss_scale']:g}"] for r in self]
        widths = [max(len(x) for x in col) for col in zip(head, *rows)]
        lines = ["  ".join(x.ljust(w) for x, w in zip(line, widths)).rstrip() for line in [head, *rows]]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)


def _scaler(policy: Policy, loss_scale, growth_interval) -> LossScaler | None:
    mode = policy.loss_scale if loss_scale is None else loss_scale
    if mode == "none":
        return None
    if mode == "dynamic":
        return LossScaler() if growth_interval is None else LossScaler(growth_interval=growth_interval)
    return LossScaler(init_scale=mode, dynamic=False)


class Trainer:
    """The training loop of :func:`run`, one step at a time (see :func:`run` for the
    arguments).

    Examples
    --------
    >>> from softfloat.training import Trainer
    >>> t = Trainer("O2", seed=0, batch_size=8)
    >>> rec = t.step(t.data.x_train[:8], t.data.y_train[:8])
    >>> sorted(rec)[:4], rec["loss_scale"]
    (['activation_grads_nonfinite', 'activation_grads_overflow', 'activation_grads_underflow', 'activation_grads_underflow_subnormal'], 65536.0)
    """

    def __init__(self, policy="O2", *, seed=0, loss_scale=None, hidden=(128,), batch_size=64, optimizer="sgd",
                 lr=None, activation="relu", growth_interval=None, telemetry=True, data=None):
        self.policy = as_policy(policy)
        if loss_scale is not None:
            self.policy = as_policy(self.policy, loss_scale=loss_scale) if not isinstance(loss_scale, LossScaler) \
                else self.policy
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise TypeError(f"seed must be an int >= 0; got {_validate.describe(seed)}")
        if seed < 0:  # numpy's SeedSequence says only "expected non-negative integer"
            raise ValueError(f"seed must be an int >= 0 (a numpy seed); got {seed}")
        self.batch_size = _validate.count("batch_size", batch_size)
        if self.batch_size < 1:
            raise ValueError("batch_size must be >= 1; got 0")
        if isinstance(hidden, numbers.Integral):
            hidden = (hidden,)
        if isinstance(hidden, (str, bytes)) or not hasattr(hidden, "__iter__"):
            raise TypeError(f"hidden must be an int or a tuple of ints (the hidden layers' widths); "
                            f"got {_validate.describe(hidden)}")
        self.data = load() if data is None else data
        streams = np.random.SeedSequence(int(seed)).spawn(3)
        self.init_rng, self.batch_rng, self.round_rng = (np.random.default_rng(s) for s in streams)
        self.engine = Engine(self.policy, rng=self.round_rng, telemetry=telemetry)
        sizes = (self.data.x_train.shape[1], *hidden, self.data.classes)
        self.model = MLP(sizes, self.engine, rng=self.init_rng, activation=activation)
        self.optimizer = make_optimizer(optimizer, self.policy, rng=self.round_rng, lr=lr)
        self.scaler = loss_scale if isinstance(loss_scale, LossScaler) else \
            _scaler(self.policy, None, growth_interval)
        self.unscale = Arith(self.policy.weights)
        self.steps = 0
        self.histograms = {"activation_grads": ExponentHistogram(), "weight_grads": ExponentHistogram()}

    def step(self, x, y, epoch: int = 0) -> dict:
        """One training step on a batch; returns its telemetry record."""
        p, eng, scaler = self.policy, self.engine, self.scaler
        scale = 1.0 if scaler is None else scaler.scale
        eng.new_step(scale)
        loss, grads = self.model.loss_and_grads(x, y, scale)
        # the gradients into the weights' format (exact: a wider format), then unscaled
        grads = [round_to(g, p.weights) for g in grads]
        if scale != 1.0:
            inv = scaler.inv_scale
            grads = [self.unscale.mul(g, inv) for g in grads]
        found_inf = not all(np.isfinite(g).all() for g in grads)
        skipped = scaler is not None and scaler.skips(found_inf)
        swamped = moving = 0
        if not skipped:
            swamped, moving = self.optimizer.apply(self.model.params, grads,
                                                   eng.counts["updates"] if eng.telemetry else None)
        if scaler is not None:
            scaler.update(found_inf)
        wg = eng.counts["weight_grads"]
        n_wg = max(wg.n, 1)
        rec = {"step": self.steps, "epoch": epoch, "loss": loss, "loss_scale": scale, "skipped": bool(skipped),
               "grad_underflow": (wg.underflow_zero + wg.underflow_subnormal) / n_wg,
               "grad_overflow": wg.overflow / n_wg,
               "update_swamped": swamped / moving if moving else 0.0}
        for name in TENSORS:
            rec.update(eng.counts[name].shares(name))
        rec["updates_swamped"] = swamped
        rec["updates_nonzero"] = moving
        if eng.telemetry:
            for name, values in eng.gradient_values.items():
                for v in values:
                    self.histograms[name].add(v, scale)
        self.steps += 1
        return rec

    def batches(self):
        """One epoch's shuffled mini-batches (the last one may be smaller)."""
        x, y = self.data.x_train, self.data.y_train
        order = self.batch_rng.permutation(len(y))
        for start in range(0, len(y), self.batch_size):
            idx = order[start:start + self.batch_size]
            yield x[idx], y[idx]

    def accuracy(self, x, y) -> float:
        return float(np.mean(self.model.predict(x) == y))


def run(policy="O2", *, epochs=20, seed=0, loss_scale=None, hidden=128, batch_size=64, optimizer="sgd",
        lr=None, activation="relu", growth_interval=None, telemetry=True, data=None, progress=None) -> Report:
    """Train the MLP (64-``hidden``-10 on the digits) under ``policy`` and report.

    Parameters
    ----------
    policy : str or Policy
        A preset name ("fp32", "O1", "O2", "O3", "bf16", "bf16-pure", "fp8", "fp8-current",
        "fp8-block", "mxfp8") or a :class:`Policy`.
    epochs : int, default 20
    seed : int, default 0
        Fixes initialisation, batching and stochastic rounding: equal arguments give
        equal reports.
    loss_scale : "dynamic", "none", a number, a LossScaler or None
        None: the policy's own.
    hidden : int or tuple of int, default 128
        Hidden layer widths.
    batch_size : int, default 64
    optimizer : {"sgd", "adam"}, default "sgd"
        SGD with momentum 0.9 (lr 0.1) or Adam (lr 1e-3).
    lr : float, optional
    activation : {"relu", "gelu"}
    growth_interval : int, optional
        Of the dynamic loss scaler (default GradScaler's 2000).
    telemetry : bool, default True
        False skips the per-tensor counts and histograms (faster; the step records then
        hold zeros for them).
    data : Dataset, optional
        Default: :func:`softfloat.training.data.load` (the digits).
    progress : callable, optional
        Called as ``progress(step_record)`` after every step (the CLI's progress bar).

    Returns
    -------
    Report

    Examples
    --------
    >>> from softfloat.training import run
    >>> r = run("O2", epochs=1, seed=0)
    >>> 0.0 <= r.accuracy <= 1.0, len(r.telemetry) == len(r.losses)
    (True, True)
    >>> sorted(k for k in r.telemetry[0] if k in ("step", "loss_scale", "skipped"))
    ['loss_scale', 'skipped', 'step']
    """
    epochs = _validate.count("epochs", epochs)
    trainer = Trainer(policy, seed=seed, loss_scale=loss_scale, hidden=hidden, batch_size=batch_size,
                      optimizer=optimizer, lr=lr, activation=activation, growth_interval=growth_interval,
                      telemetry=telemetry, data=data)
    records = Records()
    epoch_losses = []
    for epoch in range(epochs):
        losses = []
        for x, y in trainer.batches():
            rec = trainer.step(x, y, epoch)
            records.append(rec)
            losses.append(rec["loss"])
            if progress is not None:
                progress(rec)
        epoch_losses.append(float(np.mean(losses)))
    d = trainer.data
    config = {"policy": trainer.policy.name, "epochs": epochs, "seed": int(seed), "hidden": list(trainer.model.sizes[1:-1]),
              "batch_size": trainer.batch_size, "optimizer": optimizer, "lr": trainer.optimizer.lr,
              "activation": activation, "data": d.name,
              "loss_scale": trainer.policy.loss_scale if loss_scale is None or isinstance(loss_scale, LossScaler)
              else loss_scale}
    return Report(trainer.policy, trainer.accuracy(d.x_test, d.y_test), trainer.accuracy(d.x_train, d.y_train),
                  records.column("loss"), epoch_losses, records, trainer.histograms, config)


def compare(policies=("fp32", "O1", "O2", "O3", "bf16", "fp8"), **kwargs) -> Table:
    """Run several policies with the same arguments (and seed); one summary row each.

    Examples
    --------
    >>> from softfloat.training import compare
    >>> table = compare(["fp32", "O2"], epochs=1)
    >>> [row["policy"] for row in table]
    ['fp32', 'O2']
    """
    if isinstance(policies, (str, Policy)):
        policies = [policies]
    reports = kwargs.pop("reports", None)
    table = Table()
    for policy in policies:
        report = run(policy, **kwargs)
        if reports is not None:
            reports.append(report)
        table.append(report.summary())
    return table
