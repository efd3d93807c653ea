"""The block driver: every streaming call (encode, decode, quantize, the operations) runs
its kernel over cache-sized blocks here, on one thread or on a pool of them.

Results do not depend on how the work is cut or shared out: a block writes only its own
slice of the outputs and of the flag masks, and its stochastic-rounding bits are those of
its elements' positions (:mod:`softfloat._random`), not of the order blocks run in.  So
``workers=1`` and ``workers=8`` give the same bits and flags, block size whatever.

numpy releases the GIL inside its ufunc loops, so blocks on several threads run on
several cores.  Each thread has its own :class:`~softfloat._workspace.Workspace`.
"""

from __future__ import annotations

import itertools
import numbers
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _random, _validate
from ._workspace import Workspace

__all__ = ["MIN_BLOCKS_PER_WORKER", "cpu_count", "get_workers", "resolve_workers", "set_workers",
           "stream_blocks"]

#: a worker thread is started only for at least this many blocks (thread start-up and
#: hand-over cost about as much as a block or two, so small arrays stay on one thread)
MIN_BLOCKS_PER_WORKER = 2

_default_workers: int | None = None  # None: every core this process may run on


def cpu_count() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _check_workers(workers):
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise ValueError(f"workers must be a positive int or None (every core); got {_validate.describe(workers)}")
    return int(workers)


def set_workers(workers):
    """Set the process-wide number of threads of the streaming functions; return the
    previous setting.

    Parameters
    ----------
    workers : int or None
        A positive number of threads, or None for every core the process may run on (the
        setting at import).  1 runs every block in the calling thread.  A function's own
        ``workers=`` argument overrides it for that call.

    Examples
    --------
    >>> import softfloat as sf
    >>> previous = sf.set_workers(1)          # one thread from now on
    >>> sf.get_workers()
    1
    >>> _ = sf.set_workers(previous)          # back to the previous setting
    """
    global _default_workers
    workers = _check_workers(workers)
    previous, _default_workers = _default_workers, workers
    return previous


def get_workers() -> int:
    """The number of threads a streaming function uses when called with ``workers=None``
    (see :func:`set_workers`): the process-wide setting, or every core.

    Examples
    --------
    >>> import softfloat as sf
    >>> sf.get_workers() >= 1
    True
    """
    return cpu_count() if _default_workers is None else _default_workers


def resolve_workers(workers) -> int:
    """A function's ``workers=`` argument, checked: None means :func:`get_workers`."""
    workers = _check_workers(workers)
    return get_workers() if workers is None else workers


def stream_blocks(n, block_size, key, flags, block, *, workers=1, positions=None,
                  thread_block_size=None):
    """Run ``block(start, stop, rand, ws)`` over [0, n) in blocks; scatter its flags.

    ``block`` returns the :class:`~softfloat._flagmasks.FlagMasks` of its elements, which
    are written into ``flags`` (``FlagMasks.zeros(n)``: every mask allocated, so that
    threads write only their own lanes) at the block's lanes; or None without ``flags``.
    With a stochastic-rounding ``key`` each element gets the 64 random
    bits of its position (``positions``: a :class:`softfloat._random.Positions`, by
    default the element's own flat index), so results depend neither on the block size
    nor on the number of ``workers`` (threads) -- a resolved positive int.  Each thread
    has its own Workspace, and numpy's floating-point warnings are silenced: NaN and
    infinity lanes are decided from bit patterns, not from what the FPU says about them.

    ``thread_block_size`` (default ``block_size``): the block size when the blocks run
    on several threads.  Every numpy call hands the GIL over; a kernel that makes many
    calls per block needs larger blocks on threads than alone (see MIN_BLOCKS_PER_WORKER).
    """
    positions = _random.Positions() if positions is None else positions
    threaded = thread_block_size or block_size
    threads = max(1, min(workers, -(-n // threaded) // MIN_BLOCKS_PER_WORKER))
    if threads > 1:
        block_size = threaded
    n_blocks = -(-n // block_size)

    def run(start, ws):
        stop = min(start + block_size, n)
        rand = None if key is None else _random.bits_into(
            key, positions, start, stop, ws.get("_random.bits", np.uint64, stop - start),
            ws.get("_random.tmp", np.uint64, stop - start))
        fl = block(start, stop, rand, ws)
        if flags is not None:
            flags.set_at(slice(start, stop), fl, n, fresh=True)

    if threads == 1:
        ws = Workspace(min(n, block_size))
        with np.errstate(all="ignore"):
            for start in range(0, n, block_size):
                run(start, ws)
        return

    counter = itertools.count()  # blocks handed out in order, one at a time (next() holds the GIL)

    def worker():
        ws = Workspace(block_size)
        with np.errstate(all="ignore"):  # numpy's error state is per thread
            while (b := next(counter)) < n_blocks:
                run(b * block_size, ws)

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="softfloat") as pool:
        futures = [pool.submit(worker) for _ in range(threads)]
        for f in futures:
            f.result()  # re-raise a block's exception here
