"""sum, vecdot and matmul check every option before they read an operand: a bad option
raises its own error even when the operands would raise too, no operand is converted,
no dask graph is built and no random draw is taken."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat.accumulate import reduce


class Untouchable:
    """An operand that fails the test if anything reads it."""

    def __array__(self, dtype=None, copy=None):
        raise AssertionError("an operand was read before the options were checked")


def _call(kind, **options):
    """The reduction ``kind`` over untouchable operands (fp16 inputs)."""
    if kind == "sum":
        return sf.sum(Untouchable(), "fp16", **options)
    return getattr(sf, kind)(Untouchable(), Untouchable(), "fp16", **options)


KINDS = ["sum", "vecdot", "matmul"]

#: (option, value, exception, a pattern of its message): each names the argument
BAD_OPTIONS = [
    ("order", "bogus", ValueError, "order='bogus' is not valid; choose one of 'sequential'"),
    ("order", None, TypeError, "order must be one of"),
    ("block", 0, ValueError, "block must be a positive int"),
    ("block", 2.5, ValueError, "block must be a positive int"),
    ("block", True, ValueError, "block must be a positive int"),
    ("accumulator", "nope", ValueError, "accumulator='nope' is neither a hardware preset nor a format"),
    ("accumulator", 3, TypeError, "accumulator must be a format"),
    ("out_format", "nope", ValueError, "out_format"),
    ("return_flags", "yes", TypeError, "return_flags"),
    ("rounding", "sideways", ValueError, "sideways"),
    ("saturate", "yes", TypeError, "saturate"),
    ("subnormals", 2, TypeError, "subnormals"),
    ("tininess", "never", ValueError, "never"),
    ("attributes", "upward", TypeError, "attributes must be a softfloat.RoundingAttributes"),
]


def test_untouchable_operands_do_raise_when_the_options_are_good():
    # the tests below are not vacuous: with good options the operands are read
    for kind in KINDS:
        with pytest.raises(AssertionError, match="operand was read"):
            _call(kind)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("option, value, error, message", BAD_OPTIONS)
def test_a_bad_option_raises_before_any_operand_is_read(kind, option, value, error, message):
    with pytest.raises(error, match=message):
        _call(kind, **{option: value})


@pytest.mark.parametrize("kind", ["vecdot", "matmul"])
def test_a_bad_product_raises_before_any_operand_is_read(kind):
    with pytest.raises(ValueError, match="product"):
        _call(kind, product="nope")
    with pytest.raises(ValueError, match="cannot be used with the hardware accumulator"):
        _call(kind, product="fp16", accumulator="h100")


def test_a_sum_rejects_product_before_reading_x():
    with pytest.raises(TypeError, match="a sum has no products"):
        _call("sum", product="fp16")


@pytest.mark.parametrize("kind", KINDS)
def test_hardware_options_are_checked_before_any_operand_is_read(kind):
    with pytest.raises(ValueError, match="not available with a hardware accumulator"):
        _call(kind, accumulator="h100", order="pairwise")
    with pytest.raises(ValueError, match="has no model for"):  # the preset's input formats
        (sf.sum(Untouchable(), "fp32", accumulator="h100") if kind == "sum" else
         getattr(sf, kind)(Untouchable(), Untouchable(), "fp32", accumulator="h100"))
    with pytest.raises(ValueError, match="fused accumulator model takes inputs of at most"):
        custom = sf.accumulate.FusedAccumulator(terms=4, fraction_bits=24)
        (sf.sum(Untouchable(), "fp32", accumulator=custom) if kind == "sum" else
         getattr(sf, kind)(Untouchable(), Untouchable(), "fp32", accumulator=custom))


@pytest.mark.parametrize("kind", KINDS)
def test_c_is_not_read_before_the_options_are_checked(kind):
    with pytest.raises(ValueError, match="out_format"):
        if kind == "sum":
            sf.sum(np.zeros(3, np.uint16), "fp16", c=Untouchable(), out_format="nope")
        else:
            getattr(sf, kind)(np.zeros(3, np.uint16), np.zeros(3, np.uint16), "fp16", c=Untouchable(),
                              out_format="nope")


@pytest.mark.parametrize("kind", KINDS)
def test_a_rejected_call_takes_no_random_draw(kind):
    g = np.random.default_rng(5)
    before = g.bit_generator.state
    with pytest.raises(ValueError, match="order='bogus' is not valid"):
        _call(kind, rounding="stochastic", rng=g, order="bogus")
    assert g.bit_generator.state == before


@pytest.mark.parametrize("kind", KINDS)
def test_dask_operands_meet_the_same_checks_before_any_graph(kind, monkeypatch):
    da = pytest.importorskip("dask.array")

    def no_graph(*args, **kwargs):
        raise AssertionError("a dask graph was started before the options were checked")

    for name in ("_lazy_sum", "_lazy_vecdot", "_lazy_matmul", "_lazy_contract"):
        monkeypatch.setattr(reduce, name, no_graph)
    x = da.zeros((4, 4), dtype=np.uint16)
    args = (x,) if kind == "sum" else (x, x)
    fn = getattr(sf, kind)
    for option, value, error, message in BAD_OPTIONS:
        with pytest.raises(error, match=message):
            fn(*args, "fp16", **{option: value})
    with pytest.raises(AssertionError, match="dask graph"):  # with good options, it is built
        fn(*args, "fp16")
