"""What the emulated products did, per call: :class:`GemmTelemetry` records, collected
in a :class:`Telemetry` that prints a per-site table, converts to pandas and plots the
worst call sites with matplotlib."""

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
        The torch function: "linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "mv",
        "dot", "inner", "einsum", "conv1d", "conv2d" or "attention"
        (``F.scaled_dot_product_attention``, whose two products carry the site suffixes
        ".qk" for Q K^T and ".pv" for P V: ``"h.0.attn.qk"``).
    shape : tuple of int
        (M, K, N) of the product (of each product of a batched call).
    record : softfloat.recipes.GemmRecord or None
        The engine's counts (per operand: underflows to zero, subnormals,
        overflows/saturations, non-finite values, amax, scale; the accumulator's
        swamped additions); None when the emulation was started with
        ``telemetry=False``.
    batch : int, default 1
        How many products of ``shape`` the call ran as one (bmm, a batched matmul,
        the heads of an attention, the groups of a grouped convolution): the record
        counts them all, and a per-tensor scale was one for all of them.
    """

    site: str
    kind: str
    op: str
    shape: tuple
    record: object = None
    batch: int = 1

    def row(self) -> dict:
        """The record as one flat dict (nested fields joined with ``_``)."""
        m, k, n = self.shape
        row = {"site": self.site, "kind": self.kind, "op": self.op, "batch": self.batch, "m": m, "k": k, "n": n}
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
    products run later are added as they run).

    It keeps every record (one per product, a few hundred bytes each with the engine's
    counts) until :meth:`clear`: in a long run, read or summarise it per step and clear
    it, or start the emulation with ``telemetry=False``, which records nothing."""

    def __init__(self):
        self._records: list[GemmTelemetry] = []

    def append(self, record: GemmTelemetry) -> None:  # the emulation's, not the user's
        self._records.append(record)

    def clear(self) -> None:
        """Forget the records so far (later products are recorded as before)."""
        self._records = []

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

    def plot(self, metric: str = "underflow", top: int = 10, ax=None):
        """A horizontal bar chart of the ``top`` call sites (per site and kind, as in
        :meth:`summary`) with the largest share of ``metric``, the worst on top (needs
        matplotlib: ``pip install "softfloat-emu[plot]"``).

        Parameters
        ----------
        metric : str, default "underflow"
            "underflow" (operand elements that underflowed to zero), "subnormal" (became
            subnormal), "overflow" (overflowed or saturated): the larger of the two
            operands' shares, as :meth:`report` lists them; "swamped": the share of the
            accumulator's additions that left the sum unchanged.  One operand's column
            alone: "a_underflow", "b_overflow", ...
        top : int, default 10
            How many bars at most.
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure's).

        Returns
        -------
        matplotlib.axes.Axes
            One bar per (site, kind), labelled ``"site kind"``, its width the share.

        Raises
        ------
        ValueError, TypeError
            An unknown ``metric``; a ``top`` that is not a positive int.
        ImportError
            Without matplotlib.

        Examples
        --------
        >>> import matplotlib; matplotlib.use("Agg")
        >>> import softfloat as sf
        >>> from softfloat.recipes import GemmRecord, OperandRecord
        >>> def product(site, under):  # 100 elements per operand, ``under`` of A became 0
        ...     a = OperandRecord(sf.as_format("fp8_e4m3fn"), 100, under, 0, 0, 0)
        ...     b = OperandRecord(sf.as_format("fp8_e4m3fn"), 100, 0, 0, 0, 0)
        ...     return GemmTelemetry(site, "fprop", "linear", (10, 10, 10),
        ...                          GemmRecord("fprop", site, a, b, 1000, 0, None))
        >>> t = Telemetry()
        >>> for site, under in [("h.0.mlp", 5), ("h.1.mlp", 40), ("head", 0)]:
        ...     t.append(product(site, under))
        >>> ax = t.plot("underflow", top=2)
        >>> [label.get_text() for label in ax.get_yticklabels()], [float(bar.get_width()) for bar in ax.patches]
        (['h.1.mlp fprop', 'h.0.mlp fprop'], [0.4, 0.05])
        """
        if not isinstance(metric, str) or metric not in _METRICS:
            raise ValueError(f"metric must be one of {', '.join(map(repr, _METRICS))}; got {metric!r}")
        if isinstance(top, bool) or not isinstance(top, int):
            raise TypeError(f"top must be a positive int; got {type(top).__name__}")
        if top < 1:
            raise ValueError(f"top must be a positive int; got {top}")
        try:
            import matplotlib
            if ax is None:
                import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError(missing_dependency("Telemetry.plot", "matplotlib", "plot")) from None
        worst = _worst(self.summary(), metric, top)
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 0.9 + 0.35 * max(len(worst), 1)))
        labels = [label for label, _ in worst]
        ax.barh(range(len(worst)), [share for _, share in worst], color=matplotlib.colormaps["tab10"](0))
        ax.set_yticks(range(len(worst)), labels)
        if worst:
            ax.set_ylim(len(worst) - 0.5, -0.5)  # the worst on top
        ax.set_xlabel(_METRICS[metric][1])
        ax.set_title(f"worst call sites by {metric}" if worst else "no emulated products with this share yet")
        return ax


#: the shares :meth:`Telemetry.plot` draws: per metric, the summary columns (the larger
#: of the two operands' shares where there are two) and the axis label
_METRICS = {
    "underflow": (("a_underflow", "b_underflow"), "share of operand elements that underflowed to zero"),
    "subnormal": (("a_subnormal", "b_subnormal"), "share of operand elements that became subnormal"),
    "overflow": (("a_overflow", "b_overflow"), "share of operand elements that overflowed or saturated"),
    "swamped": (("swamped",), "share of the accumulator's additions that were swamped"),
}
_METRICS.update({column: ((column,), f"{label} ({column[0].upper()})")
                 for columns, label in list(_METRICS.values()) for column in columns if column[1] == "_"})


def _worst(rows, metric: str, top: int) -> list[tuple[str, float]]:
    """``(label, share)`` of the ``top`` (site, kind) rows of :meth:`Telemetry.summary`
    with the largest shares of ``metric``, largest first (ties: in the table's order);
    rows without that share (no record) are left out."""
    columns = _METRICS[metric][0]
    found = []
    for row in rows:
        shares = [row[c] for c in columns if row.get(c) is not None]
        if shares:
            found.append((f"{row['site']} {row['kind']}", max(shares)))
    found.sort(key=lambda item: -item[1])  # stable: equal shares keep the table's order
    return found[:top]


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
