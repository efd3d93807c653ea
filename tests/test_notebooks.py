"""The teaching notebooks: stored executed and in sync with their sources, re-executed here
top to bottom without error, showing the figures each promises, and printing the key numbers
the library computes.

Each notebook's code runs once per test process, in this process (:func:`run_in_process`:
a kernel's start-up and messaging cost more than the smaller notebooks' work); pytest-xdist
runs all the tests of this file in one worker (ONE_WORKER_FILES in conftest.py).  A
fresh kernel (nbclient, as ``notebooks/build.py`` runs them) executes the first notebook
here and every notebook with ``--runslow``.
"""

import ast
import base64
import contextlib
import importlib.util
import io
import os
import re
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import import_torch, needs_torch

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("notebook_build", ROOT / "notebooks" / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

SOURCES = build.sources()
NAMES = [p.stem for p in SOURCES]

# The figures (PNG outputs) each notebook must at least show; see issue "teaching notebooks".
MIN_FIGURES = {
    "01_ieee754_anatomy": 3,
    "02_rounding": 2,
    "03_underflow_and_loss_scaling": 4,
    "04_swamping_and_accumulation": 3,
    "05_mixed_precision_training": 4,
    "06_pytorch_models": 4,
}

NB01 = "01_ieee754_anatomy"

_executed = {}
#: softfloat.training.run's reports in this process, by (policy, arguments)
_lab_runs = {}


def executed(name):
    """The notebook ``name`` built from its source and executed once per test process."""
    if name not in _executed:
        _executed[name] = run_in_process(build.notebook_from_source(build.SOURCES / f"{name}.py"), name)
    return _executed[name]


def run_in_process(nb, name):
    """Execute the code cells of ``nb`` top to bottom in one fresh namespace, in this process,
    in the notebook directory, and record their outputs as IPython's kernel with matplotlib's
    inline backend does: what they print, the value of a last expression (``text/plain``, by
    IPython's pretty printer, unless ``None`` or the line ends in ``;``), and every figure
    shown by ``plt.show()`` or left open at the end of a cell, as a (low-resolution) PNG.
    The training runs it starts are kept for the tests (:func:`_lab_run`).  numpy's error
    state, matplotlib's rcParams and the working directory are restored afterwards;
    warnings are errors, as everywhere in the tests (the stored notebooks show none)."""
    import matplotlib
    import matplotlib.pyplot as plt
    import numpy
    from IPython.lib.pretty import pretty
    from nbformat.v4 import new_output

    outputs, stdout = [], io.StringIO()

    def flush_stdout():
        if stdout.getvalue():
            outputs.append(new_output("stream", name="stdout", text=stdout.getvalue()))
            stdout.seek(0)
            stdout.truncate()

    def show(*args, **kwargs):
        flush_stdout()
        for number in plt.get_fignums():
            figure = plt.figure(number)
            png = io.BytesIO()
            figure.savefig(png, format="png", dpi=30)  # drawn in full; few pixels: cheap
            outputs.append(new_output("display_data", data={
                "image/png": base64.b64encode(png.getvalue()).decode("ascii"), "text/plain": repr(figure)}))
        plt.close("all")

    namespace = {"__name__": "__main__"}
    cwd = os.getcwd()
    plt.switch_backend("agg")
    plt.close("all")
    real_show, plt.show = plt.show, show
    lab = importlib.import_module("softfloat.training.run")   # T.run, and compare's run
    package = importlib.import_module("softfloat.training")
    real_run = lab.run

    def shared_run(policy="O2", **kwargs):
        return _lab_run(policy, **kwargs)

    shared_run.__wrapped__ = real_run
    lab.run = package.run = shared_run
    try:
        os.chdir(build.HERE)
        with numpy.errstate(**numpy.geterr()), matplotlib.rc_context():
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                outputs.clear()
                tree = ast.parse(cell.source)
                last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
                try:
                    with contextlib.redirect_stdout(stdout):
                        exec(compile(tree, f"<{name} cell {index}>", "exec"), namespace)
                        value = None if last is None else \
                            eval(compile(ast.Expression(last.value), f"<{name} cell {index}>", "eval"), namespace)
                except Exception as exc:
                    raise AssertionError(f"notebooks/src/{name}.py: code cell {index} raised "
                                         f"{type(exc).__name__}: {exc}") from exc
                flush_stdout()
                if value is not None and not cell.source.rstrip().endswith(";"):
                    outputs.append(new_output("execute_result", data={"text/plain": pretty(value)},
                                              execution_count=index))
                show()
                cell.outputs = list(outputs)
    finally:
        plt.show = real_show
        lab.run = package.run = real_run
        plt.close("all")
        os.chdir(cwd)
    return nb


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


def needed(name):
    """Skip, saying how to install it, where notebook ``name`` uses torch and it is missing."""
    if needs_torch((build.SOURCES / f"{name}.py").read_text()):
        import_torch()


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_and_shows_its_figures(name):
    needed(name)
    nb = executed(name)
    assert len(build.images(nb)) >= MIN_FIGURES[name]


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n == NB01 else pytest.mark.slow) for n in NAMES])
def test_notebook_runs_in_a_fresh_kernel(name):
    """As notebooks/build.py runs them (nbclient, a fresh python3 kernel): the first,
    cheapest notebook always, every one with --runslow.  The kernel prints what the
    in-process run prints (which the other tests read), up to blank lines (a kernel sends
    a long cell's output in several messages)."""
    needed(name)
    nb = build.execute(build.notebook_from_source(build.SOURCES / f"{name}.py"))
    assert len(build.images(nb)) >= MIN_FIGURES[name]
    assert re.sub(r"\n+", "\n", printed(nb)) == re.sub(r"\n+", "\n", printed(executed(name)))


def test_01_the_seeds_worked_examples():
    text = printed(executed("01_ieee754_anatomy"))
    assert "0 01111110 11000000000000000000000" in text      # 0.875
    assert "0 10000001 10010111000010100011111" in text      # 6.36
    assert re.search(r"\b2048\.0\b", text)



def _line(text, pattern):
    """The match of ``pattern`` in the notebook's printed text (which must print it)."""
    match = re.search(pattern, text, re.MULTILINE)
    assert match, f"the notebook no longer prints a line matching {pattern!r}"
    return match


def test_01_format_table_matches_numpy_and_ml_dtypes():
    import ml_dtypes

    text = printed(executed("01_ieee754_anatomy"))
    finfo = {"fp32": np.finfo(np.float32), "fp16": np.finfo(np.float16),
             "bf16": ml_dtypes.finfo(ml_dtypes.bfloat16),
             "fp8_e4m3": ml_dtypes.finfo(ml_dtypes.float8_e4m3fn),
             "fp8_e5m2": ml_dtypes.finfo(ml_dtypes.float8_e5m2),
             "fp6_e3m2": ml_dtypes.finfo(ml_dtypes.float6_e3m2fn),
             "fp6_e2m3": ml_dtypes.finfo(ml_dtypes.float6_e2m3fn),
             "fp4_e2m1": ml_dtypes.finfo(ml_dtypes.float4_e2m1fn)}
    for name, info in finfo.items():
        row = _line(text, rf"^{name} +(\d+) +(\d+) +(\d+) +(\d+) +(\S+) +(\S+) +(\S+) +(\S+) ").groups()
        assert int(row[0]) == info.bits and int(row[2]) == info.nmant
        assert row[4] == f"{float(info.max):.6g}", name
        assert row[5] == f"{float(info.smallest_normal):.4g}", name
        assert row[6] == f"{float(info.smallest_subnormal):.4g}", name
        assert row[7] == f"{float(info.eps):.4g}", name
    # TF32 (no numpy or ml_dtypes type): FP32's exponent, 10 fraction bits
    tf32 = _line(text, r"^tf32 +19 +8 +10 +127 +(\S+) ").group(1)
    assert tf32 == f"{(2 - 2.0**-10) * 2.0**127:.6g}"


def test_01_every_fp8_value_counted():
    import ml_dtypes

    text = printed(executed("01_ieee754_anatomy"))
    for name, dtype in (("fp8_e4m3", ml_dtypes.float8_e4m3fn), ("fp8_e5m2", ml_dtypes.float8_e5m2)):
        values = np.arange(256, dtype=np.uint8).view(dtype).astype(np.float64)
        pos = values[np.isfinite(values) & (values > 0)]
        n_sub = int(np.sum(pos < float(ml_dtypes.finfo(dtype).smallest_normal)))
        per_binade = int(np.sum((pos >= 1) & (pos < 2)))
        _line(text, rf"^{name}: {pos.size} positive finite values, {n_sub} of them subnormal, "
                    rf"{per_binade} per binade, smallest {pos.min():g} = "
                    rf"2\^{int(np.log2(pos.min()))}, largest {pos.max():g}$")


def test_01_ulp_gaps_flat_ramp_and_cliff():
    import ml_dtypes

    text = printed(executed("01_ieee754_anatomy"))
    for name, dtype in (("fp32", np.float32), ("fp16", np.float16), ("bf16", ml_dtypes.bfloat16)):
        info = ml_dtypes.finfo(dtype) if name == "bf16" else np.finfo(dtype)
        top = dtype(info.max)
        last_gap = float(top) - float(np.nextafter(top, dtype(0)))
        row = _line(text, rf"^{name}: gap (\S+) \(= min subnormal \S+\) everywhere below min normal "
                          rf"\S+ \((\d+) distinct value\); gap (\S+) just below max finite (\S+)$")
        assert row.group(1) == f"{float(info.smallest_subnormal):.4g}"
        assert row.group(2) == "1"
        assert row.group(3) == f"{last_gap:.4g}" and row.group(4) == f"{float(info.max):.6g}"
    ratios = _line(text, r"bf16/fp32 = 2\^(\d+), bf16/fp16 = 2\^(\d+)$")
    eps = {n: float(ml_dtypes.finfo(t).eps) for n, t in
           (("fp32", np.float32), ("fp16", np.float16), ("bf16", ml_dtypes.bfloat16))}
    assert 2 ** int(ratios.group(1)) == eps["bf16"] / eps["fp32"]
    assert 2 ** int(ratios.group(2)) == eps["bf16"] / eps["fp16"]


def test_01_relative_error_below_unit_roundoff_and_fp16_counts_match_numpy():
    text = printed(executed("01_ieee754_anatomy"))
    for name in ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2"):
        worst, bound = _line(text, rf"^{name}: largest relative error in the normal range (\S+) "
                                   r"<= unit roundoff 2\^-\d+ = (\S+);").groups()
        assert float(worst) <= float(bound)
    # the notebook's FP16 sample redone with numpy's own float16 rounding
    xs = 2.0 ** np.random.default_rng(0).uniform(-30, 20, 20000)
    with np.errstate(over="ignore"):
        q = xs.astype(np.float16).astype(np.float64)
    finite = np.isfinite(q)
    rel = np.abs(q[finite] - xs[finite]) / xs[finite]
    worst = rel[xs[finite] >= 2.0**-14].max()
    _line(text, rf"^fp16: largest relative error in the normal range {worst:.4g} <= unit roundoff "
                rf"2\^-11 = {2.0**-11:.4g}; {(~finite).sum()} of 20000 overflowed, "
                rf"{(q == 0).sum()} became zero$")


def _round_mpfr(x, precision, rounding=None):
    """x (a float or an mpfr) rounded to ``precision`` significant bits by MPFR, with MPFR's
    exponent range (unbounded for these formats)."""
    import gmpy2

    ctx = gmpy2.context(precision=precision,
                        round=gmpy2.RoundToNearest if rounding is None else rounding)
    with ctx:
        return gmpy2.mpfr(gmpy2.mpq(x))


def test_02_modes_table_against_mpfr_and_binomial():
    import gmpy2
    from fractions import Fraction

    text = printed(executed("02_rounding"))
    inputs = [1 + f * 0.125 for f in (0.25, 0.5, 0.75)]
    header = _line(text, r"^mode +(.*)$").group(1).split()
    assert [float(h) for h in header] == inputs + [-x for x in inputs]
    mpfr_modes = {"nearest_even": gmpy2.RoundToNearest, "toward_zero": gmpy2.RoundToZero,
                  "upward": gmpy2.RoundUp, "downward": gmpy2.RoundDown}
    for mode, rnd in mpfr_modes.items():             # E4M3 has 4 significant bits
        row = _line(text, rf"^{mode} +(.*)$").group(1).split()
        assert [float(v) for v in row] == [float(_round_mpfr(x, 4, rnd)) for x in
                                           inputs + [-x for x in inputs]], mode

    def by_rule(x, pick):                            # between 1 and 1.125 in magnitude
        frac = (Fraction(abs(x)) - 1) / Fraction(1, 8)
        return float(np.sign(x) * (1.125 if pick(frac) else 1.0))
    away = _line(text, r"^nearest_away +(.*)$").group(1).split()
    assert [float(v) for v in away] == [by_rule(x, lambda f: f >= Fraction(1, 2))
                                        for x in inputs + [-x for x in inputs]]
    odd = _line(text, r"^odd +(.*)$").group(1).split()   # 1.125 = 1.001b: the odd neighbour
    assert [float(v) for v in odd] == [by_rule(x, lambda f: f != 0)
                                       for x in inputs + [-x for x in inputs]]
    shares = [float(v[2:]) for v in _line(text, r"^stochastic +(.*)$").group(1).split()]
    for share, p in zip(shares, [0.25, 0.5, 0.75] * 2):
        assert abs(share - p) < 4 * np.sqrt(p * (1 - p) / 10_000)


def test_02_ties_to_even_is_unbiased():
    text = printed(executed("02_rounding"))
    odd_integers = np.arange(2049, 4096, 2, dtype=np.float64)
    even_err = odd_integers.astype(np.float16).astype(np.float64) - odd_integers   # numpy: RNE
    _line(text, rf"^nearest_even: {odd_integers.size} ties, mean signed error "
                rf"{re.escape(format(even_err.mean(), '+.3f'))} ")
    _line(text, rf"^nearest_away: {odd_integers.size} ties, mean signed error \+1\.000 "
                r"\(errors seen \[1\.0\]\)")
    halves = [0.5, 1.5, 2.5, 3.5, -0.5, -2.5]
    _line(text, re.escape(f"-> {np.round(halves).tolist()}"))


def test_02_double_rounding_example_is_real_and_odd_fixes_it():
    import gmpy2

    import softfloat as sf

    text = printed(executed("02_rounding"))
    x = float.fromhex(_line(text, r"^double-rounding example: x = (\S+) ").group(1))
    direct = _round_mpfr(x, 8)                       # BF16: 8 significant bits, x in [1, 2)
    twice = _round_mpfr(_round_mpfr(x, 24), 8)       # through FP32's 24
    assert direct != twice
    # round to odd at 24 bits, done by hand on MPFR's truncation: set the last bit if inexact
    cut = _round_mpfr(x, 24, gmpy2.RoundToZero)
    ulp = gmpy2.mpfr(2) ** (gmpy2.get_exp(cut) - 24)
    odd = cut if cut == x or int(cut / ulp) % 2 else cut + ulp
    assert _round_mpfr(odd, 8) == direct
    bits = {name: int(v, 16) for name, v in re.findall(
        r"^  float64 -> (bf16 directly|fp32 -> bf16|fp32 \(odd\) -> bf16): +(0x[0-9a-f]+)",
        text, re.MULTILINE)}
    assert float(sf.decode(bits["bf16 directly"], "bf16")) == float(direct)
    assert float(sf.decode(bits["fp32 -> bf16"], "bf16")) == float(twice)
    assert float(sf.decode(bits["fp32 (odd) -> bf16"], "bf16")) == float(direct)
    assert sf.fp32.precision >= sf.bf16.precision + 2          # Boldo-Melquiond's condition
    counts = _line(text, r"^(\d+) of (\d+) values round differently through fp32; "
                         r"through fp32 with round-to-odd: (\d+) differ$").groups()
    assert int(counts[0]) > 0 and counts[2] == "0"
    match = re.search(r"float64 -> bfloat16 gives (0x[0-9a-f]+): (.*)$", text, re.MULTILINE)
    if match:                                        # ml_dtypes is in the test extra
        theirs = float(sf.decode(int(match.group(1), 16), "bf16"))
        expected = ("the double-rounded result" if theirs == float(twice)
                    else "the correctly rounded result" if theirs == float(direct) else "neither")
        assert match.group(2) == expected


def test_02_stochastic_mean_and_variance():
    from fractions import Fraction

    text = printed(executed("02_rounding"))
    x = 1.0 + 0.3 * 2.0**-7
    p = float((Fraction(x) - 1) / Fraction(1, 2**7))  # BF16 neighbours 1 and 1 + 2^-7
    n = 100_000
    share = float(_line(text, r"^share rounded up: (\S+) \(theory p = (\S+)\)$").group(1))
    assert _line(text, r"theory p = (\S+)\)").group(1) == f"{p:.5f}"
    assert abs(share - p) < 4 * np.sqrt(p * (1 - p) / n)
    z = float(_line(text, r"off by (\S+) standard errors$").group(1))
    assert z == pytest.approx((share - p) / np.sqrt(p * (1 - p) / n), abs=0.02)
    assert abs(z) < 4
    var, theory = _line(text, r"^empirical variance (\S+) ulp\^2, theory p\(1-p\) = (\S+) ulp\^2$").groups()
    assert float(var) == pytest.approx(share * (1 - share), abs=2e-5)   # a two-point law
    assert theory == f"{p * (1 - p):.5f}"
    _line(text, rf"^nearest_even gives 1.0 every time: a bias of {-p:+.3f} ulp$")


def test_02_flags_and_tininess_window():
    import gmpy2

    text = printed(executed("02_rounding"))
    for label, x in (("1.0", 1.0), ("0.1", 0.1), (r"1e-8 \(too small\)", 1e-8),
                     (r"2\^-24 \(exact subnormal\)", 2.0**-24), (r"70000 \(too large\)", 70000.0)):
        with np.errstate(over="ignore"):
            q = float(np.float16(x))
        inexact = q != x
        flags = (("overflow",) if np.isinf(q) else ()) + \
                (("underflow",) if abs(x) < 2.0**-14 and inexact else ()) + \
                (("inexact",) if inexact else ())
        _line(text, rf"^{label} +-> {q:<12.6g} flags {re.escape(repr(flags))}$")
    # tininess: before rounding every candidate (< 2^-14) is tiny; after rounding to 11 bits
    # with an unbounded exponent (MPFR's default range), only those still below 2^-14
    candidates = 2.0**-14 * (1 - np.arange(1, 2049) * 2.0**-18)
    not_tiny_after = [float(_round_mpfr(float(c), 11)) >= 2.0**-14 for c in candidates]
    _line(text, rf"^{sum(not_tiny_after)} of 2048 candidates below 2\^-14 disagree")
    x_t = float(candidates[np.flatnonzero(not_tiny_after)[-1]])
    _line(text, rf"^tininess=before: {x_t!r} -> 0x400 = {2.0**-14!r}, "
                r"flags \('underflow', 'inexact'\)$")
    _line(text, rf"^tininess=after : {x_t!r} -> 0x400 = {2.0**-14!r}, flags \('inexact',\)$")

NB04 = "04_swamping_and_accumulation"


def test_04_one_plus_half_an_ulp_is_lost():
    """1 + 2^-p == 1 and 1 + 2^-(p-1) > 1, as printed, against sf.add and numpy/ml_dtypes."""
    import ml_dtypes
    import numpy as np

    import softfloat as sf

    text = printed(executed(NB04))
    native = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16, "fp32": np.float32}
    rows = re.findall(r"^(fp16|bf16|fp32): p = +(\d+) +1 \+ 2\^-(\d+) = (\S+) +1 \+ 2\^-(\d+) = (\S+)$",
                      text, re.MULTILINE)
    assert sorted(r[0] for r in rows) == ["bf16", "fp16", "fp32"]
    for name, p, k_lost, lost, k_kept, kept in rows:
        fmt = sf.as_format(name)
        assert int(p) == fmt.precision == int(k_lost) == int(k_kept) + 1
        one, t = native[name](1.0), native[name]
        assert float(lost) == float(one + t(2.0 ** -int(k_lost))) == 1.0
        assert float(kept) == float(one + t(2.0 ** -int(k_kept))) > 1.0
        bits = sf.add(sf.encode(1.0, fmt), sf.encode(2.0 ** -fmt.precision, fmt), fmt)
        assert float(sf.decode(bits, fmt)) == 1.0
    assert "fp16: p = 11   1 + 2^-11 = 1.0" in text


def test_04_updates_vanish_between_2p_and_2p_plus_1():
    """The scan's thresholds are the octave [2^p, 2^(p+1)]; numpy's float16 agrees."""
    import numpy as np

    import softfloat as sf

    text = printed(executed(NB04))
    rows = re.findall(r"^(fp16|bf16|fp32) +(\d+) +2\^([\d.]+) +2\^([\d.]+) +2\^(\d+), 2\^(\d+)$",
                      text, re.MULTILINE)
    assert sorted(r[0] for r in rows) == ["bf16", "fp16", "fp32"]
    for name, p, first, every, lo, hi in rows:
        p = sf.as_format(name).precision
        assert abs(float(first) - p) <= 0.125 and abs(float(every) - (p + 1)) <= 0.125
        assert (int(lo), int(hi)) == (p, p + 1)
    # the oracle: numpy's (correctly rounded) float16 addition on its own weights
    w = (2.0 ** np.random.default_rng(5).uniform(-2, 2, 500)).astype(np.float16)
    assert not np.any(w + (w / np.float16(2.0 ** 10.9)).astype(np.float16) == w)
    assert np.all(w + (w / np.float16(2.0 ** 12.1)).astype(np.float16) == w)


def test_04_running_sum_stalls_at_2048_in_fp16():
    import ml_dtypes
    import numpy as np

    import softfloat as sf

    text = printed(executed(NB04))
    ones = np.full(4096, sf.encode(1.0, "fp16"))
    oracle = {"fp16": np.add.accumulate(np.ones(4096, np.float16))[-1],        # sequential
              "bf16": np.add.accumulate(np.ones(4096, ml_dtypes.bfloat16))[-1],
              "fp32": np.add.accumulate(np.ones(4096, np.float32))[-1]}
    assert float(oracle["fp16"]) == 2048.0 and float(oracle["fp32"]) == 4096.0
    for name in ("fp16", "bf16", "fp32"):
        m = re.search(rf"sum of 4096 ones, {name} accumulator: (\S+) +\(swamped additions: (\d+)\)", text)
        assert m, name
        bits, flags = sf.sum(ones, "fp16", accumulator=name, return_flags=True)
        assert float(m.group(1)) == float(sf.decode(bits, name)) == float(oracle[name])
        assert int(m.group(2)) == int(flags.swamped) == 4096 - int(oracle[name])
    m = re.search(r"last running sum: +fp16 (\S+) +bf16 (\S+) +fp32 (\S+)", text)
    assert [float(v) for v in m.groups()] == [2048.0, float(oracle["bf16"]), 4096.0]
    assert re.search(r"first step at which the fp16 sum stops growing: 2049\b", text)


def test_04_stochastic_rounding_centres_on_4096():
    import math

    import numpy as np

    import softfloat as sf

    text = printed(executed(NB04))
    ones = np.full(4096, sf.encode(1.0, "fp16"))
    m = re.search(r"one stochastic fp16 sum of 4096 ones \(rng=(\d+)\): (\S+)", text)
    seed = int(m.group(1))
    one = sf.sum(ones, "fp16", accumulator="fp16", rounding="stochastic", rng=seed)
    assert float(m.group(2)) == float(sf.decode(one, "fp16"))
    m = re.search(r"(\d+) stochastic fp16 sums \(rng=(\d+)\): mean ([\d.]+), std ([\d.]+)", text)
    runs, seed, mean, std = int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4))
    finals = sf.decode(sf.sum(np.broadcast_to(ones, (runs, 4096)), "fp16", axis=-1, accumulator="fp16",
                              rounding="stochastic", rng=seed), "fp16", dtype=np.float64)
    assert mean == round(finals.mean(), 2) and std == round(finals.std(ddof=1), 2)
    assert abs(mean - 4096) < 4 * std / math.sqrt(runs)        # unbiased: within 4 standard errors
    assert 0 < std < 4096 * 0.05 and finals.min() > 2048        # spread, but no stall
    ends = re.search(r"five stochastic running sums end at: \[(.*)\]", text).group(1)
    assert all(abs(float(v) - 4096) < 6 * std for v in ends.split(","))


def _dot_table(text):
    """The notebook's table: label -> errors per length, and the lengths."""
    lines = text[text.index("mean relative error over"):].splitlines()
    lengths = [int(v) for v in lines[1].split()[1:]]
    table = {}
    for line in lines[2:]:
        parts = re.match(r"^(.+?) +((?:\d\.\de[-+]\d\d +)*\d\.\de[-+]\d\d)$", line)
        if not parts:
            break
        table[parts.group(1)] = [float(v) for v in parts.group(2).split()]
    assert len(table) == 11 and all(len(v) == len(lengths) for v in table.values())
    return lengths, table


def test_04_dot_error_ordering_as_printed():
    """The orderings the text states, read from the printed table at the largest n."""
    text = printed(executed(NB04))
    lengths, table = _dot_table(text)
    assert lengths[-1] == 2 ** 14
    last = {label: errs[-1] for label, errs in table.items()}
    assert last["bf16 sequential"] > last["fp16 sequential"] > 100 * last["fp32 sequential"]
    for fmt in ("fp16", "bf16", "fp32"):
        assert last[f"{fmt} pairwise"] < last[f"{fmt} sequential"] / 3
    assert last["v100 (fp16 in)"] > last["a100 (fp16 in)"] > last["h100 (fp16 in)"] > last["fp32 sequential"]
    assert last["h100 fp8 e4m3"] > 10 * last["h100 fp8 e4m3, promote/128"]
    slopes = dict(re.findall(r"^(.+?) +log-log slope over n = 2\^8 \.\.\. 2\^14: +(-?[\d.]+)$", text, re.MULTILINE))
    slopes = {k: float(v) for k, v in slopes.items()}
    for label in ("v100 (fp16 in)", "a100 (fp16 in)", "h100 (fp16 in)", "h100 fp8 e4m3"):
        assert 0.8 < slopes[label] < 1.3, (label, slopes[label])
    assert slopes["fp32 sequential"] < 0.8 and abs(slopes["h100 fp8 e4m3, promote/128"]) < 0.2


def test_04_dot_error_ordering_recomputed():
    """The same orderings on fresh data, against an exact (Fraction) reference."""
    from fractions import Fraction

    import numpy as np

    import softfloat as sf

    rng = np.random.default_rng(99)
    n, trials = 2 ** 14, 2
    x, y = rng.random((trials, n)), rng.random((trials, n))

    exact = {}
    for fmt in ("fp16", "fp8_e4m3"):
        av, bv = sf.decode(sf.encode(x, fmt), fmt, dtype=np.float64), sf.decode(sf.encode(y, fmt), fmt, dtype=np.float64)
        exact[fmt] = [sum(map(Fraction, (ra * rb).tolist())) for ra, rb in zip(av, bv)]  # products exact in float64

    def error(fmt, **kwargs):
        got = sf.decode(sf.vecdot(sf.encode(x, fmt), sf.encode(y, fmt), fmt, out_format="fp32", **kwargs),
                        "fp32", dtype=np.float64)
        return np.mean([float(abs(Fraction(float(g)) - e) / e) for g, e in zip(got, exact[fmt])])

    fp16_seq, fp32_seq = error("fp16", accumulator="fp16"), error("fp16", accumulator="fp32")
    assert fp16_seq > 100 * fp32_seq
    assert error("fp16", accumulator="fp16", order="pairwise") < fp16_seq / 3
    assert error("fp16", accumulator="v100") > error("fp16", accumulator="h100") > fp32_seq
    assert error("fp8_e4m3", accumulator="h100") > 10 * error("fp8_e4m3", accumulator="h100", block=128)


# ---- 03: underflow and loss scaling ------------------------------------------------------
def _lab_run(policy, **kwargs):
    """softfloat.training.run(policy, **kwargs), once per test process: shared with the
    notebooks' own calls (see :func:`run_in_process`), so a test reads the report of the
    very arguments it names, without training again (runs are deterministic for a seed:
    test_training.py checks that)."""
    run = importlib.import_module("softfloat.training.run").run
    run = getattr(run, "__wrapped__", run)  # the function itself while a notebook runs
    key = (str(policy), repr(sorted(kwargs.items())))
    if key not in _lab_runs:
        _lab_runs[key] = run(policy, **kwargs)
    return _lab_runs[key]


def _pct(share):
    return f"{100 * share:.3f}%"


def _number_after(text, label):
    m = re.search(re.escape(label) + r"\s*(-?[\d.]+%?)", text)
    assert m, f"the notebook no longer prints {label!r}"
    return m.group(1)


def test_03_the_fp32_histogram_and_its_loss_scaled_shifts():
    """The shares printed in sections 1 and 2 are the lab's telemetry of the same run
    (fp32 policy, 20 epochs, seed 0: the notebook prints this configuration), and the
    prose's claims hold: the tail grows from the first epoch to the last, the largest k
    drawn overflows, the weight gradients overflow at a smaller k than the activation
    gradients."""
    text = printed(executed("03_underflow_and_loss_scaling"))
    assert "fp32 run: 20 epochs, seed 0, batch 64, SGD momentum 0.9, lr 0.1" in text
    r = _lab_run("fp32", epochs=20, seed=0)
    act, wgt = r.histograms["activation_grads"], r.histograms["weight_grads"]
    assert f"test accuracy {100 * r.accuracy:.1f}%" in text
    sections = text.split("weight gradients:", 1)
    for chunk, h in zip(sections, (act, wgt)):
        assert _number_after(chunk, "below 2^-24 (zero in FP16):") == _pct(h.mass_below(2.0**-24))
        b14 = h.mass_below(2.0**-14) - h.mass_below(2.0**-24)
        assert _number_after(chunk, "in [2^-24, 2^-14) (FP16 subnormal):") == _pct(b14)
    # the loss-scaling table: one row per k, six shares
    rows = {int(m.group(1)): m.group(2).replace("|", " ").split()
            for m in re.finditer(r"^ *(\d+) +((?:[\d.]+% +){3}\| +(?:[\d.]+% +){2}[\d.]+%) *$", text, re.MULTILINE)}
    assert {0, 8, 16, 24} <= set(rows)
    for k, row in rows.items():
        want = []
        for h in (act, wgt):
            sh = h.shifted(k)
            b24 = sh.mass_below(2.0**-24)
            want += [_pct(b24), _pct(sh.mass_below(2.0**-14) - b24), _pct(sh.mass_above(65504.0))]
        assert row == want, k
    assert act.mass_above(65504.0) == wgt.mass_above(65504.0) == 0    # "nothing comes near 65504"
    assert act.shifted(max(rows)).mass_above(65504.0) > 0           # "the largest k drawn overflows"
    k_act = next(k for k in range(128) if act.shifted(k).mass_above(65504.0) > 0)
    k_wgt = next(k for k in range(128) if wgt.shifted(k).mass_above(65504.0) > 0)
    assert f"activation gradients {k_act}, weight gradients {k_wgt}" in text
    assert k_wgt < k_act                                             # "weight gradients overflow first"
    # the epoch table: epoch 1 is a 1-epoch run's histogram; the tail grows by epoch 20
    epochs = {int(m.group(1)): float(m.group(3)) for m in
              re.finditer(r"^ *(\d+) +([\d.]+) +([\d.]+)% +([\d.]+)% *$", text, re.MULTILINE)}
    one = _lab_run("fp32", epochs=1, seed=0).histograms["activation_grads"].mass_below(2.0**-24)
    assert f"{epochs[1]:.3f}%" == _pct(one)
    assert epochs[20] > 10 * epochs[1]


def test_03_dynamic_scaling_and_bf16():
    """Section 3's counts are the run's (O2, 5 epochs, seed 0, growth_interval 10): at
    least one growth and one backoff, one skipped step per backoff, the highest scale
    within 3 binades of the first overflowing k of section 2 ("agree only roughly").
    Section 4: no fp32 gradient below bf16's smallest subnormal; the three runs' mean
    underflow shares are the runs', dynamic scaling cuts FP16's tenfold, BF16's is zero,
    and unscaled FP16's climbs from the first epoch to the last."""
    import numpy as np

    text = printed(executed("03_underflow_and_loss_scaling"))
    dyn = _lab_run("O2", epochs=5, seed=0, growth_interval=10)
    scales = np.array(dyn.loss_scales)
    growths = int(np.count_nonzero(scales[1:] > scales[:-1]))
    backoffs = int(np.count_nonzero(scales[1:] < scales[:-1]))
    assert f"growths: {growths}, backoffs: {backoffs}, skipped steps: {dyn.skipped_steps}" in text
    assert growths >= 1 and backoffs >= 1 and dyn.skipped_steps == backoffs
    top = int(np.log2(scales.max()))
    m = re.search(r"highest scale 2\^(\d+); first overflowing k of section 2: (\d+)", text)
    assert m and int(m.group(1)) == top and abs(top - int(m.group(2))) <= 3
    assert "below BF16's smallest subnormal 2^-133: 0.000%" in text
    fp32 = _lab_run("fp32", epochs=20, seed=0).histograms
    assert fp32["activation_grads"].mass_below(2.0**-133) == fp32["weight_grads"].mass_below(2.0**-133) == 0
    runs = {"FP16, no loss scaling": _lab_run("O2", epochs=5, seed=0, loss_scale="none"),
            "FP16, dynamic loss scaling": _lab_run("O2", epochs=5, seed=0, loss_scale="dynamic"),
            "BF16, no loss scaling": _lab_run("bf16", epochs=5, seed=0)}
    means = {}
    for name, r in runs.items():
        means[name] = r.summary()["grad_underflow"]
        line = next(x for x in text.splitlines() if x.startswith(name))
        assert f"(mean): {_pct(means[name])}" in line and f"test accuracy {100 * r.accuracy:.1f}%" in line
    assert means["FP16, dynamic loss scaling"] <= means["FP16, no loss scaling"] / 10
    assert means["BF16, no loss scaling"] == 0
    per_step = runs["FP16, no loss scaling"].telemetry.column("grad_underflow")
    epoch = len(per_step) // 5
    assert np.mean(per_step[-epoch:]) > np.mean(per_step[:epoch])    # "the solid line climbs"


# ---- 05: mixed-precision training ----------------------------------------------------------
def test_05_policies_accuracy_and_the_two_failure_modes():
    """The printed accuracy table and telemetry are the runs' (8 epochs, seed 0, lr 0.1 and
    0.001; the notebook prints its configuration), and the prose's findings hold: O1 and
    O2 give identical losses; the six accuracies differ by a handful of test images; O3
    swamps at least 5x more updates than O2 at both learning rates yet loses at most 2
    points of accuracy; pure BF16 with nearest-even updates stalls (20+ points behind the
    FP32 master copy) while stochastic rounding comes within a third of its loss gap,
    still leaving most updates unapplied; loss scaling cuts underflow at least tenfold
    with the scale left at 2^16."""
    from softfloat import training as T

    text = printed(executed("05_mixed_precision_training"))
    assert "8 epochs, seed 0, batch 64, SGD momentum 0.9, lr 0.1" in text
    kw = dict(epochs=8, seed=0)
    runs = {name: _lab_run(name, **kw) for name in ("O1", "O2", "O3")}
    for name, r in runs.items():
        assert str(T.Table([r.summary()])).splitlines()[-1] in text           # compare's row
        assert re.search(rf"^{name} +{100 * r.accuracy:.1f}% +{100 * r.train_accuracy:.1f}% +"
                         rf"{r.epoch_losses[-1]:.4f}$", text, re.MULTILINE)    # the accuracy table
    assert runs["O1"].losses == runs["O2"].losses
    assert "losses identical at every step: True" in text
    m = re.search(r"\((\d+) of (\d+) test images\)", text)
    assert m and int(m.group(1)) <= 5 and int(m.group(2)) == len(T.data.load().y_test)
    # swamping: O2 against O3 at two learning rates
    small = {name: _lab_run(name, lr=0.001, **kw) for name in ("O2", "O3")}
    for lr, o2, o3 in ((0.1, runs["O2"], runs["O3"]), (0.001, small["O2"], small["O3"])):
        s2, s3 = o2.summary(), o3.summary()
        line = " ".join(next(x for x in text.splitlines() if x.startswith(f"lr {lr:<5g}")).split())
        assert f"O2 {100 * s2['update_swamped']:.2f}% O3 {100 * s3['update_swamped']:.2f}%" in line
        assert f"test accuracy O2 {100 * o2.accuracy:.1f}% O3 {100 * o3.accuracy:.1f}%" in line
        assert s3["update_swamped"] >= 5 * s2["update_swamped"]
        assert abs(o3.accuracy - o2.accuracy) <= 0.02
    # pure bf16 and stochastic rounding
    pure = {"bf16 + fp32 master": _lab_run("bf16", lr=0.001, **kw),
            "bf16-pure, nearest even": _lab_run("bf16-pure", lr=0.001, **kw),
            "bf16-pure, stochastic": _lab_run(T.as_policy("bf16-pure", update_rounding="stochastic"),
                                              lr=0.001, **kw)}
    for name, r in pure.items():
        assert f"{name:24s} test accuracy {100 * r.accuracy:5.1f}%  final loss {r.epoch_losses[-1]:.4f}  " \
               f"swamped updates {100 * r.summary()['update_swamped']:.2f}%" in text
    master, near, sr = pure.values()
    assert near.accuracy < master.accuracy - 0.2
    gap_near = abs(near.epoch_losses[-1] - master.epoch_losses[-1])
    assert abs(sr.epoch_losses[-1] - master.epoch_losses[-1]) < gap_near / 3
    assert sr.summary()["update_swamped"] > 0.5
    # underflow with and without loss scaling
    unscaled = _lab_run("O2", loss_scale="none", **kw)
    for name, r in (("O2, no loss scaling", unscaled), ("O2, dynamic loss scaling", runs["O2"])):
        line = next(x for x in text.splitlines() if x.startswith(name))
        assert f"(mean per step) {100 * r.summary()['grad_underflow']:.2f}%" in line
    ratio = unscaled.summary()["grad_underflow"] / runs["O2"].summary()["grad_underflow"]
    assert ratio >= 10 and f"cuts the underflowed share {ratio:.0f}-fold" in text
    assert set(runs["O2"].loss_scales) == {65536.0} and "loss scales used by the scaled run: [65536.0]" in text


def test_05_memory_table_is_memory_footprint():
    """Section 4's table is memory_footprint of the lab's model (9610 parameters, counted
    here from the model) with 64 x (64 + 128 + 10) activations; with Adam the policies
    with a master copy or fp32 weights store 16 bytes per parameter, those without 8."""
    from softfloat import training as T

    text = printed(executed("05_mixed_precision_training"))
    model = T.Trainer("fp32", seed=0).model
    n = sum(p.size for p in model.params)
    assert n == 64 * 128 + 128 + 128 * 10 + 10
    b = 64 * sum(model.sizes)
    items = ("weights", "master_weights", "gradients", "optimizer_state", "activations", "total")
    for name, per_param in (("fp32", 16), ("O1", 16), ("O2", 16), ("O3", 8), ("bf16", 16), ("bf16-pure", 8),
                            ("fp8", 16)):
        m = T.memory_footprint(n, name, "adam", activations=b)
        row = next(x.split() for x in text.splitlines() if x.split()[:1] == [name] and len(x.split()) == 8)
        assert [int(v) for v in row[1:7]] == [m[k] for k in items]
        assert float(row[7]) == per_param == (m["total"] - m["activations"]) / n
    big = 7 * 10**9
    for name in ("fp32", "O2", "O3", "bf16-pure"):
        adam, sgd = (T.memory_footprint(big, name, opt)["total"] / 1e9 for opt in ("adam", "sgd"))
        assert re.search(rf"^{name} +{adam:.0f} +{sgd:.0f}$", text, re.MULTILINE)
