"""numpy functions that read an :class:`~softfloat.Array`'s values and compute nothing in
its format: histograms and text.  Each is numpy's own function on the exact values.

A histogram counts and compares.  ``np.histogram(x)`` is numpy's histogram of
``x.to_numpy()`` -- the exact values in the narrowest numpy float that holds them
(float16 for fp16 and FP8, float32 for bf16) -- and returns what numpy returns for them:
integer counts and numpy's bin edges (plain ndarrays of that dtype, as numpy computes
them; ``density=True`` divides in float64, as numpy does).  Weights given as an Array are
summed per bin in the weights' format, as ``np.bincount(bins, weights=w)`` sums them (the
context's accumulator, in the order the values come, rounded once), and returned as an
Array; a density of such sums would be a float64 computation and is refused.
``histogram2d`` and ``histogramdd`` take Array coordinates (their values) and plain
weights.

Text: ``np.array2string``, ``np.array_str`` and ``np.savetxt`` format the exact values
(as float64, every value of every format being one) with numpy's options;
``np.array_repr(x)`` is ``repr(x)``, whose values :func:`text` writes: each exact value
as Python's repr while numpy's float print options are at their defaults (numpy's
default would write 0.0999755859375 as 0.09997559), numpy's own writing once one is set
(``np.printoptions(precision=3)``, ``suppress``, ``floatmode``, ``sign``, ``formatter``,
...); more than 20 elements are summarised unless numpy's ``threshold`` is set.
"""

from __future__ import annotations

import sys

import numpy as np

from ._array_registry import implements, unsupported

__all__ = ["text"]

#: numpy's print options that decide how one float is written, at numpy's defaults
#: (``legacy``: False, or sys.maxsize in older numpy)
_FLOAT_DEFAULTS = {"precision": (8,), "floatmode": ("maxprec",), "suppress": (False,), "sign": ("-",),
                   "formatter": (None,), "nanstr": ("nan",), "infstr": ("inf",), "legacy": (False, sys.maxsize)}
#: numpy's default threshold, and the elements an Array shows in full while it holds
_NUMPY_THRESHOLD, _THRESHOLD = 1000, 20


def text(values: np.ndarray) -> str:
    """The values of an Array's repr (its exact values as a float64 ndarray) as text with
    numpy's print options: each value as Python's repr (exact, shortest) while numpy's
    float options are its defaults, numpy's formatting once one is set; summarised above
    20 elements unless numpy's ``threshold`` is set (``edgeitems`` and ``linewidth`` are
    numpy's)."""
    options = np.get_printoptions()
    threshold = _THRESHOLD if options["threshold"] == _NUMPY_THRESHOLD else options["threshold"]
    if any(options.get(name, defaults[0]) not in defaults for name, defaults in _FLOAT_DEFAULTS.items()):
        return np.array2string(values, separator=", ", threshold=threshold)
    if values.ndim == 0:
        return repr(float(values))
    return np.array2string(values, separator=", ", threshold=threshold,
                           formatter={"float_kind": lambda v: repr(float(v))})


def _values(A, x):
    """An Array's exact values in the narrowest numpy float; anything else as it is."""
    return x.to_numpy() if A.is_array(x) else x


def _range(A, bounds):
    """``range=`` with its bounds' exact values: ``(x.min(), x.max())`` holds 0-d Arrays (one
    pair, or one per dimension for histogram2d/dd)."""
    if isinstance(bounds, (tuple, list)):
        return type(bounds)(_range(A, b) for b in bounds)
    return _values(A, bounds)


@implements(np.histogram)
def histogram(A, a, bins=10, range=None, density=None, weights=None):
    """numpy's histogram of ``a``'s exact values (see the module)."""
    values, range = _values(A, a), _range(A, range)
    if not A.is_array(weights):
        return np.histogram(values, bins=_values(A, bins), range=range, density=density, weights=weights)
    if density:
        raise unsupported("histogram", "density=True with Array weights divides their sums in float64; "
                          "divide the weighted counts with Array operations instead")
    edges = np.histogram_bin_edges(values, bins=_values(A, bins), range=range)
    flat = np.ravel(values)
    if np.shape(weights) != np.shape(values):
        raise ValueError(f"numpy.histogram: weights of shape {np.shape(weights)} and a of shape "
                         f"{np.shape(values)} differ")
    index = np.searchsorted(edges, flat, side="right") - 1
    index[flat == edges[-1]] = len(edges) - 2  # the last bin holds its right edge
    inside = (index >= 0) & (index < len(edges) - 1)
    sums = np.bincount(index[inside], weights=weights.reshape(-1)[inside], minlength=len(edges) - 1)
    return sums, edges


@implements(np.histogram_bin_edges)
def histogram_bin_edges(A, a, bins=10, range=None, weights=None):
    return np.histogram_bin_edges(_values(A, a), bins=_values(A, bins), range=_range(A, range),
                                  weights=_values(A, weights))


@implements(np.histogram2d)
def histogram2d(A, x, y, bins=10, range=None, density=None, weights=None):
    if A.is_array(weights):
        raise unsupported("histogram2d", "Array weights: np.histogram takes them (summed in their format)")
    return np.histogram2d(_values(A, x), _values(A, y), bins=_values(A, bins), range=_range(A, range), density=density,
                          weights=weights)


@implements(np.histogramdd)
def histogramdd(A, sample, bins=10, range=None, density=None, weights=None):
    if A.is_array(weights):
        raise unsupported("histogramdd", "Array weights: np.histogram takes them (summed in their format)")
    sample = [_values(A, s) for s in sample] if isinstance(sample, (list, tuple)) else _values(A, sample)
    return np.histogramdd(sample, bins=_values(A, bins), range=_range(A, range), density=density, weights=weights)


@implements(np.array2string)
def array2string(A, a, *args, **kwargs):
    return np.array2string(a.to_numpy(np.float64), *args, **kwargs)


@implements(np.array_str)
def array_str(A, a, *args, **kwargs):
    return np.array_str(a.to_numpy(np.float64), *args, **kwargs)


@implements(np.array_repr)
def array_repr(A, arr, *args, **kwargs):
    return repr(arr)


@implements(np.savetxt)
def savetxt(A, fname, X, *args, **kwargs):
    return np.savetxt(fname, X.to_numpy(np.float64) if A.is_array(X) else X, *args, **kwargs)
