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
    "04_swamping_and_accumulation": 3,
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
