"""Checkpoints never lose data: OUT is written atomically (a full disk, a permission, a
Ctrl-C leave no partial file and an existing OUT untouched), OUT is never IN, every
refusal comes before anything is read or written; plus progress, the per-tensor table,
.pt output and softfloat.quantize_checkpoint / load_checkpoint.

Every failure case asserts the command's contract: exit 2, one stderr line starting
``softfloat: error:`` that names OUT, no file left behind, and the input's bytes
unchanged.  The disk-full cases are real: the command runs in a subprocess under
RLIMIT_FSIZE (with SIGXFSZ ignored, so writes fail with EFBIG).  Oracles: softfloat's
own quantize/encode of the whole tensor, ml_dtypes' casts, torch.load.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from tests.conftest import import_torch

import softfloat as sf
from softfloat import _checkpoint, _checkpoint_write, cli
from softfloat.cli import main

REPO = Path(__file__).resolve().parent.parent


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_refused(code, out, err, *words):
    assert code == 2 and out == "", (code, out, err)
    assert err.startswith("softfloat: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for w in words:
        assert w in err, (w, err)


def snapshot(directory: Path) -> dict:
    """name -> bytes of every file in directory: nothing new, nothing changed."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def sample(n, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * 2.0 ** rng.integers(-6, 4, n)).astype(dtype)


@pytest.fixture
def files(tmp_path):
    """A .npy array and an .npz checkpoint (with an integer tensor), and a .safetensors one."""
    np.save(tmp_path / "w.npy", sample(1000, 0))
    np.savez(tmp_path / "w.npz", a=sample(1000, 1), b=sample(300, 2, np.float64), steps=np.arange(5))
    from safetensors.numpy import save_file  # the test extra

    save_file({"a": sample(1000, 3), "n": np.arange(4, dtype=np.int32)}, str(tmp_path / "w.safetensors"))
    return tmp_path


# =====================================================================================
# OUT is never IN: by file identity, for every kind, before reading
# =====================================================================================
@pytest.mark.parametrize("name, fmt", [("w.npy", "bf16"), ("w.npz", "bf16"), ("w.safetensors", "e4m3")])
@pytest.mark.parametrize("how", ["same", "symlink", "hardlink", "dotted"])
def test_out_that_is_in_is_refused_for_every_kind(capsys, files, name, fmt, how):
    src = files / name
    dst = {"same": src, "symlink": files / ("link" + src.suffix), "hardlink": files / ("hard" + src.suffix),
           "dotted": files / "." / name}[how]
    if how == "symlink":
        dst.symlink_to(src.name)
    if how == "hardlink":
        os.link(src, dst)
    before = snapshot(files)
    assert_refused(*run(capsys, "quantize", src, dst, "-f", fmt), "is IN itself", str(dst))
    assert snapshot(files) == before


def test_a_symlink_as_in_to_its_target_as_out_is_refused(capsys, files):
    (files / "alias.npz").symlink_to("w.npz")
    before = snapshot(files)
    assert_refused(*run(capsys, "quantize", files / "alias.npz", files / "w.npz", "-f", "bf16"), "is IN itself")
    assert snapshot(files) == before


# =====================================================================================
# a failed write leaves nothing new: disk full for real, not-a-directory, permission
# =====================================================================================
def _limited(args, limit):
    """Run the command in a subprocess whose files may not grow past ``limit`` bytes."""
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes fail with EFBIG, no kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "softfloat", *map(str, args)], capture_output=True,
                          text=True, preexec_fn=preexec, cwd=REPO, env=env, timeout=300)


@pytest.mark.parametrize("src, out, fmt", [
    ("w.npy", "o.npy", "bf16"),       # values as float32: 4 kB over the limit
    ("w.npz", "o.npz", "bf16"),
    ("w.npz", "o.safetensors", "bf16"),
    ("w.safetensors", "o.npz", "fp16"),
    ("w.npz", "o.pt", "fp16"),
])
@pytest.mark.parametrize("existing", [False, True])
def test_disk_full_leaves_no_partial_file_and_an_old_out_untouched(files, src, out, fmt, existing):
    if out.endswith(".pt"):
        import_torch()
    dst = files / out
    if existing:
        dst.write_bytes(b"the previous OUT")
    before = snapshot(files)
    result = _limited(["quantize", files / src, dst, "-f", fmt], limit=1500)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("softfloat: error: "), result.stderr
    assert f"cannot write OUT {str(dst)!r}" in lines[0] and "File too large" in lines[0]
    assert snapshot(files) == before  # no partial OUT, no temporary file, IN unchanged


def test_disk_full_for_the_report_keeps_no_partial_report(files):
    report = files / "r.json"
    np.savez(files / "many.npz", **{f"t{i}": np.float32([i, 0.1]) for i in range(20)})
    # the checkpoint itself fits (20 tensors of 2 bytes: about 1.5 kB); the report (20 rows
    # of JSON, about 7 kB) does not
    result = _limited(["quantize", files / "many.npz", files / "o.safetensors", "-f", "e4m3",
                       "--report", report], limit=3000)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert f"cannot write --report {str(report)!r}" in result.stderr
    assert not report.exists()
    assert not [p for p in files.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("out", ["o.npy", "o.npz", "o.safetensors", "o.pt"])
def test_out_under_a_file_is_one_line_naming_out(capsys, files, out):
    src = files / ("w.npy" if out == "o.npy" else "w.npz")
    if out == "o.pt":
        import_torch()
    (files / "file").write_text("not a directory")
    dst = files / "file" / out
    before = snapshot(files)
    assert_refused(*run(capsys, "quantize", src, dst, "-f", "bf16"), f"cannot write OUT {str(dst)!r}",
                   "is no directory")
    assert snapshot(files) == before


@pytest.mark.parametrize("out", ["o.npy", "o.npz", "o.safetensors"])
def test_a_permission_failure_midway_names_out_and_leaves_the_old_out(capsys, files, monkeypatch, out):
    # tests run as root, where a read-only directory does not stop a write: make the
    # file's writes fail as a quota or a revoked permission would, after some bytes
    src = files / ("w.npy" if out == "o.npy" else "w.npz")
    dst = files / out
    dst.write_bytes(b"old")
    real_fdopen = os.fdopen

    class Failing:
        def __init__(self, fh):
            self.fh, self.n = fh, 0

        def write(self, data):
            self.n += 1
            if self.n > 1:  # the first write (a header) goes through
                raise PermissionError(13, "Permission denied")
            return self.fh.write(data)

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    monkeypatch.setattr(_checkpoint_write.os, "fdopen", lambda *a, **k: Failing(real_fdopen(*a, **k)))
    before = snapshot(files)
    assert_refused(*run(capsys, "quantize", src, dst, "-f", "bf16"), f"cannot write OUT {str(dst)!r}",
                   "Permission denied")
    assert snapshot(files) == before


def test_keyboard_interrupt_leaves_nothing_new(files, monkeypatch):
    dst = files / "o.safetensors"
    dst.write_bytes(b"old")
    real = _checkpoint._quantize_one
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(_checkpoint, "_quantize_one", interrupted)
    before = snapshot(files)
    with pytest.raises(KeyboardInterrupt):
        sf.quantize_checkpoint(files / "w.npz", dst, "bf16")
    assert snapshot(files) == before


def test_atomic_output_under_a_file_names_the_path(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError, match=r"cannot write OUT '.*/file/o\.npz': Not a directory"):
        with _checkpoint_write.atomic_output(tmp_path / "file" / "o.npz"):
            raise AssertionError("unreachable: the temporary file cannot be made")
    assert snapshot(tmp_path) == {"file": b"x"}


def test_atomic_output_keeps_the_umask_mode(tmp_path):
    old = os.umask(0o022)
    try:
        with _checkpoint_write.atomic_output(tmp_path / "a.bin") as fh:
            fh.write(b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "a.bin").stat().st_mode & 0o777 == 0o644


# =====================================================================================
# kinds: OUT's extension decides, refusals before reading
# =====================================================================================
@pytest.mark.parametrize("src, out, words", [
    ("w.npy", "o.npz", "OUT must end in .npy"),
    ("w.npy", "o.safetensors", "OUT must end in .npy"),
    ("w.npy", "o.pt", "OUT must end in .npy"),
    ("w.npy", "o.bf16", "unknown kind"),
    ("w.npz", "o.npy", "must end in .npz or .safetensors"),
    ("w.npz", "o.bin", "must end in .npz or .safetensors"),
    ("w.safetensors", "o", "must end in .npz or .safetensors"),
])
def test_out_kind_comes_from_its_extension(capsys, files, src, out, words):
    before = snapshot(files)
    assert_refused(*run(capsys, "quantize", files / src, files / out, "-f", "bf16"), words)
    assert snapshot(files) == before


@pytest.mark.parametrize("fmt", ["bf16", "fp16", "tf32", "e6m9"])
def test_tensor_scaling_into_wide_formats_is_refused(capsys, files, fmt):
    before = snapshot(files)
    assert_refused(*run(capsys, "quantize", files / "w.npz", files / "o.npz", "-f", fmt, "--scaling", "tensor"),
                   "is for formats of 8 bits or fewer", "Transformer Engine scales only FP8",
                   "drop --scaling tensor")
    assert snapshot(files) == before


@pytest.mark.parametrize("argv", [
    ["quantize", "{d}/w.npy", "{d}/o.npy", "-f", "bf16", "-r", "stochastic", "--seed", "-1"],
    ["quantize", "{d}/w.npz", "{d}/o.npz", "-f", "bf16", "-r", "stochastic", "--seed", "-1"],
    ["explain", "0.1", "-r", "stochastic", "--seed", "-1"],
    ["train", "--seed", "-1", "--epochs", "0"],
])
def test_negative_seed_names_the_option(capsys, files, argv):
    before = snapshot(files)
    assert_refused(*run(capsys, *[a.format(d=files) for a in argv]), "--seed must be an integer >= 0", "-1")
    assert snapshot(files) == before


def test_python_api_refuses_a_negative_seed(files):
    with pytest.raises(ValueError, match=r"^rng must be a numpy.random.Generator, an int seed >= 0 or None; got -1$"):
        sf.quantize_checkpoint(files / "w.npz", files / "o.npz", "bf16", rounding="stochastic", rng=-1)
    assert not (files / "o.npz").exists()


@pytest.mark.parametrize("out, reserved", [("o.safetensors", "__metadata__"), ("o.pt", "__softfloat__")])
def test_reserved_tensor_names_are_refused_before_writing(capsys, tmp_path, out, reserved):
    if out.endswith(".pt"):
        import_torch()
    np.savez(tmp_path / "m.npz", **{reserved: np.ones(3, np.float32), "w": np.ones(2, np.float32)})
    (tmp_path / out).write_bytes(b"old")
    before = snapshot(tmp_path)
    assert_refused(*run(capsys, "quantize", tmp_path / "m.npz", tmp_path / out, "-f", "bf16"),
                   repr(reserved), "rename the tensor")
    assert snapshot(tmp_path) == before


def test_bits_npz_refuses_a_member_named_like_its_metadata(capsys, tmp_path):
    np.savez(tmp_path / "m.npz", __softfloat__=np.ones(3, np.float32))
    assert_refused(*run(capsys, "quantize", tmp_path / "m.npz", tmp_path / "o.npz", "-f", "fp6_e2m3", "--bits"),
                   "'__softfloat__'")
    assert not (tmp_path / "o.npz").exists()


# =====================================================================================
# missing optional dependencies: one line naming the extra
# =====================================================================================
def test_plot_without_matplotlib_names_the_plot_extra(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert_refused(*run(capsys, "train", "--epochs", "0", "--plot", tmp_path / "p.png"),
                   'pip install "softfloat-emu[plot]"')
    assert not (tmp_path / "p.png").exists()


def test_pt_without_torch_names_the_torch_extra(capsys, files, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    before = snapshot(files)
    assert_refused(*run(capsys, "quantize", files / "w.npz", files / "o.pt", "-f", "bf16"),
                   'pip install "softfloat-emu[torch]"')
    assert snapshot(files) == before


def test_any_import_error_is_one_line(capsys, monkeypatch):
    def missing(args):
        raise ModuleNotFoundError("No module named 'sklearn'", name="sklearn")

    monkeypatch.setattr(cli, "_run_formats", missing)
    assert_refused(*run(capsys, "formats"), "sklearn", 'pip install "softfloat-emu[lab]"')


# =====================================================================================
# progress: one mechanism, on a terminal only
# =====================================================================================
def test_progress_callback_once_per_tensor_with_its_bytes(files):
    calls = []
    rows = sf.quantize_checkpoint(files / "w.npz", files / "o.npz", "bf16",
                                  progress=lambda *a: calls.append(a))
    total = 1000 * 4 + 300 * 8 + 5 * 8
    assert calls == [("a", 4000, total), ("b", 2400, total), ("steps", 40, total)]
    assert [r["name"] for r in rows] == ["a", "b", "steps"]


def test_plain_progress_lines_without_tqdm_on_a_terminal(capsys, files, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr(cli, "_is_terminal", lambda stream: True)
    code, out, err = run(capsys, "quantize", files / "w.npz", files / "o.npz", "-f", "bf16")
    assert code == 0
    lines = err.splitlines()
    assert len(lines) == 3 and lines[0].startswith("quantize: a ") and lines[-1].endswith("(100%)"), err
    code, _, err = run(capsys, "quantize", files / "w.npz", files / "o2.npz", "-f", "bf16", "--no-progress")
    assert code == 0 and err == ""


def test_tqdm_progress_on_a_terminal(capsys, files, monkeypatch):
    pytest.importorskip("tqdm", reason="tqdm is in the lab extra")
    monkeypatch.setattr(cli, "_is_terminal", lambda stream: True)
    code, _, err = run(capsys, "quantize", files / "w.npz", files / "o.npz", "-f", "bf16")
    assert code == 0 and "quantize:" in err and "B/s" in err  # a tqdm bar in bytes (removed at the end)


def test_no_progress_when_stderr_is_not_a_terminal(capsys, files):
    code, _, err = run(capsys, "quantize", files / "w.npz", files / "o.npz", "-f", "bf16")
    assert code == 0 and err == ""


def test_train_uses_the_same_progress(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr(cli, "_is_terminal", lambda stream: True)
    code, _, err = run(capsys, "train", "--epochs", "0", "--policy", "fp32")
    assert code == 0 and err.splitlines() == ['training fp32 (pip install "softfloat-emu[lab]" for a progress bar)']
    code, _, err = run(capsys, "train", "--epochs", "0", "--policy", "fp32", "--no-progress")
    assert code == 0 and err == ""


# =====================================================================================
# the table does not hide what went wrong
# =====================================================================================
def test_overflow_is_not_shown_beside_a_clean_error(capsys, tmp_path):
    np.savez(tmp_path / "w.npz", big=np.float32([1e5, 2e5, 1.0]), ok=np.float32([0.1, 0.2, 0.3]))
    code, out, _ = run(capsys, "quantize", tmp_path / "w.npz", tmp_path / "o.npz", "-f", "e4m3")
    assert code == 0
    head, big, ok = out.splitlines()[1:4]
    assert "mean rel err" in head and "left out" in head
    assert "66.67%" in big and big.split()[-4:] == ["0*", "0*", "inf*", "2"]
    want = sf.error_stats(np.float32([0.1, 0.2, 0.3]), sf.encode(np.float32([0.1, 0.2, 0.3]), "e4m3"), "e4m3")
    assert f"{want.mean_rel:.3g}" in ok and "*" not in ok
    assert out.splitlines()[-1].startswith("* over the finite elements only")


def test_a_reader_note_is_shown_for_kept_tensors(capsys, files, monkeypatch):
    real = _checkpoint.open_tensors

    def with_note(path, label="IN"):
        checkpoint = real(path, label)
        for t in checkpoint.tensors:
            if t.fmt is None:
                t.note = "int64 step counter"
        return checkpoint

    monkeypatch.setattr(_checkpoint, "open_tensors", with_note)
    code, out, _ = run(capsys, "quantize", files / "w.npz", files / "o.npz", "-f", "bf16",
                       "--report", files / "r.json")
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("steps"))
    assert "kept" in line and line.endswith("int64 step counter")
    assert json.loads((files / "r.json").read_text())["tensors"][2]["note"] == "int64 step counter"


# =====================================================================================
# the Python API: quantize_checkpoint and load_checkpoint
# =====================================================================================
def test_quantize_checkpoint_rows_are_the_cli_report(capsys, files):
    rows = sf.quantize_checkpoint(files / "w.npz", files / "a.npz", "e4m3", rounding="toward_zero")
    assert run(capsys, "quantize", files / "w.npz", files / "b.npz", "-f", "e4m3", "-r", "toward_zero",
               "--report", files / "r.json")[0] == 0
    report = json.loads((files / "r.json").read_text())["tensors"]
    assert [{k: cli._json_number(v) for k, v in r.items()} for r in rows] == report
    assert (files / "a.npz").read_bytes() == (files / "b.npz").read_bytes()


@pytest.mark.parametrize("out", ["o.safetensors", "o.npz", "o.pt"])
@pytest.mark.parametrize("fmt", ["fp6_e2m3", "fp4_e2m1", "tf32", "e6m9", "bf16", "fp8_e5m2"])
def test_load_checkpoint_gives_the_values_back(files, out, fmt):
    if out.endswith(".pt"):
        import_torch()
    src = np.load(files / "w.npz")
    dst = files / out
    sf.quantize_checkpoint(files / "w.npz", dst, fmt, saturate=True, bits=out.endswith(".npz"))
    got = sf.load_checkpoint(dst)
    assert list(got) == ["a", "b", "steps"]
    for name in ("a", "b"):
        want = sf.quantize(src[name], fmt, saturate=True)
        np.testing.assert_array_equal(got[name], want)
        assert got[name].dtype in (np.float32, np.float64)
    np.testing.assert_array_equal(got["steps"], np.arange(5))


def test_load_checkpoint_of_safetensors_input_and_scales(files):
    dst = files / "o.safetensors"
    rows = sf.quantize_checkpoint(files / "w.safetensors", dst, "e4m3", scaling="tensor")
    got = sf.load_checkpoint(dst)
    x = sf.load_checkpoint(files / "w.safetensors")["a"]
    assert got["a_scale"] == np.float32(rows[0]["scale"])
    np.testing.assert_array_equal(got["a"], sf.quantize(x.astype(np.float64) * got["a_scale"], "e4m3"))
    assert got["n"].dtype == np.int32


# =====================================================================================
# torch .pt output
# =====================================================================================
def test_pt_output_has_torch_dtypes_or_listed_bit_patterns(capsys, files):
    torch = import_torch()
    src = np.load(files / "w.npz")
    for fmt, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("e4m3", torch.float8_e4m3fn),
                       ("fp8_e5m2", torch.float8_e5m2), ("fp8_e4m3fnuz", torch.float8_e4m3fnuz),
                       ("fp32", torch.float32)):
        dst = files / f"{fmt}.pt"
        assert run(capsys, "quantize", files / "w.npz", dst, "-f", fmt)[0] == 0
        state = torch.load(dst, weights_only=True)
        assert state["a"].dtype == dtype and state["b"].dtype == dtype
        assert torch.equal(state["steps"], torch.arange(5))
        want = sf.encode(src["a"], fmt)
        np.testing.assert_array_equal(sf.bits_of(state["a"])[0], want)
        assert "softfloat.bit_patterns" not in state["__softfloat__"]
    for fmt, dtype in (("fp6_e3m2", torch.uint8), ("e6m9", torch.int16), ("tf32", torch.int32)):
        dst = files / f"{fmt}.pth"
        assert run(capsys, "quantize", files / "w.npz", dst, "-f", fmt)[0] == 0
        state = torch.load(dst, weights_only=True)
        meta = state["__softfloat__"]
        assert meta["softfloat.format"] == sf.as_format(fmt).name
        assert json.loads(meta["softfloat.bit_patterns"]) == ["a", "b"]
        assert state["a"].dtype == dtype
        bits = state["a"].numpy().view(sf.as_format(fmt).storage_dtype)
        np.testing.assert_array_equal(bits, sf.encode(src["a"], fmt))


def test_pt_output_from_safetensors_with_scales(capsys, files):
    torch = import_torch()
    dst = files / "o.pt"
    assert run(capsys, "quantize", files / "w.safetensors", dst, "-f", "e4m3", "--scaling", "tensor")[0] == 0
    state = torch.load(dst, weights_only=True)
    assert state["a"].dtype == torch.float8_e4m3fn and state["a_scale"].dtype == torch.float32
    assert state["n"].dtype == torch.int32 and torch.equal(state["n"], torch.arange(4, dtype=torch.int32))
    x = sf.load_checkpoint(files / "w.safetensors")["a"].astype(np.float64)
    s = float(state["a_scale"])
    np.testing.assert_array_equal(sf.bits_of(state["a"])[0], sf.encode(x * s, "e4m3"))
    # the values agree with ml_dtypes' own cast of the (exact) products
    np.testing.assert_array_equal(state["a"].float().numpy(),
                                  (x * s).astype(np.float32).astype(ml_dtypes.float8_e4m3fn).astype(np.float32))


def test_pt_input_to_every_output(capsys, tmp_path):
    torch = import_torch()
    x = sample(200, 9)
    torch.save({"w": torch.from_numpy(x).to(torch.bfloat16), "step": torch.tensor([3])}, tmp_path / "m.pt")
    before = snapshot(tmp_path)
    bf = sf.quantize(x, "bf16")
    for out in ("o.pt", "o.safetensors", "o.npz"):
        assert run(capsys, "quantize", tmp_path / "m.pt", tmp_path / out, "-f", "fp6_e3m2", "--saturate")[0] == 0
        got = sf.load_checkpoint(tmp_path / out)
        np.testing.assert_array_equal(got["w"], sf.quantize(bf, "fp6_e3m2", saturate=True))
        np.testing.assert_array_equal(got["step"], [3])
    assert {k: v for k, v in snapshot(tmp_path).items() if k in before} == before


def test_report_under_a_file_names_the_report(capsys, files):
    (files / "file").write_text("x")
    report = files / "file" / "r.json"
    before = snapshot(files)
    assert_refused(*run(capsys, "quantize", files / "w.npz", files / "o.npz", "-f", "bf16", "--report", report),
                   f"cannot write --report {str(report)!r}", "no directory")
    assert snapshot(files) == before  # refused before any work: no OUT either


@pytest.mark.parametrize("which", ["w.npz", "o.npz"])
def test_report_that_is_in_or_out_is_refused(capsys, files, which):
    before = snapshot(files)
    assert_refused(*run(capsys, "quantize", files / "w.npz", files / "o.npz", "-f", "bf16",
                        "--report", files / which), "--report", "give the report another name")
    assert snapshot(files) == before


def test_pt_input_non_tensor_values_reach_every_output(capsys, tmp_path):
    """A .pt state dict's epoch counter and the like are not tensors: they travel as
    metadata (JSON text by dotted name), never dropped."""
    torch = import_torch()
    from safetensors import safe_open

    state = {"model": {"w": torch.from_numpy(sample(64, 3))}, "epoch": 3, "opt": {"lr": 0.5}}
    torch.save(state, tmp_path / "m.pt")
    for out in ("o.pt", "o.safetensors", "o.npz"):
        assert run(capsys, "quantize", tmp_path / "m.pt", tmp_path / out, "-f", "bf16", "--no-progress")[0] == 0
        if out == "o.pt":
            meta = torch.load(tmp_path / out, weights_only=True)["__softfloat__"]
        elif out == "o.safetensors":
            with safe_open(str(tmp_path / out), "np") as fh:
                meta = fh.metadata()
        else:
            with np.load(tmp_path / out) as archive:
                meta = json.loads(str(archive["__softfloat__"][()]))
        assert json.loads(meta["epoch"]) == 3 and json.loads(meta["opt"]) == {"lr": 0.5}, (out, meta)
        assert meta["softfloat.format"] == "bf16"
        np.testing.assert_array_equal(sf.load_checkpoint(tmp_path / out)["model.w"],
                                      sf.quantize(sample(64, 3), "bf16"))


def test_quantize_checkpoint_takes_attributes(files):
    """attributes= gives the file the keywords give; a keyword that is given wins."""
    keywords = sf.quantize_checkpoint(files / "w.npz", files / "k.safetensors", "e4m3", rounding="toward_zero",
                                      saturate=True)
    attrs = sf.RoundingAttributes(rounding="toward_zero", saturate=True)
    as_one = sf.quantize_checkpoint(files / "w.npz", files / "a.safetensors", "e4m3", attributes=attrs)
    overridden = sf.quantize_checkpoint(files / "w.npz", files / "o.safetensors", "e4m3",
                                        attributes=attrs.replace(rounding="upward"), rounding="toward_zero")
    assert json.dumps(keywords) == json.dumps(as_one) == json.dumps(overridden)
    data = (files / "k.safetensors").read_bytes()
    assert (files / "a.safetensors").read_bytes() == data == (files / "o.safetensors").read_bytes()
    with pytest.raises(TypeError, match="attributes must be a softfloat.RoundingAttributes"):
        sf.quantize_checkpoint(files / "w.npz", files / "x.npz", "e4m3", attributes="toward_zero")


def test_load_checkpoint_reads_pt_through_the_checkpoint_reader(tmp_path):
    """.pt files are read by the one torch reader (softfloat._read_torch): a nested state
    dict gives dotted names, non-tensor values are left out, and the arrays are copies."""
    torch = import_torch()
    w = sample(50, 4)
    torch.save({"model": {"w": torch.from_numpy(w).to(torch.bfloat16)}, "epoch": 3, "n": torch.arange(3)},
               tmp_path / "m.pt")
    got = sf.load_checkpoint(tmp_path / "m.pt")
    assert list(got) == ["model.w", "n"]
    np.testing.assert_array_equal(got["model.w"], w.astype(ml_dtypes.bfloat16).astype(np.float32))
    assert got["n"].dtype == np.int64 and got["n"].tolist() == [0, 1, 2]
    got["n"][0] = 7  # a writable copy, not a view of the file
    assert sf.load_checkpoint(tmp_path / "m.pt")["n"].tolist() == [0, 1, 2]
    torch.save(torch.ones(2), tmp_path / "bare.pt")
    with pytest.raises(ValueError, match="one bare tensor"):
        sf.load_checkpoint(tmp_path / "bare.pt")
