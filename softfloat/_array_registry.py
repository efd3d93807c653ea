"""The table of numpy functions an :class:`~softfloat.Array` implements (NEP 18), and
what every implementation shares: how it registers, how it reads an operand's bits and
how it says no.

Every implementation takes the Array type's adapter ``A`` first (``softfloat.array``
sits above the mapping modules, which cannot import it): ``A.is_array``, ``A.wrap(bits,
fmt)``, ``A.common(*values)`` (the promoted format and each operand's bits, scalars and
ndarrays rounded into it: weak) and ``A.bits_in(value, fmt, operation)``.
"""

from __future__ import annotations

import numpy as np

from ._array_ufuncs import write_out

__all__ = ["FUNCTIONS", "deliver", "implements", "not_defined", "plain", "refusal", "unsupported"]

FUNCTIONS: dict = {}


def implements(*funcs):
    """Register the decorated function as the Array implementation of numpy's ``funcs``."""
    def register(impl):
        for f in funcs:
            FUNCTIONS[f] = impl
        return impl
    return register


def plain(kwargs, *allowed) -> bool:
    """Every keyword either allowed or at numpy's default (None, np._NoValue, where=True)."""
    return all(k in allowed or v is None or v is np._NoValue or (k == "where" and v is True)
               or (k in ("overwrite_input", "keepdims") and v is False) for k, v in kwargs.items())


def unsupported(name: str, why: str) -> TypeError:
    """The TypeError of a call that cannot be emulated honestly: the function and why."""
    return TypeError(f"numpy.{name} on a softfloat.Array: {why}; convert explicitly with "
                     f"arr.to_numpy() to leave emulation")


def not_defined(func, kwargs) -> TypeError:
    """The TypeError of a call the table has no definition for (an implementation said
    NotImplemented): the function and the keywords it was given away from numpy's defaults."""
    given = [f"{k}={v!r}" for k, v in kwargs.items() if not plain({k: v})]
    name = f"{func.__module__.replace('numpy.lib', 'numpy').split('._')[0]}.{func.__name__}"
    return TypeError(f"{name} on a softfloat.Array is not defined"
                     + (f" with {', '.join(given)}" if given else " for these arguments")
                     + "; convert explicitly with arr.to_numpy() to leave emulation")


def refusal(name: str, why: str):
    """An implementation that refuses with its reason (never a silent float64 fallback)."""
    def impl(A, *args, **kwargs):
        raise unsupported(name, why)
    impl.refused = why
    return impl


def deliver(A, result, out, name: str):
    """``result``, or written into ``out`` and ``out`` returned: an Array's own bits
    (rounded into its format where that differs, flags counted), or a float ndarray's
    values (numpy's same_kind cast, as ufuncs' out=: ``softfloat._array_ufuncs.write_out``)."""
    if out is None:
        return result
    target = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if (A.is_array(target) or isinstance(target, np.ndarray)) and np.shape(result) != target.shape:
        raise ValueError(f"numpy.{name}: out= has shape {target.shape}, the result has shape {np.shape(result)}")
    write_out(A, f"numpy.{name}: out=", target, (result, True))
    return target
