"""numpy ufuncs on :class:`~softfloat.Array`: each one mapped to bit-level operations.

The table (kernels in ``softfloat._array_elementwise``):

* correctly rounded, with the context's attributes: add, subtract, multiply, divide /
  true_divide, sqrt, square (x * x), reciprocal (1 / x), floor / ceil / trunc / rint
  (round_to_integral downward / upward / toward zero / to nearest even); power and
  float_power with a small integer exponent (repeated multiplication left to right, then
  one division for a negative exponent: as hardware kernels do it, not a correctly
  rounded x**n); remainder / mod (Python's and numpy's: the sign of the divisor) is the
  exact fmod, then at most one correctly rounded addition of the divisor where the signs
  differ; floor_divide is floor(a / b) of the exact quotient (numpy's npy_divmod
  definition, computed exactly), rounded once; divmod is (floor_divide, remainder);
  ldexp(x, n) is x * 2**n rounded once (n integers, never rounded);
* exact (no rounding): negative, positive, conjugate, absolute / fabs, copysign, sign,
  heaviside (h0 rounded into the format as an operand), maximum / minimum (IEEE
  754-2019 maximum/minimum: a NaN wins, -0 < +0), fmax / fmin (maximumNumber /
  minimumNumber: a NaN loses), nextafter (with C99's overflow or underflow, and inexact,
  where it steps to an infinity, a subnormal or a zero), spacing (nextafter(x, +-inf) - x:
  both steps' flags), fmod, modf, frexp (the mantissa
  exact where the format holds [0.5, 1) at full precision; the exponent a plain int32
  array); comparisons, logical_and / or / xor / not (a NaN is true), isnan / isinf /
  isfinite / signbit: plain bool ndarrays;
* through float64 libm -- NOT correctly rounded: exp, exp2, expm1, log, log2, log10,
  log1p, the trigonometric and hyperbolic functions and their inverses, cbrt, hypot,
  arctan2, logaddexp, logaddexp2, deg2rad / radians, rad2deg / degrees (and scipy.special's
  erf, erfc, expit, gammaln, ... when scipy calls them), and power with other exponents,
  are computed in float64 from the exact inputs and rounded once into the format.  float64
  libm is faithful, not correctly rounded, so such results can differ from the correctly
  rounded one in the last place; they raise inexact on every finite result;
* contractions: matmul, and vecdot / matvec / vecmat as matmul with a vector as a row or
  column (:func:`softfloat.matmul`: the context's accumulator, rounded once);
* the methods: ``reduce``, ``accumulate`` and ``at`` of add, multiply and the exact
  picks (``softfloat._array_ufunc_methods``); ``ufunc.outer`` broadcasts the call;
* refused with a TypeError giving the reason: the integer ufuncs (bitwise_*, invert,
  shifts, gcd, lcm, bitwise_count) and isnat (``REFUSED_UFUNCS``).

Operands: Array with Array promotes by :func:`softfloat.promote`; Python scalars, numpy
scalars and ndarrays (float64 ones included) are weak -- rounded once into the Array's
format, so an emulated program stays in its format (numpy's NEP 50 instead keeps a
float64 ndarray strong and would compute in float64).  A complex operand is a TypeError
(softfloat has no complex formats); ``x == None`` (or a str: ``lr == "auto"``) is all
False and ``x != None`` all True, numpy's comparison with an object.

``out=``: an Array whose bits are written (in-place operators ``+=``, ``//=``, ``@=``
... are ``out=self``: the object and any view of its bits see the new values).  The
result must broadcast to out's shape (else ValueError); an out of another format gets
the result rounded into it, a second rounding with flags counted (numpy's same_kind
cast); a plain float ndarray out (``p += x`` with ``p`` an ndarray) gets the result's
exact values cast by numpy (same_kind: an integer or bool ndarray is a TypeError, as in
numpy), computed in the Array's format all the same; boolean results take a plain ndarray
out; ``where=`` with ``out=`` writes the selected elements.

Anything else returns NotImplemented, and numpy raises its TypeError.

This module works on bit patterns; what it needs of the Array type (making one, reading
operands into a common format) comes in as an adapter from ``softfloat.array``, which
sits above it.
"""

from __future__ import annotations

import operator

import numpy as np

from ._array_elementwise import MAX_REPEATED_POWER, UFUNCS, ldexp, libm, repeated_power
from .accumulate import matmul as accumulate_matmul
from .accumulate import sum as accumulate_sum
from .accumulate.reduce import default_accumulator
from . import _array_ufunc_methods as ufunc_methods
from . import _fastpaths
from ._context import get_context
from ._fpenv import require_subnormals
from ._validate import NO_COMPLEX, describe
from .codec import decode
from .flags import AccumulationFlags
from .formats import Format
from .rounding import Rounding

__all__ = ["REFUSED_UFUNCS", "UFUNCS", "accumulator_of", "dispatch", "matmul", "plain_call", "plain_kernel",
           "sum_of", "write_out"]

_INTEGER_ONLY = ("an integer operation: floating-point values have no integer bits to combine "
                 "(arr.bits holds the bit patterns)")
#: ufuncs an Array refuses, with the reason
REFUSED_UFUNCS = {u: _INTEGER_ONLY for u in (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert,
                                              np.left_shift, np.right_shift, np.gcd, np.lcm, np.bitwise_count)}
REFUSED_UFUNCS[np.isnat] = "isnat is for datetimes and timedeltas"


#: scipy.special's functions of reals taken like the libm ones (scipy is never imported:
#: the ufunc arrives with the call)
_SCIPY_SPECIAL = frozenset({"erf", "erfc", "erfinv", "erfcinv", "expit", "logit", "gamma", "gammaln",
                            "digamma", "log_ndtr", "ndtr", "ndtri", "i0", "sinc"})


def _is_scipy_special(ufunc) -> bool:
    """A one-argument ufunc by one of those names (numpy has none of them; scipy's carry no
    module of their own to check)."""
    return ufunc.__name__ in _SCIPY_SPECIAL and ufunc.nin == 1 and ufunc.nout == 1


def _integer_exponent(y):
    """A Python/numpy integer (or integral float) scalar exponent, else None."""
    if hasattr(y, "format") or np.ndim(y) != 0 or isinstance(y, (bool, np.bool_)):
        return None
    try:
        n = operator.index(y)
    except TypeError:
        if isinstance(y, (float, np.floating)) and float(y).is_integer():
            n = int(y)
        else:
            return None
    return n if abs(n) <= MAX_REPEATED_POWER else None


#: ufunc keywords an Array call accepts at numpy's default value only
_DEFAULT_KEYWORDS = {"casting": "same_kind", "order": "K", "dtype": None, "subok": True, "signature": None}
_OPERANDS = (np.ndarray, int, float, np.number, np.bool_, list, tuple, np.generic)  # (ml_dtypes' scalars
# are np.generic, no np.number)


def dispatch(A, ufunc, method, inputs, kwargs):
    """NEP 13's __array_ufunc__ for Arrays (``A``: the Array type's adapter).  What it
    does not define is NotImplemented where another operand's type may define it, else
    a TypeError that names the call."""
    result = _dispatch(A, ufunc, method, inputs, dict(kwargs))
    if result is NotImplemented:
        complex_operand = next((a for a in inputs if isinstance(a, complex)), None)
        if complex_operand is not None:  # (a complex ndarray or numpy scalar: refused as an operand)
            raise TypeError(f"numpy.{ufunc.__name__} on a softfloat.Array: got {describe(complex_operand)}; "
                            f"{NO_COMPLEX}; compute the real and imaginary parts as two real Arrays")
        if all(A.is_array(a) or isinstance(a, _OPERANDS) for a in inputs):
            raise ufunc_methods.not_defined(ufunc, method, f"{', '.join(k + '=' for k in kwargs)} not taken "
                                            f"here" if kwargs else "")
    return result


def _object_call(A, ufunc, inputs, kwargs, out):
    """A ufunc of object loops only (``np.frompyfunc(f, ...)``): f on each element as a
    0-d Array (``np.asarray(arr, dtype=object)``), so its arithmetic is emulated; the
    result is numpy's object array of what f returns.  An Array as out= is not taken."""
    outs = out if isinstance(out, tuple) else (out,)
    if any(A.is_array(o) for o in outs):
        return NotImplemented
    operands = [np.asarray(a, dtype=object) if A.is_array(a) else a for a in inputs]
    return ufunc(*operands, **kwargs, **({} if out is None else {"out": out}))


def _dispatch(A, ufunc, method, inputs, kwargs):
    require_subnormals()  # the kernels' numpy arithmetic (softfloat._fpenv)
    if not kwargs and method == "__call__":
        impl = _PLAIN.get(ufunc)
        if impl is not None:  # the usual call, without keywords: straight to the kernel
            return plain_call(A, ufunc, impl, inputs)
    out = kwargs.pop("out", None)
    if method in _METHODS and A.is_array(inputs[0]):
        return _store(A, ufunc, _METHODS[method](A, ufunc, inputs[0], kwargs), (out, True))
    if method == "at":
        return ufunc_methods.at(A, ufunc, *inputs)
    if method == "reduceat" and A.is_array(inputs[0]):
        return _store(A, ufunc, ufunc_methods.reduceat(A, ufunc, *inputs, **kwargs), (out, True))
    if method == "outer" and len(inputs) == 2 and not kwargs:
        a, b = inputs
        return getattr(ufunc, "__call__")(_expanded(A, a, np.ndim(b)), b, **({} if out is None else {"out": out}))
    if method == "__call__" and all(set(t) <= set("O->") for t in ufunc.types):
        return _object_call(A, ufunc, inputs, kwargs, out)
    where = kwargs.pop("where", True)
    if method == "__call__" and ufunc in _EQUALITY and any(_no_number(A, a) for a in inputs):
        _check_keywords(ufunc, kwargs)
        return _store(A, ufunc, _equal_as_objects(A, ufunc, inputs), (out, where))
    if method != "__call__" or not all(A.is_array(a) or isinstance(a, _OPERANDS) for a in inputs):
        return NotImplemented
    core = _core_axes(ufunc, kwargs) if ufunc in _CORE_DIMS else None
    _check_keywords(ufunc, kwargs)
    if where is not True and out is None:
        raise TypeError(f"numpy.{ufunc.__name__} on a softfloat.Array: where= needs out= (the elements "
                        f"not selected are out's)")
    if ufunc in REFUSED_UFUNCS:
        raise TypeError(f"numpy.{ufunc.__name__} on a softfloat.Array: {REFUSED_UFUNCS[ufunc]}")
    special = matmul if ufunc is np.matmul else _SPECIAL.get(ufunc)
    if special is not None:
        result = special(A, *inputs) if core is None else core(A, special, inputs)
        return NotImplemented if result is NotImplemented else _store(A, ufunc, result, (out, where))
    impl = UFUNCS.get(ufunc)
    if impl is None and _is_scipy_special(ufunc):
        impl = libm(ufunc)
    if impl is None:
        return NotImplemented
    ctx = get_context()
    fmt, bits = A.common(*inputs)
    if getattr(impl, "predicate", False):  # a plain boolean array
        result = impl(fmt, ctx, *bits)
        if out is not None:
            return _store(A, ufunc, result, (out, where))
        return result[()] if result.ndim == 0 else result
    result, flags = impl(fmt, ctx, *bits)
    ctx.record(ufunc.__name__, flags)
    if isinstance(result, tuple):  # divmod, modf, frexp: Array outputs, frexp's exponents plain
        wrapped = tuple(r if r.dtype.kind == "i" else A.wrap(r, fmt) for r in result)
        return _store(A, ufunc, wrapped, (out, where))
    return _store(A, ufunc, A.wrap(result, fmt), (out, where))


#: the comparisons numpy defines for None, a str or bytes (Python's == and !=, element by element)
_EQUALITY = (np.equal, np.not_equal)
_NO_NUMBERS = (str, bytes)


def _no_number(A, a) -> bool:
    """An operand numpy compares as a Python object (``x == None``, ``x == "auto"``,
    ``x == object()``, a Fraction): not an Array, not a numeric operand, and neither an
    array-like (``__array__``, ``__array_interface__``) nor a type of its own protocol
    (``__array_ufunc__``: numpy asks it in turn)."""
    if a is None or isinstance(a, _NO_NUMBERS):
        return True
    if A.is_array(a) or isinstance(a, _OPERANDS + (complex,)):
        return False
    return not any(hasattr(a, n) for n in ("__array_ufunc__", "__array__", "__array_interface__",
                                           "__array_struct__"))


def _equal_as_objects(A, ufunc, inputs):
    """``x == None``, ``x == "auto"``: numpy's own comparison of the exact values with the
    object (its object loop, Python's ``==`` element by element): all False (``!=``: all
    True), a plain bool ndarray, as numpy gives for a float array."""
    operands = [np.asarray(decode(a.bits, a.format)).astype(object) if A.is_array(a) else a for a in inputs]
    result = ufunc(*operands)  # (object loops give object arrays; a 0-d operand, one object)
    return result.astype(bool) if isinstance(result, np.ndarray) else np.bool_(result)


def plain_call(A, ufunc, impl, inputs, checked=False):
    """``ufunc(*inputs)`` without keywords, for a kernel of one Array result (what the
    general path below does for it, in the same order: operands, kernel, flags, wrap).
    ``checked``: the caller has seen that every input is an Array or a Python float or
    int."""
    if not checked and not (len(inputs) == 1 and A.is_array(inputs[0])) \
            and not all(A.is_array(a) or isinstance(a, _OPERANDS) for a in inputs):
        return NotImplemented
    ctx = get_context()
    fmt, bits = A.common(*inputs, ctx=ctx)
    result, flags = impl(fmt, ctx, *bits)
    ctx.record(ufunc.__name__, flags)
    return A.wrap(result, fmt)


def plain_kernel(ufunc):
    """The kernel ``plain_call`` takes for ``ufunc`` (KeyError for one it does not)."""
    return _PLAIN[ufunc]


def _check_keywords(ufunc, kwargs):
    for key, value in kwargs.items():
        if key not in _DEFAULT_KEYWORDS or value != _DEFAULT_KEYWORDS[key]:
            raise TypeError(f"numpy.{ufunc.__name__} on a softfloat.Array: {key}={value!r} is not supported "
                            f"(results are in the operands' promoted format; use arr.astype(fmt) first)")


def _core_axes(ufunc, kwargs):
    """The gufuncs' ``axes=``, ``axis=`` and ``keepdims=`` (popped from ``kwargs``) as a
    caller ``core(A, impl, inputs)`` that moves each input's core axes to the end (in the
    order given), runs ``impl`` and moves the output's core axes where ``axes`` says
    (numpy's rules); None when none of them is given."""
    axes, axis, keepdims = kwargs.pop("axes", None), kwargs.pop("axis", None), kwargs.pop("keepdims", False)
    if axes is None and axis is None and not keepdims:
        return None
    ins, out_dims = _CORE_DIMS[ufunc]
    name = f"numpy.{ufunc.__name__}"
    if axis is not None:  # (numpy itself refuses axis= with axes=)
        if set(ins) != {1} or out_dims:
            raise TypeError(f"{name}: axis= can only be used with a single shared core dimension")
        axes = [(axis,)] * len(ins)
    if keepdims and out_dims:
        raise TypeError(f"{name}: keepdims= can only be used where the output has no core dimensions")
    axes = [(-1,) * n if n == 1 else tuple(range(-n, 0)) for n in ins] if axes is None else list(axes)
    if len(axes) == len(ins) and not out_dims:
        axes.append(())
    axes = [tuple(a) if isinstance(a, (tuple, list)) else (a,) for a in axes]
    if len(axes) != len(ins) + 1:
        raise ValueError(f"{name}: axes= must hold one entry per operand and one for the output; got {len(axes)}")

    def core(A, impl, inputs):
        moved = [np.moveaxis(x if A.is_array(x) else np.asarray(x), a, tuple(range(-len(a), 0)))
                 for x, a in zip(inputs, axes)]
        result = impl(A, *moved)
        if keepdims:
            return np.expand_dims(result, axes[0][0] % (result.ndim + 1) if axes[0][0] < 0 else axes[0][0])
        out_axes = axes[-1]
        if not out_axes or len(out_axes) > result.ndim:
            return result
        return np.moveaxis(result, tuple(range(-len(out_axes), 0)), out_axes)
    return core


def _expanded(A, a, extra: int):
    """``a`` with ``extra`` trailing axes of length 1 (``ufunc.outer``)."""
    if A.is_array(a):
        return a.reshape(a.shape + (1,) * extra)
    a = np.asarray(a)
    return a.reshape(a.shape + (1,) * extra)


#: reduce and accumulate (``softfloat._array_ufunc_methods``)
_METHODS = {"reduce": ufunc_methods.reduce, "accumulate": ufunc_methods.accumulate}

_SPECIAL = {}  # filled below: ufuncs whose second operand is a count, not a value


def _power(A, x, y):
    """x ** n for a small integer scalar n (repeated multiplication), else libm."""
    n = _integer_exponent(y)
    if n is None or not A.is_array(x):
        fmt, bits = A.common(x, y)
        ctx = get_context()
        result, flags = libm(np.power)(fmt, ctx, *bits)
        ctx.record("power", flags)
        return A.wrap(result, fmt)
    ctx = get_context()
    result, flags = repeated_power(x.format, ctx, x.bits, n)
    ctx.record("power", flags)
    return A.wrap(result, x.format)


def _store(A, ufunc, result, target):
    """``result`` (one output or a tuple), or written into ``out`` and ``out`` returned.

    ``out`` must be an Array where the result is an Array (a plain ndarray where it is a
    boolean or integer array), of a shape the result broadcasts to.  An out of another
    format gets the result rounded into it (a second rounding, flags counted: numpy's
    same_kind cast); ``where`` selects the elements written.
    """
    out, where = target
    single = not isinstance(result, tuple)
    results = (result,) if single else result
    if out is None:
        return result
    outs = out if isinstance(out, tuple) else (out,)
    name = f"numpy.{ufunc.__name__}"
    if len(outs) != len(results):
        raise ValueError(f"{name} has {len(results)} output(s); out= gave {len(outs)}")
    for k, (o, r) in enumerate(zip(outs, results)):
        if o is not None:
            write_out(A, f"{name}: out{'' if single else f'[{k}]'}=", o, (r, where))
    stored = tuple(r if o is None else o for o, r in zip(outs, results))
    return stored[0] if single else stored


def write_out(A, what: str, out, value):
    """Write ``value`` (a result and numpy's ``where``) into ``out``: an Array's bits
    (rounded into out's format where it differs, flags counted), or for a plain result a
    plain ndarray (numpy's same_kind cast).  An Array result into a plain float ndarray is
    numpy's ``p += x`` (``np.add(p, x, out=p)``): the result, computed in the format, is
    stored as its exact values, cast by numpy as it casts into ``out`` (same_kind: a float
    or complex ndarray; an integer or bool one is refused, as numpy refuses it)."""
    result, where = value
    if A.is_array(result) and isinstance(out, np.ndarray):
        fmt = result.format
        if not np.can_cast(fmt.dtype, out.dtype, "same_kind"):
            raise TypeError(f"{what} is an ndarray of {out.dtype}, which cannot take the {fmt.name} results "
                            f"(numpy's casting='same_kind' from {fmt.dtype} refuses it); give an Array or a "
                            f"float ndarray")
        result = np.asarray(decode(result.bits, fmt, fmt.value_dtype(out.dtype)))
    elif A.is_array(result) != A.is_array(out):
        want = "a softfloat.Array (its bits are written) or a float ndarray" if A.is_array(result) \
            else "a numpy ndarray"
        raise TypeError(f"{what} must be {want}; got {type(out).__name__}"
                        + ("; call without out= and convert with to_numpy()" if A.is_array(result) else ""))
    shape = np.shape(result.bits if A.is_array(result) else result)
    try:
        fits = np.broadcast_shapes(shape, out.shape) == out.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{what} has shape {out.shape}; the result's shape {shape} does not broadcast to it")
    if not A.is_array(result):
        np.copyto(out, result, where=where, casting="same_kind")
        return
    bits = result.bits if result.format == out.format else A.bits_in(result, out.format, "out")
    np.copyto(out.bits, bits, where=where)


def accumulator_of(ctx, fmt):
    """The context's accumulator, or the default one for ``fmt`` (fp32 for narrower)."""
    if ctx.accumulator is not None:
        return ctx.accumulator
    found = _DEFAULT_ACCUMULATORS.get(id(fmt))
    if found is None or found[0] is not fmt:  # (a Format's hash reads all its fields: keyed by id)
        found = _DEFAULT_ACCUMULATORS[id(fmt)] = (fmt, default_accumulator(fmt))
    return found[1]


#: id(fmt) -> (fmt, default_accumulator(fmt)) of each format met (a function of it; the
#: entry holds fmt, so the id stays its own)
_DEFAULT_ACCUMULATORS: dict = {}


def matmul(A, a, b):
    """:func:`softfloat.matmul` with the context's accumulator and order, rounded into the
    operands' (promoted) format."""
    fmt, (x, y) = A.common(a, b)
    ctx = get_context()
    acc = accumulator_of(ctx, fmt)
    bits, flags = ctx.split(accumulate_matmul(x, y, fmt, accumulator=acc, out_format=fmt, order=ctx.order,
                                              return_flags=ctx.track_flags, **ctx.options()))
    ctx.record("matmul", flags)
    return A.wrap(bits, fmt)


def sum_of(A, x, axis=None, keepdims=False, out_format=None):
    """:func:`softfloat.sum` with the context's accumulator and order, rounded into x's
    format (or ``out_format``)."""
    ctx = get_context()
    acc = accumulator_of(ctx, x.format)
    out = x.format if out_format is None else out_format
    if out is x.format and x.size == 1 and not keepdims and (axis is None or (type(axis) is int and axis in (0, -1) and x.ndim == 1)):
        one = _one_term(A, ctx, acc, x)
        if one is not None:
            return one
    bits, flags = ctx.split(accumulate_sum(x.bits, x.format, axis=axis, keepdims=keepdims, accumulator=acc,
                                           out_format=out, order=ctx.order, return_flags=ctx.track_flags,
                                           **ctx.options()))
    ctx.record("sum", flags)
    return A.wrap(bits, out)


#: (id(fmt), id(acc)) -> (fmt, acc, every value of fmt in a list) where acc holds fmt
_ONE_TERM: dict = {}


def _one_term(A, ctx, acc, x):
    """:func:`sum_of` of a one-element Array into one output, or None (the general path).

    Why it is :func:`softfloat.sum`'s result, bits and flags: with one term there is no
    addition; the sum is the term, a value of the accumulator (a Format that holds x's
    format), rounded into x's format, where it is a value already: exact in every
    deterministic mode, no flag raised, no swamped addition.  Declined: switched off
    (softfloat._fastpaths.ENABLED), a hardware preset or accumulator name, stochastic
    rounding (the general path draws its key from the context's generator, which must
    advance as there), flush-to-zero (a subnormal result is flushed), and a non-finite
    term (NaN results are the canonical quiet NaN, a signalling NaN is invalid).
    tests/test_array_small.py compares it with the general path."""
    fmt = x.format
    found = _ONE_TERM.get((id(fmt), id(acc)))
    if found is None or found[0] is not fmt or found[1] is not acc:
        if not (isinstance(acc, Format) and (acc == fmt or acc.holds(fmt))):
            return None
        # (wider than 16 bits: decoded one by one, NaN for an infinity or NaN, declined below)
        values = _fastpaths.scalar_values(fmt, lambda patterns: decode(patterns, fmt), finite=True)
        if values is None:  # switched off
            return None
        if len(_ONE_TERM) > 64:
            _ONE_TERM.clear()
        found = _ONE_TERM[(id(fmt), id(acc))] = (fmt, acc, values)
    attrs = ctx.attributes
    if not _fastpaths.ENABLED or attrs.rounding is Rounding.STOCHASTIC or not attrs.subnormals:
        return None
    pattern = int(x.bits.reshape(-1)[0])
    value = found[2][pattern]
    if value - value != 0.0:  # infinity or NaN
        return None
    if ctx.track_flags:
        clear = np.False_
        ctx.record("sum", AccumulationFlags(clear, clear, clear, clear, clear, swamped=np.int64(0)))
    return A.wrap(fmt.storage_dtype.type(pattern), fmt)


def _with_axis(A, x, position: int):
    """``x`` (an Array or array_like) with a new axis of length 1 at ``position``."""
    x = x if A.is_array(x) else np.asarray(x)
    shape = list(x.shape)
    shape.insert(position % (len(shape) + 1), 1)
    return x.reshape(tuple(shape))


def _vecdot(A, x, y):
    """Dot products over the last axis: matmul of (..., 1, n) by (..., n, 1) (the
    context's accumulator, rounded once into the format)."""
    return matmul(A, _with_axis(A, x, -2), _with_axis(A, y, -1)).reshape(np.broadcast_shapes(
        np.shape(x.bits if A.is_array(x) else x)[:-1], np.shape(y.bits if A.is_array(y) else y)[:-1]))


def _matvec(A, m, v):
    """(..., m, n) @ (..., n): matmul with v as a column."""
    r = matmul(A, m, _with_axis(A, v, -1))
    return r.reshape(r.shape[:-1])


def _vecmat(A, v, m):
    """(..., n) @ (..., n, m): matmul with v as a row."""
    r = matmul(A, _with_axis(A, v, -2), m)
    return r.reshape(r.shape[:-2] + r.shape[-1:])


_SPECIAL.update({np.power: _power, np.float_power: _power, np.ldexp: ldexp})
#: the kernels of one Array result that plain_call takes (not the predicates, the tuple
#: results of divmod/modf/frexp, the refused ufuncs or the special ones)
_PLAIN = {u: impl for u, impl in UFUNCS.items()
          if not getattr(impl, "predicate", False) and u not in (np.divmod, np.modf, np.frexp)
          and u not in REFUSED_UFUNCS and u not in _SPECIAL and u is not np.matmul}
#: the gufuncs' core dimensions: (each input's count, the output's count)
_CORE_DIMS = {np.matmul: ((2, 2), 2)}
if hasattr(np, "vecdot") and isinstance(np.vecdot, np.ufunc):  # numpy >= 2.0 (matvec, vecmat: 2.2)
    _SPECIAL[np.vecdot] = _vecdot
    _CORE_DIMS[np.vecdot] = ((1, 1), 0)
if hasattr(np, "matvec"):
    _SPECIAL.update({np.matvec: _matvec, np.vecmat: _vecmat})
    _CORE_DIMS.update({np.matvec: ((2, 1), 1), np.vecmat: ((1, 2), 1)})
