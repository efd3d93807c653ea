"""Bad input across the published API gets a TypeError/ValueError that names the argument,
says what was expected and what came (and, for a misspelt name, the name meant) -- never
a silent wrong answer, a numpy error from inside a kernel or a RuntimeWarning.  Each case
here failed before its fix (the probes of the input7 audit)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import softfloat as sf

platforms = importlib.import_module("softfloat.platforms")
recipes = importlib.import_module("softfloat.recipes")
rounding = importlib.import_module("softfloat.rounding")

A = sf.encode(np.arange(6.0).reshape(2, 3), "bf16")


# ---------------------------------------------------------------------------------------
# a misspelt name: the error says which name was meant
# ---------------------------------------------------------------------------------------
NEAR_MISSES = [
    (lambda: sf.as_format("bf-16"), ValueError, "fmt='bf-16' is not a known format (did you mean 'bf16'?)"),
    (lambda: sf.as_format("fp_16"), ValueError, "(did you mean 'fp16'?)"),
    (lambda: sf.as_format("fp8e4m3"), ValueError, "(did you mean 'fp8_e4m3'?)"),
    (lambda: sf.as_format("fp8"), ValueError, "(did you mean 'fp8_e4m3', 'fp8_e5m2', "),
    (lambda: sf.encode(1.0, "bfloat_16"), ValueError, "(did you mean 'bfloat16'?)"),
    (lambda: rounding.as_rounding("towards_zero"), ValueError, "(did you mean 'toward_zero'?)"),
    (lambda: rounding.as_rounding("nearest"), ValueError, "(did you mean 'nearest_even' or 'nearest_away'?)"),
    (lambda: rounding.as_rounding("up"), ValueError, "(did you mean 'upward'?)"),
    (lambda: sf.scaled_encode(np.ones(4), "e4m3", scaling="block"), ValueError,
     "scaling='block' is not valid (did you mean 'blocks'?)"),
    (lambda: sf.sum(A, "bf16", order="Pairwise"), ValueError, "order='Pairwise' is not valid (did you mean 'pairwise'?)"),
    (lambda: sf.context(order="revers").__enter__(), ValueError, "(did you mean 'reverse'?)"),
    (lambda: platforms.as_platform("x86"), ValueError, "got 'x86' (did you mean 'x86-sse'?)"),
    (lambda: recipes.as_recipe("bf16pure"), ValueError, "recipe 'bf16pure' is not a preset (did you mean 'bf16-pure'?)"),
]


@pytest.mark.parametrize("call, exc, text", NEAR_MISSES, ids=[t for _, _, t in NEAR_MISSES])
def test_a_near_miss_names_the_name_meant(call, exc, text):
    with pytest.raises(exc) as info:
        call()
    assert text in str(info.value), str(info.value)


@pytest.mark.parametrize("name", ["fp12", "tree", "zzz"])
def test_a_name_near_nothing_suggests_nothing(name):
    for call in (lambda: sf.as_format(name), lambda: sf.sum(A, "bf16", order=name)):
        with pytest.raises(ValueError) as info:
            call()
        assert "did you mean" not in str(info.value)


# ---------------------------------------------------------------------------------------
# a string option given something else: a TypeError naming it, not numpy's truth-value error
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", [np.array(["sequential", "reverse"]), np.array([1, 2], dtype=object),
                                   np.zeros(0), None, 3])
@pytest.mark.parametrize("where", ["sum", "context"])
def test_order_of_another_type_is_a_type_error_naming_it(order, where):
    with pytest.raises(TypeError, match=r"^order must be one of 'sequential', 'pairwise', 'reverse'; got "):
        if where == "sum":
            sf.sum(A, "bf16", order=order)
        else:
            with sf.context(order=order):
                pass


# ---------------------------------------------------------------------------------------
# operands: what does not fit is named, not computed
# ---------------------------------------------------------------------------------------
def test_vecdot_without_b_is_refused_not_summed():
    # vecdot(a, None) returned the sums of a's rows: the layout read a missing b as a sum
    with pytest.raises(TypeError, match=r"^b must be integer bit patterns .*got None \(NoneType\)"):
        sf.vecdot(A, None, "bf16")


@pytest.mark.parametrize("kind, axis", [("sum", True), ("sum", False), ("sum", np.True_), ("sum", (0, True)),
                                        ("vecdot", True), ("vecdot", False), ("vecdot", np.True_)])
def test_a_bool_axis_is_refused(kind, axis):
    # numpy refuses axis=True; softfloat took it as axis 1 (vecdot: any bool as 0 or 1)
    with pytest.raises(TypeError, match=r"^axis must be "):
        if kind == "sum":
            sf.sum(A, "bf16", axis=axis)
        else:
            sf.vecdot(A, A, "bf16", axis=axis)


@pytest.mark.parametrize("fields, named", [
    ((np.zeros((2, 3), int), [1, 2], 0), "sign(2, 3), exponent(2,), significand()"),
    ((0, np.arange(6)[::-2], [1, 2]), "sign(), exponent(3,), significand(2,)"),
])
def test_compose_names_the_fields_that_do_not_broadcast(fields, named):
    # was numpy's "shape mismatch: objects cannot be broadcast ... arg 0 with shape (2, 3)"
    with pytest.raises(ValueError, match=r"^operands could not be broadcast together: ") as info:
        sf.compose(*fields, "bf16")
    assert named in str(info.value)


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2", "fp4_e2m1", "fp6_e3m2"])
def test_ulp_of_a_scalar_raises_no_warning_and_matches_the_array(fmt):
    # a 0-d ulp of a value in the lowest binades wrapped E - m below zero on the side
    # np.where discards, and numpy warned "overflow encountered in scalar subtract"
    f = sf.as_format(fmt)
    every = np.arange(1 << f.bits, dtype=f.storage_dtype)
    whole = sf.ulp(every, f)
    for v in every:  # warnings are errors in this suite
        assert sf.ulp(int(v), f) == whole[v]
        assert sf.ulp(v, f) == whole[v]


def test_ulp_of_fp16_scalars_near_zero_is_numpy_spacing():
    for v in [0x0000, 0x0001, 0x0002, 0x03FF, 0x0400, 0x0401, 0x0800, 0x1000, 0x3C00]:
        want = np.spacing(np.array(v, np.uint16).view(np.float16)).view(np.uint16)
        assert sf.ulp(v, "fp16") == want


# ---------------------------------------------------------------------------------------
# values: a Python int is a number wherever numbers are read
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("x", [2, -3, 2**63 + 2**40, -(2**63)])
def test_a_python_int_is_read_as_its_float_array(x):
    # "x must be ... a Python number ...; got 2 (int)" refused the number it listed
    st = sf.scaled_encode(x, "e4m3")
    want = sf.scaled_encode(np.asarray(x), "e4m3")
    assert st.bits == want.bits and st.scales == want.scales
    bits = sf.encode(x, "bf16")
    assert sf.error_stats(x, bits, "bf16") == sf.error_stats(np.asarray(x), bits, "bf16")


def test_an_int_beyond_64_bits_says_how_to_pass_it():
    with pytest.raises(TypeError, match=r"^x=1000000000000000000000000000000 is an int beyond int64 and "
                                        r"uint64.*pass float\(x\)"):
        sf.scaled_encode(10**30, "e4m3")


@pytest.mark.parametrize("x", [__import__("fractions").Fraction(1, 3), "1.5", None])
def test_scaled_encode_does_not_promise_exact_scalars(x):
    # the message listed "a Fraction, a Decimal or a numeric string", which scaled_encode refuses
    with pytest.raises(TypeError, match=r"^x must be a float or integer array, an int or a float; got ") as info:
        sf.scaled_encode(x, "e4m3")
    assert "Fraction" not in str(info.value).split("; got")[0]


# ---------------------------------------------------------------------------------------
# the remaining public functions: each argument named
# ---------------------------------------------------------------------------------------
def _npy(tmp_path):
    path = tmp_path / "f.npy"
    np.save(path, np.zeros(3))
    return str(path)


accumulate = importlib.import_module("softfloat.accumulate")
explain_ = importlib.import_module("softfloat.explain")
scaled = importlib.import_module("softfloat.scaled")
testing = importlib.import_module("softfloat.testing")
training = importlib.import_module("softfloat.training")

#: (call, exception, the start of its message); before: what came instead
NAMED = {
    # KeyError: 'bogus'
    "hardware_model name": (lambda p: accumulate.hardware_model("bogus", sf.bf16), ValueError,
                            "name='bogus' is not a hardware preset; choose one of v100"),
    "hardware_model misspelt": (lambda p: accumulate.hardware_model("H-100", sf.bf16), ValueError,
                                "name='H-100' is not a hardware preset (did you mean 'h100'?)"),
    # AttributeError: 'int' object has no attribute 'strip'
    "hardware_model int": (lambda p: accumulate.hardware_model(3, sf.bf16), TypeError, "name must be"),
    # re's "expected string or bytes-like object, got 'NoneType'"
    "parse_operation None": (lambda p: explain_.parse_operation(None), TypeError, "x must be a str"),
    "parse_operation array": (lambda p: explain_.parse_operation(np.zeros(2)), TypeError, "x must be a str"),
    # numpy's "expected non-negative integer" from the bit generator
    "Trainer seed": (lambda p: training.Trainer(seed=-1), ValueError, "seed must be an int >= 0"),
    # Python's "Value after * must be an iterable, not float"
    "Trainer hidden": (lambda p: training.Trainer(hidden=1.5), TypeError, "hidden must be an int or a tuple"),
    # AssertionError (ulp_distance is a function, not an assertion)
    "ulp_distance shapes": (lambda p: testing.ulp_distance(A, A[0, :2], "bf16"), ValueError,
                            "operands could not be broadcast together: a(2, 3), b(2,)"),
    # "could not convert string to float: 'x'"
    "fp32_scales amax str": (lambda p: scaled.fp32_scales("x", "e4m3"), TypeError, "amax must be a number"),
    # None was read as NaN and gave the scale 1 without a word
    "fp32_scales amax None": (lambda p: scaled.fp32_scales(None, "e4m3"), TypeError, "amax must be a number"),
    # an imaginary part dropped with a ComplexWarning
    "fp32_scales amax complex": (lambda p: scaled.fp32_scales(np.array([1 + 1j]), "e4m3"), TypeError,
                                 "amax must be a number"),
    "fp32_scales previous": (lambda p: scaled.fp32_scales([1.0], "e4m3", previous="x"), TypeError,
                             "previous must be a number"),
    "fp32_scales margin": (lambda p: scaled.fp32_scales([1.0], "e4m3", margin=1.5), TypeError,
                           "margin must be an int from 0 to 64"),
}


@pytest.mark.parametrize("case", list(NAMED))
def test_the_error_names_the_argument(case, tmp_path):
    call, exc, start = NAMED[case]
    with pytest.raises(exc) as info:
        call(tmp_path)
    assert str(info.value).startswith(start), str(info.value)


def test_from_npy_names_a_bad_chunks(tmp_path):
    pytest.importorskip("dask.array")
    # was dask's "Could not interpret 'x' as a byte unit", raised from dask/utils.py
    with pytest.raises(ValueError, match=r"^chunks='x' is no chunking of the file's shape \(3,\) for dask"):
        sf.from_npy(_npy(tmp_path), chunks="x")


@pytest.mark.parametrize("fmt, b_format, out_format", [("bf16", None, None), ("e4m3", "e5m2", None),
                                                      ("e4m3", None, "fp16"), ("tf32", None, "fp32")])
def test_hardware_model_reads_format_names(fmt, b_format, out_format):
    # hardware_model("h100", "bf16") said "has no model for bf16 inputs; it supports ... bf16"
    kw = {} if b_format is None else {"b_format": b_format}
    by_name = accumulate.hardware_model("h100", fmt, out_format, **kw)
    as_fmt = {k: sf.as_format(v) for k, v in kw.items()}
    assert by_name == accumulate.hardware_model(
        "h100", sf.as_format(fmt), None if out_format is None else sf.as_format(out_format), **as_fmt)


# ---------------------------------------------------------------------------------------
# the command line: one line and exit 2
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, words", [
    (["train", "--compare", ""], "--compare needs policy names separated by commas"),   # ran O2 alone
    (["train", "--compare", " , "], "--compare needs policy names"),
    (["train", "--lr", "nan", "--epochs", "1"], "--lr must be a finite number >= 0; got nan"),  # said "lr"
    (["train", "--lr", "-1", "--epochs", "1"], "--lr must be a finite number >= 0; got -1.0"),
    # named 'optimizer=' and 'rounding=', the library's names, not the options'
    (["train", "--optimizer", "Adam", "--epochs", "1"], "--optimizer='Adam' is not valid (did you mean 'adam'?)"),
    (["train", "--update-rounding", "bogus", "--epochs", "1"], "--update-rounding='bogus' is not valid"),
    # "--format  is not a known format": an empty value vanished from the message
    (["explain", "1", "--format", ""], "--format '' is not a known format"),
    (["explain", "1", "--format", "bf-16"], "--format bf-16 is not a known format (did you mean 'bf16'?)"),
])
def test_cli_bad_train_arguments_exit_2_with_one_line(capsys, argv, words):
    from softfloat.cli import main

    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.splitlines() == [err.strip()] and err.startswith("softfloat: error: ") and words in err, err


@pytest.mark.parametrize("call", [
    lambda: sf.encode([1.0, 0.3], "bf16", "stochastic", rng=-1),
    lambda: sf.add(0x3F80, 0x3E99, "bf16", "stochastic", rng=-1),
    lambda: sf.sum(A, "bf16", rounding="stochastic", rng=-1),
    lambda: sf.context(rng=-1).__enter__(),
])
def test_a_negative_seed_is_named(call):
    # numpy's "expected non-negative integer", from inside its bit generator
    with pytest.raises(ValueError, match=r"^rng must be a numpy.random.Generator, an int seed >= 0 or None; got -1$"):
        call()


@pytest.mark.parametrize("bits", [np.array([5]), [5, 6], np.zeros((1, 1), np.uint16)])
def test_bit_string_of_an_array_says_it_writes_one_pattern(bits):
    # numpy's "only 0-dimensional arrays can be converted to Python scalars"
    with pytest.raises(TypeError, match=r"^bits must be one bit pattern \(an int\); got an array"):
        sf.bit_string(bits, "bf16")
    assert sf.bit_string(np.array(5), "bf16") == sf.bit_string(5, "bf16") == "0 00000000 0000101"


@pytest.mark.parametrize("axis", [0.0, 1.5, True, np.float64(1), (0, True)])
@pytest.mark.parametrize("reduce", [np.sum, np.mean, np.max, np.prod])
def test_array_reductions_refuse_a_float_or_bool_axis(reduce, axis):
    # int(axis) took 0.0 as axis 0, 1.5 and True as axis 1; numpy refuses all three
    x = sf.asarray(np.arange(6.0).reshape(2, 3), "bf16")
    with pytest.raises(TypeError, match=r"^axis must be None, an int or a tuple of ints; got "):
        reduce(x, axis=axis)


# ---------------------------------------------------------------------------------------
# hypothesis strategies: checked when made, not when hypothesis first draws
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, exc, start", [
    # hypothesis raised at the first draw: "negative dimensions are not allowed",
    # "'float' object is not iterable", InvalidArgument for fill; unique="yes" was taken as True
    (dict(shape=-1), TypeError, "shape must be a count, a tuple of counts"),
    (dict(shape=2.5), TypeError, "shape must be a count, a tuple of counts"),
    (dict(shape=(2, True)), TypeError, "shape must be a count, a tuple of counts"),
    (dict(shape=3, unique="yes"), TypeError, "unique must be True or False"),
    (dict(shape=3, fill="x"), TypeError, "fill must be a hypothesis strategy or None"),
])
def test_arrays_strategy_checks_its_arguments_when_made(kwargs, exc, start):
    strategies = pytest.importorskip("softfloat.strategies")
    with pytest.raises(exc) as info:
        strategies.arrays("bf16", **kwargs)
    assert str(info.value).startswith(start), str(info.value)


def test_bits_strategy_names_the_class_meant():
    strategies = pytest.importorskip("softfloat.strategies")
    with pytest.raises(ValueError, match=r"which is not an IEEE class name \(did you mean 'positiveNormal'\?\)"):
        strategies.bits("bf16", classes=["positive_normal"])


# ---------------------------------------------------------------------------------------
# the stateful pieces: scaling history, loss scaler, the recipes' engine
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("amax", [None, np.array([1.0], dtype=object)])
def test_delayed_scaling_refuses_an_amax_that_is_no_number(amax):
    # None was read as NaN: update(None) kept the scale and returned 1.0 without a word
    with pytest.raises(TypeError, match=r"^amax must be a number or an array of numbers; got "):
        sf.DelayedScaling("e4m3").update(amax)


@pytest.mark.parametrize("state, exc, start", [
    ({"x": 1}, ValueError, "state lacks 'scale', 'growth_factor'"),   # KeyError: 'scale'
    ("x", TypeError, "state must be the dict state_dict() returns"),  # "string indices must be integers"
])
def test_loss_scaler_load_state_dict_names_what_is_missing(state, exc, start):
    with pytest.raises(exc) as info:
        training.LossScaler().load_state_dict(state)
    assert str(info.value).startswith(start), str(info.value)


@pytest.mark.parametrize("recipe", ["O2", "fp8", "mxfp8"])
@pytest.mark.parametrize("bias", [np.ones(5), np.ones((3, 2, 2))])
def test_gemm_names_a_bias_that_does_not_fit(recipe, bias):
    # the unscaled recipes said "c of shape (5,) does not broadcast" (c is the engine's
    # own name for it), the scaled ones raised numpy's broadcast error from the epilogue
    engine = recipes.GemmEngine(recipe)
    with pytest.raises(ValueError, match=r"^bias of shape \(.*\) does not broadcast to the result shape \(2, 32\)$"):
        engine.gemm(np.ones((2, 32)), np.ones((32, 32)), "fprop", "layer", bias=bias)


# ---------------------------------------------------------------------------------------
# checkpoints: the paths and the scaling by their names
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, exc, start", [
    # os.fspath's "expected str, bytes or os.PathLike object, not NoneType"
    (lambda d: sf.quantize_checkpoint(None, d / "x.npz", "bf16"), TypeError, "src must be a str or os.PathLike"),
    (lambda d: sf.quantize_checkpoint(d / "c.npz", 3, "bf16"), TypeError, "dst must be a str or os.PathLike"),
    (lambda d: sf.load_checkpoint(None), TypeError, "path must be a str or os.PathLike"),
    # AttributeError: 'bytes' object has no attribute 'seek'
    (lambda d: sf.load_checkpoint(str(d / "c.npz").encode()), TypeError, "path must be a str or os.PathLike"),
    # numpy's "truth value of an array ... is ambiguous"
    (lambda d: sf.quantize_checkpoint(d / "c.npz", d / "x.npz", "e4m3", scaling=np.array(["a", "b"])), TypeError,
     "scaling must be one of 'none', 'tensor'; got an array"),
    (lambda d: sf.quantize_checkpoint(d / "c.npz", d / "x.npz", "e4m3", scaling="Tensor"), ValueError,
     "scaling='Tensor' is not valid (did you mean 'tensor'?)"),
])
def test_checkpoint_arguments_are_named(tmp_path, call, exc, start):
    np.savez(tmp_path / "c.npz", w=np.ones(3, np.float32))
    with pytest.raises(exc) as info:
        call(tmp_path)
    assert str(info.value).startswith(start), str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.npz"]  # nothing written


@pytest.mark.parametrize("call, exc, start", [
    (lambda: training.Trainer(optimizer="Adam"), ValueError, "optimizer='Adam' is not valid (did you mean 'adam'?)"),
    # numpy's "truth value of an array ... is ambiguous" (sgd/adam were compared with ==)
    (lambda: training.Trainer(optimizer=np.array(["sgd", "adam"])), TypeError, "optimizer must be one of 'sgd', 'adam'"),
    (lambda: training.Trainer(activation="Relu"), ValueError, "activation='Relu' is not valid (did you mean 'relu'?)"),
    (lambda: training.memory_footprint(10, optimizer=np.array(["sgd"])), TypeError, "optimizer must be one of"),
    (lambda: recipes.GemmEngine("O2", history="sites"), ValueError, "history='sites' is not valid (did you mean 'site'?)"),
    (lambda: sf.FusedAccumulator(4, 10, fp8=np.array(["native", "x"])), TypeError, "fp8 must be one of 'native', 'via_fp16'"),
])
def test_string_options_of_the_lab_share_one_check(call, exc, start):
    with pytest.raises(exc) as info:
        call()
    assert str(info.value).startswith(start), str(info.value)


@pytest.mark.parametrize("traps, exc, start", [
    (3, TypeError, "traps must be a set of IEEE flag names such as {'overflow'}; got 3 (int)"),  # "not iterable"
    (np.array(["overflow", "inexact"]), TypeError, "traps must be a set of IEEE flag names"),  # ambiguous truth value
    (["overflw"], ValueError, "traps must name IEEE flags"),
    ([sf.Overflow, "x"], ValueError, "traps must name IEEE flags"),  # sorted() of a class and a str: TypeError
])
def test_context_traps_are_checked_by_name(traps, exc, start):
    with pytest.raises(exc) as info:
        with sf.context(traps=traps):
            pass
    assert str(info.value).startswith(start), str(info.value)
    if isinstance(traps, list) and traps == ["overflw"]:
        assert str(info.value).endswith("(did you mean 'overflow'?)")


@pytest.mark.parametrize("x", [1j, object()])
def test_explain_does_not_offer_arrays_it_refuses(x):
    # "x must be a number, a numeric string or an array" -- explain refuses arrays
    with pytest.raises(TypeError, match=r"^x must be a number \(an int, float, Fraction or Decimal\) or a numeric "
                                        r"string; got ") as info:
        sf.explain(x, "bf16")
    assert "array" not in str(info.value)


@pytest.mark.parametrize("decimals, exc", [(1.5, TypeError), (True, TypeError), ("x", TypeError), (400, ValueError)])
def test_array_round_takes_int_decimals(decimals, exc):
    # np.round(x, 1.5) scaled by 10**1.5 and returned [1.2649..., 2.4981...] for [1.26, 2.5];
    # True was read as 1, 'x' failed in abs(), 400 overflowed float64 (OverflowError)
    x = sf.asarray([1.26, 2.5], "fp32")
    with pytest.raises(exc, match=r"^decimals must be "):
        np.round(x, decimals)
    assert np.round(x, np.int64(1)).to_numpy().tolist() == np.round(x, 1).to_numpy().tolist()


@pytest.mark.parametrize("call, exc, start", [
    # accepted silently (a full sort is a valid partition), where numpy refuses
    (lambda a: np.partition(a, 1.5), TypeError, "kth must be an int or a sequence of ints; got 1.5 (float)"),
    (lambda a: np.partition(a, 9), ValueError, "kth=9 is out of bounds for an axis of length 6"),
    (lambda a: np.argpartition(a, [0, -7]), ValueError, "kth=-7 is out of bounds"),
    (lambda a: a.copy().partition(True), TypeError, "kth must be an int"),
    # ddof=1.5 divided by n - 2 (numpy divides by n - 1.5): a silent wrong answer
    (lambda a: np.std(a, ddof=1.5), ValueError, "ddof must be a whole number"),
    (lambda a: np.var(a, ddof="x"), TypeError, "ddof must be an int; got 'x' (str)"),  # int - str
    (lambda a: np.cov(a, ddof=1.5), ValueError, "ddof must be a whole number"),  # numpy: "ddof must be integer"
])
def test_array_statistics_and_partition_check_their_integers(call, exc, start):
    a = sf.asarray(np.linspace(0.1, 2, 6), "fp32")
    with pytest.raises(exc) as info:
        call(a)
    assert str(info.value).startswith(start), str(info.value)


def test_an_integral_ddof_still_gives_numpy_s_count():
    x = np.linspace(0.1, 2, 6)
    a = sf.asarray(x, "fp64")   # fp64: numpy's own arithmetic is the oracle
    assert np.std(a, ddof=1.0).to_numpy() == np.std(a, ddof=1).to_numpy()
    assert np.partition(a, [0, -1]).to_numpy().tolist() == np.sort(x).tolist()


@pytest.mark.parametrize("axis", [0.0, False, -1.0])
@pytest.mark.parametrize("call", [
    lambda v, axis: sf.sum(v, "bf16", axis=axis),
    lambda v, axis: sf.vecdot(v, v, "bf16", axis=axis),
    lambda v, axis: np.sum(sf.Array(v, "bf16"), axis=axis),
    lambda v, axis: np.nansum(sf.Array(v, "bf16"), axis=axis),
    lambda v, axis: np.sum(sf.Array(v[:1], "bf16"), axis=axis),
])
def test_one_dimensional_fast_paths_refuse_a_float_or_bool_axis(call, axis):
    # `axis in (0, -1)` is True for 0.0 and False: the one-dimensional shortcuts summed
    # without ever reaching the axis check
    v = sf.encode(np.arange(3.0), "bf16")
    with pytest.raises(TypeError, match=r"^axis must be "):
        call(v, axis)


@pytest.mark.parametrize("where", [np.ones(6), [1, 0, 1, 0, 1, 0], 1])
@pytest.mark.parametrize("reduce", [np.sum, np.mean, np.var, np.max])
def test_array_reductions_take_a_boolean_where(reduce, where):
    # a float or int mask was cast to bool (every non-zero element selected); numpy refuses it
    a = sf.asarray(np.linspace(0.1, 2, 6), "fp64")
    with pytest.raises(TypeError, match=r"^where must be True, False or an array of booleans; got "):
        reduce(a, where=where, **({"initial": -1.0} if reduce is np.max else {}))
    mask = np.array([True, False] * 3)
    assert reduce(a, where=mask, **({"initial": -1.0} if reduce is np.max else {})).to_numpy() == \
        reduce(np.linspace(0.1, 2, 6), where=mask, **({"initial": -1.0} if reduce is np.max else {}))
