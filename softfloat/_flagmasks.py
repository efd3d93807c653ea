"""The five IEEE flags as the kernels carry them: one boolean mask per flag, or None where
the flag cannot be raised.

:class:`FlagMasks` is the one place where flags are merged, ORed, cleared on NaN results,
packed into bytes and turned into the public :class:`softfloat.Flags` -- as Berkeley
SoftFloat raises its named ``softfloat_flag_*`` bits in one function and CPython's
``_pydecimal`` signals only in ``Context._raise_error``.  Kernels build one per block and
hand it up; the public functions call :meth:`FlagMasks.to_flags` at the boundary.

None is a promise, not a shorthand for "all False": no mask was allocated because no lane
can raise that flag (the encoder never divides by zero).  A mask is allocated only when a
part that can raise its flag is merged in, so the hot paths make no all-False arrays.
"""

from __future__ import annotations

import numpy as np

from .flags import FLAG_NAMES, AccumulationFlags, Flags

__all__ = ["FLAG_BITS", "FlagMasks", "flag_mask", "flags_of_code", "flags_of_codes", "flags_of_masks"]

#: each flag's bit in a packed flag byte (the fast paths' tables, dask's chunks), in the
#: IEEE order from bit 0:
#:     bit   7 6 5 4 3 2 1 0
#:           0 0 0 x u o z v     v invalid, z divide_by_zero, o overflow, u underflow, x inexact
FLAG_BITS = {name: np.uint8(1 << j) for j, name in enumerate(FLAG_NAMES)}
_SHIFTS = {name: np.uint8(j) for j, name in enumerate(FLAG_NAMES)}


def flag_mask(codes, name: str):
    """The mask of flag ``name`` in packed flag bytes (numpy or lazy dask ``codes``)."""
    return np.bitwise_and(codes, FLAG_BITS[name]) != 0


def flags_of_codes(codes) -> Flags:
    """The public Flags of packed flag bytes, element by element (:func:`flag_mask`)."""
    return Flags(*(flag_mask(codes, name) for name in FLAG_NAMES))


_CODE_BITS = tuple(1 << j for j in range(len(FLAG_NAMES)))
_SCALAR_FLAGS: dict = {}


def flags_of_code(code: int, shape=()) -> Flags:
    """The public Flags of one packed flag byte (see :data:`FLAG_BITS`), every element of
    ``shape`` alike: numpy bools for ``()`` (as ``Flags.squeezed`` gives them; immutable,
    so one Flags per code serves every call), else fresh arrays made when first read
    (until then ``softfloat.StickyFlags`` counts from the code itself).

    >>> flags_of_code(16 | 8).raised(), flags_of_code(1, (2,)).invalid.tolist()
    (('underflow', 'inexact'), [True, True])
    """
    if shape == ():
        flags = _SCALAR_FLAGS.get(code)
        if flags is None:
            flags = _SCALAR_FLAGS[code] = Flags(*(np.bool_(code & b) for b in _CODE_BITS))
        return flags
    made = object.__new__(Flags)  # its masks made when first read (Flags.__getattr__): counters read the code
    made.__dict__["_lazy"] = (int(code), (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape))
    return made


def flags_of_masks(shape: tuple, masks: dict) -> Flags:
    """The public Flags of a result of ``shape`` from ``masks`` (flag name -> a boolean mask
    of that shape, or None where the flag is raised nowhere): the given masks as they are,
    the others made clear when first read (until then ``softfloat.StickyFlags`` counts
    only the given ones).

    >>> f = flags_of_masks((2,), {"inexact": np.array([True, False]), "overflow": None})
    >>> f.raised(), f.overflow.tolist()
    (('inexact',), [False, False])
    """
    made = object.__new__(Flags)
    held = made.__dict__
    held["_lazy"] = (0, shape)  # (Flags.__getattr__: the others clear)
    for name, mask in masks.items():
        if mask is not None:
            held[name] = mask
    return made


class FlagMasks:
    """The five IEEE flags of a block of lanes, by name: each a boolean mask over the lanes,
    or None where the flag cannot be raised.

    A FlagMasks owns its masks: :meth:`set_at`, :meth:`or_` and :meth:`clear_at_nan`
    write into them in place, so a kernel hands over masks no one else writes (fresh
    results of numpy operations, as every kernel's are).  A mask taken from a part by
    :meth:`or_` (where this one had None) is shared with the part, which is then not to
    be written into.

    Attributes
    ----------
    invalid, divide_by_zero, overflow, underflow, inexact : numpy.ndarray of bool or None

    Examples
    --------
    >>> import numpy as np
    >>> whole = FlagMasks(inexact=np.array([True, False, True, False]))
    >>> whole.set_at(np.array([1, 2]), FlagMasks(invalid=np.array([True, False])), 4)
    >>> whole.invalid.tolist(), whole.inexact.tolist(), whole.overflow
    ([False, True, False, False], [True, False, False, False], None)
    >>> whole.to_flags((2, 2)).raised()
    ('invalid', 'inexact')
    """

    __slots__ = FLAG_NAMES

    def __init__(self, invalid=None, divide_by_zero=None, overflow=None, underflow=None, inexact=None):
        self.invalid = invalid
        self.divide_by_zero = divide_by_zero
        self.overflow = overflow
        self.underflow = underflow
        self.inexact = inexact

    @classmethod
    def zeros(cls, shape) -> "FlagMasks":
        """All five flags allocated and clear: a whole to fill or OR into."""
        return cls(*(np.zeros(shape, dtype=bool) for _ in FLAG_NAMES))

    @classmethod
    def of(cls, flags) -> "FlagMasks":
        """The masks of a public :class:`softfloat.Flags` (shared, not copied)."""
        return cls(**{name: mask for name, mask in flags})

    @classmethod
    def unpacked(cls, codes, names=FLAG_NAMES) -> "FlagMasks":
        """The flags ``names`` read from packed flag bytes (see :data:`FLAG_BITS`); the
        others None (the caller knows they are not raised)."""
        return cls(**{name: flag_mask(codes, name) for name in names})

    def __iter__(self):
        """Yield ``(name, mask or None)`` pairs in the IEEE order."""
        for name in FLAG_NAMES:
            yield name, getattr(self, name)

    def __repr__(self) -> str:
        return "FlagMasks(" + ", ".join(f"{name}={'None' if m is None else f'<{np.shape(m)}>'}"
                                        for name, m in self) + ")"

    def map(self, fn) -> "FlagMasks":
        """A new FlagMasks of ``fn(mask)`` for each mask; None stays None."""
        return FlagMasks(*(None if m is None else fn(m) for _, m in self))

    # ---- the operations on flags: each written once ----------------------------------
    def set_at(self, idx, part: "FlagMasks", shape, *, fresh: bool = False) -> None:
        """Merge: lanes ``idx`` of this whole take ``part``'s flags (the flags of the subset
        ``idx``, recomputed on another path); the other lanes keep theirs.

        A None mask in ``part`` means False at ``idx``: written where this whole has a
        mask, unless ``fresh`` (these lanes are known clear, as in a whole being filled
        block by block); nothing is allocated where both are None.  Where only the part
        has a mask, the whole's is allocated first (clear, of ``shape``).
        """
        for name in FLAG_NAMES:
            f = getattr(part, name)
            mine = getattr(self, name)
            if f is None:
                if mine is not None and not fresh:
                    mine[idx] = False
                continue
            if mine is None:
                mine = np.zeros(shape, dtype=bool)
                setattr(self, name, mine)
            mine[idx] = f

    def or_(self, other: "FlagMasks") -> None:
        """OR ``other``'s flags into these, lane by lane.

        None in ``other``: nothing to OR.  None here: ``other``'s mask is taken as it is
        (of these lanes' shape).
        numpy masks are ORed in place; lazy (dask) masks are replaced by a lazy OR.  Masks
        of ``other`` with more lanes than these hold several rows of them (an
        accumulator's steps over several terms at once): each lane ORs its rows.
        """
        for name in FLAG_NAMES:
            m = getattr(other, name)
            if m is None:
                continue
            mine = getattr(self, name)
            if mine is None:
                setattr(self, name, m)
                continue
            if m.shape != mine.shape:  # rows of these lanes (or these lanes, shaped otherwise)
                m = m.reshape(-1, *mine.shape)
                m = m[0] if len(m) == 1 else m.any(axis=0)
            if isinstance(mine, np.ndarray):
                np.logical_or(mine, m, out=mine)
            else:
                setattr(self, name, np.logical_or(mine, m))

    def clear_at_nan(self, nan) -> None:
        """A NaN result raises no overflow, underflow or inexact: clear them where ``nan``
        (such a lane raised invalid, or nothing: a NaN operand passed on)."""
        keep = None
        for name in ("overflow", "underflow", "inexact"):
            mine = getattr(self, name)
            if mine is not None:
                keep = ~nan if keep is None else keep
                np.logical_and(mine, keep, out=mine)

    # ---- the boundary ----------------------------------------------------------------
    def packed(self, shape) -> np.ndarray:
        """The flags as one byte per lane (see :data:`FLAG_BITS`), of ``shape``."""
        codes = np.zeros(shape, dtype=np.uint8)
        for name, m in self:
            if m is not None:
                codes |= np.asarray(m, dtype=np.uint8).reshape(shape) << _SHIFTS[name]
        return codes

    def to_flags(self, shape=None, *, swamped=None) -> Flags:
        """The public :class:`softfloat.Flags` (with ``swamped``: AccumulationFlags): masks
        reshaped to ``shape`` (kept as they are if None; a view where they are
        contiguous), a clear mask of ``shape`` for each flag that could not be raised."""
        masks = {name: (np.zeros(shape, dtype=bool) if m is None else m if shape is None else m.reshape(shape))
                 for name, m in self}
        if swamped is not None:
            return AccumulationFlags(**masks, swamped=swamped)
        return Flags(**masks)
