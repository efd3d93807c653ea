"""The five IEEE 754 exceptions as data, and the outcomes beside them.

Kernels return flags; they never raise or keep state.  Inside them the flags travel as
``softfloat._flagmasks.FlagMasks`` (None for a flag that cannot be raised), which becomes a
``Flags`` at the public boundary.  ``Flags`` merges with ``|``, counts,
and prints a summary a person can read ("3.2% underflowed").  ``Outcomes`` counts what
became of the values (exact, rounded, became zero, ...), which the flags alone cannot say:
"underflow" covers both a value that became subnormal and one that became zero.  Outcomes
are computed from a result's bits and its flags by :func:`softfloat.outcomes`, and
``Flags.summary(outcomes)`` prints the two side by side.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields

import numpy as np

from . import _validate
from ._validate import counted

__all__ = ["AccumulationFlags", "Flags", "FLAG_NAMES", "OUTCOME_NAMES", "Outcomes"]

FLAG_NAMES = ("invalid", "divide_by_zero", "overflow", "underflow", "inexact")

FLAG_VERBS = {  # how summaries say that a flag was raised
    "invalid": "invalid",
    "divide_by_zero": "divided by zero",
    "overflow": "overflowed",
    "underflow": "underflowed",
    "inexact": "inexact",
}


@dataclass(frozen=True)
class Flags:
    """Per-element IEEE exception flags, each a boolean array shaped like the result.

    Attributes
    ----------
    invalid, divide_by_zero, overflow, underflow, inexact : numpy.ndarray of bool

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> bits, f = sf.encode(np.array([1.0, 0.1, 1e-9, 70000.0]), "fp16", return_flags=True)
    >>> f.inexact.tolist(), f.count()["underflow"], f.raised()
    ([False, True, True, True], 1, ('overflow', 'underflow', 'inexact'))
    >>> f.mask().tolist()                    # any flag, per element
    [False, True, True, True]
    >>> Flags.none((4,)).any(), (f | Flags.none((4,))).count() == f.count()
    (False, True)
    """

    invalid: np.ndarray
    divide_by_zero: np.ndarray
    overflow: np.ndarray
    underflow: np.ndarray
    inexact: np.ndarray

    #: (packed flag byte, shape): every mask this Flags does not hold is, for each element of
    #: the shape, that flag's bit of the code, made when first read -- one code for every
    #: element (softfloat._flagmasks.flags_of_code, the one-element paths), or 0 beside the
    #: masks of the flags raised somewhere (softfloat._flagmasks.flags_of_masks, the
    #: small-array paths); None for flags held as masks (a class attribute, not a field)
    _lazy = None

    def __getattr__(self, name):
        """A mask this Flags does not hold, made from its packed code (``_lazy``) when first
        read; reached only for attributes not set."""
        lazy = self.__dict__.get("_lazy")
        if lazy is None or name not in FLAG_NAMES:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        code, shape = lazy
        mask = self.__dict__[name] = np.full(shape, bool(code >> FLAG_NAMES.index(name) & 1))
        return mask

    @classmethod
    def none(cls, shape: tuple[int, ...]) -> "Flags":
        """All five flags clear, for a result of the given shape."""
        return cls(*(np.zeros(shape, dtype=bool) for _ in FLAG_NAMES))

    def _replace(self, **changes: np.ndarray) -> "Flags":
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return Flags(**values)

    def squeezed(self) -> "Flags":
        """For a 0-d result: the same flags as numpy scalars, like the result."""
        if self.shape != ():
            return self
        return type(self)(**{f.name: getattr(self, f.name)[()] for f in fields(self)})

    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(self.inexact)

    def __iter__(self):
        """Yield ``(name, mask)`` pairs in the IEEE order."""
        for name in FLAG_NAMES:
            yield name, getattr(self, name)

    def __or__(self, other: "Flags") -> "Flags":
        if not isinstance(other, Flags):
            return NotImplemented
        return Flags(*(np.logical_or(a, b) for (_, a), (_, b) in zip(self, other)))

    def _lines(self) -> list[str]:
        total = int(np.prod(self.shape, dtype=np.int64))
        return [f"{FLAG_VERBS[name]}: {n} of {total} ({_percent(n, total)})"
                for name, n in self.count().items() if n]

    def any(self) -> bool:
        """True if any flag is raised for any element."""
        return any(n > 0 for n in self.count().values())

    def mask(self) -> np.ndarray:
        """Per element: was any flag raised?  (Lazy masks, from a dask array, give a lazy
        mask.)"""
        masks = [m for _, m in self]
        if any(_is_lazy(m) for m in masks):
            return functools.reduce(np.logical_or, masks)
        out = np.zeros(self.shape, dtype=bool)
        for m in masks:
            out |= m
        return out

    def count(self) -> dict[str, int]:
        """Number of elements that raised each flag.  Lazy masks (dask) are computed here,
        all five in one pass."""
        counts = _compute(*(_count(m) for _, m in self))
        return {name: int(n) for name, n in zip(FLAG_NAMES, counts)}

    def raised(self) -> tuple[str, ...]:
        """Names of the flags raised by at least one element, in IEEE order."""
        return tuple(name for name, n in self.count().items() if n)

    def to_dict(self) -> dict[str, int]:
        return self.count()

    def summary(self, outcomes: "Outcomes | None" = None) -> str:
        """One line per raised flag with its count and share, or 'no flags raised'.

        Parameters
        ----------
        outcomes : Outcomes, optional
            What became of the same values (from :func:`softfloat.outcomes`).  Given, the
            summary has two sections: the IEEE flags, then the outcomes.

        Examples
        --------
        >>> import numpy as np
        >>> z = np.zeros(40, bool); u = z.copy(); u[:3] = True
        >>> print(Flags(z, z, z, u, u).summary())
        underflowed: 3 of 40 (7.5%)
        inexact: 3 of 40 (7.5%)
        >>> print(Flags(z, z, z, u, u).summary(Outcomes(exact=37, zero=3)))
        IEEE flags:
          underflowed: 3 of 40 (7.5%)
          inexact: 3 of 40 (7.5%)
        outcomes:
          exact: 37 of 40 (92.5%)
          became zero: 3 of 40 (7.5%)
        """
        lines = self._lines()
        total = int(np.prod(self.shape, dtype=np.int64))
        if outcomes is None:
            return "\n".join(lines) if lines else f"no flags raised ({counted(total)})"
        _validate.instance("outcomes", outcomes, Outcomes, "a softfloat.Outcomes (from softfloat.outcomes)")
        if outcomes.total != total:
            raise ValueError(f"outcomes counts {counted(outcomes.total)} but the flags hold "
                             f"{counted(total)}; pass the outcomes of the same result")
        flag_lines = ["  " + line for line in lines] if lines else [f"  none raised ({counted(total)})"]
        return "\n".join(["IEEE flags:", *flag_lines, "outcomes:",
                          *("  " + line for line in outcomes.summary().splitlines())])

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.count().items())
        return f"{type(self).__name__}(shape={self.shape}, {counts})"


def _is_lazy(m) -> bool:
    return type(m).__module__.startswith("dask")


def _count(m):
    """The number of non-zero elements (lazy for a dask array)."""
    return (m != 0).sum() if _is_lazy(m) else np.count_nonzero(m)


def _compute(*values):
    """Lazy values (dask, from a dask array's flags) computed together in one pass; numpy
    values as they are.  dask is imported only when a lazy value came."""
    if not any(_is_lazy(v) for v in values):
        return values
    import dask

    return dask.compute(*values)


def _percent(n: int, total: int) -> str:
    share = 100.0 * n / total
    if share >= 0.1 or share == 0:
        return f"{share:.1f}%"
    return f"{share:.2g}%"


@dataclass(frozen=True)
class AccumulationFlags(Flags):
    """The flags of a sum, dot or matrix product: the five IEEE flags of each output
    element (OR over every rounding that made it) and ``swamped``.

    Attributes
    ----------
    swamped : numpy.ndarray of int64
        Per output element, the number of additions in which a non-zero finite addend
        left a finite partial sum unchanged (the update "too small to matter": 1 added to
        2048 in fp16).

    Examples
    --------
    >>> import numpy as np
    >>> z = np.zeros(2, bool)
    >>> f = AccumulationFlags(z, z, z, z, np.array([True, False]), swamped=np.array([2048, 0]))
    >>> print(f.summary())
    inexact: 1 of 2 (50.0%)
    swamped additions: 2048, in 1 of 2 (50.0%)
    """

    swamped: np.ndarray = None

    def _lines(self) -> list[str]:
        lines = super()._lines()
        hit, added = (int(v) for v in _compute(_count(self.swamped), np.sum(self.swamped)))
        if hit:
            total = int(np.prod(self.shape, dtype=np.int64))
            lines.append(f"swamped additions: {added}, in {hit} of {total} "
                         f"({_percent(hit, total)})")
        return lines

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", swamped={int(_compute(np.sum(self.swamped))[0])})"


#: the outcomes, in the order they are printed (each value has exactly one)
OUTCOME_NAMES = ("exact", "rounded", "subnormal", "zero", "saturated", "infinite", "nan")

_OUTCOME_LABELS = {
    "exact": "exact",
    "rounded": "rounded",
    "subnormal": "became subnormal",
    "zero": "became zero",
    "saturated": "saturated to +-max",
    "infinite": "became +-inf",
    "nan": "NaN",
}


@dataclass(frozen=True)
class Outcomes:
    """What became of the values of one result: each value counted under exactly one
    outcome.  Computed from the result's bits and flags by :func:`softfloat.outcomes`.

    The flags say which IEEE exceptions a value raised; they cannot say what the value
    became ("underflowed" is both a value that became subnormal and one that became
    zero), while the bits alone cannot say whether a value was rounded.  So outcomes are
    read from both, in this order (the first that applies):

    Attributes
    ----------
    nan : int
        NaN results: NaN inputs carried through, and values that became NaN (invalid
        operations, overflow or an infinity in a format without infinity).
    infinite : int
        Finite values that became +-inf (overflow, or division by zero).
    saturated : int
        Values beyond the range that were clamped to +-max_finite (overflow with a
        finite result: ``saturate=True``, the directed modes, FP6/FP4).
    zero : int
        Non-zero values (or NaNs, in formats without NaN) that became +-0: underflow,
        flush-to-zero.
    subnormal : int
        Values rounded to a non-zero subnormal, with fewer than p significant bits.
    rounded : int
        Values rounded to a different normal value (all other inexact results).
    exact : int
        Values kept exactly: zeros, infinities and representable values, subnormals
        included.

    Examples
    --------
    >>> o = Outcomes(exact=6, rounded=3, zero=1)
    >>> o.total, o.counts["zero"], o.shares["rounded"]
    (10, 1, 0.3)
    >>> print(o)
    exact: 6 of 10 (60.0%)
    rounded: 3 of 10 (30.0%)
    became zero: 1 of 10 (10.0%)
    """

    exact: int = 0
    rounded: int = 0
    subnormal: int = 0
    zero: int = 0
    saturated: int = 0
    infinite: int = 0
    nan: int = 0

    def __post_init__(self) -> None:
        for name in OUTCOME_NAMES:
            object.__setattr__(self, name, _validate.count(name, getattr(self, name)))

    @property
    def total(self) -> int:
        """The number of values (each has exactly one outcome)."""
        return sum(self.counts.values())

    @property
    def counts(self) -> dict[str, int]:
        """``{outcome: number of values}``, every outcome, in :data:`OUTCOME_NAMES` order."""
        return {name: getattr(self, name) for name in OUTCOME_NAMES}

    @property
    def shares(self) -> dict[str, float]:
        """``{outcome: fraction of the values}`` (0 to 1; all 0.0 when there are none)."""
        total = self.total
        return {name: (n / total if total else 0.0) for name, n in self.counts.items()}

    def __add__(self, other: "Outcomes") -> "Outcomes":
        """The outcomes of two results together."""
        if not isinstance(other, Outcomes):
            return NotImplemented
        return Outcomes(**{name: getattr(self, name) + getattr(other, name) for name in OUTCOME_NAMES})

    def summary(self) -> str:
        """One line per outcome that some value had, with its count and share."""
        total = self.total
        lines = [f"{_OUTCOME_LABELS[name]}: {n} of {total} ({_percent(n, total)})"
                 for name, n in self.counts.items() if n]
        return "\n".join(lines) if lines else "no values"

    def __str__(self) -> str:
        return self.summary()
