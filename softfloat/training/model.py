"""A small multilayer perceptron whose forward and backward passes round where the policy says.

Linear layers (bias added as the matrix product's initial value, as a GEMM epilogue
does), ReLU or GELU between them, softmax cross-entropy at the end.  Each matrix product
goes through :func:`softfloat.matmul` with the policy's accumulator and is rounded once
from the accumulator into the activation (or gradient) format; the loss and its gradient
are evaluated in float64 and rounded once into the policy's loss format, then into the
gradient format (the cast back to the model's precision).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _validate
from ._engine import Engine

__all__ = ["MLP"]

_ACTIVATIONS = ("relu", "gelu")
_GELU_C = math.sqrt(2.0 / math.pi)


def _gelu(z):
    """GELU's tanh form (torch's approximate='tanh') and its derivative, in float64."""
    z = np.asarray(z, np.float64)
    inner = _GELU_C * (z + 0.044715 * z**3)
    t = np.tanh(inner)
    value = 0.5 * z * (1.0 + t)
    slope = 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * _GELU_C * (1.0 + 3 * 0.044715 * z * z)
    return value, slope


class MLP:
    """Linear layers of the given ``sizes`` (e.g. (64, 128, 10)) with ReLU or GELU between.

    Weights are drawn as torch's nn.Linear does (uniform in +-1/sqrt(fan_in)) from ``rng``
    and rounded into the policy's weight format.  ``params`` holds the weights the
    optimizer updates (the master copy where the policy has one).

    Examples
    --------
    >>> import numpy as np
    >>> from softfloat.training import MLP, as_policy
    >>> from softfloat.training._engine import Engine
    >>> eng = Engine(as_policy("O2"), rng=np.random.default_rng(0))
    >>> net = MLP((4, 3, 2), eng, rng=np.random.default_rng(0))
    >>> [w.shape for w in net.params]
    [(4, 3), (3,), (3, 2), (2,)]
    >>> loss, grads = net.loss_and_grads(np.ones((5, 4), np.float32), np.array([0, 1, 0, 1, 1]), 1.0)
    >>> [g.dtype.name for g in grads]
    ['float32', 'float32', 'float32', 'float32']
    """

    def __init__(self, sizes, engine: Engine, *, rng: np.random.Generator, activation: str = "relu"):
        sizes = tuple(sizes)
        if len(sizes) < 2 or not all(isinstance(s, (int, np.integer)) and s > 0 for s in sizes):
            raise ValueError(f"sizes must be two or more positive ints (inputs, hidden..., classes); got {sizes!r}")
        _validate.one_of("activation", activation, _ACTIVATIONS)
        self.sizes, self.engine, self.activation = sizes, engine, activation
        p = engine.policy
        self.params = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            bound = 1.0 / math.sqrt(fan_in)
            w = rng.uniform(-bound, bound, size=(fan_in, fan_out))
            b = rng.uniform(-bound, bound, size=(fan_out,))
            self.params += [engine.round(w, p.weights), engine.round(b, p.weights)]

    # ---- forward ---------------------------------------------------------------------------
    def working_copy(self) -> list[np.ndarray]:
        """The weights the products use: the master copy rounded into ``params`` (counted
        as "weights" telemetry), or the stored weights themselves."""
        p, eng = self.engine.policy, self.engine
        if p.params == p.weights:
            return self.params
        return [eng.round(w, p.params, "weights") for w in self.params]

    def forward(self, x, weights=None):
        """Logits (activation format) and what backward needs."""
        p, eng = self.engine.policy, self.engine
        weights = self.working_copy() if weights is None else weights
        h = eng.round(np.asarray(x, np.float32), p.activations)
        cache = []
        n_layers = len(weights) // 2
        for i in range(n_layers):
            w, b = weights[2 * i], weights[2 * i + 1]
            z = eng.gemm(h, w, "fprop", f"layer{i}", p.activations, "activations", bias=b,
                         formats=(p.activations, p.params))
            last = i == n_layers - 1
            if last:
                cache.append((h, w, None))
                h = z
            elif self.activation == "relu":
                cache.append((h, w, z > 0))
                h = np.maximum(z, np.float32(0))
            else:
                value, slope = _gelu(z)
                cache.append((h, w, slope))
                h = eng.round(value, p.activations, "activations")
        return h, cache

    # ---- loss --------------------------------------------------------------------------------
    def loss_and_grads(self, x, y, scale: float):
        """The loss (float, in the loss format) and the gradients of ``scale * loss``
        with respect to the stored parameters, in the gradient format (not unscaled)."""
        p, eng = self.engine.policy, self.engine
        weights = self.working_copy()
        logits, cache = self.forward(x, weights)
        y = np.asarray(y)
        z = np.asarray(logits, np.float64)
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        logp = z - np.log(s)
        n = len(y)
        loss = float(eng.round(np.array([-logp[np.arange(n), y].mean()]), p.loss)[0])
        probs = e / s
        probs[np.arange(n), y] -= 1.0
        dz = eng.round(probs * (scale / n), p.gradients, "activation_grads", via=p.loss)
        grads = [None] * len(weights)
        for i in reversed(range(len(weights) // 2)):
            h, w, local = cache[i]
            grads[2 * i] = eng.gemm(h.T, dz, "wgrad", f"layer{i}", p.gradients, "weight_grads",
                                    formats=(p.activations, p.gradients))
            db = eng.column_sum(dz, p.gradients)
            grads[2 * i + 1] = eng.round(db, p.gradients, "weight_grads")
            if i == 0:
                break
            dh = eng.gemm(dz, w.T, "dgrad", f"layer{i}", p.gradients, "activation_grads",
                          formats=(p.gradients, p.params))
            local = cache[i - 1][2]  # the nonlinearity after layer i - 1
            if self.activation == "relu":
                dz = np.where(local, dh, np.float32(0))
            else:
                dz = eng.round(np.asarray(dh, np.float64) * local, p.gradients, "activation_grads")
        return loss, grads

    def predict(self, x, batch: int = 512) -> np.ndarray:
        """Class predictions (argmax of the logits) in the policy's forward precision."""
        _validate.count("batch", batch)
        out = []
        telemetry, self.engine.telemetry = self.engine.telemetry, False
        try:
            weights = self.working_copy()
            for start in range(0, len(x), batch):
                logits, _ = self.forward(x[start:start + batch], weights)
                out.append(np.argmax(logits, axis=1))
        finally:
            self.engine.telemetry = telemetry
        return np.concatenate(out)
