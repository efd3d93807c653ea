"""SGD with momentum and Adam, every operation rounded in the policy's optimizer-state
format and the update rounded into the stored weights (nearest even or stochastic).

torch's update rules (``torch.optim.SGD`` with momentum, ``torch.optim.Adam``), spelled out
operation by operation so that each result is rounded once:

SGD      v = g (first step), then v = mu * v + g;    u = lr * v
Adam     m = b1 * m + (1 - b1) * g;  v = b2 * v + (1 - b2) * g * g;
         u = (lr / (1 - b1**t)) * m / (sqrt(v) / sqrt(1 - b2**t) + eps)
both     w = w - u, rounded into the weights' format with the policy's update rounding.

The constants (mu, lr, ...) are rounded into the state format once.  A weight whose
update ``u`` is non-zero but whose stored value did not change was *swamped*: the update
was smaller than half the weight's spacing (2048x below it in fp16, the seeds' ratio).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _validate
from ._numerics import Arith, Counts, round_to
from .policy import Policy

__all__ = ["OPTIMIZERS", "Adam", "SGD", "make_optimizer"]

#: the names :func:`make_optimizer` (and ``softfloat train --optimizer``) takes
OPTIMIZERS = ("sgd", "adam")


def _rate(name, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0 or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number >= 0; got {_validate.describe(value)}")
    return float(value)


class _Optimizer:
    def __init__(self, policy: Policy, rng: np.random.Generator):
        self.policy = policy
        self.state = Arith(policy.optimizer_state)
        self.weights = Arith(policy.weights, policy.update_rounding, rng)
        self.steps = 0

    def _c(self, value):
        return round_to(np.float64(value), self.policy.optimizer_state)

    def _scaled(self, factor, values):
        """factor * values rounded into the state format (the update u), counted."""
        u = self.state.mul(factor, values)
        if getattr(self, "_counts", None) is not None:
            exact = np.float64(factor) * np.asarray(values, np.float64)
            self._counts += Counts.of(exact, u, self.policy.optimizer_state)
        return u

    def apply(self, params, grads, counts=None):
        """Update ``params`` in place (a list of arrays) from ``grads`` (in the weights'
        format); return the numbers of swamped weights and of weights with a non-zero
        update.  ``counts`` (a Counts), if given, adds what rounding the updates
        ``u`` into the optimizer-state format did (underflow, overflow)."""
        self.steps += 1
        self._counts = counts
        swamped = nonzero = 0
        for i, (w, g) in enumerate(zip(params, grads)):
            g = round_to(g, self.policy.optimizer_state)
            u = self._update(i, g)
            new = self.weights.sub(w, u)
            moving = u != 0
            nonzero += int(np.count_nonzero(moving))
            swamped += int(np.count_nonzero(moving & (new == w)))
            params[i] = new.astype(w.dtype, copy=False)
        return swamped, nonzero


class SGD(_Optimizer):
    """SGD with (heavy-ball) momentum, as ``torch.optim.SGD(lr, momentum)``.

    Examples
    --------
    >>> import numpy as np
    >>> from softfloat.training import SGD, as_policy
    >>> opt = SGD(as_policy("O3"), lr=0.1, momentum=0.0, rng=np.random.default_rng(0))
    >>> w = [np.array([1.0], np.float32)]
    >>> opt.apply(w, [np.array([0.002], np.float32)])   # 1 - 0.0002: below half of 2**-11
    (1, 1)
    >>> w[0]
    array([1.], dtype=float32)
    """

    def __init__(self, policy: Policy, *, lr=0.1, momentum=0.9, rng: np.random.Generator):
        super().__init__(policy, rng)
        self.lr, self.momentum = _rate("lr", lr), _rate("momentum", momentum)
        self._lr, self._mu = self._c(self.lr), self._c(self.momentum)
        self.velocity: dict[int, np.ndarray] = {}

    def _update(self, i, g):
        s = self.state
        if self.momentum:
            v = g if i not in self.velocity else s.add(s.mul(self._mu, self.velocity[i]), g)
            self.velocity[i] = v
        else:
            v = g
        return self._scaled(self._lr, v)


class Adam(_Optimizer):
    """Adam, as ``torch.optim.Adam(lr, betas, eps)``.

    Examples
    --------
    >>> import numpy as np
    >>> from softfloat.training import Adam, as_policy
    >>> opt = Adam(as_policy("fp32"), lr=0.001, rng=np.random.default_rng(0))
    >>> w = [np.array([1.0], np.float32)]
    >>> opt.apply(w, [np.array([0.5], np.float32)])
    (0, 1)
    >>> float(w[0][0])                                 # the first step moves by lr
    0.9990000128746033
    """

    def __init__(self, policy: Policy, *, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, rng: np.random.Generator):
        super().__init__(policy, rng)
        self.lr, self.eps = _rate("lr", lr), _rate("eps", eps)
        self.b1, self.b2 = (_rate("betas[0]", betas[0]), _rate("betas[1]", betas[1]))
        self._b1, self._b2 = self._c(self.b1), self._c(self.b2)
        self._1b1, self._1b2 = self._c(1 - self.b1), self._c(1 - self.b2)
        self._eps = self._c(self.eps)
        self.m: dict[int, np.ndarray] = {}
        self.v: dict[int, np.ndarray] = {}

    def _update(self, i, g):
        s, t = self.state, self.steps
        zero = np.zeros_like(g)
        m = s.add(s.mul(self._b1, self.m.get(i, zero)), s.mul(self._1b1, g))
        v = s.add(s.mul(self._b2, self.v.get(i, zero)), s.mul(self._1b2, s.mul(g, g)))
        self.m[i], self.v[i] = m, v
        step_size = self._c(self.lr / (1 - self.b1**t))
        root_bc2 = self._c(np.sqrt(1 - self.b2**t))
        denom = s.add(s.div(s.sqrt(v), root_bc2), self._eps)
        return self._scaled(step_size, s.div(m, denom))


def make_optimizer(name: str, policy: Policy, *, rng: np.random.Generator, lr=None):
    """"sgd" (momentum 0.9, lr 0.1) or "adam" (lr 1e-3) for ``policy``.

    >>> import numpy as np
    >>> from softfloat.training import as_policy
    >>> from softfloat.training.optim import make_optimizer
    >>> type(make_optimizer("adam", as_policy("O2"), rng=np.random.default_rng(0))).__name__
    'Adam'
    """
    if _validate.one_of("optimizer", name, OPTIMIZERS) == "sgd":
        return SGD(policy, lr=0.1 if lr is None else lr, momentum=0.9, rng=rng)
    return Adam(policy, lr=1e-3 if lr is None else lr, rng=rng)
