"""softfloat.torch's scaled quantisation (scaled_encode_tensor) against the numpy
reference, softfloat.scaled_encode, bit for bit: element bits, scales, scale_inv, amax
and every IEEE flag, for each scaling the recipes use (per tensor current and given,
rows, 1x128 / 128x128 / 128x1 tiles, MX blocks of 32 with either scale rounding).

Data: normal values spread over binades (small, unit, huge magnitudes), zero rows and
tiles (amax 0), NaN and infinities, values that scale into the subnormal range or below
it, shapes the blocks do not divide, float32 / bfloat16 / float16 / float64 tensors;
other rounding modes, flush-to-zero, tininess before rounding and stochastic rounding
with the same seed; hypothesis cases.  bfloat16 tensors are compared with the reference
fed their float32 widening (the same values; NaN payloads shift the same way).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import softfloat as sf  # noqa: E402
from softfloat.recipes import OperandRecord  # noqa: E402
from softfloat.torch._scaled import operand_counts, scaled_encode_tensor  # noqa: E402

SEED = 7
FP8 = [sf.fp8_e4m3, sf.fp8_e5m2]
MX_FORMATS = [sf.fp8_e4m3, sf.fp8_e5m2, sf.fp6_e3m2, sf.fp6_e2m3, sf.fp4_e2m1]
#: (scaling keywords) as the recipes call scaled_encode (softfloat/recipes/_gemm.py)
RECIPE_CALLS = [
    dict(amax_epsilon=1e-12),                                # current scaling (torchao)
    dict(scale=sf.DelayedScaling("e4m3").scale),             # delayed: the state's scale (1)
    dict(scale=3.7e-3),                                      # a delayed scale, not a power of two
    dict(scaling="rows"),
    dict(scaling="blocks", block=(1, 128)),                  # DeepSeek-V3 activations
    dict(scaling="blocks", block=(128, 128)),                # weights
    dict(scaling="blocks", block=(128, 1)),                  # gradients in wgrad
    dict(scaling="mx", block=32, scale_rounding="floor"),    # OCP MX
    dict(scaling="mx", block=32, scale_rounding="ceil"),     # TE's MXFP8
]


def _data(shape, seed, spread=8, specials=True, centre=0):
    """float32 values: normal times 2**[centre - spread, centre + spread), a zero row and a
    zero 128-wide tile, tiny values, and (``specials``) NaNs and infinities."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(centre - spread, centre + spread, shape)
    x = x.astype(np.float32)
    flat = x.reshape(-1)
    if x.ndim >= 2 and x.shape[-2] > 2:
        x[..., 1, :] = 0.0  # a zero row
        x[..., 2:, :min(128, x.shape[-1])] *= 2.0**-60  # a tile that scales into the subnormals
    if flat.size > 8:
        idx = rng.choice(flat.size, size=min(6, flat.size // 3), replace=False)
        flat[idx[:2]] = np.float32(1e-41) * np.sign(flat[idx[:2]])  # fp32 subnormals
        if specials:
            flat[idx[2]] = np.nan
            flat[idx[3]] = -np.inf
            flat[idx[4]] = np.float32(-np.nan)
    return x


def _as_tensor(x, dtype):
    t = torch.from_numpy(np.ascontiguousarray(x))
    return t.to(dtype)


def _host(t):
    """The reference's input: float16/float32/float64 as they are, bfloat16 widened."""
    if t.dtype == torch.bfloat16:
        return t.to(torch.float32).numpy()
    return t.numpy()


def _u(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _nan_times_nan(x, expected):
    """Lanes where a NaN x meets an MX NaN block's NaN factor: the reference's NaN is the
    host's, whose SIMD loops give x's NaN in their body and the factor's in their tail
    (numpy on x86), so only "a NaN" is compared there (softfloat.torch gives x's)."""
    if expected.scaling != "mx" or x.size == 0:
        return np.zeros(x.shape, dtype=bool)
    block = expected.block[-1]
    nan_block = np.repeat(expected.scales == 0xFF, block, axis=-1)[..., :x.shape[-1]]
    return np.isnan(x) & nan_block


def check(t, fmt, **options):
    """scaled_encode_tensor(t) equals scaled_encode(t's values): bits, scales, scale_inv,
    amax and the five flag masks; returns the two results."""
    with np.errstate(invalid="ignore"):  # numpy's widening of a float32 signaling NaN warns
        expected, eflags = sf.scaled_encode(_host(t), fmt, return_flags=True, **options)
    got, gflags = scaled_encode_tensor(t, fmt, return_flags=True, **options)
    where = f"{fmt.name} {t.dtype} {tuple(t.shape)} {options}"
    assert got.bits.dtype == {1: torch.uint8, 2: torch.int16, 4: torch.int32}[expected.bits.dtype.itemsize]
    bits = np.atleast_1d(_u(got.bits.numpy()))
    expected = expected._replace(bits=np.atleast_1d(expected.bits))
    ambiguous = _nan_times_nan(_host(t), expected)
    if ambiguous.any():
        assert np.array_equal(np.isnan(sf.decode(bits[ambiguous], fmt)),
                              np.isnan(sf.decode(expected.bits[ambiguous], fmt))), where
    wrong = np.nonzero((bits != expected.bits) & ~ambiguous.reshape(bits.shape))
    assert wrong[0].size == 0, (f"{where}: {wrong[0].size} elements differ, e.g. x={_host(t)[wrong][:4]} got "
                                f"{bits[wrong][:4]} expected {expected.bits[wrong][:4]}")
    scales = got.scales.numpy()
    assert scales.dtype == expected.scales.dtype and scales.shape == expected.scales.shape, where
    assert np.array_equal(_u(scales), _u(expected.scales)), f"{where}: scales {scales} {expected.scales}"
    assert np.array_equal(got.scale_inv.numpy().astype(np.float64), expected.scale_inv, equal_nan=True), where
    assert got.amax.dtype == torch.float32
    assert np.array_equal(got.amax.numpy().astype(np.float64), expected.amax), where
    for name in sf.FLAG_NAMES:
        g, e = np.atleast_1d(getattr(gflags, name).numpy()), np.atleast_1d(getattr(eflags, name))
        assert g.shape == e.shape, f"{where}: {name} shape"
        bad = np.nonzero(g != e)
        assert bad[0].size == 0, (f"{where}: {name} differs at {bad[0].size} elements, e.g. x={_host(t)[bad][:4]} "
                                  f"got {g[bad][:4]} expected {e[bad][:4]}")
    return (expected, eflags), (got, gflags)


# ---- every recipe call x format x magnitude ------------------------------------------------------
@pytest.mark.parametrize("options", RECIPE_CALLS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("fmt", MX_FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("centre", [-20, 0, 30])
def test_recipe_calls(options, fmt, centre):
    x = _data((130, 300), SEED + 100 + centre, centre=centre, specials=False)
    check(torch.from_numpy(x), fmt, **options)


@pytest.mark.parametrize("options", RECIPE_CALLS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("fmt", [sf.fp8_e4m3, sf.fp8_e5m2, sf.fp4_e2m1], ids=lambda f: f.name)
def test_nan_and_infinity(options, fmt):
    x = _data((129, 260), SEED, spread=20)
    check(torch.from_numpy(x), fmt, **options)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("options", RECIPE_CALLS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_input_dtypes(dtype, options):
    x = _data((131, 257), SEED + 1, spread=12)
    check(_as_tensor(x, dtype), sf.fp8_e4m3, **options)


def test_float64_beyond_fp32():
    """float64 values that round to fp32 infinities, subnormals and zero first (the
    conversion's flags join the element flags), NaN payloads and signs."""
    x = np.array([1e300, -1e300, 3.5e38, 1e-40, -1e-46, 2.0**-149 * 0.75, 1.0, np.nan, -np.nan, 0.0, -0.0,
                  np.float64(np.float32(1.1)) + 2.0**-40], dtype=np.float64)
    x = np.concatenate([x, np.frombuffer(np.array([0x7FF0000000000001, 0xFFF4000000000000], np.uint64).tobytes(),
                                         np.float64)])
    for options in (dict(), dict(amax_epsilon=1e-12), dict(scale=2.0), dict(scaling="mx", block=4)):
        check(torch.from_numpy(x.reshape(2, 7)), sf.fp8_e5m2, **options)
        check(torch.from_numpy(x.reshape(2, 7)), sf.fp4_e2m1, **options)


def test_nan_payloads_and_signs():
    """NaN inputs of every width keep their sign and top payload bits in e5m2 (and their
    sign in e4m3); an MX NaN block gives the positive NaN of its factor."""
    f32 = np.array([0x7FC00000, 0xFFC00000, 0x7FA00001, 0xFF812345, 0x7F800001, 0x3F800000], np.uint32).view(np.float32)
    # float16 signaling NaNs stay signaling in numpy's widening and its fmax then keeps them:
    # the reference's amax of an all-sNaN block is NaN, not the documented 0
    f16 = np.array([0x7E00, 0xFE00, 0x7F01, 0xFEF1, 0x7E41, 0x3C00], np.uint16).view(np.float16)
    for x in (f32, f16):
        for fmt in (sf.fp8_e5m2, sf.fp8_e4m3, sf.fp16, sf.bf16, sf.fp4_e2m1):
            for options in (dict(scale=1.0), dict(scaling="mx", block=2), dict(scaling="mx", block=3)):
                check(torch.from_numpy(x.copy()), fmt, **options)
    bf16 = torch.from_numpy(np.array([0x7FC1, 0xFFA1, 0x3F80, 0xC000], np.uint16).view(np.int16)).view(torch.bfloat16)
    check(bf16, sf.fp8_e5m2, scaling="mx", block=2)
    check(bf16, sf.bf16, scale=1.0)


# ---- shapes ---------------------------------------------------------------------------------------
_SHAPES = [(5,), (1, 1), (3, 70), (2, 130, 140), (0, 40), (4, 0), (1, 33), (257, 3)]
_SHAPE_OPTIONS = [dict(), dict(scaling="rows"), dict(scaling="blocks", block=(1, 128)),
                  dict(scaling="blocks", block=(128, 128)), dict(scaling="blocks", block=5),
                  dict(scaling="mx"), dict(scaling="mx", block=7, scale_rounding="ceil")]


@pytest.mark.parametrize("shape, options", [(s, o) for s in _SHAPES for o in _SHAPE_OPTIONS
                                            if len(s) >= 2 or o.get("block") not in ((1, 128), (128, 128))],
                         ids=str)  # 2-D tiles need two axes
def test_shapes(shape, options):
    x = _data(shape, SEED + len(shape), spread=10)
    check(torch.from_numpy(x), sf.fp8_e4m3, **options)


def test_scalar_tensor():
    check(torch.tensor(3.0), sf.fp8_e4m3)
    check(torch.tensor(-1e-30), sf.fp8_e5m2, amax_epsilon=1e-12)


def test_zero_units_get_scale_one_or_e8m0_zero():
    x = np.zeros((4, 64), np.float32)
    x[0, :3] = [1.0, -2.0, 0.5]
    for options in (dict(scaling="rows"), dict(scaling="mx"), dict(scaling="blocks", block=(1, 32)), dict()):
        (expected, _), (got, _) = check(torch.from_numpy(x), sf.fp8_e4m3, **options)
    assert got.amax.item() == 2.0


# ---- other roundings and attributes ---------------------------------------------------------------
@pytest.mark.parametrize("rounding", ["nearest_away", "toward_zero", "upward", "downward", "odd", "stochastic"])
@pytest.mark.parametrize("attrs", [dict(), dict(saturate=False), dict(subnormals=False),
                                   dict(tininess="before"), dict(saturate=False, subnormals=False)], ids=str)
def test_rounding_modes(rounding, attrs):
    # magnitudes around each format's max and min normal: overflows, ties and tininess
    x = _data((64, 96), SEED + 3, spread=16)
    for fmt, options in ((sf.fp8_e4m3, dict(scale=1.0)), (sf.fp8_e5m2, dict(scaling="mx")),
                         (sf.fp4_e2m1, dict(scaling="blocks", block=(1, 32))), (sf.fp8_e4m3fnuz, dict(scale=1.0)),
                         (sf.fp6_e3m2, dict(scale=1.0)), (sf.bf16, dict(scale=1.0))):
        check(torch.from_numpy(x), fmt, rounding=rounding, rng=SEED, **attrs, **options)


def test_edges_of_the_range():
    """Every fp32 value near max_finite, its overflow threshold and min_normal of the
    formats, scaled by 1: the overflow and tininess-after rules at their boundaries."""
    values = []
    for fmt in (sf.fp8_e4m3, sf.fp8_e5m2, sf.fp4_e2m1, sf.fp6_e2m3, sf.fp8_e4m3fnuz, sf.bf16, sf.fp16):
        for v in (fmt.max_finite, fmt.min_normal, fmt.max_finite * 1.0625, fmt.max_finite * 1.125):
            if v > sf.fp32.max_finite:
                continue
            b = np.float32(v).view(np.uint32)
            values.append(np.arange(b - 40, b + 40, dtype=np.uint32).view(np.float32))
        step = 2.0 ** (fmt.emax - fmt.mantissa_bits)  # the overflow tie: max + half an ulp
        b = np.float32(fmt.max_finite + step / 2).view(np.uint32)
        values.append(np.arange(b - 3, b + 4, dtype=np.uint32).view(np.float32))
    x = np.concatenate(values)
    x = np.concatenate([x, -x])
    for fmt in (sf.fp8_e4m3, sf.fp8_e5m2, sf.fp4_e2m1, sf.fp6_e2m3, sf.fp8_e4m3fnuz, sf.bf16, sf.fp16):
        for rounding in ("nearest_even", "toward_zero", "upward", "odd", "stochastic"):
            for attrs in (dict(), dict(saturate=False), dict(tininess="before"), dict(subnormals=False)):
                check(torch.from_numpy(x), fmt, rounding=rounding, scale=1.0, rng=SEED, **attrs)


def test_stochastic_is_reproducible_and_uses_the_seed():
    x = torch.from_numpy(_data((32, 64), SEED, specials=False))
    a = scaled_encode_tensor(x, "e4m3", rounding="stochastic", rng=3).bits
    b = scaled_encode_tensor(x, "e4m3", rounding="stochastic", rng=np.random.default_rng(3)).bits
    c = scaled_encode_tensor(x, "e4m3", rounding="stochastic", rng=4).bits
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_margin_and_power_of_two_scales():
    x = torch.from_numpy(_data((130, 140), SEED + 5, spread=30, specials=False))
    for options in (dict(margin=3), dict(margin=64), dict(scale_rounding="floor"),
                    dict(scaling="blocks", block=(128, 128), scale_rounding="floor", amax_epsilon=1e-3),
                    dict(scaling="rows", margin=1, amax_epsilon=1e30)):
        check(x, sf.fp8_e4m3, **options)
    check(torch.tensor([3.3e38, 1.0]), sf.fp4_e2m1, margin=64)  # a scale below 2**-126: raised to it


def test_scale_as_tensor_and_per_unit():
    x = torch.from_numpy(_data((4, 256), SEED + 6, specials=False))
    scales = np.array([[0.5, 3.0], [1e-3, 7.1], [2.0**-126, 3.4e38], [1.0, 1.0]])
    for scale in (scales, torch.from_numpy(scales), torch.tensor(0.1, dtype=torch.float64)):
        check(x, sf.fp8_e5m2, scaling="blocks", block=(1, 128), scale=scale)


# ---- what the recipes read ------------------------------------------------------------------------
@pytest.mark.parametrize("options", RECIPE_CALLS[:1] + RECIPE_CALLS[4:5] + RECIPE_CALLS[7:8], ids=str)
def test_operand_counts_are_the_records(options):
    x = _data((128, 256), SEED + 8, spread=24)
    (expected, eflags), (got, gflags) = check(torch.from_numpy(x), sf.fp8_e4m3, **options)
    record = OperandRecord.from_flags(sf.fp8_e4m3, eflags, sf.decode(expected.bits, sf.fp8_e4m3, np.float32))
    counts = operand_counts(got, gflags)
    assert counts == {"elements": record.elements, "underflow_zero": record.underflow_zero,
                      "underflow_subnormal": record.underflow_subnormal, "overflow": record.overflow,
                      "nonfinite": record.nonfinite}
    assert record.underflow_zero and record.underflow_subnormal  # the data reach both
    back = got.to_numpy()
    assert np.array_equal(back.bits, expected.bits) and np.array_equal(back.scales, expected.scales)
    assert np.array_equal(back.scale_inv, expected.scale_inv, equal_nan=True) and back.scaling == expected.scaling
    assert np.array_equal(gflags.to_flags().underflow, eflags.underflow)


def test_without_flags_the_same_tensor():
    x = torch.from_numpy(_data((64, 64), SEED))
    st = scaled_encode_tensor(x, "e4m3", scaling="mx")
    assert torch.equal(st.bits, scaled_encode_tensor(x, "e4m3", scaling="mx", return_flags=True)[0].bits)
    before = x.clone()
    scaled_encode_tensor(x, "e4m3", rounding="stochastic", rng=1, return_flags=True)
    assert torch.equal(torch.isnan(x), torch.isnan(before)) and torch.equal(x.nan_to_num(), before.nan_to_num())


# ---- arguments ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error, text", [
    (dict(scaling="cols"), ValueError, "scaling='cols' is not valid"),
    (dict(scaling=3), TypeError, "scaling must be one of"),
    (dict(scaling="mx", scale=2.0), ValueError, "scale applies to fp32 scales"),
    (dict(scaling="mx", amax_epsilon=1e-12), ValueError, "amax_epsilon apply to fp32 scales"),
    (dict(scale=0.0), ValueError, "scale must lie in"),
    (dict(scale=torch.tensor([1.0, -1.0])), ValueError, "scale must lie in"),
    (dict(scale=np.ones(3)), ValueError, "scale must be one number or one scale per unit"),
    (dict(scaling="rows", block=4), ValueError, "block applies to"),
    (dict(scaling="blocks", block=(0, 1)), ValueError, "block for scaling='blocks'"),
    (dict(scale_rounding="ceil"), ValueError, "MX's variant"),
    (dict(amax_epsilon=-1.0), ValueError, "amax_epsilon must be"),
    (dict(margin=65), ValueError, "margin must be"),
    (dict(rng=torch.Generator()), TypeError, "torch.Generator"),
    (dict(return_flags=1), TypeError, "return_flags must be"),
])
def test_argument_errors(kwargs, error, text):
    with pytest.raises(error, match=text.replace("(", r"\(").replace(")", r"\)")):
        scaled_encode_tensor(torch.ones(2, 4), "e4m3", **kwargs)


def test_refuses_what_the_reference_refuses():
    with pytest.raises(ValueError, match="too wide"):
        scaled_encode_tensor(torch.ones(4), "fp64")
    with pytest.raises(ValueError, match="at least 2 axes"):
        scaled_encode_tensor(torch.ones(4), "e4m3", scaling="blocks", block=(2, 2))
    with pytest.raises(TypeError, match="float tensor"):
        scaled_encode_tensor(torch.ones(4, dtype=torch.int32), "e4m3")
    with pytest.raises(ValueError, match="holds no values"):
        scaled_encode_tensor(torch.ones(4, device="meta"), "e4m3")


# ---- hypothesis -----------------------------------------------------------------------------------
hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
hnp = pytest.importorskip("hypothesis.extra.numpy")


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(x=hnp.arrays(np.float32, st.tuples(st.integers(1, 5), st.integers(1, 70)),
                               elements=st.floats(width=32, allow_nan=True, allow_infinity=True)),
                  fmt=st.sampled_from(MX_FORMATS), options=st.sampled_from(RECIPE_CALLS),
                  dtype=st.sampled_from([torch.float32, torch.float16, torch.bfloat16]))
def test_hypothesis(x, fmt, options, dtype):
    if options.get("block") == (128, 128) or options.get("block") == (128, 1):
        options = dict(options, block=(3, options["block"][1] and 4))
    check(_as_tensor(x, dtype), fmt, **options)


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(x=hnp.arrays(np.float64, st.integers(1, 40), elements=st.floats(allow_nan=True)),
                  fmt=st.sampled_from([sf.fp8_e4m3, sf.fp8_e5m2, sf.fp4_e2m1, sf.bf16]),
                  rounding=st.sampled_from(["nearest_even", "toward_zero", "upward", "stochastic"]),
                  options=st.sampled_from([dict(), dict(scale=5.0), dict(scaling="mx", block=8),
                                           dict(scaling="mx", block=8, scale_rounding="ceil")]))
def test_hypothesis_float64(x, fmt, rounding, options):
    check(torch.from_numpy(x), fmt, rounding=rounding, rng=SEED, **options)


def test_unknown_keyword():
    with pytest.raises(TypeError, match="amax"):
        scaled_encode_tensor(torch.ones(4), "e4m3", amax=1.0)
