"""Overflow into formats without infinity (fn, fnuz) in sums, vecdot and matmul.

round_A / round_O (softfloat.accumulate's docstring) are sf.encode's roundings: a finite
sum beyond the format's range becomes the NaN of the sum's sign in an fn format (0xFF for
a negative fp8_e4m3 sum), the single NaN 0x80 in an fnuz one, flagged overflow and
inexact; an infinity becomes that NaN flagged invalid.  A NaN operand (a NaN term, a NaN
c, a running sum that overflowed earlier) or an invalid operation gives the canonical
(positive) NaN.  Every case: the general path (fast paths off), the fast paths and the
exact oracle (tests/accumulate_oracle.py) agree bit for bit and flag for flag.
"""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from tests import accumulate_oracle as ora
from tests.fastpath_checks import assert_same, general

FN = ("fp8_e4m3", "fp8_e4m3fnuz", "fp8_e5m2fnuz")
#: an fp16 value beyond each format's largest finite value (448, 240, 57344)
BIG = {"fp8_e4m3": 467.0, "fp8_e4m3fnuz": 467.0, "fp8_e5m2fnuz": 64000.0}


def _check(call, ref):
    """fast == general == oracle (bits and flags); returns the bits."""
    fast, slow = call(), general(call)
    assert_same(fast, slow)
    bits, flags = slow
    want_bits, want_flags = ref
    np.testing.assert_array_equal(np.asarray(bits), want_bits)
    for name in ora.FLAG_FIELDS:
        got = flags.swamped if name == "swamped" else getattr(flags, name)
        np.testing.assert_array_equal(np.asarray(got), want_flags[name], err_msg=name)
    return np.asarray(bits)


def _enc(values, fmt="fp16"):
    return sf.encode(np.asarray(values, dtype=np.float64), fmt)


def _nan_of(sign, out):
    """sf.encode's NaN for an overflowing value of that sign."""
    return int(sf.encode(sign * 1e30, out))


@pytest.mark.parametrize("out", FN)
@pytest.mark.parametrize("sign", [-1.0, 1.0])
@pytest.mark.parametrize("order", ["sequential", "reverse", "pairwise"])
def test_sum_overflow_in_final_rounding(out, sign, order):
    """fp32 accumulator, finite sum, overflow only in round_O: sf.encode's NaN."""
    big = BIG[out]
    x = _enc([[sign * big, 0.0], [sign * big / 2, sign * (big / 2 + 16)], [1.0, 2.0]])
    kw = dict(axis=-1, accumulator="fp32", out_format=out, order=order)
    bits = _check(lambda: sf.sum(x, "fp16", return_flags=True, **kw), ora.ref_sum(x, "fp16", **kw))
    want = sf.encode(np.array([sign * big, sign * (big + 16), 3.0]), out)
    np.testing.assert_array_equal(bits, want)
    assert int(bits[0]) == _nan_of(sign, out)


def test_reproducer_negative_sum_is_0xff():
    x = _enc([-467.0, 0.0])
    kw = dict(accumulator="fp32", out_format="fp8_e4m3")
    bits = _check(lambda: sf.sum(x, "fp16", return_flags=True, **kw), ora.ref_sum(x, "fp16", **kw))
    assert int(bits) == 0xFF == int(sf.encode(-467.0, "fp8_e4m3"))
    assert int(general(lambda: sf.sum(x, "fp16", **kw))) == 0xFF


@pytest.mark.parametrize("acc", ["fp8_e4m3", "fp8_e4m3fnuz"])
@pytest.mark.parametrize("sign", [-1.0, 1.0])
def test_fn_accumulator_overflow(acc, sign):
    """Overflow in the accumulator: at the last step the NaN of the sum's sign; earlier,
    the next addition has a NaN operand and gives the canonical NaN."""
    x = sf.encode(np.array([[sign * 448.0, sign * 64.0],  # overflows at the last step
                            [sign * 448.0, sign * 64.0],
                            [1.0, 2.0]]), acc)
    x = np.concatenate([x, sf.encode(np.array([[1.0], [1.0], [4.0]]), acc)], axis=1)
    x[0, 2] = sf.encode(0.0, acc)  # row 0: 448 + 64 (overflow), then + 0
    for order in ("sequential", "pairwise"):
        kw = dict(axis=-1, accumulator=acc, order=order)
        bits = _check(lambda: sf.sum(x, acc, return_flags=True, **kw), ora.ref_sum(x, acc, **kw))
        assert int(bits[2]) == int(sf.encode(7.0, acc))
        if acc == "fp8_e4m3":
            assert int(bits[0]) == sf.formats.as_format(acc).nan_bits  # a NaN operand later
    # the overflow is the chain's last step: the NaN keeps the sign
    y = x[:, :2]
    kw = dict(axis=-1, accumulator=acc)
    bits = _check(lambda: sf.sum(y, acc, return_flags=True, **kw), ora.ref_sum(y, acc, **kw))
    assert int(bits[0]) == _nan_of(sign, acc)


@pytest.mark.parametrize("out", FN)
@pytest.mark.parametrize("sign", [-1.0, 1.0])
def test_vecdot_and_matmul(out, sign):
    r = 30.0 if out != "fp8_e5m2fnuz" else 200.0  # 2 r^2 beyond the format's range
    a = _enc([[sign * r, r, 0.5], [1.0, 2.0, 3.0]])
    b = _enc([[r, sign * r, 2.0], [1.0, 1.0, 1.0]])
    kw = dict(accumulator="fp32", out_format=out)
    bits = _check(lambda: sf.vecdot(a, b, "fp16", return_flags=True, **kw), ora.ref_vecdot(a, b, "fp16", **kw))
    assert int(bits[0]) == _nan_of(sign, out)
    bt = np.ascontiguousarray(b.T)
    m = _check(lambda: sf.matmul(a, bt, "fp16", return_flags=True, **kw), ora.ref_matmul(a, bt, "fp16", **kw))
    assert int(m[0, 0]) == _nan_of(sign, out)
    for product in ("fp16", None):  # an fn accumulator, products rounded or fused
        kw = dict(accumulator=out, product=product)
        _check(lambda: sf.matmul(a, bt, "fp16", return_flags=True, **kw), ora.ref_matmul(a, bt, "fp16", **kw))


@pytest.mark.parametrize("out", FN)
def test_nan_operands_stay_canonical(out):
    """A NaN term or a NaN c, and inf - inf: the canonical NaN, whatever the signs."""
    fmt = sf.formats.as_format(out)
    x = _enc([[-np.nan, 1.0], [-np.inf, np.inf], [-np.inf, 1.0]])
    kw = dict(axis=-1, accumulator="fp32", out_format=out)
    bits = _check(lambda: sf.sum(x, "fp16", return_flags=True, **kw), ora.ref_sum(x, "fp16", **kw))
    assert int(bits[0]) == int(bits[1]) == fmt.nan_bits
    assert int(bits[2]) == int(sf.encode(-np.inf, out))  # an infinity into fn: encode's NaN
    c = np.full(3, _nan_of(-1.0, out), dtype=np.uint8)
    y = _enc([[1.0, 2.0]] * 3)
    kw = dict(axis=-1, accumulator=out, c=c)
    bits = _check(lambda: sf.sum(y, "fp16", return_flags=True, **kw), ora.ref_sum(y, "fp16", **kw))
    assert (bits == fmt.nan_bits).all()


def test_saturate_gives_max_finite():
    x = _enc([-467.0, 0.0])
    got = general(lambda: sf.sum(x, "fp16", accumulator="fp32", out_format="fp8_e4m3", saturate=True))
    assert int(got) == int(sf.encode(-467.0, "fp8_e4m3", saturate=True)) == 0xFE
