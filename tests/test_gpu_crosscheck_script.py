"""The GPU cross-check script (tools/gpu_crosscheck.py) as a dry run on the CPU: torch CPU
stands in for the GPU, so every softfloat-side part runs (inputs, reference models in the
worker pool, comparisons, sweeps, the report) and the CUDA-only parts say "skipped".  The
one real GPU run is the lead's; this keeps the script working in between."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.conftest import import_torch

SCRIPT = Path(__file__).resolve().parent.parent / "tools" / "gpu_crosscheck.py"


def load_script():
    spec = importlib.util.spec_from_file_location("gpu_crosscheck", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # the worker pool pickles its functions by module name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    import_torch()
    script = load_script()
    out = tmp_path_factory.mktemp("crosscheck")
    report = script.main(["--device", "cpu", "--quick", "--budget", "1e6", "--out", str(out), "--workers", "2"])
    return report, out


def checks(report, section):
    return report["sections"][section]["checks"]


def test_writes_the_json_and_the_summary(dry_run):
    report, out = dry_run
    assert json.loads((out / "crosscheck.json").read_text())["sections"].keys() == {"conversions", "matmul", "nan"}
    text = (out / "crosscheck.txt").read_text()
    assert "== conversions: ok" in text and "== matmul: ok" in text and "== nan: ok" in text


def test_every_section_ran_without_errors(dry_run):
    report, _ = dry_run
    for name, section in report["sections"].items():
        assert section["status"] == "ok", (name, section.get("error"))
        errors = [c for c in section["checks"] if c.get("status") == "error" or c.get("errors")]
        assert not errors, errors
    skipped = [c for c in checks(report, "matmul") if c.get("status") == "skipped"]
    assert [c["reason"] for c in skipped] == ["no CUDA"]   # the mma kernels, nothing for lack of time


def test_torch_cpu_conversions_agree_with_softfloat(dry_run):
    # torch's CPU fp32 -> fp16 rounds to nearest even as sf.encode does: an oracle for the
    # conversion section's plumbing (stratified and boundary inputs alike)
    report, _ = dry_run
    by_name = {c["name"]: c for c in checks(report, "conversions")}
    fp16 = by_name["fp32 -> fp16 (torch .to vs sf.encode)"]
    assert fp16["share"] == 1.0 and fp16["boundary_inputs"] > 1000
    bf16 = by_name["fp32 -> bf16 (torch .to vs sf.encode)"]
    assert bf16.get("share_ignoring_nan_payloads", bf16["share"]) == 1.0
    assert by_name["bf16 -> fp32 (every pattern)"]["total"] == 1 << 16


def test_matmul_cases_are_compared_and_swept(dry_run):
    report, _ = dry_run
    recs = checks(report, "matmul")
    cases = [c for c in recs if "paths" in c]
    kinds = {c["kind"] for c in cases}
    assert {"normal", "alignment", "cancellation adjacent", "cancellation far", "carries", "subnormals",
            "ragged K", "long K", "split-k probe"} <= kinds
    fp8 = [c for c in cases if c["fmt"] == "fp8_e4m3"]
    assert fp8 and all(len(c["paths"]) == 2 for c in fp8)   # _scaled_mm with and without fast accumulation
    assert all(m["total"] > 0 for c in cases for models in c["paths"].values() for m in models.values())
    assert [c for c in recs if c["name"].endswith("overall (all cases)")]
    sweeps = [c for c in recs if c["name"].startswith("sweep ")]
    assert sweeps and all(s["models_tried"] > 0 for s in sweeps)


def test_nan_section_covers_the_four_formats(dry_run):
    report, _ = dry_run
    names = {c["name"] for c in checks(report, "nan")}
    for fmt in ("fp32", "fp64", "fp16", "bf16"):
        assert {f"{fmt} {op}" for op in ("add", "sub", "mul", "div", "sqrt")} <= names
