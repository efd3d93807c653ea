"""The shape of the code a new engineer reads: private functions take few parameters
(related ones travel as one value, such as RoundingAttributes or a spec), and no module
grows past 600 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "softfloat"
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_PARAMETERS = 8
MAX_LINES = 600
_NUMPY_NAMES = set(dir(np)) | set(dir(np.ndarray))


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    return [n for n in names if n not in ("self", "cls")]


def _mirrors_numpy(fn) -> bool:
    """An implementation of a numpy function keeps numpy's signature (exempt)."""
    for deco in fn.decorator_list:
        text = ast.unparse(deco)
        if "implements" in text or text.startswith("np.") or "numpy" in text:
            return True
    return fn.name.lstrip("_") in _NUMPY_NAMES


def _all_of(package: Path) -> set[str]:
    """The ``__all__`` list of the package's ``__init__.py``, read without importing it (so
    softfloat.torch is scanned where torch is missing)."""
    for node in ast.parse((package / "__init__.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))  # ValueError: keep __all__ a literal list
    return set()


def _published(path: Path) -> set[str]:
    """Names the module's package publishes (a public function defined in a private module)."""
    return _all_of(PACKAGE) | (_all_of(path.parent) if path.parent != PACKAGE else set())


def _private_functions():
    for path in MODULES:
        module_private = any(part.startswith("_") and part != "__init__.py"
                             for part in path.relative_to(PACKAGE).parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if node.name.startswith("__") and node.name.endswith("__"):
                continue
            private = node.name.startswith("_") or (module_private and node.name not in _published(path))
            if private and not _mirrors_numpy(node):
                yield path.relative_to(PACKAGE.parent), node


def test_the_scan_sees_private_functions():
    names = {node.name for _, node in _private_functions()}
    assert {"round_pack", "encode_block", "resolve_attributes"} <= names


def test_private_functions_take_at_most_eight_parameters():
    wide = [f"{path}:{node.lineno} {node.name}({len(_parameters(node))})"
            for path, node in _private_functions() if len(_parameters(node)) > MAX_PARAMETERS]
    assert not wide, "fold related parameters into one value:\n" + "\n".join(wide)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_stay_small(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines < MAX_LINES, f"{path.name} has {lines} lines: split it by job"
