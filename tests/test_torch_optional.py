"""torch is optional: without it the README's test command skips what needs torch, saying
so, instead of failing.

CI installs torch, so these run pytest in a child process where torch cannot be imported
(``sys.modules["torch"] = None``: ``import torch`` raises ModuleNotFoundError and
``importlib.util.find_spec("torch")`` answers None, as where it is not installed), without
``SOFTFLOAT_REQUIRE_TORCH``.  The whole suite is collected there -- softfloat.torch's
doctests and the tests' torch helpers import torch on import -- and the tests that find
out at run time that they need torch (a notebook that imports it, a page that names
softfloat.torch) are run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: runs pytest with the arguments given, torch made unimportable first
_WITHOUT_TORCH = "import sys; sys.modules['torch'] = None; import pytest; sys.exit(pytest.main(sys.argv[1:]))"


def pytest_without_torch(*args: str) -> subprocess.CompletedProcess:
    """pytest ``args`` (in one process, no cache) in a child where torch is missing."""
    env = {k: v for k, v in os.environ.items()
           if k != "SOFTFLOAT_REQUIRE_TORCH" and not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    return subprocess.run([sys.executable, "-c", _WITHOUT_TORCH, "-n", "0", "-p", "no:cacheprovider",
                           "-p", "no:randomly", *args], cwd=ROOT, env=env, capture_output=True, text=True)


def test_the_suite_collects_without_torch():
    child = pytest_without_torch("--collect-only", "-q")
    assert child.returncode == 0, child.stdout[-4000:] + child.stderr[-2000:]
    assert "softfloat/torch's doctests: torch is not installed" in child.stdout
    assert "softfloat/__init__.py::softfloat." in child.stdout  # the other doctests are collected
    skipped = {line.split()[2].split(":")[0] for line in child.stdout.splitlines()
               if line.startswith("SKIPPED") and "torch is not installed" in line}
    torch_tests = {f"tests/{p.name}" for p in (ROOT / "tests").glob("test_torch*.py")} - {"tests/" + Path(__file__).name}
    assert torch_tests and torch_tests <= skipped, sorted(torch_tests - skipped)  # saying how to install it


def test_tests_that_need_torch_at_run_time_skip_without_it():
    child = pytest_without_torch("tests/test_architecture_doc.py", "tests/test_notebooks.py",
                                 "-k", "architecture_doc or 06_pytorch_models")
    assert child.returncode == 0, child.stdout[-4000:] + child.stderr[-2000:]
    summary = child.stdout.strip().splitlines()[-1]
    assert "failed" not in summary and "error" not in summary, summary
    assert "passed" in summary and "skipped" in summary, summary
    assert "torch is not installed" in child.stdout
