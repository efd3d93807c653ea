"""Scaled quantisation: narrow elements (FP8, FP6, FP4, ...) that share scales, as FP8/MX
tensors are stored in practice.

A scaled tensor is the element bit patterns of ``x * scale`` plus the scales: one for the
tensor, one per row, one per tile, or one E8M0 power of two per block of 32 (OCP MX).
Each recipe is the one a named library implements, cited where its modules define it:

=========  ==================================  =============================================
scaling    one scale per                       scale (what ``ScaledTensor.scales`` holds)
=========  ==================================  =============================================
tensor     the whole tensor                    fp32 ``max / amax`` (Transformer Engine's
                                               delayed and current scaling, torchao's
                                               "tensorwise")
rows       row (all axes but the last fixed)   the same per row ("rowwise", channel-wise)
blocks     tile of shape ``block``             the same per tile: (1, 128) activation tiles
                                               and (128, 128) weight blocks as in
                                               DeepSeek-V3 and TE's Float8BlockScaling
mx         32 elements along the last axis     an E8M0 power of two X (OCP MX v1.0)
=========  ==================================  =============================================

Everything is computed as those libraries compute it, in fp32 where they use fp32, with
each rounding done by softfloat's own encode (never by the host FPU).
"""

# the scales (_scales, over fp32 in _fp32), the units that share them (_layout), the
# products (_products), the recipes' arguments (_arguments); the tensor, its encoding and
# decoding, and delayed scaling over them
from ._arguments import SCALINGS, scaling_arguments
from ._codec import scaled_decode, scaled_encode
from ._delayed import DelayedScaling
from ._products import exact_products  # noqa: F401 (the checkpoint quantiser's product)
from ._scales import fp32_scales
from ._tensor import ScaledTensor

__all__ = ["ScaledTensor", "DelayedScaling", "scaled_encode", "scaled_decode", "fp32_scales", "SCALINGS",
           "scaling_arguments"]

# the public names are documented, shown and pickled as softfloat.scaled's (their examples
# then run with this module's names)
for _public in (ScaledTensor, DelayedScaling, scaled_encode, scaled_decode, fp32_scales):
    _public.__module__ = __name__
del _public
