"""The libm ufuncs' table route (softfloat._array_libm._by_table: one-operand libm
ufuncs on formats of at most 16 bits, a table of every pattern's bits and flags filled by
the general route) against the documented composition -- float64 libm on the exact
values, then one rounding into the format -- computed here with the codec (encode with
flags; inexact on every finite libm result, invalid where a NaN comes from a non-NaN, an
infinity from a finite operand an overflow or, at log's pole, a division by zero),
and against numpy's own float64 -> float16 cast for the bits: every fp16 pattern through
1-element and 1,000-element Arrays, flags included, in several contexts."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat import _array_libm
from softfloat.platforms import NanPropagation
from softfloat.ops.kernels import default_nan
from tests.fastpath_checks import general

ALL = np.arange(1 << 16, dtype=np.uint16)
NAMES = ("invalid", "divide_by_zero", "overflow", "underflow", "inexact")


def _composition(ufunc, fmt, ctx, patterns):
    """(bits, {flag: mask}) of the documented composition, with the codec's encode."""
    x = sf.decode(patterns, fmt)
    with np.errstate(all="ignore"):
        values = ufunc(x)
    bits, flags = sf.encode(values, fmt, return_flags=True, attributes=ctx.attributes)
    bits = np.array(bits, dtype=fmt.storage_dtype)
    nan_out = np.isnan(values)
    invalid = nan_out & ~np.isnan(x)
    default = ctx.attributes.platform.nan_propagation is NanPropagation.DEFAULT_NAN
    bits[nan_out if default else invalid] = default_nan(fmt, ctx.attributes)
    masks = {name: np.asarray(getattr(flags, name)) for name in NAMES}
    masks["inexact"] = masks["inexact"] | np.isfinite(values)
    masks["invalid"] = masks["invalid"] | invalid
    # an infinity from a finite operand: log's pole at 0 divides by zero, the rest
    # overflow (numpy's float64 errors, checked in tests/test_array_functions.py)
    made = np.isinf(values) & np.isfinite(x)
    pole = made & (x == 0) if ufunc in (np.log, np.log2, np.log10) else np.zeros_like(made)
    masks["divide_by_zero"] = masks["divide_by_zero"] | pole
    masks["overflow"] = masks["overflow"] | (made & ~pole)
    masks["inexact"] = masks["inexact"] | (made & ~pole)
    return bits, masks


def _filled(ufunc, fmt, ctx):
    entry = _array_libm._TABLES.get((ufunc, id(fmt), id(ctx.attributes)))
    return entry is not None and entry[3] is not None


CONTEXTS = [{}, {"rounding": "upward"}, {"rounding": "toward_zero"}, {"tininess": "before"},
            {"platform": "riscv"}, {"subnormals": False}]


@pytest.mark.parametrize("changes", CONTEXTS)
@pytest.mark.parametrize("ufunc", [np.exp, np.log, np.tanh])
def test_every_fp16_pattern_one_element_arrays(ufunc, changes):
    """Each of the 65536 patterns as a 1-element Array (and as 0-d ones, for a sample):
    the bits and the per-element flags of the context's last operation."""
    fmt = sf.fp16
    with sf.context(**changes) as ctx:
        want, masks = _composition(ufunc, fmt, ctx, ALL)
        got = np.empty(ALL.size, dtype=np.uint16)
        got_flags = {name: np.empty(ALL.size, dtype=bool) for name in NAMES}
        arrays = [sf.Array(ALL[i:i + 1], fmt) for i in range(ALL.size)]
        for i, a in enumerate(arrays):
            r = ufunc(a)
            got[i] = r.bits[0]
            last = ctx.flags.last
            for name in NAMES:
                got_flags[name][i] = bool(np.asarray(getattr(last, name)).reshape(-1)[0])
        assert _filled(ufunc, fmt, ctx)
        for i in range(0, ALL.size, 61):  # 0-d Arrays
            r = ufunc(sf.Array(ALL[i:i + 1].reshape(()), fmt))
            assert r.shape == () and int(r.bits) == int(want[i])
    assert np.array_equal(got, want)
    for name in NAMES:
        assert np.array_equal(got_flags[name], masks[name]), name


@pytest.mark.parametrize("changes", CONTEXTS)
@pytest.mark.parametrize("ufunc", [np.exp, np.log, np.sin, np.expm1])
def test_every_fp16_pattern_thousand_element_arrays(ufunc, changes):
    """The 65536 patterns in Arrays of 1000 (and one of 5000, beyond the short route) after
    the table is filled: bits, per-element flags and the context's counts."""
    fmt = sf.fp16
    with sf.context(**changes) as ctx:
        want, masks = _composition(ufunc, fmt, ctx, ALL)
        probe = sf.Array(ALL[:1000], fmt)
        for _ in range(_array_libm.TABLE_AFTER):
            ufunc(probe)
        assert _filled(ufunc, fmt, ctx)
        for size in (1000, 5000):
            for start in range(0, ALL.size, size):
                ctx.flags.clear()
                stop = min(start + size, ALL.size)
                r = ufunc(sf.Array(ALL[start:stop], fmt))
                assert np.array_equal(r.bits, want[start:stop])
                last = ctx.flags.last
                for name in NAMES:
                    m = masks[name][start:stop]
                    assert np.array_equal(np.asarray(getattr(last, name)), m), name
                    assert getattr(ctx.flags, name) == int(m.sum()), name


@pytest.mark.parametrize("ufunc", [np.exp, np.log, np.tanh])
def test_uniform_and_mixed_flags_match_the_general_route(ufunc):
    """Arrays whose lanes all raise the same flags (the table route's packed-code Flags)
    and arrays that mix them, 2-D included: the same bits and flags as with every
    shortcut off."""
    fmt = sf.fp16
    x = sf.asarray(np.linspace(0.5, 3, 1000).reshape(40, 25), fmt)
    mixed = sf.Array(np.concatenate([ALL[:500], ALL[0x7BF0:0x7C10], ALL[0xFC00:0xFE10]]), fmt)
    for a in (x, mixed, x[:1], x[0, 0], mixed[:1]):
        with sf.context() as fast_ctx:
            for _ in range(_array_libm.TABLE_AFTER + 1):
                fast = ufunc(a)
            assert _filled(ufunc, fmt, fast_ctx)
        with sf.context() as slow_ctx:
            for _ in range(_array_libm.TABLE_AFTER + 1):
                slow = general(lambda: ufunc(a))
        assert fast.shape == slow.shape
        assert np.array_equal(np.asarray(fast.bits), np.asarray(slow.bits))
        for name in NAMES:
            assert getattr(fast_ctx.flags, name) == getattr(slow_ctx.flags, name), name
            assert np.array_equal(np.asarray(getattr(fast_ctx.flags.last, name)),
                                  np.asarray(getattr(slow_ctx.flags.last, name))), name


def test_the_bits_are_numpys_float16_cast_of_float64_exp():
    """An independent rounding: numpy's float64 -> float16 cast (nearest even)."""
    with np.errstate(all="ignore"):
        want = np.exp(ALL.view(np.float16).astype(np.float64)).astype(np.float16)
    with sf.context():
        a = sf.Array(ALL[:4000], sf.fp16)
        for _ in range(_array_libm.TABLE_AFTER + 1):
            got = np.exp(a)
        big = np.exp(sf.Array(ALL, sf.fp16))
    for bits, ref in ((got.bits, want[:4000]), (big.bits, want)):
        nan = np.isnan(ref)
        assert np.array_equal(np.isnan(sf.decode(bits, "fp16")), nan)
        assert np.array_equal(bits[~nan], ref[~nan].view(np.uint16))


def test_bf16_single_elements_and_traps():
    """Another 16-bit format (bf16: every pattern, 1-element Arrays) and trapped flags:
    the table route raises where the general route does."""
    fmt = sf.bf16
    with sf.context() as ctx:
        want, masks = _composition(np.exp, fmt, ctx, ALL)
        got = np.array([int(np.exp(sf.Array(ALL[i:i + 1], fmt)).bits[0]) for i in range(ALL.size)])
        assert _filled(np.exp, fmt, ctx)
    assert np.array_equal(got, want)
    with sf.context(traps={"overflow"}):
        a = sf.asarray([100.0], "fp16")
        for _ in range(_array_libm.TABLE_AFTER + 2):
            with pytest.raises(sf.Overflow):
                np.exp(a)


def test_stochastic_rounding_and_the_switch_take_the_general_route(monkeypatch):
    monkeypatch.setattr(_array_libm, "_TABLES", {})
    a = sf.asarray([0.3], sf.fp16)
    with sf.context(rounding="stochastic", rng=1):
        for _ in range(_array_libm.TABLE_AFTER + 2):
            np.exp(a)
    with sf.context():
        general(lambda: [np.exp(a) for _ in range(_array_libm.TABLE_AFTER + 2)])
    assert _array_libm._TABLES == {}
