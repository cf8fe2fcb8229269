"""Helpers for lowering functions (``register_torch_lowering``).

A lowering function is called as ``fn(values_map, node, loc)``:
``values_map`` maps FX node names to Core AI ``Value``s (the results of a
node with several results are stored as ``"<name>#0"``, ``"<name>#1"``, ...),
``node`` is the ``torch.fx.Node`` being lowered and ``loc`` an
``ir.Location`` to pass to the builders.

``get_operand(values_map, node, index, loc)`` returns the ``Value`` of
``node.args[index]`` (an integer index) or of ``node.kwargs[index]`` (a
string); a Python number becomes a constant of the node's result dtype
(floats with an integer result become f32).  ``get_operands`` does the same
for a list of indices.
"""

from __future__ import annotations

import operator
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.fx as fx

from coreai._compiler import ir
from coreai._compiler.dialects import coreai

__all__ = [
    "get_operand",
    "get_operands",
    "get_extent",
    "ir_dtype",
    "node_meta",
    "node_shape",
    "node_dtype",
    "as_value",
]

_TORCH_TO_IR = {
    torch.float32: ir.f32,
    torch.float16: ir.f16,
    torch.bfloat16: ir.bf16,
    torch.float64: ir.f32,  # no f64 tensors in model format v1: narrowed
    torch.int64: ir.i64,
    torch.int32: ir.i32,
    torch.int16: ir.i32,
    torch.int8: ir.i32,
    torch.uint8: ir.i32,
    torch.bool: ir.bool_,
}


def ir_dtype(dtype: torch.dtype) -> "ir.DType":
    """The Core AI dtype holding a torch dtype (float64 -> f32, small ints -> i32)."""
    try:
        return _TORCH_TO_IR[dtype]
    except KeyError:
        raise ValueError(f"torch dtype {dtype} has no Core AI equivalent") from None


def node_meta(node: fx.Node) -> Tuple[Tuple[int, ...], torch.dtype]:
    """(shape, torch dtype) of a tensor-valued node, from its metadata; a
    symbolic size (``torch.export`` with ``dynamic_shapes``) is an
    ``ir.Dim``."""
    from ._symbolic import extent

    tm = node.meta.get("tensor_meta")
    if tm is not None and hasattr(tm, "shape"):
        return tuple(extent(d, f"node '{node.name}' dimension {i}") for i, d in enumerate(tm.shape)), tm.dtype
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        return tuple(extent(d, f"node '{node.name}' dimension {i}") for i, d in enumerate(val.shape)), val.dtype
    raise ValueError(f"node '{node.name}' ({node.format_node()}) has no tensor metadata")


def node_shape(node: fx.Node) -> Tuple[int, ...]:
    return node_meta(node)[0]


def node_dtype(node: fx.Node) -> torch.dtype:
    return node_meta(node)[1]


def _scalar_dtype(value: Any, like: Optional["ir.DType"]) -> "ir.DType":
    if isinstance(value, (bool, np.bool_)):
        return like if like is not None else ir.bool_
    if isinstance(value, (int, np.integer)):
        return like if like is not None else ir.i64
    if like is not None and like.is_float:
        return like
    return ir.f32


def as_value(values_map, arg: Any, dtype: Optional["ir.DType"] = None, loc=None) -> "ir.Value":
    """The Value of an FX argument (a node or a Python number), cast to
    ``dtype`` when given. A symbolic size (a ``SymInt`` node, an ``ir.Dim``)
    becomes a ``coreai.dim_value``, its value at run time."""
    if isinstance(arg, fx.Node):
        v = values_map[arg.name]
        if isinstance(v, (ir.Dim, ir.Symbol)):
            return coreai.dim_value(v, dtype if dtype is not None and dtype is not ir.bool_ else ir.i64, loc=loc)
        if isinstance(v, (int, float, bool)) and not isinstance(v, ir.Value):
            return as_value(values_map, v, dtype, loc)
        if not isinstance(v, ir.Value):
            raise ValueError(f"node '{arg.name}' is not a tensor value")
        if dtype is not None and v.type.element_type is not dtype:
            v = coreai.cast(v, dtype, loc=loc)
        return v
    if isinstance(arg, ir.Value):
        if dtype is not None and arg.type.element_type is not dtype:
            return coreai.cast(arg, dtype, loc=loc)
        return arg
    if isinstance(arg, (ir.Dim, ir.Symbol)):
        return coreai.dim_value(arg, dtype if dtype is not None and dtype is not ir.bool_ else ir.i64, loc=loc)
    if isinstance(arg, torch.Tensor):
        dt = dtype or ir_dtype(arg.dtype)
        return coreai.constant(arg.detach().to(torch.float32) if arg.dtype == torch.float64 else arg, dt, loc=loc)
    if isinstance(arg, (bool, int, float, np.number, np.bool_)):
        dt = _scalar_dtype(arg, dtype)
        return coreai.constant(np.array(arg).astype(dt.storage if dt is not ir.bf16 else np.float32), dt, loc=loc)
    raise ValueError(f"cannot use {arg!r} as a tensor operand")


def _arg(node: fx.Node, index: Union[int, str]):
    if isinstance(index, str):
        if index in node.kwargs:
            return node.kwargs[index]
        # a keyword given positionally
        schema = getattr(node.target, "_schema", None)
        if schema is not None:
            for i, a in enumerate(schema.arguments):
                if a.name == index and i < len(node.args):
                    return node.args[i]
        raise KeyError(f"node '{node.name}' has no argument '{index}'")
    return node.args[index]


def get_operand(values_map, node: fx.Node, index: Union[int, str], loc=None) -> "ir.Value":
    """The Value of ``node.args[index]`` (or ``node.kwargs[index]``)."""
    arg = _arg(node, index)
    like = None
    try:
        like = ir_dtype(node_dtype(node))
    except Exception:  # noqa: BLE001 - nodes without (single) tensor metadata
        like = None
    if isinstance(arg, fx.Node):
        return as_value(values_map, arg, None, loc)
    return as_value(values_map, arg, like if isinstance(arg, (int, float)) and not isinstance(arg, bool) else None, loc)


def get_extent(values_map, node: fx.Node, index: Union[int, str]):
    """``node.args[index]`` (or ``node.kwargs[index]``) as a size: an int, or
    an ``ir.Dim`` when it is a symbolic size of the export (``torch.export``
    with ``dynamic_shapes``), e.g. a cache offset ``ctx - seq``."""
    arg = _arg(node, index)
    if isinstance(arg, fx.Node):
        v = values_map[arg.name]
        if isinstance(v, (int, ir.Dim)):
            return v
        raise ValueError(f"argument {index!r} of node '{node.name}' is not a size (got {v!r})")
    from ._symbolic import extent

    return extent(arg, f"argument {index!r} of node '{node.name}'")


def get_operands(values_map, node: fx.Node, indices: Sequence[Union[int, str]], loc=None) -> List["ir.Value"]:
    """``[get_operand(values_map, node, i, loc) for i in indices]``."""
    return [get_operand(values_map, node, i, loc) for i in indices]


def is_getitem(node: fx.Node) -> bool:
    return node.op == "call_function" and node.target is operator.getitem
