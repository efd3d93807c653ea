"""Long sequential chains over few outputs, many steps at a time.

A chain s_k = round(s_{k-1} + t_k) is serial, but while the exact sums stay inside one
binade of the accumulator its grid is uniform, spacing u, and s_{k-1} lies on it.  Then

    round(s_{k-1} + t_k) = s_{k-1} + u * r_k,     r_k = the integer t_k / u rounds to

in the mode's own direction, with the magnitude frame fixed by the binade's sign.  Only
two modes look at s_{k-1}: nearest_even's ties go to the even multiple and odd's inexact
steps to the odd one, so they need the parity of s_{k-1} / u.  That parity is known in
closed form: a tie leaves s even (an inexact odd step leaves it odd), and any other step
adds r_k.  So a window of steps is computed with array operations (cumulative sums), and
accepted up to the first step whose exact sum, or result, would leave the binade (or
reach zero, overflow or a non-finite term); that step is done by the general path and the
window moves on.  Exact throughout: every quantity is an integer or a power-of-two
scaling of a float64 term.

Used for deterministic modes without flags (flags and stochastic draws take the general
path); results equal the general path bit for bit (tests/test_accumulate_paths.py).
"""

from __future__ import annotations

import numpy as np

from ..formats import Format
from ..rounding import Rounding

__all__ = ["chain", "supports"]

_MODES = (Rounding.TOWARD_ZERO, Rounding.UPWARD, Rounding.DOWNWARD, Rounding.NEAREST_AWAY,
             Rounding.NEAREST_EVEN, Rounding.ODD)
#: steps tried at once: start, least, most
_WINDOW = (64, 8, 1 << 14)


def supports(rounding: Rounding) -> bool:
    """Can chains in this mode be taken a window at a time?  (Not stochastic.)"""
    return rounding in _MODES


def chain(s, T, fmt: Format, rounding: Rounding, subnormals: bool, exact_step):
    """s after the steps s = round(s + T[i]) for every row i of T (exact float64 terms).

    ``s`` is a 1-D float64 array of defined accumulator values; ``exact_step(s, i)``
    performs step i on the general path and returns the new s.
    """
    K = T.shape[0]
    i = 0
    window = _WINDOW[0]
    while i < K:
        if not np.any(np.isfinite(s)):  # every lane NaN or infinite: closed form
            return _settled(s, T[i:])
        done, s_new = _window(s, T[i:i + window], fmt, rounding, subnormals)
        if done == 0:
            s = exact_step(s, i)
            i += 1
            window = max(window // 2, _WINDOW[1])
            continue
        s = s_new
        i += done
        if done == min(window, K - i + done):
            window = min(window * 2, _WINDOW[2])
    return s


def _settled(s, T):
    """Infinite or NaN sums stay as they are, unless a NaN term or an infinity of the
    other sign comes (inf - inf is a NaN); finite terms change nothing."""
    poisoned = np.isnan(T).any(axis=0) | (np.isinf(T) & (T != s)).any(axis=0)
    return np.where(poisoned, np.nan, s)


def _window(s, T, fmt, rounding, subnormals):
    """How many leading steps of T stay inside every lane's binade, and s after them."""
    m = fmt.mantissa_bits
    if not (np.all(np.isfinite(s)) and np.all(s != 0)):
        return 0, s
    negative = np.signbit(s)
    a = np.abs(s)
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
    good = ok.all(axis=1)
    done = int(np.argmin(good)) if not good.all() else good.shape[0]
    if done == 0:
        return 0, s
    mag = S[done - 1] * u
    return done, np.where(negative, -mag, mag)


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
