"""Long sequential chains over few outputs, many steps at a time.

A chain s_k = round(s_{k-1} + t_k) is serial, but while the exact sums stay inside one
binade of the accumulator its grid is uniform, spacing u, and s_{k-1} lies on it.  Then

    round(s_{k-1} + t_k) = s_{k-1} + u * r_k,     r_k = the integer t_k / u rounds to

in the mode's own direction, with the magnitude frame fixed by the binade's sign.  Only
two modes look at s_{k-1}: nearest_even's ties go to the even multiple and odd's inexact
steps to the odd one, so they need the parity of s_{k-1} / u.  That parity is known in
closed form: a tie leaves s even (an inexact odd step leaves it odd), and any other step
adds r_k.  So a window of steps is computed with array operations (cumulative sums), and
accepted lane by lane up to the first step whose exact sum, or result, would leave the
lane's binade (or reach zero, overflow or a non-finite term); that step is done by the
general path for the lanes stopped there, and the window moves on.  Exact throughout:
every quantity is an integer or a power-of-two scaling of a float64 term.

Used for deterministic modes without flags (flags and stochastic draws take the general
path); results equal the general path bit for bit (tests/test_accumulate_paths.py).  A
shortcut like those of :mod:`softfloat._fastpaths`: :func:`supports` answers False while
``softfloat._fastpaths.ENABLED``, the one off switch, is False.  Saturation and tininess
never matter here: a window stops before any step whose exact sum or result leaves the
binade, so no accepted step overflows or reaches max_finite, and none is tiny when
subnormals are flushed (those steps are the general path's); tininess changes only
flags, which windows never compute.
"""

from __future__ import annotations

import numpy as np

from .. import _fastpaths
from ..formats import Format
from ..rounding import Rounding

__all__ = ["chain", "supports"]

_MODES = (Rounding.TOWARD_ZERO, Rounding.UPWARD, Rounding.DOWNWARD, Rounding.NEAREST_AWAY,
             Rounding.NEAREST_EVEN, Rounding.ODD)
#: steps tried at once: start, least, most
_WINDOW = (64, 8, 1 << 14)
#: plain steps taken when windows stall, first and most
_BURST = (16, 4096)
#: a window costs about this many plain steps
_SLOW = 3
#: at most this many (step, lane) cells in one window's arrays
_CELLS = 1 << 18


def supports(rounding: Rounding) -> bool:
    """Can chains in this mode be taken a window at a time?  (Not stochastic; and never
    while softfloat._fastpaths.ENABLED is False.)"""
    return _fastpaths.ENABLED and rounding in _MODES


def chain(s, T, fmt: Format, rounding: Rounding, subnormals: bool, exact_add):
    """s after the steps s = round(s + T[i]) for every row i of T (exact float64 terms).

    ``s`` is a 1-D float64 array of defined accumulator values, one per lane (column of
    T); ``exact_add(s, t)`` rounds s + t lane by lane on the general path.  Each lane
    moves on at its own pace: a window takes every lane as far as its own binade lasts,
    and only the lanes stopped at a crossing take one step on the general path.
    """
    K, L = T.shape
    s = np.array(s, dtype=np.float64)
    pos = np.zeros(L, dtype=np.int64)  # each lane's next step
    window, burst = _WINDOW[0], _BURST[0]
    tries, start = 0, 0
    while True:
        lanes = np.flatnonzero(pos < K)
        if lanes.size == 0:
            return s
        settled = lanes[~np.isfinite(s[lanes])]
        if settled.size:  # NaN or infinite sums: closed form for the rest of the lane
            rest = np.arange(K)[:, None] >= pos[settled]
            s[settled] = _settled(s[settled], np.where(rest, T[:, settled], 0.0))
            pos[settled] = K
            continue
        p = pos[lanes]
        w = int(min(window, max(_WINDOW[1], _CELLS // lanes.size), K - p.min()))
        rows = p + np.arange(w)[:, None]
        Tw = np.where(rows < K, T[np.minimum(rows, K - 1), lanes], 0.0)  # zeros past the end change nothing
        done, s_new = _window(s[lanes], Tw, fmt, rounding, subnormals)
        done = np.minimum(done, K - p)
        s[lanes], pos[lanes] = s_new, p + done
        stuck = lanes[done == 0]
        if stuck.size:
            _step(s, T, pos, stuck, exact_add)
            window = max(window // 2, _WINDOW[1])
        elif done.min() == w:
            window = min(window * 2, _WINDOW[2])
        # the slowest lane decides how many windows the chain takes; when it advances
        # fewer than _SLOW steps a window (crossings everywhere: a random walk near zero),
        # plain steps are cheaper: take a burst of them, longer each time it recurs
        tries += 1
        if tries >= 2:
            if pos.min() - start < _SLOW * tries:
                for _ in range(burst):
                    live = np.flatnonzero(pos < K)
                    if live.size == 0:
                        break
                    _step(s, T, pos, live, exact_add)
                burst = min(burst * 2, _BURST[1])
            else:
                burst = _BURST[0]
            tries, start = 0, pos.min()


def _step(s, T, pos, lanes, exact_add):
    """One step of ``lanes`` (each at its own position) on the general path, in place."""
    s[lanes] = exact_add(s[lanes], T[pos[lanes], lanes])
    pos[lanes] += 1


def _settled(s, T):
    """Infinite or NaN sums stay as they are, unless a NaN term or an infinity of the
    other sign comes (inf - inf is a NaN); finite terms change nothing."""
    poisoned = np.isnan(T).any(axis=0) | (np.isinf(T) & (T != s)).any(axis=0)
    return np.where(poisoned, np.nan, s)


def _window(s, T, fmt, rounding, subnormals):
    """Per lane: how many leading steps of T stay inside the lane's binade, and s after
    them (a lane at zero or not finite takes none)."""
    m = fmt.mantissa_bits
    live = np.isfinite(s) & (s != 0)
    s_live = np.where(live, s, 1.0)
    negative = np.signbit(s_live)
    a = np.abs(s_live)
    e = np.frexp(a)[1].astype(np.int64) - 1  # a in [2**e, 2**(e+1))
    # the binade's bounds in units of its spacing u: lo <= X (or 0 < X) and X < hi
    region_sub = subnormals & (e <= fmt.emin)  # subnormals and the first binade share u
    e_grid = np.maximum(e, fmt.emin)
    u = np.ldexp(1.0, e_grid - m)
    lo = np.where(region_sub, 0.0, np.ldexp(1.0, m))
    hi = np.where(e >= fmt.emax, np.floor(fmt.max_finite / u), np.ldexp(1.0, m + 1))
    S0 = a / u  # integer: s on the grid
    # terms in the magnitude frame (sign of the binade), in units of u
    q = np.where(negative, -T, T) / u
    finite = np.isfinite(q)
    q = np.where(finite, q, 0.0)
    n = np.floor(q)
    f = q - n  # in [0, 1), exact
    n = n.astype(np.int64)
    r = _increments(n, f, S0.astype(np.int64), negative, rounding)
    S = S0.astype(np.int64) + np.cumsum(r, axis=0)
    S_before = np.concatenate([S0.astype(np.int64)[None], S[:-1]])
    # exact tests: X = S_before + q within the region, and S within it
    lower_ok = np.where(region_sub, q > -S_before, q >= lo - S_before)
    upper_ok = q < hi - S_before
    result_ok = (S < hi) & np.where(region_sub, S > 0, S >= lo)
    ok = finite & lower_ok & upper_ok & result_ok
    w = ok.shape[0]
    done = np.where(ok.all(axis=0), w, np.argmin(ok, axis=0)) * live
    mag = np.take_along_axis(S, np.maximum(done - 1, 0)[None], axis=0)[0] * u
    return done, np.where(done > 0, np.where(negative, -mag, mag), s)


def _increments(n, f, S0, negative, rounding):
    """r_k: the integer t_k / u rounds to (n = floor, f = fraction), per mode."""
    inexact = f > 0
    if rounding is Rounding.TOWARD_ZERO:
        return n
    if rounding is Rounding.UPWARD:  # magnitude grows for positive binades
        return n + (inexact & ~negative)
    if rounding is Rounding.DOWNWARD:
        return n + (inexact & negative)
    if rounding is Rounding.NEAREST_AWAY:
        return n + (f >= 0.5)
    if rounding is Rounding.NEAREST_EVEN:
        event, reset = f == 0.5, 0  # a tie leaves s even
        plain = n + (f > 0.5)
    else:  # ODD: an inexact step leaves s odd
        event, reset = inexact, 1
        plain = n
    # parity of s before each step: from the last event (reset) or from s itself
    R = np.where(event, 0, plain)
    D = np.cumsum(R, axis=0)
    D_before = np.concatenate([np.zeros((1,) + D.shape[1:], dtype=D.dtype), D[:-1]])
    rows = np.arange(n.shape[0])[:, None]
    last = np.maximum.accumulate(np.where(event, rows, -1), axis=0)
    last_before = np.concatenate([np.full((1,) + last.shape[1:], -1), last[:-1]])
    D_at_last = np.take_along_axis(D, np.maximum(last_before, 0), axis=0)
    parity = np.where(last_before >= 0, reset + D_before - D_at_last, S0 + D_before) & 1
    # ties/inexact steps: the neighbour that makes s even (nearest_even) or odd (odd)
    step_up = ((parity + n) & 1) != reset
    return np.where(event, n + step_up, plain)
