"""Sums, dot products and matrix products with an explicit accumulator, order and hardware model.

``sum``, ``vecdot`` and ``matmul`` take bit patterns of ``fmt`` and return bit patterns of
``out_format``; ``vecdot`` and ``matmul`` read ``b``'s patterns in ``b_format`` (default
``fmt``), for products of two formats such as E4M3 activations times E5M2 gradients.
What they compute is defined exactly, so that any result can be redone with pencil and
paper (and is, by the tests' exact oracle):

Terms
    ``sum``: t_k = x_k.  ``vecdot``/``matmul``: t_k = a_k * b_k, exact when ``product`` is
    None (the product is fused into the addition that takes it, one rounding per step as
    in an fma chain), or round_P(a_k * b_k) when ``product`` is a format P.  a_k is a
    value of ``fmt`` and b_k one of ``b_format``, each decoded by its own format (its
    infinities, NaNs and signalling NaNs included); the product of the two exact values
    is all that the accumulation sees, so everything below holds for two formats as for
    one.

Default accumulator of products
    fp32 when every value of the operands' formats is an fp32 value (unless both are
    fp32), else ``fmt``.  For two different formats: fp32 when it holds every value of
    both (fp8_e4m3 x fp8_e5m2, fp16 x bf16, bf16 x fp32), else the one of the two that
    holds the other (fp64 x fp16: fp64), else fp64 when it holds both; otherwise a
    ValueError asks for an ``accumulator``.

IEEE accumulator A (``accumulator`` a format)
    round_A(v) is the correct rounding of the exact v into A (``rounding``, ``subnormals``,
    ``tininess``, or all of them as ``attributes``; overflow as IEEE 754 section 7.4, or
    to +-max_finite with ``saturate=True``).  round_P and round_O are the same roundings
    into P and O.

    * ``order="sequential"``: s = c (held exactly) if given; then for k = 0, 1, ..., K-1:
      s = round_A(t_k) while s is still undefined, else s = round_A(s + t_k).
    * ``order="reverse"``: the same with k = K-1, ..., 0.
    * ``order="pairwise"``: leaves l_k = round_A(t_k); each level adds adjacent pairs,
      round_A(l_0 + l_1), round_A(l_2 + l_3), ..., an odd last element carried up
      unchanged, until one value P is left; then s = round_A(c + P) if c is given, else P.
    * ``block=b``: the terms are cut into runs of b consecutive terms (in the order's
      direction, the last run shorter), each run is summed in A by the order above without
      c, and the run sums R_0, R_1, ... are added in sequence into the total in
      ``out_format`` O: T = c if given; then T = round_O(R_j) while T is undefined, else
      T = round_O(T + R_j) ("promotion", as DeepSeek-V3 does every 128 FP8 terms).
    * An empty sum is c, or +0.  The result is round_O(s) (exact when A fits in O).

Hardware accumulator (``accumulator`` a preset name such as "h100", or a
:class:`FusedAccumulator`)
    The products go through the chip's fused multi-term adder, block by block in k order
    (see :mod:`softfloat.accumulate.hardware` for the model and :data:`PRESETS` for the
    chips); c is the first block's accumulator.  The presets' output is fp32, or fp16 where
    ``out_format`` is fp16; another ``out_format`` is reached by one final rounding.  With
    ``block=b`` each run of b terms goes through the fused adder from a zero accumulator and
    the run results are added in IEEE arithmetic in ``out_format`` as above.  The fused
    steps round as the hardware does, whatever ``rounding``, ``subnormals`` and
    ``saturate`` say; those apply to the IEEE roundings around them (``c`` into the
    adder's output, promotions, the final rounding).  A preset takes two operand formats
    of one family (fp16, bf16, tf32), or any pairing of fp8_e4m3 and fp8_e5m2 through its
    FP8 path (Ada's and Hopper's FP8 instructions take either format per operand); any
    other pairing (fp16 x bf16, FP8 x fp16, ...) is a ValueError.  A
    :class:`FusedAccumulator` takes any two formats whose products it holds exactly
    (exponents of at most 8 bits, precisions adding up to at most 24 bits); each input's
    exponent is clamped at its own format's emin (at fp16's on the "via fp16" FP8 path,
    taken when both operands are FP8).

Zeros, NaNs and flags
    Exact zero sums follow IEEE 754 section 6.3 (+0 for opposite signs, -0 under
    downward; -0 + -0 = -0).  A NaN result of a NaN operand (a NaN term or
    ``c``, a partial sum that is already a NaN) or of an invalid operation is the
    canonical quiet NaN of its format (positive), as GPUs return it: sums carry no NaN
    payloads.  The rounding of a non-NaN value into a format without infinity is
    ``sf.encode``'s: an overflow (or an infinity) becomes the NaN of the value's sign in
    an fn format (0xFF for a negative FP8 E4M3 sum), the single NaN in an fnuz one, or
    +-max_finite with ``saturate=True``.  A format
    without NaN (FP6/FP4) returns +0 there, flagged invalid.  With ``return_flags=True``
    the result comes with :class:`~softfloat.AccumulationFlags`: per output element, the
    OR of the IEEE flags over every rounding that made it (invalid: inf - inf, 0 * inf or
    a signalling NaN among its inputs; divide_by_zero never), and ``swamped``, the number
    of additions in which a non-zero finite addend left a finite partial sum unchanged
    (for a pairwise addition: the result equals one operand and the other is non-zero;
    for the fused adder: a non-zero product truncated away entirely).
    ``return_flags="swamped"`` returns those counts alone, the same int64 array, and
    spares the work of the other flags.

Stochastic rounding
    Each rounding draws 64 random bits that depend only on ``rng``, the output element and
    the rounding's place in the definition above -- not on how the work is split into
    blocks -- so results are reproducible for a given seed.

dask arrays
    ``sum``, ``vecdot`` and ``matmul`` take dask arrays (any operand, and ``c``) and return
    lazy dask arrays (and lazy flags) with the bits of the in-memory result, whatever the
    chunks.  The output's chunks follow the operands'; along k:

    * ``order="sequential"`` in an IEEE accumulator A that has a NaN, deterministic
      rounding, no ``block``: the k chunks are chained, each output block's partial sum
      s (kept in A) being the next chunk's ``c`` -- the definition above, cut between
      two steps -- and round_O(s) is a final lazy conversion when O is not A (with a
      ``c`` this path needs O = A);
    * every other case (pairwise and reverse orders, ``block=``, hardware accumulators,
      stochastic rounding -- whose draws are numbered by the global k and output index --
      or a ``c`` in an O other than A) takes each output's k terms in one chunk: the
      operands are rechunked to one chunk along k, so a task holds an output block's
      whole rows of terms.
"""

from __future__ import annotations

from .hardware import PRESETS, FusedAccumulator, hardware_model
from .reduce import matmul, sum, vecdot  # noqa: A004 - numpy's names

__all__ = ["FusedAccumulator", "PRESETS", "hardware_model", "matmul", "sum", "vecdot"]
