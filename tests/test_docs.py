"""The documentation a user reads: every public callable has an example, help(softfloat)
lists the arithmetic and every ``rng`` says what None does.  (The install commands of the
optional dependency are checked in test_strategies.py.)"""

from __future__ import annotations

import inspect
import re

import pytest

import softfloat
import softfloat.strategies
import softfloat.testing

def _public(module, name):
    """The object softfloat exports as ``name`` (pytest's importlib mode may have bound the
    submodule softfloat.explain over the function of that name)."""
    obj = getattr(module, name)
    return getattr(obj, name) if inspect.ismodule(obj) else obj


PUBLIC = [(name, _public(softfloat, name)) for name in softfloat.__all__
          if callable(_public(softfloat, name))]
TESTING = [(f"{module.__name__}.{name}", getattr(module, name))
           for module in (softfloat.testing, softfloat.strategies) for name in module.__all__
           if callable(getattr(module, name))]


@pytest.mark.parametrize(("name", "obj"), PUBLIC + TESTING, ids=[n for n, _ in PUBLIC + TESTING])
def test_every_public_callable_has_an_example(name, obj):
    # pytest runs these examples as doctests (--doctest-modules in pyproject.toml)
    doc = inspect.getdoc(obj) or ""
    assert ">>>" in doc, f"softfloat.{name} has no doctested example"


def _takes_rng(obj) -> bool:
    try:
        return "rng" in inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return False


RNG_USERS = [(name, obj) for name, obj in PUBLIC if _takes_rng(obj)]


def test_the_rng_users_are_the_rounding_calls():
    names = {name for name, _ in RNG_USERS}
    assert {"encode", "quantize", "explain", "add", "sub", "mul", "div", "sqrt", "fma", "convert",
            "round_to_integral", "to_int", "from_int", "sum", "vecdot", "matmul"} <= names


@pytest.mark.parametrize(("name", "obj"), RNG_USERS, ids=[n for n, _ in RNG_USERS])
def test_every_rng_documents_none_and_the_deterministic_modes(name, obj):
    doc = " ".join((inspect.getdoc(obj) or "").split())
    assert "rng=None" in doc and "fresh entropy" in doc, name
    assert "ignore" in doc.lower(), name  # the deterministic modes ignore it


ARITHMETIC = ["add", "sub", "mul", "div", "sqrt", "fma", "convert", "round_to_integral", "to_int",
              "from_int", "next_up", "next_down", "minimum", "maximum", "total_order", "eq", "lt",
              "sum", "vecdot", "matmul", "encode", "decode", "quantize", "explain", "outcomes",
              "error_stats"]


def test_help_softfloat_lists_every_public_name():
    text = softfloat.__doc__
    for name in softfloat.__all__:
        if name != "__version__":
            assert re.search(rf"\b{name}\b", text), f"help(softfloat) does not mention {name}"


def test_help_softfloat_lists_the_arithmetic():
    text = softfloat.__doc__
    for name in ARITHMETIC:
        assert re.search(rf"\b{name}\b", text), f"help(softfloat) does not mention {name}"


def test_flags_example_uses_only_public_methods():
    doc = inspect.getdoc(softfloat.Flags)
    examples = [line for line in doc.splitlines() if line.lstrip().startswith((">>>", "..."))]
    assert examples
    assert not any("._" in line for line in examples), examples
