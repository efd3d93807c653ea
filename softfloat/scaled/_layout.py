"""Which elements share a scale: the tensor, rows, tiles or MX blocks of an array."""

from __future__ import annotations

import numpy as np


class _Layout:
    """The scaled units of an array of ``shape``: the tensor, or tiles (br, bc) over the
    array viewed as (..., R, C) -- rows and 1-D blocks view the last axis as one row."""

    def __init__(self, shape, scaling, block, argname):
        self.shape = tuple(shape)
        self.tile = None
        if scaling == "tensor":
            self.scales_shape = ()
            return
        ndim = len(self.shape)
        two_d = scaling == "blocks" and len(block) == 2
        need = 2 if two_d else 1
        if ndim < need:
            what = f"block={block}" if scaling == "blocks" else f"scaling={scaling!r}"
            raise ValueError(f"{what} needs {argname} with at least {need} "
                             f"{'axes' if need > 1 else 'axis'}; got shape {self.shape}")
        if two_d:
            self.view = self.shape
            self.tile = block
        else:
            self.view = self.shape[:-1] + (1, self.shape[-1])
            length = max(self.shape[-1], 1) if scaling == "rows" else block[-1]
            self.tile = (1, length)
        r, c = self.view[-2:]
        br, bc = self.tile
        self.counts = (-(-r // br), -(-c // bc))
        if two_d:
            self.scales_shape = self.shape[:-2] + self.counts
        else:
            self.scales_shape = self.shape[:-1] + (self.counts[1],)

    def _tiles(self, a, fill):
        """``a`` (shaped like the array) as (..., nR, br, nC, bc), padded with ``fill``."""
        a = a.reshape(self.view)
        (br, bc), (nr, nc) = self.tile, self.counts
        r, c = self.view[-2:]
        if nr * br != r or nc * bc != c:
            padded = np.full(self.view[:-2] + (nr * br, nc * bc), fill, dtype=a.dtype)
            padded[..., :r, :c] = a
            a = padded
        return a.reshape(self.view[:-2] + (nr, br, nc, bc))

    def amax(self, values):
        """Largest magnitude per unit, NaNs ignored (0 for an empty or all-NaN unit), and
        per unit whether it holds a NaN."""
        with np.errstate(invalid="ignore"):
            mags = np.abs(values)
        tiles = mags.reshape(-1) if self.tile is None else self._tiles(mags, 0.0)
        axes = None if self.tile is None else (-3, -1)
        peak = np.maximum.reduce(tiles, axis=axes, initial=0.0)  # NaN propagates
        has_nan = np.isnan(peak)
        if has_nan.any():  # rare: again, the NaNs as zeros (numpy's fmax mishandles signalling NaNs)
            peak = np.maximum.reduce(np.where(np.isnan(tiles), 0.0, tiles), axis=axes, initial=0.0)
        return np.asarray(peak).reshape(self.scales_shape), np.asarray(has_nan).reshape(self.scales_shape)

    def expand(self, per_unit):
        """A per-unit array spread over the elements (broadcastable to the array)."""
        per_unit = np.asarray(per_unit)
        if self.tile is None:
            return per_unit
        (br, bc), (nr, nc) = self.tile, self.counts
        grid = per_unit.reshape(self.view[:-2] + (nr, nc))
        full = np.repeat(np.repeat(grid, br, axis=-2), bc, axis=-1)
        r, c = self.view[-2:]
        return full[..., :r, :c].reshape(self.shape)
