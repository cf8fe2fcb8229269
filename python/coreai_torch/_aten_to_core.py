"""Built-in lowerings: ATen ops -> ``coreai`` builder calls.

Every lowering has the public calling convention ``fn(values_map, node,
loc)`` and returns a ``Value``, a list of them (``None`` for results that
are not needed) or ``None`` (no tensor result).  ``values_map.ctx`` is the
``LoweringContext`` (composite-graph helper, the module being built).

The registry ``LOWERINGS`` is keyed by qualified name
``"aten::<op>.<overload>"`` (``"aten::t.default"``); python-operator FX
targets use their bare name (``"getitem"``).  View ops also match their
``*_copy`` variants (what ``functionalize(remove="mutations_and_views")``
produces).
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, Dict, List

import numpy as np
import torch
import torch.fx as fx

from coreai._compiler import ir
from coreai._compiler.dialects import coreai

from ._utils import as_value, ir_dtype, node_dtype, node_meta, node_shape

LOWERINGS: Dict[str, Callable] = {}


PYTHON_OPS = {"getitem", "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "eq", "ne", "lt", "le",
              "gt", "ge", "and_", "or_", "xor"}


def register(*names: str):
    """Register a lowering under qualified names (``"aten::op.overload"``;
    ``"op"`` alone means ``"aten::op.default"``) or python-operator names."""

    def deco(fn):
        for name in names:
            if name in PYTHON_OPS:
                LOWERINGS[name] = fn
                continue
            if "::" not in name:
                name = "aten::" + name
            ns, rest = name.split("::", 1)
            if "." not in rest:
                rest += ".default"
            LOWERINGS[f"{ns}::{rest}"] = fn
            op, _, overload = rest.partition(".")
            if ns == "aten" and op in _VIEW_OPS:  # functionalized views come back as *_copy ops
                LOWERINGS[f"aten::{op}_copy.{overload}"] = fn
        return fn

    return deco


_VIEW_OPS = {
    "view", "_unsafe_view", "permute", "t", "transpose", "expand", "unsqueeze", "squeeze", "slice",
    "select", "alias", "split", "split_with_sizes", "unbind", "_reshape_alias", "detach", "diagonal",
}


def qualified_name(target: Any) -> str:
    """``"ns::op.overload"`` of an FX call target (bare name for python operators)."""
    schema = getattr(target, "_schema", None)
    if schema is not None:
        overload = getattr(target, "_overloadname", "") or "default"
        return f"{schema.name}.{overload}"
    name = getattr(target, "__name__", str(target))
    return name


# ---------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------


def _out(node: fx.Node):
    """(shape, ir dtype) of a single-result node."""
    shape, dt = node_meta(node)
    return shape, ir_dtype(dt)


def _arg(node: fx.Node, index: int, name: str, default: Any = None):
    if index < len(node.args):
        return node.args[index]
    return node.kwargs.get(name, default)


def _v(vm, arg, dtype=None, loc=None):
    return as_value(vm, arg, dtype, loc)


def _dims(dim, rank: int) -> List[int]:
    if dim is None:
        return list(range(rank))
    if isinstance(dim, (int, np.integer)):
        dim = [int(dim)]
    out = []
    for d in dim:
        d = int(d)
        out.append(d + rank if d < 0 else d)
    return out


def _meta_tensor(arg):
    if isinstance(arg, fx.Node):
        shape, dt = node_meta(arg)
        return torch.empty([0] * len(shape) if len(shape) else [], dtype=dt, device="meta")
    return arg


def _promoted(*args) -> "ir.DType":
    """The dtype PyTorch computes a comparison/binary op in."""
    tensors = [a for a in args if isinstance(a, fx.Node)]
    vals = [_meta_tensor(a) for a in args]
    if len(vals) == 1:
        return ir_dtype(node_dtype(tensors[0]))
    try:
        dt = torch.result_type(vals[0], vals[1])
    except Exception:  # noqa: BLE001
        dt = node_dtype(tensors[0])
    return ir_dtype(dt)


def _float_of(dt: "ir.DType") -> "ir.DType":
    return dt if dt.is_float else ir.f32


def _const(value, dtype: "ir.DType", loc=None):
    return as_value(None, value, dtype, loc)


def _cast(v, dtype, loc=None):
    if v.type.element_type is dtype:
        return v
    return coreai.cast(v, dtype, loc=loc)


def _in_float(vm, node, x, loc, fn):
    """Apply ``fn`` (a float-only builder) to x, casting ints through f32."""
    xv = _v(vm, x, None, loc)
    shape, out_dt = _out(node)
    if xv.type.element_type.is_float:
        r = fn(xv)
    else:
        r = fn(coreai.cast(xv, ir.f32, loc=loc))
    return _cast(r, out_dt, loc)


def _used_results(node: fx.Node) -> set:
    used = set()
    for u in node.users:
        if u.op == "call_function" and u.target is operator.getitem:
            if u.users:
                used.add(u.args[1])
        else:
            used.update(range(16))
    return used


def _reshape(v, shape, loc=None):
    if tuple(v.type.shape) == tuple(shape):
        return v
    return coreai.reshape(v, list(shape), loc=loc)


# ---------------------------------------------------------------------------
# structural
# ---------------------------------------------------------------------------


@register("getitem")
def _getitem(vm, node, loc):
    src, idx = node.args
    key = f"{src.name}#{idx}"
    return vm[key]


@register("clone", "alias", "detach", "lift_fresh_copy", "lift_fresh", "lift", "contiguous",
          "_local_scalar_dense")
def _identity(vm, node, loc):
    return _v(vm, node.args[0], None, loc)


@register("aten::_to_copy.default", "aten::to.dtype", "aten::to.dtype_layout", "aten::to.device",
          "aten::type_as.default")
def _to_copy(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    _, dt = _out(node)
    return _cast(x, dt, loc)


@register("aten::copy.default")
def _copy(vm, node, loc):
    shape, dt = _out(node)
    src = _v(vm, node.args[1], dt, loc)
    if tuple(src.type.shape) != tuple(shape):
        src = coreai.broadcast_to(src, list(shape), loc=loc)
    return src


@register("aten::dropout.default", "aten::native_dropout.default", "aten::feature_dropout.default")
def _dropout(vm, node, loc):
    train = _arg(node, 2, "train", False)
    if train:
        raise NotImplementedError("dropout in training mode cannot be converted; call model.eval()")
    x = _v(vm, node.args[0], None, loc)
    if "native_dropout" in qualified_name(node.target):
        shape, _ = node_meta(node.args[0])
        return [x, coreai.fill(list(shape), 1.0, ir.bool_, loc=loc)]
    return x


# ---------------------------------------------------------------------------
# elementwise arithmetic
# ---------------------------------------------------------------------------


def _binary_arith(builder, with_alpha=False, reverse=False):
    def lower(vm, node, loc):
        shape, dt = _out(node)
        a, b = node.args[0], node.args[1]
        if reverse:
            a, b = b, a
        av = _v(vm, a, dt, loc)
        bv = _v(vm, b, dt, loc)
        alpha = node.kwargs.get("alpha", node.args[2] if len(node.args) > 2 else 1)
        if with_alpha and alpha != 1:
            # rsub(self, other, alpha) = other - alpha * self: alpha scales the
            # original first operand, which is b after the swap.
            bv = coreai.mul(bv, _const(alpha, dt, loc), loc=loc)
        return builder(av, bv, loc=loc)

    return lower


register("aten::add.Tensor", "aten::add.Scalar", "add")(_binary_arith(coreai.add, True))
register("aten::sub.Tensor", "aten::sub.Scalar", "sub")(_binary_arith(coreai.sub, True))
register("aten::rsub.Tensor", "aten::rsub.Scalar")(_binary_arith(coreai.sub, True, reverse=True))
register("aten::mul.Tensor", "aten::mul.Scalar", "mul")(_binary_arith(coreai.mul))
register("aten::maximum.default")(_binary_arith(coreai.maximum))
register("aten::minimum.default")(_binary_arith(coreai.minimum))


@register("aten::div.Tensor", "aten::div.Scalar", "aten::true_divide.Tensor", "truediv")
def _div(vm, node, loc):
    shape, dt = _out(node)
    fdt = _float_of(dt)
    a = _v(vm, node.args[0], fdt, loc)
    b = _v(vm, node.args[1], fdt, loc)
    return _cast(coreai.div(a, b, loc=loc), dt, loc)


def _trunc(x, loc):
    zero = _const(0.0, x.type.element_type, loc)
    return coreai.where(coreai.less(x, zero, loc=loc), coreai.ceil(x, loc=loc), coreai.floor(x, loc=loc),
                        loc=loc)


@register("aten::div.Tensor_mode", "aten::div.Scalar_mode")
def _div_mode(vm, node, loc):
    shape, dt = _out(node)
    mode = node.kwargs.get("rounding_mode", node.args[2] if len(node.args) > 2 else None)
    a = _v(vm, node.args[0], ir.f32 if not dt.is_float else dt, loc)
    b = _v(vm, node.args[1], a.type.element_type, loc)
    q = coreai.div(a, b, loc=loc)
    if mode == "floor":
        q = coreai.floor(q, loc=loc)
    elif mode == "trunc":
        q = _trunc(q, loc)
    return _cast(q, dt, loc)


@register("aten::floor_divide.default", "aten::floor_divide.Scalar", "floordiv")
def _floor_divide(vm, node, loc):
    shape, dt = _out(node)
    a = _v(vm, node.args[0], _float_of(dt), loc)
    b = _v(vm, node.args[1], _float_of(dt), loc)
    return _cast(coreai.floor(coreai.div(a, b, loc=loc), loc=loc), dt, loc)


@register("aten::remainder.Tensor", "aten::remainder.Scalar", "aten::fmod.Tensor", "aten::fmod.Scalar", "mod")
def _remainder(vm, node, loc):
    shape, dt = _out(node)
    fdt = _float_of(dt)
    a = _v(vm, node.args[0], fdt, loc)
    b = _v(vm, node.args[1], fdt, loc)
    q = coreai.div(a, b, loc=loc)
    q = _trunc(q, loc) if "fmod" in qualified_name(node.target) else coreai.floor(q, loc=loc)
    return _cast(coreai.sub(a, coreai.mul(q, b, loc=loc), loc=loc), dt, loc)


@register("aten::pow.Tensor_Scalar", "aten::pow.Tensor_Tensor", "aten::pow.Scalar", "pow")
def _pow(vm, node, loc):
    shape, dt = _out(node)
    base, exp_ = node.args[0], node.args[1]
    if isinstance(exp_, (int, float)) and not isinstance(exp_, bool) and isinstance(base, fx.Node):
        x = _v(vm, base, dt, loc)
        if exp_ == 1:
            return x
        if exp_ == 2:
            return coreai.mul(x, x, loc=loc)
        if exp_ == 0.5 and dt.is_float:
            return coreai.sqrt(x, loc=loc)
        if exp_ == -0.5 and dt.is_float:
            return coreai.rsqrt(x, loc=loc)
        if exp_ == -1 and dt.is_float:
            return coreai.reciprocal(x, loc=loc)
        if exp_ == 3:
            return coreai.mul(coreai.mul(x, x, loc=loc), x, loc=loc)
    fdt = _float_of(dt)
    a = _v(vm, base, fdt, loc)
    b = _v(vm, exp_, fdt, loc)
    return _cast(coreai.pow(a, b, loc=loc), dt, loc)


# comparisons -------------------------------------------------------------------


def _compare(builder):
    def lower(vm, node, loc):
        dt = _promoted(node.args[0], node.args[1])
        a = _v(vm, node.args[0], dt, loc)
        b = _v(vm, node.args[1], dt, loc)
        if builder in (coreai.less, coreai.less_equal, coreai.greater, coreai.greater_equal) and dt is ir.bool_:
            a, b = _cast(a, ir.i32, loc), _cast(b, ir.i32, loc)
        return builder(a, b, loc=loc)

    return lower


register("aten::eq.Tensor", "aten::eq.Scalar", "eq")(_compare(coreai.equal))
register("aten::ne.Tensor", "aten::ne.Scalar", "ne")(_compare(coreai.not_equal))
register("aten::lt.Tensor", "aten::lt.Scalar", "lt")(_compare(coreai.less))
register("aten::le.Tensor", "aten::le.Scalar", "le")(_compare(coreai.less_equal))
register("aten::gt.Tensor", "aten::gt.Scalar", "gt")(_compare(coreai.greater))
register("aten::ge.Tensor", "aten::ge.Scalar", "ge")(_compare(coreai.greater_equal))


def _as_bool(vm, arg, loc):
    v = _v(vm, arg, None, loc)
    if v.type.element_type is ir.bool_:
        return v
    return coreai.not_equal(v, _const(0, v.type.element_type, loc), loc=loc)


@register("aten::logical_and.default", "aten::bitwise_and.Tensor", "and_")
def _logical_and(vm, node, loc):
    _bool_only(node)
    return coreai.logical_and(_as_bool(vm, node.args[0], loc), _as_bool(vm, node.args[1], loc), loc=loc)


@register("aten::logical_or.default", "aten::bitwise_or.Tensor", "or_")
def _logical_or(vm, node, loc):
    _bool_only(node)
    return coreai.logical_or(_as_bool(vm, node.args[0], loc), _as_bool(vm, node.args[1], loc), loc=loc)


@register("aten::logical_xor.default", "aten::bitwise_xor.Tensor", "xor")
def _logical_xor(vm, node, loc):
    _bool_only(node)
    return coreai.not_equal(_as_bool(vm, node.args[0], loc), _as_bool(vm, node.args[1], loc), loc=loc)


@register("aten::logical_not.default", "aten::bitwise_not.default")
def _logical_not(vm, node, loc):
    _bool_only(node)
    return coreai.logical_not(_as_bool(vm, node.args[0], loc), loc=loc)


def _bool_only(node):
    if "bitwise" in qualified_name(node.target) and node_dtype(node) is not torch.bool:
        raise NotImplementedError(f"{qualified_name(node.target)} on integer tensors is not supported")


@register("aten::where.self", "aten::where.ScalarSelf", "aten::where.ScalarOther", "aten::where.Scalar")
def _where(vm, node, loc):
    shape, dt = _out(node)
    cond = _as_bool(vm, node.args[0], loc)
    return coreai.where(cond, _v(vm, node.args[1], dt, loc), _v(vm, node.args[2], dt, loc), loc=loc)


@register("aten::masked_fill.Scalar", "aten::masked_fill.Tensor")
def _masked_fill(vm, node, loc):
    shape, dt = _out(node)
    x = _v(vm, node.args[0], dt, loc)
    mask = _as_bool(vm, node.args[1], loc)
    return coreai.where(mask, _v(vm, node.args[2], dt, loc), x, loc=loc)


# unary -------------------------------------------------------------------------


def _unary(builder):
    def lower(vm, node, loc):
        return _in_float(vm, node, node.args[0], loc, lambda x: builder(x, loc=loc))

    return lower


for _name, _b in [
    ("relu", coreai.relu), ("rsqrt", coreai.rsqrt), ("sqrt", coreai.sqrt), ("exp", coreai.exp),
    ("log", coreai.log), ("tanh", coreai.tanh), ("sigmoid", coreai.sigmoid), ("silu", coreai.silu),
    ("erf", coreai.erf), ("sin", coreai.sin), ("cos", coreai.cos), ("reciprocal", coreai.reciprocal),
]:
    register(f"aten::{_name}.default")(_unary(_b))


def _int_safe_unary(builder):
    def lower(vm, node, loc):
        x = _v(vm, node.args[0], None, loc)
        return builder(x, loc=loc)

    return lower


register("aten::neg.default", "neg")(_int_safe_unary(coreai.neg))
register("aten::abs.default")(_int_safe_unary(coreai.abs))


@register("aten::floor.default", "aten::ceil.default", "aten::trunc.default", "aten::round.default")
def _rounding(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    if not x.type.element_type.is_float:
        return x
    name = qualified_name(node.target)
    if "floor" in name:
        return coreai.floor(x, loc=loc)
    if "ceil" in name:
        return coreai.ceil(x, loc=loc)
    if "trunc" in name:
        return _trunc(x, loc)
    # round half to even
    f = coreai.floor(coreai.add(x, _const(0.5, x.type.element_type, loc), loc=loc), loc=loc)
    half = coreai.equal(coreai.sub(f, x, loc=loc), _const(0.5, x.type.element_type, loc), loc=loc)
    two = _const(2.0, x.type.element_type, loc)
    odd = coreai.not_equal(coreai.sub(f, coreai.mul(coreai.floor(coreai.div(f, two, loc=loc), loc=loc), two,
                                                     loc=loc), loc=loc),
                           _const(0.0, x.type.element_type, loc), loc=loc)
    return coreai.where(coreai.logical_and(half, odd, loc=loc),
                        coreai.sub(f, _const(1.0, x.type.element_type, loc), loc=loc), f, loc=loc)


@register("aten::sign.default", "aten::sgn.default")
def _sign(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    dt = x.type.element_type
    zero = _const(0, dt, loc)
    pos = _cast(coreai.greater(x, zero, loc=loc), dt, loc)
    neg = _cast(coreai.less(x, zero, loc=loc), dt, loc)
    return coreai.sub(pos, neg, loc=loc)


@register("aten::gelu.default")
def _gelu(vm, node, loc):
    approx = node.kwargs.get("approximate", node.args[1] if len(node.args) > 1 else "none")
    return _in_float(vm, node, node.args[0], loc, lambda x: coreai.gelu(x, approximate=approx, loc=loc))


@register("aten::hardtanh.default", "aten::relu6.default")
def _hardtanh(vm, node, loc):
    if "relu6" in qualified_name(node.target):
        lo, hi = 0.0, 6.0
    else:
        lo = _arg(node, 1, "min_val", -1.0)
        hi = _arg(node, 2, "max_val", 1.0)
    return _in_float(vm, node, node.args[0], loc, lambda x: coreai.clamp(x, min=float(lo), max=float(hi), loc=loc))


@register("aten::clamp.default", "aten::clamp_min.default", "aten::clamp_max.default")
def _clamp(vm, node, loc):
    name = qualified_name(node.target)
    if "clamp_min" in name:
        lo, hi = node.args[1], None
    elif "clamp_max" in name:
        lo, hi = None, node.args[1]
    else:
        lo, hi = _arg(node, 1, "min"), _arg(node, 2, "max")
    shape, dt = _out(node)
    x = _v(vm, node.args[0], dt, loc)
    if dt.is_float:
        return coreai.clamp(x, min=None if lo is None else float(lo), max=None if hi is None else float(hi), loc=loc)
    if lo is not None:
        x = coreai.maximum(x, _const(lo, dt, loc), loc=loc)
    if hi is not None:
        x = coreai.minimum(x, _const(hi, dt, loc), loc=loc)
    return x


@register("aten::clamp.Tensor", "aten::clamp_min.Tensor", "aten::clamp_max.Tensor")
def _clamp_tensor(vm, node, loc):
    name = qualified_name(node.target)
    shape, dt = _out(node)
    x = _v(vm, node.args[0], dt, loc)
    if "clamp_min" in name:
        lo, hi = node.args[1], None
    elif "clamp_max" in name:
        lo, hi = None, node.args[1]
    else:
        lo, hi = _arg(node, 1, "min"), _arg(node, 2, "max")
    if lo is not None:
        x = coreai.maximum(x, _v(vm, lo, dt, loc), loc=loc)
    if hi is not None:
        x = coreai.minimum(x, _v(vm, hi, dt, loc), loc=loc)
    return x


@register("aten::leaky_relu.default")
def _leaky_relu(vm, node, loc):
    slope = _arg(node, 1, "negative_slope", 0.01)

    def f(x):
        zero = _const(0.0, x.type.element_type, loc)
        return coreai.where(coreai.greater(x, zero, loc=loc), x,
                            coreai.mul(x, _const(slope, x.type.element_type, loc), loc=loc), loc=loc)

    return _in_float(vm, node, node.args[0], loc, f)


def _hardsigmoid_body(x, loc):
    """``min(max(x + 3, 0), 6) / 6``, PyTorch's formula (NaN propagates)."""
    dt = x.type.element_type
    y = coreai.clamp(coreai.add(x, _const(3.0, dt, loc), loc=loc), min=0.0, max=6.0, loc=loc)
    return coreai.div(y, _const(6.0, dt, loc), loc=loc)


@register("aten::hardsigmoid.default")
def _hardsigmoid(vm, node, loc):
    """The ``hard_sigmoid`` composite (docs/composite-ops.md): input ``input``, no attributes."""
    x = _v(vm, node.args[0], None, loc)
    if not x.type.element_type.is_float:
        x = coreai.cast(x, ir.f32, loc=loc)
    return vm.ctx.composite("hard_sigmoid", {}, [("input", x)], ["output"],
                            lambda a: [_hardsigmoid_body(a[0], loc)], loc)[0]


@register("aten::hardswish.default")
def _hardswish(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    return coreai.mul(x, _hardsigmoid_body(x, loc), loc=loc)


@register("aten::softplus.default")
def _softplus(vm, node, loc):
    beta = float(_arg(node, 1, "beta", 1.0))
    threshold = float(_arg(node, 2, "threshold", 20.0))

    def f(x):
        dt = x.type.element_type
        bx = coreai.mul(x, _const(beta, dt, loc), loc=loc) if beta != 1.0 else x
        sp = coreai.log(coreai.add(coreai.exp(bx, loc=loc), _const(1.0, dt, loc), loc=loc), loc=loc)
        if beta != 1.0:
            sp = coreai.div(sp, _const(beta, dt, loc), loc=loc)
        return coreai.where(coreai.greater(bx, _const(threshold, dt, loc), loc=loc), x, sp, loc=loc)

    return _in_float(vm, node, node.args[0], loc, f)


@register("aten::mish.default")
def _mish(vm, node, loc):
    def f(x):
        dt = x.type.element_type
        sp = coreai.log(coreai.add(coreai.exp(x, loc=loc), _const(1.0, dt, loc), loc=loc), loc=loc)
        sp = coreai.where(coreai.greater(x, _const(20.0, dt, loc), loc=loc), x, sp, loc=loc)
        return coreai.mul(x, coreai.tanh(sp, loc=loc), loc=loc)

    return _in_float(vm, node, node.args[0], loc, f)


@register("aten::elu.default")
def _elu(vm, node, loc):
    alpha = float(_arg(node, 1, "alpha", 1.0))
    scale = float(_arg(node, 2, "scale", 1.0))
    input_scale = float(_arg(node, 3, "input_scale", 1.0))

    def f(x):
        dt = x.type.element_type
        neg = coreai.mul(coreai.sub(coreai.exp(coreai.mul(x, _const(input_scale, dt, loc), loc=loc), loc=loc),
                                    _const(1.0, dt, loc), loc=loc), _const(alpha, dt, loc), loc=loc)
        y = coreai.where(coreai.greater(x, _const(0.0, dt, loc), loc=loc), x, neg, loc=loc)
        return coreai.mul(y, _const(scale, dt, loc), loc=loc) if scale != 1.0 else y

    return _in_float(vm, node, node.args[0], loc, f)


def _log_const(x, base, loc):
    dt = x.type.element_type
    return coreai.div(coreai.log(x, loc=loc), _const(math.log(base), dt, loc), loc=loc)


register("aten::log2.default")(_unary(lambda x, loc=None: _log_const(x, 2.0, loc)))
register("aten::log10.default")(_unary(lambda x, loc=None: _log_const(x, 10.0, loc)))
register("aten::log1p.default")(_unary(
    lambda x, loc=None: coreai.log(coreai.add(x, _const(1.0, x.type.element_type, loc), loc=loc), loc=loc)))
register("aten::expm1.default")(_unary(
    lambda x, loc=None: coreai.sub(coreai.exp(x, loc=loc), _const(1.0, x.type.element_type, loc), loc=loc)))
register("aten::exp2.default")(_unary(
    lambda x, loc=None: coreai.exp(coreai.mul(x, _const(math.log(2.0), x.type.element_type, loc), loc=loc),
                                   loc=loc)))
register("aten::tan.default")(_unary(
    lambda x, loc=None: coreai.div(coreai.sin(x, loc=loc), coreai.cos(x, loc=loc), loc=loc)))


@register("aten::isnan.default")
def _isnan(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    if not x.type.element_type.is_float:
        return coreai.fill(list(x.type.shape), 0.0, ir.bool_, loc=loc)
    return coreai.not_equal(x, x, loc=loc)


@register("aten::isinf.default")
def _isinf(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    if not x.type.element_type.is_float:
        return coreai.fill(list(x.type.shape), 0.0, ir.bool_, loc=loc)
    return coreai.equal(coreai.abs(x, loc=loc), _const(float("inf"), x.type.element_type, loc), loc=loc)


# ---------------------------------------------------------------------------
# softmax
# ---------------------------------------------------------------------------


@register("aten::_softmax.default", "aten::softmax.int")
def _softmax(vm, node, loc):
    dim = node.args[1]
    return _in_float(vm, node, node.args[0], loc, lambda x: coreai.softmax(x, int(dim), loc=loc))


def _log_softmax_body(x, axis, loc):
    m = coreai.reduce_max(x, [axis], keep_dims=True, loc=loc)
    d = coreai.sub(x, m, loc=loc)
    s = coreai.reduce_sum(coreai.exp(d, loc=loc), [axis], keep_dims=True, loc=loc)
    return coreai.sub(d, coreai.log(s, loc=loc), loc=loc)


@register("aten::_log_softmax.default", "aten::log_softmax.int")
def _log_softmax(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    axis = _dims(node.args[1], x.type.rank)[0]
    shape, dt = _out(node)
    xf = _cast(x, _float_of(dt), loc)
    r = vm.ctx.composite("log_softmax", {"axis": axis}, [("input", xf)], ["output"],
                         lambda a: [_log_softmax_body(a[0], axis, loc)], loc)[0]
    return _cast(r, dt, loc)


# ---------------------------------------------------------------------------
# linear algebra
# ---------------------------------------------------------------------------


def _transposed_weight(vm, arg):
    """If ``arg`` is ``t(W)`` / ``transpose(W, 0, 1)`` / ``permute(W, [1, 0])``
    of a rank-2 value, return W's Value (for coreai.linear)."""
    if not isinstance(arg, fx.Node) or arg.op != "call_function":
        return None
    name = qualified_name(arg.target)
    src = arg.args[0] if arg.args else None
    if not isinstance(src, fx.Node):
        return None
    try:
        if len(node_shape(src)) != 2:
            return None
    except ValueError:
        return None
    ok = False
    if name in ("aten::t.default", "aten::t_copy.default"):
        ok = True
    elif name in ("aten::transpose.int", "aten::transpose_copy.int"):
        ok = sorted(_dims([arg.args[1], arg.args[2]], 2)) == [0, 1]
    elif name in ("aten::permute.default", "aten::permute_copy.default"):
        ok = _dims(arg.args[1], 2) == [1, 0]
    if not ok:
        return None
    v = vm[src.name]
    return v if isinstance(v, ir.Value) else None


@register("aten::addmm.default")
def _addmm(vm, node, loc):
    shape, dt = _out(node)
    bias_arg, a_arg, b_arg = node.args[0], node.args[1], node.args[2]
    beta = node.kwargs.get("beta", 1)
    alpha = node.kwargs.get("alpha", 1)
    a = _v(vm, a_arg, dt, loc)
    w = _transposed_weight(vm, b_arg)
    bias = _v(vm, bias_arg, dt, loc)
    if w is not None and beta == 1 and alpha == 1 and bias.type.rank == 1 and bias.type.shape[0] == shape[-1]:
        return coreai.linear(a, _cast(w, dt, loc), bias, loc=loc)
    if w is not None:
        prod = coreai.linear(a, _cast(w, dt, loc), loc=loc)
    else:
        prod = coreai.matmul(a, _v(vm, b_arg, dt, loc), loc=loc)
    if alpha != 1:
        prod = coreai.mul(prod, _const(alpha, dt, loc), loc=loc)
    if beta == 0:
        return prod
    if beta != 1:
        bias = coreai.mul(bias, _const(beta, dt, loc), loc=loc)
    return coreai.add(prod, bias, loc=loc)


@register("aten::mm.default", "aten::bmm.default", "aten::matmul.default")
def _mm(vm, node, loc):
    shape, dt = _out(node)
    fdt = _float_of(dt)
    a = _v(vm, node.args[0], fdt, loc)
    b_arg = node.args[1]
    if qualified_name(node.target) == "aten::mm.default":
        w = _transposed_weight(vm, b_arg)
        if w is not None:
            return _cast(coreai.linear(a, _cast(w, fdt, loc), loc=loc), dt, loc)
    b = _v(vm, b_arg, fdt, loc)
    squeeze_a = squeeze_b = False
    if a.type.rank == 1:
        a = coreai.reshape(a, [1, a.type.shape[0]], loc=loc)
        squeeze_a = True
    if b.type.rank == 1:
        b = coreai.reshape(b, [b.type.shape[0], 1], loc=loc)
        squeeze_b = True
    r = coreai.matmul(a, b, loc=loc)
    if squeeze_a or squeeze_b:
        r = coreai.reshape(r, list(shape), loc=loc)
    return _cast(r, dt, loc)


@register("aten::linear.default")
def _linear(vm, node, loc):
    shape, dt = _out(node)
    x = _v(vm, node.args[0], dt, loc)
    w = _v(vm, node.args[1], dt, loc)
    b = _arg(node, 2, "bias")
    return coreai.linear(x, w, None if b is None else _v(vm, b, dt, loc), loc=loc)


@register("aten::baddbmm.default")
def _baddbmm(vm, node, loc):
    shape, dt = _out(node)
    beta = node.kwargs.get("beta", 1)
    alpha = node.kwargs.get("alpha", 1)
    prod = coreai.matmul(_v(vm, node.args[1], dt, loc), _v(vm, node.args[2], dt, loc), loc=loc)
    if alpha != 1:
        prod = coreai.mul(prod, _const(alpha, dt, loc), loc=loc)
    if beta == 0:
        return prod
    inp = _v(vm, node.args[0], dt, loc)
    if beta != 1:
        inp = coreai.mul(inp, _const(beta, dt, loc), loc=loc)
    return coreai.add(prod, inp, loc=loc)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------


def _reduce_dims(node, x, dim_index=1, dim_name="dim"):
    dim = _arg(node, dim_index, dim_name, None)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(x.type.rank))
    return _dims(dim, x.type.rank)


def _reduction(builder, keep_index=2):
    def lower(vm, node, loc):
        shape, dt = _out(node)
        x = _v(vm, node.args[0], None, loc)
        name = qualified_name(node.target)
        if name.endswith(".default") and name.split("::")[1].split(".")[0] in ("sum", "mean", "max", "min"):
            dims, keep = list(range(x.type.rank)), False
        else:
            dims = _reduce_dims(node, x)
            keep = bool(_arg(node, keep_index, "keepdim", False))
        if x.type.rank == 0:
            return _cast(x, dt, loc)
        xf = _cast(x, _float_of(x.type.element_type) if not dt.is_float else dt, loc)
        r = builder(xf, dims, keep_dims=keep, loc=loc)
        return _cast(r, dt, loc)

    return lower


register("aten::sum.dim_IntList", "aten::sum.default")(_reduction(coreai.reduce_sum))
register("aten::mean.dim", "aten::mean.default")(_reduction(coreai.reduce_mean))
register("aten::amax.default")(_reduction(coreai.reduce_max))
register("aten::amin.default")(_reduction(coreai.reduce_min))
register("aten::max.default")(_reduction(coreai.reduce_max))
register("aten::min.default")(_reduction(coreai.reduce_min))


@register("aten::any.dim", "aten::any.default", "aten::any.dims", "aten::all.dim", "aten::all.default")
def _any_all(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    name = qualified_name(node.target)
    if name.endswith(".default"):
        dims, keep = list(range(x.type.rank)), False
    else:
        dims = _reduce_dims(node, x)
        keep = bool(_arg(node, 2, "keepdim", False))
    b = _as_bool(vm, x, loc)
    f = coreai.cast(b, ir.f32, loc=loc)
    builder = coreai.reduce_max if "any" in name else coreai.reduce_min
    if x.type.rank == 0:
        return b
    r = builder(f, dims, keep_dims=keep, loc=loc)
    return coreai.cast(r, ir.bool_, loc=loc)


def _argmax_lower(negate):
    def lower(vm, node, loc):
        shape, dt = _out(node)
        x = _v(vm, node.args[0], None, loc)
        xf = _cast(x, _float_of(x.type.element_type), loc)
        if negate:
            xf = coreai.neg(xf, loc=loc)
        dim = _arg(node, 1, "dim", None)
        keep = bool(_arg(node, 2, "keepdim", False))
        if dim is None:
            flat = coreai.reshape(xf, [x.type.numel], loc=loc)
            r = coreai.argmax(flat, 0, loc=loc)
            return _reshape(_cast(r, dt, loc), shape, loc)
        r = coreai.argmax(xf, _dims(dim, x.type.rank)[0], keep_dims=keep, loc=loc)
        return _cast(r, dt, loc)

    return lower


register("aten::argmax.default")(_argmax_lower(False))
register("aten::argmin.default")(_argmax_lower(True))


@register("aten::max.dim", "aten::min.dim")
def _max_dim(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    axis = _dims(node.args[1], x.type.rank)[0]
    keep = bool(_arg(node, 2, "keepdim", False))
    is_max = "max" in qualified_name(node.target)
    used = _used_results(node)
    xf = _cast(x, _float_of(x.type.element_type), loc)
    values = indices = None
    if 0 in used:
        values = _cast((coreai.reduce_max if is_max else coreai.reduce_min)(xf, [axis], keep_dims=keep, loc=loc),
                       x.type.element_type, loc)
    if 1 in used:
        src = xf if is_max else coreai.neg(xf, loc=loc)
        indices = coreai.argmax(src, axis, keep_dims=keep, loc=loc)
    return [values, indices]


def _var(vm, node, loc, std=False):
    shape, dt = _out(node)
    x = _v(vm, node.args[0], _float_of(dt), loc)
    name = qualified_name(node.target)
    dim = _arg(node, 1, "dim", None)
    dims = list(range(x.type.rank)) if dim is None or dim == [] else _dims(dim, x.type.rank)
    if name.endswith(".correction") or name.endswith(".correction_names"):
        correction = node.kwargs.get("correction", 1)
        correction = 1 if correction is None else correction
        keep = bool(node.kwargs.get("keepdim", False))
    else:  # var.dim(self, dim, unbiased=True, keepdim=False) / var.default(self, unbiased)
        if name.endswith(".default"):
            unbiased = _arg(node, 1, "unbiased", True)
            dims = list(range(x.type.rank))
            keep = False
        else:
            unbiased = _arg(node, 2, "unbiased", True)
            keep = bool(_arg(node, 3, "keepdim", False))
        correction = 1 if unbiased else 0
    n = 1
    for d in dims:
        n *= x.type.shape[d]
    mean = coreai.reduce_mean(x, dims, keep_dims=True, loc=loc)
    d = coreai.sub(x, mean, loc=loc)
    ss = coreai.reduce_sum(coreai.mul(d, d, loc=loc), dims, keep_dims=keep, loc=loc)
    var = coreai.div(ss, _const(float(max(n - correction, 0)), x.type.element_type, loc), loc=loc)
    r = coreai.sqrt(var, loc=loc) if std else var
    return _cast(r, dt, loc)


register("aten::var.correction", "aten::var.dim", "aten::var.default")(lambda vm, n, loc: _var(vm, n, loc))
register("aten::std.correction", "aten::std.dim", "aten::std.default")(lambda vm, n, loc: _var(vm, n, loc, True))


def _vector_norm_body(x, ord_, dims, keep, loc):
    dt = x.type.element_type
    if ord_ == 2:
        return coreai.sqrt(coreai.reduce_sum(coreai.mul(x, x, loc=loc), dims, keep_dims=keep, loc=loc), loc=loc)
    if ord_ == 1:
        return coreai.reduce_sum(coreai.abs(x, loc=loc), dims, keep_dims=keep, loc=loc)
    if ord_ == float("inf"):
        return coreai.reduce_max(coreai.abs(x, loc=loc), dims, keep_dims=keep, loc=loc)
    if ord_ == float("-inf"):
        return coreai.reduce_min(coreai.abs(x, loc=loc), dims, keep_dims=keep, loc=loc)
    if ord_ == 0:
        nz = coreai.cast(coreai.not_equal(x, _const(0.0, dt, loc), loc=loc), dt, loc=loc)
        return coreai.reduce_sum(nz, dims, keep_dims=keep, loc=loc)
    p = _const(float(ord_), dt, loc)
    s = coreai.reduce_sum(coreai.pow(coreai.abs(x, loc=loc), p, loc=loc), dims, keep_dims=keep, loc=loc)
    return coreai.pow(s, _const(1.0 / float(ord_), dt, loc), loc=loc)


@register("aten::linalg_vector_norm.default")
def _linalg_vector_norm(vm, node, loc):
    shape, dt = _out(node)
    x = _v(vm, node.args[0], _float_of(dt), loc)
    ord_ = _arg(node, 1, "ord", 2)
    dim = _arg(node, 2, "dim", None)
    keep = bool(_arg(node, 3, "keepdim", False))
    dims = list(range(x.type.rank)) if dim is None or dim == [] else _dims(dim, x.type.rank)
    ord_f = float(ord_)
    # docs/composite-ops.md: ord (number), axes (si64[]), keep_dim (bool)
    attrs = {"ord": ord_f, "axes": dims, "keep_dim": keep}
    r = vm.ctx.composite("linalg_vector_norm", attrs, [("input", x)], ["output"],
                         lambda a: [_vector_norm_body(a[0], ord_f, dims, keep, loc)], loc)[0]
    return _cast(r, dt, loc)


@register("aten::cumsum.default")
def _cumsum(vm, node, loc):
    shape, dt = _out(node)
    x = _v(vm, node.args[0], _float_of(dt), loc)
    rank = x.type.rank
    if rank == 0:
        return _cast(x, dt, loc)
    axis = _dims(node.args[1], rank)[0]
    n = x.type.shape[axis]
    perm = [d for d in range(rank) if d != axis] + [axis]
    xt = coreai.transpose(x, perm, loc=loc) if perm != list(range(rank)) else x
    tri = np.triu(np.ones((n, n), dtype=np.float32))
    moved = xt if xt.type.rank >= 2 else coreai.reshape(xt, [1, n], loc=loc)
    r = coreai.matmul(moved, coreai.constant(tri, x.type.element_type, loc=loc), loc=loc)
    if xt.type.rank < 2:
        r = coreai.reshape(r, [n], loc=loc)
    if perm != list(range(rank)):
        inv = [perm.index(d) for d in range(rank)]
        r = coreai.transpose(r, inv, loc=loc)
    return _cast(r, dt, loc)


# ---------------------------------------------------------------------------
# layout
# ---------------------------------------------------------------------------


@register("aten::view.default", "aten::_unsafe_view.default", "aten::reshape.default",
          "aten::_reshape_alias.default", "aten::squeeze.dim", "aten::squeeze.default", "aten::squeeze.dims",
          "aten::unsqueeze.default", "aten::flatten.using_ints", "aten::view_as.default")
def _reshape_like(vm, node, loc):
    shape, _ = node_meta(node)
    return _reshape(_v(vm, node.args[0], None, loc), shape, loc)


@register("aten::as_strided.default", "aten::as_strided_copy.default")
def _as_strided(vm, node, loc):
    """Only the restride that decompositions append to give a result the
    strides eager PyTorch would (``adaptive_avg_pool2d`` of a channels-last
    input: ``as_strided(mean, size, channels-last strides)``): every element
    read at its own row-major position of the input (same element count),
    which is a reshape.  Any other view of the storage is rejected."""
    x = _v(vm, node.args[0], None, loc)
    size = [int(d) for d in node.args[1]]
    stride = [int(d) for d in node.args[2]]
    offset = int(_arg(node, 3, "storage_offset", 0) or 0)
    n = int(np.prod(size, dtype=np.int64))
    if n == int(np.prod(x.type.shape, dtype=np.int64)):
        where = np.full(size, offset, dtype=np.int64)
        for a, (d, st) in enumerate(zip(size, stride)):
            view = [1] * len(size)
            view[a] = d
            where = where + np.arange(d, dtype=np.int64).reshape(view) * st
        if np.array_equal(where.reshape(-1), np.arange(n, dtype=np.int64)):
            return _reshape(x, size, loc)
    raise NotImplementedError(f"aten::as_strided to size {size}, stride {stride}, offset {offset} reads the storage "
                              "other than row-major; only a restride that keeps every element in place is supported")


@register("aten::permute.default")
def _permute(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    perm = _dims(node.args[1], x.type.rank)
    if perm == list(range(x.type.rank)):
        return x
    return coreai.transpose(x, perm, loc=loc)


@register("aten::t.default", "aten::numpy_T.default")
def _t(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    if x.type.rank < 2:
        return x
    return coreai.transpose(x, list(range(x.type.rank))[::-1], loc=loc)


@register("aten::transpose.int")
def _transpose(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    rank = x.type.rank
    if rank < 2:
        return x
    d0, d1 = _dims([node.args[1], node.args[2]], rank)
    perm = list(range(rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    if perm == list(range(rank)):
        return x
    return coreai.transpose(x, perm, loc=loc)


@register("aten::expand.default", "aten::expand_as.default", "aten::broadcast_to.default")
def _expand(vm, node, loc):
    shape, _ = node_meta(node)
    x = _v(vm, node.args[0], None, loc)
    if tuple(x.type.shape) == tuple(shape):
        return x
    return coreai.broadcast_to(x, list(shape), loc=loc)


def _slice_axis(x, axis, start, end, step, loc):
    rank = x.type.rank
    b = [0] * rank
    e = list(x.type.shape)
    s = [1] * rank
    b[axis], e[axis], s[axis] = start, end, step
    return coreai.slice(x, b, e, s, loc=loc)


def _size(vm, a):
    """A size argument: an int, or the int / ir.Dim of a size node."""
    if isinstance(a, fx.Node):
        v = vm[a.name]
        if isinstance(v, (int, ir.Dim)):
            return v
        raise NotImplementedError(f"'{a.name}' is a tensor where a size is expected")
    if isinstance(a, ir.Dim) or a is None:
        return a
    return int(a)


def _norm_range(start, end, extent):
    start = 0 if start is None else start
    end = extent if end is None else end
    if any(isinstance(v, ir.Dim) for v in (start, end, extent)):
        # Python's clamping cannot be decided for a symbolic bound: a
        # negative int counts from the end, an int at or past the largest
        # extent means the end, anything else is taken as given (and
        # checked against the extent when the entrypoint runs)
        hi = ir.dim_bounds(extent)[1] if isinstance(extent, ir.Dim) else extent
        if isinstance(start, int) and start < 0:
            start = extent + start
        if isinstance(end, int) and end < 0:
            end = extent + end
        if isinstance(end, int) and hi is not None and end >= hi:
            end = extent
        if isinstance(start, int) and hi is not None and start >= hi:
            start = extent
        return start, end
    start, end = int(start), int(end)
    if start < 0:
        start += extent
    if end < 0:
        end += extent
    start = min(max(start, 0), extent)
    end = min(max(end, start), extent)
    return start, end


@register("aten::slice.Tensor")
def _slice(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    if x.type.rank == 0:
        return x
    axis = _dims(_arg(node, 1, "dim", 0), x.type.rank)[0]
    start, end = _norm_range(_size(vm, _arg(node, 2, "start", None)), _size(vm, _arg(node, 3, "end", None)),
                             x.type.shape[axis])
    step = int(_arg(node, 4, "step", 1))
    if isinstance(start, int) and start == 0 and end == x.type.shape[axis] and step == 1:
        return x
    return _slice_axis(x, axis, start, end, step, loc)


@register("aten::select.int")
def _select(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    axis = _dims(node.args[1], x.type.rank)[0]
    index = int(node.args[2])
    if index < 0:
        index += x.type.shape[axis]
    r = _slice_axis(x, axis, index, index + 1, 1, loc)
    shape, _ = node_meta(node)
    return _reshape(r, shape, loc)


@register("aten::cat.default", "aten::concat.default")
def _cat(vm, node, loc):
    shape, dt = _out(node)
    tensors = node.args[0]
    dim = _arg(node, 1, "dim", 0)
    values = []
    for t in tensors:
        v = _v(vm, t, dt, loc)
        if v.type.rank == 1 and v.type.shape[0] == 0 and len(shape) != 1:
            continue  # legacy empty tensors are skipped by torch.cat
        if 0 in v.type.shape:
            continue
        values.append(v)
    if not values:
        return coreai.fill(list(shape), 0.0, dt, loc=loc)
    axis = _dims(dim, len(shape))[0]
    if len(values) == 1:
        return values[0]
    return coreai.concat(values, axis, loc=loc)


@register("aten::stack.default")
def _stack(vm, node, loc):
    shape, dt = _out(node)
    axis = _dims(_arg(node, 1, "dim", 0), len(shape))[0]
    values = []
    for t in node.args[0]:
        v = _v(vm, t, dt, loc)
        s = list(v.type.shape)
        s.insert(axis, 1)
        values.append(coreai.reshape(v, s, loc=loc))
    return values[0] if len(values) == 1 else coreai.concat(values, axis, loc=loc)


def _split_sizes(node, x):
    axis = _dims(_arg(node, 2, "dim", 0), x.type.rank)[0]
    extent = x.type.shape[axis]
    sizes = node.args[1]
    if isinstance(sizes, int):
        step = sizes
        sizes = [min(step, extent - i) for i in range(0, extent, step)] if step > 0 else [extent]
    return axis, [int(s) for s in sizes]


@register("aten::split.Tensor", "aten::split_with_sizes.default", "aten::split.sizes")
def _split(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    axis, sizes = _split_sizes(node, x)
    used = _used_results(node)
    out = []
    start = 0
    for i, size in enumerate(sizes):
        if i in used:
            out.append(_slice_axis(x, axis, start, start + size, 1, loc) if size != x.type.shape[axis] else x)
        else:
            out.append(None)
        start += size
    return out


@register("aten::unbind.int")
def _unbind(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    axis = _dims(_arg(node, 1, "dim", 0), x.type.rank)[0]
    used = _used_results(node)
    out = []
    shape = list(x.type.shape)
    del shape[axis]
    for i in range(x.type.shape[axis]):
        if i in used:
            out.append(coreai.reshape(_slice_axis(x, axis, i, i + 1, 1, loc), shape, loc=loc))
        else:
            out.append(None)
    return out


@register("aten::flip.default")
def _flip(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    for axis in _dims(node.args[1], x.type.rank):
        n = x.type.shape[axis]
        idx = coreai.constant(np.arange(n - 1, -1, -1, dtype=np.int64), ir.i64, loc=loc)
        x = coreai.gather(x, idx, axis, loc=loc)
    return x


@register("aten::roll.default")
def _roll(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    shifts = node.args[1]
    dims = _arg(node, 2, "dims", [])
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    if not dims:
        flat = coreai.reshape(x, [x.type.numel], loc=loc)
        n = x.type.numel
        idx = (np.arange(n) - shifts[0]) % max(n, 1)
        r = coreai.gather(flat, coreai.constant(idx.astype(np.int64), ir.i64, loc=loc), 0, loc=loc)
        return coreai.reshape(r, list(x.type.shape), loc=loc)
    for shift, axis in zip(shifts, _dims(dims, x.type.rank)):
        n = x.type.shape[axis]
        idx = (np.arange(n) - shift) % max(n, 1)
        x = coreai.gather(x, coreai.constant(idx.astype(np.int64), ir.i64, loc=loc), axis, loc=loc)
    return x


@register("aten::repeat.default", "aten::tile.default")
def _repeat(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    reps = [int(r) for r in node.args[1]]
    shape = list(x.type.shape)
    if len(reps) < len(shape):  # tile semantics
        reps = [1] * (len(shape) - len(reps)) + reps
    shape = [1] * (len(reps) - len(shape)) + shape
    x = _reshape(x, shape, loc)
    inter = []
    for r, d in zip(reps, shape):
        inter += [1, d]
    x = coreai.reshape(x, inter, loc=loc)
    target = []
    for r, d in zip(reps, shape):
        target += [r, d]
    x = coreai.broadcast_to(x, target, loc=loc)
    out_shape, _ = node_meta(node)
    return coreai.reshape(x, list(out_shape), loc=loc)


@register("aten::index_select.default")
def _index_select(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    axis = _dims(node.args[1], x.type.rank)[0]
    idx = _v(vm, node.args[2], None, loc)
    return coreai.gather(x, idx, axis, loc=loc)


@register("aten::embedding.default")
def _embedding(vm, node, loc):
    w = _v(vm, node.args[0], None, loc)
    idx = _v(vm, node.args[1], None, loc)
    if not idx.type.element_type.is_int:
        idx = coreai.cast(idx, ir.i64, loc=loc)
    return coreai.gather(w, idx, 0, loc=loc)


def _nonneg_index(idx, extent: int, loc):
    """``idx`` (an int Value) with negative entries counted from the end."""
    dt = idx.type.element_type
    neg = coreai.less(idx, _const(0, dt, loc), loc=loc)
    return coreai.where(neg, coreai.add(idx, _const(extent, dt, loc), loc=loc), idx, loc=loc)


def _as_i64(idx, loc):
    return idx if idx.type.element_type is ir.i64 else coreai.cast(idx, ir.i64, loc=loc)


@register("aten::index.Tensor")
def _index(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    indices = list(node.args[1])
    present = [i for i, t in enumerate(indices) if t is not None]
    shape, _ = node_meta(node)
    idxs = [_v(vm, indices[i], None, loc) for i in present]
    if any(i.type.element_type is ir.bool_ for i in idxs):
        raise NotImplementedError("aten::index.Tensor with a boolean mask is not supported (data-dependent shape)")
    if len(present) == 1:
        r = coreai.gather(x, idxs[0], present[0], loc=loc)
        return _reshape(r, shape, loc)
    # Several index tensors: broadcast them, combine them into one linear
    # index over the indexed axes (row-major) and take along one axis.
    # Adjacent indexed axes keep their place in the result; otherwise the
    # broadcast index dims come first (PyTorch's advanced-indexing rule).
    xs = list(x.type.shape)
    bshape = list(torch.broadcast_shapes(*[tuple(i.type.shape) for i in idxs]))
    adjacent = present == list(range(present[0], present[-1] + 1))
    if not adjacent:
        rest = [a for a in range(len(xs)) if a not in present]
        x = coreai.transpose(x, present + rest, loc=loc)
        xs = [xs[a] for a in present] + [xs[a] for a in rest]
        present = list(range(len(present)))
    first, last = present[0], present[-1]
    extents = xs[first:last + 1]
    linear = None
    stride = 1
    for k in range(len(idxs) - 1, -1, -1):
        i = _nonneg_index(_as_i64(idxs[k], loc), extents[k], loc)
        term = i if stride == 1 else coreai.mul(i, _const(stride, ir.i64, loc), loc=loc)
        linear = term if linear is None else coreai.add(term, linear, loc=loc)
        stride *= extents[k]
    linear = coreai.broadcast_to(linear, bshape, loc=loc) if list(linear.type.shape) != bshape else linear
    flat = coreai.reshape(x, xs[:first] + [stride] + xs[last + 1:], loc=loc)
    r = coreai.gather(flat, linear, first, loc=loc)
    return _reshape(r, shape, loc)


@register("aten::gather.default")
def _gather_dim(vm, node, loc):
    """``torch.gather(x, dim, index)``: ``out[..i_d..] = x[..index[..i_d..]..]``
    along ``dim``, every other coordinate taken from the output's own, as one
    take from the flattened ``x`` by a linear index."""
    if _arg(node, 3, "sparse_grad", False):
        raise NotImplementedError("aten::gather with sparse_grad=True is not supported")
    x = _v(vm, node.args[0], None, loc)
    xs = list(x.type.shape)
    rank = len(xs)
    if rank == 0:
        return x
    dim = _dims(node.args[1], rank)[0]
    idx = _as_i64(_v(vm, node.args[2], None, loc), loc)
    ishape = list(idx.type.shape)
    strides = [int(np.prod(xs[a + 1:], dtype=np.int64)) for a in range(rank)]
    base = np.zeros(ishape, dtype=np.int64)
    for a in range(rank):
        if a == dim:
            continue
        view = [1] * rank
        view[a] = ishape[a]
        base = base + np.arange(ishape[a], dtype=np.int64).reshape(view) * strides[a]
    i = idx  # torch.gather takes no negative index
    if strides[dim] != 1:
        i = coreai.mul(i, _const(strides[dim], ir.i64, loc), loc=loc)
    linear = coreai.add(i, coreai.constant(base, ir.i64, loc=loc), loc=loc)
    flat = coreai.reshape(x, [int(np.prod(xs, dtype=np.int64))], loc=loc)
    return coreai.gather(flat, linear, 0, loc=loc)


@register("aten::constant_pad_nd.default", "aten::pad.default")
def _constant_pad(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    pad = [int(p) for p in node.args[1]]
    mode = _arg(node, 2, "mode", "constant") if "aten::pad" in qualified_name(node.target) else "constant"
    value = _arg(node, 3 if "aten::pad" in qualified_name(node.target) else 2, "value", 0.0)
    if mode != "constant":
        return _index_pad(x, pad, mode, loc)
    value = 0.0 if value is None else float(value)
    rank = x.type.rank
    before = [0] * rank
    after = [0] * rank
    for i in range(len(pad) // 2):
        axis = rank - 1 - i
        before[axis] = pad[2 * i]
        after[axis] = pad[2 * i + 1]
    if any(p < 0 for p in before + after):
        # negative padding crops
        b = [max(-p, 0) for p in before]
        e = [x.type.shape[a] - max(-after[a], 0) for a in range(rank)]
        x = coreai.slice(x, b, e, loc=loc)
        before = [max(p, 0) for p in before]
        after = [max(p, 0) for p in after]
    if not any(before + after):
        return x
    if x.type.element_type is ir.bool_:
        x = coreai.cast(x, ir.i32, loc=loc)
        return coreai.cast(coreai.pad(x, before + after, value, loc=loc), ir.bool_, loc=loc)
    return coreai.pad(x, before + after, value, loc=loc)


def _index_pad(x, pad, mode, loc):
    rank = x.type.rank
    for i in range(len(pad) // 2):
        axis = rank - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = x.type.shape[axis]
        pos = np.arange(-lo, n + hi)
        if mode == "reflect":
            period = 2 * (n - 1) if n > 1 else 1
            m = np.mod(pos, period)
            idx = np.where(m >= n, period - m, m)
        elif mode == "replicate":
            idx = np.clip(pos, 0, n - 1)
        elif mode == "circular":
            idx = np.mod(pos, n)
        else:
            raise NotImplementedError(f"padding mode {mode!r} is not supported")
        x = coreai.gather(x, coreai.constant(idx.astype(np.int64), ir.i64, loc=loc), axis, loc=loc)
    return x


def _pad_lower(mode):
    def lower(vm, node, loc):
        x = _v(vm, node.args[0], None, loc)
        return _index_pad(x, [int(p) for p in node.args[1]], mode, loc)

    return lower


for _k in (1, 2, 3):
    register(f"aten::reflection_pad{_k}d.default")(_pad_lower("reflect"))
    register(f"aten::replication_pad{_k}d.default")(_pad_lower("replicate"))


def _pixel_shuffle_body(x, r, loc):
    lead = list(x.type.shape[:-3])
    c, h, w = x.type.shape[-3:]
    oc = c // (r * r)
    y = coreai.reshape(x, lead + [oc, r, r, h, w], loc=loc)
    k = len(lead)
    perm = list(range(k)) + [k, k + 3, k + 1, k + 4, k + 2]
    y = coreai.transpose(y, perm, loc=loc)
    return coreai.reshape(y, lead + [oc, h * r, w * r], loc=loc)


@register("aten::pixel_shuffle.default")
def _pixel_shuffle(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    r = int(node.args[1])
    return vm.ctx.composite("pixel_shuffle", {"upscale_factor": r}, [("input", x)], ["output"],
                            lambda a: [_pixel_shuffle_body(a[0], r, loc)], loc)[0]


@register("aten::pixel_unshuffle.default")
def _pixel_unshuffle(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    r = int(node.args[1])
    lead = list(x.type.shape[:-3])
    c, h, w = x.type.shape[-3:]
    k = len(lead)
    y = coreai.reshape(x, lead + [c, h // r, r, w // r, r], loc=loc)
    y = coreai.transpose(y, list(range(k)) + [k, k + 2, k + 4, k + 1, k + 3], loc=loc)
    return coreai.reshape(y, lead + [c * r * r, h // r, w // r], loc=loc)


@register("aten::slice_scatter.default")
def _slice_scatter(vm, node, loc):
    shape, dt = _out(node)
    x = _v(vm, node.args[0], dt, loc)
    src = _v(vm, node.args[1], dt, loc)
    axis = _dims(_arg(node, 2, "dim", 0), x.type.rank)[0]
    start, end = _norm_range(_arg(node, 3, "start", None), _arg(node, 4, "end", None), x.type.shape[axis])
    step = int(_arg(node, 5, "step", 1))
    return _scatter_range(x, src, axis, start, end, step, loc)


def _scatter_range(x, src, axis, start, end, step, loc):
    n = x.type.shape[axis]
    if step == 1:
        parts = []
        if start > 0:
            parts.append(_slice_axis(x, axis, 0, start, 1, loc))
        parts.append(src)
        if end < n:
            parts.append(_slice_axis(x, axis, end, n, 1, loc))
        return parts[0] if len(parts) == 1 else coreai.concat(parts, axis, loc=loc)
    # general step: gather from concat([x, src]) along axis
    both = coreai.concat([x, src], axis, loc=loc)
    idx = np.arange(n)
    sel = np.arange(start, end, step)
    idx[sel] = n + np.arange(len(sel))
    return coreai.gather(both, coreai.constant(idx.astype(np.int64), ir.i64, loc=loc), axis, loc=loc)


@register("aten::select_scatter.default")
def _select_scatter(vm, node, loc):
    shape, dt = _out(node)
    x = _v(vm, node.args[0], dt, loc)
    src = _v(vm, node.args[1], dt, loc)
    axis = _dims(node.args[2], x.type.rank)[0]
    index = int(node.args[3])
    if index < 0:
        index += x.type.shape[axis]
    s = list(src.type.shape)
    s.insert(axis, 1)
    src = coreai.reshape(src, s, loc=loc)
    return _scatter_range(x, src, axis, index, index + 1, 1, loc)


@register("aten::tril.default", "aten::triu.default")
def _tril(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    k = int(_arg(node, 1, "diagonal", 0))
    h, w = x.type.shape[-2:]
    mask = np.tril(np.ones((h, w), dtype=bool), k) if "tril" in qualified_name(node.target) else \
        np.triu(np.ones((h, w), dtype=bool), k)
    m = coreai.constant(mask, ir.bool_, loc=loc)
    return coreai.where(m, x, _const(0, x.type.element_type, loc), loc=loc)


# ---------------------------------------------------------------------------
# creation (with a tensor operand; tensor-free creation ops are folded)
# ---------------------------------------------------------------------------


@register("aten::zeros_like.default", "aten::ones_like.default", "aten::empty_like.default",
          "aten::full_like.default", "aten::new_zeros.default", "aten::new_ones.default",
          "aten::new_full.default", "aten::new_empty.default", "aten::fill.Scalar", "aten::rand_like.default",
          "aten::zero.default")
def _fill_like(vm, node, loc):
    shape, dt = _out(node)
    name = qualified_name(node.target)
    if "ones" in name:
        value = 1.0
    elif "full" in name:
        value = node.args[2] if "new_full" in name else node.args[1]
    elif "fill.Scalar" in name:
        value = node.args[1]
    else:
        value = 0.0
    return coreai.fill(list(shape), float(value), dt, loc=loc)


@register("aten::fill.Tensor")
def _fill_tensor(vm, node, loc):
    shape, dt = _out(node)
    v = _v(vm, node.args[1], dt, loc)
    return coreai.broadcast_to(v, list(shape), loc=loc) if tuple(v.type.shape) != tuple(shape) else v


@register("aten::full.default", "aten::zeros.default", "aten::ones.default", "aten::empty.memory_format",
          "aten::scalar_tensor.default")
def _full(vm, node, loc):
    shape, dt = _out(node)
    name = qualified_name(node.target)
    value = {"zeros": 0.0, "ones": 1.0, "empty": 0.0}.get(name.split("::")[1].split(".")[0])
    if value is None:
        value = node.args[0] if "scalar_tensor" in name else node.args[1]
    return coreai.fill(list(shape), float(value), dt, loc=loc)


@register("aten::arange.start_step", "aten::arange.default", "aten::arange.start")
def _arange(vm, node, loc):
    shape, dt = _out(node)
    name = qualified_name(node.target)
    if name.endswith(".default"):
        start, step = 0, 1
    else:
        start = _size(vm, node.args[0]) if isinstance(node.args[0], fx.Node) else node.args[0]
        step = node.args[2] if len(node.args) > 2 else 1
    if isinstance(start, ir.Dim):
        # [start, start + step, ...] = start + step * [0, 1, ...]
        r = coreai.iota(shape[0], 0.0, float(step), dt, loc=loc)
        return coreai.add(r, coreai.dim_value(start, dt, loc=loc), loc=loc)
    return coreai.iota(shape[0], float(start), float(step), dt, loc=loc)


# ---------------------------------------------------------------------------
# convolution and pooling
# ---------------------------------------------------------------------------


@register("aten::convolution.default", "aten::_convolution.default")
def _convolution(vm, node, loc):
    shape, dt = _out(node)
    x = _v(vm, node.args[0], dt, loc)
    w = _v(vm, node.args[1], dt, loc)
    b = node.args[2]
    stride, padding, dilation = list(node.args[3]), list(node.args[4]), list(node.args[5])
    transposed = bool(node.args[6])
    groups = int(node.args[8])
    if isinstance(padding, str):
        raise NotImplementedError("string padding is not supported")
    bias = None if b is None else _v(vm, b, dt, loc)
    nd = w.type.rank - 2
    if transposed:
        output_padding = list(node.args[7])
        if nd == 1:
            xs = list(x.type.shape)
            x2 = coreai.reshape(x, ([1] if len(xs) == 2 else []) + xs[:-1] + [1, xs[-1]], loc=loc)
            ws = list(w.type.shape)
            w2 = coreai.reshape(w, ws[:-1] + [1, ws[-1]], loc=loc)
            n = x2.type.shape[0]
            oshape = [n, shape[-2], 1, shape[-1]]
            r = _conv_transpose2d(vm, node, loc, x2, w2, bias, [1, stride[0]], [0, padding[0]], [1, dilation[0]],
                                  [0, output_padding[0]], groups, oshape)
            return coreai.reshape(r, list(shape), loc=loc)
        if nd != 2:
            raise NotImplementedError(f"{nd}-D transposed convolution is not supported (1-D and 2-D are)")
        x4, squeezed = (x, False) if x.type.rank == 4 else (coreai.reshape(x, [1] + list(x.type.shape), loc=loc), True)
        oshape = ([1] if squeezed else []) + list(shape)
        r = _conv_transpose2d(vm, node, loc, x4, w, bias, _pair(stride), _pair(padding), _pair(dilation),
                              _pair(output_padding), groups, oshape)
        return _reshape(r, shape, loc)
    if nd == 1:
        xs = list(x.type.shape)
        x2 = coreai.reshape(x, xs[:-1] + [1, xs[-1]], loc=loc)
        ws = list(w.type.shape)
        w2 = coreai.reshape(w, ws[:-1] + [1, ws[-1]], loc=loc)
        r = coreai.conv2d(x2, w2, bias, strides=[1, stride[0]], pads=[0, padding[0], 0, padding[0]],
                          dilations=[1, dilation[0]], groups=groups, loc=loc)
        return coreai.reshape(r, list(shape), loc=loc)
    if nd != 2:
        raise NotImplementedError(f"{nd}-D convolution is not supported (1-D and 2-D are)")
    if len(padding) == 1:
        padding = padding * 2
    if len(stride) == 1:
        stride = stride * 2
    if len(dilation) == 1:
        dilation = dilation * 2
    batched = x.type.rank == 4
    if not batched:
        x = coreai.reshape(x, [1] + list(x.type.shape), loc=loc)
    r = coreai.conv2d(x, w, bias, strides=stride, pads=[padding[0], padding[1], padding[0], padding[1]],
                      dilations=dilation, groups=groups, loc=loc)
    return _reshape(r, shape, loc)


def _pair(v, default=None):
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        return default
    if isinstance(v, int):
        return [v, v]
    v = [int(a) for a in v]
    return v * 2 if len(v) == 1 else v


def _as_4d(x, loc):
    if x.type.rank == 4:
        return x, False
    return coreai.reshape(x, [1] + list(x.type.shape), loc=loc), True


@register("aten::max_pool2d_with_indices.default", "aten::max_pool2d.default")
def _max_pool2d(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    k = _pair(node.args[1])
    s = _pair(_arg(node, 2, "stride", None), k)
    p = _pair(_arg(node, 3, "padding", 0), [0, 0])
    d = _pair(_arg(node, 4, "dilation", 1), [1, 1])
    ceil = bool(_arg(node, 5, "ceil_mode", False))
    if "with_indices" in qualified_name(node.target) and 1 in _used_results(node):
        raise NotImplementedError("max_pool2d indices (return_indices=True) are not supported")
    x4, squeezed = _as_4d(x, loc)
    r = coreai.max_pool2d(x4, k, s, [p[0], p[1], p[0], p[1]], d, ceil, loc=loc)
    if squeezed:
        r = coreai.reshape(r, list(r.type.shape[1:]), loc=loc)
    return [r, None] if "with_indices" in qualified_name(node.target) else r


@register("aten::avg_pool2d.default")
def _avg_pool2d(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    k = _pair(node.args[1])
    s = _pair(_arg(node, 2, "stride", None), k)
    p = _pair(_arg(node, 3, "padding", 0), [0, 0])
    ceil = bool(_arg(node, 4, "ceil_mode", False))
    cip = bool(_arg(node, 5, "count_include_pad", True))
    divisor = _arg(node, 6, "divisor_override", None)
    x4, squeezed = _as_4d(x, loc)
    pads = [p[0], p[1], p[0], p[1]]
    if divisor is not None:
        if ceil:
            # ceil_mode adds a last window that runs past the end: PyTorch's
            # output size, reached by padding the end with zeros (which add
            # nothing to a sum; the divisor is fixed)
            for axis in range(2):
                n = x4.type.shape[2 + axis] + 2 * p[axis]
                out = -(-(n - k[axis]) // s[axis]) + 1
                if (out - 1) * s[axis] >= x4.type.shape[2 + axis] + p[axis]:
                    out -= 1
                pads[2 + axis] += max(0, (out - 1) * s[axis] + k[axis] - n)
        r = coreai.sumpool2d(x4, k, s, [1, 1], pads, loc=loc)
        r = coreai.div(r, _const(float(divisor), r.type.element_type, loc), loc=loc)
    else:
        r = coreai.avg_pool2d(x4, k, s, pads, ceil, cip, loc=loc)
    if squeezed:
        r = coreai.reshape(r, list(r.type.shape[1:]), loc=loc)
    return r


@register("aten::_adaptive_avg_pool2d.default", "aten::adaptive_avg_pool2d.default")
def _adaptive_avg_pool2d(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    oh, ow = _pair(node.args[1])
    x4, squeezed = _as_4d(x, loc)
    ih, iw = x4.type.shape[2], x4.type.shape[3]
    if oh == 1 and ow == 1:
        r = coreai.reduce_mean(x4, [2, 3], keep_dims=True, loc=loc)
    elif ih % oh == 0 and iw % ow == 0:
        r = coreai.avg_pool2d(x4, [ih // oh, iw // ow], [ih // oh, iw // ow], loc=loc)
    else:
        rows = []
        for i in range(oh):
            h0, h1 = (i * ih) // oh, -((-(i + 1) * ih) // oh)
            cols = []
            for j in range(ow):
                w0, w1 = (j * iw) // ow, -((-(j + 1) * iw) // ow)
                win = coreai.slice(x4, [0, 0, h0, w0], [x4.type.shape[0], x4.type.shape[1], h1, w1], loc=loc)
                cols.append(coreai.reduce_mean(win, [2, 3], keep_dims=True, loc=loc))
            rows.append(cols[0] if len(cols) == 1 else coreai.concat(cols, 3, loc=loc))
        r = rows[0] if len(rows) == 1 else coreai.concat(rows, 2, loc=loc)
    if squeezed:
        r = coreai.reshape(r, list(r.type.shape[1:]), loc=loc)
    return r


# ---------------------------------------------------------------------------
# normalization
# ---------------------------------------------------------------------------


def _layer_norm_body(x, w, b, axes, eps, loc):
    dt = x.type.element_type
    mean = coreai.reduce_mean(x, axes, keep_dims=True, loc=loc)
    d = coreai.sub(x, mean, loc=loc)
    var = coreai.reduce_mean(coreai.mul(d, d, loc=loc), axes, keep_dims=True, loc=loc)
    y = coreai.mul(d, coreai.rsqrt(coreai.add(var, _const(eps, dt, loc), loc=loc), loc=loc), loc=loc)
    if w is not None:
        y = coreai.mul(y, w, loc=loc)
    if b is not None:
        y = coreai.add(y, b, loc=loc)
    return y


# RMSNorm as Hugging Face (Llama, Qwen, Mistral, Phi-3, T5...) writes it,
#     x * rsqrt(mean(x ** 2, -1, keepdim=True) + eps)   [then  weight * that]
# (no ATen op of its own), becomes one ``rms_norm`` composite: the matcher
# runs on the ``mul`` nodes, the ops it replaces are left dead for optimize().
# It is the built-in ``aten::mul.Tensor`` lowering; inside an externalized
# graph's body nothing is matched (the user chose that boundary).

_PASS_F32 = ("aten::_to_copy.default", "aten::clone.default", "aten::alias.default")
_MUL_TENSOR = _binary_arith(coreai.mul)


def _is_f32(n) -> bool:
    try:
        return isinstance(n, fx.Node) and node_dtype(n) == torch.float32
    except ValueError:
        return False


def _through_f32_copies(n):
    """``n`` with float32-to-float32 copies (``.to(torch.float32)`` of an f32 tensor) skipped."""
    while (isinstance(n, fx.Node) and n.op == "call_function" and qualified_name(n.target) in _PASS_F32
           and _is_f32(n) and _is_f32(n.args[0])):
        n = n.args[0]
    return n


def _match_rms(node):
    """``(x, eps)`` when ``node`` is ``x * rsqrt(mean(x^2 over the last axis,
    keepdim) + eps)`` (operands in either order; ``x^2`` as ``pow(x, 2)`` or
    ``x * x``), all f32; else None."""
    if not (node.op == "call_function" and qualified_name(node.target) == "aten::mul.Tensor" and _is_f32(node)):
        return None
    a, b = node.args[0], node.args[1]
    for x, r in ((a, b), (b, a)):
        r = _through_f32_copies(r)
        if not (isinstance(r, fx.Node) and qualified_name(r.target) == "aten::rsqrt.default"):
            continue
        add = _through_f32_copies(r.args[0])
        if not (isinstance(add, fx.Node) and qualified_name(add.target) in ("aten::add.Tensor", "aten::add.Scalar")
                and add.kwargs.get("alpha", 1) == 1 and len(add.args) == 2):
            continue
        mean, eps = add.args
        if isinstance(mean, (int, float)) and isinstance(eps, fx.Node):
            mean, eps = eps, mean
        if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not isinstance(mean, fx.Node):
            continue
        if qualified_name(mean.target) != "aten::mean.dim" or not _is_f32(mean):
            continue
        rank = len(node_meta(mean)[0])
        dims = list(mean.args[1]) if len(mean.args) > 1 and mean.args[1] is not None else None
        keep = mean.args[2] if len(mean.args) > 2 else mean.kwargs.get("keepdim", False)
        if dims is None or len(dims) != 1 or dims[0] not in (-1, rank - 1) or not keep \
                or mean.kwargs.get("dtype") is not None:
            continue
        sq = _through_f32_copies(mean.args[0])
        if not isinstance(sq, fx.Node):
            continue
        name = qualified_name(sq.target)
        if name == "aten::pow.Tensor_Scalar" and sq.args[1] == 2:
            base = sq.args[0]
        elif name == "aten::mul.Tensor" and sq.args[0] is sq.args[1]:
            base = sq.args[0]
        else:
            continue
        if _through_f32_copies(base) is not _through_f32_copies(x) or not _is_f32(x):
            continue
        if node_meta(node)[0] != node_meta(x)[0]:
            continue
        return x, float(eps)
    return None


def _rms_norm_body(x, scale, eps, loc):
    ms = coreai.reduce_mean(coreai.mul(x, x, loc=loc), [x.type.rank - 1], keep_dims=True, loc=loc)
    y = coreai.mul(x, coreai.rsqrt(coreai.add(ms, _const(eps, ir.f32, loc), loc=loc), loc=loc), loc=loc)
    return y if scale is None else coreai.mul(y, scale, loc=loc)


def _rms_norm_call(vm, x_node, scale, eps, loc):
    x = _v(vm, x_node, None, loc)
    inputs = [("input", x)] + ([("scale", scale)] if scale is not None else [])

    def body(args):
        return [_rms_norm_body(args[0], args[1] if scale is not None else None, eps, loc)]

    return vm.ctx.composite("rms_norm", {"axes": -1, "eps": eps}, inputs, ["output"], body, loc)[0]


@register("aten::mul.Tensor")
def lower_mul_with_rms_norm(vm, node, loc):
    """``aten::mul.Tensor``, recognising RMSNorm (see above): the normalised
    value itself, or ``weight * normalised`` (the scale folded into the call
    when the normalised value has no other use)."""
    if getattr(vm.ctx, "in_composite_body", False):
        # an externalized graph's body (e.g. a user's rms_norm) stays op by op
        return _MUL_TENSOR(vm, node, loc)
    m = _match_rms(node)
    if m is not None:
        return _rms_norm_call(vm, m[0], None, m[1], loc)
    if _is_f32(node):
        for w, y in ((node.args[0], node.args[1]), (node.args[1], node.args[0])):
            y0 = _through_f32_copies(y)
            if not isinstance(y0, fx.Node) or not isinstance(w, fx.Node) or not _is_f32(w):
                continue
            m = _match_rms(y0)
            if m is None or len(y0.users) != 1 or (y is not y0 and len(y.users) != 1):
                continue
            if node_meta(node)[0] != node_meta(m[0])[0]:
                continue  # the scale must not broadcast the result beyond the input's shape
            return _rms_norm_call(vm, m[0], _v(vm, w, ir.f32, loc), m[1], loc)
    return _MUL_TENSOR(vm, node, loc)


@register("aten::native_layer_norm.default", "aten::layer_norm.default")
def _native_layer_norm(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    normalized = list(node.args[1])
    w = _arg(node, 2, "weight", None)
    b = _arg(node, 3, "bias", None)
    eps = float(_arg(node, 4, "eps", 1e-5))
    rank = x.type.rank
    axes = list(range(rank - len(normalized), rank))
    dt = x.type.element_type
    fx_ = _cast(x, _float_of(dt), loc)
    wv = None if w is None else _v(vm, w, fx_.type.element_type, loc)
    bv = None if b is None else _v(vm, b, fx_.type.element_type, loc)
    used = {0} if "native" not in qualified_name(node.target) else _used_results(node)
    results = [None, None, None]
    if 0 in used:
        inputs = [("input", fx_)] + ([("weight", wv)] if wv is not None else []) + \
                 ([("bias", bv)] if bv is not None else [])

        def body(args):
            a = list(args)
            xa = a.pop(0)
            wa = a.pop(0) if wv is not None else None
            ba = a.pop(0) if bv is not None else None
            return [_layer_norm_body(xa, wa, ba, axes, eps, loc)]

        y = vm.ctx.composite("layer_norm", {"axes": axes, "eps": eps}, inputs, ["output"], body, loc)[0]
        results[0] = _cast(y, dt, loc)
    if 1 in used or 2 in used:
        mean = coreai.reduce_mean(fx_, axes, keep_dims=True, loc=loc)
        d = coreai.sub(fx_, mean, loc=loc)
        var = coreai.reduce_mean(coreai.mul(d, d, loc=loc), axes, keep_dims=True, loc=loc)
        results[1] = mean
        results[2] = coreai.rsqrt(coreai.add(var, _const(eps, var.type.element_type, loc), loc=loc), loc=loc)
    if "native" not in qualified_name(node.target):
        return results[0]
    return results


@register("aten::native_group_norm.default", "aten::group_norm.default")
def _native_group_norm(vm, node, loc):
    name = qualified_name(node.target)
    x = _v(vm, node.args[0], None, loc)
    if "native" in name:
        w, b = node.args[1], node.args[2]
        groups = int(node.args[6])
        eps = float(node.args[7])
    else:  # group_norm(input, num_groups, weight, bias, eps, cudnn_enabled)
        groups = int(node.args[1])
        w = _arg(node, 2, "weight", None)
        b = _arg(node, 3, "bias", None)
        eps = float(_arg(node, 4, "eps", 1e-5))
    dt = x.type.element_type
    xf = _cast(x, _float_of(dt), loc)
    fdt = xf.type.element_type
    wv = None if w is None else _v(vm, w, fdt, loc)
    bv = None if b is None else _v(vm, b, fdt, loc)
    shape = list(xf.type.shape)
    n, c = shape[0], shape[1]
    spatial = shape[2:]

    def body(args):
        a = list(args)
        xa = a.pop(0)
        wa = a.pop(0) if wv is not None else None
        ba = a.pop(0) if bv is not None else None
        g = coreai.reshape(xa, [n, groups, -1], loc=loc)
        y = _layer_norm_body(g, None, None, [2], eps, loc)
        y = coreai.reshape(y, shape, loc=loc)
        cshape = [c] + [1] * len(spatial)
        if wa is not None:
            y = coreai.mul(y, coreai.reshape(wa, cshape, loc=loc), loc=loc)
        if ba is not None:
            y = coreai.add(y, coreai.reshape(ba, cshape, loc=loc), loc=loc)
        return [y]

    inputs = [("input", xf)] + ([("weight", wv)] if wv is not None else []) + ([("bias", bv)] if bv is not None else [])
    y = vm.ctx.composite("group_norm", {"num_groups": groups, "eps": eps}, inputs, ["output"], body, loc)[0]
    y = _cast(y, dt, loc)
    if "native" not in name:
        return y
    used = _used_results(node)
    out = [y, None, None]
    if 1 in used or 2 in used:
        g = coreai.reshape(xf, [n, groups, -1], loc=loc)
        mean = coreai.reduce_mean(g, [2], keep_dims=False, loc=loc)
        d = coreai.sub(g, coreai.reshape(mean, [n, groups, 1], loc=loc), loc=loc)
        var = coreai.reduce_mean(coreai.mul(d, d, loc=loc), [2], loc=loc)
        out[1] = mean
        out[2] = coreai.rsqrt(coreai.add(var, _const(eps, fdt, loc), loc=loc), loc=loc)
    return out


def _channel_affine(y, w, b, cshape, loc):
    if w is not None:
        y = coreai.mul(y, coreai.reshape(w, cshape, loc=loc), loc=loc)
    if b is not None:
        y = coreai.add(y, coreai.reshape(b, cshape, loc=loc), loc=loc)
    return y


def _batch_norm(vm, node, loc, x_arg, w, b, rm, rv, training, eps, tuple_result=True):
    """Batch statistics when training (or without running statistics);
    otherwise the ``batch_norm`` composite of docs/composite-ops.md: inputs
    ``input [N, C, *]``, ``gamma [C]``, ``beta [C]`` (each only when
    present), ``mean [C]``, ``variance [C]``; attribute ``eps``."""
    if training:
        inorm = _instance_norm_pattern(vm, node, loc, x_arg, w, b, rm, eps)
        if inorm is not None:
            return inorm if not tuple_result else [inorm, None, None]
    x = _v(vm, x_arg, None, loc)
    dt = x.type.element_type
    xf = _cast(x, _float_of(dt), loc)
    fdt = xf.type.element_type
    c = xf.type.shape[1] if xf.type.rank > 1 else xf.type.shape[0]
    cshape = [1, c] + [1] * (xf.type.rank - 2) if xf.type.rank > 1 else [c]
    axes = [0] + list(range(2, xf.type.rank))
    wv = None if w is None else _v(vm, w, fdt, loc)
    bv = None if b is None else _v(vm, b, fdt, loc)
    if training or rm is None:
        mean = coreai.reduce_mean(xf, axes, keep_dims=True, loc=loc)
        d = coreai.sub(xf, mean, loc=loc)
        var = coreai.reduce_mean(coreai.mul(d, d, loc=loc), axes, keep_dims=True, loc=loc)
        inv = coreai.rsqrt(coreai.add(var, _const(eps, fdt, loc), loc=loc), loc=loc)
        y = _channel_affine(coreai.mul(d, inv, loc=loc), wv, bv, cshape, loc)
        y = _cast(y, dt, loc)
        if not tuple_result:
            return y
        return [y, coreai.reshape(mean, [c], loc=loc), coreai.reshape(inv, [c], loc=loc)]
    mean = _reshape(_v(vm, rm, fdt, loc), [c], loc)
    var = _reshape(_v(vm, rv, fdt, loc), [c], loc)

    def body(args):
        a = list(args)
        xa = a.pop(0)
        wa = a.pop(0) if wv is not None else None
        ba = a.pop(0) if bv is not None else None
        ma, va = a
        y = coreai.mul(coreai.sub(xa, coreai.reshape(ma, cshape, loc=loc), loc=loc),
                       coreai.rsqrt(coreai.add(coreai.reshape(va, cshape, loc=loc), _const(eps, fdt, loc), loc=loc),
                                    loc=loc), loc=loc)
        return [_channel_affine(y, wa, ba, cshape, loc)]

    if xf.type.rank >= 2:
        inputs = [("input", xf)] + ([("gamma", wv)] if wv is not None else []) + \
                 ([("beta", bv)] if bv is not None else []) + [("mean", mean), ("variance", var)]
        y = vm.ctx.composite("batch_norm", {"eps": eps}, inputs, ["output"], body, loc)[0]
    else:
        y = body([v for v in (xf, wv, bv, mean, var) if v is not None])[0]
    y = _cast(y, dt, loc)
    if not tuple_result:
        return y
    return [y, None, None]


_RESHAPES = ("aten::view.default", "aten::_unsafe_view.default", "aten::reshape.default", "aten::view_copy.default",
             "aten::_reshape_alias.default", "aten::_reshape_alias_copy.default")


def _instance_norm_pattern(vm, node, loc, x_arg, w, b, rm, eps):
    """When ``instance_norm`` is decomposed (a table that does not keep it),
    ``F.instance_norm`` appears as ``native_batch_norm(view(x, [1, N*C, *S]), repeat(w, [N]),
    repeat(b, [N]), ..., training=True)``.  Recognise that form (batch
    statistics of a single-sample view, per-channel affine repeated N times,
    only the normalised result used) and emit the ``instance_norm``
    composite on ``x`` (docs/composite-ops.md: inputs ``input``, ``gamma``,
    ``beta``; attribute ``eps``).  Returns the result in the view's shape,
    or ``None`` when the graph is not of that form."""
    if not isinstance(x_arg, fx.Node) or x_arg.op != "call_function" or qualified_name(x_arg.target) not in _RESHAPES:
        return None
    if _used_results(node) - {0}:
        return None
    src = x_arg.args[0]
    if not isinstance(src, fx.Node):
        return None
    view_shape, _ = node_meta(x_arg)
    src_shape, src_dt = node_meta(src)
    view_shape, src_shape = list(view_shape), list(src_shape)
    if len(src_shape) < 3 or len(view_shape) != len(src_shape) or view_shape[0] != 1:
        return None
    n, c = src_shape[0], src_shape[1]
    if view_shape[1] != n * c or view_shape[2:] != src_shape[2:]:
        return None

    def per_channel(arg):
        """The [C] tensor that ``arg`` repeats N times (``None`` for absent)."""
        if arg is None:
            return True, None
        if not isinstance(arg, fx.Node) or arg.op != "call_function":
            return False, None
        if qualified_name(arg.target) != "aten::repeat.default" or list(arg.args[1]) != [n]:
            return False, None
        inner = arg.args[0]
        if not isinstance(inner, fx.Node) or list(node_meta(inner)[0]) != [c]:
            return False, None
        return True, inner

    ok_w, w0 = per_channel(w)
    ok_b, b0 = per_channel(b)
    if not (ok_w and ok_b):
        return None
    x = _v(vm, src, None, loc)
    dt = x.type.element_type
    xf = _cast(x, _float_of(dt), loc)
    y = _instance_norm_composite(vm, xf, None if w0 is None else _v(vm, w0, xf.type.element_type, loc),
                                 None if b0 is None else _v(vm, b0, xf.type.element_type, loc), eps, loc)
    return _cast(coreai.reshape(y, view_shape, loc=loc), dt, loc)


def _instance_norm_composite(vm, xf, wv, bv, eps, loc):
    """The ``instance_norm`` composite graph called on ``xf`` ``[N, C, *S]`` (f32)."""
    c = xf.type.shape[1]
    cshape = [c] + [1] * (xf.type.rank - 2)
    axes = list(range(2, xf.type.rank))

    def body(args):
        rest = list(args)
        xa = rest.pop(0)
        wa = rest.pop(0) if wv is not None else None
        ba = rest.pop(0) if bv is not None else None
        return [_channel_affine(_layer_norm_body(xa, None, None, axes, eps, loc), wa, ba, cshape, loc)]

    inputs = [("input", xf)] + ([("gamma", wv)] if wv is not None else []) + ([("beta", bv)] if bv is not None else [])
    return vm.ctx.composite("instance_norm", {"eps": eps}, inputs, ["output"], body, loc)[0]


@register("aten::native_batch_norm.default", "aten::_native_batch_norm_legit_functional.default")
def _native_batch_norm(vm, node, loc):
    a = node.args
    training = bool(a[5])
    if training and a[3] is not None and "functional" not in qualified_name(node.target):
        pass  # running-stat updates are not part of the result; batch statistics are used
    out = _batch_norm(vm, node, loc, a[0], a[1], a[2], a[3], a[4], training, float(a[7]))
    if "functional" in qualified_name(node.target):
        out = out + [None, None]
    return out


@register("aten::_native_batch_norm_legit_no_training.default")
def _bn_no_training(vm, node, loc):
    a = node.args
    return _batch_norm(vm, node, loc, a[0], a[1], a[2], a[3], a[4], False, float(a[6]))


@register("aten::_native_batch_norm_legit.default")
def _bn_legit(vm, node, loc):
    a = node.args  # (input, weight, bias, running_mean, running_var, training, momentum, eps)
    return _batch_norm(vm, node, loc, a[0], a[1], a[2], a[3], a[4], bool(a[5]), float(a[7]))


@register("aten::_native_batch_norm_legit.no_stats")
def _bn_legit_no_stats(vm, node, loc):
    a = node.args  # (input, weight, bias, training, momentum, eps)
    return _batch_norm(vm, node, loc, a[0], a[1], a[2], None, None, True, float(a[5]))


@register("aten::batch_norm.default")
def _batch_norm_aten(vm, node, loc):
    a = node.args
    return _batch_norm(vm, node, loc, a[0], a[1], a[2], a[3], a[4], bool(a[5]), float(a[7]), tuple_result=False)


@register("aten::instance_norm.default")
def _instance_norm(vm, node, loc):
    # (input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled)
    a = node.args
    x = _v(vm, a[0], None, loc)
    eps = float(a[7])
    if not bool(a[5]) and a[3] is not None:  # running statistics: a per-channel batch norm
        return _batch_norm(vm, node, loc, a[0], a[1], a[2], a[3], a[4], False, eps, tuple_result=False)
    dt = x.type.element_type
    xf = _cast(x, _float_of(dt), loc)
    fdt = xf.type.element_type
    wv = None if a[1] is None else _v(vm, a[1], fdt, loc)
    bv = None if a[2] is None else _v(vm, a[2], fdt, loc)
    return _cast(_instance_norm_composite(vm, xf, wv, bv, eps, loc), dt, loc)


# ---------------------------------------------------------------------------
# attention (PyTorch >= 2.0 graphs)
# ---------------------------------------------------------------------------


def _repeat_heads(x, hq: int, loc):
    """Head ``h`` of the result is head ``h // (hq / H)`` of ``x`` ([B, H, T, D])."""
    h = x.type.shape[1]
    if h == hq or h == 1:
        return x
    return coreai.gather(x, coreai.constant(np.arange(hq, dtype=np.int64) // (hq // h), ir.i64, loc=loc), 1,
                         loc=loc)


def _sdpa_composite_ok(q, k, v, mv, enable_gqa: bool) -> bool:
    """Whether the ``scaled_dot_product_attention`` composite (its kernel
    contract, docs/composite-ops.md) computes what ATen does for these
    operands: f32, rank 4, batch 1 or B, heads dividing the query heads
    (grouped only with ``enable_gqa``, else equal or 1 = broadcast), and a
    bool mask (the kernel reads a float mask as nonzero = attend, whereas
    ATen adds it)."""
    if any(t.type.element_type is not ir.f32 for t in (q, k, v)) or any(t.type.rank != 4 for t in (q, k, v)):
        return False
    if mv is not None and (mv.type.element_type is not ir.bool_ or mv.type.rank > 4):
        return False
    b, hq = q.type.shape[0], q.type.shape[1]
    for t in (k, v):
        bt, ht = t.type.shape[0], t.type.shape[1]
        if bt not in (b, 1) or ht < 1 or hq % ht != 0 or not (enable_gqa or ht in (1, hq)):
            return False
    return k.type.shape[2] == v.type.shape[2] and q.type.shape[3] == k.type.shape[3]


def _sdpa_composite_body(args, scale: float, is_causal: bool, has_mask: bool, loc):
    """The composite's own semantics (docs/composite-ops.md): a masked key's
    logit gets -1e4 added; ``is_causal`` without a mask is aligned lower-right."""
    q, k, v = args[0], args[1], args[2]
    hq = q.type.shape[1]
    k, v = _repeat_heads(k, hq, loc), _repeat_heads(v, hq, loc)
    s = coreai.matmul(coreai.mul(q, _const(scale, ir.f32, loc), loc=loc), k, transpose_b=True, loc=loc)
    L, S = q.type.shape[2], k.type.shape[2]
    mask = args[3] if has_mask else None
    if mask is None and is_causal:
        p = np.arange(S)[None, :] - (S - L)
        mask = coreai.constant(p <= np.arange(L)[:, None], ir.bool_, loc=loc)
    if mask is not None:
        blocked = coreai.cast(coreai.logical_not(mask, loc=loc), ir.f32, loc=loc)
        s = coreai.add(s, coreai.mul(blocked, _const(-1e4, ir.f32, loc), loc=loc), loc=loc)
    return [coreai.matmul(coreai.softmax(s, -1, loc=loc), v, loc=loc)]


def _rows_with_a_key(mv, loc):
    """[..., Tq, 1] bool: the query rows of a bool mask that see some key."""
    f = coreai.cast(mv, ir.f32, loc=loc)
    return coreai.cast(coreai.reduce_max(f, [mv.type.rank - 1], keep_dims=True, loc=loc), ir.bool_, loc=loc)


@register("aten::scaled_dot_product_attention.default")
def _sdpa(vm, node, loc):
    """ATen's semantics: ``softmax(q k^T * scale + mask) v``, a bool mask is
    -inf where false, ``is_causal`` is aligned upper-left (query i sees keys
    j <= i), ``enable_gqa`` repeats each K/V head for its group of query
    heads, and a query row that sees no key gives zeros (PyTorch >= 2.5's
    safe softmax).  When the operands fit the kernel contract this is one
    ``scaled_dot_product_attention`` composite call (the kernel drops masked
    keys, which equals -inf for every row that sees a key; the rows that see
    none are zeroed after the call when the mask is not a constant without
    such rows); otherwise the op-by-op graph."""
    q = _v(vm, node.args[0], None, loc)
    k = _v(vm, node.args[1], None, loc)
    v = _v(vm, node.args[2], None, loc)
    mask = _arg(node, 3, "attn_mask", None)
    dropout = _arg(node, 4, "dropout_p", 0.0)
    causal = bool(_arg(node, 5, "is_causal", False))
    scale = node.kwargs.get("scale", node.args[6] if len(node.args) > 6 else None)
    enable_gqa = bool(node.kwargs.get("enable_gqa", node.args[7] if len(node.args) > 7 else False))
    if dropout:
        raise NotImplementedError("scaled_dot_product_attention with dropout_p > 0 is not supported")
    dt = q.type.element_type
    d = q.type.shape[-1]
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    L, S = q.type.shape[-2], k.type.shape[-2]
    mv = None if mask is None else _v(vm, mask, None, loc)
    if causal and mv is None and L != S:
        # upper-left: every row sees key 0, so no row is left without a key
        mv = coreai.constant(np.tril(np.ones((L, S), dtype=bool)), ir.bool_, loc=loc)
        causal = False
    if _sdpa_composite_ok(q, k, v, mv, enable_gqa):
        inputs = [("query", q), ("key", k), ("value", v)] + ([("attn_mask", mv)] if mv is not None else [])
        attrs = {"scale": scale, "is_causal": causal and mv is None}
        has_mask = mv is not None

        def body(args):
            return _sdpa_composite_body(args, scale, attrs["is_causal"], has_mask, loc)

        out = vm.ctx.composite("scaled_dot_product_attention", attrs, inputs, ["output"], body, loc)[0]
        if mv is not None:
            seen = bool(np.asarray(mv.constant_value).any(axis=-1).all()) if mv.is_constant else False
            if not seen:
                out = coreai.where(_rows_with_a_key(mv, loc), out, _const(0.0, dt, loc), loc=loc)
        return out
    hq = q.type.shape[1] if q.type.rank == 4 else None
    if enable_gqa and hq is not None:
        k, v = _repeat_heads(k, hq, loc), _repeat_heads(v, hq, loc)
    s = coreai.mul(coreai.matmul(q, k, transpose_b=True, loc=loc), _const(scale, dt, loc), loc=loc)
    if causal:
        m = coreai.constant(np.tril(np.ones((L, S), dtype=bool)), ir.bool_, loc=loc)
        s = coreai.where(m, s, _const(float("-inf"), dt, loc), loc=loc)
    if mv is not None:
        if mv.type.element_type is ir.bool_:
            s = coreai.where(mv, s, _const(float("-inf"), dt, loc), loc=loc)
        else:
            s = coreai.add(s, _cast(mv, dt, loc), loc=loc)
    p = coreai.softmax(s, -1, loc=loc)
    if mv is not None:
        # safe softmax: a row whose logits are all -inf gives zeros, not NaN
        top = coreai.reduce_max(s, [s.type.rank - 1], keep_dims=True, loc=loc)
        live = coreai.greater(top, _const(float("-inf"), dt, loc), loc=loc)
        p = coreai.where(live, p, _const(0.0, dt, loc), loc=loc)
    return coreai.matmul(p, v, loc=loc)


register("aten::unsafe_split.Tensor", "aten::unsafe_split_with_sizes.default")(_split)


# ---------------------------------------------------------------------------
# resampling
# ---------------------------------------------------------------------------


def _nearest_indices(in_size: int, out_size: int, scale) -> np.ndarray:
    """PyTorch's nearest source index for every output position."""
    dst = np.arange(out_size)
    if out_size == in_size:
        return dst
    if out_size == 2 * in_size:
        return dst >> 1
    s = np.float32(1.0 / scale) if scale else np.float32(in_size) / np.float32(out_size)
    return np.minimum(np.floor(dst.astype(np.float32) * s).astype(np.int64), in_size - 1)


@register("aten::upsample_nearest2d.vec", "aten::upsample_nearest2d.default", "aten::upsample_nearest1d.vec",
          "aten::upsample_nearest1d.default")
def _upsample_nearest(vm, node, loc):
    x = _v(vm, node.args[0], None, loc)
    shape, _ = node_meta(node)
    name = qualified_name(node.target)
    nd = 2 if "2d" in name else 1
    if name.endswith(".vec"):
        scales = _arg(node, 2, "scale_factors", None)
        scales = list(scales) if scales else [None] * nd
    else:
        scales = [_arg(node, 2 + i, ("scales_h", "scales_w")[i] if nd == 2 else "scales", None) for i in range(nd)]
    rank = x.type.rank
    for i in range(nd):
        axis = rank - nd + i
        idx = _nearest_indices(x.type.shape[axis], shape[axis], scales[i])
        if not np.array_equal(idx, np.arange(x.type.shape[axis])):
            x = coreai.gather(x, coreai.constant(idx.astype(np.int64), ir.i64, loc=loc), axis, loc=loc)
    return x


# ---------------------------------------------------------------------------
# transposed convolution
# ---------------------------------------------------------------------------


def _conv_transpose2d(vm, node, loc, x, w, bias, stride, padding, dilation, output_padding, groups, out_shape):
    n, cin, h, wd = x.type.shape
    cin_w, cout_g, kh, kw = w.type.shape
    sh, sw = stride
    # 1. spread the input: (s - 1) zeros between neighbours
    if sh > 1 or sw > 1:
        y = coreai.reshape(x, [n, cin, h, 1, wd, 1], loc=loc)
        y = coreai.pad(y, [0, 0, 0, 0, 0, 0, 0, 0, 0, sh - 1, 0, sw - 1], loc=loc)
        y = coreai.reshape(y, [n, cin, h * sh, wd * sw], loc=loc)
        y = coreai.slice(y, [0, 0, 0, 0], [n, cin, (h - 1) * sh + 1, (wd - 1) * sw + 1], loc=loc)
    else:
        y = x
    # 2. pad by dilation * (k - 1) - padding (+ output_padding at the end); negative = crop
    ph = dilation[0] * (kh - 1) - padding[0]
    pw = dilation[1] * (kw - 1) - padding[1]
    pads = [ph, pw, ph + output_padding[0], pw + output_padding[1]]
    if any(p < 0 for p in pads):
        hh, ww = y.type.shape[2], y.type.shape[3]
        y = coreai.slice(y, [0, 0, max(-pads[0], 0), max(-pads[1], 0)],
                         [n, cin, hh - max(-pads[2], 0), ww - max(-pads[3], 0)], loc=loc)
        pads = [max(p, 0) for p in pads]
    # 3. the weight: [Cin, Cout/g, kh, kw] -> [Cout, Cin/g, kh, kw], spatially flipped
    g = groups
    wt = coreai.reshape(w, [g, cin_w // g, cout_g, kh, kw], loc=loc)
    wt = coreai.transpose(wt, [0, 2, 1, 3, 4], loc=loc)
    wt = coreai.reshape(wt, [g * cout_g, cin_w // g, kh, kw], loc=loc)
    wt = coreai.gather(wt, coreai.constant(np.arange(kh - 1, -1, -1, dtype=np.int64), ir.i64, loc=loc), 2, loc=loc)
    wt = coreai.gather(wt, coreai.constant(np.arange(kw - 1, -1, -1, dtype=np.int64), ir.i64, loc=loc), 3, loc=loc)
    r = coreai.conv2d(y, wt, bias, strides=[1, 1], pads=pads, dilations=list(dilation), groups=g, loc=loc)
    return _reshape(r, out_shape, loc)


# ---------------------------------------------------------------------------
# fused attention kernels of nn.MultiheadAttention / nn.TransformerEncoderLayer
# (the eval-mode "fast path" of PyTorch)
# ---------------------------------------------------------------------------


def _mha(q_in, k_in, v_in, embed_dim, heads, qkv_w, qkv_b, proj_w, proj_b, mask, mask_type, need_weights,
         average, loc):
    dt = q_in.type.element_type
    e = embed_dim
    hd = e // heads

    def proj(x, i):
        w = coreai.slice(qkv_w, [i * e, 0], [(i + 1) * e, e], loc=loc)
        b = coreai.slice(qkv_b, [i * e], [(i + 1) * e], loc=loc) if qkv_b is not None else None
        return coreai.linear(x, w, b, loc=loc)

    def heads_of(x):
        b, t = x.type.shape[0], x.type.shape[1]
        return coreai.transpose(coreai.reshape(x, [b, t, heads, hd], loc=loc), [0, 2, 1, 3], loc=loc)

    q = heads_of(proj(q_in, 0))
    k = heads_of(proj(k_in, 1))
    v = heads_of(proj(v_in, 2))
    q = coreai.mul(q, _const(1.0 / math.sqrt(hd), dt, loc), loc=loc)
    s = coreai.matmul(q, k, transpose_b=True, loc=loc)
    if mask is not None:
        b, L, S = q_in.type.shape[0], q_in.type.shape[1], k_in.type.shape[1]
        m = mask
        if m.type.rank == 2 and mask_type == 1:
            m = coreai.reshape(m, [b, 1, 1, S], loc=loc)
        elif m.type.rank == 3:
            m = coreai.reshape(m, [m.type.shape[0] // heads if m.type.shape[0] != b else b,
                                   heads if m.type.shape[0] != b else 1, L, S], loc=loc)
        if m.type.element_type is ir.bool_:
            s = coreai.where(m, _const(float("-inf"), dt, loc), s, loc=loc)
        else:
            s = coreai.add(s, _cast(m, dt, loc), loc=loc)
    p = coreai.softmax(s, -1, loc=loc)
    o = coreai.matmul(p, v, loc=loc)
    b, t = q_in.type.shape[0], q_in.type.shape[1]
    o = coreai.reshape(coreai.transpose(o, [0, 2, 1, 3], loc=loc), [b, t, e], loc=loc)
    out = coreai.linear(o, proj_w, proj_b, loc=loc)
    weights = None
    if need_weights:
        weights = coreai.reduce_mean(p, [1], loc=loc) if average else p
    return out, weights


@register("aten::_native_multi_head_attention.default")
def _native_mha(vm, node, loc):
    a = node.args
    q, k, v = (_v(vm, a[i], None, loc) for i in range(3))
    embed_dim, heads = int(a[3]), int(a[4])
    qkv_w, qkv_b, proj_w, proj_b = (None if a[i] is None else _v(vm, a[i], None, loc) for i in range(5, 9))
    mask = _arg(node, 9, "mask", None)
    need_weights = bool(_arg(node, 10, "need_weights", True))
    average = bool(_arg(node, 11, "average_attn_weights", True))
    mask_type = _arg(node, 12, "mask_type", None)
    squeeze = q.type.rank == 2
    if squeeze:
        q, k, v = (coreai.reshape(t, [1] + list(t.type.shape), loc=loc) for t in (q, k, v))
    out, weights = _mha(q, k, v, embed_dim, heads, qkv_w, qkv_b, proj_w, proj_b,
                        None if mask is None else _v(vm, mask, None, loc), mask_type, need_weights, average, loc)
    if squeeze:
        out = coreai.reshape(out, list(out.type.shape[1:]), loc=loc)
    if weights is None:
        return [out, None]
    wshape = None
    for u in node.users:
        if u.target is operator.getitem and u.args[1] == 1:
            wshape = node_shape(u)
    return [out, weights if wshape is None else _reshape(weights, wshape, loc)]


@register("aten::_transformer_encoder_layer_fwd.default")
def _transformer_layer(vm, node, loc):
    names = ["src", "embed_dim", "num_heads", "qkv_weight", "qkv_bias", "proj_weight", "proj_bias", "use_gelu",
             "norm_first", "eps", "norm_weight_1", "norm_bias_1", "norm_weight_2", "norm_bias_2", "ffn_weight_1",
             "ffn_bias_1", "ffn_weight_2", "ffn_bias_2", "mask", "mask_type"]
    p = {n: _arg(node, i, n, None) for i, n in enumerate(names)}
    val = {n: (None if p[n] is None else _v(vm, p[n], None, loc)) for n in names
           if isinstance(p[n], fx.Node) or p[n] is None}
    x = val["src"]
    eps = float(p["eps"])
    squeeze = x.type.rank == 2
    if squeeze:
        x = coreai.reshape(x, [1] + list(x.type.shape), loc=loc)
    e = int(p["embed_dim"])

    def ln(t, w, b):
        return _layer_norm_body(t, w, b, [t.type.rank - 1], eps, loc)

    def attn(t):
        out, _ = _mha(t, t, t, e, int(p["num_heads"]), val["qkv_weight"], val["qkv_bias"], val["proj_weight"],
                      val["proj_bias"], val["mask"], p["mask_type"], False, False, loc)
        return out

    def ffn(t):
        h = coreai.linear(t, val["ffn_weight_1"], val["ffn_bias_1"], loc=loc)
        h = coreai.gelu(h, loc=loc) if p["use_gelu"] else coreai.relu(h, loc=loc)
        return coreai.linear(h, val["ffn_weight_2"], val["ffn_bias_2"], loc=loc)

    if p["norm_first"]:
        x = coreai.add(x, attn(ln(x, val["norm_weight_1"], val["norm_bias_1"])), loc=loc)
        x = coreai.add(x, ffn(ln(x, val["norm_weight_2"], val["norm_bias_2"])), loc=loc)
    else:
        x = ln(coreai.add(x, attn(x), loc=loc), val["norm_weight_1"], val["norm_bias_1"])
        x = ln(coreai.add(x, ffn(x), loc=loc), val["norm_weight_2"], val["norm_bias_2"])
    if squeeze:
        x = coreai.reshape(x, list(x.type.shape[1:]), loc=loc)
    return x


def _linear_taps(in_size: int, out_size: int, align_corners: bool, scale):
    """Source indices and weights of PyTorch's (bi)linear interpolation."""
    dst = np.arange(out_size, dtype=np.float32)
    if align_corners:
        s = np.float32((in_size - 1) / (out_size - 1)) if out_size > 1 else np.float32(0)
        src = dst * s
    else:
        s = np.float32(1.0 / scale) if scale else np.float32(in_size) / np.float32(out_size)
        src = np.maximum((dst + np.float32(0.5)) * s - np.float32(0.5), np.float32(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    i1 = np.minimum(i0 + 1, in_size - 1)
    lam = (src - i0.astype(np.float32)).astype(np.float32)
    return i0, i1, lam


@register("aten::upsample_bilinear2d.vec", "aten::upsample_bilinear2d.default", "aten::upsample_linear1d.vec",
          "aten::upsample_linear1d.default")
def _upsample_linear(vm, node, loc):
    shape, dt = _out(node)
    x = _v(vm, node.args[0], _float_of(dt), loc)
    name = qualified_name(node.target)
    nd = 2 if "2d" in name else 1
    align = bool(node.args[2])
    if name.endswith(".vec"):
        scales = _arg(node, 3, "scale_factors", None)
        scales = list(scales) if scales else [None] * nd
    else:
        scales = [_arg(node, 3 + i, ("scales_h", "scales_w")[i] if nd == 2 else "scales", None) for i in range(nd)]
    rank = x.type.rank
    fdt = x.type.element_type
    for i in range(nd):
        axis = rank - nd + i
        n_in, n_out = x.type.shape[axis], shape[axis]
        if n_in == n_out and not scales[i]:
            continue
        i0, i1, lam = _linear_taps(n_in, n_out, align, scales[i])
        a = coreai.gather(x, coreai.constant(i0, ir.i64, loc=loc), axis, loc=loc)
        b = coreai.gather(x, coreai.constant(i1, ir.i64, loc=loc), axis, loc=loc)
        wshape = [1] * rank
        wshape[axis] = n_out
        w = coreai.constant(lam.reshape(wshape), fdt, loc=loc)
        x = coreai.add(a, coreai.mul(coreai.sub(b, a, loc=loc), w, loc=loc), loc=loc)
    return _cast(x, dt, loc)


# HF's rotary embedding: the aten::add.Tensor lowering that replaces the one above
from . import _rope_pattern  # noqa: E402,F401
