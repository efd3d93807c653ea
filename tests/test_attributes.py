"""One value for the rounding attributes: softfloat.RoundingAttributes.

Every public function that rounds takes ``attributes=`` and keeps its keywords as
shortcuts; a shortcut that is given wins.  The oracle for "attributes are honoured" is
the same call with the keyword alone (the keyword paths are checked against MPFR and
numpy elsewhere), and every comparison is chosen so that the two modes differ on the
data, so a function that ignored ``attributes`` would fail.
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

import softfloat as sf

SHORTCUTS = ("rounding", "saturate", "subnormals", "tininess")
UP = sf.RoundingAttributes(rounding="upward")


def _rounding_functions():
    for name in sf.__all__:
        obj = getattr(sf, name)
        if callable(obj) and not isinstance(obj, type):
            try:
                params = inspect.signature(obj).parameters
            except (TypeError, ValueError):
                continue
            if "rounding" in params:
                yield name, obj, params


ROUNDING_FUNCTIONS = list(_rounding_functions())


def test_the_scan_finds_the_rounding_functions():
    names = {name for name, _, _ in ROUNDING_FUNCTIONS}
    assert {"encode", "quantize", "add", "fma", "sqrt", "convert", "to_int", "sum", "matmul"} <= names


@pytest.mark.parametrize("name, fn, params", ROUNDING_FUNCTIONS, ids=[n for n, _, _ in ROUNDING_FUNCTIONS])
def test_every_rounding_function_takes_attributes_and_its_shortcuts_default_to_none(name, fn, params):
    assert "attributes" in params, f"{name} has rounding keywords but no attributes="
    present = [p for p in (*SHORTCUTS, "attributes") if p in params]
    order = [p for p in params if p in present]
    assert order == present, f"{name}: shortcuts in the order {order}, expected {present}"
    for shortcut in SHORTCUTS:
        if shortcut in params:
            assert params[shortcut].default is None, f"{name}({shortcut}=...) must default to None"
    assert params["attributes"].kind is inspect.Parameter.KEYWORD_ONLY


# -- the calls: (function, how to call it with keywords, how to read the result) -------
X = np.array([0.1, -0.1, 1 / 3, -2 / 3, 1e-6, 70000.0])
H16 = sf.encode(X, "fp16")
H32 = sf.encode(X, "fp32")
THIRDS = sf.encode(np.full(8, 1 / 3), "fp32")


def _calls():
    yield "encode", lambda **kw: sf.encode(X, "bf16", **kw)
    yield "quantize", lambda **kw: sf.quantize(X, "fp16", **kw)
    yield "add", lambda **kw: sf.add(H32, H32[::-1], "fp32", **kw)
    yield "sub", lambda **kw: sf.sub(H32, H32[::-1], "fp32", **kw)
    yield "mul", lambda **kw: sf.mul(H32, H32[::-1], "fp32", **kw)
    yield "div", lambda **kw: sf.div(H32, H32[::-1], "fp32", **kw)
    yield "fma", lambda **kw: sf.fma(H32, H32[::-1], H32, "fp32", **kw)
    yield "sqrt", lambda **kw: sf.sqrt(sf.encode(np.abs(X), "fp32"), "fp32", **kw)
    yield "convert", lambda **kw: sf.convert(H32, "fp32", "fp8_e4m3", **kw)
    yield "round_to_integral", lambda **kw: sf.round_to_integral(sf.encode(X * 10, "fp32"), "fp32", **kw)
    yield "to_int", lambda **kw: sf.to_int(sf.encode(X * 10, "fp32"), "fp32", **kw)
    yield "from_int", lambda **kw: sf.from_int(np.array([2049, -2049, 4097]), "fp16", **kw)
    yield "sum", lambda **kw: sf.sum(THIRDS, "fp32", accumulator="fp16", **kw)
    yield "vecdot", lambda **kw: sf.vecdot(THIRDS, THIRDS, "fp32", accumulator="bf16", **kw)
    yield "asarray", lambda **kw: sf.asarray(X, "bf16", **kw).bits
    yield "matmul", lambda **kw: sf.matmul(THIRDS.reshape(2, 4), THIRDS.reshape(4, 2), "fp32",
                                           accumulator="bf16", **kw)


CALLS = list(_calls())


def _same(a, b) -> bool:
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


@pytest.mark.parametrize("name, call", CALLS, ids=[n for n, _ in CALLS])
def test_attributes_are_honoured_and_a_given_keyword_wins(name, call):
    up, down = call(rounding="upward"), call(rounding="downward")
    assert not _same(up, down), "the data must tell the two modes apart"
    assert _same(call(attributes=UP), up)
    assert _same(call(attributes=UP, rounding="downward"), down)
    assert _same(call(), call(attributes=sf.RoundingAttributes()))


@pytest.mark.parametrize("name, call", CALLS, ids=[n for n, _ in CALLS])
def test_a_wrong_attributes_value_names_the_argument(name, call):
    with pytest.raises(TypeError, match="attributes must be a softfloat.RoundingAttributes"):
        call(attributes={"rounding": "upward"})


# -- the value itself -----------------------------------------------------------------
def test_fields_are_checked_with_the_argument_named():
    with pytest.raises(ValueError, match="rounding='sideways' is not valid"):
        sf.RoundingAttributes(rounding="sideways")
    with pytest.raises(TypeError, match="subnormals"):
        sf.RoundingAttributes(subnormals="no")
    with pytest.raises(ValueError, match="platform must be a Platform or one of 'default', 'x86-sse'"):
        sf.RoundingAttributes(platform="vax")
    with pytest.raises(TypeError, match="no field"):
        sf.RoundingAttributes().replace(mode="upward")


def test_it_is_immutable_hashable_and_compares_by_value():
    a = sf.RoundingAttributes(rounding="upward", platform="arm")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.rounding = sf.Rounding.DOWNWARD
    assert a == sf.RoundingAttributes(rounding=sf.Rounding.UPWARD, platform=sf.PLATFORMS["arm"])
    assert len({a, sf.RoundingAttributes(rounding="upward", platform="arm")}) == 1


def test_tininess_defaults_to_the_platforms_and_follows_a_platform_change():
    arm = sf.RoundingAttributes(platform="arm")
    assert arm.tininess is sf.Tininess.BEFORE
    assert arm.replace(platform="riscv").tininess is sf.Tininess.AFTER
    pinned = sf.RoundingAttributes(platform="arm", tininess="after")
    assert pinned.tininess is sf.Tininess.AFTER
    assert pinned.replace(platform="x86-sse").tininess is sf.Tininess.AFTER


def test_repr_names_only_what_differs_from_the_defaults():
    assert repr(sf.RoundingAttributes()) == "RoundingAttributes()"
    assert repr(sf.RoundingAttributes(rounding="odd", saturate=True)) == \
        "RoundingAttributes(rounding=odd, saturate=True)"


def test_the_platforms_tininess_reaches_the_underflow_flag():
    # the value just below fp16's smallest normal that rounds up to it is tiny before
    # rounding, not after (the example of softfloat.Tininess)
    x = 2.0**-14 - 2.0**-26
    raised = {p: sf.encode(x, "fp16", attributes=sf.RoundingAttributes(platform=p), return_flags=True)[1].underflow
              for p in ("default", "arm", "riscv")}
    assert raised == {"default": False, "arm": True, "riscv": False}
