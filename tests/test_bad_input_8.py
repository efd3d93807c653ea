"""Bad input across the published API, round 8 (the leftovers of the input7 audit): each
error names the argument, what was expected and what came.  Each case here failed before
its fix."""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest

import softfloat as sf


# ---------------------------------------------------------------------------------------
# DelayedScaling.update takes one amax: the error says so, not "the scales have shape ()"
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("amax, shape", [(np.array([3.0]), "(1,)"), ([1.0, 2.0], "(2,)"),
                                         (np.ones((2, 2)), "(2, 2)")])
def test_delayed_scaling_update_names_the_one_amax_it_takes(amax, shape):
    ds = sf.DelayedScaling()
    with pytest.raises(ValueError) as err:
        ds.update(amax)
    assert str(err.value) == f"amax must be one number, this step's amax (shape ()); got shape {shape}"
    assert ds.amax_history.shape == (0,)  # nothing recorded
    assert ds.update(np.array(3.0)) == ds.scale  # a 0-d array is one number


def test_scaled_encode_amax_and_scale_shapes_say_what_was_expected():
    with pytest.raises(ValueError, match=re.escape(
            "amax must be one number or one amax per scale (the scales have shape (2, 1)); got shape (3,)")):
        sf.scaled_encode(np.ones((2, 4)), "e4m3", scaling="rows", amax=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=re.escape(
            "scale must be one number or one scale per unit (the scales have shape (2, 1)); got shape (3,)")):
        sf.scaled_encode(np.ones((2, 4)), "e4m3", scaling="rows", scale=[1.0, 2.0, 3.0])


# ---------------------------------------------------------------------------------------
# Format(name=): a name softfloat reads as another format is refused
# ---------------------------------------------------------------------------------------
def test_a_format_named_after_another_format_is_refused():
    with pytest.raises(ValueError) as err:
        sf.Format(exponent_bits=5, mantissa_bits=2, name="bf16")
    assert str(err.value) == (
        "name='bf16' names another format: as_format('bf16') is e8m7 (ieee), softfloat.bf16; this "
        "format is e5m2 (ieee), which would print as 'bf16' yet not equal it; leave name out (it is "
        "then 'e5m2') or choose a name that softfloat does not read as a format")
    with pytest.raises(ValueError, match=re.escape("as_format('HALF') is e5m10 (ieee), softfloat.fp16")):
        sf.Format(exponent_bits=6, mantissa_bits=9, name="HALF")
    with pytest.raises(ValueError, match=re.escape("as_format('e6m9') is e6m9 (ieee); this format is e5m2")):
        sf.Format(exponent_bits=5, mantissa_bits=2, name="e6m9")
    # where the layout's own name is taken too (an IEEE e4m3: "e4m3" is OCP's fn), none is offered
    with pytest.raises(ValueError, match=r"this format is e4m3 \(ieee\), .*; choose a name"):
        sf.Format(exponent_bits=4, mantissa_bits=3, name="float8_e3m4")


def _names_as_format_reads():
    names = [f.name for f in sf.catalogue()] + list(sf.aliases())
    names += ["float8_e4m3", "float8_e3m4", "e6m9", "e5m4fn", "e4m3fnuz", "e3m4"]
    names += ["torch." + n for n in importlib.import_module("softfloat.formats").TORCH_FLOATS]
    return names


def test_a_format_that_prints_as_a_name_equals_it():
    """Every layout of the catalogue (and two custom ones) under every name as_format reads:
    the Format is made exactly where that name reads as its layout, and then it equals the
    name, hashes as the format it names and prints as it."""
    layouts = [*sf.catalogue(), sf.Format(6, 9), sf.Format(5, 4, "fn"), sf.Format(4, 3), sf.Format(3, 4)]
    for name in _names_as_format_reads():
        named = sf.as_format(name)
        for lay in layouts:
            make = lambda: sf.Format(lay.exponent_bits, lay.mantissa_bits, lay.specials, name=name)  # noqa: E731
            if name == lay.name:  # a layout's own default name: not checked (see the last test)
                continue
            if named == lay:
                fmt = make()
                assert fmt == name and fmt == named and hash(fmt) == hash(named) and str(fmt) == name
            else:
                with pytest.raises(ValueError, match=re.escape(f"name={name!r} names another format")):
                    make()


def test_names_softfloat_does_not_read_stay_free():
    for name in ("mine", "fp64-top-word", "e20m3", "torch.int8", "bf16x", ""):
        fmt = sf.Format(5, 2, name=name)
        assert fmt == sf.fp8_e5m2 and fmt.name == (name or "e5m2")
    # a format's own default name, and every catalogue format rebuilt with its name, are kept
    for f in sf.catalogue():
        assert sf.Format(f.exponent_bits, f.mantissa_bits, f.specials, name=f.name).name == f.name
    # the IEEE e4m3 layout's default name is "e4m3", which as_format reads as OCP's fn
    # format (as before: the default names are left as they were); given, it is kept too
    assert sf.Format(4, 3, name="e4m3").name == sf.Format(4, 3).name == "e4m3"


# ---------------------------------------------------------------------------------------
# the Python checkpoint API names its own parameters (src, dst, scaling, path), not the
# command line's IN, OUT and --scaling (which tests/test_cli_checkpoints.py pins)
# ---------------------------------------------------------------------------------------
CLI_WORDS = re.compile(r"\bIN\b|\bOUT\b|IN\.npy|--scaling")


@pytest.fixture
def files(tmp_path):
    np.save(tmp_path / "w.npy", np.float32([1.0, 2.5]))
    np.savez(tmp_path / "w.npz", w=np.float32([1.0, 2.5]))
    np.savez(tmp_path / "w_scale.npz", w=np.float32([1.0]), w_scale=np.float32([2.0]))
    np.savez(tmp_path / "meta.npz", __softfloat__=np.float32([1.0]))
    np.save(tmp_path / "v1.npy", np.zeros(2, np.dtype("V1")))
    return tmp_path


PYTHON_API_REFUSALS = [
    (lambda d: sf.quantize_checkpoint(d / "w.npz", d / "w.npz", "bf16"), ValueError, "dst {d}/w.npz is src itself"),
    (lambda d: sf.quantize_checkpoint(d / "w.npy", d / "o.npz", "bf16"), ValueError,
     "but src {d}/w.npy is a .npy file of one array: dst must end in .npy"),
    (lambda d: sf.quantize_checkpoint(d / "w.npz", d / "o.npy", "bf16"), ValueError,
     "dst {d}/o.npy must end in .npz or .safetensors (or .pt/.pth for a torch file): src is"),
    (lambda d: sf.quantize_checkpoint(d / "w.npy", d / "o.npy", "e4m3", scaling="tensor"), ValueError,
     "scaling='tensor' needs room for the scale beside the array"),
    (lambda d: sf.quantize_checkpoint(d / "w.npz", d / "o.npz", "bf16", scaling="tensor"), ValueError,
     "(Transformer Engine scales only FP8): drop scaling='tensor'"),
    (lambda d: sf.quantize_checkpoint(d / "w_scale.npz", d / "o.npz", "e4m3", scaling="tensor"), ValueError,
     "which the input already holds; rename it or drop scaling='tensor'"),
    (lambda d: sf.quantize_checkpoint(d / "meta.npz", d / "o.npz", "bf16", bits=True), ValueError,
     "tensor '__softfloat__' of src would be written as '__softfloat__'"),
    (lambda d: sf.quantize_checkpoint(d / "missing.npz", d / "o.npz", "bf16"), OSError,
     "cannot read src {d}/missing.npz"),
    (lambda d: sf.quantize_checkpoint(d / "w.npz", d / "no" / "o.npz", "bf16"), OSError,
     "cannot write dst {d}/no/o.npz: {d}/no is no directory"),
    (lambda d: sf.quantize_checkpoint(d / "v1.npy", d / "o.npy", "bf16"), ValueError, "src {d}/v1.npy holds"),
    (lambda d: sf.load_checkpoint(d / "missing.npz"), OSError, "cannot read path {d}/missing.npz"),
]


@pytest.mark.parametrize("call, exc, words", PYTHON_API_REFUSALS)
def test_the_python_checkpoint_api_names_its_parameters(files, call, exc, words):
    with pytest.raises(exc) as err:
        call(files)
    message = str(err.value).replace(repr(str(files)).strip("'"), str(files)).replace("'", "")
    assert words.format(d=files).replace("'", "") in message
    assert not CLI_WORDS.search(str(err.value)), str(err.value)


def test_a_failed_write_names_dst(files, monkeypatch):
    writes = importlib.import_module("softfloat._checkpoint_write")

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(writes, "create_beside", full)
    with pytest.raises(OSError, match=r"cannot write dst '.*o\.npz': No space left on device"):
        sf.quantize_checkpoint(files / "w.npz", files / "o.npz", "bf16")
    with pytest.raises(OSError, match=r"cannot write dst '.*o\.npy': No space left on device"):
        sf.quantize_checkpoint(files / "w.npy", files / "o.npy", "bf16")


# ---------------------------------------------------------------------------------------
# sort and partition keywords: numpy's own errors (sort already gave them; partition took
# any kind and order, its sort standing in for the selection)
# ---------------------------------------------------------------------------------------
SORTS = [
    lambda x: np.sort(x, kind="bogus"), lambda x: np.argsort(x, kind="bogus"), lambda x: np.sort(x, kind=3),
    lambda x: x.copy().sort(kind="bogus"), lambda x: x.argsort(kind="bogus"), lambda x: np.sort(x, order="f"),
    lambda x: np.partition(x, 1, kind="bogus"), lambda x: np.argpartition(x, 1, kind="bogus"),
    lambda x: np.partition(x, 1, kind=None), lambda x: np.partition(x, 1, order="f"),
    lambda x: np.argpartition(x, 1, order="f"), lambda x: x.copy().partition(1, kind="bogus"),
    lambda x: x.argpartition(1, kind="bogus"), lambda x: x.copy().partition(1, order="f"),
]


@pytest.mark.parametrize("call", SORTS)
def test_sort_and_partition_keywords_raise_as_numpy_does(call):
    values = np.array([3.0, 1.0, 2.0])
    x = sf.asarray(values, "bf16")
    with pytest.raises(Exception) as numpy_err:
        call(values)
    with pytest.raises(type(numpy_err.value)) as err:
        call(x)
    assert str(err.value) == str(numpy_err.value)
    assert x.tolist() == [3.0, 1.0, 2.0]  # untouched


def test_partition_with_numpys_default_kind_still_partitions():
    x = sf.asarray([3.0, 1.0, 2.0], "bf16")
    assert np.partition(x, 1, kind="introselect").tolist() == [1.0, 2.0, 3.0]
    assert np.argpartition(x, 1, kind="introselect").tolist() == [1, 2, 0]
