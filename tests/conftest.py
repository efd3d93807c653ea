"""Shared test set-up: hypothesis profiles, the slow-sweep switch, the worker processes and
the optional torch.

``--runslow`` runs every slow sweep in full; without it, tests marked ``slow`` are
skipped and the oracle sweeps check a deterministic slice (every ``oracle_stride``-th
case, 1 in :data:`ORACLE_STRIDE`, with an offset that varies per test and per mode so the
slices together cover the space; ``SOFTFLOAT_ORACLE_STRIDE=2`` checks a thicker one).

Time budget: ``python -m pytest`` (no arguments) must finish within 10 minutes on a quiet
2-core machine with torch installed, as CI runs it (7 minutes now; 5 without torch).
It spreads the tests over every core with pytest-xdist (``-n auto``, the notebooks' tests
in one worker, which runs each notebook once); ``-n 0`` or
``-p no:xdist`` runs them in this process, for debugging, ``-n 4`` on four workers.  To
check the budget after adding tests, run ``python -m pytest --durations=30``: a test that
takes seconds belongs behind ``@pytest.mark.slow`` (with a sliced version that CI runs) or
should check a deterministic slice of its sweep through ``oracle_stride``.

torch is not in the test extra (pip would fetch its CUDA build, gigabytes); the tests and
doctests that need it skip with the install command when it is missing (the ``torch``
fixture or :func:`import_torch` for tests and test modules, :func:`needs_torch` for the
doctests, :class:`_WithoutTorch` for the modules that import torch on import;
tests/test_torch_optional.py checks it).  With ``SOFTFLOAT_REQUIRE_TORCH=1`` in the
environment (CI sets it) they fail instead of skipping.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from pathlib import Path

#: one BLAS/OpenMP thread per test process, set before numpy or torch is imported (here, in
#: pytest-xdist's workers, which inherit it, and in the subprocesses tests start): the
#: workers already take every core, and a multithreaded OpenBLAS on an oversubscribed core
#: spins -- a 16,384-element np.vdot in softfloat's bf16 shortcut took 600 us instead of
#: 7 us, a third of the suite's time.  A value already in the environment is kept.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402  (after the thread settings)
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "ci", derandomize=True, max_examples=200, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: the CI slice of the oracle sweeps: every ORACLE_STRIDE-th case (the oracles -- MPFR,
#: Fractions -- are Python per case and dominate the suite's time)
ORACLE_STRIDE = 8

#: why a test that needs torch skipped, and how to install it (the CPU build is ~200 MB;
#: pip's default torch wheel pulls several GB of CUDA libraries)
TORCH_MISSING = ('torch is not installed: pip install -e ".[torch]" (or first its CPU build: '
                 "pip install torch --index-url https://download.pytorch.org/whl/cpu)")


#: the modules that import torch on import: softfloat's torch front end (a package of
#: doctests) and the tests' helpers ``tests/torch_*.py`` (no tests of their own)
_TORCH_PACKAGE = Path(__file__).resolve().parent.parent / "softfloat" / "torch"
_TESTS = Path(__file__).resolve().parent


class _WithoutTorch:
    """Collection where torch is missing (a plugin that :func:`pytest_configure` registers
    then): softfloat.torch's doctests are one skip that says how to install torch, instead
    of an import error per module; the tests' torch helpers are not imported."""

    @pytest.hookimpl(wrapper=True)
    def pytest_collect_directory(self, path, parent):
        collector = yield
        return _TorchMissing.from_parent(parent, path=path) if path == _TORCH_PACKAGE else collector

    def pytest_ignore_collect(self, collection_path):
        if collection_path.parent == _TESTS and collection_path.name.startswith("torch_"):
            return True
        return None


class _TorchMissing(pytest.Directory):
    """softfloat/torch without torch: collecting it skips, with the install command."""

    def collect(self):
        pytest.skip(f"softfloat/torch's doctests: {TORCH_MISSING}")


def pytest_configure(config):
    if not _torch_installed() and not _torch_required():
        config.pluginmanager.register(_WithoutTorch(), "softfloat-without-torch")


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="run the slow exhaustive sweeps in full")


#: test files whose tests share state computed once per process (test_notebooks.py runs
#: each notebook once): pytest-xdist sends all their tests to one worker
ONE_WORKER_FILES = frozenset({"tests/test_notebooks.py", "tests/test_gpu_device_check_script.py",
                              "tests/test_gpu_crosscheck_script.py"})
_SCHEDULE = pytest.StashKey[bool]()


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """``-n auto`` unless the command line says otherwise, scheduled by
    :func:`pytest_xdist_make_scheduler`.

    Runs before pytest-xdist's own hook, which turns "auto" into the number of cores.  Not
    in xdist's workers (PYTEST_XDIST_WORKER), not with ``-p no:xdist`` (no such option),
    ``-n N`` (kept), ``--pdb`` or ``--collect-only``."""
    option = config.option
    if not hasattr(option, "numprocesses") or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if option.numprocesses is None and not option.collectonly and not option.usepdb:
        option.numprocesses = "auto"
    if option.numprocesses and option.dist == "no" and not option.distload:
        option.dist = "loadscope"
        config.stash[_SCHEDULE] = True


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Each test to the next free worker, except that the tests of one of
    :data:`ONE_WORKER_FILES` all go to one.  (pytest-xdist's own xdist_group marks need
    node ids it can rename, which pytest 9.2 no longer allows.)  Only where
    :func:`pytest_cmdline_main` chose the distribution; ``--dist load`` etc. are xdist's."""
    if not config.stash.get(_SCHEDULE, False):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            path = nodeid.split("::", 1)[0]
            return path if path in ONE_WORKER_FILES else nodeid

    return Scheduling(config, log)


def needs_torch(source: str) -> bool:
    """Whether Python ``source`` uses torch: the name ``torch`` (``import torch``,
    ``torch.tensor(...)``) or ``to_torch``, outside strings (``as_format("torch.float16")``
    reads a name and needs no torch)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return bool(re.search(r"\b(?:import torch|to_torch)\b", source))
    return any(t.type == tokenize.NAME and t.string in ("torch", "to_torch") for t in tokens)


def _torch_required() -> bool:
    return os.environ.get("SOFTFLOAT_REQUIRE_TORCH", "") not in ("", "0")


def _torch_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def pytest_collection_modifyitems(config, items):
    if not _torch_installed() and not _torch_required():  # softfloat's doctests that use torch
        from _pytest.doctest import DoctestItem

        skip_torch = pytest.mark.skip(reason=TORCH_MISSING)
        for item in items:
            if isinstance(item, DoctestItem) and any(needs_torch(e.source) for e in item.dtest.examples):
                item.add_marker(skip_torch)
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow sweep: run with --runslow (CI runs the sliced versions)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def oracle_stride(request) -> int:
    """1 with --runslow (check everything), else the stride of the CI slice."""
    if request.config.getoption("--runslow"):
        return 1
    return int(os.environ.get("SOFTFLOAT_ORACLE_STRIDE", ORACLE_STRIDE))


def import_torch():
    """The torch module, for a test, a fixture or a test module (``torch = import_torch()``
    at its top): where torch is missing, a skip that says how to install it, or, with
    SOFTFLOAT_REQUIRE_TORCH=1, the ImportError (a failure, not a skip)."""
    __tracebackhide__ = True  # the skip is reported at its caller's line
    if _torch_required():
        import torch

        return torch
    return pytest.importorskip("torch", reason=TORCH_MISSING)


@pytest.fixture
def torch():
    """The torch module (:func:`import_torch`)."""
    return import_torch()
