"""``return_flags="swamped"``: the swamped counts alone, per output, from sum, vecdot and
matmul.

The counts are defined as ``AccumulationFlags.swamped`` of ``return_flags=True`` (tested
against the oracle and the general path in test_accumulate_flags_fast.py,
test_accumulate_fused_fast.py and test_accumulate_oracle.py): here every accumulator
kind -- IEEE fp32/fp16/bf16/fp64/FP8 accumulators in each order, with blocks, ``c`` and
narrower outputs, and every hardware preset on each input family it takes -- must give
the same counts (same type, shape, dtype, values) and the same result bits as
``return_flags=True`` and as ``return_flags=False``, on random data and on data made to
zero, cancel, swamp, overflow, meet NaN and inf, and pass through subnormals; and the
same again with every fast path off (the general path)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import softfloat as sf
from softfloat.accumulate import PRESETS
from tests.accumulate_checks import adversarial_operands
from tests.fastpath_checks import general


def _bits(values, fmt):
    return sf.encode(np.asarray(values, dtype=np.float64), fmt, saturate=True)


def _same_bits(x, y):
    assert type(x) is type(y) and np.shape(x) == np.shape(y)
    assert np.array_equal(np.asarray(x).reshape(-1).view(np.uint8), np.asarray(y).reshape(-1).view(np.uint8))


def check(fn, *args, slow=True, **kw):
    """``fn(*args, **kw)`` with return_flags False, True and "swamped" (and "swamped"
    with the fast paths off, where ``slow``): the same bits, and the swamped counts of
    "swamped" those of the flags, of the same type, shape and dtype."""
    plain = fn(*args, **kw)
    bits, flags = fn(*args, return_flags=True, **kw)
    found = [fn(*args, return_flags="swamped", **kw)]
    if slow:
        found.append(general(lambda: fn(*args, return_flags="swamped", **kw)))
    for only_bits, swamped in found:
        _same_bits(only_bits, bits)
        _same_bits(only_bits, plain)
        assert type(swamped) is type(flags.swamped)
        assert np.shape(swamped) == np.shape(flags.swamped)
        assert np.asarray(swamped).dtype == np.int64
        assert np.array_equal(swamped, flags.swamped)
    return flags.swamped


# ---- data -------------------------------------------------------------------------------
def _random(rng, M, K, N, spread=0):
    """Normal values, with exponents spread over +-``spread`` binades (exponent gaps)."""
    a = rng.standard_normal((M, K)) * np.exp2(rng.integers(-spread, spread + 1, (M, K)))
    b = rng.standard_normal((K, N)) * np.exp2(rng.integers(-spread, spread + 1, (K, N)))
    return a, b


_FP8_MAX = {"fp8_e4m3": 448.0, "fp8_e5m2": 57344.0}


def _fit(a, fmt):
    """Values a format without inf/NaN (fp8_e4m3) can hold the specials of as saturation."""
    if fmt == "fp8_e4m3":
        m = _FP8_MAX[fmt]
        return np.clip(np.nan_to_num(a, nan=0.0, posinf=m, neginf=-m), -m, m)
    return a


# ---- IEEE accumulators ---------------------------------------------------------------------
IEEE = [("bf16", "fp32"), ("fp16", "fp32"), ("fp16", "fp16"), ("bf16", "bf16"), ("fp8_e4m3", "fp32"),
        ("fp8_e4m3", "fp16"), ("fp8_e5m2", "fp32"), ("fp8_e4m3", "fp8_e4m3"), ("fp8_e5m2", "fp8_e5m2"),
        ("fp32", "fp32"), ("fp16", "fp64"), ("tf32", "fp32")]
ORDERS = ["sequential", "reverse", "pairwise"]


@pytest.mark.parametrize("fmt, acc", IEEE)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("N", [9, 80])  # narrow tiles (accumulate) and row-wise running sums
def test_matmul_ieeeadversarial_operands(fmt, acc, order, N):
    rng = np.random.default_rng(N)
    a, b = adversarial_operands(rng, 6, 40, N)
    A, B = _bits(_fit(a, fmt), fmt), _bits(_fit(b, fmt), fmt)
    check(sf.matmul, A, B, fmt, accumulator=acc, order=order)
    check(sf.matmul, A, B, fmt, accumulator=acc, order=order, c=_bits(np.full(N, -0.0), acc))
    check(sf.matmul, A, B, fmt, accumulator=acc, order=order, block=8)


@pytest.mark.parametrize("fmt, acc", IEEE)
@pytest.mark.parametrize("order", ORDERS)
def test_matmul_ieee_random(fmt, acc, order):
    rng = np.random.default_rng(7)
    for spread in (0, 12):
        a, b = _random(rng, 19, 70, 24, spread)
        A, B = _bits(_fit(a, fmt), fmt), _bits(_fit(b, fmt), fmt)
        swamped = check(sf.matmul, A, B, fmt, accumulator=acc, order=order)
        check(sf.matmul, A, B, fmt, accumulator=acc, order=order, block=16,
              c=_bits(rng.standard_normal((19, 24)), acc))
        assert swamped.shape == (19, 24)


def test_matmul_large_native_tiles_and_counts():
    """Tiles of many outputs and chunks of k (the native plans' row-wise running sums, in
    chunks), huge exponent gaps swamping most terms; a narrower out_format."""
    rng = np.random.default_rng(3)
    a, b = _random(rng, 64, 600, 160, spread=40)
    a[:, ::7] = 0.0
    A, B = _bits(a, "bf16"), _bits(b, "bf16")
    swamped = check(sf.matmul, A, B, "bf16", accumulator="fp32", slow=False)
    assert swamped.sum() > 0
    check(sf.matmul, A, B, "bf16", accumulator="fp32", out_format="bf16", slow=False)
    check(sf.matmul, A, B, "bf16", accumulator="fp32", block=128, slow=False)


@pytest.mark.parametrize("fmt, acc", IEEE)
@pytest.mark.parametrize("order", ORDERS)
def test_sum_and_vecdot_ieee(fmt, acc, order):
    rng = np.random.default_rng(11)
    a, b = adversarial_operands(rng, 6, 40, 12)
    x, y = _bits(_fit(a, fmt), fmt), _bits(_fit(b[:, :6].T, fmt), fmt)
    check(sf.sum, x, fmt, accumulator=acc, order=order, axis=1)
    check(sf.sum, x, fmt, accumulator=acc, order=order, axis=0, block=4)
    check(sf.sum, x, fmt, accumulator=acc, order=order)  # one output: a numpy scalar count
    check(sf.vecdot, x, y, fmt, accumulator=acc, order=order)
    for row in range(3):  # one output of 1-D operands (the one-output shortcuts)
        check(sf.vecdot, x[row], y[row], fmt, accumulator=acc, order=order)
        check(sf.sum, x[row], fmt, accumulator=acc, order=order)


def test_one_output_long_and_swamped():
    """A long 1-D sum in fp16 (numpy's running sums: 2048 + 1 + 1 ... stalls) and in fp32."""
    ones = np.full(4096, sf.encode(1.0, "fp16"))
    for acc in ("fp16", "fp32"):
        swamped = check(sf.sum, ones, "fp16", accumulator=acc)
        assert isinstance(swamped, np.int64)
    assert int(sf.sum(ones, "fp16", return_flags="swamped")[1]) == 2048


@pytest.mark.parametrize("options", [{"rounding": "toward_zero"}, {"rounding": "downward"},
                                     {"saturate": True}, {"subnormals": False},
                                     {"product": "bf16"}, {"product": "fp32"},
                                     {"rounding": "stochastic", "rng": 5}])
def test_general_path_options(options):
    rng = np.random.default_rng(2)
    a, b = adversarial_operands(rng, 5, 24, 12)
    A, B = _bits(a, "bf16"), _bits(b, "bf16")
    for acc in ("fp32", "bf16"):
        for order in ORDERS:
            check(sf.matmul, A, B, "bf16", accumulator=acc, order=order, **options)


# ---- hardware presets ---------------------------------------------------------------------
def _preset_cases():
    families = {"fp16": [("fp16", None)], "bf16": [("bf16", None)], "tf32": [("tf32", None)],
                "fp8": [("fp8_e4m3", None), ("fp8_e5m2", None), ("fp8_e4m3", "fp8_e5m2")]}
    return [(preset, fmt, b_fmt) for preset, table in PRESETS.items() for family in table
            for fmt, b_fmt in families[family]]


@pytest.mark.parametrize("preset, fmt, b_fmt", _preset_cases())
def test_matmul_hardware_presets(preset, fmt, b_fmt):
    rng = np.random.default_rng(len(preset) + len(fmt))
    b_fmt_ = b_fmt or fmt
    for data in ("random", "adversarial"):
        if data == "random":
            a, b = _random(rng, 9, 72, 16, spread=8)
        else:
            big = 200.0 if "fp8" in fmt else 60000.0
            a, b = adversarial_operands(rng, 9, 72, 16, big=big, tiny=2.0 ** -12)
        A, B = _bits(_fit(a, fmt), fmt), _bits(_fit(b, b_fmt_), b_fmt_)
        kw = {} if b_fmt is None else {"b_format": b_fmt}
        check(sf.matmul, A, B, fmt, accumulator=preset, **kw)
        check(sf.matmul, A, B, fmt, accumulator=preset, block=32, c=_bits(rng.standard_normal(16), "fp32"), **kw)
        check(sf.matmul, A, B, fmt, accumulator=preset, out_format="bf16", **kw)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_sum_and_vecdot_hardware_presets(preset):
    fmt = "fp16" if "fp16" in PRESETS[preset] else "bf16"
    rng = np.random.default_rng(4)
    a, b = adversarial_operands(rng, 6, 40, 12)
    x, y = _bits(a, fmt), _bits(b[:, :6].T, fmt)
    check(sf.sum, x, fmt, accumulator=preset, axis=1)
    check(sf.vecdot, x, y, fmt, accumulator=preset)
    check(sf.vecdot, x[0], y[0], fmt, accumulator=preset)


# ---- any bit patterns --------------------------------------------------------------------
_FORMATS = {"fp16": 16, "bf16": 16, "fp8_e4m3": 8, "fp8_e5m2": 8}
_ACCUMULATORS = ["fp32", "fp16", "bf16", "h100", "a100", "v100", "b200", "h100-mma"]


def _takes(acc, fmt):
    if acc not in PRESETS:
        return True
    family = "fp8" if fmt.startswith("fp8") else fmt
    return family in PRESETS[acc]


@st.composite
def _cases(draw):
    fmt = draw(st.sampled_from(sorted(_FORMATS)))
    acc = draw(st.sampled_from([a for a in _ACCUMULATORS if _takes(a, fmt)]))
    order = "sequential" if acc in PRESETS else draw(st.sampled_from(ORDERS))
    M, K, N = draw(st.integers(1, 4)), draw(st.integers(1, 40)), draw(st.integers(1, 12))
    top = (1 << _FORMATS[fmt]) - 1
    # patterns near the specials, zeros and the smallest values as often as any others
    pattern = st.one_of(st.integers(0, top), st.sampled_from([0, 1, 2, top, top - 1, top >> 1, (top >> 1) + 1,
                                                              (top >> 1) - 1, (top >> 1) + 2]))
    A = draw(st.lists(pattern, min_size=M * K, max_size=M * K))
    B = draw(st.lists(pattern, min_size=K * N, max_size=K * N))
    block = draw(st.sampled_from([None, 4, 32]))
    dtype = np.uint16 if _FORMATS[fmt] == 16 else np.uint8
    return fmt, acc, order, block, np.array(A, dtype).reshape(M, K), np.array(B, dtype).reshape(K, N)


@given(_cases())
def test_any_patterns(case):
    fmt, acc, order, block, A, B = case
    check(sf.matmul, A, B, fmt, accumulator=acc, order=order, block=block, slow=False)
    check(sf.sum, A, fmt, accumulator=acc, order=order, block=block, axis=1, slow=False)
    check(sf.vecdot, A[0], B[:, 0], fmt, accumulator=acc, order=order, block=block, slow=False)


# ---- dask -----------------------------------------------------------------------------------
def test_dask_chunks():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(9)
    a, b = adversarial_operands(rng, 6, 40, 12)
    A, B = _bits(a, "bf16"), _bits(b, "bf16")
    for acc in ("fp32", "h100"):
        lazy = sf.matmul(da.from_array(A, chunks=(3, 16)), da.from_array(B, chunks=(16, 6)), "bf16",
                         accumulator=acc, return_flags="swamped")
        bits, flags = sf.matmul(A, B, "bf16", accumulator=acc, return_flags=True)
        _same_bits(np.asarray(lazy[0].compute()), bits)
        assert np.array_equal(np.asarray(lazy[1].compute()), flags.swamped)


# ---- the argument ------------------------------------------------------------------------
_CALLS = {"sum": lambda rf: sf.sum(np.zeros(3, np.uint16), "fp16", return_flags=rf),
          "vecdot": lambda rf: sf.vecdot(np.zeros(3, np.uint16), np.zeros(3, np.uint16), "fp16", return_flags=rf),
          "matmul": lambda rf: sf.matmul(np.zeros((2, 3), np.uint16), np.zeros((3, 2), np.uint16), "fp16",
                                         return_flags=rf)}


@pytest.mark.parametrize("kind", list(_CALLS))
@pytest.mark.parametrize("value, shown", [("flags", "'flags' (str)"), ("Swamped", "'Swamped' (str)"),
                                          (None, "None (NoneType)"), (1, "1 (int)"),
                                          (np.array([True]), "array")])
def test_bad_return_flags(kind, value, shown):
    with pytest.raises(TypeError) as info:
        _CALLS[kind](value)
    message = str(info.value)
    assert message.startswith("return_flags must be True, False or 'swamped'; got"), message
    assert shown in message, message


@pytest.mark.parametrize("kind", list(_CALLS))
def test_accepted_values(kind):
    assert not isinstance(_CALLS[kind](False), tuple)
    assert not isinstance(_CALLS[kind](np.False_), tuple)
    assert isinstance(_CALLS[kind](np.True_)[1], sf.AccumulationFlags)
    bits, swamped = _CALLS[kind]("swamped")
    assert np.asarray(swamped).dtype == np.int64 and not np.any(swamped)


# ---- the recipes' records ---------------------------------------------------------------------
@pytest.mark.parametrize("recipe, acc", [("bf16", None), ("bf16", "bf16"), ("fp8", "h100"), ("fp8-block", None),
                                         ("mxfp8", None)])
def test_gemm_record_counts_the_swamped_additions(recipe, acc):
    """GemmEngine(record=True)'s swamped count is the total of the products' swamped
    counts: the same matmul calls with return_flags=True (the record's definition)."""
    from softfloat import recipes

    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 256)).astype(np.float32)
    b = (rng.standard_normal((256, 16)) * np.exp2(rng.integers(-12, 4, (256, 16)))).astype(np.float32)
    values, rec = recipes.GemmEngine(recipe, accumulator=acc).gemm(a, b, "fprop", "l", record=True)
    calls = []
    original = sf.matmul

    def spy(*args, **kw):
        calls.append((args, dict(kw)))
        return original(*args, **kw)
    again, rec2 = recipes.GemmEngine(recipe, accumulator=acc, matmul=spy).gemm(a, b, "fprop", "l", record=True)
    assert calls
    assert np.array_equal(values.view(np.uint32), again.view(np.uint32))
    total = 0
    for args, kw in calls:
        kw["return_flags"] = True
        total += int(np.sum(original(*args, **kw)[1].swamped))
    assert rec.swamped == rec2.swamped == total
    assert rec.additions == 8 * 256 * 16


@pytest.mark.parametrize("fmt", ["fp32", "bf16", "fp16"])
@pytest.mark.parametrize("order", ORDERS)
def test_products_rounded_into_fp32_count_on_numpys_arithmetic(monkeypatch, fmt, order):
    """``product="fp32"`` (the "fp32" recipe: each product rounded, then added) with the
    swamped counts alone takes numpy's float32 arithmetic (softfloat.accumulate._fast.Native):
    the counts are the additions' (the addend is the rounded product, zero where a product
    underflows), the same as every flag's run and the general path's -- products that
    underflow to zero and overflow included."""
    from softfloat.accumulate import _fast
    from tests.fastpath_checks import answers_of
    plans = answers_of(monkeypatch, _fast, "plan")
    rng = np.random.default_rng(4)
    a, b = adversarial_operands(rng, 6, 40, 12, big=2.0 ** 70, tiny=2.0 ** -80)
    a[1] *= 2.0 ** -70  # products below fp32's subnormals
    with np.errstate(over="ignore"):
        A, B = _bits(a, fmt), _bits(b, fmt)
    check(sf.matmul, A, B, fmt, accumulator="fp32", product="fp32", order=order)
    assert any(type(p) is _fast.Native for p in plans)
