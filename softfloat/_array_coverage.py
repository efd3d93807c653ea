"""What the Array does not emulate, and why: the refusal table (each entry raises a
TypeError giving its reason), the functions numpy never hands to an Array, and numpy
code that reads an Array without asking it (``OUTSIDE_DISPATCH``: what it does, and the
spelling that keeps the Array).

This is data for ``tests/test_numpy_coverage.py`` (which walks numpy's namespace and
fails on a function that accepts a float16 ndarray but neither works on an Array nor is
listed here) and for the generated docs/numpy_coverage.md.
"""

from __future__ import annotations

import numpy as np

from ._array_registry import FUNCTIONS, refusal
from ._validate import NO_COMPLEX

__all__ = ["NOT_DISPATCHED", "OUTSIDE_DISPATCH", "REFUSED", "ROUNDED"]

_COMPLEX = NO_COMPLEX
_FLOAT64 = "computes in float64 numpy-side with its own roundings; no step-by-step definition here yet"
_LINALG = ("a LAPACK factorisation in float64: no correctly rounded emulation; write the algorithm "
           "with Array operations, or use arr.to_numpy()")

#: why np.save and np.savez refuse an Array: a file of numpy's would hold values or patterns
#: without the format, and which of the two is the caller's to say
_SAVE = ("a .npy/.npz file holds no softfloat format: save the exact values (float16 for fp16 and FP8, "
         "float32 for bf16) with np.save(f, arr.to_numpy()), or the bit patterns with np.save(f, arr.bits) "
         "(softfloat.npy.to_npy(arr.bits, path) for dask arrays) and read them back with "
         "softfloat.Array.from_bits(np.load(f), fmt)")

#: numpy function name -> why it is refused (each raises TypeError with this reason)
REFUSED = {
    **{f"fft.{n}": _COMPLEX for n in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft",
                                      "rfft2", "irfft2", "rfftn", "irfftn", "hfft", "ihfft")},
    **{f"linalg.{n}": _LINALG for n in ("cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq",
                                        "matrix_rank", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
                                        "tensorinv", "tensorsolve", "cond")},
    "polyfit": _LINALG,
    "poly": _COMPLEX, "roots": _COMPLEX, "unwrap": _FLOAT64, "sinc": _FLOAT64, "i0": _FLOAT64,
    "angle": _COMPLEX, "sort_complex": _COMPLEX,
    **{n: _SAVE for n in ("save", "savez", "savez_compressed")},
    "packbits": "packs booleans, not floats", "unpackbits": "unpacks uint8",
    "result_type": "dtype arithmetic: an Array's dtype is a Format (softfloat.promote)",
    "can_cast": "dtype arithmetic: an Array's dtype is a Format (softfloat.promote)",
    "min_scalar_type": "dtype arithmetic: an Array's dtype is a Format",
    "common_type": "dtype arithmetic: an Array's dtype is a Format (softfloat.promote)",
    "geomspace": ("with Array endpoints: numpy's logarithms, powers and sign handling in float64, no step-by-step "
                  "definition here yet; `np.logspace(np.log10(a), np.log10(b), n)` keeps the Array (plain "
                  "floats give numpy's plain ndarray)"),
"ix_": "index construction: use integer arrays",
}

#: names that take no Array (numpy dispatches on array arguments only): their result is a
#: plain ndarray whatever ``dtype=`` says
NOT_DISPATCHED = {
    name: "no Array operand, so numpy never hands the call over; the result is a plain ndarray"
    for name in ("arange", "tri", "zeros", "ones", "empty", "full",
                 "eye", "identity", "fromfunction", "frombuffer", "fromiter", "fromstring", "indices")
}
NOT_DISPATCHED["lib.stride_tricks.as_strided"] = (
    "numpy does not hand it over: it reads the Array's values (np.asarray) and returns a plain ndarray; "
    "sliding_window_view keeps the format")

#: numpy code that never hands an Array to the dispatch, what it does with one, and the
#: spelling that keeps it (tests/test_array_functions.py checks each)
OUTSIDE_DISPATCH = {
    "random.Generator.permutation, .choice, .permuted (np.random's too)": (
        "numpy reads the values (np.asarray): a plain ndarray of the exact values, out of emulation; "
        "`x[rng.permutation(len(x))]` (the same draws as `rng.permutation(x)`) and "
        "`x[rng.choice(len(x), k)]` are Arrays"),
    "random.Generator.shuffle": (
        "a 1-d Array is shuffled in place (numpy warns that an Array is no Sequence); with more dimensions "
        "numpy swaps rows through views and duplicates some (numpy warns; Python's random.shuffle does the "
        "same to an ndarray, silently): `x[...] = x[rng.permutation(len(x))]`"),
    "errstate, seterr": (
        "numpy's floating-point error handling never sees Array arithmetic: no RuntimeWarning, no "
        "FloatingPointError, whatever `np.errstate(all='raise')` says; the IEEE flags are counted in the context "
        "(`with sf.context() as ctx: ...; ctx.flags`), and `sf.context(traps={'overflow', 'divide_by_zero', "
        "'invalid'})` raises softfloat.Overflow, DivisionByZero, InvalidOperation (softfloat.FloatingPointSignal, "
        "an ArithmeticError) where numpy would raise FloatingPointError"),
    "array, asarray, mean, ... of a list of Arrays": (
        "numpy dispatches on arrays, not on what a list holds: `np.array(history)` and `np.mean(losses)` of a list "
        "of Arrays read their exact values (float16 for fp16 and FP8, float32 for bf16) and compute in numpy, out "
        "of emulation; `np.stack(losses)` is an Array (`np.mean(np.stack(losses))`), as is "
        "`sf.asarray(history, fmt)`"),
    "ma (masked arrays)": (
        "`np.ma.array(x, mask=...)`, `masked_invalid`, `masked_where` hold a plain ndarray of the exact values, so "
        "the masked array computes in numpy's float16/float32, out of emulation; the Array's own spellings keep "
        "it: `np.nanmean(x)` (NaNs masked), `np.mean(x, where=~mask)`, `np.where(mask, fill, x)`"),
    "other libraries' functions (scipy, pandas, ...)": (
        "they read values with np.asarray: `scipy.special.softmax(x)`, `scipy.stats.zscore(x)`, "
        "`scipy.signal.lfilter(b, a, x)`, `pd.Series(x)` compute in numpy's float16/float32 (or float64), out of "
        "emulation; scipy.special's one-argument ufuncs (expit, logit, erf, gamma, ... : "
        "softfloat._array_ufuncs) are dispatched and rounded once like numpy's libm ufuncs"),
    "finfo": (
        "`np.finfo(x.dtype)` converts the Format to the numpy dtype holding its values (np.dtype(x.dtype)): "
        "right for fp16, fp32 and fp64, but float16's limits for the FP8 formats and float32's for bf16 and tf32 "
        "(an fp8_e4m3 Array's `np.finfo(x.dtype).max` is 65504, its own 448), so masks and tolerances built "
        "from it are the wrong format's; the format's own: `x.format.epsilon`, `x.format.max_finite`, "
        "`x.format.min_normal`, `x.format.min_subnormal` (ml_dtypes.finfo agrees for its types)"),
    "isdtype": (
        "`np.isdtype(x.dtype, 'real floating')` raises numpy's TypeError (it takes numpy dtypes only, and an "
        "Array's dtype is a Format): `np.isdtype(np.dtype(x.dtype), 'real floating')` (a Format converts to the "
        "numpy float dtype holding its values) or `x.dtype.kind == 'f'`"),
    "vectorize": (
        "`np.vectorize(f)(x)` calls f on each element as a 0-d Array (numpy asks `np.asarray(x, dtype=object)`, "
        "which gives the elements as iteration does), so f's arithmetic is emulated, where numpy float16's runs on "
        "Python floats; numpy gathers the results in a plain ndarray of their exact values (float16 for fp16 and "
        "FP8, float32 for bf16): `sf.asarray(np.vectorize(f)(x), x.format)` is exact. Each element costs f's 0-d "
        "Array operations (tens of µs): whole-Array operations (`np.where`, ...) are far faster. With `signature=` numpy "
        "passes plain ndarrays (np.asanyarray), out of emulation: `np.stack([f(row) for row in x])` keeps the Array. "
        "A ufunc of `np.frompyfunc(f, n, m)` is dispatched: f runs on 0-d Arrays, and numpy's object array holds "
        "f's results"),
    "nditer": (
        "numpy iterates over a copy of the exact values (np.asarray; numpy cannot ask an Array for its memory): "
        "reading works, but `op_flags=['readwrite']` writes go to the copy and are lost; write by index "
        "(`for i in np.ndindex(x.shape): x[i] = ...`) or whole-array (`x[...] = f(x)`)"),
    "polynomial.Polynomial, Chebyshev, ... (calling one, .fit), polynomial.polynomial.polyfit and the other fits": (
        "numpy takes np.asanyarray of the argument: a plain float64 ndarray, out of emulation (for fp16 data "
        "the fits raise numpy's 'array type float16 is unsupported in linalg'); the value functions keep the "
        "Array: `np.polynomial.polynomial.polyval(off + scl * x, p.coef)` with `off, scl = p.mapparms()` "
        "(chebval, legval, ... for the other kinds) is `p(x)` step by step in the format"),
    "ascontiguousarray, asfortranarray, asanyarray, frombuffer, ndenumerate": (
        "numpy's constructors dispatch on `like=`, not on their argument: `np.ascontiguousarray(x)`, "
        "`np.asfortranarray(x)` and `np.asanyarray(x)` return plain ndarrays of the exact values, out of emulation "
        "(`np.copy(x)` and `x.copy(order='F')` keep the Array); `np.ndenumerate(x)` yields numpy scalars of the "
        "exact values (`for i in np.ndindex(x.shape): x[i]` yields 0-d Arrays); an Array exports no buffer, so "
        "`np.frombuffer(x)` and `memoryview(x)` raise numpy's and Python's TypeError: `bytes(x)` or `x.tobytes()` "
        "(the stored patterns), `memoryview(x.bits)`"),
    "statistics (Python's module), numbers.Real": (
        "Python's statistics reads elements exactly (`x[i].as_integer_ratio()`) and computes with Array "
        "arithmetic: `median`, `median_low`, `median_high`, `mode` and `quantiles` give elements (step by step in "
        "the format), `stdev`, `pstdev` and `fmean` floats, as on a float16 ndarray; `mean`, `variance`, "
        "`pvariance` and `harmonic_mean` build `type(element)(fraction)`, which carries no format: a TypeError "
        "naming `np.mean(x)`, `np.var(x, ddof=1)` (emulated) and `statistics.fmean(x)` (a float). "
        "`isinstance(x[i], numbers.Real)` is False (an element is a 0-d Array, as a 0-d ndarray is no "
        "numbers.Real): `float(x[i])`"),
    "testing.assert_equal": (
        "of two Arrays of several elements numpy takes the truth of their elementwise comparison: "
        "ValueError (ambiguous), as for any array type that is no ndarray; an element (a 0-d Array) against a "
        "Python or numpy scalar fails as 'Items are not equal' even where they are (numpy's isscalar is False for "
        "it, True for the scalar); `np.testing.assert_array_equal(a, b)` compares the exact values (an element "
        "too), `softfloat.testing.assert_bits_equal(a.bits, b.bits, fmt)` the bits"),
}

#: supported functions that round (the rest of the supported ones are exact)
ROUNDED = frozenset({
    "matmul", "dot", "vdot", "inner", "tensordot", "einsum", "linalg.norm", "sum", "prod", "cumsum", "cumprod",
    "cumulative_sum", "cumulative_prod",
    "mean", "var", "std", "average", "nansum", "nanprod", "nancumsum", "nancumprod", "nanmean", "nanvar",
    "nanstd", "median", "nanmedian", "quantile", "nanquantile", "percentile", "nanpercentile", "trace",
    "outer", "kron", "cross", "diff", "ediff1d", "round", "around", "ptp", "piecewise", "cov", "corrcoef",
    "convolve", "correlate", "bincount", "gradient", "trapezoid", "interp", "linalg.multi_dot",
    "linalg.matrix_power", "linalg.vecdot", "linalg.vector_norm", "linalg.matrix_norm", "polyval", "polyadd",
    "polysub", "polymul", "polydiv", "polyder", "polyint", "vander", "linspace", "logspace",
})


def _lookup(name: str):
    obj = np
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj


for _name, _why in REFUSED.items():
    _func = _lookup(_name)
    if _func is not None and _func not in FUNCTIONS:
        FUNCTIONS[_func] = refusal(_name, _why)
