"""A sequential chain into one output, one step at a time on Python floats.

A vectorised step (softfloat.accumulate._ieee.Arithmetic.add) is a dozen numpy calls on
arrays of one lane: tens of microseconds a term.  With a single output there is nothing
to vectorise over, so the steps run on Python floats (softfloat._fastpaths._chain.sums:
why they are the vectorised ones, bits, flags, swamped counts and stochastic draws),
each declined step vectorised by the caller; :func:`one_output` adds the final rounding
into out_format.
"""

from __future__ import annotations

from .. import _fastpaths

__all__ = ["one_output", "steps"]


def steps(s, terms, rands, acc, attrs, values):
    """The chain ``s + terms[0] + terms[1] + ...`` until a step is declined
    (softfloat._fastpaths.scalar_sums: its arguments, results and proof); switched off,
    the first step is."""
    found = _fastpaths.scalar_sums(s, terms, rands, acc, attrs, values)
    return (s, 0, 0, 0, None) if found is None else found


def one_output(terms, rands, final_rand, acc, out, attrs, values):
    """A whole sequential reduction into one output, from its exact terms in the order
    they are added: ``(pattern of out, flag code, swamped)``, or None where a step is
    declined (the caller then runs the general path from the start).

    ``rands``: the steps' random bits (stochastic rounding; else None), ``final_rand``
    the final rounding's; ``values(fmt)``: the scalar values of a format's patterns.
    As the general path: the first term rounded alone into ``acc``, then each addition,
    then, where ``out`` is another format, one rounding of the total into it.
    """
    s, code, swamped, done, pattern = steps(None, terms, rands, acc, attrs, values(acc))
    if done < len(terms) or not terms:
        return None
    if acc != out:
        _, final_code, _, done, pattern = steps(None, [s], None if rands is None else [final_rand], out, attrs,
                                                values(out))
        if not done:
            return None
        code |= final_code
    return pattern, code, swamped
