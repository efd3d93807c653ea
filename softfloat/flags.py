"""The five IEEE 754 exceptions as data: one boolean mask per exception, per element.

Kernels return flags; they never raise or keep state.  ``Flags`` merges with ``|``, counts,
and prints a summary a person can read ("3.2% underflowed").
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

__all__ = ["AccumulationFlags", "Flags", "FLAG_NAMES"]

FLAG_NAMES = ("invalid", "divide_by_zero", "overflow", "underflow", "inexact")

_VERBS = {
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
    >>> import numpy as np
    >>> f = Flags.none((4,))
    >>> f.any()
    False
    >>> g = f | Flags.none((4,))._replace(inexact=np.array([True, False, False, False]))
    >>> g.count()["inexact"], g.raised()
    (1, ('inexact',))
    """

    invalid: np.ndarray
    divide_by_zero: np.ndarray
    overflow: np.ndarray
    underflow: np.ndarray
    inexact: np.ndarray

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
        return [f"{_VERBS[name]}: {n} of {total} ({_percent(n, total)})"
                for name, n in self.count().items() if n]

    def any(self) -> bool:
        """True if any flag is raised for any element."""
        return any(bool(np.any(mask)) for _, mask in self)

    def mask(self) -> np.ndarray:
        """Per element: was any flag raised?"""
        out = np.zeros(self.shape, dtype=bool)
        for _, m in self:
            out |= m
        return out

    def count(self) -> dict[str, int]:
        """Number of elements that raised each flag."""
        return {name: int(np.count_nonzero(m)) for name, m in self}

    def raised(self) -> tuple[str, ...]:
        """Names of the flags raised by at least one element, in IEEE order."""
        return tuple(name for name, m in self if np.any(m))

    def to_dict(self) -> dict[str, int]:
        return self.count()

    def summary(self) -> str:
        """One line per raised flag with its count and share, or 'no flags raised'.

        >>> import numpy as np
        >>> z = np.zeros(40, bool); u = z.copy(); u[:3] = True
        >>> print(Flags(z, z, z, u, u).summary())
        underflowed: 3 of 40 (7.5%)
        inexact: 3 of 40 (7.5%)
        """
        lines = self._lines()
        total = int(np.prod(self.shape, dtype=np.int64))
        return "\n".join(lines) if lines else f"no flags raised ({total} values)"

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.count().items())
        return f"{type(self).__name__}(shape={self.shape}, {counts})"


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
        hit = int(np.count_nonzero(self.swamped))
        if hit:
            total = int(np.prod(self.shape, dtype=np.int64))
            lines.append(f"swamped additions: {int(np.sum(self.swamped))}, in {hit} of {total} "
                         f"({_percent(hit, total)})")
        return lines

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", swamped={int(np.sum(self.swamped))})"
