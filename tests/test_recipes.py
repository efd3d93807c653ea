"""softfloat.recipes: the recipes as data, and each recipe's matrix products against the
composition of bit-level calls that defines them (GemmEngine's docstring), bit for bit;
the records against counts computed independently with numpy and ml_dtypes."""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

import softfloat as sf
import softfloat.training as T
from softfloat.recipes import RECIPES, GemmEngine, GemmRecord, Recipe, as_recipe

RNG = np.random.default_rng(24)
F32 = sf.fp32


def dec(bits, fmt):
    return sf.decode(bits, fmt, np.float32)


def same(x, y):
    """Bit for bit (float32 patterns; NaNs compare by pattern too)."""
    x, y = np.asarray(x, np.float32), np.asarray(y, np.float32)
    return x.shape == y.shape and np.array_equal(x.view(np.uint32), y.view(np.uint32))


def operands(kind, M=3, K=160, N=5):
    """a (M, K), b (K, N) float32 values over several binades (ragged 128- and 32-blocks)."""
    a = (RNG.standard_normal((M, K)) * 2.0 ** RNG.integers(-6, 6, (M, K))).astype(np.float32)
    b = (RNG.standard_normal((K, N)) * 2.0 ** RNG.integers(-6, 6, (K, N))).astype(np.float32)
    return a, b


# ---- the compositions of GemmEngine's docstring, one per family ---------------------------
def roles(r: Recipe, kind):
    fwd, bwd = r.fp8_forward, r.fp8_backward
    return {"fprop": (fwd, fwd, "input", "weight"), "dgrad": (bwd, fwd, "grad", "weight"),
            "wgrad": (fwd, bwd, "input", "grad")}[kind]


def scaled_matmul(bits_a, fa, bits_b, fb, acc, **options):
    """matmul of two scaled operands, each in its own format (``b_format``)."""
    return dec(sf.matmul(bits_a, bits_b, fa, b_format=fb, accumulator=acc, out_format=F32, **options), F32)


def reference(r: Recipe, a, b, kind, *, acc, bias=None, scales=None, epilogue=False):
    """The product by its definition; ``scales``: (s_a, s_b) of delayed scaling."""
    I = r.matmul_inputs
    if r.fp8 is None:
        c = None
        if bias is not None and not epilogue:
            c = sf.encode(sf.decode(sf.encode(bias, I), I), F32)
        D = dec(sf.matmul(sf.encode(a, I), sf.encode(b, I), I, accumulator=acc, product=r.product,
                          block=r.accumulate_block, c=c, out_format=F32), F32)
    else:
        fa, fb, _, role_b = roles(r, kind)
        if r.fp8 in ("delayed", "current"):
            opts = [dict(scale=s) for s in scales] if r.fp8 == "delayed" else [dict(amax_epsilon=1e-12)] * 2
            sa, sb = sf.scaled_encode(a, fa, **opts[0]), sf.scaled_encode(b, fb, **opts[1])
            R = scaled_matmul(sa.bits, fa, sb.bits, fb, acc, block=r.accumulate_block)
            D = np.float32(R * np.float32(np.float32(sa.scale_inv) * np.float32(sb.scale_inv)))
        elif r.fp8 == "blocks":
            bb = (128, 128) if role_b == "weight" else (128, 1)
            sa = sf.scaled_encode(a, fa, scaling="blocks", block=(1, 128))
            sb = sf.scaled_encode(b, fb, scaling="blocks", block=bb)
            D = None
            for j, k0 in enumerate(range(0, a.shape[1], 128)):
                R = scaled_matmul(sa.bits[:, k0:k0 + 128], fa, sb.bits[k0:k0 + 128], fb, acc)
                cols = np.repeat(sb.scale_inv[j], bb[1])[:b.shape[1]]
                # fp32(d_a * d_b): the float64 product of two fp32 values is exact
                s = (np.float64(sa.scale_inv[:, j:j + 1]) * np.float64(cols[None, :])).astype(np.float32)
                term = (R * s).astype(np.float32)
                D = term if D is None else (D + term).astype(np.float32)
        else:
            sa = sf.scaled_encode(a, fa, scaling="mx", block=32, scale_rounding=r.mx_scale_rounding)
            sb = sf.scaled_encode(b.T, fb, scaling="mx", block=32, scale_rounding=r.mx_scale_rounding)
            va, vb = sf.scaled_decode(sa), sf.scaled_decode(sb).T
            bf = all(np.array_equal(sf.decode(sf.encode(v, "bf16"), "bf16"), v) for v in (va, vb))
            F = sf.bf16 if bf else F32
            D = dec(sf.matmul(sf.encode(va, F), sf.encode(vb, F), F, accumulator=acc, out_format=F32,
                              product=None if bf else "fp32"), F32)
    if bias is not None and (r.fp8 is not None or epilogue):
        D = (D + np.asarray(bias, np.float32)).astype(np.float32)
    return D


def rounded(D, out):
    return sf.decode(sf.encode(D, out), out, out.value_dtype())


# ---- every recipe, every product -----------------------------------------------------------
@pytest.mark.parametrize("name", list(RECIPES))
@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
def test_every_product_is_its_bit_level_composition(name, kind):
    r = RECIPES[name]
    a, b = operands(kind)
    bias = (RNG.standard_normal(b.shape[1]) * 3).astype(np.float32) if kind == "fprop" else None
    eng = GemmEngine(name)
    scales = None
    if r.fp8 == "delayed":  # the first call of a call site: scale 1 for both roles
        scales = (1.0, 1.0)
    got = eng.gemm(a, b, kind, "layer0", bias=bias)
    assert same(got, reference(r, a, b, kind, acc=r.accumulator, bias=bias, scales=scales))
    got_out = GemmEngine(name).gemm(a, b, kind, "layer0", bias=bias, out=r.activations)
    assert same(got_out, rounded(reference(r, a, b, kind, acc=r.accumulator, bias=bias, scales=scales),
                                 r.activations))


@pytest.mark.parametrize("name", list(RECIPES))
@pytest.mark.parametrize("kind", ["fprop", "wgrad"])
def test_a_stack_is_one_call_of_its_entries_products(name, kind):
    # entry i of a stack is the 2-d composition of (a[i], b[i]); a per-tensor scale is
    # the stack's one (its amax over every entry), row tiles and blocks stay per matrix
    r = RECIPES[name]
    pairs = [operands(kind) for _ in range(3)]
    a = np.stack([p[0] * np.float32(4.0 ** i) for i, p in enumerate(pairs)])
    b = np.stack([p[1] for p in pairs])
    bias = (RNG.standard_normal((3, 1, b.shape[2])) * 3).astype(np.float32)
    got, rec = GemmEngine(name, bias_epilogue=True).gemm(a, b, kind, "l", bias=bias, record=True)
    ref_r, scales = r, None
    if r.fp8 in ("delayed", "current"):  # the stack's scales (delayed: the first call's, 1)
        fa, fb, _, _ = roles(r, kind)
        scales = (1.0, 1.0) if r.fp8 == "delayed" else tuple(
            float(sf.scaled_encode(x, f, amax_epsilon=1e-12).scales) for x, f in ((a, fa), (b, fb)))
        ref_r = dataclasses.replace(r, fp8="delayed")
    for i in range(3):
        want = reference(ref_r, a[i], b[i], kind, acc=r.accumulator, bias=bias[i], scales=scales, epilogue=True)
        assert same(got[i], want), i
    assert rec.a.elements == a.size and rec.b.elements == b.size


def test_a_stack_gives_a_delayed_history_the_calls_amax_once():
    eng = GemmEngine("fp8", history="site")
    a = np.stack([np.full((2, 4), 0.01, np.float32), np.full((2, 4), 100.0, np.float32)])
    b = np.ones((2, 4, 3), np.float32)
    for _ in range(2):
        eng.gemm(a, b, "fprop", "l")
    assert eng.states["l", "input"].amax_history.tolist() == [100.0]  # one call's amax joined


def test_a_recompute_takes_the_scales_of_its_iteration():
    eng = GemmEngine("fp8", history="site")
    a, b = np.full((2, 4), 3.0, np.float32), np.ones((4, 3), np.float32)
    first = eng.gemm(a, b, "fprop", "l")
    again = eng.gemm(a * 2, b, "recompute", "l")   # no new iteration: scale 1 still
    assert np.array_equal(again, 2 * first) and eng.states["l", "input"].amax_history.tolist() == []
    eng.gemm(a, b, "fprop", "l")                                # the next iteration
    assert eng.states["l", "input"].amax_history.tolist() == [6.0]


@pytest.mark.parametrize("name, acc", [("bf16", "h100"), ("O2", "fp16"), ("fp8-current", "h100"),
                                       ("fp8-block", "fp32"), ("mxfp8", "bf16"), ("fp8", "h100")])
@pytest.mark.parametrize("kind", ["fprop", "dgrad"])
def test_an_explicit_accumulator_overrides_the_recipes(name, acc, kind):
    r = RECIPES[name]
    a, b = operands(kind, K=256)
    eng = GemmEngine(name, accumulator=acc)
    assert eng.accumulator == acc
    got = eng.gemm(a, b, kind, "l")
    assert same(got, reference(r, a, b, kind, acc=acc, scales=(1.0, 1.0)))


@pytest.mark.parametrize("history", ["site", "step"])
def test_delayed_scaling_history_over_three_iterations(history):
    # the scales follow softfloat.DelayedScaling per (key, role): "site" folds a site's
    # amaxes in when its next fprop starts, "step" at new_step() (the largest amax of the step)
    r = RECIPES["fp8"]
    eng = GemmEngine("fp8", history=history)
    states = {role: sf.DelayedScaling(fmt) for role, fmt in (("input", r.fp8_forward), ("weight", r.fp8_forward),
                                                             ("grad", r.fp8_backward))}
    for step in range(3):
        if history == "step":
            eng.new_step()
        a, b = operands("fprop", K=64)
        a *= np.float32(2.0 ** (3 * step))
        got = eng.gemm(a, b, "fprop", "layer0")
        want = reference(r, a, b, "fprop", acc="fp32", scales=(states["input"].scale, states["weight"].scale))
        assert same(got, want)
        # the backward products of the same iteration use the forward's scales for the
        # input and the weight (Transformer Engine reuses their FP8 copies)
        g = (RNG.standard_normal((a.shape[0], b.shape[1])) * 2.0 ** -step).astype(np.float32)
        dgrad = eng.gemm(g, np.ascontiguousarray(b.T), "dgrad", "layer0")
        assert same(dgrad, reference(r, g, np.ascontiguousarray(b.T), "dgrad", acc="fp32",
                                     scales=(states["grad"].scale, states["weight"].scale)))
        wgrad = eng.gemm(np.ascontiguousarray(a.T), g, "wgrad", "layer0")
        assert same(wgrad, reference(r, np.ascontiguousarray(a.T), g, "wgrad", acc="fp32",
                                     scales=(states["input"].scale, states["grad"].scale)))
        for role, x in (("input", a), ("weight", b), ("grad", g)):
            states[role].update(float(np.max(np.abs(x))))
    # the last iteration's amaxes wait for the next fprop of the site (or the next step)
    assert eng.states[("layer0", "input")].scale != states["input"].scale
    if history == "site":
        eng.gemm(a, b, "fprop", "layer0")
    else:
        eng.new_step()
    assert eng.states[("layer0", "input")].scale == states["input"].scale
    assert eng.states[("layer0", "grad")].scale == states["grad"].scale


def test_history_step_keeps_the_largest_amax_of_a_step():
    eng = GemmEngine("fp8")
    for m in (2.0, 8.0, 4.0):
        eng.gemm(np.array([[m, 1.0]], np.float32), np.ones((2, 1), np.float32), "fprop", "k")
    eng.new_step()
    assert eng.states[("k", "input")].scale == np.float32(448) / np.float32(8.0)


@pytest.mark.parametrize("name", ["bf16", "O1", "fp32", "fp8", "fp8-current", "fp8-block", "mxfp8", "mxfp4"])
def test_the_cublas_epilogue_bias(name):
    # bias added after the products in fp32, the sum rounded once into out
    r = RECIPES[name]
    a, b = operands("fprop", K=256)
    bias = (RNG.standard_normal(b.shape[1]) * 100).astype(np.float32)
    for out in (None, "bf16", "fp16"):
        got = GemmEngine(name, bias_epilogue=True).gemm(a, b, "fprop", "l", bias=bias, out=out)
        D = reference(r, a, b, "fprop", acc=r.accumulator, scales=(1.0, 1.0))
        D = (D + bias).astype(np.float32)
        assert same(got, D if out is None else rounded(D, sf.as_format(out)))


def test_epilogue_bias_differs_from_the_initial_value_where_it_should():
    # bias 1 and the products 2**-25 each (bf16 x bf16, fp32 accumulator): as the initial
    # value every product is below half an ulp of 1 and is lost; after the products their
    # sum 2**-20 survives
    a = np.full((1, 32), 2.0**-13, np.float32)
    b = np.full((32, 1), 2.0**-12, np.float32)
    bias = np.ones(1, np.float32)
    eng = GemmEngine("bf16")
    assert eng.gemm(a, b, "fprop", "l", bias=bias)[0, 0] == 1.0
    epilogue = GemmEngine("bf16", bias_epilogue=True)
    assert epilogue.gemm(a, b, "fprop", "l", bias=bias)[0, 0] == np.float32(1 + 2.0**-20)


# ---- records against numpy / ml_dtypes ----------------------------------------------------
def test_unscaled_record_counts_against_numpy():
    # fp16 inputs (O2): numpy's float16 cast is the oracle for the operand roundings
    a = (RNG.standard_normal((4, 48)) * 2.0 ** RNG.integers(-30, 18, (4, 48))).astype(np.float32)
    a[0, :3] = [0.0, np.inf, 70000.0]
    b = RNG.standard_normal((48, 3)).astype(np.float32)
    values, rec = GemmEngine("O2").gemm(a, b, "fprop", "l", record=True)
    assert isinstance(rec, GemmRecord) and (rec.kind, rec.key) == ("fprop", "l")
    with np.errstate(over="ignore"):
        q = a.astype(np.float16).astype(np.float32)
    nz = (a != 0) & np.isfinite(a)
    op = rec.a
    assert op.format == sf.fp16 and op.elements == a.size
    assert op.underflow_zero == np.count_nonzero(nz & (q == 0))
    assert op.underflow_subnormal == np.count_nonzero(nz & (q != 0) & (np.abs(q) < 2.0**-14) & (q != a))
    assert op.overflow == np.count_nonzero(nz & np.isinf(q))
    assert op.nonfinite == np.count_nonzero(~np.isfinite(q))
    assert op.amax is None and op.scale is None
    assert rec.b.underflow_zero == 0 and rec.additions == 4 * 48 * 3 and rec.output is None


def test_swamped_additions_against_numpy():
    # bf16 x bf16 into fp32 in k order: the first product 1, then products 2**-30 (below
    # half an ulp: swamped), 3 * 2**-10 (kept) or 0 (not an addend).  The float64 sums
    # here are exact, so fp32(acc + p) is one rounding.
    M, K, N = 3, 40, 2
    a = RNG.choice([0.0, 2.0**-30, 3 * 2.0**-10], (M, K)).astype(np.float32)
    a[:, 0] = 1.0
    b = RNG.choice([1.0, 0.25], (K, N)).astype(np.float32)
    values, rec = GemmEngine("bf16").gemm(a, b, "fprop", "l", record=True)
    swamped, want = 0, np.zeros((M, N), np.float32)
    for i in range(M):
        for j in range(N):
            acc = np.float32(0)
            for k in range(K):
                p = np.float64(a[i, k]) * np.float64(b[k, j])
                new = np.float32(np.float64(acc) + p)
                swamped += int(p != 0 and new == acc)
                acc = new
            want[i, j] = acc
    assert same(values, want)
    assert (rec.additions, rec.swamped) == (M * K * N, swamped) and swamped > 0
    _, light = GemmEngine("bf16").gemm(a, b, "fprop", "l", record="operands")
    assert light.additions is None and light.swamped is None and light.a == rec.a


def test_scaled_record_counts_against_ml_dtypes():
    # current scaling (torchao): s = fp32(448 / amax); q = sat(round(fp32(x * s))) by
    # ml_dtypes' e4m3fn cast; underflow to zero = non-zero x whose q is 0
    a = (RNG.standard_normal((4, 64)) * 2.0 ** RNG.integers(-24, 4, (4, 64))).astype(np.float32)
    a[0, 0] = 0.0
    b = RNG.standard_normal((64, 2)).astype(np.float32)
    _, rec = GemmEngine("fp8-current").gemm(a, b, "fprop", "l", record="operands")
    amax = np.float32(np.max(np.abs(a)))
    s = np.float32(448) / amax
    q = np.clip(a * s, -448, 448).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    op = rec.a
    assert op.amax == amax and op.scale == s and op.format == sf.fp8_e4m3
    assert op.underflow_zero == np.count_nonzero((a != 0) & (q == 0))
    # IEEE underflow, tininess after rounding: x * s rounded to e4m3's 4 significant bits
    # with an unbounded exponent is below 2**-6, and the rounding is inexact (a result
    # that rounds up to 2**-6 itself can still have underflowed)
    y = (a * s).astype(np.float64)
    m, e = np.frexp(y)
    unbounded = np.ldexp(np.round(m * 16) / 16, e)           # numpy rounds half to even
    underflow = (np.abs(unbounded) < 2.0**-6) & (q != y)
    assert op.underflow_zero == np.count_nonzero(underflow & (q == 0))
    assert op.underflow_subnormal == np.count_nonzero(underflow & (q != 0))
    assert op.overflow == 0 and op.nonfinite == 0


def test_mx_record_scales_and_saturation():
    # MXFP4: per block of 32, X = 2**(floor(log2 amax) - 2); an element above 6 * X is
    # clamped (overflow flagged); the record's scale is 1/X per block
    a = np.ones((1, 64), np.float32)
    a[0, 0] = 7.5  # X = 2**(2 - 2) = 1: 7.5 > 6 saturates
    a[0, 32:] = 2.0**-8
    a[0, 33] = 1.0  # X = 2**-2: 2**-8 / 2**-2 = 2**-6 is below e2m1's 0.5: zero
    _, rec = GemmEngine("mxfp4").gemm(a, np.ones((64, 1), np.float32), "fprop", "l", record="operands")
    assert rec.a.scale.tolist() == [[1.0, 4.0]] and rec.a.amax == 7.5
    assert rec.a.overflow == 1 and rec.a.underflow_zero == 31


def test_output_record_against_numpy():
    a = np.array([[300.0, 300.0], [2.0**-20, 0.0]], np.float32)
    b = np.array([[300.0], [300.0]], np.float32)
    values, rec = GemmEngine("fp32").gemm(a, b, "fprop", "l", out="fp16", record=True)
    with np.errstate(over="ignore"):
        want = (a.astype(np.float64) @ b).astype(np.float16)
    assert same(values, want.astype(np.float32))
    assert (rec.output.overflow, rec.output.underflow_zero, rec.output.nonfinite) == (1, 0, 1)


# ---- the recipes as data, and the lab's names ----------------------------------------------
def test_the_lab_shares_the_recipes():
    assert T.Policy is Recipe and T.PRESETS is RECIPES and T.as_policy is as_recipe
    assert list(RECIPES)[-2:] == ["fp16", "mxfp4"]
    for r in RECIPES.values():
        assert r.description
    fp16, o1 = RECIPES["fp16"], RECIPES["O1"]
    assert {f: getattr(fp16, f) for f in fp16.__dataclass_fields__ if f not in ("name", "description")} == \
        {f: getattr(o1, f) for f in o1.__dataclass_fields__ if f not in ("name", "description")}
    m = RECIPES["mxfp4"]
    assert (m.fp8, m.fp8_forward, m.fp8_backward, m.accumulator) == ("mx", sf.fp4_e2m1, sf.fp4_e2m1, "fp32")
    assert "stochastic rounding" in m.description and "Hadamard" in m.description


def test_custom_recipes_by_keyword():
    r = as_recipe("fp8", accumulator="h100", fp8_backward="fp8_e4m3")
    assert r.name == "fp8[accumulator=h100,fp8_backward=fp8_e4m3]" and r.fp8_backward == sf.fp8_e4m3
    assert GemmEngine(r).accumulator == "h100"


@pytest.mark.parametrize("call, exc, words", [
    (lambda: as_recipe("fp9"), ValueError, "recipe 'fp9' is not a preset"),
    (lambda: GemmEngine("fp9"), ValueError, "recipe 'fp9'"),
    (lambda: as_recipe(3), TypeError, "recipe"),
    (lambda: GemmEngine("bf16", accumulator="h999"), ValueError, "accumulator='h999'"),
    (lambda: GemmEngine("bf16", accumulator=3), TypeError, "accumulator must be"),
    (lambda: as_recipe("bf16", accumulator="x100"), ValueError, "accumulator='x100'"),
    (lambda: GemmEngine("bf16", history="epoch"), ValueError, "history"),
    (lambda: GemmEngine("bf16", bias_epilogue="yes"), TypeError, "bias_epilogue"),
    (lambda: GemmEngine("bf16").gemm(np.ones((2, 3)), np.ones((2, 3)), "fprop", "l"), ValueError, "a and b"),
    (lambda: GemmEngine("bf16").gemm(np.ones((2, 2, 3)), np.ones((3, 3, 1)), "fprop", "l"), ValueError,
     r"stacks of as many \(B, M, K\)"),
    (lambda: GemmEngine("bf16").gemm(np.ones((2, 3)), np.ones((3, 1)), "forward", "l"), ValueError, "kind"),
    (lambda: GemmEngine("bf16").gemm(np.ones((2, 3)), np.ones((3, 1)), "fprop", "l", out="fp7"), ValueError, "out"),
    (lambda: GemmEngine("bf16").gemm(np.ones((2, 3)), np.ones((3, 1)), "fprop", "l", record=1), ValueError,
     "record"),
    (lambda: GemmEngine("bf16").gemm(np.ones((2, 3), int), np.ones((3, 1)), "fprop", "l"), TypeError, "float"),
])
def test_bad_arguments_name_themselves(call, exc, words):
    with pytest.raises(exc, match=words):
        call()


def test_engine_matmul_is_the_products_implementation():
    """GemmEngine(matmul=f): f computes every product (sf.matmul's signature and bits);
    anything not callable is a TypeError naming the argument."""
    calls = []

    def counting(*args, **kwargs):
        calls.append(kwargs.get("return_flags"))
        return sf.matmul(*args, **kwargs)

    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal((5, 2)).astype(np.float32)
    for recipe in ("bf16", "fp8", "mxfp8"):
        want, want_rec = GemmEngine(recipe).gemm(a, b, "fprop", "l", record=True)
        got, rec = GemmEngine(recipe, matmul=counting).gemm(a, b, "fprop", "l", record=True)
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)) and rec.swamped == want_rec.swamped
    assert calls and all(c == "swamped" for c in calls)
    with pytest.raises(TypeError, match="matmul must be a function"):
        GemmEngine("bf16", matmul="sf.matmul")


def test_numpy_kernels_decode_fp32_patterns_as_the_codec_does():
    """The kernels' fp32 -> float32 decode (a view of the patterns, the products'
    accumulator results) gives softfloat.decode's bits: signalling and quiet NaNs with
    their payloads, infinities, zeros, subnormals."""
    from softfloat.recipes.kernels import NUMPY_KERNELS
    rng = np.random.default_rng(31)
    bits = np.concatenate([rng.integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32),
                           (rng.integers(1, 2**23, 510) | 0x7F800000).astype(np.uint32),   # NaNs, sNaN too
                           np.array([0x7F800001, 0xFFBFFFFF, 0x7FC00000, 0x7F800000, 0x80000000, 1, 0x807FFFFF],
                                    np.uint32)]).reshape(-1, 7)
    got = NUMPY_KERNELS.decode(bits, sf.fp32)
    want = sf.decode(bits, sf.fp32, np.float32)
    assert got.dtype == np.float32 and got.shape == bits.shape
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert np.array_equal(NUMPY_KERNELS.decode(bits, sf.fp32, "float64"), sf.decode(bits, sf.fp32), equal_nan=True)


@pytest.mark.parametrize("name", ["mxfp8", "mxfp4"])
@pytest.mark.parametrize("tiny", [None, "a", "b"])
def test_mx_products_carry_their_values_in_bf16_or_fp32(monkeypatch, name, tiny):
    """MX values q * X are bf16 values unless a scale X leaves bf16's range (tiny blocks:
    X near 2**-127 with subnormal FP8 elements) or a block is NaN (E8M0 0xFF), then
    carried as fp32: both as the composition says, and the format taken is the one the
    data needs."""
    taken = []
    run = GemmEngine._run
    monkeypatch.setattr(GemmEngine, "_run", lambda self, a, b, fmt, ops, **kw: taken.append(fmt) or run(
        self, a, b, fmt, ops, **kw))
    a, b = operands("fprop", M=3, K=64, N=4)
    x = {"a": a, "b": b.T, None: None}[tiny]  # (b's MX blocks run along its columns)
    if x is not None:
        x[1] = (x[1].astype(np.float64) * 2.0**-136).astype(np.float32)  # fp32 subnormals
        if name == "mxfp4":  # (FP4's q * X always fits bf16: a NaN block instead)
            x[2, 0] = np.nan
    r = RECIPES[name]
    got = GemmEngine(name).gemm(a, b, "fprop", "l")
    assert same(got, reference(r, a, b, "fprop", acc=r.accumulator))
    assert taken == [F32 if tiny else sf.bf16]


def test_gemm_kept_checks_its_store_and_keywords():
    a, b = operands("fprop", M=2, K=4, N=3)
    eng = GemmEngine("bf16")
    with pytest.raises(TypeError, match=r"operands must be a dict .*got \[\]"):
        eng.gemm_kept([], a, b, "fprop", "l")
    with pytest.raises(TypeError, match="gemm_kept takes gemm's keywords .*got scale"):
        eng.gemm_kept({}, a, b, "fprop", "l", scale=2.0)
    kept = {}
    got, rec = eng.gemm_kept(kept, a, b, "fprop", "l", out="bf16", record=True)
    want, want_rec = eng.gemm(a, b, "fprop", "l", out="bf16", record=True)
    assert same(got, want) and rec == want_rec and sorted(kept) == ["input", "weight"]
    eng.gemm_kept(kept := {}, a, b, "fprop", "l", formats=("bf16", None))  # formats: nothing kept
    assert kept == {}
