"""The caller's frame outside some folders (softfloat's, numpy's, torch's): what a warning
is attributed to and what a call site is named after."""

from __future__ import annotations

__all__ = ["outside"]


def outside(frame, folders: tuple):
    """The first frame from ``frame`` outwards whose file lies in none of ``folders``
    (path prefixes), or None if none does, and how many frames out it lies."""
    steps = 0
    while frame is not None and frame.f_code.co_filename.startswith(folders):
        frame, steps = frame.f_back, steps + 1
    return frame, steps
