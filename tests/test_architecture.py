"""The shape of the house: one-way imports, no optional dependency at import time, and
the numpy behaviour the kernels rely on."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "softfloat"

#: a module may import only modules of a lower rank
RANK = {
    "_validate": 0, "_format_names": 0, "_version": 0, "_frames": 0, "_fpenv": 0, "_random": 0, "_scratch": 0, "_workspace": 0.5,
    "formats": 1, "rounding": 1, "flags": 1, "_exact": 1,
    "platforms": 1.2, "attributes": 1.4,
    "_flagmasks": 1.5,
    "_round": 2, "_context": 2, "interop": 2, "_dask": 2, "_fastpaths": 2,
    "_encode": 3, "_options": 3,
    "_decode": 4, "_blocks": 4, "npy": 4, "_codec_blocks": 4.5,
    "codec": 5,
    "testing": 6, "ops": 6, "report": 6,
    "explain": 7, "strategies": 7, "accumulate": 7, "scaled": 7, "_checkpoint": 7.5,
    "_checkpoint_source": 1.5, "_read_numpy": 2, "_read_safetensors": 2, "_read_torch": 2,
    "_checkpoint_read": 2.5, "_checkpoint_write": 0,
    "checkpoint": 7.6,
    "recipes": 7.8,
    "_array_libm": 7.85, "_array_exact_lanes": 7.87, "_array_elementwise": 7.9, "_array_keywords": 7.93,
    "_array_ufunc_methods": 7.95,
    "_array_ufuncs": 8,
    "_array_registry": 8.1, "_array_coverage": 8.2, "_array_structural": 8.4, "_array_ordering": 8.5,
    "_array_statistics": 8.6, "_array_chains": 8.65, "_array_arithmetic": 8.7, "_array_linalg": 8.8, "_array_polynomial": 8.8,
    "_array_einsum": 8.8, "_array_values": 8.8,
    "_array_functions": 9,
    "_array_methods": 9.5,
    "array": 10,
    "training": 10.5,
    "torch": 10.8,
    "cli": 11,
    "__init__": 12,
    "__main__": 13,
}


def _internal_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                names.add(node.module.split(".")[0])
            else:
                names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("softfloat"):
            parts = node.module.split(".")
            if len(parts) > 1:
                names.add(parts[1])
    return names


MODULES = sorted(p.stem for p in PACKAGE.glob("*.py"))
#: inside softfloat/ops/: a kernel's vocabulary, NaNs, signs and operands; the error-free
#: transformations and the significand form; the hand-off to the rounding point; the block
#: driver; one module per operation family; the published API (kernels: what the layers
#: above compose and round, see test_layers_above_use_published_names)
OPS_RANK = {"_kernel": 0, "_nan": 0, "_signs": 0, "_operands": 0,
            "_eft": 1, "_significands": 1, "_round_block": 2, "_native": 2, "_torch16": 2, "_driver": 3,
            "add": 4, "mul": 4, "div": 4, "sqrt": 4, "fma": 4, "convert": 4, "compare": 4, "sign": 4,
            "kernels": 5, "__init__": 5}


def test_every_module_has_a_rank():
    assert set(MODULES) <= set(RANK), f"give these modules a rank: {set(MODULES) - set(RANK)}"


@pytest.mark.parametrize("module", MODULES)
def test_imports_point_downward(module):
    for dep in _internal_imports(PACKAGE / f"{module}.py"):
        assert RANK[dep] < RANK[module], f"softfloat.{module} (rank {RANK[module]}) imports {dep} (rank {RANK[dep]})"


def test_import_softfloat_loads_no_optional_dependency():
    code = ("import sys, softfloat; "
            "bad = [m for m in ('hypothesis', 'gmpy2', 'ml_dtypes', 'pytest', 'torch', 'jax', "
            "'safetensors', 'sklearn', 'tqdm', 'matplotlib', 'pandas', 'dask', 'distributed', "
            "'nbclient', 'nbformat', 'ipykernel', 'jupytext', 'scipy') "
            "if m in sys.modules]; "
            "print(', '.join(bad)); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_numpy_defines_oversized_unsigned_shifts_as_zero(dtype):
    # The nearest and toward-zero kernels skip clamping shift counts because numpy
    # defines v >> s and v << s as 0 for s >= the bit width (see _round.round_pack).
    width = np.dtype(dtype).itemsize * 8
    v = np.full(4, np.iinfo(dtype).max, dtype=dtype)
    s = np.array([width, width + 1, 2 * width, 1000], dtype=dtype)
    assert not np.any(v >> s)
    assert not np.any(v << s)


#: inside softfloat/accumulate/: data and helpers, the two arithmetics, the orders, the API
ACCUMULATE_RANK = {"hardware": 0, "_draws": 0, "_operands": 0, "_binade": 0, "_spec": 1, "_ieee": 1, "_odd_stochastic": 1.2, "_fast": 1.3,
                   "_orders": 2, "_fused": 2, "reduce": 3, "__init__": 4, "_scalar_chain": 0.5,
                   "_fused_fast": 1, "_fused_maxima": 1.5, "_few": 1.5, "_odd": 0.5}
#: inside softfloat/training/: numerics and data, the policy's engine, model and optimizer,
#: the runs, the package
TRAINING_RANK = {"policy": 0, "loss_scaling": 0, "data": 0, "telemetry": 0, "plot": 0, "_numerics": 0,
                 "_fp8": 1, "memory": 1, "_engine": 2, "model": 3, "optim": 3, "run": 4, "__init__": 5}
#: inside softfloat/explain/: text and the parser, the rounding story, the exact arithmetic,
#: one value, one operation, the entry point, the package
EXPLAIN_RANK = {"_text": 0, "_parse": 0, "_story": 1, "_arithmetic": 2, "_value": 2, "_operation": 3,
                "_explain": 4, "__init__": 5}
#: inside softfloat/_fastpaths/: the shared word passes, the kernels, the table cache, the
#: plan cache, the switch and entry points
FASTPATHS_RANK = {"_scalar": 0, "_chain": 0.5, "_float16": 0.5, "_value_grid": 0, "_bfloat16": 0, "_float32": 0.5, "_words": 0, "_decoding": 1, "_truncate": 1, "_upper": 1,
                  "_rebias": 2, "_table": 2, "_table_cache": 3, "_odd32": 3, "_plan": 4, "_directed16": 4.5, "_native16": 5,
                  "__init__": 6}
#: inside softfloat/strategies/: the pattern space, field draws and the formats strategy;
#: the values() arguments, around=target and bits()' classes; the plan; the draws; the
#: public strategies; the package
STRATEGIES_RANK = {"_order": 0, "_magnitudes": 0, "_formats": 0, "_bounds": 1, "_around": 1, "_classes": 1,
                   "_plan": 2, "_draws": 3, "_values": 4, "_arrays": 4, "__init__": 5}
#: inside softfloat/scaled/: fp32 and the layout; the arguments, scales and products; the
#: tensor and delayed scaling; scaled_encode/scaled_decode; the package
SCALED_RANK = {"_fp32": 0, "_layout": 0, "_arguments": 1, "_scales": 1, "_products": 1, "_tensor": 2,
               "_delayed": 2, "_codec": 3, "__init__": 4}
#: inside softfloat/recipes/: the recipes and the records; the products; the package
RECIPES_RANK = {"_recipe": 0, "_record": 0, "kernels": 0.5, "_gemm": 1, "__init__": 2}
#: inside softfloat/torch/: tensors, call sites and telemetry, the kernels' random bits;
#: their rounding point; the kernels; quantize and the products; the intercepted torch
#: functions; emulate; the package
TORCH_RANK = {"_tensors": 0, "_sites": 0, "_elementwise": 0, "_amp": 0, "_autocast": 0, "telemetry": 0, "_einsum": 0, "_kernels_random": 0, "_opaque": 0,
              "_scaled_units": 0.1, "_scaled_flags": 0.85, "_scaled": 0.95, "_accumulate_tables": 0.3, "_compiled": 0.05, "_accumulate_compiled": 0.35, "_accumulate_ieee": 0.4, "_accumulate_fused": 0.5, "_accumulate_narrow": 0.82, "_accumulate_pairwise": 0.83, "_accumulate": 0.84,
              "_engine_kernels": 0.97,
              "_kernels_round": 0.5, "_kernels": 0.8, "_kernels_compiled": 0.9, "_quantize": 1, "_products": 1, "_outer": 1.5,
              "_attention": 2, "_conv": 2, "_ops": 3, "_recurrent": 3, "_emulate": 4, "__init__": 5}
SUBPACKAGE_RANK = {"ops": OPS_RANK, "accumulate": ACCUMULATE_RANK, "training": TRAINING_RANK,
                   "explain": EXPLAIN_RANK, "_fastpaths": FASTPATHS_RANK,
                   "strategies": STRATEGIES_RANK, "scaled": SCALED_RANK, "recipes": RECIPES_RANK,
                   "torch": TORCH_RANK}


@pytest.mark.parametrize("package, module", [(pkg, p.stem) for pkg in SUBPACKAGE_RANK
                                             for p in sorted((PACKAGE / pkg).glob("*.py"))])
def test_subpackage_modules_point_downward(package, module):
    # ops: one module per family over the shared private modules; accumulate: as ranked
    ranks = SUBPACKAGE_RANK[package]
    assert module in ranks, f"give softfloat/{package}/{module}.py a rank"
    tree = ast.parse((PACKAGE / package / f"{module}.py").read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 1:
            deps = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
            for dep in deps:
                assert ranks[dep] < ranks[module], f"{package}/{module} imports {package}/{dep}"
        if node.level == 2:  # from ..module import x, or from .. import module
            deps = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
            for dep in deps:
                assert RANK[dep] < RANK[package], f"{package}/{module} imports softfloat.{dep}"


#: subpackages whose private parts are their own: every module outside one (the package's
#: and benchmarks/; tests may test private parts) imports from it only public modules
#: and names in their ``__all__`` -- the layers above call the published API
SEALED = ("ops", "accumulate", "recipes")
#: public names a package leaves out of its __all__ so that ``import *`` does not shadow a
#: builtin (softfloat.ops.abs: IEEE's name)
UNSTARRED = {"softfloat.ops": {"abs"}}


def _imports_of(path: Path):
    """(absolute module, imported names or None for ``import module``) for every import
    statement of ``path``, function-level ones included."""
    package = list(path.relative_to(PACKAGE.parent).parts[:-1])
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from ((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            yield module, [alias.name for alias in node.names]


def _is_public_submodule(module, name: str) -> bool:
    return (not name.startswith("_") and hasattr(module, "__path__")
            and importlib.util.find_spec(f"{module.__name__}.{name}") is not None)


@pytest.mark.parametrize("sealed", SEALED)
def test_layers_above_use_published_names(sealed):
    top = f"softfloat.{sealed}"
    files = [p for p in sorted(PACKAGE.rglob("*.py")) if PACKAGE / sealed not in p.parents]
    files += sorted((PACKAGE.parent / "benchmarks").glob("*.py"))
    bad = []
    for path in files:
        where = path.relative_to(PACKAGE.parent)
        imported_whole = False  # softfloat.<sealed> bound to a name: check its attributes
        for module, names in _imports_of(path):
            if module == "softfloat" and names and sealed in names:
                imported_whole = True
            if module != top and not module.startswith(top + "."):
                continue
            private = [part for part in module.split(".") if part.startswith("_")]
            if private:
                bad.append(f"{where} imports the private module {module}")
                continue
            mod = importlib.import_module(module)
            published = set(getattr(mod, "__all__", ())) | UNSTARRED.get(module, set())
            bad += [f"{where} imports {name} from {module}, not in its __all__"
                    for name in names or () if name not in published and not _is_public_submodule(mod, name)]
        if imported_whole:
            bad += [f"{where} reads {sealed}.{node.attr}" for node in ast.walk(ast.parse(path.read_text()))
                    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == sealed and node.attr.startswith("_") and not node.attr.startswith("__")]
    assert not bad, "\n".join(bad)


def test_every_subpackage_is_shipped():
    # a non-editable install ships only the packages pyproject.toml names
    import fnmatch

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = [".".join(p.relative_to(PACKAGE.parent).parts[:-1]) for p in PACKAGE.rglob("__init__.py")]
    for package in packages:
        assert any(fnmatch.fnmatch(package, pattern) for pattern in include), package


def test_the_test_extra_is_lean_and_torch_is_its_own_extra():
    # pip resolves "torch" to its CUDA build (several GB of nvidia-* wheels): the README's
    # test command must not pull it; the tests that need torch skip without it
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    extras = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {name: {re.split(r"[\[<>=!~ ;]", req, maxsplit=1)[0].lower() for req in reqs}
             for name, reqs in extras.items()}
    assert "torch" not in names["test"] and not any(n.startswith("nvidia") for n in names["test"])
    assert names["torch"] == {"torch"}
    assert "pytest-xdist" in names["test"]  # tests/conftest.py spreads the suite over the cores
