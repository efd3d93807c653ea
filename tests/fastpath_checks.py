"""Checks shared by the tests of the shortcuts: the general path (every fast path off)
and bit-for-bit, flag-for-flag equality of a shortcut's answer with it."""

from __future__ import annotations

import numpy as np

from softfloat import _fastpaths


def general(call):
    """``call()`` with every fast path switched off."""
    saved = _fastpaths.ENABLED
    _fastpaths.ENABLED = False
    try:
        return call()
    finally:
        _fastpaths.ENABLED = saved


def assert_same(fast, slow):
    """Equal bits (or values) and flags, of the same types and shapes."""
    if isinstance(slow, tuple):
        (fast, fast_flags), (slow, slow_flags) = fast, slow
        assert type(fast_flags) is type(slow_flags)
        if not hasattr(slow_flags, "inexact"):  # return_flags="swamped": the counts
            slow_flags, fast_flags = [("swamped", slow_flags)], [("swamped", fast_flags)]
        for (name, a), (_, b) in zip(fast_flags, slow_flags):
            assert type(a) is type(b) and np.shape(a) == np.shape(b), name
            assert np.array_equal(a, b), name
        if hasattr(slow_flags, "swamped"):
            assert np.array_equal(fast_flags.swamped, slow_flags.swamped)
    assert type(fast) is type(slow)
    assert np.shape(fast) == np.shape(slow)
    assert np.array_equal(np.asarray(fast).reshape(-1).view(np.uint8), np.asarray(slow).reshape(-1).view(np.uint8))


def flag_counts(ctx) -> dict:
    """A context's flag counts: each flag's, the values' and the operations' (for comparing
    a shortcut's context with the general path's)."""
    import softfloat as sf
    return {name: getattr(ctx.flags, name) for name in (*sf.FLAG_NAMES, "values", "operations")}


def assert_call_like_general(call, **context):
    """``call()`` (an Array result) in a fresh context equals the general path's in another:
    shape, bits and flag counts; ``context``: the contexts' keywords."""
    import softfloat as sf
    with sf.context(**context) as fast_ctx:
        fast = call()
    with sf.context(**context) as slow_ctx:
        slow = general(call)
    assert fast.shape == slow.shape and np.array_equal(fast.bits, slow.bits)
    assert flag_counts(fast_ctx) == flag_counts(slow_ctx)


def spy_on(monkeypatch, *names: str) -> list:
    """The sizes of the answers the functions ``softfloat._fastpaths.<name>`` gave (an
    array, or a tuple whose first item is one; a declined call, None, adds nothing) from
    now on in the test, all in one list: a shortcut's tests check it ran."""
    taken = []
    for name in names:
        real = getattr(_fastpaths, name)

        def wrapper(*args, real=real):
            found = real(*args)
            if found is not None:
                taken.append(np.size(found[0] if isinstance(found, tuple) else found))
            return found

        monkeypatch.setattr(_fastpaths, name, wrapper)
    return taken


def answers_of(monkeypatch, owner, name: str) -> list:
    """Every answer ``owner.<name>`` (a function of a module or a method of a class) gives
    from now on in the test, None for a declined call: a shortcut's tests check it ran."""
    found = []
    original = getattr(owner, name)
    monkeypatch.setattr(owner, name, lambda *args: found.append(original(*args)) or found[-1])
    return found
