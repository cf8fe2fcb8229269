"""Number spellings: the textual IR's (generator/src/print_number.c) and the
model file's (exact, round-tripping through strtod)."""
from __future__ import annotations

import math

import numpy as np


def _strip_exponent_zeros(s: str) -> str:
    e = s.find("E")
    if e < 0:
        e = s.find("e")
    if e < 0:
        return s
    head, digits = s[: e + 1], s[e + 1:]
    sign = ""
    if digits[:1] in "+-" and digits:
        sign, digits = digits[0], digits[1:]
    stripped = digits.lstrip("0") or "0"
    return head + sign + stripped


def format_f32(value: float) -> str:
    """An f32 value (given as its exact double) like coreai-gen print: nine
    significant digits, truncated; infinities and NaN as bit patterns."""
    value = float(value)
    if math.isnan(value):
        return "0x7FC00000"
    if math.isinf(value):
        return "0x7F800000" if value > 0 else "0xFF800000"
    exact = "%.120E" % value
    e = exact.index("E")
    mantissa = 11 if exact[0] == "-" else 10
    return _strip_exponent_zeros(exact[:mantissa] + exact[e:])


def format_f64(value: float) -> str:
    value = float(value)
    if math.isnan(value):
        return "0x7FF8000000000000"
    if math.isinf(value):
        return "0x7FF0000000000000" if value > 0 else "0xFFF0000000000000"
    s = "%.17g" % value
    if "." not in s and "e" not in s:
        s += ".0"
    return _strip_exponent_zeros(s)


def xml_float(value: float) -> str:
    """A float for the model file: the shortest text that reads back (via
    strtod) as exactly this double. For an f32/f16/bf16 value given as its
    exact double, the loader's rounding to the narrow type is then exact."""
    value = float(value)
    if math.isnan(value):
        raise ValueError("NaN cannot be written as text in a model file")
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def f32_round(value: float) -> float:
    """The nearest f32 value, as a Python float (raises on f32 overflow)."""
    v = float(value)
    with np.errstate(over="ignore"):
        f = float(np.float32(v))
    if math.isinf(f) and not math.isinf(v):
        raise ValueError(f"{v!r} is out of range for f32")
    return f
