"""The rounding attributes of sum, vecdot and matmul: ``attributes=`` and its keyword
shortcuts (a keyword given wins), the platform's tininess, ``saturate=`` in every IEEE
rounding (checked against the exact reference with saturating roundings), and the
windowed chains' obedience to the shortcuts' off switch."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat import _fastpaths
from softfloat.accumulate import _binade, _ieee
from tests import accumulate_oracle as ora
from tests import oracle
from tests.accumulate_checks import FUNCS, REFS, pats, random_patterns

MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]


def _compare(got, want, what=""):
    """softfloat's (bits, AccumulationFlags) against the reference's (bits, flag dict)."""
    got_bits, got_flags = got
    want_bits, want_flags = want
    assert np.array_equal(np.asarray(got_bits), want_bits), (what, got_bits, want_bits)
    for name in ora.FLAG_FIELDS:
        assert np.array_equal(np.asarray(getattr(got_flags, name)), want_flags[name]), (what, name)


def _reference(monkeypatch, kind, *args, saturating=None, **kw):
    """The exact reference of ``kind``, its roundings saturating: every one (``saturating``
    "all"), or only those into the one format ``saturating``."""
    def round_exact(q, negative, fmt, mode, **options):
        saturate = saturating == "all" or fmt == saturating
        return oracle.round_exact(q, negative, fmt, mode, saturate=saturate, **options)

    with monkeypatch.context() as m:
        if saturating is not None:
            m.setattr(ora, "round_exact", round_exact)
        return REFS[kind](*args, **kw)


# =====================================================================================
# attributes= and the keywords
# =====================================================================================
@pytest.mark.parametrize("kind", ["sum", "vecdot", "matmul"])
@pytest.mark.parametrize("mode", MODES)
def test_attributes_round_as_their_keywords_do(kind, mode):
    fmt = sf.bf16
    rng = np.random.default_rng(len(kind) + len(mode))
    x = random_patterns(rng, fmt, (3, 6))
    y = random_patterns(rng, fmt, (6, 2) if kind == "matmul" else (3, 6))
    args = (x,) if kind == "sum" else (x, y)
    opts = dict(accumulator="bf16", out_format="fp8_e5m2")
    want = REFS[kind](*args, fmt, rounding=mode, **opts)
    attrs = sf.RoundingAttributes(rounding=mode)
    _compare(FUNCS[kind](*args, fmt, attributes=attrs, return_flags=True, **opts), want, "attributes")
    # a keyword given wins over the same field of attributes
    other = sf.RoundingAttributes(rounding="upward" if mode != "upward" else "downward")
    _compare(FUNCS[kind](*args, fmt, attributes=other, rounding=mode, return_flags=True, **opts), want,
             "keyword wins")


def _tiny_terms():
    """fp32 terms whose fp16 roundings decide tininess differently before and after
    rounding: 2**-14 * (1 - 2**-12) rounds up to fp16's smallest normal 2**-14."""
    t = np.float32(2.0**-14 * (1 - 2.0**-12))
    return sf.encode(np.array([[t], [-t], [t * 2], [t / 2]], dtype=np.float32), "fp32")


def test_the_platforms_tininess_is_the_default_and_a_keyword_wins():
    x = _tiny_terms()
    for attrs, tininess in ((None, "after"), (sf.RoundingAttributes(platform="arm"), "before"),
                            (sf.RoundingAttributes(tininess="before"), "before")):
        want = ora.ref_sum(x, "fp32", axis=1, accumulator="fp16", tininess=tininess)
        got = sf.sum(x, "fp32", axis=1, accumulator="fp16", attributes=attrs, return_flags=True)
        _compare(got, want, (attrs, tininess))
    after = ora.ref_sum(x, "fp32", axis=1, accumulator="fp16")[1]["underflow"]
    assert (want[1]["underflow"] != after).any()  # the cases do tell the two apart
    got = sf.sum(x, "fp32", axis=1, accumulator="fp16", attributes=sf.RoundingAttributes(platform="arm"),
                 tininess="after", return_flags=True)
    _compare(got, ora.ref_sum(x, "fp32", axis=1, accumulator="fp16", tininess="after"), "keyword wins")


# =====================================================================================
# saturate=
# =====================================================================================
def test_saturate_keeps_a_sum_finite_where_ieee_overflows():
    # 60000 + 60000 overflows fp16: IEEE gives inf, and inf - 60000 stays inf; saturated,
    # the sum holds 65504 and comes back down to 65504 - 60000 = 5504
    x = pats([60000, 60000, -60000], sf.fp16)
    assert int(sf.sum(x, "fp16")) == 0x7C00
    bits, flags = sf.sum(x, "fp16", saturate=True, return_flags=True)
    assert float(sf.decode(bits, "fp16")) == 5504.0
    assert bool(flags.overflow) and bool(flags.inexact)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order, block", [("sequential", None), ("reverse", None), ("pairwise", None),
                                          ("sequential", 3), ("pairwise", 2)])
@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2"])
def test_saturated_sums_equal_the_reference(fmt, mode, order, block, monkeypatch):
    fmt = sf.as_format(fmt)
    rng = np.random.default_rng(fmt.bits + len(mode) + len(order))
    emax = (fmt.max_finite_bits >> fmt.mantissa_bits) - ora.bias_of(fmt)
    x = random_patterns(rng, fmt, (6, 9), center=emax, spread=2, specials=0.05)
    x[0] = fmt.max_finite_bits  # overflows in every order and mode
    kw = dict(axis=1, order=order, block=block, rounding=mode)
    want = _reference(monkeypatch, "sum", x, fmt, saturating="all", **kw)
    assert want[1]["overflow"].any()
    _compare(sf.sum(x, fmt, saturate=True, return_flags=True, **kw), want)
    # without flags too (the windowed chains run only then)
    assert np.array_equal(sf.sum(x, fmt, saturate=True, **kw), want[0])


@pytest.mark.parametrize("fmt", ["fp16", "fp32", "fp64"])
@pytest.mark.parametrize("order", ["sequential", "pairwise"])
def test_saturate_takes_native_accumulators_off_their_fast_path(fmt, order, monkeypatch):
    # fp32 and fp64 sums in their own format, and fp16 into fp32 rounded into fp16, are
    # numpy's arithmetic otherwise (which overflows to infinity)
    fmt = sf.as_format(fmt)
    rng = np.random.default_rng(fmt.bits)
    emax = (fmt.max_finite_bits >> fmt.mantissa_bits) - ora.bias_of(fmt)
    x = random_patterns(rng, fmt, (4, 12), center=emax, spread=1)
    kw = dict(axis=1, order=order)
    if fmt == sf.fp16:
        kw.update(accumulator="fp32", out_format="fp16")
    want = _reference(monkeypatch, "sum", x, fmt, saturating="all", **kw)
    assert want[1]["overflow"].any()
    _compare(sf.sum(x, fmt, saturate=True, return_flags=True, **kw), want)
    assert np.array_equal(sf.sum(x, fmt, saturate=True, **kw), want[0])


@pytest.mark.parametrize("mode", ["nearest_even", "toward_zero", "upward"])
def test_saturated_products_and_promotions_equal_the_reference(mode, monkeypatch):
    rng = np.random.default_rng(3)
    fmt = sf.fp16
    a = random_patterns(rng, fmt, (3, 8), center=9, spread=2)
    b = random_patterns(rng, fmt, (8, 4), center=9, spread=2)
    for kw in (dict(product="fp16", accumulator="fp32"),  # products near 2**18 saturate in fp16
               dict(accumulator="fp16"),
               dict(accumulator="bf16", out_format="fp8_e4m3", block=3),
               dict(accumulator="fp32", out_format="fp8_e5m2", order="pairwise")):
        want = _reference(monkeypatch, "matmul", a, b, fmt, saturating="all", rounding=mode, **kw)
        assert want[1]["overflow"].any(), kw
        _compare(sf.matmul(a, b, fmt, saturate=True, rounding=mode, return_flags=True, **kw), want, kw)
        want = _reference(monkeypatch, "vecdot", a[:2], b.T[:2], fmt, saturating="all", rounding=mode, **kw)
        _compare(sf.vecdot(a[:2], b.T[:2], fmt, saturate=True, rounding=mode, return_flags=True, **kw),
                 want, kw)


def test_hardware_fused_steps_overflow_as_the_hardware_does(monkeypatch):
    # the fp16-output mode rounds each fused block to nearest even in fp16: 2 * 60000
    # overflows to inf whatever saturate says; the IEEE final rounding into e4m3 of an
    # fp32-output block saturates
    x = pats([[60000, 60000], [300, 300]], sf.fp16)
    got = sf.sum(x, "fp16", axis=1, accumulator="h100", out_format="fp16", saturate=True, return_flags=True)
    _compare(got, ora.ref_sum(x, "fp16", axis=1, accumulator="h100", out_format="fp16"))
    assert int(got[0][0]) == 0x7C00
    want = _reference(monkeypatch, "sum", x, "fp16", saturating=sf.fp8_e4m3, axis=1, accumulator="h100",
                      out_format="fp8_e4m3")
    got = sf.sum(x, "fp16", axis=1, accumulator="h100", out_format="fp8_e4m3", saturate=True,
                 return_flags=True)
    _compare(got, want)
    assert float(sf.decode(got[0][1], "fp8_e4m3")) == 448.0


def test_saturate_through_dask_equals_in_memory():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(11)
    x = random_patterns(rng, sf.fp16, (5, 40), center=15, spread=2)
    for kw in (dict(accumulator="fp16"),  # k chunks chained in fp16
               dict(accumulator="fp32", out_format="fp16"),  # chained, then one lazy rounding
               dict(accumulator="fp16", order="pairwise"),
               dict(accumulator="fp32", out_format="fp16", attributes=sf.RoundingAttributes(platform="arm"),
                    rounding="upward")):
        want = sf.sum(x, "fp16", axis=1, saturate=True, return_flags=True, **kw)
        got = sf.sum(da.from_array(x, chunks=(2, 7)), "fp16", axis=1, saturate=True, return_flags=True, **kw)
        bits, flags = got
        assert np.array_equal(bits.compute(), want[0]), kw
        for name in ora.FLAG_FIELDS:
            assert np.array_equal(np.asarray(getattr(flags, name)), np.asarray(getattr(want[1], name))), (kw, name)


# =====================================================================================
# the windowed chains and the off switch
# =====================================================================================
@pytest.mark.parametrize("mode", MODES)
def test_windowed_chains_obey_the_off_switch(mode, monkeypatch):
    # long chains over few outputs (bf16 in bf16: no native fast path) take the windows
    # while the shortcuts are on, and the general path's steps when they are off: the
    # same bits, and the same flags and swamped counts
    rng = np.random.default_rng(len(mode))
    fmt = sf.bf16
    x = sf.encode(np.concatenate([rng.standard_normal((3, 300)), np.full((3, 300), 2.0**-9)], axis=1),
                  fmt, "toward_zero")
    calls = []
    real_chain = _binade.chain

    def spy(*args, **kwargs):
        calls.append(1)
        return real_chain(*args, **kwargs)

    steps = []
    real_add = _ieee.Arithmetic.add

    def step_spy(self, *args, **kwargs):
        steps.append(1)
        return real_add(self, *args, **kwargs)

    monkeypatch.setattr(_binade, "chain", spy)
    monkeypatch.setattr(_ieee.Arithmetic, "add", step_spy)
    results = {}
    for enabled in (True, False):
        monkeypatch.setattr(_fastpaths, "ENABLED", enabled)
        calls.clear()
        steps.clear()
        bits = sf.sum(x, fmt, axis=1, rounding=mode)
        results[enabled] = (bits, len(calls), len(steps))
        results[enabled, "flags"] = sf.sum(x, fmt, axis=1, rounding=mode, return_flags=True)
    (on, on_windows, on_steps), (off, off_windows, off_steps) = results[True], results[False]
    assert on_windows > 0 and off_windows == 0  # both routes were taken
    assert off_steps >= x.shape[1] - 1 > on_steps
    assert np.array_equal(on, off)
    _compare(results[True, "flags"], (results[False, "flags"][0],
                                      {n: np.asarray(getattr(results[False, "flags"][1], n))
                                       for n in ora.FLAG_FIELDS}))
    # and both are the reference's
    want = ora.ref_sum(x, fmt, axis=1, rounding=mode)
    assert np.array_equal(on, want[0])
    _compare(results[True, "flags"], want)
