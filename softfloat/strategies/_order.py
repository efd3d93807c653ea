"""The pattern space of a format: magnitude patterns, the non-NaN patterns as integer keys
in the IEEE total order, and sets of keys."""

from __future__ import annotations

from ..formats import Format


class _Order:
    """The non-NaN patterns of a format as consecutive integer keys in the IEEE total order.

    A magnitude pattern (the bits below the sign) grows with the value it holds, so a
    positive number is keyed by it and a negative one mirrored below zero, with -0 (where
    the format has one) just under +0.  With M the largest finite magnitude pattern and
    z = 1 if the format has -0 (0 for fnuz):

        -inf      -max      -min_sub   -0  |  +0   +min_sub    +max   +inf
        -(M+1+z)  -(M+z)    -(1+z)     -z  |   0      1          M     M+1
    """

    def __init__(self, fmt: Format):
        self.fmt = fmt
        self.z = 1 if fmt.has_negative_zero else 0
        self.max_mag = fmt.max_finite_bits
        self.inf_mag = fmt.infinity_bits  # M + 1 for IEEE formats, else None

    def key(self, pattern: int) -> int:
        mag = pattern & (self.fmt.sign_mask - 1)
        return -mag - self.z if pattern & self.fmt.sign_mask else mag

    def pattern(self, key: int) -> int:
        return key if key >= 0 else self.fmt.sign_mask | (-key - self.z)

    def signed(self, mag: int, negative: bool) -> int:
        return -mag - self.z if negative else mag

    def mirror(self, key: int) -> int:
        """The key of the same magnitude with the other sign."""
        return -key - self.z  # +x <-> -x: k = mag  <->  -mag - z


class _KeySet:
    """A set of keys as sorted, disjoint, inclusive intervals."""

    def __init__(self, intervals):
        self.intervals = tuple((lo, hi) for lo, hi in intervals if lo <= hi)

    def without(self, lo: int, hi: int) -> "_KeySet":
        """This set minus the keys in [lo, hi]."""
        kept = []
        for a, b in self.intervals:
            kept += [(a, min(b, lo - 1)), (max(a, hi + 1), b)]
        return _KeySet(kept)

    def __contains__(self, key: int) -> bool:
        return any(a <= key <= b for a, b in self.intervals)

    def meets(self, lo: int, hi: int) -> bool:
        """True if some key of [lo, hi] is in the set."""
        return any(a <= hi and lo <= b for a, b in self.intervals)

    @property
    def size(self) -> int:
        return sum(b - a + 1 for a, b in self.intervals)

    def at(self, index: int) -> int:
        """The index-th smallest key."""
        for a, b in self.intervals:
            if index <= b - a:
                return a + index
            index -= b - a + 1
        raise IndexError(index)

    def project(self, key: int, order: _Order) -> int:
        """``key`` if allowed, else its mirror image (same magnitude, other sign), else the
        nearest allowed key (so draws outside the bounds land on the bounds)."""
        if key in self:
            return key
        if order.mirror(key) in self:
            return order.mirror(key)
        return min((min(max(key, a), b) for a, b in self.intervals), key=lambda k: (abs(k - key), k))

    def magnitudes(self, order: _Order) -> tuple[int, int]:
        """The smallest and largest magnitude pattern among the keys."""
        lows, highs = [], []
        for a, b in self.intervals:
            if b >= 0:  # positive keys are magnitudes
                lows.append(max(a, 0))
                highs.append(b)
            if a < 0:   # negative keys: magnitude = -key - z
                lows.append(-min(b, -1) - order.z)
                highs.append(-a - order.z)
        return min(lows), max(highs)


def _power_of_two_mag(fmt: Format, e: int) -> int | None:
    """Magnitude pattern of 2**e, or None if it is not a normal number of ``fmt``."""
    field = e + fmt.bias
    mag = field << fmt.mantissa_bits
    return mag if 1 <= field and mag <= fmt.max_finite_bits else None


def _dedupe(items):
    return tuple(dict.fromkeys(items))
