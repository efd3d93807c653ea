"""The codec's value-grid routes without flags (softfloat._fastpaths._value_grid: the grid
kernel that computes each lane's spacing from its exponent field, ``round_block``; the
pattern kernel ``encode_block``, which float64 -> fp16 encode takes over the whole range;
float32 -> fp16 quantize by the grid instead of its lookup table) against the general
path (every shortcut off), numpy's float16 cast and ml_dtypes' bfloat16 cast (nearest
even), on every 16-bit pattern and on adversarial float64 / float32 inputs -- ties, just
above and below them, overflow thresholds, subnormal boundaries, zeros, infinities,
NaNs -- in every deterministic mode."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat._fastpaths import _odd32, _value_grid
from tests.fastpath_checks import general

ml_dtypes = pytest.importorskip("ml_dtypes")

MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]


def adversarial(fmt, dtype):
    """Every finite value of ``fmt`` of both signs, the midpoints between neighbours (ties),
    the floats of ``dtype`` just above and below each, the overflow thresholds and
    beyond, the subnormal boundaries, zeros, infinities and NaNs -- shuffled, so that
    every block mixes them (no block lies in the normal range only)."""
    values = sf.decode(np.arange(1 << (fmt.bits - 1), dtype=fmt.storage_dtype), fmt)
    values = values[np.isfinite(values)]
    mids = (values[:-1] + values[1:]) / 2  # exact in float64
    top, tiny = float(fmt.max_finite), float(fmt.min_subnormal)
    threshold = top + 2.0 ** (fmt.emax - fmt.mantissa_bits - 1)  # nearest modes overflow from here
    edges = np.array([top, threshold, 2.0 ** (fmt.emax + 1), 1e30, 1e300, 5e-324, tiny, tiny / 2, tiny / 4,
                      float(fmt.min_normal), float(fmt.min_normal) - tiny / 2])
    with np.errstate(over="ignore"):
        base = np.concatenate([values, mids, edges]).astype(dtype)
        base = base[np.isfinite(base)]
        near = np.concatenate([base, np.nextafter(base, np.inf), np.nextafter(base, -np.inf)])
    near = near[np.isfinite(near)]
    x = np.concatenate([near, -near, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan], dtype=dtype)])
    np.random.default_rng(23).shuffle(x)
    return x


@pytest.fixture(scope="module")
def inputs():
    return {(fmt.name, np.dtype(dt).name): adversarial(fmt, dt)
            for fmt in (sf.fp16, sf.bf16) for dt in (np.float64, np.float32)}


def _same_bits(got, want, x, what):
    bad = np.flatnonzero(got.view(f"u{got.dtype.itemsize}") != want.view(f"u{want.dtype.itemsize}"))
    assert bad.size == 0, f"{what}: {bad.size} lanes differ, first x={float(x[bad[0]]).hex()}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fp16_encode_and_quantize_equal_the_general_path(inputs, dtype, mode):
    x = inputs[("fp16", dtype)]
    for kw in ({}, {"workers": 1}):
        bits = sf.encode(x, sf.fp16, mode, **kw)
        values = sf.quantize(x, sf.fp16, mode, **kw)
        want_bits = general(lambda: sf.encode(x, sf.fp16, mode))
        want_values = general(lambda: sf.quantize(x, sf.fp16, mode))
        _same_bits(bits, want_bits, x, f"encode {dtype} {mode}")
        assert values.dtype == want_values.dtype
        _same_bits(values, want_values, x, f"quantize {dtype} {mode}")


@pytest.mark.parametrize("mode", MODES)
def test_bf16_quantize_and_encode_equal_the_general_path(inputs, mode):
    x = inputs[("bf16", "float64")]
    _same_bits(sf.encode(x, sf.bf16, mode), general(lambda: sf.encode(x, sf.bf16, mode)), x, "bf16 encode")
    _same_bits(sf.quantize(x, sf.bf16, mode), general(lambda: sf.quantize(x, sf.bf16, mode)), x, "bf16 quantize")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nearest_even_equals_numpys_float16_cast(inputs, dtype):
    """numpy's float64/float32 -> float16 cast: IEEE convertFormat, nearest even (NaNs
    compared as NaNs: the payload is the codec's rule)."""
    x = inputs[("fp16", dtype)]
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float16)
    nan = np.isnan(x)
    bits = sf.encode(x, sf.fp16)
    assert np.array_equal(bits[~nan], want[~nan].view(np.uint16))
    assert np.all((bits[nan] & 0x7C00) == 0x7C00) and np.all(bits[nan] & 0x03FF)
    values = sf.quantize(x, sf.fp16)
    assert np.array_equal(values[~nan], want[~nan].astype(x.dtype)) and np.isnan(values[nan]).all()


def test_bf16_nearest_even_equals_ml_dtypes(inputs):
    """float32 input (ml_dtypes casts float64 by way of float32: a double rounding)."""
    x = inputs[("bf16", "float32")]
    x = x[~np.isnan(x)]
    with np.errstate(over="ignore"):
        want = x.astype(ml_dtypes.bfloat16)
    assert np.array_equal(sf.encode(x, sf.bf16), want.view(np.uint16))
    assert np.array_equal(sf.quantize(x, sf.bf16), want.astype(np.float32))


@pytest.mark.parametrize("mode", MODES)
def test_every_fp16_pattern_through_the_pattern_kernel(mode):
    """encode_block itself on every fp16 value (and infinity), float64 and float32: the
    values' own patterns (zeros with their signs), NaN lanes left as ``rest``."""
    patterns = np.arange(1 << 16, dtype=np.uint16)
    for dtype in (np.float64, np.float32):
        x = sf.decode(patterns, sf.fp16, dtype)
        plan = _value_grid.plan(sf.fp16, dtype, sf.RoundingAttributes(mode))
        out = np.empty(x.size, dtype=np.uint16)
        rest = _value_grid.encode_block(plan, x, out, _Fresh())
        assert np.array_equal(rest, np.isnan(x) | np.isinf(x))
        ok = ~rest
        assert np.array_equal(out[ok], patterns[ok])


@pytest.mark.parametrize("mode", MODES)
def test_the_routes_ran(mode, monkeypatch):
    """Spies: float64 -> fp16 encode without flags goes by the pattern kernel (and never by
    the odd/table passes; except in odd), float32 -> fp16 quantize by the
    grid kernel; both equal the
    general path on a whole-range array with infinities and NaNs (left to it)."""
    runs = {"encode": 0, "grid": 0, "odd": 0}
    real_encode, real_grid, real_odd = _value_grid.encode_block, _value_grid.round_block, _odd32.to_float32_odd

    def spy(name, real):
        def call(*args):
            runs[name] += 1
            return real(*args)
        return call

    monkeypatch.setattr(_value_grid, "encode_block", spy("encode", real_encode))
    monkeypatch.setattr(_value_grid, "round_block", spy("grid", real_grid))
    monkeypatch.setattr(_odd32, "to_float32_odd", spy("odd", real_odd))
    rng = np.random.default_rng(5)
    x = np.exp2(rng.uniform(-27, 18, 600_001)) * rng.choice([-1.0, 1.0], 600_001)
    x[::1001] = np.inf
    x[7::2003] = np.nan
    x[9::307] = -0.0
    bits = sf.encode(x, sf.fp16, mode)
    if mode == "odd":  # (where the odd/table passes were as fast)
        assert runs["encode"] == 0 and runs["odd"] >= 2
    else:
        assert runs["encode"] >= 2 and runs["odd"] == 0
    runs["odd"] = 0
    _same_bits(bits, general(lambda: sf.encode(x, sf.fp16, mode)), x, "encode")
    x32 = x.astype(np.float32)
    runs["grid"] = 0
    values = sf.quantize(x32, sf.fp16, mode)
    assert runs["grid"] >= 2
    _same_bits(values, general(lambda: sf.quantize(x32, sf.fp16, mode)), x32, "quantize float32")
    flagged, flags = sf.encode(x, sf.fp16, mode, return_flags=True)  # with flags: the odd/table passes
    assert runs["odd"] >= 1
    want, want_flags = general(lambda: sf.encode(x, sf.fp16, mode, return_flags=True))
    _same_bits(flagged, want, x, "encode with flags")
    for name in ("invalid", "overflow", "underflow", "inexact"):
        assert np.array_equal(getattr(flags, name), getattr(want_flags, name)), name


@pytest.mark.parametrize("options", [{"saturate": True}, {"subnormals": False}, {"tininess": "before"}])
def test_options_the_grid_declines_keep_the_general_results(inputs, options):
    x = inputs[("fp16", "float64")]
    for mode in ("nearest_even", "upward"):
        _same_bits(sf.encode(x, sf.fp16, mode, **options), general(lambda: sf.encode(x, sf.fp16, mode, **options)),
                   x, f"encode {options}")
        _same_bits(sf.quantize(x, sf.fp16, mode, **options),
                   general(lambda: sf.quantize(x, sf.fp16, mode, **options)), x, f"quantize {options}")


class _Fresh:
    @staticmethod
    def get(name, dtype, n):
        return np.empty(n, dtype=dtype)
