"""ScaledTensor: element bit patterns and the scales they share."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..formats import Format
from ._scales import _dequant_factors


class ScaledTensor(NamedTuple):
    """Element bit patterns and the scales they share; what :func:`scaled_encode` returns.

    Attributes
    ----------
    bits : ndarray of ``format.storage_dtype``
        The elements, shaped like the input: ``encode(x * scale, format)``.
    scales : ndarray
        float32 quantisation scales (``element ~ x * scale``) for "tensor" (shape ()),
        "rows" (``x.shape[:-1] + (1,)``) and "blocks" (one per tile); uint8 E8M0 bit
        patterns of X (``element ~ x / X``) for "mx", one per block of the last axis.
    format : Format
        The element format.
    scaling : str
        "tensor", "rows", "blocks" or "mx".
    block : tuple of int or None
        The tile shape for "blocks" and "mx"; None otherwise.
    amax : ndarray of float64
        The largest magnitude of the input in each scaled unit, NaNs ignored (with
        ``multiply="fp32"``, of the input rounded to fp32), measured even when amax= or
        scale= was given: what Transformer Engine records in its amax history; feed it to
        :meth:`DelayedScaling.update`.

    Examples
    --------
    >>> import softfloat as sf
    >>> st = sf.scaled_encode([0.5, -2.0, 1.0], "e4m3")
    >>> st.scales, st.amax, st.scale_inv          # 448 / 2, and its fp32 reciprocal
    (array(224., dtype=float32), array(2.), array(0.00446429))
    >>> sf.scaled_decode(st).tolist()             # elements 112, -448, 224 times fp32(1/224)
    [0.5000000223517418, -2.000000089406967, 1.0000000447034836]
    """

    bits: np.ndarray
    scales: np.ndarray
    format: Format
    scaling: str
    block: tuple | None
    amax: np.ndarray

    @property
    def scale_inv(self) -> np.ndarray:
        """The dequantisation factors, float64: value = element * scale_inv.

        For fp32 scales, their reciprocals rounded to fp32 (Transformer Engine's
        ``scale_inv``, the factor cuBLAS and ``torch._scaled_mm`` multiply by); for MX, X
        itself (NaN for the E8M0 NaN 0xFF).

        >>> import softfloat as sf
        >>> sf.scaled_encode([3.0, 96.0], "e2m1", scaling="mx").scale_inv.tolist()
        [16.0]
        """
        return _dequant_factors(self.scales, self.scaling)
