"""Lowerings of the compression ops (``torch.ops.coreai.*``,
coreai_torch/compression/_ops.py) to the model format's ops
(docs/model-format.md, "Compression").

* ``constexpr_blockwise_shift_scale`` -> ``coreai.blockwise_shift_scale``:
  constant data become an i8 / u8 / i4 / u4 constant (``input_dtype`` when
  given; else the narrowest of 4 and 8 bits that holds the data and the zero
  point, signed as the tensor's dtype), packed in the weights file;
* ``lut_to_dense`` -> ``coreai.lut_to_dense``: the indices become a
  u1 / u2 / u4 / u6 / u8 constant (nbits = log2 of the palette count);
* ``quantize`` / ``dequantize`` -> ``coreai.quantize`` / ``coreai.dequantize``
  with a scale of rank 0 or 1.

zero_point becomes the op's offset operand; minval becomes the offset q_min
(a constant) followed by the minval operand.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch
import torch.fx as fx

from coreai._compiler import ir
from coreai._compiler.dialects import coreai

from .compression import _ops
from ._utils import node_meta

__all__ = ["COMPRESSION_LOWERINGS", "COMPRESSION_OPS"]

_IR_QUANT = {torch.int8: ir.i8, torch.uint8: ir.u8, torch.int4: ir.i4, torch.uint4: ir.u4}
_INDEX_DTYPE = {1: ir.u1, 2: ir.u2, 4: ir.u4, 6: ir.u6, 8: ir.u8}


class CompressionError(NotImplementedError):
    """Raised with the op's own message; the converter adds the node's file:line."""


def _arg(node: fx.Node, index: int, name: str, default: Any = None) -> Any:
    if name in node.kwargs:
        return node.kwargs[name]
    if index < len(node.args):
        return node.args[index]
    return default


def _meta(a: Any) -> Optional[torch.Tensor]:
    """A meta tensor with a node's shape and dtype (None for None)."""
    if a is None:
        return None
    shape, dt = node_meta(a)
    return torch.empty(shape, dtype=dt, device="meta")


def _check(fn, *args) -> Any:
    try:
        return fn(*args)
    except ValueError as e:
        raise CompressionError(str(e)) from None


def _tensor(vm, a: fx.Node) -> Optional[torch.Tensor]:
    """The tensor of a parameter, buffer or folded constant; None for a computed value."""
    t = vm.tensor_of(a.name) if hasattr(vm, "tensor_of") else None
    return t.detach().cpu() if isinstance(t, torch.Tensor) else None


def _int_constant(vm, a: fx.Node, dtype: "ir.DType", what: str, op: str, loc) -> "ir.Value":
    """An integer operand as a constant of dtype, its values checked against dtype's range."""
    t = _tensor(vm, a)
    if t is not None:
        arr = t.numpy()
    else:
        v = vm[a.name]
        if not (isinstance(v, ir.Value) and v.is_constant):
            raise CompressionError(f"coreai::{op}: {what} ('{a.name}') must be a constant (a parameter or buffer)")
        arr = np.asarray(v.constant_value)
    lo, hi = dtype.int_range
    if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
        raise CompressionError(f"coreai::{op}: {what} ('{a.name}') holds values in [{int(arr.min())}, "
                               f"{int(arr.max())}], outside the {dtype} range [{lo}, {hi}]")
    return coreai.constant(arr.astype(np.int64), dtype, loc=loc)


def _narrowest(arrays, signed: bool) -> "ir.DType":
    """i4 / u4 when every value fits 4 bits, else i8 / u8."""
    lo, hi = (ir.i4 if signed else ir.u4).int_range
    for arr in arrays:
        if arr is not None and arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
            return ir.i8 if signed else ir.u8
    return ir.i4 if signed else ir.u4


def _float_value(vm, a: fx.Node, op: str, what: str) -> "ir.Value":
    t = _tensor(vm, a)
    if t is not None and t.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise CompressionError(f"coreai::{op}: {what} is {t.dtype}; it must be float32, float16 or bfloat16")
    return vm[a.name]


def _reshaped(v: "ir.Value", shape, loc) -> "ir.Value":
    return v if tuple(v.type.shape) == tuple(shape) else coreai.reshape(v, list(shape), loc=loc)


def _qmin(dtype: "ir.DType", shape, loc) -> "ir.Value":
    return coreai.constant(np.full(shape, dtype.int_range[0], dtype=np.int64), dtype, loc=loc)


def _lower_blockwise(vm, node: fx.Node, loc) -> "ir.Value":
    op = "constexpr_blockwise_shift_scale"
    inp, scale = _arg(node, 0, "input"), _arg(node, 1, "scale")
    zp, mv = _arg(node, 2, "zero_point"), _arg(node, 3, "minval")
    input_dtype, output_dtype = _arg(node, 4, "input_dtype"), _arg(node, 5, "output_dtype")
    _check(_ops._check_blockwise, _meta(inp), _meta(scale), _meta(zp), _meta(mv), input_dtype, output_dtype)
    data_t = _tensor(vm, inp)
    if data_t is not None:
        signed = data_t.dtype == torch.int8
        if input_dtype is not None:
            dt = _IR_QUANT[input_dtype]
        else:
            zp_t = _tensor(vm, zp) if zp is not None else None
            dt = _narrowest([data_t.numpy(), zp_t.numpy() if zp_t is not None else None], signed)
        data = _int_constant(vm, inp, dt, "input", op, loc)
    else:
        data = vm[inp.name]
        if data.type.element_type not in (ir.i8, ir.u8):
            raise CompressionError(f"coreai::{op}: input ('{inp.name}') is {data.type}; computed data must be an "
                                   "int8 / uint8 result of another compression op (lut_to_dense, quantize)")
        dt = data.type.element_type
    scale_v = _float_value(vm, scale, op, "scale")
    extra = []
    if zp is not None:
        extra = [_int_constant(vm, zp, dt, "zero_point", op, loc)]
    elif mv is not None:
        logical = _IR_QUANT[input_dtype]
        # q_min of the logical dtype, held in the data's dtype (int4 values computed as int8 keep -8)
        extra = [coreai.constant(np.full(scale_v.type.shape, logical.int_range[0], dtype=np.int64), dt, loc=loc),
                 _float_value(vm, mv, op, "minval")]
    return coreai.blockwise_shift_scale(data, scale_v, *extra, loc=loc)


def _lower_lut_to_dense(vm, node: fx.Node, loc) -> "ir.Value":
    op = "lut_to_dense"
    indices, lut, axis = _arg(node, 0, "indices"), _arg(node, 1, "lut"), _arg(node, 2, "axis")
    nbits, axis, _ = _check(_ops._check_lut, _meta(indices), _meta(lut), int(axis))
    idx = _int_constant(vm, indices, _INDEX_DTYPE[nbits], "indices", op, loc)
    lut_t = _tensor(vm, lut)
    if lut_t is not None and lut_t.dtype in (torch.int8, torch.uint8):
        lut_v = coreai.constant(lut_t.numpy().astype(np.int64), _IR_QUANT[lut_t.dtype], loc=loc)
    else:
        lut_v = vm[lut.name]
    return coreai.lut_to_dense(idx, lut_v, axis, loc=loc)


def _per_axis(v: "ir.Value", n_elements: int, loc) -> "ir.Value":
    return _reshaped(v, [] if n_elements == 1 else [n_elements], loc)


def _lower_quantize(vm, node: fx.Node, loc) -> "ir.Value":
    op = "quantize"
    inp, scale, out_dtype = _arg(node, 0, "input"), _arg(node, 1, "scale"), _arg(node, 2, "output_dtype")
    zp, mv, axis = _arg(node, 3, "zero_point"), _arg(node, 4, "minval"), _arg(node, 5, "axis", 0)
    axis = _check(_ops._check_quantize, _meta(inp), _meta(scale), out_dtype, _meta(zp), _meta(mv), int(axis))
    x = vm[inp.name]
    s = _float_value(vm, scale, op, "scale")
    if s.type.element_type is not x.type.element_type:
        if x.type.element_type is not ir.f32:
            raise CompressionError(f"coreai::{op}: the scale is {s.type.element_type} but the input is "
                                   f"{x.type.element_type}; store the scale in the input's dtype")
        s = coreai.cast(s, ir.f32, loc=loc)  # exact: f16 / bf16 values are f32 values, as PyTorch promotes
    n = s.type.numel
    s = _per_axis(s, n, loc)
    rdt = _IR_QUANT[out_dtype]
    extra = []
    if zp is not None:
        extra = [_per_axis(_int_constant(vm, zp, rdt, "zero_point", op, loc), n, loc)]
    elif mv is not None:
        extra = [_qmin(rdt, s.type.shape, loc), _per_axis(vm[mv.name], n, loc)]
    return coreai.quantize(x, s, rdt, *extra, axis=axis, loc=loc)


def _lower_dequantize(vm, node: fx.Node, loc) -> "ir.Value":
    op = "dequantize"
    inp, scale, zp = _arg(node, 0, "input"), _arg(node, 1, "scale"), _arg(node, 2, "zero_point")
    mv, axis = _arg(node, 3, "minval"), _arg(node, 4, "axis", 0)
    input_dtype, output_dtype = _arg(node, 5, "input_dtype"), _arg(node, 6, "output_dtype")
    _, axis = _check(_ops._check_dequantize, _meta(inp), _meta(scale), _meta(zp), _meta(mv), int(axis), input_dtype,
                     output_dtype)
    data_t = _tensor(vm, inp)
    if data_t is not None:
        dt = _IR_QUANT[input_dtype if input_dtype is not None else data_t.dtype]
        x = _int_constant(vm, inp, dt, "input", op, loc)
    else:
        x = vm[inp.name]
        dt = x.type.element_type
        if dt not in (ir.i8, ir.u8):
            raise CompressionError(f"coreai::{op}: input ('{inp.name}') is {x.type}; computed input must be an "
                                   "int8 / uint8 result of coreai::quantize (or a model input of that dtype)")
    s = _float_value(vm, scale, op, "scale")
    n = s.type.numel
    s = _per_axis(s, n, loc)
    extra = []
    if zp is not None:
        extra = [_per_axis(_int_constant(vm, zp, dt, "zero_point", op, loc), n, loc)]
    elif mv is not None:
        logical = _IR_QUANT[input_dtype]
        extra = [coreai.constant(np.full(s.type.shape, logical.int_range[0], dtype=np.int64), dt, loc=loc),
                 _per_axis(_float_value(vm, mv, op, "minval"), n, loc)]
    return coreai.dequantize(x, s, *extra, axis=axis, loc=loc)


COMPRESSION_LOWERINGS = {
    "coreai::constexpr_blockwise_shift_scale.default": _lower_blockwise,
    "coreai::lut_to_dense.default": _lower_lut_to_dense,
    "coreai::quantize.default": _lower_quantize,
    "coreai::dequantize.default": _lower_dequantize,
}
COMPRESSION_OPS = frozenset(COMPRESSION_LOWERINGS)
