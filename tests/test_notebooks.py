"""The teaching notebooks: stored executed and in sync with their sources, re-executed here
top to bottom in a fresh kernel (nbclient) without error, showing the figures each promises,
and printing the key numbers the library computes."""

import importlib.util
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("notebook_build", ROOT / "notebooks" / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

SOURCES = build.sources()
NAMES = [p.stem for p in SOURCES]

# The figures (PNG outputs) each notebook must at least show; see issue "teaching notebooks".
MIN_FIGURES = {
    "01_ieee754_anatomy": 0,
}

_executed = {}


def executed(name):
    """The notebook ``name`` built from its source and executed once per test session."""
    if name not in _executed:
        os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
        _executed[name] = build.execute(build.notebook_from_source(build.SOURCES / f"{name}.py"))
    return _executed[name]


def printed(nb):
    """Everything the notebook's code cells wrote to stdout and as plain-text results."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", ()) if cell.cell_type == "code" else ():
            if out.get("output_type") == "stream":
                parts.append(out["text"])
            elif "text/plain" in out.get("data", {}):
                parts.append(out["data"]["text/plain"])
    return "\n".join(parts)


def test_every_notebook_has_a_source_and_a_figure_count():
    stored = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert NAMES and stored == NAMES
    assert set(MIN_FIGURES) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_stored_notebook_is_its_source_executed(name):
    import nbformat

    stored = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    fresh = build.notebook_from_source(build.SOURCES / f"{name}.py")
    assert [(c.cell_type, c.source) for c in stored.cells] == \
        [(c.cell_type, c.source) for c in fresh.cells], \
        f"notebooks/{name}.ipynb is stale: run python notebooks/build.py {name[:2]}"
    codes = [c for c in stored.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in codes), f"{name} is stored unexecuted"
    assert len(build.images(stored)) >= MIN_FIGURES[name]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_and_shows_its_figures(name):
    nb = executed(name)
    assert len(build.images(nb)) >= MIN_FIGURES[name]


def test_01_the_seeds_worked_examples():
    text = printed(executed("01_ieee754_anatomy"))
    assert "0 01111110 11000000000000000000000" in text      # 0.875
    assert "0 10000001 10010111000010100011111" in text      # 6.36
    assert re.search(r"\b2048\.0\b", text)
