"""A CPU that flushes subnormals (FTZ/DAZ) gives a clear error, not wrong bits
(softfloat._fpenv): the public entry points check the thread's arithmetic first."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import import_torch

import softfloat as sf
from softfloat import _fpenv


def test_this_thread_keeps_subnormals():
    assert not _fpenv.flushes_subnormals()
    _fpenv.require_subnormals()  # no error
    assert np.float32(2.0**-126) * np.float32(0.5) != 0  # numpy agrees


def test_entry_points_ask_first(monkeypatch):
    # without torch to set the bits: the check stood in for, every entry point refuses
    monkeypatch.setattr(_fpenv, "_MIN_NORMAL", 0.0)  # as FTZ would make the smallest normal's half
    assert _fpenv.flushes_subnormals()
    a = np.ones(3)
    for call in (lambda: sf.encode(a, "fp16"), lambda: sf.quantize(a, "e4m3"),
                 lambda: sf.sum(sf.encode(a, "fp16"), "fp16"), lambda: sf.mul(1, 1, "bf16")):
        with _raises():
            call()
    with _raises():
        sf.decode(np.uint16(1), "fp16", np.float32)  # 2**-24, decoded as 0 under DAZ


@pytest.fixture
def flushing():
    """This thread's FTZ and DAZ set by torch (the usual way they get set), cleared after."""
    torch = import_torch()  # setting FTZ/DAZ from Python takes torch.set_flush_denormal
    if not torch.set_flush_denormal(True):
        pytest.skip("this CPU has no flush-to-zero mode torch can set")
    try:
        yield torch
    finally:
        torch.set_flush_denormal(False)


def _raises():
    return pytest.raises(FloatingPointError, match=r"flushes subnormal numbers.*set_flush_denormal\(False\)")


def test_flushing_thread_is_detected_and_refused(flushing):
    x = np.array([2.0**-130, 1.0])  # a bf16 subnormal that float32 shortcuts would flush
    flushing.set_flush_denormal(False)
    bits = sf.encode(np.ones(2), "bf16")
    flushing.set_flush_denormal(True)
    assert _fpenv.flushes_subnormals()
    for call in (lambda: sf.encode(x, "bf16"), lambda: sf.quantize(x.astype(np.float32), "fp32"),
                 lambda: sf.add(bits, bits, "bf16"), lambda: sf.matmul(bits[None], bits[:, None], "bf16"),
                 lambda: sf.scaled_encode(x, "e4m3"), lambda: sf.decode(np.uint16(1), "fp16", np.float32)):
        with _raises():
            call()
    with _raises():
        sf.asarray(x, "bf16")  # the constructor encodes
    flushing.set_flush_denormal(False)
    a = sf.asarray(x, "bf16")
    flushing.set_flush_denormal(True)
    for call in (lambda: a * a, lambda: np.exp(a), lambda: a.sum(), lambda: np.dot(a, a)):
        with _raises():
            call()


def test_torch_front_end_refuses_on_the_cpu(flushing):
    import softfloat.torch as sft
    t = flushing.tensor([2.0**-130, 1.0])
    with _raises():
        sft.quantize(t, "bf16")
    with _raises():
        with sft.emulate("bf16"):
            flushing.nn.functional.linear(t[None], t[None])


def test_results_are_right_again_once_cleared(flushing):
    flushing.set_flush_denormal(False)
    assert sf.encode(np.array(2.0**-130), "bf16") == 8  # 2**-130 = 2**-133 * 8: a bf16 subnormal
