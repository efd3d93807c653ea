"""encode and quantize of small float arrays as one block in the calling thread
(softfloat.codec's ``_small`` lane: a training step's tensors) against the streamed path
(``workers=1``) and the general path (every shortcut off), bits, values and flags, on
edge values -- zeros of both signs, subnormals of the target, overflow to infinity or
saturation, infinities, NaNs (quiet and signalling payloads) -- and on the layouts the
torch front end hands over (transposed views, 0-d arrays)."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat import codec
from tests.fastpath_checks import assert_same, general

FORMATS = ["bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "e2m1", "fp32"]
MODES = ["nearest_even", "toward_zero", "upward", "odd"]


def edges(fmt, dtype, n: int = 94):
    """n + 18 values of ``dtype`` mixing ``fmt``'s edges with ordinary ones, shuffled."""
    f = sf.formats.as_format(fmt)
    top, tiny, low = float(f.max_finite), float(f.min_subnormal), float(f.min_normal)
    special = [0.0, -0.0, tiny, -tiny, tiny / 2, tiny * 1.5, low, -low * 0.75, top, -top, top * 1.0625,
               top * 4, -1e300, 1e-300, np.inf, -np.inf, np.nan, -np.nan]
    rng = np.random.default_rng(23)
    with np.errstate(over="ignore"):
        x = np.concatenate([np.array(special), rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)]).astype(dtype)
    x[-1] = np.frombuffer(np.array(0x7FF4000000000001 if dtype == np.float64 else 0x7FA00001,
                                   dtype=f"u{np.dtype(dtype).itemsize}").tobytes(), dtype)[0]  # a signalling NaN
    rng.shuffle(x)
    return x


def _cases():
    for fmt in FORMATS:
        for dtype in (np.float32, np.float64):
            yield fmt, dtype


@pytest.mark.parametrize("fmt,dtype", list(_cases()))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("options", [{}, {"saturate": True}, {"subnormals": False}])
def test_small_arrays_equal_the_streamed_and_the_general_path(fmt, dtype, mode, options):
    x = edges(fmt, dtype)
    for arr in (x, x.reshape(8, -1).T, x[:1].reshape(()), x[::3]):  # contiguous, transposed, 0-d, strided
        for fn in (sf.encode, sf.quantize):
            for flags in (False, True):
                got = fn(arr, fmt, mode, return_flags=flags, **options)
                assert_same(got, fn(arr, fmt, mode, return_flags=flags, workers=1, **options))
                assert_same(got, general(lambda: fn(arr, fmt, mode, return_flags=flags, workers=1, **options)))
    assert np.array_equal(x, edges(fmt, dtype), equal_nan=True)  # the input is not modified


def test_the_lane_takes_small_native_float_arrays_only(monkeypatch):
    ran = []
    real = codec._one_block
    monkeypatch.setattr(codec, "_one_block", lambda x, *a: ran.append(x.size) or real(x, *a))
    x = edges("bf16", np.float32)
    sf.encode(x, "bf16")
    sf.quantize(x, "e4m3", return_flags=True)
    assert ran == [x.size, x.size]
    sf.encode(x, "bf16", workers=1)                           # a workers= to check: the streamed path
    sf.encode(x, "bf16", "stochastic", rng=1)                 # random bits: the streamed path
    sf.encode(np.ones(8, np.float16), "bf16")                 # float16: converted first
    sf.encode(x.astype(">f4"), "bf16")                        # byte-swapped
    sf.encode(np.resize(x, codec._BLOCK + 1), "bf16")         # more than one block
    sf.encode(x.tolist(), "bf16")                             # not an ndarray
    assert ran == [x.size, x.size]


def test_small_quantize_without_flags_takes_the_shortcuts_small_path(monkeypatch):
    from softfloat import _fastpaths
    taken = []
    real = _fastpaths.quantize_small
    monkeypatch.setattr(_fastpaths, "quantize_small", lambda x, *a: taken.append(x.shape) or real(x, *a))
    x = edges("bf16", np.float32).reshape(4, -1)
    got = sf.quantize(x, "bf16")
    assert taken == [x.shape]
    assert_same(got, general(lambda: sf.quantize(x, "bf16", workers=1)))
    sf.quantize(x, "bf16", return_flags=True)     # flags: the one-block lane
    sf.quantize(np.ones((4, 8)), "bf16")           # float64 values (not bf16's float32): the one-block lane
    assert taken == [x.shape]
    got = sf.quantize(x, "fp32", "upward")         # float32 -> fp32: values as they are, NaNs the codec's
    assert taken == [x.shape, x.shape] and found_as_is(got, x)
    assert_same(got, general(lambda: sf.quantize(x, "fp32", "upward", workers=1)))


def found_as_is(got, x):
    """Whether ``got`` holds ``x``'s values (NaN where x has one)."""
    return got.dtype == np.float32 and np.array_equal(got, x, equal_nan=True)
