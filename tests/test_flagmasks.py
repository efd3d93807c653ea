"""softfloat._flagmasks: the kernels' one type for the five IEEE flags (merge, OR, the NaN
rule, packing, and the conversion to the public Flags)."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat import _encode
from softfloat._flagmasks import FLAG_BITS, FlagMasks, flag_mask
from softfloat._options import resolve_attributes
from softfloat.flags import FLAG_NAMES, AccumulationFlags, Flags

T, F = True, False


def b(*values):
    return np.array(values, dtype=bool)


def as_lists(fl: FlagMasks) -> dict:
    return {name: None if m is None else np.asarray(m).tolist() for name, m in fl}


# ---- the type ------------------------------------------------------------------------
def test_fields_are_the_ieee_flags_in_order_and_default_to_none():
    fl = FlagMasks(overflow=b(T))
    assert [name for name, _ in fl] == list(FLAG_NAMES)
    assert as_lists(fl) == {"invalid": None, "divide_by_zero": None, "overflow": [T],
                            "underflow": None, "inexact": None}
    with pytest.raises(AttributeError):
        fl.overfow = b(T)  # a misspelt flag fails loudly (slots)


def test_zeros_allocates_five_distinct_clear_masks():
    fl = FlagMasks.zeros(3)
    masks = [m for _, m in fl]
    assert all(m.dtype == bool and m.shape == (3,) and not m.any() for m in masks)
    assert len({id(m) for m in masks}) == 5


def test_map_keeps_none():
    fl = FlagMasks(invalid=b(T, F), inexact=b(F, T)).map(np.logical_not)
    assert as_lists(fl)["invalid"] == [F, T] and fl.overflow is None


# ---- set_at: the merge of a subset's flags into the whole -----------------------------
def test_merge_into_a_none_whole_allocates_only_what_the_part_raises():
    whole = FlagMasks()
    whole.set_at(np.array([1, 3]), FlagMasks(invalid=b(T, F), inexact=b(T, T)), 4)
    assert as_lists(whole) == {"invalid": [F, T, F, F], "divide_by_zero": None, "overflow": None,
                               "underflow": None, "inexact": [F, T, F, T]}


def test_merge_of_a_partial_subset_overwrites_only_its_lanes():
    inexact = b(T, T, T, T)
    whole = FlagMasks(overflow=b(T, F, F, T), inexact=inexact)
    idx = np.nonzero(b(F, T, F, T))
    whole.set_at(idx, FlagMasks(invalid=b(F, T), inexact=b(F, T)), (4,))
    # the part's None (overflow: cannot be raised there) means False at its lanes
    assert as_lists(whole) == {"invalid": [F, F, F, T], "divide_by_zero": None, "overflow": [T, F, F, F],
                               "underflow": None, "inexact": [T, F, T, T]}
    assert whole.inexact is inexact  # written in place: the whole owns its masks


def test_merge_into_fresh_lanes_writes_nothing_for_a_none_part():
    whole = FlagMasks.zeros(4)
    whole.overflow[:] = True  # (not what "fresh" promises: shows that nothing is written)
    whole.set_at(slice(0, 2), FlagMasks(inexact=b(T, F)), 4, fresh=True)
    assert as_lists(whole)["overflow"] == [T, T, T, T]
    assert as_lists(whole)["inexact"] == [T, F, F, F]


def test_merge_keeps_none_where_both_are_none():
    whole = FlagMasks(inexact=b(F, F))
    whole.set_at(slice(0, 1), FlagMasks(), 2)
    assert whole.invalid is None and whole.divide_by_zero is None and as_lists(whole)["inexact"] == [F, F]


# ---- or_: the one OR-accumulate ---------------------------------------------------------
def test_or_in_place_and_takes_masks_where_this_has_none():
    mine, theirs = b(T, F, F), b(F, F, T)
    whole = FlagMasks(invalid=mine)
    whole.or_(FlagMasks(invalid=b(F, T, F), inexact=theirs))
    assert whole.invalid is mine and mine.tolist() == [T, T, F]
    assert whole.inexact is theirs  # taken as it is: no copy
    assert whole.overflow is None


def test_or_folds_the_rows_of_a_step_over_several_terms():
    acc = FlagMasks.zeros(3)
    acc.or_(FlagMasks(inexact=b(F, F, T, T, F, F)))  # two rows of three lanes, flat
    acc.or_(FlagMasks(overflow=b(F, T, F).reshape(1, 3)))  # one row
    assert as_lists(acc)["inexact"] == [T, F, T] and as_lists(acc)["overflow"] == [F, T, F]


def test_or_of_lazy_masks_stays_lazy():
    da = pytest.importorskip("dask.array")
    whole = FlagMasks(invalid=da.from_array(b(T, F, F), chunks=2))
    whole.or_(FlagMasks(invalid=da.from_array(b(F, F, T), chunks=2)))
    assert isinstance(whole.invalid, da.Array) and whole.invalid.compute().tolist() == [T, F, T]


# ---- the NaN rule -------------------------------------------------------------------------
def test_a_nan_result_raises_no_overflow_underflow_or_inexact():
    fl = FlagMasks(invalid=b(T, T, F), divide_by_zero=b(T, F, F), overflow=b(T, T, T), inexact=b(T, T, T))
    fl.clear_at_nan(b(T, F, F))
    assert as_lists(fl) == {"invalid": [T, T, F], "divide_by_zero": [T, F, F], "overflow": [F, T, T],
                            "underflow": None, "inexact": [F, T, T]}


def test_nan_results_of_the_operations_raise_invalid_or_nothing():
    x = sf.encode([np.inf, np.inf, np.nan, 6e4], "fp16")
    y = sf.encode([-np.inf, np.inf, 6e4, 6e4], "fp16")
    _, flags = sf.add(x, y, "fp16", return_flags=True)  # inf - inf, inf + inf, NaN + 6e4, 6e4 + 6e4
    assert flags.invalid.tolist() == [T, F, F, F]
    assert flags.overflow.tolist() == [F, F, F, T] and flags.inexact.tolist() == [F, F, F, T]


# ---- packing and the public boundary ---------------------------------------------------
def test_flag_bits_follow_the_ieee_order():
    assert [int(FLAG_BITS[name]) for name in FLAG_NAMES] == [1, 2, 4, 8, 16]


def test_packed_and_unpacked_round_trip():
    fl = FlagMasks(invalid=b(T, F, F, F), overflow=b(F, T, F, T), inexact=b(F, T, T, T))
    codes = fl.packed((2, 2))
    assert codes.shape == (2, 2) and codes.reshape(-1).tolist() == [1, 20, 16, 20]
    back = FlagMasks.unpacked(codes.reshape(-1), ("invalid", "overflow", "inexact"))
    assert as_lists(back) == as_lists(fl)
    assert flag_mask(codes, "inexact").tolist() == [[F, T], [T, T]]
    assert FlagMasks.unpacked(codes).underflow.tolist() == [[F, F], [F, F]]


def test_to_flags_fills_flags_that_could_not_be_raised():
    fl = FlagMasks(inexact=b(T, F, F, T))
    flags = fl.to_flags((2, 2))
    assert type(flags) is Flags and flags.shape == (2, 2)
    assert flags.inexact.tolist() == [[T, F], [F, T]] and flags.raised() == ("inexact",)
    assert flags.overflow.shape == (2, 2) and not flags.overflow.any()
    assert flags.inexact.base is fl.inexact  # a view, not a copy


def test_to_flags_of_one_lane_as_a_scalar_result():
    flags = FlagMasks(overflow=b(T)).to_flags(()).squeezed()
    assert flags.shape == () and isinstance(flags.overflow, np.bool_) and flags.overflow
    assert isinstance(flags.invalid, np.bool_) and not flags.invalid


def test_to_flags_with_swamped_gives_accumulation_flags():
    flags = FlagMasks(inexact=b(T, F)).to_flags((2,), swamped=np.array([3, 0]))
    assert isinstance(flags, AccumulationFlags) and flags.swamped.tolist() == [3, 0]


def test_of_reads_public_flags():
    flags = sf.Flags.none((2,))._replace(underflow=b(F, T))
    assert as_lists(FlagMasks.of(flags))["underflow"] == [F, T]


# ---- the kernels keep None for flags they cannot raise -----------------------------------
@pytest.mark.parametrize("fast", [True, False])
def test_encoding_finite_values_allocates_no_invalid_or_divide_by_zero(fast, monkeypatch):
    monkeypatch.setattr(sf._fastpaths, "ENABLED", fast)
    attrs, _ = resolve_attributes(None, rounding="nearest_even", tininess="after", subnormals=True, saturate=False, rng=None)
    x = np.linspace(-3.0, 3.0, 64)
    fl = _encode.encode_block(x, sf.fp16, attrs, None, True, np.empty(64, np.uint16), _encode.Workspace(64))
    assert isinstance(fl, FlagMasks) and fl.invalid is None and fl.divide_by_zero is None
    assert _encode.encode_block(x, sf.fp16, attrs, None, False, np.empty(64, np.uint16),
                                _encode.Workspace(64)) is None


def test_finite_float64_through_the_odd_float32_table_allocates_no_invalid():
    # whole-range float64 -> fp16 takes the float32 table once it is filled (_fastpaths._odd32)
    rng = np.random.default_rng(0)
    sf.encode(np.ldexp(rng.standard_normal(1 << 18), rng.integers(-30, 20, 1 << 18)), "fp16", return_flags=True)
    attrs, _ = resolve_attributes(None)
    x = np.ldexp(np.linspace(-3.0, 3.0, 64), np.arange(64) % 40 - 30)
    fl = _encode.encode_block(x, sf.fp16, attrs, None, True, np.empty(64, np.uint16), _encode.Workspace(64))
    assert isinstance(fl, FlagMasks) and fl.invalid is None and fl.divide_by_zero is None


def test_special_lanes_merged_into_a_block_match_the_scalar_path():
    x = np.array([1.0, np.nan, np.inf, 1e-9, 7e4])
    bits, flags = sf.encode(x, "fp16", return_flags=True)
    for i, v in enumerate(x):
        one_bits, one = sf.encode(float(v), "fp16", return_flags=True)
        assert int(one_bits) == int(bits[i])
        assert {k: bool(m) for k, m in one} == {k: bool(m[i]) for k, m in flags}


@pytest.mark.parametrize("shape", [(1,), (1, 1), (3,), (2, 70)])
@pytest.mark.parametrize("code", [0, 1, 16 | 8, 31])
def test_flags_of_a_code_made_when_read_equal_the_masks(code, shape):
    """flags_of_code's Flags (masks made on first read, counted from the code until then)
    are the Flags of the same masks: fields, equality, counts in a context, pickling."""
    import pickle

    from softfloat._context import StickyFlags
    from softfloat._flagmasks import flags_of_code

    eager = sf.Flags(*(np.full(shape, bool(code >> j & 1)) for j in range(5)))
    lazy = flags_of_code(code, shape)
    counted, counted_eager = StickyFlags(), StickyFlags()
    counted.record(lazy)  # before any mask is read
    counted_eager.record(eager)
    for name in sf.FLAG_NAMES + ("values", "operations"):
        assert getattr(counted, name) == getattr(counted_eager, name), name
    assert type(lazy) is sf.Flags
    for made in (lazy, pickle.loads(pickle.dumps(flags_of_code(code, shape)))):
        for name in sf.FLAG_NAMES:
            mask = getattr(made, name)
            assert mask.dtype == bool and mask.flags.writeable and np.array_equal(mask, getattr(eager, name)), name
    assert lazy.count() == eager.count() and lazy.raised() == eager.raised()
    with pytest.raises(AttributeError, match="swamped"):
        lazy.swamped
