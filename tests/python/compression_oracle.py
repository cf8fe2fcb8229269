"""An independent oracle for the compression ops: the documented semantics
(docs/compression.md) written as plain scalar loops in Python doubles, each
IEEE operation rounded explicitly to its dtype. It shares no code with the
eager ops (coreai_torch/compression/_ops.py), the NumPy interpreter
(coreai/_compiler/evaluate.py) or the C kernels (runtime-stubs/src/quant.c).

Rounding from a double: f32 and f16 by NumPy's correctly rounded casts, bf16
by hand (round to nearest even on the f32 bit pattern; the f32 step cannot
change the result of one +, -, *, / of 8-bit-significand inputs, since
24 >= 2 * 8 + 2). Values come back as doubles.
"""
from __future__ import annotations

import itertools
import math

import numpy as np


def round_to(x: float, dtype: str) -> float:
    if dtype == "f32":
        return float(np.float32(x))
    if dtype == "f16":
        return float(np.float16(x))
    if dtype == "bf16":
        bits = int(np.array([x], dtype=np.float32).view(np.uint32)[0])
        if (bits & 0x7FFFFFFF) > 0x7F800000:
            return float("nan")
        lsb = (bits >> 16) & 1
        bits = (bits + 0x7FFF + lsb) & 0xFFFF0000
        return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])
    raise ValueError(dtype)


def int_range(bits: int, signed: bool) -> tuple:
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def blockwise(data, scale, dtype: str, zero_point=None, minval=None, qmin: int = 0) -> np.ndarray:
    """(q - zp) * s, or (q - qmin) * s + minval, or q * s; s of data's rank, repeated per block."""
    data = np.asarray(data)
    scale = np.asarray(scale, dtype=np.float64)
    out = np.empty(data.shape, dtype=np.float64)
    blocks = [d // s for d, s in zip(data.shape, scale.shape)]
    for pos in itertools.product(*(range(d) for d in data.shape)):
        g = tuple(p // b for p, b in zip(pos, blocks))
        q = int(data[pos])
        s = float(scale[g])
        if zero_point is not None:
            y = round_to((q - int(np.asarray(zero_point)[g])) * s, dtype)
        elif minval is not None:
            y = round_to(round_to((q - qmin) * s, dtype) + float(np.asarray(minval, dtype=np.float64)[g]), dtype)
        else:
            y = round_to(q * s, dtype)
        out[pos] = y
    return out


def _per_axis_index(pos, axis, n):
    return () if n is None else (pos[axis],)


def dequantize(data, scale, dtype: str, axis: int = 0, zero_point=None, minval=None, qmin: int = 0):
    """blockwise with a scale of one value (per tensor) or one per slice of axis."""
    data = np.asarray(data)
    scale = np.asarray(scale, dtype=np.float64).reshape(-1)
    axis = axis % data.ndim if data.ndim else 0
    full = [1] * data.ndim
    if scale.size > 1:
        full[axis] = scale.size
    expand = (lambda t: None if t is None else np.asarray(t).reshape(full))
    return blockwise(data, scale.reshape(full), dtype, expand(zero_point), expand(minval), qmin)


def quantize(x, scale, dtype: str, bits: int, signed: bool, axis: int = 0, zero_point=None, minval=None):
    """clamp(round_half_even((x [- minval]) / s) + zp | + q_min), each float op rounded to dtype."""
    x = np.asarray(x, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64).reshape(-1)
    lo, hi = int_range(bits, signed)
    axis = axis % x.ndim if x.ndim else 0
    out = np.empty(x.shape, dtype=np.int64)
    for pos in itertools.product(*(range(d) for d in x.shape)):
        c = pos[axis] if scale.size > 1 else 0
        s = float(scale[c])
        v = float(x[pos])
        if minval is not None:
            v = round_to(v - float(np.asarray(minval, dtype=np.float64).reshape(-1)[c]), dtype)
        t = round_to(v / s, dtype) if s != 0 else math.copysign(math.inf, v) if v != 0 else math.nan
        if math.isnan(t):
            out[pos] = 0
            continue
        r = float(np.rint(t))  # round half to even
        if zero_point is not None:
            r += int(np.asarray(zero_point).reshape(-1)[c])
        elif minval is not None:
            r += lo
        out[pos] = int(min(max(r, lo), hi))
    return out


def lut_to_dense(indices, lut, axis: int) -> np.ndarray:
    """lut[group(pos)..., index, v] written at pos with pos[axis] * vs + v."""
    indices = np.asarray(indices)
    lut = np.asarray(lut, dtype=np.float64)
    k = indices.ndim
    vs = lut.shape[-1]
    axis %= k
    shape = list(indices.shape)
    shape[axis] *= vs
    out = np.empty(shape, dtype=np.float64)
    blocks = [d // g for d, g in zip(indices.shape, lut.shape[:k])]
    for pos in itertools.product(*(range(d) for d in indices.shape)):
        g = tuple(p // b for p, b in zip(pos, blocks))
        for v in range(vs):
            o = list(pos)
            o[axis] = pos[axis] * vs + v
            out[tuple(o)] = lut[g + (int(indices[pos]), v)]
    return out


def pack(values, bits: int) -> bytes:
    """The packed layout, spelled out: element i's bit b is stream bit i*bits+b, stream bit j is bit j%8 of byte j//8."""
    values = [int(v) & ((1 << bits) - 1) for v in np.asarray(values).reshape(-1)]
    out = bytearray((len(values) * bits + 7) // 8)
    for i, v in enumerate(values):
        for b in range(bits):
            if (v >> b) & 1:
                j = i * bits + b
                out[j // 8] |= 1 << (j % 8)
    return bytes(out)
