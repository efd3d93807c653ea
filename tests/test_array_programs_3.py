"""Numerical users' numpy programs on Arrays, round 3: what a probe of real programs found
missing or wrong, each checked against numpy float16/float32 or ml_dtypes (never the code
under test restated)."""

from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest

import softfloat as sf


def _values(seed: str, shape, scale=3.0):
    return np.random.default_rng(zlib.crc32(seed.encode())).standard_normal(shape) * scale


@pytest.mark.skipif(not hasattr(np, "cumulative_sum"), reason="numpy >= 2.1")
def test_cumulative_sum_and_prod_are_cumsum_and_cumprod_with_the_initial_value():
    """The array API's np.cumulative_sum / np.cumulative_prod (numpy >= 2.1) raised numpy's
    'no implementation found'; they are cumsum / cumprod along the axis."""
    h = _values("cumulative", (3, 5)).astype(np.float16)
    x = sf.asarray(h, "fp16")
    with sf.context(accumulator="fp16"):  # running sums in fp16: numpy float16's own chain
        for axis in (0, 1, -1):
            for initial in (False, True):
                got = np.cumulative_sum(x, axis=axis, include_initial=initial)
                assert isinstance(got, sf.Array) and got.format == sf.fp16
                np.testing.assert_array_equal(got.bits, np.cumulative_sum(h, axis=axis, include_initial=initial)
                                              .view(np.uint16))
    # the default accumulator (fp32): numpy float32's running sums, each rounded to float16
    expected = np.cumulative_sum(h.astype(np.float32), axis=1, include_initial=True).astype(np.float16)
    np.testing.assert_array_equal(np.cumulative_sum(x, axis=1, include_initial=True).bits, expected.view(np.uint16))
    small = h[:, :3] / 2
    got = np.cumulative_prod(sf.asarray(small, "fp16"), axis=1, include_initial=True)
    np.testing.assert_array_equal(got.bits, np.cumulative_prod(small, axis=1, include_initial=True).view(np.uint16))
    b = small[0].astype(ml_dtypes.bfloat16)  # bf16 products are exact in float32: one rounding
    running = [ml_dtypes.bfloat16(1.0)]
    for t in b:
        running.append(ml_dtypes.bfloat16(np.float32(running[-1]) * np.float32(t)))
    got = np.cumulative_prod(sf.asarray(b, "bf16"), include_initial=True)
    np.testing.assert_array_equal(got.bits, np.array(running, dtype=ml_dtypes.bfloat16).view(np.uint16))
    assert np.cumulative_sum(x[0, 0]).shape == (1,)  # a 0-d Array counts as 1-d, as numpy's
    with pytest.raises(ValueError, match="axis= is required"):
        np.cumulative_sum(x)


@pytest.mark.skipif(not hasattr(np, "astype"), reason="numpy >= 2.1")
def test_np_astype_is_the_method():
    h = _values("astype", 6).astype(np.float16)
    x = sf.asarray(h, "fp16")
    got = np.astype(x, "bf16")
    np.testing.assert_array_equal(got.bits, h.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16))
    np.testing.assert_array_equal(np.astype(x, np.int16), h.astype(np.int16))
    assert np.astype(x, "fp16", copy=False) is x and np.astype(x, "fp16") is not x
    with pytest.raises(ValueError, match="device="):
        np.astype(x, "fp16", device="cuda")
