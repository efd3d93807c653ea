"""The arithmetic context of emulated-precision arrays: defaults, sticky flags and traps
(``softfloat.context``, ``softfloat.get_context``; the module is private so that its name
never shadows the function).

Like Python's ``decimal``: a :class:`Context` holds the rounding attributes every
:class:`softfloat.Array` operation uses, ORs each operation's IEEE flags into its sticky
counts, and raises for the flags it traps.  The current context lives in a
``contextvars.ContextVar``, so threads and asyncio tasks each see their own; there is no
global mutable state.  Kernels never read it: only the array layer does.

>>> import softfloat as sf
>>> with sf.context(rounding="toward_zero", traps={"overflow"}) as ctx:
...     ctx.rounding
<Rounding.TOWARD_ZERO: 'toward_zero'>
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from dataclasses import dataclass, field, replace

import numpy as np

from . import _validate
from ._flagmasks import flags_of_code, flags_of_codes
from .attributes import DEFAULT_ATTRIBUTES, RoundingAttributes, as_attributes
from .flags import FLAG_NAMES, FLAG_VERBS, Flags
from .platforms import Platform
from .rounding import Rounding, Tininess

__all__ = ["Context", "DivisionByZero", "FloatingPointSignal", "Inexact", "InvalidOperation", "Overflow",
           "StickyFlags", "Underflow", "context", "get_context"]


class FloatingPointSignal(ArithmeticError):
    """A trapped IEEE exception (the base of the five signals, as in ``decimal``).

    >>> import softfloat as sf
    >>> try:
    ...     with sf.context(traps={"invalid"}):
    ...         sf.asarray([0.0, -1.0], "fp16") ** 0.5
    ... except sf.FloatingPointSignal as signal:
    ...     print(type(signal).__name__, signal.operation, signal.index, signal.count)
    InvalidOperation power (1,) 1
    """

    flag = ""

    def __init__(self, operation: str, index: tuple[int, ...], count: int):
        self.operation, self.index, self.count = operation, index, count
        where = f" at index {index}" if index else ""
        super().__init__(f"{operation} raised {self.flag}{where} ({count} element{'s' if count != 1 else ''} "
                         f"in all); remove {self.flag!r} from the context's traps to get the IEEE default result")


class InvalidOperation(FloatingPointSignal):
    """Trapped *invalid*: inf - inf, 0 * inf, 0 / 0, sqrt(-1), a signalling NaN.

    >>> import softfloat as sf
    >>> issubclass(sf.InvalidOperation, ArithmeticError)
    True
    """
    flag = "invalid"


class DivisionByZero(FloatingPointSignal, ZeroDivisionError):
    """Trapped *divide_by_zero*: a finite non-zero number divided by zero (also a
    ZeroDivisionError).

    >>> import softfloat as sf
    >>> with sf.context(traps={"divide_by_zero"}):
    ...     sf.asarray(1.0, "bf16") / 0
    Traceback (most recent call last):
    ...
    softfloat.DivisionByZero: divide raised divide_by_zero (1 element in all); remove 'divide_by_zero' from the context's traps to get the IEEE default result
    """
    flag = "divide_by_zero"


class Overflow(FloatingPointSignal):
    """Trapped *overflow*: a rounded result beyond the largest finite value.

    >>> import softfloat as sf
    >>> issubclass(sf.Overflow, sf.FloatingPointSignal)
    True
    """
    flag = "overflow"


class Underflow(FloatingPointSignal):
    """Trapped *underflow*: a tiny and inexact result.

    >>> import softfloat as sf
    >>> sf.Underflow.flag
    'underflow'
    """
    flag = "underflow"


class Inexact(FloatingPointSignal):
    """Trapped *inexact*: a result that had to be rounded.

    >>> import softfloat as sf
    >>> with sf.context(traps={"inexact"}):
    ...     sf.asarray(0.1, "fp16")
    Traceback (most recent call last):
    ...
    softfloat.Inexact: asarray raised inexact (1 element in all); remove 'inexact' from the context's traps to get the IEEE default result
    """
    flag = "inexact"


SIGNALS = {cls.flag: cls for cls in (InvalidOperation, DivisionByZero, Overflow, Underflow, Inexact)}
for _cls in (FloatingPointSignal, *SIGNALS.values()):
    _cls.__module__ = "softfloat"  # raised and shown as softfloat.Overflow, ...


@dataclass
class StickyFlags:
    """Counts of elements that raised each flag, summed over a context's operations.

    Attributes
    ----------
    invalid, divide_by_zero, overflow, underflow, inexact : int
    swamped : int
        Additions in sums and products that left the partial sum unchanged.
    values : int
        Elements produced by the counted operations.
    operations : int
    last : Flags or None
        The per-element flags of the most recent operation.
    """

    invalid: int = 0
    divide_by_zero: int = 0
    overflow: int = 0
    underflow: int = 0
    inexact: int = 0
    swamped: int = 0
    values: int = 0
    operations: int = 0
    last: Flags | None = field(default=None, repr=False)

    def record(self, flags: Flags) -> None:
        """Add one operation's flags."""
        held = flags.__dict__
        lazy = held.get("_lazy")
        if lazy is not None:  # masks not held are the packed code's bits (softfloat.flags.Flags._lazy)
            self._record_lazy(held, *lazy)
            self.last = flags
            return
        inexact = flags.inexact
        if type(inexact) is np.bool_ or (type(inexact) is np.ndarray and inexact.size == 1):  # one element
            self._record_one(flags)
            return
        for name in FLAG_NAMES:
            mask = getattr(flags, name)
            # a 0-d result's flags are numpy bools (Flags.squeezed): no counting call
            n = (1 if mask else 0) if type(mask) is np.bool_ else np.count_nonzero(mask)
            if n:
                setattr(self, name, getattr(self, name) + int(n))
        swamped = flags.__dict__.get("swamped")  # AccumulationFlags' (a miss through Flags.__getattr__ costs us)
        if swamped is not None:
            self.swamped += int(swamped) if isinstance(swamped, np.integer) else int(np.sum(swamped))
        self.values += math.prod(np.shape(flags.inexact))
        self.operations += 1
        self.last = flags

    def _record_one(self, flags: Flags) -> None:
        """``record`` of one element's flags (numpy bools, or arrays of one element): the
        same counts, without a counting call per flag."""
        if flags.invalid:
            self.invalid += 1
        if flags.divide_by_zero:
            self.divide_by_zero += 1
        if flags.overflow:
            self.overflow += 1
        if flags.underflow:
            self.underflow += 1
        if flags.inexact:
            self.inexact += 1
        swamped = flags.__dict__.get("swamped")  # AccumulationFlags' (a miss through Flags.__getattr__ costs us)
        if swamped is not None:
            self.swamped += int(swamped) if isinstance(swamped, np.integer) else int(np.sum(swamped))
        self.values += 1
        self.operations += 1
        self.last = flags

    def _record_lazy(self, held: dict, code: int, shape) -> None:
        """``record``'s counts of flags held as some masks and a packed code
        (softfloat._flagmasks.FLAG_BITS: bit 0 invalid .. bit 4 inexact) for each of the
        ``shape``'s elements where a mask is not held."""
        n = math.prod(shape)
        for j, name in enumerate(FLAG_NAMES):
            mask = held.get(name)
            raised = (n if code >> j & 1 else 0) if mask is None else int(np.count_nonzero(mask))
            if raised:
                setattr(self, name, getattr(self, name) + raised)
        self.values += n
        self.operations += 1

    def record_codes(self, codes) -> None:
        """``record`` of one operation per row of ``codes`` (packed flag bytes, bit j the
        j-th flag of FLAG_NAMES, for each element of a row): the same counts and ``last``
        as a record per row, without a call each (a chain of scalar steps)."""
        if not len(codes):
            return
        for j, name in enumerate(FLAG_NAMES):
            n = np.count_nonzero(codes & (1 << j))
            if n:
                setattr(self, name, getattr(self, name) + int(n))
        self.values += codes.size
        self.operations += len(codes)
        self.last = _flags_of(codes[-1])

    def clear(self) -> None:
        for name in (*FLAG_NAMES, "swamped", "values", "operations"):
            setattr(self, name, 0)
        self.last = None

    def raised(self) -> tuple[str, ...]:
        return tuple(name for name in FLAG_NAMES if getattr(self, name))

    def summary(self) -> str:
        """A line per raised flag, e.g. "underflowed: 412 of 1000000 values in 3 operations".

        >>> f = StickyFlags(); f.record(Flags.none((10,))); print(f.summary())
        no flags raised (10 values in 1 operation)
        """
        ops = f"{self.operations} operation{'s' if self.operations != 1 else ''}"
        lines = [f"{FLAG_VERBS[name]}: {getattr(self, name)} of {self.values} values in {ops}"
                 for name in FLAG_NAMES if getattr(self, name)]
        if self.swamped:
            lines.append(f"swamped additions: {self.swamped}")
        return "\n".join(lines) if lines else f"no flags raised ({self.values} values in {ops})"

    def __str__(self) -> str:
        return self.summary()


_ORDERS = ("sequential", "pairwise", "reverse")


@dataclass
class Context:
    """The attributes of emulated-precision arithmetic (see :func:`context` for each):
    ``attributes`` (a :class:`~softfloat.RoundingAttributes`: rounding, tininess,
    subnormals, saturate and platform, also readable one by one as ``ctx.rounding``, ...),
    accumulator, order, rng (a Generator, for stochastic rounding: rng=None draws fresh
    entropy; the deterministic modes ignore it), traps, track_flags, and the sticky
    ``flags``.

    >>> import softfloat as sf
    >>> ctx = sf.get_context()
    >>> ctx.rounding.value, ctx.order, ctx.subnormals
    ('nearest_even', 'sequential', True)
    >>> ctx.attributes is sf.get_context().attributes, ctx.platform.name
    (True, 'default')
    """

    attributes: RoundingAttributes = DEFAULT_ATTRIBUTES
    accumulator: object = None
    order: str = "sequential"
    rng: np.random.Generator | None = None
    traps: frozenset = frozenset()
    track_flags: bool = True
    flags: StickyFlags = field(default_factory=StickyFlags)
    #: the array layer's memo of this context's roundings of Python scalars (a new
    #: context starts with an empty one; see softfloat.array)
    cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def rounding(self) -> Rounding:
        """``attributes.rounding`` (read-only: set it with :func:`context`)."""
        return self.attributes.rounding

    @property
    def tininess(self) -> Tininess:
        """``attributes.tininess``."""
        return self.attributes.tininess

    @property
    def subnormals(self) -> bool:
        """``attributes.subnormals``."""
        return self.attributes.subnormals

    @property
    def saturate(self) -> bool:
        """``attributes.saturate``."""
        return self.attributes.saturate

    @property
    def platform(self) -> Platform:
        """``attributes.platform``."""
        return self.attributes.platform

    def options(self) -> dict:
        """The keyword arguments of the bit-level operations: ``attributes`` and ``rng``."""
        return dict(attributes=self.attributes, rng=self.rng)

    def split(self, out):
        """``(result, flags)`` of a bit-level call made with ``return_flags=self.track_flags``
        (flags None when they are not tracked)."""
        return out if self.track_flags else (out, None)

    def record_steps(self, operation: str, codes) -> None:
        """:meth:`record` of one operation per row of ``codes`` in turn (packed flag bytes,
        bit j the j-th flag of FLAG_NAMES, for each element of a row), raising for the
        first row with a trapped flag as that row's record would; nothing where flags are
        not tracked."""
        if not self.track_flags:
            return
        if self.traps:
            trapped = sum(1 << j for j, name in enumerate(FLAG_NAMES) if name in self.traps)
            hit = np.flatnonzero(np.any((np.asarray(codes) & trapped).reshape(len(codes), -1), axis=1))
            if hit.size:
                self.flags.record_codes(codes[:hit[0]])
                self.record(operation, _flags_of(codes[hit[0]]))  # raises
        self.flags.record_codes(codes)

    def record(self, operation: str, flags: Flags | None) -> None:
        """Count one operation's flags, then raise for the first trapped one (nothing to
        count when flags are not tracked)."""
        if flags is None:
            return
        self.flags.record(flags)
        if not self.traps:
            return
        for name in FLAG_NAMES:
            if name in self.traps:
                mask = np.asarray(getattr(flags, name))
                if mask.any():
                    index = tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), mask.shape))
                    raise SIGNALS[name](operation, index, int(np.count_nonzero(mask)))


def _flags_of(codes) -> Flags:
    """The Flags of one operation from its packed flag bytes (numpy bools for a 0-d one,
    as the operations give them)."""
    if np.ndim(codes) == 0:
        return flags_of_code(int(codes))
    return flags_of_codes(codes)


_CURRENT: contextvars.ContextVar[Context] = contextvars.ContextVar("softfloat_context")


def get_context() -> Context:
    """The current context (a fresh default one per thread or task until one is set).

    >>> import softfloat as sf
    >>> with sf.context(rounding="upward") as ctx:
    ...     sf.get_context() is ctx
    True
    """
    try:
        return _CURRENT.get()
    except LookupError:
        ctx = Context()
        _CURRENT.set(ctx)
        return ctx


_OPTIONS = ("attributes", "platform", "rounding", "tininess", "subnormals", "saturate", "accumulator", "order",
            "rng", "traps", "track_flags")
#: The options that are fields of RoundingAttributes, in the order they are put in place
#: (the platform first, so that a tininess given with it wins over the platform's)
_ATTRIBUTE_SHORTCUTS = ("platform", "rounding", "tininess", "subnormals", "saturate")


def _checked(base: Context, **changes) -> Context:
    unknown = set(changes) - set(_OPTIONS)
    if unknown:
        raise TypeError(f"context() got unknown option(s) {sorted(unknown)}; the options are {', '.join(_OPTIONS)}")
    kw = {}
    attrs = as_attributes(changes["attributes"]) if "attributes" in changes else base.attributes
    for name in _ATTRIBUTE_SHORTCUTS:  # a shortcut given wins over the same field of attributes
        if name in changes:
            attrs = attrs.replace(**{name: changes[name]})
    kw["attributes"] = attrs
    if "track_flags" in changes:
        kw["track_flags"] = _validate.boolean("track_flags", changes["track_flags"])
    if "order" in changes:
        kw["order"] = _validate.one_of("order", changes["order"], _ORDERS)
    if "accumulator" in changes:
        acc = changes["accumulator"]
        kw["accumulator"] = acc if acc is None else ACCUMULATOR_CHECK(acc, "accumulator")
    if "rng" in changes:
        rng = changes["rng"]
        _validate.rng_argument(rng)
        kw["rng"] = rng if rng is None or isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    if "traps" in changes:
        traps = () if changes["traps"] is None else changes["traps"]
        if not isinstance(traps, (str, set, frozenset, list, tuple, dict)):  # (an int: "not iterable")
            raise TypeError(f"traps must be a set of IEEE flag names such as {{'overflow'}}; got {_validate.describe(traps)}")
        traps = {traps} if isinstance(traps, str) else set(traps)
        unknown = traps - set(FLAG_NAMES)
        if unknown:
            first = min(unknown, key=str)
            raise ValueError(f"traps must name IEEE flags ({', '.join(FLAG_NAMES)}); got {sorted(unknown, key=str)}"
                             f"{_validate.did_you_mean(first, FLAG_NAMES)}")
        kw["traps"] = frozenset(traps)
    ctx = replace(base, **kw, flags=StickyFlags())
    if ctx.traps and not ctx.track_flags:
        raise ValueError(f"traps={set(ctx.traps)} need the flags: they cannot be set with track_flags=False")
    return ctx


def _any_accumulator(value, name: str):
    return value


#: checks a context's ``accumulator`` (a format, format name, hardware preset or fused
#: adder) and returns it, or raises a TypeError/ValueError naming ``name``: the package
#: installs softfloat.recipes.check_accumulator here (those names live in the layers
#: above this one); until then any value passes, and the first reduction checks it
ACCUMULATOR_CHECK = _any_accumulator


@contextlib.contextmanager
def context(**changes):
    """Run a block with a new context: the current one with ``changes`` and fresh flags.

    Every option left out is inherited from the enclosing context.

    Parameters
    ----------
    attributes : RoundingAttributes, optional
        Rounding, tininess, subnormals, saturate and platform as one value (None: the
        defaults).  The five options below are shortcuts for its fields: one that is given
        wins over the same field of ``attributes``.
    platform : Platform or str
        A preset of :data:`softfloat.PLATFORMS` ("x86-sse", "arm", "cuda", ...): the
        default NaN, NaN propagation, integer results of invalid conversions, and the
        tininess unless that is given.
    rounding : Rounding or str
        Every rounding of every operation ("stochastic" draws from ``rng``).
    tininess : {"after", "before"} or None
        None: the platform's.
    subnormals : bool
        False flushes subnormal results to zero.
    saturate : bool
        Overflow to +-max_finite.
    accumulator : format, preset name or FusedAccumulator, optional
        Of sums, dot and matrix products (default: fp32 for formats narrower than fp32,
        else the format itself; see :func:`softfloat.sum`).
    order : {"sequential", "pairwise", "reverse"}
    rng : numpy.random.Generator or int, optional
        For stochastic rounding: a seed makes the block reproducible; None draws fresh
        entropy.
    traps : iterable of flag names
        Raise :class:`Overflow`, :class:`InvalidOperation`, ... (ArithmeticErrors) when an
        operation raises these flags.
    track_flags : bool, default True
        False stops computing and counting flags: every result is the same, ``ctx.flags``
        stays at zero, and operations take the bit level's paths without flags (a matrix
        product of fp16 Arrays with an fp32 accumulator runs about 4x faster; see
        benchmarks/bench_array.py).  Traps need the flags.

    Yields
    ------
    Context
        Its ``flags`` (:class:`StickyFlags`) count what the block's operations raised.

    Examples
    --------
    >>> import softfloat as sf
    >>> with sf.context(traps={"overflow"}):
    ...     sf.asarray(60000.0, "fp16") * 2
    Traceback (most recent call last):
    ...
    softfloat.Overflow: multiply raised overflow (1 element in all); remove 'overflow' from the context's traps to get the IEEE default result
    >>> up = sf.RoundingAttributes(rounding="upward", platform="arm")
    >>> with sf.context(attributes=up, rounding="toward_zero") as ctx:
    ...     ctx.rounding.value, ctx.platform.name, ctx.tininess.value
    ('toward_zero', 'arm', 'before')
    """
    ctx = _checked(get_context(), **changes)
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)
