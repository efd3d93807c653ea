"""Issue 25's device check (tools/gpu_device_check.py) as a dry run on the CPU: CPU tensors
stand in for the GPU, so every section runs end to end at small sizes -- matmul_bits,
scaled_encode_tensor and the compiled quantisation kernels against the numpy reference,
and emulate with its device route forced onto CPU tensors against the numpy engine --
and the report must say that every comparison is identical.  The one real GPU run is
the lead's; this keeps the script working in between (about 20 s: a few seconds of
comparisons and four torch.compile builds of the quantisation kernels, by inductor where
a C++ compiler is found, else by dynamo's "eager" backend)."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.conftest import import_torch

import softfloat as sf

SCRIPT = Path(__file__).resolve().parent.parent / "tools" / "gpu_device_check.py"
SECTIONS = ["matmul", "accumulate_compiled", "speed", "scaled", "emulate", "compiled"]

# inductor's first import meets torch's own deprecations, which the suite's "error" filter
# would turn into failures (the script records the warnings of each section)
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")


def load_script(name="gpu_device_check"):
    spec = importlib.util.spec_from_file_location(name, SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@functools.lru_cache(maxsize=None)
def _backend():
    """inductor where it finds a C++ compiler to build its CPU kernels, else "eager"."""
    from tests.torch_checks import cpp_compiler
    return "eager" if cpp_compiler() is None else "inductor"


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    import_torch()
    script = load_script()
    out = tmp_path_factory.mktemp("devcheck")
    # --quick bounds the work; the time budget (for the GPU run) must not skip checks on a
    # loaded machine
    report = script.main(["--device", "cpu", "--quick", "--budget", "1e6", "--out", str(out),
                          "--backend", _backend()])
    return script, report, out


def checks(report, section):
    return report["sections"][section]["checks"]


def test_writes_the_json_and_the_text(dry_run):
    _, report, out = dry_run
    saved = json.loads((out / "gpu_device_check.json").read_text())
    assert list(saved["sections"]) == SECTIONS
    assert saved["complete"] is True        # written after each section with False, then this
    text = (out / "gpu_device_check.txt").read_text()
    for name in SECTIONS:
        assert f"== {name}: ok" in text
    assert "== overall: ok" in text
    assert report["exit_code"] == 0


def test_every_section_ran_every_check(dry_run):
    _, report, _ = dry_run
    for name in SECTIONS:
        section = report["sections"][name]
        assert section["status"] == "ok", (name, section.get("error"))
        bad = [c for c in section["checks"] if c["status"] != "ok"]
        assert not bad, bad[:3]
        assert section["checks"], name


def test_every_comparison_is_identical(dry_run):
    _, report, _ = dry_run
    compared = [c for name in SECTIONS for c in checks(report, name) if "share" in c]
    assert len(compared) == 277 + 102 + 33 + 21 + 4  # matmul (32 of them other orders and 16-bit accumulators,
    #          27 infinities and NaNs, 24 fp32 x fp32), accumulate_compiled (47 by compiled tiles, 55 by compiled
    #          fused steps), scaled, emulate (12 of them every recipe, one with the operands' encode compiled, two
    #          with the accumulation compiled, two with elementwise=True), compiled
    assert all(c["share"] == 1.0 for c in compared)
    assert all(c["identical"] == c["total"] for c in compared if isinstance(c["identical"], int))


def test_matmul_covers_the_grid_on_the_torch_path(dry_run):
    script, report, _ = dry_run
    recs = checks(report, "matmul")
    small = {(c["fmt"], c["b_format"], c["accumulator"], c["block"], c["kind"]) for c in recs
             if c["sample"] is None and c["shape"] == [6, 160, 10]}
    for fmt, b_format in script.PAIRS:
        for acc in script.ACCUMULATORS:
            for block in script.BLOCKS:
                for kind in script.KINDS:
                    assert (fmt, b_format or fmt, acc, block, kind) in small
    assert sum(c["sample"] is not None for c in recs) == len(script.PAIRS) * 3 * 2 * 2
    assert len([c for c in recs if c["name"].endswith("whole")]) == 2
    for c in recs:  # the swamped counts compared too, and not all zero
        assert c["swamped_identical"] == c["total"] and c["identical_counted"] == c["total"]
        assert not c["fell_back"], c["name"]  # every case on the torch path
    assert sum(c["swamped_total"] for c in recs) > 0


def test_accumulate_compiled_runs_every_case_on_the_compiled_kernels(dry_run):
    script, report, _ = dry_run
    recs = checks(report, "accumulate_compiled")
    tiled = [c for c in recs if c["name"].endswith("compiled tiles")]  # subnormal fp32 products among them
    assert len(tiled) == 47 and all(c["compiled_calls"] > 0 and not c["compile_failures"] for c in tiled)
    assert {c["kind"] for c in tiled if c["fmt"] == "bf16"} == set(script.TILE_KINDS[True])
    steps = [c for c in recs if c["name"].endswith("compiled steps")]
    assert len(steps) == 55 and all(c["compiled_calls"] > 0 and not c["compile_failures"] for c in steps)
    assert {c["accumulator"] for c in steps} == {"h100", "h100-mma"}
    assert len(recs) == 102 and not any(c["fell_back"] for c in recs)
    assert all(c["swamped_identical"] == c["total"] for c in recs)


def test_speed_reports_rates_beside_torch_and_the_reference(dry_run):
    _, report, _ = dry_run
    recs = checks(report, "speed")
    timed = [c for c in recs if c["name"].startswith("matmul_bits")]
    assert len(timed) == 16 and all(c["fell_back"] == 0 and c["gmacs"] > 0 for c in timed)
    assert {(c["fmt"], c["accumulator"], c["swamped"]) for c in timed} == {
        ("bf16", "fp32", False), ("bf16", "fp32", True), ("fp8_e4m3", "h100", False), ("fp8_e4m3", "h100", True)}
    tiled = [c for c in timed if c["name"].endswith("compiled tiles")]
    assert len(tiled) == 4 and all(c["compiled_calls"] > 0 and c["accumulator"] == "fp32" for c in tiled)
    steps = [c for c in timed if c["name"].endswith("compiled steps")]
    assert len(steps) == 4 and all(c["compiled_calls"] > 0 and c["accumulator"] == "h100" for c in steps)
    assert {c["target_gmacs"] for c in timed} == {50.0, 10.0}
    assert len([c for c in recs if c["name"].startswith("torch.mm")]) == 2
    assert len([c for c in recs if c["name"].startswith("host reference")]) == 2


def test_scaled_covers_every_scaling_and_times_them(dry_run):
    script, report, _ = dry_run
    recs = checks(report, "scaled")
    names = {c["name"] for c in recs}
    for fmt in script.SCALED_FORMATS:
        for label, _ in script.SCALINGS:
            assert f"{fmt} {label} float32" in names
    compared = [c for c in recs if "total" in c]
    assert len(compared) == 3 * 7 + 6 + 6
    for c in compared:
        assert c["scales_identical"] and c["scale_inv_identical"] and c["amax_identical"], c["name"]
        assert set(c["flags_identical"].values()) == {c["total"]}, c["name"]
    timed = [c for c in recs if "ratio_to_copy" in c]
    assert len(timed) == 13 and {c["mode"] for c in timed} == {"nearest_even", "stochastic", "toward_zero"}


def test_emulate_runs_its_products_on_the_device_route(dry_run):
    _, report, _ = dry_run
    recs = [c for c in checks(report, "emulate") if "recipe" in c]
    timed = [c for c in recs if "ratio_to_plain" in c]
    assert {(c["recipe"], c["accumulator"], c["telemetry"]) for c in timed} == {
        ("bf16", "fp32", False), ("bf16", "fp32", True), ("fp8", "h100", False), ("fp8", "h100", True)}
    assert sum("compiled operand encode" in c["name"] for c in timed) == 1
    for c in timed:
        assert c["telemetry_identical"] and c["fell_back"] == 0 and c["compile_failures"] == {}
        assert c["device_products"] >= 3 and c["ratio_to_plain"] > 0   # forward, dgrad, wgrad
    every = [c for c in recs if "ratio_to_plain" not in c and not c.get("elementwise")]
    assert {c["recipe"] for c in every} == set(sf.recipes.RECIPES)
    for c in every:  # the whole product on the device
        assert c["telemetry_identical"] and c["device_products"] >= 3
        assert c["fell_back"] == 0  # "fp32"'s rounded products and the fp16 recipes' infinities too
    elementwise = [c for c in recs if c.get("elementwise")]
    assert [c["recipe"] for c in elementwise] == ["fp16", "bf16-pure"]
    assert all(c["status"] == "ok" and c["fell_back"] == 0 and c["device_products"] > 0 for c in elementwise)


def test_compiled_kernels_equal_eager_and_numpy(dry_run):
    _, report, _ = dry_run
    recs = [c for c in checks(report, "compiled") if "mode" in c]
    assert {(c["fmt"], c["mode"]) for c in recs} == {
        ("bf16", "nearest_even"), ("bf16", "stochastic"), ("fp8_e4m3", "nearest_even"), ("fp8_e4m3", "stochastic")}
    for c in recs:
        assert c["compile_failures"] == {} and c["compiled_vs_eager"] == c["total"]
        assert c["eager_identical"] == c["public_identical"] == c["total"]
    assert checks(report, "compiled")[-1]["compile_failures"] == {}


def test_a_wrong_bit_and_a_failing_section_are_reported(tmp_path, monkeypatch):
    # the comparisons are not vacuous, and one section's failure keeps the others
    import_torch()
    script = load_script("gpu_device_check_broken")
    real = script.matmul_bits

    def off_by_one(*args, **kwargs):
        got = real(*args, **kwargs)
        bits = got[0] if isinstance(got, tuple) else got
        bits ^= 1
        return got

    def broken(*args, **kwargs):
        raise RuntimeError("no kernel")
    monkeypatch.setattr(script, "matmul_bits", off_by_one)
    monkeypatch.setattr(script, "scaled_encode_tensor", broken)
    monkeypatch.setattr(script, "KINDS", ["random"])
    report = script.main(["--device", "cpu", "--quick", "--budget", "1e6", "--out", str(tmp_path),
                          "--sections", "matmul,scaled,emulate"])
    assert report["exit_code"] == 1
    matmul = report["sections"]["matmul"]
    assert matmul["status"] == "differ"
    assert all(c["status"] == "differ" and c["share"] < 1 and "first_difference" in c for c in matmul["checks"])
    scaled = report["sections"]["scaled"]
    assert scaled["status"] == "error" and "no kernel" in scaled["checks"][0]["error"]
    assert report["sections"]["emulate"]["status"] == "ok"
    assert "== overall: NOT OK" in (tmp_path / "gpu_device_check.txt").read_text()


def test_without_cuda_it_says_so(tmp_path):
    torch = import_torch()
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    report = load_script("gpu_device_check_no_cuda").main(["--out", str(tmp_path)])
    assert report["exit_code"] == 2
