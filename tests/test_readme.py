"""The README's tour is executable documentation: run its ```python blocks as doctests.

The blocks run in order in one namespace, as a reader would type them.  A block that uses
torch (not in the test extra) runs in its own test, on the tour's imports, and skips,
naming the install command, where torch is missing -- the rest of the tour runs anyway.
"""

import doctest
import re
from pathlib import Path

import pytest

from tests.conftest import needs_torch

README = Path(__file__).resolve().parent.parent / "README.md"
TEXT = README.read_text()
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
PARSER = doctest.DocTestParser()


def _blocks():
    """(line number, examples) of every ```python block with examples."""
    found = []
    for match in re.finditer(r"^```python\n(.*?)^```", TEXT, re.MULTILINE | re.DOTALL):
        examples = PARSER.get_examples(match[1])
        if examples:
            found.append((TEXT.count("\n", 0, match.start()) + 1, match[1], examples))
    return found


BLOCKS = _blocks()
TORCH_BLOCKS = [(line, text) for line, text, examples in BLOCKS
                if any(needs_torch(e.source) for e in examples)]


def _run(name, text, globs):
    test = PARSER.get_doctest(text, globs, name, str(README), 0)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    runner.run(test)
    return runner.summarize(verbose=False)


def test_every_example_is_in_a_python_block():
    # nothing outside the blocks below escapes the doctests
    assert sum(len(e) for _, _, e in BLOCKS) == len(PARSER.get_examples(TEXT))
    assert TORCH_BLOCKS, "the README's exchange-with-torch block is no longer found"


def test_readme_examples_run():
    """Every block but the torch ones, in order, in one namespace."""
    text = "\n".join(t for line, t, _ in BLOCKS if (line, t) not in TORCH_BLOCKS)
    result = _run("README.md", text, {})
    assert result.attempted > 10
    assert result.failed == 0


@pytest.mark.parametrize(("line", "text"), TORCH_BLOCKS, ids=[f"line{line}" for line, _ in TORCH_BLOCKS])
def test_readme_torch_examples_run(line, text, torch):
    import numpy as np

    import softfloat as sf

    result = _run(f"README.md, line {line}", text, {"np": np, "sf": sf})
    assert result.attempted > 0
    assert result.failed == 0
