"""The names softfloat reads as formats, as data: aliases of the catalogue formats,
torch's and ml_dtypes' dtype names, and the "eEmM" layout spelling.

Kept apart from :mod:`softfloat.formats` (which turns them into :class:`Format` values)
so that the name tables can be read without the class and the class without the tables.
Every table maps a name to a catalogue format's name; ``formats`` resolves those.
"""

from __future__ import annotations

import re

#: every other name of a catalogue format -> that format's catalogue name
ALIASES = {
    "float64": "fp64", "double": "fp64", "binary64": "fp64",
    "float32": "fp32", "single": "fp32", "binary32": "fp32",
    "float16": "fp16", "half": "fp16", "binary16": "fp16",
    "bfloat16": "bf16", "tensorfloat32": "tf32",
    "e4m3": "fp8_e4m3", "e4m3fn": "fp8_e4m3", "float8_e4m3fn": "fp8_e4m3", "fp8_e4m3fn": "fp8_e4m3",
    "e5m2": "fp8_e5m2", "float8_e5m2": "fp8_e5m2",
    "e4m3fnuz": "fp8_e4m3fnuz", "float8_e4m3fnuz": "fp8_e4m3fnuz",
    "e5m2fnuz": "fp8_e5m2fnuz", "float8_e5m2fnuz": "fp8_e5m2fnuz",
    "e3m2": "fp6_e3m2", "e3m2fn": "fp6_e3m2", "float6_e3m2fn": "fp6_e3m2", "fp6_e3m2fn": "fp6_e3m2",
    "e2m3": "fp6_e2m3", "e2m3fn": "fp6_e2m3", "float6_e2m3fn": "fp6_e2m3", "fp6_e2m3fn": "fp6_e2m3",
    "e2m1": "fp4_e2m1", "e2m1fn": "fp4_e2m1", "float4_e2m1fn": "fp4_e2m1", "fp4_e2m1fn": "fp4_e2m1",
}

#: ml_dtypes' float types that are softfloat formats (numpy's float16/32/64 aside), by
#: dtype name; each name is also one as_format reads (softfloat.interop maps both ways)
ML_DTYPES_FLOATS = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                    "float8_e5m2fnuz", "float8_e4m3", "float8_e3m4", "float6_e3m2fn",
                    "float6_e2m3fn", "float4_e2m1fn")

#: torch's floating dtypes, by the name after "torch." -> the catalogue name
TORCH_FLOATS = {
    "float64": "fp64", "double": "fp64", "float32": "fp32", "float": "fp32", "float16": "fp16",
    "half": "fp16", "bfloat16": "bf16", "float8_e4m3fn": "fp8_e4m3", "float8_e5m2": "fp8_e5m2",
    "float8_e4m3fnuz": "fp8_e4m3fnuz", "float8_e5m2fnuz": "fp8_e5m2fnuz",
}

#: a custom format by its layout: e<exponent bits>m<mantissa bits>[policy]
_LAYOUT = re.compile(r"^e([0-9]+)m([0-9]+)(fn|fnuz|finite)?$")


def key(text: str) -> str:
    """The form names are looked up in: case-insensitive, '-' read as '_'."""
    return text.strip().lower().replace("-", "_")


def layout(name_key: str) -> tuple[int, int, str] | None:
    """(exponent bits, mantissa bits, policy) of an "eEmM[policy]" name, else None."""
    found = _LAYOUT.match(name_key)
    return (int(found[1]), int(found[2]), found[3] or "ieee") if found else None


def default_name(exponent_bits: int, mantissa_bits: int, specials: str) -> str:
    """A format's name when none is given: its layout, "e5m2", plus a policy other than
    "ieee" ("e4m3fnuz") -- the spelling :func:`layout` reads back."""
    return f"e{exponent_bits}m{mantissa_bits}" + ("" if specials == "ieee" else specials)
