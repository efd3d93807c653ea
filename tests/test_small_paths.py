"""The one-element paths equal the general (vectorised) path bit for bit, flags included.

* the operations (``sf.add/sub/mul/div/sqrt``) on one-element operands: Python ints,
  numpy integer scalars, 0-d and size-1 arrays (softfloat.ops._driver._one_element);
* ``sf.encode`` / ``sf.quantize`` of one Python or numpy float (softfloat.codec._scalar);
* sequential sums and dot products into one output (softfloat.accumulate._scalar_chain),
  swamped counts and stochastic rounding included.

The reference is the same public call with the off switch ``softfloat._fastpaths.ENABLED``
set to False, which sends everything down the general path.  Result types and shapes are
compared too (a numpy scalar for 0-d operands, numpy bools in its Flags).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat import _fastpaths
from softfloat.accumulate import _scalar_chain
from softfloat.formats import as_format
from softfloat.ops import _driver

from tests.fastpath_checks import assert_same, general

FORMATS = ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz", "fp8_e5m2fnuz", "fp6_e2m3", "fp6_e3m2",
           "fp4_e2m1"]
DETERMINISTIC = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
OPTIONS = [{}, {"tininess": "before"}, {"subnormals": False}, {"saturate": True},
           {"attributes": sf.RoundingAttributes(platform="arm")}]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _operand(pattern, fmt, form):
    dtype = as_format(fmt).storage_dtype
    if form == "int64" and pattern >= 1 << 63:
        form = "1"  # an fp64 pattern with the sign bit has no int64
    return {"int": lambda: int(pattern), "scalar": lambda: dtype.type(pattern),
            "0-d": lambda: np.array(pattern, dtype=dtype), "1": lambda: np.array([pattern], dtype=dtype),
            "1x1": lambda: np.array([[pattern]], dtype=dtype),
            "int64": lambda: np.array([pattern], dtype=np.int64)}[form]()


FORMS = ["int", "scalar", "0-d", "1", "1x1", "int64"]


@st.composite
def one_element_call(draw):
    fmt = draw(st.sampled_from(FORMATS))
    width = as_format(fmt).bits
    op = draw(st.sampled_from([sf.add, sf.sub, sf.mul, sf.div, sf.sqrt]))
    n = 1 if op is sf.sqrt else 2
    operands = [_operand(draw(st.integers(0, (1 << width) - 1)), fmt, draw(st.sampled_from(FORMS)))
                for _ in range(n)]
    kw = dict(draw(st.sampled_from(OPTIONS)), rounding=draw(st.sampled_from(DETERMINISTIC)),
              return_flags=draw(st.booleans()))
    return op, operands, fmt, kw


def _wide_pattern(fmt):
    """Patterns of a wide format near its decision points: exponent fields at and next to
    the subnormal and overflow ends and around the bias, fractions at their ends or random."""
    fmt = as_format(fmt)
    top = (1 << fmt.exponent_bits) - 1
    exponents = st.one_of(st.sampled_from([0, 1, 2, fmt.bias - 1, fmt.bias, fmt.bias + 1, top - 2, top - 1, top]),
                          st.integers(0, top))
    fractions = st.one_of(st.sampled_from([0, 1, (1 << fmt.mantissa_bits) - 1, 1 << (fmt.mantissa_bits - 1)]),
                          st.integers(0, (1 << fmt.mantissa_bits) - 1))
    return st.builds(lambda s, e, f: (s << (fmt.bits - 1)) | (e << fmt.mantissa_bits) | f,
                     st.integers(0, 1), exponents, fractions)


@st.composite
def wide_one_element_call(draw):
    """:func:`one_element_call` for fp32, tf32 and fp64 (the scalar path decodes their
    patterns one by one: softfloat._fastpaths._scalar.FiniteValues)."""
    fmt = draw(st.sampled_from(["fp32", "tf32", "fp64"]))
    op = draw(st.sampled_from([sf.add, sf.sub, sf.mul, sf.div, sf.sqrt]))
    first = draw(_wide_pattern(fmt))
    near = st.integers(-3, 3).map(lambda d: min(max(first + d, 0), (1 << as_format(fmt).bits) - 1))
    operands = [first] + ([draw(st.one_of(_wide_pattern(fmt), near))] if op is not sf.sqrt else [])
    operands = [_operand(p, fmt, draw(st.sampled_from(FORMS))) for p in operands]
    kw = dict(draw(st.sampled_from(OPTIONS)), rounding=draw(st.sampled_from(DETERMINISTIC)),
              return_flags=draw(st.booleans()))
    return op, operands, fmt, kw


@SETTINGS
@given(st.one_of(one_element_call(), wide_one_element_call()))
def test_operations_on_one_element_equal_the_general_path(case):
    op, operands, fmt, kw = case
    assert_same(op(*operands, fmt, **kw), general(lambda: op(*operands, fmt, **kw)))


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2", "fp4_e2m1"])
@pytest.mark.parametrize("rounding", DETERMINISTIC)
def test_every_fp8_pair_equals_the_general_path(fmt, rounding):
    """Exhaustive over FP8 (and FP4) pairs: one vectorised general call is the oracle for
    each one-element call."""
    width = as_format(fmt).bits
    a, b = np.meshgrid(np.arange(1 << width), np.arange(1 << width))
    a, b = a.reshape(-1).astype(np.uint8), b.reshape(-1).astype(np.uint8)
    step = 1 if width <= 4 else 7  # every pair of FP4, a sample of 1/7 of FP8's
    for op in (sf.add, sf.mul, sf.div):
        bits, flags = general(lambda: op(a, b, fmt, rounding, return_flags=True))
        for i in range(0, a.size, step):
            one, one_flags = op(int(a[i]), int(b[i]), fmt, rounding, return_flags=True)
            assert one == bits[i], (op.__name__, hex(a[i]), hex(b[i]))
            assert [bool(m) for _, m in one_flags] == [bool(m[i]) for _, m in flags]


def test_the_one_element_path_is_taken(monkeypatch):
    taken = []
    original = _driver._one_element
    monkeypatch.setattr(_driver, "_one_element", lambda *a: taken.append(original(*a)) or taken[-1])
    sf.add(0x3C00, 0x3C01, "fp16")
    sf.mul(np.uint16(0x3C00), np.array([0x4000], dtype=np.uint16), "bf16", return_flags=True)
    assert len(taken) == 2 and all(t is not None for t in taken)
    sf.add(0x7C00, 0x3C00, "fp16")  # an infinity: the general path
    assert taken[-1] is None
    sf.div(np.array([0x3F800000], np.uint32), np.uint32(0x40400000), "fp32")  # 1 / 3 in fp32
    sf.sqrt(np.array(2.0).view(np.uint64), "fp64")
    assert taken[-2] is not None and taken[-1] is not None
    for special in (0x7F800000, 0xFFC00000, 0x7F800001):  # fp32 infinity and NaNs: the general path
        sf.add(special, 0x3F800000, "fp32")
        assert taken[-1] is None


def test_bad_operands_raise_as_on_the_general_path():
    with pytest.raises(ValueError, match="does not fit"):
        sf.add(0x10000, 0x3C00, "fp16")
    with pytest.raises(TypeError):
        sf.add(True, 0x3C00, "fp16")
    with pytest.raises(ValueError, match="workers"):
        sf.add(0x3C00, 0x3C00, "fp16", workers=0)


SCALAR_FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e5, max_value=1e5),
    st.floats(min_value=-1e-3, max_value=1e-3),
    st.floats(min_value=-1e-38, max_value=1e-38),
)


@SETTINGS
@given(x=SCALAR_FLOATS, fmt=st.sampled_from(FORMATS + ["fp32", "tf32", "fp64"]),
       rounding=st.sampled_from(DETERMINISTIC), opts=st.sampled_from(OPTIONS),
       kind=st.sampled_from([float, np.float64, np.float32, np.float16, "0-d", "1", "1x1", ">f8"]),
       return_flags=st.booleans(),
       func=st.sampled_from([sf.encode, sf.quantize]))
def test_one_float_equals_the_general_path(x, fmt, rounding, opts, kind, return_flags, func):
    with np.errstate(all="ignore"):
        value = kind(x) if not isinstance(kind, str) else \
            {"0-d": np.array(x), "1": np.array([x], dtype=np.float32), "1x1": np.array([[x]]),
             ">f8": np.array([x], dtype=">f8")}[kind]
    kw = dict(opts, rounding=rounding, return_flags=return_flags)
    assert_same(func(value, fmt, **kw), general(lambda: func(value, fmt, **kw)))


def test_stochastic_encoding_leaves_the_generator_as_the_general_path_does():
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    first = sf.encode(0.1, "fp16", "stochastic", rng=a)
    assert first == general(lambda: sf.encode(0.1, "fp16", "stochastic", rng=b))
    assert a.integers(1 << 30) == b.integers(1 << 30)


ACCUMULATORS = ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz", "fp4_e2m1", "fp32"]


@st.composite
def one_output_reduction(draw):
    k = draw(st.integers(1, 80))
    scale = 2.0 ** draw(st.integers(-20, 14))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal(k) * scale
    if draw(st.booleans()):  # specials and overflows: steps the scalar chain hands back
        x[rng.integers(k)] = draw(st.sampled_from([np.inf, -np.inf, np.nan, 6e4, -6e4, 0.0, -0.0]))
    y = rng.standard_normal(k)
    kw = dict(draw(st.sampled_from(OPTIONS)), accumulator=draw(st.sampled_from(ACCUMULATORS)),
              rounding=draw(st.sampled_from(DETERMINISTIC + ["stochastic"])),
              order=draw(st.sampled_from(["sequential", "reverse"])),
              return_flags=draw(st.sampled_from([False, True, "swamped"])))
    if kw["rounding"] == "stochastic":
        kw["rng"] = draw(st.integers(0, 1000))
    kind = draw(st.sampled_from(["sum", "vecdot", "vecdot rounded products", "sum with c", "sum of a column",
                                 "sum keepdims", "matmul (K)@(K)", "matmul (1,K)@(K,1)", "matmul (1,K)@(K)",
                                 "matmul (K)@(K,1)"]))
    return kind, sf.encode(x, "fp16"), sf.encode(y, "fp16"), kw


def _reduce(kind, x, y, kw):
    if kind == "sum":
        return sf.sum(x, "fp16", **kw)
    if kind == "sum with c":
        return sf.sum(x, "fp16", c=sf.encode(1.5, "fp32"), out_format="fp32", **kw)
    if kind == "sum of a column":  # a (1,) result: the chain of softfloat.accumulate._ieee
        return sf.sum(x[:, None], "fp16", axis=0, **kw)
    if kind == "sum keepdims":  # a (1, 1) result of a 2-d operand
        return sf.sum(x.reshape(1, -1), "fp16", keepdims=True, **kw)
    if kind.startswith("matmul"):  # one output: a dot product
        a = x if "(K)@" in kind else x[None, :]
        b = y if kind.endswith("(K)") else y[:, None]
        return sf.matmul(a, b, "fp16", **kw)
    if kind == "vecdot":
        return sf.vecdot(x, y, "fp16", **kw)
    return sf.vecdot(x, y, "fp16", product="bf16", **kw)


@SETTINGS
@given(one_output_reduction())
def test_one_output_chains_equal_the_general_path(case):
    kind, x, y, kw = case
    assert_same(_reduce(kind, x, y, kw), general(lambda: _reduce(kind, x, y, kw)))


def test_swamping_is_counted_on_the_scalar_chain(monkeypatch):
    steps = []
    original = _scalar_chain.steps
    monkeypatch.setattr(_scalar_chain, "steps", lambda *a: steps.append(original(*a)) or steps[-1])
    ones = np.full(4096, sf.encode(1.0, "fp16"))
    for rounding in ("nearest_even", "toward_zero", "stochastic"):
        kw = dict(accumulator="fp16", rounding=rounding, rng=3, return_flags=True)
        fast = sf.sum(ones, "fp16", **kw)
        assert_same(fast, general(lambda: sf.sum(ones, "fp16", **kw)))
    assert steps and steps[0][3] == 4096  # every step taken on Python floats
    assert int(fast[1].swamped) > 0


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_decoding_small_inputs_equals_the_general_path(fmt, dtype):
    """Every pattern, as an array, as size-1 and 0-d arrays, ints and numpy scalars: the
    same values (NaN payloads included: compared as bytes), types and shapes."""
    width = as_format(fmt).bits
    patterns = np.arange(1 << width, dtype=as_format(fmt).storage_dtype)
    if not sf.formats.native_format(np.dtype(dtype)).holds(as_format(fmt)):
        pytest.skip(f"{np.dtype(dtype)} does not hold {fmt}")
    cases = [patterns, patterns.reshape(2, -1), patterns[-1:], patterns[3:4].reshape(()), int(patterns[-1]),
             patterns[-2], patterns.astype(np.uint64)]
    for bits in cases:
        assert_same(sf.decode(bits, fmt, dtype), general(lambda: sf.decode(bits, fmt, dtype)))
    with pytest.raises(ValueError):
        sf.decode(1 << width, fmt)
    with pytest.raises(ValueError):
        sf.decode(np.array([1 << width], dtype=np.uint64), fmt)


_FP16 = np.arange(1 << 16, dtype=np.uint16)
_FINITE_FP16 = _FP16[np.isfinite(_FP16.view(np.float16))]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "sqrt"])
@pytest.mark.parametrize("platform", ["default", "arm"])  # tininess after / before rounding
@pytest.mark.parametrize("scale", ["any", "tiny", "huge"])
def test_fp16_small_arrays_equal_the_general_path(op, platform, scale, monkeypatch):
    """Every finite fp16 value against random partners (of every size, or of subnormal
    and tiny normal, or of the top binades' exponents), in chunks the fp16 shortcut takes
    (softfloat._fastpaths._float16), flags included."""
    taken = []
    shortcut = _fastpaths.float16_arithmetic
    monkeypatch.setattr(_fastpaths, "float16_arithmetic", lambda *a: taken.append(shortcut(*a)) or taken[-1])
    rng = np.random.default_rng(23)
    a = _FINITE_FP16 & np.uint16(0x7FFF) if op == "sqrt" else _FINITE_FP16
    b = rng.choice(_FINITE_FP16, a.size)
    if scale != "any":
        exponents = rng.integers(0, 3, a.size) if scale == "tiny" else rng.integers(28, 31, a.size)
        b = (b & np.uint16(0x83FF)) | (exponents.astype(np.uint16) << np.uint16(10))
    if op == "div":
        b[(b & np.uint16(0x7FFF)) == 0] = 0x3C00
    attrs = sf.RoundingAttributes(platform=platform)
    chunk = _driver.SMALL_FP16
    starts = range(0, a.size, chunk)
    for s in starts:
        operands = (a[s:s + chunk],) if op == "sqrt" else (a[s:s + chunk], b[s:s + chunk])
        call = lambda: getattr(sf, op)(*operands, "fp16", attributes=attrs, return_flags=True)  # noqa: E731
        assert_same(call(), general(call))
    assert sum(t is not None for t in taken) == len(starts)  # every chunk by the shortcut


@SETTINGS
@given(op=st.sampled_from([sf.add, sf.sub, sf.mul, sf.div]), shapes=st.sampled_from([((7,), (7,)), ((3, 1), (4,)),
                                                                                      ((), (5,)), ((2, 3), ())]),
       seed=st.integers(0, 2**32 - 1), opts=st.sampled_from(OPTIONS), return_flags=st.booleans(),
       rounding=st.sampled_from(DETERMINISTIC))
def test_fp16_arrays_with_specials_equal_the_general_path(op, shapes, seed, opts, return_flags, rounding):
    rng = np.random.default_rng(seed)
    a, b = (rng.integers(0, 1 << 16, s).astype(np.uint16) for s in shapes)
    kw = dict(opts, rounding=rounding, return_flags=return_flags)
    assert_same(op(a, b, "fp16", **kw), general(lambda: op(a, b, "fp16", **kw)))


# ---- short float64 blocks into fp16 by numpy's cast (softfloat._fastpaths._float16.cast) ----
def _edge_float64s():
    """fp16's thresholds and their float64 neighbours: the overflow threshold 65520 (a tie
    that goes up), max_finite, the smallest normal and the tininess bounds, the midpoints
    around the smallest subnormal, zeros, infinities and NaNs, random values over the
    whole float64 range."""
    m = 2.0 ** -14
    points = [65520.0, 65504.0, 65519.99, 65536.0, 1e300, m, m * (1 - 2.0 ** -12), m * (1 - 2.0 ** -11),
              m * (1 - 2.0 ** -13), 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -26, 1e-300, 5e-324, 1.0,
              1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 0.1, 0.0]
    values = [v for p in points for v in (p, np.nextafter(p, 0), np.nextafter(p, np.inf))]
    values += [-v for v in values] + [np.inf, -np.inf, np.nan]
    rng = np.random.default_rng(24)
    values += (rng.standard_normal(400) * 2.0 ** rng.integers(-30, 20, 400)).tolist()
    return np.array(values, dtype=np.float64)


@pytest.fixture
def cast_spy(monkeypatch):
    from softfloat._fastpaths import _float16
    taken = []
    real = _float16.cast
    monkeypatch.setattr(_float16, "cast", lambda *a: taken.append(a[0].size) or real(*a))
    return taken


@pytest.mark.parametrize("options", [{}, {"tininess": "before"}, {"rounding": "toward_zero"}, {"saturate": True},
                                     {"subnormals": False}])
def test_short_float64_blocks_into_fp16_equal_the_general_path(cast_spy, options):
    x = _edge_float64s()
    for values in (x, x[:1].reshape(()), x[np.isfinite(x)], np.concatenate([x] * 4)):
        for want in (True, False):
            call = (lambda: sf.encode(values, "fp16", return_flags=want, **options))
            assert_same(call(), general(call))
            q = (lambda: sf.quantize(values, "fp16", return_flags=want, **options))
            assert_same(q(), general(q))
    if not options or "tininess" in options:
        assert cast_spy  # the default attributes (any tininess) take the cast; the others do not
    else:
        assert not cast_spy


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=50),
       st.sampled_from(["after", "before"]))
def test_float64_into_fp16_by_the_cast_equals_the_general_path(values, tininess):
    x = np.array(values, dtype=np.float64)
    call = (lambda: sf.encode(x, "fp16", tininess=tininess, return_flags=True))
    assert_same(call(), general(call))
