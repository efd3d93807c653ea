"""numpy's public namespace against the Array: every function and ufunc that accepts a
float16 ndarray either works on an fp16 Array (and agrees with numpy float16: bit for bit
where it is exact, within the format's rounding where it rounds) or is listed, with its
reason, in ``softfloat._array_coverage``.  docs/numpy_coverage.md is generated from the
same walk: ``python tests/test_numpy_coverage.py`` rewrites it.
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import softfloat as sf
from softfloat._array_coverage import NOT_DISPATCHED, OUTSIDE_DISPATCH, REFUSED, ROUNDED
from softfloat._array_functions import FUNCTIONS

DOC = Path(__file__).resolve().parent.parent / "docs" / "numpy_coverage.md"
NAMESPACES = {"": np, "linalg.": np.linalg, "fft.": np.fft, "lib.stride_tricks.": np.lib.stride_tricks}
#: names that are not numerical functions of an array (modules' helpers, dtype tools, I/O)
SKIP = {"asarray", "array", "asanyarray", "asarray_chkfinite", "ascontiguousarray", "asfortranarray",
        "isscalar", "iterable", "info", "show_config", "show_runtime", "test", "get_include", "typename",
        "mintypecode", "issubdtype", "isdtype", "printoptions", "set_printoptions", "get_printoptions",
        "format_float_positional", "format_float_scientific", "base_repr", "binary_repr", "seterr",
        "geterr", "errstate", "setbufsize", "getbufsize", "seterrcall", "geterrcall", "load", "loadtxt",
        "genfromtxt", "fromfile", "fromregex", "broadcast_shapes", "ndindex", "ndenumerate", "nditer",
        "busday_count", "busday_offset", "is_busday", "datetime_as_string", "datetime_data",
        "copy", "shape", "ndim", "size", "from_dlpack", "promote_types", "common_type", "finfo", "iinfo",
        "dtype", "ndarray", "matrix", "memmap", "recarray", "chararray", "poly1d", "broadcast", "vectorize",
        "frompyfunc", "require", "bmat", "asmatrix", "isfortran"}
#: results that hold no defined values (numpy's uninitialised memory): compared by shape
UNDEFINED_VALUES = {"empty_like"}
#: text that names the Array's type and format, not numpy's dtype: compared by type
OWN_TEXT = {"array_repr": "repr(arr): the Array's own"}
SAMPLE = np.array([[2.0, 0.5, 0.25], [0.5, 3.0, 0.5], [0.25, 0.5, 4.0]], dtype=np.float16)
CALLS = [("a",), ("a", "a"), ("a", 1), ("a", 0), ("seq",), ("a", "a", "a"), ("a", 0.5), ("a", [1]),
         ("v", "v"), ("a", (2, 2)), ("a", {"axis": 0}), ("a", np.float32)]  # "v": the first row, for
# functions of vectors only (convolve, correlate); a shape (sliding_window_view); a dict: keywords
# (the array API's cumulative_sum takes its axis by keyword only); a dtype (astype)


def _args(pattern, a):
    return [a if p == "a" else a[0] if p == "v" else [a, a] if p == "seq" else p for p in pattern
            if not isinstance(p, dict)]


def _call(func, pattern, a):
    keywords = {k: v for p in pattern if isinstance(p, dict) for k, v in p.items()}
    return func(*_args(pattern, a), **keywords)


def _candidates():
    seen = set()
    for prefix, module in NAMESPACES.items():
        for name in sorted(dir(module)):
            obj = getattr(module, name)
            if name.startswith("_") or name in SKIP or not callable(obj) or isinstance(obj, type):
                continue
            if id(obj) in seen and not prefix:
                continue
            seen.add(id(obj))
            yield prefix + name, obj


def _numpy_call(func):
    """The first call pattern that a float16 ndarray passes, and numpy's result; None if none."""
    for pattern in CALLS:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                result = _call(func, pattern, SAMPLE.copy())
        except Exception:
            continue
        if _floating_input_accepted(result):
            return pattern, result
    return None


def _floating_input_accepted(result) -> bool:
    return result is not None and not callable(result)


def _values(result):
    """Nested results as plain float64/int/bool ndarrays (Arrays decoded exactly)."""
    if isinstance(result, (list, tuple)):
        return [_values(r) for r in result]
    if isinstance(result, sf.Array):
        return result.to_numpy(np.float64)
    return np.asarray(result)


def _agree(expected, got, exact: bool) -> bool:
    if isinstance(expected, (list, tuple)):
        return isinstance(got, list) and len(got) == len(expected) and all(
            _agree(e, g, exact) for e, g in zip(expected, got))
    expected = np.asarray(expected)
    if expected.dtype.kind not in "fc":
        return expected.shape == got.shape and np.array_equal(expected, got)
    if expected.shape != np.shape(got):
        return False
    e = expected.astype(np.float64)
    if exact:
        return bool(np.array_equal(e, got, equal_nan=True))
    return bool(np.allclose(e, got, rtol=2 ** -8, atol=2 ** -14, equal_nan=True))


def classify(name, func):
    """(status, note) of one numpy name that accepts a float16 ndarray, or None."""
    found = _numpy_call(func)
    if found is None:
        return None
    pattern, expected = found
    rounded = name in ROUNDED or (isinstance(func, np.ufunc) and not _exact_ufunc(func))
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            got = _call(func, pattern, sf.Array.from_bits(SAMPLE.view(np.uint16), "fp16"))
    except TypeError as error:
        if name in REFUSED or name in NOT_DISPATCHED:
            return "refused", (REFUSED.get(name) or NOT_DISPATCHED[name])
        return "missing", f"TypeError: {error}"[:120]
    except Exception as error:  # noqa: BLE001 (the walk reports every failure)
        return "missing", f"{type(error).__name__}: {error}"[:120]
    if name in NOT_DISPATCHED:
        return "plain", NOT_DISPATCHED[name]
    if name in OWN_TEXT:
        return ("exact", OWN_TEXT[name]) if isinstance(got, str) else ("wrong", "not text")
    if name in UNDEFINED_VALUES:
        return ("exact", "") if np.shape(got) == np.shape(expected) else ("wrong", "shape")
    if not _agree(_values(expected), _values(got), exact=not rounded):
        return "wrong", f"disagrees with numpy float16 for {pattern}"
    return ("rounded" if rounded else "exact"), ""


_EXACT_UFUNCS = {"negative", "positive", "absolute", "fabs", "copysign", "maximum", "minimum", "fmax", "fmin",
                 "nextafter", "spacing", "isnan", "isinf", "isfinite", "signbit", "equal", "not_equal", "less",
                 "less_equal", "greater", "greater_equal", "floor", "ceil", "trunc", "rint", "sign",
                 "logical_and", "logical_or", "logical_xor", "logical_not", "frexp", "modf", "fmod",
                 "heaviside", "isnat", "conjugate", "conj"}
# remainder, floor_divide, divmod and ldexp round once (e.g. -1e-3 % 1000, ldexp below the
# subnormals): listed as rounded, and compared within the format's error


def _exact_ufunc(ufunc) -> bool:
    return ufunc.__name__ in _EXACT_UFUNCS


def walk():
    rows = {}
    for name, func in _candidates():
        row = classify(name, func)
        if row is not None:
            rows[name] = (isinstance(func, np.ufunc), *row)
    return rows


@pytest.fixture(scope="module")
def rows():
    return walk()


def test_every_function_numpy_float16_supports_works_or_is_refused_with_a_reason(rows):
    bad = [f"{n}: {status} ({note})" for n, (ufunc, status, note) in rows.items()
           if not ufunc and status in ("missing", "wrong")]
    assert not bad, "map these or list them in softfloat._array_coverage.REFUSED:\n" + "\n".join(bad)


def test_every_ufunc_numpy_float16_supports_works_on_an_array(rows):
    bad = [f"{n}: {status} ({note})" for n, (ufunc, status, note) in rows.items()
           if ufunc and status in ("missing", "wrong")]
    assert not bad, "map these ufuncs in softfloat._array_ufuncs:\n" + "\n".join(bad)


def test_refusals_name_their_reason():
    x = sf.asarray([1.0, 2.0], "fp16")
    with pytest.raises(TypeError, match="complex"):
        np.fft.fft(x)
    with pytest.raises(TypeError, match="LAPACK"):
        np.linalg.inv(sf.asarray(np.eye(2), "fp16"))


def test_the_refusal_table_refuses_only_what_is_not_mapped():
    for name in REFUSED:
        obj = np
        for part in name.split("."):
            obj = getattr(obj, part, None)
        impl = FUNCTIONS.get(obj)
        assert obj is None or impl is None or getattr(impl, "refused", None) == REFUSED[name], name


def render(rows) -> str:
    """docs/numpy_coverage.md from the walk and the refusal table."""
    groups = {"exact": [], "rounded": [], "refused": [], "plain": [], "missing": [], "wrong": []}
    for name, (ufunc, status, note) in sorted(rows.items()):
        groups[status].append((name, ufunc, note))
    lines = ["# numpy on softfloat.Array: coverage", "",
             "Generated by `python tests/test_numpy_coverage.py` from a walk of numpy's namespace (every",
             "function and ufunc that accepts a small float16 ndarray) and `softfloat._array_coverage`;",
             "`tests/test_numpy_coverage.py` fails when this file is out of date.", "",
             "* **exact**: bits move or are compared, nothing rounds; equal to numpy float16 bit for bit",
             "  but for the sign of a zero or a NaN numpy leaves to its loops: `maximum`, `minimum`,",
             "  `fmax`, `fmin` and their reductions follow IEEE 754-2019 (-0 < +0), where numpy float16",
             "  returns the first of two equal zeros (float32 the second); a NaN an operation makes is",
             "  the context platform's default NaN (`sf.context(platform=\"x86-sse\")` gives numpy's on",
             "  x86, sign bit set); `spacing` of a negative value is negative (away from zero, numpy",
             "  float32's and float64's convention; numpy float16's points to +inf, numpy issue 15331);",
             "  `nextafter(+0, -0)` is -0 (C99, numpy float32; numpy float16 gives +0, numpy issue 31472);",
             "  every sort is numpy's `kind=\"stable\"` one, whatever the kind (numpy's others leave the",
             "  order of equal elements, -0 and +0, NaNs, to the algorithm and the machine).",
             "* **rounded**: one correct rounding per elementary step in the Array's format (sums in the",
             "  context's accumulator), as each function's docstring defines; libm ufuncs are float64",
             "  rounded once (not correctly rounded).",
             "* **refused**: raises TypeError with the reason below (never a silent float64 fallback).",
             "* **plain ndarray**: takes no Array operand, so numpy never hands the call over.", "",
             "Reductions take numpy's `dtype=` (convert first), `where=` and `initial=`",
             "(`softfloat._array_keywords`); the ufunc methods `reduce`, `accumulate`, `reduceat` and `at`",
             "are defined for add, multiply, maximum, minimum, fmax and fmin, `reduce`, `accumulate` and",
             "`reduceat` also for the other two-operand ufuncs of Array results (subtract, divide,",
             "logaddexp, ...: numpy's loop, one rounding per call) (`softfloat._array_ufunc_methods`).", "",
             f"numpy {np.__version__}: {len(groups['exact'])} exact, {len(groups['rounded'])} rounded, "
             f"{len(groups['refused'])} refused, {len(groups['plain'])} plain, "
             f"{len(groups['missing']) + len(groups['wrong'])} not yet mapped.", ""]
    titles = {"exact": "Supported, exact", "rounded": "Supported, rounded", "refused": "Refused",
              "plain": "Plain ndarray results", "missing": "Not yet mapped", "wrong": "Disagreeing"}
    for status, entries in groups.items():
        if not entries:
            continue
        lines += [f"## {titles[status]}", "", "| name | kind | note |", "|---|---|---|"]
        lines += [f"| `{n}` | {'ufunc' if u else 'function'} | {note.replace('|', '/')} |" for n, u, note in entries]
        lines.append("")
    lines += ["## Outside numpy's dispatch", "",
              "numpy code that reads an Array without asking it (no `__array_function__` on the way):",
              "what it does, and the spelling that keeps the Array.", "",
              "| call | with an Array |", "|---|---|"]
    lines += [f"| `{name}` | {note.replace('|', '/')} |" for name, note in OUTSIDE_DISPATCH.items()]
    lines.append("")
    return "\n".join(lines)


def test_the_committed_table_is_up_to_date(rows):
    made_with = re.search(r"^numpy (\S+):", DOC.read_text(), re.M) if DOC.exists() else None
    if made_with and made_with.group(1) != np.__version__:
        pytest.skip(f"docs/numpy_coverage.md lists numpy {made_with.group(1)}'s namespace; this is numpy "
                    f"{np.__version__} (the walk above still checks every name of this version)")
    assert DOC.exists() and DOC.read_text() == render(rows), \
        "docs/numpy_coverage.md is stale: run python tests/test_numpy_coverage.py"


if __name__ == "__main__":
    DOC.write_text(render(walk()))
    sys.stdout.write(f"wrote {DOC}\n")
