"""numpy's warnings for empty and all-NaN slices on Arrays: the statistics warn as
numpy's own functions do on the same float16 data (same category and message; numpy's
floating-point warnings, "invalid value encountered in ...", are the context's flags
here, so they are left out), from the caller's line; quantile and percentile of an empty
slice raise IndexError as numpy's do."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import softfloat as sf

NAN = np.nan
DATA = {
    "empty": np.zeros(0),
    "rows of nothing": np.zeros((2, 0)),
    "one value": np.array([1.5]),
    "a NaN": np.array([NAN]),
    "NaN column": np.array([[NAN, 1.0], [NAN, 2.0]]),
    "numbers": np.array([[1.0, 2.0], [3.0, 4.0]]),
}
CALLS = {
    "mean": lambda x, ax: np.mean(x, axis=ax), "var": lambda x, ax: np.var(x, axis=ax),
    "var ddof=1": lambda x, ax: np.var(x, axis=ax, ddof=1), "std": lambda x, ax: np.std(x, axis=ax),
    "median": lambda x, ax: np.median(x, axis=ax), "nanmean": lambda x, ax: np.nanmean(x, axis=ax),
    "nanvar": lambda x, ax: np.nanvar(x, axis=ax), "nanstd": lambda x, ax: np.nanstd(x, axis=ax),
    "nanmax": lambda x, ax: np.nanmax(x, axis=ax), "nanmin": lambda x, ax: np.nanmin(x, axis=ax),
    "nanmedian": lambda x, ax: np.nanmedian(x, axis=ax),
    "nanquantile": lambda x, ax: np.nanquantile(x, 0.5, axis=ax),
    "nanpercentile": lambda x, ax: np.nanpercentile(x, [10, 90], axis=ax),
    "x.mean()": lambda x, ax: x.mean(axis=ax), "x.std()": lambda x, ax: x.std(axis=ax),
}


def _warnings(call):
    """(category, message) of each warning but numpy's floating-point ones; or the
    exception's type."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except (ValueError, IndexError) as err:
            return type(err)
    return [(w.category, str(w.message).rstrip("."), w.filename) for w in caught
            if "encountered in" not in str(w.message)]


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("data", sorted(DATA))
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_statistics_warn_as_numpy_does(name, data, axis):
    values, fn = DATA[data], CALLS[name]
    want = _warnings(lambda: fn(values.astype(np.float16), axis))
    got = _warnings(lambda: fn(sf.asarray(values, "fp16"), axis))
    if isinstance(want, type):
        assert got is want
        return
    assert [w[:2] for w in got] == [w[:2] for w in want]
    assert all(w[2] == __file__ for w in got)  # the caller's line, as numpy's own warning


@pytest.mark.parametrize("fn", [lambda x: np.quantile(x, 0.5), lambda x: np.percentile(x, 50, axis=1),
                                lambda x: np.quantile(x, [0.2, 0.8], axis=-1)])
def test_quantiles_of_empty_slices_raise_index_error_as_numpy(fn):
    x = np.zeros((3, 0))
    with pytest.raises(IndexError):
        fn(x.astype(np.float16))
    with pytest.raises(IndexError, match="no elements to take a quantile of"):
        fn(sf.asarray(x, "fp16"))
    assert np.quantile(sf.asarray(x, "fp16"), 0.5, axis=0).shape == np.quantile(x, 0.5, axis=0).shape  # no slices
