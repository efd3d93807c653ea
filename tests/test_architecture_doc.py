"""docs/architecture.md names real things: every ``softfloat.``-name in backticks imports
(a module, or an attribute of the longest importable module prefix)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.conftest import import_torch

DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
NAMES = sorted(set(re.findall(r"`(softfloat(?:\.\w+)*)", DOC.read_text())))


def resolve(dotted: str):
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)  # AttributeError: the page names something gone
        return obj
    raise ModuleNotFoundError(dotted)


def test_the_page_names_enough_to_be_checked():
    assert len(NAMES) > 30


@pytest.mark.parametrize("name", NAMES)
def test_every_name_on_the_page_exists(name):
    if name == "softfloat.torch" or name.startswith("softfloat.torch."):
        import_torch()  # skips, saying how to install it, without torch
    resolve(name)
