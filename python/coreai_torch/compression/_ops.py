"""The compression ops as ``torch.library`` custom ops (``torch.ops.coreai.*``).

Each op has an eager implementation (the reference numbers) and a fake
kernel (shapes and dtypes for ``torch.export``, which keeps the op as one
node); both run the same argument checks, so a model with a scale that does
not divide its data fails while it is being exported, not at conversion.

Semantics (docs/compression.md):

* ``constexpr_blockwise_shift_scale(input, scale, zero_point=None,
  minval=None, input_dtype=None, output_dtype=None)``: integer data
  (int8 / uint8 tensors; ``input_dtype`` torch.int4 / torch.uint4 marks
  4-bit values held in them) dequantized with a scale of the data's rank
  whose extents divide the data's (one scale per block):
  ``(input - zero_point) * scale``, ``(input - q_min) * scale + minval`` or
  ``input * scale``, computed in the scale's dtype;
* ``lut_to_dense(indices, lut, axis)``: palettized data; ``lut`` has shape
  ``[groups per axis of indices..., 2**nbits, vector_size]``;
* ``quantize(input, scale, output_dtype, zero_point=None, minval=None,
  axis=0)``: ``clamp(round_half_even(input / scale) + zero_point, q_min,
  q_max)`` (or ``(input - minval) / scale`` and ``+ q_min``), int8 / uint8;
* ``dequantize(input, scale, zero_point=None, minval=None, axis=0,
  input_dtype=None, output_dtype=None)``: the per-tensor / per-axis inverse.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import torch

__all__ = [
    "constexpr_blockwise_shift_scale",
    "lut_to_dense",
    "quantize",
    "dequantize",
    "int_range",
    "PALETTE_NBITS",
]

_FLOATS = (torch.float32, torch.float16, torch.bfloat16)
# logical dtypes of quantized data and the container each is held in
_LOGICAL = {torch.int8: torch.int8, torch.uint8: torch.uint8, torch.int4: torch.int8, torch.uint4: torch.uint8}
_BITS = {torch.int8: 8, torch.uint8: 8, torch.int4: 4, torch.uint4: 4}
#: index widths lut_to_dense accepts (2**nbits palettes); 3-bit indices have no packed layout
PALETTE_NBITS = (1, 2, 4, 6, 8)
_LUT_DTYPES = _FLOATS + (torch.int8, torch.uint8)


def int_range(dtype: torch.dtype) -> tuple:
    """(q_min, q_max) of int8, uint8, int4 or uint4."""
    bits = _BITS[dtype]
    if dtype in (torch.int8, torch.int4):
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def _check_logical(op: str, input: torch.Tensor, input_dtype: Optional[torch.dtype]) -> torch.dtype:
    """The logical dtype of integer data: input_dtype, else the tensor's."""
    if input.dtype not in (torch.int8, torch.uint8):
        raise ValueError(f"coreai::{op}: input is {_name(input.dtype)}; coreai-codegen dequantizes integer data "
                         "held in int8 / uint8 tensors (int4 / uint4 values with input_dtype=torch.int4 / "
                         "torch.uint4)")
    if input_dtype is None:
        return input.dtype
    if input_dtype not in _LOGICAL:
        raise ValueError(f"coreai::{op}: input_dtype {_name(input_dtype)} is not supported (int8, uint8, int4, "
                         "uint4)")
    if _LOGICAL[input_dtype] != input.dtype:
        raise ValueError(f"coreai::{op}: input_dtype {_name(input_dtype)} values are held in "
                         f"{_name(_LOGICAL[input_dtype])} tensors, but input is {_name(input.dtype)}")
    return input_dtype


def _check_values(op: str, what: str, t: torch.Tensor, dtype: torch.dtype) -> None:
    """Eager only: integer values of t inside dtype's range (fake tensors have none)."""
    if t.device.type == "meta" or t.numel() == 0 or _BITS[dtype] == 8:
        return
    lo, hi = int_range(dtype)
    tmin, tmax = int(t.min()), int(t.max())
    if tmin < lo or tmax > hi:
        raise ValueError(f"coreai::{op}: {what} holds values in [{tmin}, {tmax}], outside the "
                         f"{_name(dtype)} range [{lo}, {hi}]")


def _check_float(op: str, what: str, t: torch.Tensor) -> None:
    if t.dtype not in _FLOATS:
        raise ValueError(f"coreai::{op}: {what} is {_name(t.dtype)}; it must be float32, float16 or bfloat16")


def _check_offsets(op: str, scale: torch.Tensor, zero_point, minval, zp_dtype, mv_dtype) -> None:
    if zero_point is not None and minval is not None:
        raise ValueError(f"coreai::{op}: zero_point and minval exclude each other; pass at most one")
    if zero_point is not None:
        if zp_dtype is not None and zero_point.dtype != zp_dtype:
            raise ValueError(f"coreai::{op}: zero_point is {_name(zero_point.dtype)} but must be "
                             f"{_name(zp_dtype)} (the quantized data's dtype)")
        if zero_point.shape != scale.shape:
            raise ValueError(f"coreai::{op}: zero_point shape {list(zero_point.shape)} differs from the scale "
                             f"shape {list(scale.shape)}")
    if minval is not None:
        if minval.dtype != mv_dtype:
            raise ValueError(f"coreai::{op}: minval is {_name(minval.dtype)} but must be {_name(mv_dtype)}")
        if minval.shape != scale.shape:
            raise ValueError(f"coreai::{op}: minval shape {list(minval.shape)} differs from the scale shape "
                             f"{list(scale.shape)}")


def _check_result_dtype(op: str, output_dtype, scale: torch.Tensor) -> None:
    if output_dtype is not None and output_dtype != scale.dtype:
        raise ValueError(f"coreai::{op}: output_dtype {_name(output_dtype)} differs from the scale's "
                         f"{_name(scale.dtype)}; integer dequantization gives the scale's dtype (cast the "
                         "result, or store the scale in the dtype you want)")


def _repeat_blocks(t: torch.Tensor, shape: Sequence[int]) -> torch.Tensor:
    for axis, (d, b) in enumerate(zip(shape, t.shape)):
        if b != d:
            t = torch.repeat_interleave(t, d // b, dim=axis)
    return t


# ---------------------------------------------------------------------------
# constexpr_blockwise_shift_scale
# ---------------------------------------------------------------------------

def _check_blockwise(input, scale, zero_point, minval, input_dtype, output_dtype) -> torch.dtype:
    op = "constexpr_blockwise_shift_scale"
    logical = _check_logical(op, input, input_dtype)
    _check_float(op, "scale", scale)
    if scale.dim() != input.dim():
        raise ValueError(f"coreai::{op}: scale has rank {scale.dim()} but input has rank {input.dim()}; a "
                         "blockwise scale has the data's rank")
    for axis, (d, b) in enumerate(zip(input.shape, scale.shape)):
        if b < 1 or d % b:
            raise ValueError(f"coreai::{op}: scale shape {list(scale.shape)} does not divide input shape "
                             f"{list(input.shape)} (axis {axis}: {d} is not a multiple of {b})")
    _check_offsets(op, scale, zero_point, minval, input.dtype, scale.dtype)
    if minval is not None and input_dtype is None:
        raise ValueError(f"coreai::{op}: minval needs input_dtype (q_min depends on the logical dtype: int4 "
                         "values are held in int8 tensors)")
    _check_result_dtype(op, output_dtype, scale)
    return logical


@torch.library.custom_op("coreai::constexpr_blockwise_shift_scale", mutates_args=())
def constexpr_blockwise_shift_scale(input: torch.Tensor, scale: torch.Tensor,
                                    zero_point: Optional[torch.Tensor] = None,
                                    minval: Optional[torch.Tensor] = None,
                                    input_dtype: Optional[torch.dtype] = None,
                                    output_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    logical = _check_blockwise(input, scale, zero_point, minval, input_dtype, output_dtype)
    _check_values("constexpr_blockwise_shift_scale", "input", input, logical)
    if zero_point is not None:
        _check_values("constexpr_blockwise_shift_scale", "zero_point", zero_point, logical)
    s = _repeat_blocks(scale, input.shape)
    q = input.to(scale.dtype)
    if zero_point is not None:
        return (q - _repeat_blocks(zero_point, input.shape)) * s
    if minval is not None:
        return (q - int_range(logical)[0]) * s + _repeat_blocks(minval, input.shape)
    return q * s


@constexpr_blockwise_shift_scale.register_fake
def _(input, scale, zero_point=None, minval=None, input_dtype=None, output_dtype=None):
    _check_blockwise(input, scale, zero_point, minval, input_dtype, output_dtype)
    return input.new_empty(input.shape, dtype=scale.dtype)


# ---------------------------------------------------------------------------
# lut_to_dense
# ---------------------------------------------------------------------------

def _check_lut(indices, lut, axis) -> tuple:
    """(nbits, normalized axis, result dtype)."""
    op = "lut_to_dense"
    if indices.dtype.is_floating_point or indices.dtype == torch.bool or indices.dtype.is_complex:
        raise ValueError(f"coreai::{op}: indices are {_name(indices.dtype)}; they must be integers (uint8)")
    k = indices.dim()
    if k < 1:
        raise ValueError(f"coreai::{op}: indices must have rank >= 1")
    if lut.dim() != k + 2:
        raise ValueError(f"coreai::{op}: lut has rank {lut.dim()}; indices of rank {k} need a lut of rank {k + 2} "
                         "([groups per axis..., 2**nbits, vector_size])")
    dtype = torch.float32 if lut.dtype == torch.float64 else lut.dtype
    if dtype not in _LUT_DTYPES:
        raise ValueError(f"coreai::{op}: lut is {_name(lut.dtype)}; it must be float32, float16, bfloat16, int8 or "
                         "uint8")
    palettes = lut.shape[-2]
    nbits = int(math.log2(palettes)) if palettes > 0 else -1
    if palettes < 1 or (1 << nbits) != palettes:
        raise ValueError(f"coreai::{op}: lut has {palettes} palettes (shape[-2]); it must be a power of two")
    if nbits not in PALETTE_NBITS:
        raise ValueError(f"coreai::{op}: {nbits}-bit indices ({palettes} palettes) are not supported; use "
                         f"{', '.join(map(str, PALETTE_NBITS))} bits")
    if lut.shape[-1] < 1:
        raise ValueError(f"coreai::{op}: lut's vector size (shape[-1]) must be >= 1")
    for i in range(k):
        g = lut.shape[i]
        if g < 1 or indices.shape[i] % g:
            raise ValueError(f"coreai::{op}: lut shape {list(lut.shape)} does not divide indices shape "
                             f"{list(indices.shape)} (axis {i}: {indices.shape[i]} is not a multiple of {g})")
    if not -k <= axis < k:
        raise ValueError(f"coreai::{op}: axis {axis} is out of range for indices of rank {k}")
    return nbits, axis % k, dtype


@torch.library.custom_op("coreai::lut_to_dense", mutates_args=())
def lut_to_dense(indices: torch.Tensor, lut: torch.Tensor, axis: int) -> torch.Tensor:
    _, axis, dtype = _check_lut(indices, lut, axis)
    palettes, vs = lut.shape[-2], lut.shape[-1]
    if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= palettes):
        raise ValueError(f"coreai::lut_to_dense: indices hold values in [{int(indices.min())}, "
                         f"{int(indices.max())}], outside [0, {palettes})")
    lut = lut.to(dtype)
    k = indices.dim()
    index = []
    for i in range(k):
        block = indices.shape[i] // lut.shape[i]
        shape = [1] * k
        shape[i] = indices.shape[i]
        index.append((torch.arange(indices.shape[i]) // block).reshape(shape))
    index.append(indices.long())
    gathered = lut[tuple(index)]                      # indices.shape + [vs]
    out_shape = list(indices.shape)
    out_shape[axis] *= vs
    return torch.movedim(gathered, -1, axis + 1).reshape(out_shape).contiguous()


@lut_to_dense.register_fake
def _(indices, lut, axis):
    _, axis, dtype = _check_lut(indices, lut, axis)
    shape = list(indices.shape)
    shape[axis] *= lut.shape[-1]
    return lut.new_empty(shape, dtype=dtype)


# ---------------------------------------------------------------------------
# quantize / dequantize (per tensor or per axis)
# ---------------------------------------------------------------------------

def _check_per_axis(op: str, input: torch.Tensor, scale: torch.Tensor, axis: int) -> int:
    """The normalized axis; the scale is per tensor (one element) or per axis."""
    if not (-input.dim() <= axis < max(input.dim(), 1)):
        raise ValueError(f"coreai::{op}: axis {axis} is out of range for input of rank {input.dim()}")
    axis = axis % input.dim() if input.dim() else 0
    if scale.numel() == 1:
        return axis
    if input.dim() == 0 or scale.numel() != input.shape[axis]:
        raise ValueError(f"coreai::{op}: scale has {scale.numel()} elements; a per-tensor scale has 1 and a "
                         f"per-axis scale one per slice of axis {axis} of input shape {list(input.shape)}")
    if scale.dim() > 1:
        want = [1] * input.dim()
        want[axis] = input.shape[axis]
        if list(scale.shape) != want:
            raise ValueError(f"coreai::{op}: scale shape {list(scale.shape)} does not lie along axis {axis} of "
                             f"input shape {list(input.shape)} (expected {want} or [{input.shape[axis]}])")
    return axis


def _along(t: Optional[torch.Tensor], rank: int, axis: int) -> Optional[torch.Tensor]:
    if t is None or t.dim() > 1:
        return t
    shape = [1] * rank
    if rank:
        shape[axis] = t.numel()
    return t.reshape(shape) if t.numel() != 1 or rank else t.reshape(())


def _check_quantize(input, scale, output_dtype, zero_point, minval, axis) -> int:
    op = "quantize"
    if output_dtype not in (torch.int8, torch.uint8):
        raise ValueError(f"coreai::{op}: output_dtype {_name(output_dtype)} is not supported; activations are "
                         "quantized to int8 or uint8")
    _check_float(op, "input", input)
    _check_float(op, "scale", scale)
    if zero_point is not None and (zero_point.dtype.is_floating_point or zero_point.dtype == torch.bool):
        raise ValueError(f"coreai::{op}: zero_point is {_name(zero_point.dtype)}; it must hold integers")
    _check_offsets(op, scale, zero_point, minval, None, input.dtype)
    return _check_per_axis(op, input, scale, axis)


@torch.library.custom_op("coreai::quantize", mutates_args=())
def quantize(input: torch.Tensor, scale: torch.Tensor, output_dtype: torch.dtype,
             zero_point: Optional[torch.Tensor] = None, minval: Optional[torch.Tensor] = None,
             axis: int = 0) -> torch.Tensor:
    axis = _check_quantize(input, scale, output_dtype, zero_point, minval, axis)
    if zero_point is not None:
        _check_values("quantize", "zero_point", zero_point, output_dtype)
    lo, hi = int_range(output_dtype)
    rank = input.dim()
    scale = _along(scale, rank, axis)
    if zero_point is not None:
        y = torch.round(input / scale) + _along(zero_point, rank, axis)
    elif minval is not None:
        y = torch.round((input - _along(minval, rank, axis)) / scale) + lo
    else:
        y = torch.round(input / scale)
    return torch.clamp(y, lo, hi).to(output_dtype)


@quantize.register_fake
def _(input, scale, output_dtype, zero_point=None, minval=None, axis=0):
    _check_quantize(input, scale, output_dtype, zero_point, minval, axis)
    return input.new_empty(input.shape, dtype=output_dtype)


def _check_dequantize(input, scale, zero_point, minval, axis, input_dtype, output_dtype) -> tuple:
    op = "dequantize"
    logical = _check_logical(op, input, input_dtype)
    _check_float(op, "scale", scale)
    _check_offsets(op, scale, zero_point, minval, input.dtype, scale.dtype)
    if minval is not None and input_dtype is None:
        raise ValueError(f"coreai::{op}: minval needs input_dtype (q_min depends on the logical dtype)")
    _check_result_dtype(op, output_dtype, scale)
    return logical, _check_per_axis(op, input, scale, axis)


@torch.library.custom_op("coreai::dequantize", mutates_args=())
def dequantize(input: torch.Tensor, scale: torch.Tensor, zero_point: Optional[torch.Tensor] = None,
               minval: Optional[torch.Tensor] = None, axis: int = 0,
               input_dtype: Optional[torch.dtype] = None,
               output_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    logical, axis = _check_dequantize(input, scale, zero_point, minval, axis, input_dtype, output_dtype)
    _check_values("dequantize", "input", input, logical)
    rank = input.dim()
    s = _along(scale, rank, axis)
    q = input.to(scale.dtype)
    if zero_point is not None:
        return (q - _along(zero_point, rank, axis)) * s
    if minval is not None:
        return (q - int_range(logical)[0]) * s + _along(minval, rank, axis)
    return q * s


@dequantize.register_fake
def _(input, scale, zero_point=None, minval=None, axis=0, input_dtype=None, output_dtype=None):
    _check_dequantize(input, scale, zero_point, minval, axis, input_dtype, output_dtype)
    return input.new_empty(input.shape, dtype=scale.dtype)
