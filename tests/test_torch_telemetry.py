"""softfloat.torch's telemetry plot (Telemetry.plot, Emulation.plot): the bars are the
(site, kind) rows of the report with the largest shares, in order, their widths the
report's shares; the counts behind them are the records' (hand-built records with known
counts, and a real emulated model); errors and the missing-extra message."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import softfloat as sf  # noqa: E402
import softfloat.torch as sft  # noqa: E402
from softfloat.recipes import GemmRecord, OperandRecord  # noqa: E402
from softfloat.torch import GemmTelemetry, Telemetry  # noqa: E402

E4M3 = sf.as_format("fp8_e4m3fn")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _bars(ax):
    return ([t.get_text() for t in ax.get_yticklabels()], [float(p.get_width()) for p in ax.patches])


def _product(site, kind, a=(0, 0, 0), b=(0, 0, 0), elements=100, additions=1000, swamped=0):
    """A product whose operands had (underflow to zero, subnormal, overflow) counts a, b."""
    ra = OperandRecord(E4M3, elements, *a, 0)
    rb = OperandRecord(E4M3, elements, *b, 0)
    return GemmTelemetry(site, kind, "linear", (10, 10, 10), GemmRecord(kind, site, ra, rb, additions, swamped,
                                                                        None))


def _telemetry():
    t = Telemetry()
    for record in [_product("h.0.attn", "fprop", a=(3, 1, 0), b=(0, 0, 2), swamped=10),
                   _product("h.0.attn", "dgrad", a=(0, 0, 0), b=(25, 0, 0), swamped=400),
                   _product("h.0.mlp", "fprop", a=(10, 50, 0), b=(0, 0, 0)),
                   _product("h.0.mlp", "fprop", a=(20, 0, 7), b=(0, 0, 0)),  # a second call: counts add up
                   _product("h.1.mlp", "wgrad", a=(1, 0, 0), b=(0, 2, 90), swamped=999),
                   _product("head", "fprop")]:
        t.append(record)
    return t


def test_underflow_bars_are_the_worst_sites_with_their_shares():
    ax = _telemetry().plot("underflow", top=3)
    # shares by hand: h.0.attn dgrad 25/100 (B); h.0.mlp fprop (10 + 20)/200 (A);
    # h.0.attn fprop 3/100 (A); h.1.mlp wgrad 1/100; head 0
    assert _bars(ax) == (["h.0.attn dgrad", "h.0.mlp fprop", "h.0.attn fprop"], [0.25, 0.15, 0.03])


@pytest.mark.parametrize("metric, want", [
    ("subnormal", (["h.0.mlp fprop", "h.1.mlp wgrad", "h.0.attn fprop", "h.0.attn dgrad", "head fprop"],
                   [0.25, 0.02, 0.01, 0.0, 0.0])),
    ("overflow", (["h.1.mlp wgrad", "h.0.mlp fprop", "h.0.attn fprop"], [0.9, 0.035, 0.02])),
    ("swamped", (["h.1.mlp wgrad", "h.0.attn dgrad", "h.0.attn fprop"], [0.999, 0.4, 0.01])),
    ("b_overflow", (["h.1.mlp wgrad", "h.0.attn fprop", "h.0.attn dgrad"], [0.9, 0.02, 0.0])),
])
def test_each_metric(metric, want):
    top = len(want[0])
    assert _bars(_telemetry().plot(metric, top=top)) == want


def test_the_bars_equal_the_reports_shares_in_order():
    t = _telemetry()
    rows = t.summary()
    for metric, columns in (("underflow", ("a_underflow", "b_underflow")), ("swamped", ("swamped",))):
        shares = {f"{r['site']} {r['kind']}": max(r[c] for c in columns) for r in rows}
        want = sorted(shares.items(), key=lambda item: -item[1])
        labels, widths = _bars(t.plot(metric, top=len(rows)))
        assert list(zip(labels, widths)) == want
    ax = t.plot("underflow")
    assert ax.get_ylim()[0] > ax.get_ylim()[1]  # the y axis runs downward: the worst bar on top


def test_a_real_model_the_worst_layers():
    """fp8 without scaling on a model whose second layer sees tiny inputs: that layer's
    forward product underflows most, and the bars are the report's shares."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Linear(16, 4))
    with torch.no_grad():
        model[1].weight.mul_(1e-4)
    x = torch.randn(8, 16) * 1e-3
    with sft.emulate("fp8", accumulator="fp32", model=model) as em:
        model(x).sum().backward()
    rows = em.telemetry.summary()
    shares = sorted(((f"{r['site']} {r['kind']}", max(r["a_underflow"], r["b_underflow"])) for r in rows),
                    key=lambda item: -item[1])
    ax = em.plot("underflow", top=2)
    assert list(zip(*_bars(ax))) == shares[:2] and shares[0][1] > 0
    assert "recipe fp8" in ax.get_title()
    counted = [r.record for r in em.telemetry if f"{r.site} {r.kind}" == shares[0][0]]
    under = sum(rec.a.underflow_zero for rec in counted), sum(rec.b.underflow_zero for rec in counted)
    elements = sum(rec.a.elements for rec in counted), sum(rec.b.elements for rec in counted)
    assert shares[0][1] == max(under[0] / elements[0], under[1] / elements[1])


def test_it_draws_into_the_given_axes():
    fig, ax = plt.subplots()
    assert _telemetry().plot("overflow", top=1, ax=ax) is ax and len(ax.patches) == 1


def test_empty_telemetry_draws_no_bars():
    ax = Telemetry().plot()
    assert _bars(ax) == ([], []) and "no emulated products" in ax.get_title()


def test_records_without_counts_are_left_out():
    t = Telemetry()
    t.append(GemmTelemetry("x", "fprop", "linear", (1, 1, 1), None))
    t.append(_product("y", "fprop", a=(5, 0, 0)))
    assert _bars(t.plot()) == (["y fprop"], [0.05])


def test_bad_arguments_name_themselves():
    t = _telemetry()
    with pytest.raises(ValueError, match="metric"):
        t.plot("underflows")
    with pytest.raises(TypeError, match="top"):
        t.plot(top="3")
    with pytest.raises(ValueError, match="top"):
        t.plot(top=0)


def test_without_matplotlib_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # as if it were not installed
    with pytest.raises(ImportError, match=r"softfloat-emu\[plot\]"):
        _telemetry().plot()


def test_attention_products_carry_their_suffixes():
    """GemmTelemetry.op's documentation: attention's two products are ".qk" and ".pv"."""
    q, k, v = (torch.randn(1, 2, 4, 8) for _ in range(3))
    with sft.emulate("bf16", accumulator="fp32") as em:
        F.scaled_dot_product_attention(q, k, v)
    assert {r.op for r in em.telemetry} == {"attention"}
    assert {r.site.rsplit(".", 1)[1] for r in em.telemetry} == {"pv", "qk"}  # one pair per batch and head
    assert np.all([r.kind == "fprop" for r in em.telemetry])
