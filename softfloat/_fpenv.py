"""Whether this thread's CPU arithmetic keeps subnormal numbers, which softfloat needs.

softfloat's kernels do part of their work in numpy float32/float64 arithmetic (the
proven shortcuts, the exact float64 values of decoded operands).  A CPU told to flush
subnormals -- x86's FTZ and DAZ bits of MXCSR, Arm's FZ, set per thread by
``torch.set_flush_denormal(True)`` or by a library built with ``-ffast-math`` -- makes
those steps return zeros for subnormal results and read subnormal inputs as zeros, so
softfloat's results would be wrong without a sign of it.  :func:`require_subnormals`
turns that into a clear error at the public entry points instead.

The test is two Python float operations (CPython's floats are the CPU's binary64
arithmetic, under the same control bits as numpy's): the smallest normal halved (FTZ
makes it 0) and the smallest subnormal compared with 0 (DAZ makes it equal).
"""

from __future__ import annotations

__all__ = ["flushes_subnormals", "require_subnormals"]

_MIN_NORMAL = 2.0 ** -1022
_MIN_SUBNORMAL = 5e-324


def flushes_subnormals() -> bool:
    """Does this thread's floating-point arithmetic flush subnormals (FTZ or DAZ)?"""
    return _MIN_NORMAL * 0.5 == 0.0 or _MIN_SUBNORMAL == 0.0


def require_subnormals() -> None:
    """Raise FloatingPointError where this thread flushes subnormals (see the module
    docstring): softfloat's results would be wrong there."""
    if flushes_subnormals():  # about 80 ns a call
        raise FloatingPointError(
            "softfloat: this thread's CPU arithmetic flushes subnormal numbers to zero (FTZ/DAZ: "
            "torch.set_flush_denormal(True), or a library built with -ffast-math), and softfloat's kernels "
            "need them -- its results would be wrong. Turn it off before emulating: "
            "torch.set_flush_denormal(False)")
