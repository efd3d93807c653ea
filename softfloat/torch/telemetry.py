"""What the emulated products did, per call: :class:`GemmTelemetry` records, collected
in a :class:`Telemetry` that prints a per-site table and converts to pandas."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .._validate import missing_dependency

__all__ = ["GemmTelemetry", "Telemetry"]


@dataclasses.dataclass(frozen=True)
class GemmTelemetry:
    """One emulated matrix product.

    Attributes
    ----------
    site : str
        The call site: the module path of the innermost ``nn.Module`` running
        (``"h.0.attn.c_attn"``), or ``"matmul#3"`` outside any module.
    kind : {"fprop", "dgrad", "wgrad"}
    op : str
        The torch function ("linear", "matmul", "mm", "bmm", "addmm", "baddbmm").
    shape : tuple of int
        (M, K, N) of the product.
    record : softfloat.recipes.GemmRecord or None
        The engine's counts (per operand: underflows to zero, subnormals,
        overflows/saturations, non-finite values, amax, scale; the accumulator's
        swamped additions); None when the emulation was started with
        ``telemetry=False``.
    """

    site: str
    kind: str
    op: str
    shape: tuple
    record: object = None

    def row(self) -> dict:
        """The record as one flat dict (nested fields joined with ``_``)."""
        m, k, n = self.shape
        row = {"site": self.site, "kind": self.kind, "op": self.op, "m": m, "k": k, "n": n}
        if self.record is not None:
            row.update(_flat(self.record))
        return row


def _flat(value, prefix: str = "") -> dict:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            out.update(_flat(getattr(value, f.name), f"{prefix}{f.name}_"))
        return out
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            out.update(_flat(item, f"{prefix}{key}_"))
        return out
    return {prefix[:-1]: getattr(value, "name", value) if hasattr(value, "mantissa_bits") else value}


_KINDS = {"fprop": 0, "dgrad": 1, "wgrad": 2}


class Telemetry(Sequence):
    """The products an emulation ran, in order: a read-only sequence of
    :class:`GemmTelemetry` that stays readable after the emulation has ended (backward
    products run later are added as they run)."""

    def __init__(self):
        self._records: list[GemmTelemetry] = []

    def append(self, record: GemmTelemetry) -> None:  # the emulation's, not the user's
        self._records.append(record)

    def __getitem__(self, index):
        return self._records[index]

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        sites = len({r.site for r in self._records})
        return f"<Telemetry: {len(self)} products at {sites} call sites>"

    def rows(self) -> list[dict]:
        """One flat dict per product (:meth:`GemmTelemetry.row`)."""
        return [r.row() for r in self._records]

    def to_pandas(self):
        """A ``pandas.DataFrame`` with one row per product (needs pandas)."""
        try:
            import pandas
        except ImportError:
            raise ImportError(missing_dependency("Telemetry.to_pandas", "pandas", "pandas")) from None
        return pandas.DataFrame(self.rows())

    def summary(self) -> list[dict]:
        """Per (site, kind), in order of first use: calls, each operand's shares of
        elements that underflowed to zero, became subnormal, overflowed or saturated,
        its largest amax and last scale, and the share of swamped additions."""
        groups: dict[tuple, list] = {}
        sites: dict[str, int] = {}
        for r in self._records:
            sites.setdefault(r.site, len(sites))
            groups.setdefault((r.site, r.kind), []).append(r)
        order = sorted(groups, key=lambda g: (sites[g[0]], _KINDS.get(g[1], 3)))
        return [_summarise(site, kind, groups[site, kind]) for site, kind in order]

    def report(self) -> str:
        """:meth:`summary` as a text table."""
        rows = self.summary()
        if not rows:
            return "no emulated products yet"
        head = ("site", "kind", "calls", "A under", "A sub", "A over", "A amax", "A scale",
                "B under", "B sub", "B over", "B amax", "B scale", "swamped")
        keys = ("site", "kind", "calls", "a_underflow", "a_subnormal", "a_overflow", "a_amax", "a_scale",
                "b_underflow", "b_subnormal", "b_overflow", "b_amax", "b_scale", "swamped")
        table = [head] + [tuple(_cell(row.get(k)) for k in keys) for row in rows]
        widths = [max(len(line[i]) for line in table) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
                 for line in table]
        lines.insert(1, "-" * len(lines[0]))
        note = ("shares of operand elements: under = underflowed to zero, sub = became subnormal, "
                "over = overflowed or saturated; swamped = share of the accumulator's additions "
                "that left the sum unchanged")
        return "\n".join(lines + ["", note])


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if value else "0"
    return str(value)


def _summarise(site: str, kind: str, records) -> dict:
    row = {"site": site, "kind": kind, "calls": len(records)}
    recs = [r.record for r in records if r.record is not None]
    if not recs:
        return row
    for side in ("a", "b"):
        ops = [_operand(rec, side) for rec in recs]
        total = sum(o["elements"] for o in ops) or 1
        for count in ("underflow", "subnormal", "overflow"):
            row[f"{side}_{count}"] = sum(o[count] for o in ops) / total
        amaxes = [o["amax"] for o in ops if o["amax"] is not None]
        row[f"{side}_amax"] = max(amaxes) if amaxes else None
        row[f"{side}_scale"] = ops[-1]["scale"]
    additions = sum(_additions(rec) for rec in recs)
    row["swamped"] = sum(_swamped(rec) for rec in recs) / additions if additions else None
    return row


def _operand(record, side: str) -> dict:
    """The counts of operand ``side`` ("a" or "b") of a GemmRecord."""
    op = getattr(record, side)
    scale = op.scale
    if scale is not None and getattr(scale, "ndim", 0):
        scale = f"{scale.size} blocks"  # per-tile / per-block scales
    return {"elements": op.elements, "underflow": op.underflow_zero, "subnormal": op.underflow_subnormal,
            "overflow": op.overflow, "amax": op.amax, "scale": None if scale is None else
            (scale if isinstance(scale, str) else float(scale))}


def _additions(record) -> int:
    return record.additions or 0


def _swamped(record) -> int:
    return record.swamped or 0
