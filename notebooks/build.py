"""Build the teaching notebooks: execute ``notebooks/src/*.py`` and store ``notebooks/*.ipynb``.

The sources are plain Python in jupytext's percent format (``# %%`` starts a code cell,
``# %% [markdown]`` a text cell), so they diff and review like code.  Each one is run top to
bottom in a fresh kernel (nbclient, the notebook directory as working directory, matplotlib's
inline backend, which renders with Agg) and stored *executed*, figures included, so a reader
sees them rendered on a code-hosting site without running anything.

A cell tagged ``readme-figure: NAME`` (a comment line ``# readme-figure: NAME`` in its
source) also has its first PNG written to ``docs/figures/NAME.png``, the figures the README
shows.

    python notebooks/build.py            # every notebook
    python notebooks/build.py 03 05      # the notebooks whose names start so

Needs the notebooks extra: ``pip install "softfloat-emu[notebooks]"``.
"""

from __future__ import annotations

import base64
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"
FIGURES = HERE.parent / "docs" / "figures"
TIMEOUT_S = 600  # per cell
_FIGURE_TAG = re.compile(r"^# readme-figure: ([\w-]+)\s*$", re.MULTILINE)


def _require():
    try:
        import jupytext
        import nbclient
        import nbformat
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"building the notebooks needs {exc.name}: pip install \"softfloat-emu[notebooks]\""
        ) from exc
    return jupytext, nbclient, nbformat


def sources(prefixes=()):
    """The notebook sources, sorted, restricted to names starting with one of ``prefixes``."""
    found = sorted(SOURCES.glob("*.py"))
    if prefixes:
        found = [p for p in found if p.stem.startswith(tuple(prefixes))]
    return found


def notebook_from_source(path):
    """The unexecuted notebook of one source file, with stable cell ids."""
    jupytext, _, nbformat = _require()
    nb = jupytext.read(path, fmt="py:percent")
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                 "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{path.stem[:2]}-{i:03d}"
    return nbformat.validator.normalize(nb)[1]


def execute(nb, timeout=TIMEOUT_S):
    """Run ``nb`` in a fresh python3 kernel in the notebook directory; raises on any error."""
    _, nbclient, _ = _require()
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    client = nbclient.NotebookClient(
        nb, timeout=timeout, kernel_name="python3", record_timing=False,
        resources={"metadata": {"path": str(HERE)}},
    )
    client.execute()
    return nb


def images(nb):
    """The PNG outputs of an executed notebook, as (cell index, base64 text) pairs."""
    return [(i, out["data"]["image/png"])
            for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for out in cell.get("outputs", ())
            if "image/png" in out.get("data", {})]


def write_readme_figures(nb):
    """Write the first PNG of every ``# readme-figure: NAME`` cell to docs/figures/NAME.png."""
    first_png = {}
    for i, data in images(nb):
        first_png.setdefault(i, data)
    written = []
    for i, cell in enumerate(nb.cells):
        match = _FIGURE_TAG.search(cell.source) if cell.cell_type == "code" else None
        if match and i in first_png:
            FIGURES.mkdir(parents=True, exist_ok=True)
            target = FIGURES / f"{match.group(1)}.png"
            target.write_bytes(base64.b64decode(first_png[i]))
            written.append(target)
    return written


def build(path):
    """Execute one source and store its notebook next to the sources' directory."""
    _, _, nbformat = _require()
    nb = execute(notebook_from_source(path))
    target = HERE / f"{path.stem}.ipynb"
    nbformat.write(nb, target)
    return target, len(images(nb)), write_readme_figures(nb)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    for path in sources(argv):
        target, n_images, figures = build(path)
        extra = "".join(f", {f.relative_to(HERE.parent)}" for f in figures)
        print(f"{target.relative_to(HERE.parent)}: {n_images} figure(s){extra}")


if __name__ == "__main__":
    main()
