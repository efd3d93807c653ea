"""The tables of the lookup kernel (:mod:`._table`): filled once per (format, input type,
attrs) by the general path, kept within a memory bound, oldest dropped first."""

from __future__ import annotations

import threading

import numpy as np

from ..formats import Format
from ._table import by_table, table_cut

__all__ = ["TABLE_CACHE_BYTES", "TABLE_FILL_RATIO", "TablePlan"]

#: a table is filled once the blocks offered to it, in all, have at least
#: 1/TABLE_FILL_RATIO as many elements as it has entries (filling costs about as much per
#: entry as the general path per element); until then blocks take the plan's other
#: kernel, so a single small call never pays for a large table, while a loop of small
#: calls (a training step's tensors) reaches it after a few of them -- the count the
#: operations' pair tables keep (softfloat.ops._driver's PAIR_TABLE_FILL_AFTER)
TABLE_FILL_RATIO = 8
#: the most memory that filled tables keep; beyond it the oldest are dropped (and
#: refilled if needed again)
TABLE_CACHE_BYTES = 64 << 20

_filled: list = []  # table plans holding tables, oldest first
_filled_lock = threading.Lock()


class TablePlan:
    """The tables of :func:`._table.by_table` for one (format, input type, attrs) that
    :func:`._table.applies` to: the general
    path's bits and flags (packed: softfloat._flagmasks.FLAG_BITS) for one input per index, and
    the kernel that blocks too small to fill them take instead (``fallback``)."""

    def __init__(self, fmt: Format, src: Format, attrs, fallback):
        self.kernel, self.fmt, self.src, self.attrs, self.fallback = by_table, fmt, src, attrs, fallback
        self.dt = src.storage_dtype.type
        self.c = self.dt(table_cut(fmt, src))
        self.below = self.dt((1 << int(self.c)) - 1)
        self.index_type = np.uint32 if src.bits == 32 else np.int64  # take() wants intp or narrower
        self.entries = 1 << (src.bits - int(self.c))
        # (bits, packed flags, flags raised anywhere, {dtype: quantized values}): one
        # attribute, set at once
        self.tables = None
        self.seen = 0  # elements of the blocks offered to fill() so far (a heuristic: races only delay it)
        self.upper = None if fallback is None else fallback.upper

    def fill(self, general, block_size: int):
        """Fill the tables from ``general`` on one representative input per index (its
        top bits, and bit 0 set when its sticky bit is), once the blocks offered so far
        (this one of ``block_size`` elements included) pay for them; return them (None
        if not filled).  Two threads may both
        fill them (the same tables): the first to finish keeps its own.  Filled tables
        beyond TABLE_CACHE_BYTES are dropped, oldest first (a caller holding them keeps
        its reference)."""
        self.seen += block_size
        if self.seen * TABLE_FILL_RATIO < self.entries:
            return None
        index = np.arange(self.entries, dtype=self.src.storage_dtype)
        reps = ((index >> self.dt(1)) << self.dt(self.c + 1)) | (index & self.dt(1))
        bits = np.empty(self.entries, dtype=self.fmt.storage_dtype)
        with np.errstate(all="ignore"):
            flags = general(reps.view(np.dtype(f"f{self.src.bits // 8}")), self.fmt, self.attrs, bits)
        packed = flags.packed(self.entries)
        raises = tuple(name for name, mask in flags if mask is not None and mask.any())
        bits.flags.writeable = packed.flags.writeable = False
        with _filled_lock:
            if self.tables is None:  # else another thread filled them meanwhile
                self.tables = (bits, packed, raises, {})
                _filled.append(self)
            tables = self.tables
            _drop_oldest_tables()
        return tables

    def values(self, tables, dtype, decode):
        """The table of the quantized values as ``dtype`` (made once from the bits
        table by ``decode(bits, fmt, out)``, the codec's decoder)."""
        by_dtype = tables[3]
        values = by_dtype.get(dtype)
        if values is None:
            values = np.empty(self.entries, dtype=dtype)
            decode(tables[0], self.fmt, values)
            values.flags.writeable = False
            with _filled_lock:
                values = by_dtype.setdefault(dtype, values)
                _drop_oldest_tables()
        return values

    @property
    def table_bytes(self) -> int:
        tables = self.tables
        if tables is None:
            return 0
        return tables[0].nbytes + tables[1].nbytes + sum(v.nbytes for v in tables[3].values())


def _drop_oldest_tables() -> None:
    """Drop the oldest filled tables while they hold more than TABLE_CACHE_BYTES (a
    caller holding them keeps its reference).  Call with _filled_lock held."""
    held = sum(p.table_bytes for p in _filled)
    while held > TABLE_CACHE_BYTES and len(_filled) > 1:
        old = _filled.pop(0)
        held -= old.table_bytes
        old.tables, old.seen = None, 0  # refilled only once blocks pay for it again
