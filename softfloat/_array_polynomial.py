"""numpy's polynomial functions (``numpy.polyval`` and friends, highest power first) on
:class:`~softfloat.Array`: numpy's own steps, each one an Array operation rounded into the
format, so a polynomial evaluated in fp16 rounds where fp16 hardware would.

* ``polyval(p, x)``: Horner's rule from y = +0, ``y = y * x + p[k]`` (a rounded product,
  then a rounded sum: no fused multiply-add, as numpy writes it);
* ``polyadd``/``polysub``: the shorter operand padded with +0 in front, one addition or
  subtraction per coefficient;
* ``polymul``: leading zeros trimmed (numpy's poly1d), then ``np.convolve`` (each
  coefficient a dot product in the context's accumulator, rounded once);
* ``polyder``/``polyint``: each coefficient multiplied or divided by its integer power
  (the integers rounded into the format, as any ndarray operand of an Array is), ``m``
  times; polyint's constants ``k`` rounded into the format;
* ``polydiv``: numpy's long division (``scale = 1 / v[0]``, ``d = scale * r[k]``,
  ``r[k:k + n + 1] -= d * v``), the remainder's leading near-zeros trimmed as numpy
  trims them;
* ``vander``: the running products ``x, x * x, ...`` (``np.multiply.accumulate``).

Coefficients and points given as Python or numpy numbers are rounded into the Array's
format (weak), as everywhere on Arrays.  ``numpy.poly1d`` objects are not taken.
"""

from __future__ import annotations

import numpy as np

from ._array_registry import implements, unsupported

__all__: list = []


def _operands(A, name: str, *values):
    """The Arrays of ``values`` in their common format (1-d at least for the coefficients)."""
    if any(isinstance(v, np.poly1d) for v in values):
        raise unsupported(name, "numpy.poly1d holds float64 coefficients; pass the coefficients as an Array")
    fmt, bits = A.common(*values)
    return fmt, [A.wrap(b, fmt) for b in bits]


def _coefficients(A, name: str, *values):
    fmt, arrays = _operands(A, name, *values)
    return fmt, [a.reshape(1) if a.ndim == 0 else a for a in arrays]


@implements(np.polyval)
def polyval(A, p, x):
    """Horner's rule in the format: y = +0, then ``y = y * x + pv`` for each coefficient."""
    fmt, (p, x) = _operands(A, "polyval", p, x)
    y = A.wrap(np.zeros(x.shape, fmt.storage_dtype), fmt)
    for k in range(p.shape[0] if p.ndim else 1):
        y = y * x + (p[k] if p.ndim else p)
    return y


def _padded(A, fmt, a, b):
    """``a`` and ``b`` of one length, the shorter padded with +0 in front (numpy's rule)."""
    diff = len(b) - len(a)
    zeros = A.wrap(np.zeros(abs(diff), fmt.storage_dtype), fmt)
    if diff > 0:
        a = np.concatenate((zeros, a))
    elif diff < 0:
        b = np.concatenate((zeros, b))
    return a, b


@implements(np.polyadd)
def polyadd(A, a1, a2):
    fmt, (a1, a2) = _coefficients(A, "polyadd", a1, a2)
    a1, a2 = _padded(A, fmt, a1, a2)
    return a1 + a2


@implements(np.polysub)
def polysub(A, a1, a2):
    fmt, (a1, a2) = _coefficients(A, "polysub", a1, a2)
    a1, a2 = _padded(A, fmt, a1, a2)
    return a1 - a2


def _trimmed(A, fmt, a):
    """numpy's poly1d: leading zeros (either sign) removed; all zeros: a single +0."""
    nonzero = np.flatnonzero(a.to_numpy(np.float64) != 0)
    if nonzero.size == 0:
        return A.wrap(np.zeros(1, fmt.storage_dtype), fmt)
    return a[int(nonzero[0]):]


@implements(np.polymul)
def polymul(A, a1, a2):
    fmt, (a1, a2) = _coefficients(A, "polymul", a1, a2)
    return np.convolve(_trimmed(A, fmt, a1), _trimmed(A, fmt, a2))


def _order(name: str, m) -> int:
    m = int(m)
    if m < 0:
        other = "polyint" if name == "polyder" else "polyder"
        raise ValueError(f"numpy.{name}: the order m must be non-negative (see {other}); got {m}")
    return m


@implements(np.polyder)
def polyder(A, p, m=1):
    m = _order("polyder", m)
    _, (p,) = _coefficients(A, "polyder", p)
    for _ in range(m):
        n = len(p) - 1
        p = p[:-1] * np.arange(n, 0, -1)
    return p


@implements(np.polyint)
def polyint(A, p, m=1, k=None):
    m = _order("polyint", m)
    k = np.zeros(m) if k is None else k
    fmt, (p, k) = _coefficients(A, "polyint", p, k)
    if len(k) == 1 and m > 1:
        k = np.broadcast_to(k, (m,))
    if len(k) < m:
        raise ValueError(f"numpy.polyint: k must be a scalar or a 1-d array of length 1 or at least m = {m}; "
                         f"got length {len(k)}")
    for i in range(m):
        p = np.concatenate((p / np.arange(len(p), 0, -1), k[i:i + 1]))
    return p


@implements(np.polydiv)
def polydiv(A, u, v):
    """numpy's long division, each step rounded: returns (quotient, remainder)."""
    fmt, (u, v) = _coefficients(A, "polydiv", u, v)
    u, v = u + 0.0, v + 0.0  # numpy's own first step (-0 becomes +0)
    m, n = len(u) - 1, len(v) - 1
    scale = 1.0 / v[0]
    q = A.wrap(np.zeros(max(m - n + 1, 1), fmt.storage_dtype), fmt)
    r = u.copy()
    for k in range(m - n + 1):
        d = scale * r[k]
        q[k] = d
        r[k:k + n + 1] = r[k:k + n + 1] - d * v
    while np.allclose(r[0], 0, rtol=1e-14) and r.shape[-1] > 1:
        r = r[1:]
    return q, r


@implements(np.vander)
def vander(A, x, N=None, increasing=False):
    """Columns 1, x, x * x, ... (running products, each rounded), highest power first
    unless ``increasing``."""
    if x.ndim != 1:
        raise ValueError(f"numpy.vander: x must be a one-dimensional array; got {x.ndim} dimensions")
    N = len(x) if N is None else int(N)
    fmt = x.format
    columns = A.wrap(np.zeros((len(x), N), fmt.storage_dtype), fmt)
    if N > 0:
        columns[:, 0] = 1.0
    if N > 1:
        columns[:, 1:] = np.multiply.accumulate(np.broadcast_to(x[:, None], (len(x), N - 1)), axis=1)
    return columns if increasing else columns[:, ::-1]
