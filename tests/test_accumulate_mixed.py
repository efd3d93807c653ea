"""Products of two formats: ``sf.matmul``/``sf.vecdot`` with ``b_format`` (b's patterns in
another format than a's), as E4M3 activations times E5M2 gradients need.

* ``b_format=None`` and ``b_format=fmt`` are today's calls, bit for bit, on every path;
* fp8_e4m3 x fp8_e5m2 and fp16 x bf16 (both ways round) against the exact reference
  (``tests/accumulate_oracle.py``: each operand decoded by its own format into exact
  rationals, every rounding by MPFR/Fraction), through IEEE accumulators in every order,
  with blocks, rounded products and every deterministic rounding mode;
* every fp8_e4m3 x fp8_e5m2 pair as a one-term dot product with c, against numpy's own
  float32/float16 arithmetic on ml_dtypes' decoding;
* the tensor-core presets (the FP8 path for E4M3 x E5M2) against the reference's fused
  adder, with a probe of the per-operand subnormal clamp;
* errors name both formats (and ``b_format``).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat.accumulate import FusedAccumulator, hardware_model
from softfloat.accumulate.reduce import default_accumulator
from tests import accumulate_oracle as ora
from tests.accumulate_checks import check, pats, random_patterns

E4M3, E5M2, F16, BF16, F32, F64 = sf.fp8_e4m3, sf.fp8_e5m2, sf.fp16, sf.bf16, sf.fp32, sf.fp64
PAIRS = [(E4M3, E5M2), (E5M2, E4M3), (F16, BF16), (BF16, F16)]
SPREAD = {E4M3: 9, E5M2: 14, F16: 16, BF16: 24}


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _data(rng, fmt, shape, spread=None, **kw):
    return random_patterns(rng, fmt, shape, center=int(rng.integers(-2, 3)),
                           spread=SPREAD[fmt] if spread is None else spread, **kw)


def _plain(result, transpose=False):
    """(bits, {flag name: array}) of a result with flags, dask ones computed."""
    bits, flags = result

    def arr(x):
        x = np.asarray(x.compute() if hasattr(x, "compute") else x)
        return x.T if transpose else x
    return arr(bits), {name: arr(getattr(flags, name)) for name in ora.FLAG_FIELDS}


def _same(got, want):
    """Bits (with their dtype) and every flag field and count equal."""
    (gb, gf), (wb, wf) = _plain(got), _plain(want)
    np.testing.assert_array_equal(gb, wb)
    assert gb.dtype == wb.dtype
    for name in ora.FLAG_FIELDS:
        np.testing.assert_array_equal(gf[name], wf[name], err_msg=name)


# =====================================================================================
# (1) b_format=None / b_format=fmt: today's bits on every path
# =====================================================================================
SAME_FORMAT_CALLS = [
    ("vecdot-1d-short", "vecdot", F16, (12,), {}),                       # the scalar one-output chain
    ("vecdot-1d-long", "vecdot", F16, (300,), {}),                       # numpy's one-output shortcut
    ("vecdot-1d-fp16acc", "vecdot", F16, (40,), {"accumulator": "fp16"}),
    ("vecdot-2d-native", "vecdot", F16, (5, 70), {}),                    # the native fp32 plan
    ("vecdot-2d-bf16", "vecdot", BF16, (5, 70), {"accumulator": "bf16", "rounding": "upward"}),
    ("vecdot-pairwise", "vecdot", E4M3, (3, 33), {"order": "pairwise", "accumulator": "fp16"}),
    ("vecdot-reverse-block", "vecdot", E5M2, (3, 33), {"order": "reverse", "block": 8, "accumulator": "bf16"}),
    ("vecdot-product", "vecdot", F16, (3, 20), {"product": "fp16", "rounding": "toward_zero"}),
    ("vecdot-stochastic", "vecdot", BF16, (3, 20), {"accumulator": "bf16", "rounding": "stochastic", "rng": 7}),
    ("matmul-native", "matmul", F16, None, {}),
    ("matmul-ieee", "matmul", BF16, None, {"accumulator": "bf16", "order": "pairwise"}),
    ("matmul-h100", "matmul", E4M3, None, {"accumulator": "h100"}),
    ("matmul-h100-fp16", "matmul", E5M2, None, {"accumulator": "h100", "out_format": "fp16"}),
    ("matmul-a100-block", "matmul", BF16, None, {"accumulator": "a100", "block": 8}),
    ("matmul-stochastic", "matmul", F16, None, {"accumulator": "fp16", "rounding": "stochastic", "rng": 3}),
]


@pytest.mark.parametrize("name,kind,fmt,shape,kw", SAME_FORMAT_CALLS, ids=[c[0] for c in SAME_FORMAT_CALLS])
def test_same_format_is_todays_call(name, kind, fmt, shape, kw):
    rng = _rng("same", name)
    if kind == "vecdot":
        a, b = _data(rng, fmt, shape), _data(rng, fmt, shape)
    else:
        a, b = _data(rng, fmt, (4, 37)), _data(rng, fmt, (37, 3))
    func = getattr(sf, kind)
    want = func(a, b, fmt, return_flags=True, **kw)
    for b_format in (None, fmt, fmt.name):
        _same(func(a, b, fmt, b_format=b_format, return_flags=True, **kw), want)
    # and without flags (other shortcuts apply)
    np.testing.assert_array_equal(func(a, b, fmt, b_format=fmt, **kw), func(a, b, fmt, **kw))


def test_same_format_through_dask():
    da = pytest.importorskip("dask.array")
    rng = _rng("dask-same")
    a, b = _data(rng, F16, (6, 40)), _data(rng, F16, (40, 5))
    want = sf.matmul(a, b, F16, accumulator="fp16", return_flags=True)
    got = sf.matmul(da.from_array(a, chunks=(3, 16)), da.from_array(b, chunks=(16, 5)), F16, b_format=F16,
                    accumulator="fp16", return_flags=True)
    _same(got, want)


# =====================================================================================
# (2) two formats through IEEE accumulators, against the exact reference
# =====================================================================================
@pytest.mark.parametrize("order", ("sequential", "pairwise", "reverse"))
@pytest.mark.parametrize("acc", ("fp32", "fp16", "bf16"))
@pytest.mark.parametrize("fa,fb", PAIRS, ids=[f"{a}x{b}" for a, b in PAIRS])
def test_mixed_ieee_against_reference(fa, fb, acc, order):
    rng = _rng("ieee", str(fa), str(fb), acc, order)
    a, b = _data(rng, fa, (3, 21)), _data(rng, fb, (21, 2))
    check("matmul", a, b, fa, b_format=fb, accumulator=acc, order=order)
    A = sf.as_format(acc)
    c = random_patterns(rng, A, (3, 2), center=int(rng.integers(-3, 4)), spread=10)
    check("matmul", a, b, fa, b_format=fb, accumulator=acc, order=order, c=c)
    check("vecdot", a, b.T[:, None, :], fa, b_format=fb, accumulator=acc, order=order, block=6)


@pytest.mark.parametrize("mode", ora.MODES)
@pytest.mark.parametrize("fa,fb", PAIRS, ids=[f"{a}x{b}" for a, b in PAIRS])
def test_mixed_every_rounding_mode(fa, fb, mode):
    """Every deterministic mode, with rounded products (into each operand's format and
    fp16), blocks promoted into fp32, an fp16 out_format, and specials."""
    rng = _rng("modes", str(fa), str(fb), mode)
    a, b = _data(rng, fa, (4, 19), specials=0.03), _data(rng, fb, (4, 19), specials=0.03)
    for acc in ("fp16", "bf16", "fp32"):
        check("vecdot", a, b, fa, b_format=fb, accumulator=acc, rounding=mode)
    check("vecdot", a, b, fa, b_format=fb, accumulator="bf16", out_format="fp32", block=5, rounding=mode)
    check("vecdot", a, b, fa, b_format=fb, accumulator="fp32", out_format="fp16", rounding=mode)
    finite_a, finite_b = _data(rng, fa, (4, 19)), _data(rng, fb, (4, 19))  # (no inf into E4M3)
    for product in (fa, fb, F16):
        check("vecdot", finite_a, finite_b, fa, b_format=fb, accumulator="fp32", product=product, rounding=mode)
    check("vecdot", a, b, fa, b_format=fb, accumulator="fp16", product=F16, order="pairwise",
          rounding=mode, tininess="before", subnormals=False)


def test_mixed_specials_and_flags():
    """0 * inf is invalid, a signalling NaN of either operand's format is invalid, NaN
    patterns are read by each format (E4M3 has no inf: 0x7f is its NaN; in E5M2 0x7c is
    inf, 0x7d a signalling NaN)."""
    a = pats([[0, 1, 1], [1, 1, 1], [448, 1, 1], ["nan", 1, 1], [2, 3, 1]], E4M3)
    b = np.array([[0x7C, 0x00, 0x00], [0x7D, 0x3C, 0x3C], [0x7B, 0x7B, 0x3C],
                  [0x3C, 0x3C, 0x3C], [0xFC, 0x7C, 0x3C]], dtype=np.uint8)  # inf, snan, max, 1, -inf/inf
    for acc in ("fp32", "fp16", "bf16", "h100"):
        check("vecdot", a, b, E4M3, b_format=E5M2, accumulator=acc)
        check("vecdot", b, a, E5M2, b_format=E4M3, accumulator=acc)
    bits, flags = sf.vecdot(a, b, E4M3, b_format=E5M2, return_flags=True)
    assert flags.invalid.tolist() == [True, True, False, False, True]  # 0*inf, sNaN, -, qNaN, inf-inf
    assert np.isnan(sf.decode(bits, F32)).tolist() == [True, True, False, True, True]


def test_every_e4m3_e5m2_pair():
    """All 256 x 256 patterns as one-term dot products from c: round_A(c + a * b) for A
    fp32 (numpy float32: the product of a 4-bit and a 3-bit significand is exact in it,
    the addition one rounding) and fp16 (c + a * b exact in float64, one cast)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    pa, pb = np.meshgrid(np.arange(256, dtype=np.uint8), np.arange(256, dtype=np.uint8), indexing="ij")
    pa, pb = pa.reshape(-1, 1), pb.reshape(-1, 1)
    va = pa.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    vb = pb.view(ml_dtypes.float8_e5m2).astype(np.float64)
    for c in (0.0, 1.0, -2.0**-20, 3.0e5):
        with np.errstate(all="ignore"):
            want32 = (np.float32(c) + (va * vb).astype(np.float32)).reshape(-1)
        got = sf.vecdot(pa, pb, E4M3, b_format=E5M2, c=sf.encode(np.full(pa.shape[0], c), F32))
        _agree(got, want32, F32)
    for c in (0.0, 1.0, -2.0**-20):
        with np.errstate(all="ignore"):
            want16 = (np.float64(np.float16(c)) + va * vb).astype(np.float16).reshape(-1)
        got = sf.vecdot(pa, pb, E4M3, b_format=E5M2, accumulator="fp16",
                        c=sf.encode(np.full(pa.shape[0], c), F16))
        _agree(got, want16, F16)
    # and swapped: b x a with fmt E5M2
    got = sf.vecdot(pb, pa, E5M2, b_format=E4M3)
    with np.errstate(all="ignore"):
        want32 = (va * vb).astype(np.float32).reshape(-1)
    _agree(got, want32, F32)


def _agree(bits, want, fmt):
    got = sf.decode(bits, fmt).astype(want.dtype)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    np.testing.assert_array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))
    assert (bits[nan] == fmt.nan_bits).all()  # canonical quiet NaN


def test_e4m3_e5m2_pairs_with_flags_against_reference():
    """A sample of the pairs with c, every deterministic mode, flags included."""
    rng = _rng("pairs-flags")
    a = rng.integers(0, 256, (64, 1)).astype(np.uint8)
    b = rng.integers(0, 256, (64, 1)).astype(np.uint8)
    c = random_patterns(rng, F16, (64,), spread=20)
    for mode in ora.MODES:
        check("vecdot", a, b, E4M3, b_format=E5M2, accumulator="fp16", c=c, rounding=mode)


def test_dask_operands_with_two_formats():
    da = pytest.importorskip("dask.array")
    rng = _rng("dask-mixed")
    a, b = _data(rng, E4M3, (6, 40)), _data(rng, E5M2, (40, 5))
    for kw in ({"accumulator": "fp16"}, {"accumulator": "bf16", "order": "pairwise"}, {"accumulator": "h100"},
               {"accumulator": "fp32", "rounding": "stochastic", "rng": 5}):
        want = sf.matmul(a, b, E4M3, b_format=E5M2, return_flags=True, **kw)
        got = sf.matmul(da.from_array(a, chunks=(3, 16)), da.from_array(b, chunks=(16, 5)), E4M3,
                        b_format=E5M2, return_flags=True, **kw)
        _same(got, want)
        vd = sf.vecdot(da.from_array(a, chunks=(3, 16)), da.from_array(b.T[0], chunks=16), E4M3,
                       b_format=E5M2, **kw)
        np.testing.assert_array_equal(vd.compute(), sf.vecdot(a, b.T[0], E4M3, b_format=E5M2, **kw))


@pytest.mark.parametrize("fa,fb,acc", [(E4M3, E5M2, "fp32"), (E5M2, E4M3, "fp16"), (F16, BF16, "fp32"),
                                        (BF16, F16, "fp32"), (E4M3, F16, "fp32")], ids=str)
@pytest.mark.parametrize("order", ("sequential", "pairwise", "reverse"))
def test_native_plans_with_two_formats_equal_the_general_path(fa, fb, acc, order, monkeypatch):
    """Two formats that the accumulator holds take numpy's native arithmetic (checked: the
    plan is taken) with the same bits, flags and counts as the general path.  (The tiles'
    plan: the shortcut past the tiles for small products, softfloat.accumulate._few, held
    off; tests/test_few_outputs.py tests it with two formats.)"""
    from softfloat.accumulate import _fast
    from softfloat.accumulate import reduce as reduce_module
    monkeypatch.setattr(reduce_module, "_ONE_OUTPUT_TERMS", 0)
    rng = _rng("native", str(fa), str(fb), acc, order)
    a, b = _data(rng, fa, (5, 70), spread=6), _data(rng, fb, (70, 9), spread=6)
    kw = {"accumulator": acc, "order": order, "return_flags": True}
    seen = []
    original = _fast.plan
    monkeypatch.setattr(_fast, "plan", lambda spec, layout: seen.append(original(spec, layout)) or seen[-1])
    fast = sf.matmul(a, b, fa, b_format=fb, **kw)
    assert seen and all(p is not None for p in seen), "the native plan was not taken"
    monkeypatch.setattr(_fast, "plan", lambda spec, layout: None)
    _same(fast, sf.matmul(a, b, fa, b_format=fb, **kw))
    check("matmul", a[:2, :20], b[:20, :2], fa, b_format=fb, accumulator=acc, order=order)


# =====================================================================================
# (3) tensor-core presets and fused adders
# =====================================================================================
@pytest.mark.parametrize("out", ("fp32", "fp16"))
@pytest.mark.parametrize("chip", ("ada", "h100", "h200", "b200"))
def test_presets_e4m3_x_e5m2(chip, out):
    """The FP8 path of each chip (native on Ada and H100's fp32 output, via fp16 otherwise)
    over several blocks, with c and with promotion, against the reference's fused adder."""
    N = ora.preset(chip, E4M3, sf.as_format(out)).terms
    K = 2 * N + 3
    for fa, fb in ((E4M3, E5M2), (E5M2, E4M3)):
        rng = _rng("hw", chip, out, str(fa))
        a, b = _data(rng, fa, (3, K), zeros=0.05), _data(rng, fb, (K, 2), zeros=0.05)
        c = random_patterns(rng, sf.as_format(out), (3, 2), spread=12)
        check("matmul", a, b, fa, b_format=fb, accumulator=chip, out_format=out)
        check("matmul", a, b, fa, b_format=fb, accumulator=chip, out_format=out, c=c)
        check("vecdot", a, b.T[:1], fa, b_format=fb, accumulator=chip, out_format=out, block=8)
    assert hardware_model(chip, E4M3, sf.as_format(out), b_format=E5M2) == hardware_model(chip, E5M2,
                                                                                         sf.as_format(out))


def test_torch_front_end_call():
    """The call the torch front end makes: h100, fp32 output, against the reference."""
    rng = _rng("torch-call")
    qa, qb = _data(rng, E4M3, (4, 70)), _data(rng, E5M2, (70, 3))
    check("matmul", qa, qb, "fp8_e4m3", b_format="fp8_e5m2", accumulator="h100", out_format="fp32")


def test_subnormal_clamp_is_per_operand():
    """Native FP8 path (H100, fp32 output, F = 13): a = [2**-9 (E4M3's smallest subnormal),
    2**-6], b = [1, 2**-14] (E5M2).  The first product's exponent is E4M3's emin -6 plus 0
    = -6 (its value is 2**-9), so M = -6 and the quantum is 2**-19; the second product,
    2**-20, is truncated away: the result is 2**-9, one swamped product.  Clamping at
    E5M2's emin (-14) would give M = -9 and keep it (2**-9 + 2**-20)."""
    a = pats([2**-9, 2**-6], E4M3)
    b = pats([1, 2**-14], E5M2)
    for x, y, fx, fy in ((a, b, E4M3, E5M2), (b, a, E5M2, E4M3)):
        bits, flags = sf.vecdot(x, y, fx, b_format=fy, accumulator="h100", return_flags=True)
        assert float(sf.decode(bits, F32)) == 2.0**-9
        assert int(flags.swamped) == 1 and bool(flags.inexact)
        check("vecdot", x, y, fx, b_format=fy, accumulator="h100")


@pytest.mark.parametrize("acc", [
    FusedAccumulator(terms=4, fraction_bits=12, output="fp32", output_rounding="toward_zero"),
    FusedAccumulator(terms=3, fraction_bits=20, output="fp16", output_rounding="nearest_even"),
    FusedAccumulator(terms=8, fraction_bits=25, output="fp32", fp8="via_fp16"),
], ids=repr)
@pytest.mark.parametrize("fa,fb", [(E4M3, E5M2), (F16, BF16), (E4M3, F16), (BF16, E5M2)],
                         ids=lambda f: str(f))
def test_custom_fused_accumulator_two_formats(acc, fa, fb):
    """A FusedAccumulator takes any two formats whose products are exact (precisions adding
    up to at most 24 bits); "via fp16" only when both are FP8."""
    rng = _rng("fused", repr(acc), str(fa), str(fb))
    a, b = _data(rng, fa, (3, 13)), _data(rng, fb, (3, 13))
    check("vecdot", a, b, fa, b_format=fb, accumulator=acc)
    check("vecdot", a, b, fa, b_format=fb, accumulator=acc, block=5, c=random_patterns(rng, acc.output, (3,)))


# =====================================================================================
# (4) the default accumulator and the errors
# =====================================================================================
def test_default_accumulator_of_two_formats():
    assert default_accumulator(E4M3, E5M2) == F32
    assert default_accumulator(F16, BF16) == F32
    assert default_accumulator(BF16, F32) == F32
    assert default_accumulator(F64, F16) == F64 and default_accumulator(F16, F64) == F64
    for f in (E4M3, E5M2, F16, BF16, sf.tf32, F32, F64, sf.fp4_e2m1):
        assert default_accumulator(f, f) == default_accumulator(f) == default_accumulator(f, None)
    a, b = pats([1.5, 2], E4M3), pats([3, 0.25], E5M2)
    assert sf.vecdot(a, b, E4M3, b_format=E5M2).dtype == np.uint32  # fp32 patterns
    assert sf.matmul(pats([[1.5]], F16), pats([[3]], F64), F16, b_format=F64).dtype == np.uint64
    check("vecdot", pats([1.5, -2**-24], F16), pats([3, 2**-1000], F64), F16, b_format=F64)


@pytest.mark.parametrize("chip,fa,fb,names", [
    ("h100", F16, BF16, ("fp16", "bf16", "fp8_e4m3")),
    ("h100", E4M3, F16, ("fp8_e4m3", "fp16")),
    ("b200", BF16, E5M2, ("bf16", "fp8_e5m2")),
    ("a100", E4M3, E5M2, ("fp8_e4m3", "fp8_e5m2", "tf32")),
    ("v100", F16, BF16, ("fp16", "bf16")),
    ("h100", sf.tf32, F16, ("tf32", "fp16")),
])
def test_unsupported_pairs_name_both_formats(chip, fa, fb, names):
    a = np.zeros((2, 4), fa.storage_dtype)
    b = np.zeros((4, 2), fb.storage_dtype)
    for call in (lambda: sf.matmul(a, b, fa, b_format=fb, accumulator=chip),
                 lambda: sf.vecdot(a, b.T, fa, b_format=fb, accumulator=chip),
                 lambda: hardware_model(chip, fa, b_format=fb)):
        with pytest.raises(ValueError) as info:
            call()
        message = str(info.value)
        for name in names + (chip,):
            assert name in message, message


def test_fused_accumulator_too_wide_a_pair():
    a = np.zeros(4, np.uint16)
    b = np.zeros(4, np.uint32)
    with pytest.raises(ValueError, match="fp16 x fp32") as info:
        sf.vecdot(a, b, F16, b_format=F32, accumulator=FusedAccumulator(4, 23))
    assert "b_format" in str(info.value)


def test_b_format_errors():
    a = pats([1, 2], F16)
    with pytest.raises(TypeError, match="b_format"):
        sf.vecdot(a, a, F16, b_format=3)
    with pytest.raises(TypeError, match="b_format"):
        sf.matmul(a[None], a[:, None], F16, b_format=2.5)
    with pytest.raises(ValueError, match="b_format"):
        sf.matmul(a[None], a[:, None], F16, b_format="fp17")
    with pytest.raises(ValueError, match="b"):  # a pattern out of range for E5M2
        sf.vecdot(a, a, F16, b_format=E5M2)
    with pytest.raises(TypeError, match="b_format"):  # sum has one operand: no such keyword
        sf.sum(a, F16, b_format=F16)


# =====================================================================================
# properties
# =====================================================================================
FORMATS = [E4M3, E5M2, F16, BF16]


@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(fa=st.sampled_from(FORMATS), fb=st.sampled_from(FORMATS), K=st.integers(0, 24),
       acc=st.sampled_from(["fp32", "fp16", "bf16", None]),
       order=st.sampled_from(["sequential", "pairwise", "reverse"]), mode=st.sampled_from(ora.MODES), block=st.sampled_from([None, None, 4]), seed=st.integers(0, 2**32 - 1))
def test_random_pairs_against_reference(fa, fb, K, acc, order, mode, block, seed):
    rng = np.random.default_rng(seed)
    a, b = _data(rng, fa, (2, K), specials=0.02), _data(rng, fb, (K,), specials=0.02)
    kw = {"order": order, "rounding": mode, "block": block}
    if acc is not None:
        kw["accumulator"] = acc
    check("vecdot", a, b, fa, b_format=fb, **kw)


@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(fa=st.sampled_from(FORMATS), fb=st.sampled_from(FORMATS), K=st.integers(1, 40),
       acc=st.sampled_from(["fp32", "fp16", "bf16", "h100", "ada"]), seed=st.integers(0, 2**32 - 1),
       stochastic=st.booleans(), order=st.sampled_from(["sequential", "pairwise", "reverse"]))
def test_operands_commute(fa, fb, K, acc, seed, stochastic, order):
    """a_k * b_k is one exact product whichever operand is which: swapping (a, fmt) with
    (b, b_format) changes no bit, flag or count -- also under stochastic rounding, whose
    draws depend on the seed, the output and the step, not on the operands; and matmul's
    transpose identity (B^T A^T)^T = A B holds bit for bit in deterministic modes."""
    hardware = acc in ("h100", "ada")
    if hardware and fa != fb and not {fa, fb} <= {E4M3, E5M2}:
        return  # no such matrix unit
    rng = np.random.default_rng(seed)
    a, b = _data(rng, fa, (3, K), specials=0.02), _data(rng, fb, (3, K), specials=0.02)
    kw = {"accumulator": acc, "return_flags": True, "order": "sequential" if hardware else order}
    if stochastic and not hardware:
        kw.update(rounding="stochastic", rng=seed)
    _same(sf.vecdot(b, a, fb, b_format=fa, **kw), sf.vecdot(a, b, fa, b_format=fb, **kw))
    if not stochastic:
        bt, flags = _plain(sf.matmul(b, a.T, fb, b_format=fa, **kw), transpose=True)
        wb, wf = _plain(sf.matmul(a, b.T, fa, b_format=fb, **kw))
        np.testing.assert_array_equal(bt, wb)
        for name in ora.FLAG_FIELDS:
            np.testing.assert_array_equal(flags[name], wf[name], err_msg=name)
