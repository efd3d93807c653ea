"""The pair tables of the operations equal the general path bit for bit, flags included.

softfloat.ops._driver._by_pair_table answers an operation whose operands' patterns side
by side have at most 16 bits (FP8/FP6/FP4 add, sub, mul, div; sqrt up to fp16) by one
lookup in a table the general path filled once on every index.  The reference is the
same public call with the off switch ``softfloat._fastpaths.ENABLED`` set to False.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat.formats import as_format
from softfloat.ops import _driver

from tests.fastpath_checks import answers_of, assert_same, general, spy_on

OPS = [sf.add, sf.sub, sf.mul, sf.div]
FORMATS = ["fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz", "fp6_e2m3", "fp6_e3m2", "fp4_e2m1"]
DETERMINISTIC = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
OPTIONS = [{}, {"tininess": "before"}, {"subnormals": False}, {"saturate": True},
           {"denormals_are_zero": True}, {"attributes": sf.RoundingAttributes(platform="arm")}]


@pytest.fixture
def fill_at_once(monkeypatch):
    """Tables filled on the first call, from empty caches (restored afterwards)."""
    monkeypatch.setattr(_driver, "PAIR_TABLE_FILL_AFTER", 0)
    monkeypatch.setattr(_driver, "_pair_tables", {})
    monkeypatch.setattr(_driver, "_pair_seen", {})


def _all_pairs(fmt):
    n = 1 << as_format(fmt).bits
    a, b = np.divmod(np.arange(n * n), n)
    dtype = as_format(fmt).storage_dtype
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("rounding", ["nearest_even", "toward_zero"])
@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_every_fp8_pair_equals_the_general_path(fill_at_once, op, fmt, rounding):
    a, b = _all_pairs(fmt)
    fast = op(a, b, fmt, rounding, return_flags=True)
    assert len(_driver._pair_tables) == 1  # the table answered
    assert_same(fast, general(lambda: op(a, b, fmt, rounding, return_flags=True)))
    assert_same(op(a, b, fmt, rounding), general(lambda: op(a, b, fmt, rounding)))


@pytest.mark.parametrize("fmt, rounding", [("fp8_e4m3", "upward"), ("fp16", "toward_zero"), ("fp16", "odd")])
def test_every_sqrt_equals_the_general_path(fill_at_once, fmt, rounding):
    a = np.arange(1 << as_format(fmt).bits).astype(as_format(fmt).storage_dtype)
    fast = sf.sqrt(a, fmt, rounding, return_flags=True)
    assert len(_driver._pair_tables) == 1
    assert_same(fast, general(lambda: sf.sqrt(a, fmt, rounding, return_flags=True)))


@st.composite
def table_call(draw):
    fmt = draw(st.sampled_from(FORMATS))
    width = as_format(fmt).bits
    dtype = as_format(fmt).storage_dtype
    shapes = draw(st.sampled_from([((), ()), ((1,), (1,)), ((1, 1), ()), ((3,), (3,)), ((2, 3), (3,)),
                                   ((4, 1), (1, 5)), ((0,), (1,))]))
    patterns = st.integers(0, (1 << width) - 1)
    operands = [np.array(draw(st.lists(patterns, min_size=int(np.prod(s)), max_size=int(np.prod(s)))),
                         dtype=dtype).reshape(s) for s in shapes]
    op = draw(st.sampled_from(OPS))
    kw = dict(draw(st.sampled_from(OPTIONS)), rounding=draw(st.sampled_from(DETERMINISTIC)),
              return_flags=draw(st.booleans()))
    return op, operands, fmt, kw


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(table_call())
def test_table_calls_equal_the_general_path(fill_at_once, call):
    op, operands, fmt, kw = call
    assert_same(op(*operands, fmt, **kw), general(lambda: op(*operands, fmt, **kw)))


@pytest.mark.parametrize("fmt", ["fp6_e3m2", "fp4_e2m1"])
def test_patterns_beyond_a_narrow_format_are_the_general_paths_error(fill_at_once, fmt):
    bad = np.array([1, 1 << as_format(fmt).bits], dtype=np.uint8)
    with pytest.raises(ValueError) as fast:
        sf.add(bad, bad, fmt)
    with pytest.raises(ValueError) as slow:
        general(lambda: sf.add(bad, bad, fmt))
    assert str(fast.value) == str(slow.value)


def test_mismatched_shapes_are_the_general_paths_error(fill_at_once):
    a, b = np.zeros(3, dtype=np.uint8), np.zeros(4, dtype=np.uint8)
    sf.add(a, a, "fp8_e4m3")  # fills the table
    assert _driver._pair_tables
    with pytest.raises(ValueError) as fast:
        sf.add(a, b, "fp8_e4m3")
    with pytest.raises(ValueError) as slow:
        general(lambda: sf.add(a, b, "fp8_e4m3"))
    assert str(fast.value) == str(slow.value)


def test_a_filled_table_answers_without_the_general_path(fill_at_once, monkeypatch):
    a, b = _all_pairs("fp8_e4m3")
    sf.mul(a[:10], b[:10], "fp8_e4m3")  # fills the table

    def refuse(*args, **kwargs):
        raise AssertionError("the general path ran")
    monkeypatch.setattr(_driver, "_stream", refuse)
    bits, flags = sf.mul(a, b, "fp8_e4m3", return_flags=True)
    assert bits.shape == a.shape and flags.inexact.any()


def test_small_calls_do_not_fill_a_table(monkeypatch):
    monkeypatch.setattr(_driver, "_pair_tables", {})
    monkeypatch.setattr(_driver, "_pair_seen", {})
    a = np.arange(10, dtype=np.uint8)
    sf.add(a, a, "fp8_e5m2")
    assert not _driver._pair_tables
    for _ in range(_driver.PAIR_TABLE_FILL_AFTER // 10):
        sf.add(a, a, "fp8_e5m2")
    assert len(_driver._pair_tables) == 1  # enough elements in all


def test_the_switch_turns_the_tables_off(fill_at_once, monkeypatch):
    calls = []
    original = _driver._by_pair_table
    monkeypatch.setattr(_driver, "_by_pair_table", lambda *a: calls.append(1) or original(*a))
    a, b = _all_pairs("fp8_e5m2")
    general(lambda: sf.add(a[:100], b[:100], "fp8_e5m2", return_flags=True))
    assert not calls and not _driver._pair_tables
    sf.add(a[:100], b[:100], "fp8_e5m2", return_flags=True)
    assert calls and _driver._pair_tables


def test_stochastic_rounding_takes_no_table(fill_at_once):
    a, b = _all_pairs("fp8_e4m3")
    sf.add(a[:100], b[:100], "fp8_e4m3", "stochastic", rng=0)
    assert not _driver._pair_tables


def test_the_cache_is_bounded(fill_at_once, monkeypatch):
    monkeypatch.setattr(_driver, "PAIR_TABLES_KEPT", 2)
    a = np.arange(4, dtype=np.uint8)
    for rounding in ("nearest_even", "toward_zero", "upward"):
        sf.add(a, a, "fp4_e2m1", rounding)
    assert len(_driver._pair_tables) == 2
    assert_same(sf.add(a, a, "fp4_e2m1", "nearest_even", return_flags=True),
                general(lambda: sf.add(a, a, "fp4_e2m1", "nearest_even", return_flags=True)))


# ---- sums and dot products into one output (softfloat.accumulate._few.one_output) -------
def _patterns(fmt, values):
    return np.asarray(sf.encode(values, fmt))


@st.composite
def one_output_call(draw):
    fmt = draw(st.sampled_from(["fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp32", "fp4_e2m1"]))
    kind = draw(st.sampled_from(["sum", "vecdot"]))
    n = draw(st.integers(65, 3000))
    scale = draw(st.sampled_from([1e-6, 1.0, 1e3, 3e4]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = [rng.standard_normal(n) * scale for _ in range(2 if kind == "vecdot" else 1)]
    if draw(st.booleans()):  # repeated values: swamping, exact cancellations, zeros
        values = [np.round(v) for v in values]
    if draw(st.booleans()):
        values[0][rng.integers(0, n)] = draw(st.sampled_from([np.inf, -np.inf, np.nan, 0.0, -0.0]))
    operands = [_patterns(fmt, v) for v in values]
    kw = dict(accumulator=draw(st.sampled_from([None, "fp32", "fp16", "fp64"])),
              order=draw(st.sampled_from(["sequential", "reverse", "pairwise"])),
              rounding=draw(st.sampled_from(["nearest_even", "nearest_even", "toward_zero"])),
              return_flags=draw(st.booleans()))
    kw.update(draw(st.sampled_from([{}, {}, {"saturate": True}, {"subnormals": False}, {"tininess": "before"}])))
    if fmt in ("fp32",) and kw["accumulator"] == "fp16":
        kw["accumulator"] = "fp32"
    if draw(st.booleans()):  # a narrower result: the last running sum rounded once into it
        kw["out_format"] = draw(st.sampled_from(["fp16", "bf16", "fp8_e4m3", "fp8_e4m3fnuz"]))
    return getattr(sf, kind), operands, fmt, kw


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_output_call())
def test_one_output_reductions_equal_the_general_path(call):
    fn, operands, fmt, kw = call
    assert_same(fn(*operands, fmt, **kw), general(lambda: fn(*operands, fmt, **kw)))


@pytest.mark.parametrize("acc", ["fp16", "fp32"])
def test_swamped_sums_count_as_the_general_path(acc):
    x = _patterns("fp16", np.concatenate([[2048.0], np.ones(500), [-3.0, 0.5, -0.0, 1e-7], np.ones(100)]))
    fast = sf.sum(x, "fp16", accumulator=acc, return_flags=True)
    assert_same(fast, general(lambda: sf.sum(x, "fp16", accumulator=acc, return_flags=True)))
    assert fast[1].swamped > 0 and fast[1].inexact  # 2**-24 is lost beside 2048 in both


def _spy_one_output(monkeypatch):
    from softfloat.accumulate import _few
    return answers_of(monkeypatch, _few, "one_output")


def test_the_one_output_path_ran_and_the_switch_turns_it_off(monkeypatch):
    found = _spy_one_output(monkeypatch)
    x = _patterns("fp16", np.linspace(-3, 7, 1000))
    y = _patterns("fp16", np.linspace(5, -1, 1000))
    sf.sum(x, "fp16", accumulator="fp32", return_flags=True)
    sf.vecdot(x, y, "fp16", return_flags=True)
    assert len(found) == 2 and all(f is not None for f in found)
    found.clear()
    general(lambda: sf.sum(x, "fp16", accumulator="fp32", return_flags=True))
    assert found == [None]


@pytest.mark.parametrize("tininess", ["after", "before"])
@pytest.mark.parametrize("out", ["fp16", "bf16", "fp8_e5m2", "fp8_e4m3fnuz"])
def test_one_output_rounded_into_a_narrower_format_equals_the_general_path(monkeypatch, out, tininess):
    """The final rounding of an fp32 accumulator's sum into a narrower format: exact and
    inexact results, zeros of both signs, tiny results (underflow by the tininess rule),
    a tie near the smallest normal, overflow (declined: the general path's)."""
    found = _spy_one_output(monkeypatch)
    rng = np.random.default_rng(7)
    o = sf.as_format(out)
    cases = [rng.standard_normal(500), np.ones(300), np.array([1.0, -1.0] * 50), np.array([-0.0] * 3),
             np.array([0.5, -0.5, -0.0]), np.full(200, o.min_normal / 3), np.full(64, -o.min_normal / 64),
             np.array([o.min_normal, -o.min_normal * 2.0 ** -(o.mantissa_bits + 2)]),
             np.full(100, o.max_finite / 3), rng.standard_normal(700) * 1e-3]
    for values in cases:
        x = _patterns("fp16", values)
        for kw in ({}, {"order": "reverse"}):
            call = (lambda: sf.sum(x, "fp16", accumulator="fp32", out_format=out, tininess=tininess,
                                   return_flags=True, **kw))
            assert_same(call(), general(call))
            y = _patterns("fp16", values[::-1])
            dot = (lambda: sf.vecdot(x, y, "fp16", out_format=out, tininess=tininess, return_flags=True, **kw))
            assert_same(dot(), general(dot))
    assert any(f is not None for f in found) and any(f is None for f in found)  # overflow declined


WIDENINGS = [("fp16", "fp32"), ("fp16", "fp64"), ("fp32", "fp64"), ("fp16", "fp16"), ("fp32", "fp32")]


@pytest.mark.parametrize("src, dst", WIDENINGS)
@pytest.mark.parametrize("options", [{}, {"rounding": "upward"}, {"rounding": "odd"}, {"subnormals": False},
                                     {"attributes": sf.RoundingAttributes(platform="riscv")}],
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_widening_by_numpys_cast_is_the_general_conversion(src, dst, options, monkeypatch):
    """convert() between numpy's own float types, widening or into the same type, takes
    numpy's cast for blocks without a NaN (softfloat.ops.convert._widening): the general
    path's bits and flags, the source's values exactly (the decoder's); a block with a NaN
    goes the general way, and so does a conversion into the same type with flush-to-zero
    (its subnormals become zeros)."""
    import importlib
    taken = answers_of(monkeypatch, importlib.import_module("softfloat.ops.convert"), "_widening")
    fmt = as_format(src)
    if fmt.bits == 16:
        patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    else:
        rng = np.random.default_rng(zlib_seed(src + dst))
        patterns = rng.integers(0, 1 << 32, 20_000, dtype=np.uint64).astype(np.uint32)
        patterns[:64] = [0, 1, 0x807F_FFFF, 0x0080_0000, 0x7F7F_FFFF, 0x7F80_0000, 0xFF80_0000, 0x8000_0000] * 8
    nan = np.isnan(patterns.view(fmt.native_dtype))
    for block in (patterns[~nan][:4096], patterns[~nan][:1], patterns[~nan][:1].reshape(()), patterns[:4096],
                  patterns[~nan][:4096].reshape(64, 64).T):
        fast = sf.convert(block, src, dst, return_flags=True, **options)
        slow = general(lambda: sf.convert(block, src, dst, return_flags=True, **options))
        assert_same(fast, slow)
        assert np.asarray(fast[0]).flags.c_contiguous == np.asarray(slow[0]).flags.c_contiguous
        assert_same(sf.convert(block, src, dst, **options), general(lambda: sf.convert(block, src, dst, **options)))
        if not (src == dst and options.get("subnormals") is False):
            assert np.array_equal(sf.decode(fast[0], dst), sf.decode(block, src), equal_nan=True)
    declined = [t is None for t in taken[0::2]]  # (the general path's calls decline: switched off)
    if src == dst and options.get("subnormals") is False:
        assert all(declined)
    else:
        assert declined == [False] * 6 + [bool(np.isnan(patterns[:4096].view(fmt.native_dtype)).any())] * 2 + [False] * 2


def zlib_seed(text):
    import zlib
    return zlib.crc32(text.encode())


@pytest.mark.parametrize("fmt", ["fp16", "fp32", "fp64"])
@pytest.mark.parametrize("compare", [sf.eq, sf.ne, sf.lt, sf.le, sf.gt, sf.ge])
def test_comparisons_by_numpys_floats_are_the_order_keys(fmt, compare, monkeypatch):
    """Comparisons of fp16/fp32/fp64 patterns without a NaN take numpy's float comparison
    (softfloat.ops.compare._native_relation): the order keys' results and flags (quiet and
    signaling), zeros of both signs, subnormals and infinities included; with a NaN the
    order keys answer."""
    from softfloat.ops import compare as compare_module
    taken = answers_of(monkeypatch, compare_module, "_native_relation")
    f = as_format(fmt)
    rng = np.random.default_rng(zlib_seed(fmt + compare.__name__))
    edges = [0, f.sign_mask, 1, f.sign_mask | 1, f.max_finite_bits, f.max_finite_bits | f.sign_mask,
             f.max_finite_bits + 1, (f.max_finite_bits + 1) | f.sign_mask, 1 << f.mantissa_bits]
    if f.bits == 16:
        a = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    else:
        a = rng.integers(0, 1 << min(f.bits, 63), 20_000, dtype=np.uint64).astype(f.storage_dtype)
    a = np.concatenate([np.array(edges, dtype=f.storage_dtype), a])
    b = np.concatenate([np.array(edges, dtype=f.storage_dtype), rng.permutation(a[len(edges):])])
    nan = np.isnan(a.view(f.native_dtype)) | np.isnan(b.view(f.native_dtype))
    for x, y in ((a[~nan], b[~nan]), (a[~nan][:1].reshape(()), b[~nan][:1].reshape(())), (a, b)):
        for signaling in (False, True):
            call = lambda: compare(x, y, fmt, signaling=signaling, return_flags=True)  # noqa: E731
            assert_same(call(), general(call))
        assert np.array_equal(compare(x, x[::-1] if x.ndim else x, fmt),
                              general(lambda: compare(x, x[::-1] if x.ndim else x, fmt)))
    assert sum(t is not None for t in taken) >= 4


def test_fp32_rounding_of_scales_by_numpys_cast_is_encodes_and_mpfrs(monkeypatch):
    """softfloat.scaled's fp32 rounding of scales and amaxes takes numpy's float64 ->
    float32 cast where no value is a NaN: encode's values (every shortcut off) and MPFR's,
    across fp32's subnormals, ties, the overflow threshold and both zeros; with a NaN,
    encode's NaN."""
    from fractions import Fraction
    import importlib
    from tests.oracle import round_exact
    fp32_module = importlib.import_module("softfloat.scaled._fp32")
    f32 = as_format("fp32")
    rng = np.random.default_rng(zlib_seed("round_fp32"))
    big = float(f32.max_finite)
    ulp_top = 2.0 ** (f32.emax - f32.mantissa_bits)
    edges = [0.0, -0.0, 2.0 ** -149, 2.0 ** -150, 3 * 2.0 ** -151, 2.0 ** -151, 2.0 ** -126 * (1 - 2.0 ** -30),
             1 + 2.0 ** -24, 1 + 3 * 2.0 ** -24, big, big + ulp_top / 2, big + ulp_top / 2 - 2.0 ** 70, 1e300,
             -1e300, float("inf"), -float("inf"), 5e-324]
    values = np.concatenate([edges, [-e for e in edges],
                             rng.standard_normal(2000) * 2.0 ** rng.integers(-160, 130, 2000)])
    fast = fp32_module._round_fp32(values)
    assert_same(fast, general(lambda: fp32_module._round_fp32(values)))
    for v, got in zip(values, fast):
        if not np.isfinite(v):
            assert got == v
            continue
        r = round_exact(abs(Fraction(float(v))), bool(np.signbit(v)), f32, "nearest_even")
        want = r.value if not isinstance(r.value, float) else r.value
        assert got == want and np.signbit(got) == r.negative, v
    with_nan = np.array([1.0, float("nan"), 1e-40, np.uint64(0x7FF0_0000_0000_0001).view(np.float64), -np.nan])
    assert_same(fp32_module._round_fp32(with_nan), general(lambda: fp32_module._round_fp32(with_nan)))
    assert fp32_module._round_fp32(np.float64(0.1)).shape == ()


@pytest.mark.parametrize("platform", sorted(sf.PLATFORMS))
def test_fp16_square_roots_of_negative_operands_on_the_small_path(platform, monkeypatch):
    """fp16 square roots of small arrays holding negative operands stay on the small path
    (softfloat.ops._driver._small_fp16): those lanes are the platform's default NaN with
    invalid, the rest rounded as before -- every pattern, against the general path."""
    taken = spy_on(monkeypatch, "float16_arithmetic")
    attrs = sf.RoundingAttributes(platform=platform)
    patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    finite = (patterns & 0x7FFF) < 0x7C00
    for block in (patterns[finite][:16384], patterns[finite][-16384:], patterns[finite][-5:],
                  np.array(0xBC00, np.uint16), np.array(0x8000, np.uint16)):
        call = lambda: sf.sqrt(block, "fp16", attributes=attrs, return_flags=True)  # noqa: E731
        assert_same(call(), general(call))
        assert_same(sf.sqrt(block, "fp16", attributes=attrs), general(lambda: sf.sqrt(block, "fp16", attributes=attrs)))
    assert len(taken) >= 8  # (the 1-d blocks; a 0-d operand may take the scalar path first)
    x = sf.Array.from_bits(np.array([0x3C00, 0xBC00, 0x8000, 0x0001], np.uint16), "fp16")
    with sf.context(attributes=attrs) as ctx:
        r = np.sqrt(x)
    with sf.context(attributes=attrs) as slow:
        expected = general(lambda: np.sqrt(x))
    assert r.bits.tolist() == expected.bits.tolist() and ctx.flags.invalid == slow.flags.invalid == 1
