"""The lab's data: scikit-learn's bundled handwritten digits, or a synthetic stand-in.

The digits (1,797 images of 8x8 pixels, 10 classes) ship inside scikit-learn and need no
network; install them with ``pip install "softfloat-emu[lab]"``.  Without scikit-learn,
:func:`load` warns once and returns a synthetic 10-class problem of the same shape
(Gaussian clusters in 64 dimensions), so the lab still runs.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["Dataset", "SyntheticDataWarning", "load"]

#: the split is fixed (independent of the training seed), so every run sees the same test set
_SPLIT_SEED = 20240103
_TEST_SHARE = 0.2


class SyntheticDataWarning(UserWarning):
    """scikit-learn is missing: the lab trains on synthetic data instead of the digits."""


@dataclass(frozen=True)
class Dataset:
    """Train and test arrays (float32 features in [0, 1], int64 labels) and their origin.

    Examples
    --------
    >>> from softfloat.training import data
    >>> d = data.load()
    >>> d.x_train.shape[1], d.classes, d.name
    (64, 10, 'digits')
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    classes: int
    name: str


def load(name: str = "digits") -> Dataset:
    """The digits split 80/20 (a fixed shuffle), features scaled to [0, 1].

    ``name="synthetic"`` asks for the stand-in explicitly; "digits" falls back to it with
    a :class:`SyntheticDataWarning` when scikit-learn is not installed.

    >>> from softfloat.training import data
    >>> data.load("synthetic").x_test.shape
    (359, 64)
    """
    if name not in ("digits", "synthetic"):
        raise ValueError(f"name must be 'digits' or 'synthetic'; got {name!r}")
    if name == "digits":
        try:
            from sklearn.datasets import load_digits
        except ImportError:
            warnings.warn("scikit-learn is not installed, so the lab trains on a synthetic 10-class data "
                          "set instead of the handwritten digits; pip install \"softfloat-emu[lab]\" for the "
                          "real data", SyntheticDataWarning, stacklevel=2)
        else:
            x, y = load_digits(return_X_y=True)
            return _split(x / 16.0, y, "digits")
    return _split(*_synthetic(), "synthetic")


def _synthetic(n: int = 1797, dim: int = 64, classes: int = 10):
    rng = np.random.default_rng(_SPLIT_SEED)
    centres = rng.uniform(0.0, 1.0, size=(classes, dim))
    y = rng.integers(0, classes, size=n)
    x = np.clip(centres[y] + rng.normal(0.0, 0.35, size=(n, dim)), 0.0, 1.0)
    return x, y


def _split(x, y, name) -> Dataset:
    order = np.random.default_rng(_SPLIT_SEED).permutation(len(y))
    n_test = int(round(len(y) * _TEST_SHARE))
    test, train = order[:n_test], order[n_test:]
    x = np.asarray(x, dtype=np.float32)
    y = np.asarray(y, dtype=np.int64)
    return Dataset(x[train], y[train], x[test], y[test], int(y.max()) + 1, name)
