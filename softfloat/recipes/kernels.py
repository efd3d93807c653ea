"""The array operations a :class:`~softfloat.recipes.GemmEngine` composes its products of:
the bit-level calls and the few float32 steps between them, on numpy arrays.

A recipe's product is stated once, in the engine, as a composition of these operations;
the arrays they work on are the kernels' business.  :class:`Kernels` runs them with
softfloat's own functions on numpy arrays (the reference).  Another array library
supplies a subclass that overrides every method with the same results on its arrays
(softfloat.torch's, on a tensor's own device), so that the same composition runs there.
"""

from __future__ import annotations

import numpy as np

from .. import _validate
from ..accumulate import matmul as sf_matmul
from ..codec import decode, encode, quantize
from ..formats import fp32
from ..scaled import scaled_decode, scaled_encode
from ._record import OperandRecord

__all__ = ["Kernels", "NUMPY_KERNELS"]


class Kernels:
    """The operations of a :class:`~softfloat.recipes.GemmEngine`, on numpy arrays.

    Each method's definition is the numpy call it makes; a subclass for other arrays
    overrides every method (``replace`` aside) and must give the same numbers (bits,
    flags, counts) on its own arrays.  Values are
    float32 or float64 arrays, bit patterns the arrays ``softfloat.encode`` returns.

    Parameters
    ----------
    matmul : callable, optional
        What computes the products: :func:`softfloat.matmul` (None) or a function with
        its signature that gives its bits.

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> from softfloat.recipes.kernels import NUMPY_KERNELS
    >>> bits, flags = NUMPY_KERNELS.encode(np.array([1.0, 1e-9]), sf.fp16, flags=True)
    >>> NUMPY_KERNELS.record(sf.fp16, flags, NUMPY_KERNELS.decode(bits, sf.fp16)).underflow_zero
    1
    >>> NUMPY_KERNELS.multiply(np.float32(0.5), np.float32(2.0**-149)).tolist()  # a tie: to even 0
    0.0
    """

    def __init__(self, matmul=None):
        if matmul is not None and not callable(matmul):
            raise TypeError(f"matmul must be a function with softfloat.matmul's signature; got "
                            f"{_validate.describe(matmul)}")
        #: what computes the products (softfloat.matmul's signature and bits)
        self.matmul = sf_matmul if matmul is None else matmul

    def replace(self, *, matmul) -> "Kernels":
        """The same kernels with their products computed by ``matmul`` (None: this
        class's own)."""
        return type(self)(matmul=matmul)

    # ---- arrays ---------------------------------------------------------------------------------
    def takes(self, x) -> bool:
        """Whether ``x`` is an operand of these kernels (numpy's: anything ``numpy.asarray``
        reads)."""
        return True

    def operand(self, x):
        """``x`` as an array these kernels compute on (``numpy.asarray``)."""
        return np.asarray(x)

    def is_float(self, x) -> bool:
        """Whether the array ``x`` holds float values."""
        return bool(np.issubdtype(x.dtype, np.floating))

    def host(self, x) -> np.ndarray:
        """A numpy array of ``x``'s values (the small arrays of a record: scales, amax)."""
        return np.asarray(x)

    def transpose(self, x):
        """The transpose of the matrix ``x`` (of each matrix of a stack: its last two
        axes exchanged), contiguous."""
        return np.ascontiguousarray(np.swapaxes(np.asarray(x), -1, -2))

    def repeat(self, x, count: int, axis: int):
        """Each element of ``x`` repeated ``count`` times along ``axis`` (``numpy.repeat``)."""
        return np.repeat(x, count, axis=axis)

    def multiply(self, a, b):
        """fp32(a * b): one IEEE binary32 rounding of the exact product of float32
        values (numpy float32 arithmetic; a float64 argument holds float32 values)."""
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            return np.multiply(np.asarray(a, np.float32), np.asarray(b, np.float32))

    def add(self, a, b):
        """fp32(a + b) of float32 values, broadcast (``b`` rounded to float32 first)."""
        with np.errstate(over="ignore", invalid="ignore"):
            return np.add(np.asarray(a, np.float32), np.asarray(b, np.float32))

    def equal(self, a, b) -> bool:
        """Whether two arrays hold the same values (False where one holds a NaN)."""
        return bool(np.array_equal(a, np.asarray(b, np.asarray(a).dtype)))

    def total(self, counts) -> int:
        """The sum of integer counts, as an int."""
        return int(np.sum(counts))

    # ---- the bit-level calls --------------------------------------------------------------------
    def encode(self, x, fmt, *, flags: bool = False):
        """:func:`softfloat.encode` (``x``, ``fmt``) with its defaults; (bits, Flags) with
        ``flags``."""
        return encode(x, fmt, return_flags=flags)

    def quantize(self, x, fmt):
        """``decode(encode(x, fmt), fmt, fmt.value_dtype())`` (nearest even) as one call:
        :func:`softfloat.quantize`, whose small arrays take the shortcuts' one-block path
        (a product's output rounding: no bits needed, only its values)."""
        values = quantize(x, fmt)
        dtype = fmt.value_dtype()
        return values if values.dtype == dtype else values.astype(dtype)  # (exact: dtype holds fmt)

    def decode(self, bits, fmt, dtype: str = "float32"):
        """:func:`softfloat.decode` into the float dtype named ``dtype``.  fp32 patterns
        into float32 (every product's accumulator result) are float32's own encoding, so
        decoding them is the identity on the bits, NaN payloads and signalling NaNs
        included: a view, without the codec's checks (~10 us a call on a small product)."""
        if fmt is fp32 and dtype == "float32" and type(bits) is np.ndarray and bits.dtype == np.uint32:
            return bits.view(np.float32)
        return decode(bits, fmt, np.dtype(dtype))

    def scaled_encode(self, x, fmt, *, flags: bool = False, **options):
        """:func:`softfloat.scaled_encode` (``x``, ``fmt``, ``**options``): a tensor with
        ``bits``, ``scales``, ``scale_inv`` (fp32 values), ``amax``; and the Flags with
        ``flags``."""
        return scaled_encode(x, fmt, return_flags=flags, **options)

    def scaled_decode(self, scaled):
        """:func:`softfloat.scaled_decode`: the exact values, float64."""
        return scaled_decode(scaled)

    # ---- records --------------------------------------------------------------------------------
    def record(self, fmt, flags, rounded, *, amax=None, scale=None) -> OperandRecord:
        """:meth:`OperandRecord.from_flags` of a rounding: its flags and its results
        ``rounded`` (values)."""
        return OperandRecord.from_flags(fmt, flags, rounded, amax=amax, scale=scale)

    def exact_record(self, fmt, values) -> OperandRecord:
        """:meth:`OperandRecord.exact`: the record of values that already held ``fmt``."""
        return OperandRecord.exact(fmt, values)


#: the numpy kernels with softfloat.matmul: a GemmEngine's default
NUMPY_KERNELS = Kernels()
