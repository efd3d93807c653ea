"""The strategy for numpy arrays of values or bit patterns of a format."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .._validate import boolean as _boolean
from .._validate import describe as _describe
from ..formats import as_format
from ._bounds import _Request, _values_keywords
from ._draws import _patterns
from ._plan import _plan


def arrays(fmt, shape, *, elements=None, as_bits=False, fill=None, unique=False):
    """numpy arrays of values of ``fmt``, built on ``hypothesis.extra.numpy.arrays``.

    Parameters
    ----------
    fmt : Format or str
    shape : int, tuple of int, or a strategy for them
    elements : SearchStrategy or mapping, optional
        A strategy for the elements, or a mapping of :func:`values` keywords (for example
        ``{"min_value": 0.0, "allow_nan": False}``).  Default: ``values(fmt)``.
    as_bits : bool, default False
        Return bit patterns of dtype ``fmt.storage_dtype`` instead of float64 values.  A
        mapping for ``elements`` then draws the patterns of those values (NaN payloads and
        signaling NaNs intact); a strategy must draw integer patterns, such as
        :func:`bits`.
    fill, unique
        Passed to ``hypothesis.extra.numpy.arrays``.

    Returns
    -------
    SearchStrategy[numpy.ndarray]
        float64 arrays of exact values, or ``fmt.storage_dtype`` bit arrays.

    Examples
    --------
    >>> from hypothesis import find
    >>> a = find(arrays("e4m3", 3, elements={"min_value": 1.0, "max_value": 2.0}),
    ...          lambda a: a.sum() > 4.5)
    >>> a.dtype, a.shape, float(a.sum()) > 4.5
    (dtype('float64'), (3,), True)
    """
    fmt = as_format(fmt)
    as_bits = _boolean("as_bits", as_bits)
    if elements is None:
        elements = {}
    if isinstance(elements, Mapping):
        plan = _plan(fmt, _Request(**_values_keywords(elements)))
        strategy = _patterns(plan) if as_bits else _patterns(plan).map(plan.value_of)
    elif isinstance(elements, st.SearchStrategy):
        strategy = elements
    else:
        raise TypeError(
            "elements must be a hypothesis strategy or a mapping of values() keywords such as "
            f"{{'min_value': 0.0}}; got {_describe(elements)}"
        )
    if not isinstance(shape, st.SearchStrategy):  # hypothesis would check it only when drawing
        dims = shape if isinstance(shape, tuple) else (shape,)
        if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in dims):
            raise TypeError(f"shape must be a count, a tuple of counts (ints >= 0) or a strategy for "
                            f"them; got {_describe(shape)}")
    if fill is not None and not isinstance(fill, st.SearchStrategy):
        raise TypeError(f"fill must be a hypothesis strategy or None; got {_describe(fill)}")
    dtype = fmt.storage_dtype if as_bits else np.dtype(np.float64)
    return hnp.arrays(dtype, shape, elements=strategy, fill=fill, unique=_boolean("unique", unique))
