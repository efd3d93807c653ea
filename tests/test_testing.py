"""softfloat.testing: bit-exact assertions and ulp distances.

ulp_distance is checked against brute force: every value of a small format sorted by
value (numpy's sort of the decoded float64s, which shares nothing with the key mapping),
so the distance between two patterns is the difference of their ranks; +0 and -0 share a
rank because they are one value.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

import softfloat as sf
from softfloat import Format
from softfloat.testing import assert_bits_equal, assert_ulp_close, ulp_distance

SMALL = [sf.fp8_e5m2, sf.fp8_e4m3, sf.fp8_e4m3fnuz, sf.fp8_e5m2fnuz, sf.fp6_e3m2, sf.fp4_e2m1,
         Format(3, 4), Format(2, 1, "fn")]


def non_nan_patterns(fmt: Format) -> np.ndarray:
    every = np.arange(1 << fmt.bits, dtype=np.uint64)
    return every[~np.asarray(sf.is_nan(every, fmt))]


def ranks(patterns: np.ndarray, fmt: Format) -> np.ndarray:
    """Position of each pattern's value among the format's distinct values, in value order."""
    values = sf.decode(patterns, fmt)
    distinct = np.unique(values)  # -0.0 == 0.0: one value
    return np.searchsorted(distinct, values).astype(np.int64)


# =====================================================================================
# ulp_distance
# =====================================================================================
@pytest.mark.parametrize("fmt", SMALL, ids=lambda f: f.name)
def test_ulp_distance_matches_enumeration_for_every_pair(fmt):
    p = non_nan_patterns(fmt)
    r = ranks(p, fmt)
    got = ulp_distance(p[:, None], p[None, :], fmt)
    assert got.dtype == np.int64 and got.shape == (p.size, p.size)
    np.testing.assert_array_equal(got, r[None, :] - r[:, None])


def test_ulp_distance_between_fp16_neighbours_is_one():
    p = non_nan_patterns(sf.fp16)
    order = np.argsort(sf.decode(p, sf.fp16), kind="stable")
    values = sf.decode(p[order], sf.fp16)
    step = values[1:] != values[:-1]  # skip -0 -> +0: the same value
    lower, upper = p[order][:-1][step], p[order][1:][step]
    assert lower.size == 2 * 0x7C00  # every finite value and the infinities, zero once
    np.testing.assert_array_equal(ulp_distance(lower, upper, sf.fp16), 1)
    np.testing.assert_array_equal(ulp_distance(upper, lower, sf.fp16), -1)


def test_ulp_distance_across_fp16_against_ranks():
    rng = np.random.default_rng(0)
    p = non_nan_patterns(sf.fp16)
    r = ranks(p, sf.fp16)
    i, j = rng.integers(0, p.size, size=(2, 20_000))
    np.testing.assert_array_equal(ulp_distance(p[i], p[j], sf.fp16), r[j] - r[i])


@pytest.mark.parametrize(("a", "b", "expected"), [
    (0x3C00, 0x3C01, 1),          # 1.0 -> 1.0009765625
    (0x3C01, 0x3C00, -1),
    (0x3BFF, 0x3C00, 1),          # across a binade
    (0x0000, 0x8000, 0),          # +0 and -0 are one value
    (0x8001, 0x0001, 2),          # -min_subnormal -> +min_subnormal
    (0x03FF, 0x0400, 1),          # largest subnormal -> smallest normal
    (0x7BFF, 0x7C00, 1),          # max -> inf
    (0xFC00, 0x7C00, 2 * 0x7C00),
])
def test_ulp_distance_fp16_cases(a, b, expected):
    d = ulp_distance(a, b, "fp16")
    assert d == expected and isinstance(d, int)


def test_ulp_distance_fp64_beyond_int64():
    """-inf to +inf in fp64 is 2 * 0x7FF0000000000000 steps: more than int64 holds."""
    assert ulp_distance(0xFFF0000000000000, 0x7FF0000000000000, sf.fp64) == 2 * 0x7FF0000000000000
    wide = ulp_distance(np.array([0xFFF0000000000000, 0x3FF0000000000000], dtype=np.uint64),
                        np.array([0x7FF0000000000000, 0x3FF0000000000001], dtype=np.uint64), sf.fp64)
    assert wide.tolist() == [2 * 0x7FF0000000000000, 1]
    small = ulp_distance(np.array([0x8000000000000001], dtype=np.uint64), np.uint64(1), sf.fp64)
    assert small.dtype == np.int64 and small.tolist() == [2]


def test_ulp_distance_rejects_nan_naming_it():
    with pytest.raises(ValueError, match=r"ulp_distance is undefined for NaN: b\[1\] = 0x7e00 is a NaN of fp16"):
        ulp_distance([0x3C00, 0x3C00], [0x3C00, 0x7E00], "fp16")
    with pytest.raises(ValueError, match=r"a\[\] = 0x80 is a NaN of fp8_e4m3fnuz"):
        ulp_distance(0x80, 0x00, "e4m3fnuz")


def test_ulp_distance_validates_patterns():
    with pytest.raises(TypeError, match=r"a must have an integer dtype"):
        ulp_distance(np.array([1.0]), 0, "fp16")
    with pytest.raises(ValueError, match=r"does not fit the format's 16 bits"):
        ulp_distance(0, 0x10000, "fp16")


# =====================================================================================
# assert_bits_equal
# =====================================================================================
def test_equal_patterns_pass():
    assert_bits_equal(sf.encode(np.array([1.0, -0.0, np.inf]), "fp16"), [0x3C00, 0x8000, 0x7C00], "fp16")
    assert_bits_equal(0x7F, 0x7F, "e4m3")
    assert_bits_equal(np.zeros((2, 3), np.uint16), 0, "bf16")  # broadcasts


def test_signed_zeros_are_distinct():
    with pytest.raises(AssertionError, match=r"1 of 1 fp16 bit patterns differ"):
        assert_bits_equal(0x8000, 0x0000, "fp16")


def test_nans_equal_by_default_and_bit_for_bit_on_request():
    quiet, other_payload, negative = 0x7E00, 0x7E01, 0xFE00
    assert_bits_equal([quiet, quiet], [other_payload, negative], "fp16")
    with pytest.raises(AssertionError, match=r"2 of 2 .*NaNs compared bit for bit"):
        assert_bits_equal([quiet, quiet], [other_payload, negative], "fp16", nan_equal=False)
    with pytest.raises(AssertionError, match="1 of 1"):
        assert_bits_equal(quiet, 0x7C00, "fp16")  # NaN against infinity


def test_failure_message_shows_index_hex_fields_and_values():
    actual = np.array([[0x3C00, 0x3C01], [0x8000, 0x7E01]], dtype=np.uint16)
    expected = np.array([[0x3C00, 0x3C00], [0x0000, 0x7D00]], dtype=np.uint16)
    with pytest.raises(AssertionError) as failure:
        assert_bits_equal(actual, expected, "fp16")
    message = str(failure.value)
    assert message.splitlines()[0] == (
        "2 of 4 fp16 bit patterns differ (+0 and -0 distinct, any NaN equals any NaN):")
    assert "  [0, 1]  actual   0x3c01 = 0 01111 0000000001 = 1.0009765625" in message
    assert "          expected 0x3c00 = 0 01111 0000000000 = 1.0" in message
    assert "  [1, 0]  actual   0x8000 = 1 00000 0000000000 = -0.0" in message
    assert "expected 0x0000 = 0 00000 0000000000 = 0.0" in message
    assert "[1, 1]" not in message  # two NaNs
    with pytest.raises(AssertionError) as failure:
        assert_bits_equal(actual, expected, "fp16", nan_equal=False)
    message = str(failure.value)
    assert "  [1, 1]  actual   0x7e01 = 0 11111 1000000001 = quietNaN" in message
    assert "expected 0x7d00 = 0 11111 0100000000 = signalingNaN" in message


def test_failure_message_lists_ten_and_counts_the_rest():
    actual = np.arange(25, dtype=np.uint32)
    with pytest.raises(AssertionError) as failure:
        assert_bits_equal(actual, actual + 1, "fp32")
    lines = str(failure.value).splitlines()
    assert lines[0].startswith("25 of 25 fp32 bit patterns differ")
    shown = [line for line in lines if re.match(r"  \[\d+\]", line)]
    assert [line.split()[0] for line in shown] == [f"[{i}]" for i in range(10)]
    assert lines[-1] == "  ... and 15 more"
    assert "0x00000000 = 0 00000000 00000000000000000000000 = 0.0" in lines[1]


def test_fp64_and_scalar_messages():
    with pytest.raises(AssertionError) as failure:
        assert_bits_equal(0x3FF0000000000001, 0x3FF0000000000000, sf.fp64)
    message = str(failure.value)
    assert "[]  actual   0x3ff0000000000001 = 0 01111111111 " + "0" * 51 + "1 = 1.0000000000000002" in message


def test_assert_bits_equal_rejects_bad_input():
    with pytest.raises(TypeError, match=r"actual must have an integer dtype .*use softfloat\.encode\(x, fmt\)"):
        assert_bits_equal(np.array([1.0]), [0x3C00], "fp16")
    with pytest.raises(ValueError, match=r"expected=0x10000 does not fit"):
        assert_bits_equal(0, 0x10000, "fp16")
    shapes = r"actual and expected have shapes \(2,\) and \(3,\), which do not broadcast"
    with pytest.raises(AssertionError, match=shapes):
        assert_bits_equal([0, 0], [0, 0, 0], "fp16")
    with pytest.raises(TypeError, match=r"nan_equal must be True or False"):
        assert_bits_equal(0, 0, "fp16", nan_equal="yes")


# =====================================================================================
# assert_ulp_close
# =====================================================================================
def test_ulp_close_passes_within_and_fails_beyond():
    assert_ulp_close([0x3C00, 0x3C02, 0x8000], [0x3C01, 0x3C00, 0x0000], "fp16", max_ulps=2)
    with pytest.raises(AssertionError) as failure:
        assert_ulp_close([0x3C00, 0x3C02, 0x3BFE], [0x3C01, 0x3C00, 0x3C00], "fp16", max_ulps=1)
    message = str(failure.value)
    assert message.splitlines()[0] == "2 of 3 fp16 values are more than 1 ulp apart:"
    assert "[1]  actual   0x3c02" in message and "actual is 2 ulps above expected" in message
    assert "[2]  actual   0x3bfe" in message and "actual is 2 ulps below expected" in message
    assert "[0]" not in message


@pytest.mark.parametrize(("actual", "expected", "head"), [
    ([0x3C02], [0x3C00], "1 of 1 fp16 value is more than 1 ulp apart:"),
    ([0x3C02, 0x3C00], [0x3C00, 0x3C00], "1 of 2 fp16 values is more than 1 ulp apart:"),
])
def test_ulp_close_message_grammar(actual, expected, head):
    with pytest.raises(AssertionError) as failure:
        assert_ulp_close(actual, expected, "fp16", max_ulps=1)
    assert str(failure.value).splitlines()[0] == head


def test_ulp_close_nans():
    assert_ulp_close([0x7E00, 0x3C00], [0xFE01, 0x3C00], "fp16", max_ulps=0)  # NaN matches NaN
    with pytest.raises(AssertionError, match=r"a NaN against a number"):
        assert_ulp_close(0x7E00, 0x7BFF, "fp16", max_ulps=10**6)


def test_ulp_close_counts_infinity_as_one_step_past_max():
    assert_ulp_close(0x7C00, 0x7BFF, "fp16", max_ulps=1)
    with pytest.raises(AssertionError):
        assert_ulp_close(0x7C00, 0x7BFF, "fp16", max_ulps=0)


def test_ulp_close_validates_max_ulps():
    with pytest.raises(ValueError, match=r"max_ulps must be from 0"):
        assert_ulp_close(0, 0, "fp16", max_ulps=-1)
    with pytest.raises(TypeError, match=r"max_ulps must be an int"):
        assert_ulp_close(0, 0, "fp16", max_ulps=0.5)


@pytest.mark.parametrize("fmt", [sf.fp8_e4m3, sf.fp8_e5m2fnuz], ids=lambda f: f.name)
def test_ulp_close_agrees_with_ranks_on_every_pair(fmt):
    p = non_nan_patterns(fmt)
    r = ranks(p, fmt)
    for i, j in itertools.product(range(0, p.size, 7), range(0, p.size, 5)):
        close = abs(int(r[j]) - int(r[i])) <= 3
        try:
            assert_ulp_close(p[i], p[j], fmt, max_ulps=3)
        except AssertionError:
            assert not close
        else:
            assert close
