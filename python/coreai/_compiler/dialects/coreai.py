"""Builders for the `coreai` dialect: one function per op of
docs/model-format.md.

Each function takes Values (or Python/NumPy scalars and arrays, which become
constants of the other operand's dtype), keyword attributes and `loc=None`,
infers the result type with the verifier's rules (coreai._compiler.infer),
appends the op at the current ir.InsertionPoint and returns the result Value
(a list for ops with several results). Errors are ValueError naming the op
and its operand types.

Attributes equal to their documented default are not written (so
`reduce_sum(x, [1])` has no `keep_dims`), except that convolution and
pooling ops always carry all their window attributes.
"""
from __future__ import annotations

import builtins as _b
from typing import Sequence

import numpy as np

from .. import ir
from ..dims import Dim, Symbol
from ..dtypes import DType, is_unsigned_numpy, to_storage
from ..infer import OpError, infer
from ..ir import Attr, InsertionPoint, Location, Operation, TensorType, Value

__all__ = [
    "constant", "cast",
    "add", "sub", "mul", "div", "pow", "maximum", "minimum",
    "broadcasting_add", "broadcasting_sub", "broadcasting_mul", "broadcasting_divide",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_not", "where",
    "relu", "rsqrt", "sqrt", "exp", "log", "tanh", "sigmoid", "silu", "erf", "sin", "cos",
    "reciprocal", "floor", "ceil", "neg", "abs", "gelu", "clamp",
    "matmul", "linear", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "argmax", "softmax",
    "reshape", "transpose", "broadcast_to", "concat", "slice", "slice_update", "gather", "pad", "iota", "fill",
    "dim_value",
    "conv2d", "max_pool2d", "avg_pool2d", "sumpool2d", "elementwise_kernel", "invoke",
    "blockwise_shift_scale", "lut_to_dense", "quantize", "dequantize",
]


# ---------------------------------------------------------------------------
# plumbing
# ---------------------------------------------------------------------------

def _loc(loc) -> Location:
    if loc is None:
        return Location.unknown()
    if isinstance(loc, Location):
        return loc
    return Location.name(str(loc))


def _graph(kind: str) -> ir.Graph:
    ip = InsertionPoint.current_or_none()
    if ip is None:
        raise ValueError(f"{kind}: no insertion point; build ops inside `with ir.InsertionPoint(graph):`")
    return ip.graph


class _Pending:
    """A constant created for a scalar/array operand, appended only when the
    op it feeds type-checks."""

    def __init__(self, op: Operation) -> None:
        self.op = op

    @property
    def type(self) -> TensorType:
        return self.op.results[0].type


def _is_torch_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach") and hasattr(x, "dtype")


def _host_data(value):
    """(array, natural DType or None) of constant data given as anything."""
    if isinstance(value, Value):
        if not value.is_constant:
            raise ValueError(f"expected data, got the non-constant {value.describe()}")
        data = value.constant_value
        if value.owner.host_dtype is None and value.type.element_type is DType.bf16:
            from ..dtypes import small_float_to_f64
            return small_float_to_f64(data, DType.bf16).astype(np.float32), DType.bf16
        return data, (None if value.owner.host_dtype is not None else value.type.element_type)
    if _is_torch_tensor(value):
        t = value.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":
            return t.float().numpy(), DType.bf16
        return t.numpy(), None
    if hasattr(value, "numpy_storage") and hasattr(value, "dtype"):  # coreai.runtime.NDArray
        return value.numpy(), value.dtype
    return value, None


def _natural_dtype(arr: np.ndarray, value) -> DType:
    if isinstance(value, (bool, np.bool_)):
        return DType.bool_
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.ndarray):
        if isinstance(value, np.int32):
            return DType.i32
        return DType.i64
    k = arr.dtype
    if k == np.bool_:
        return DType.bool_
    if k.kind == "f":
        return DType.f16 if k == np.float16 else DType.f32
    if k == np.int32 or (k.kind == "i" and k.itemsize < 4):
        return DType.i32
    if k.kind == "i":
        return DType.i64
    if k.kind == "O" or k.kind in "SUV":
        raise ValueError(f"cannot make a constant from {value!r}")
    return DType.f32


def _make_constant(value, dtype, loc) -> Operation:
    data, natural = _host_data(value)
    if isinstance(data, np.ndarray) and data.dtype.kind == "u" and dtype is None:
        dtype = data.dtype
    if dtype is not None and is_unsigned_numpy(dtype):
        nd = np.dtype(dtype)
        arr = np.asarray(data)
        if arr.dtype.kind == "f" and (np.any(np.trunc(arr) != arr) or not np.all(np.isfinite(arr))):
            raise ValueError(f"coreai.constant: {nd} host constant from non-integer values {arr!r}")
        if arr.size and (arr.min() < 0 or int(arr.max()) > np.iinfo(nd).max):
            raise ValueError(f"coreai.constant: values {arr!r} out of range for {nd}")
        arr = arr.astype(nd)
        if arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise ValueError(f"coreai.constant: values {arr!r} too large for a host constant")
        op = Operation("coreai.constant", [], [TensorType(arr.shape, DType.i64)], location=_loc(loc))
        arr.setflags(write=False)
        op.data = arr
        op.host_dtype = nd
        return op
    arr = np.asarray(data)
    dt = DType.from_any(dtype) if dtype is not None else (natural or _natural_dtype(arr, data))
    if arr.ndim > ir.MAX_RANK:
        raise ValueError(f"coreai.constant: rank {arr.ndim} exceeds {ir.MAX_RANK}")
    if natural is DType.bf16 and dt is DType.bf16 and isinstance(data, np.ndarray) and data.dtype == np.uint16:
        stored = np.array(data, dtype=np.uint16)  # already bit patterns
    else:
        stored = np.array(to_storage(arr, dt, what="coreai.constant"), dtype=dt.storage, copy=True)
    stored = np.array(stored, order="C", copy=False)
    stored.setflags(write=False)
    op = Operation("coreai.constant", [], [TensorType(stored.shape, dt)], location=_loc(loc))
    op.data = stored
    return op


def _operand(x, like: DType | None, kind: str, what: str):
    """A Value, or a pending constant of dtype `like` for anything else."""
    if isinstance(x, Value):
        return x
    if isinstance(x, (_Pending,)):
        return x
    if like is None:
        raise ValueError(f"{kind}: cannot tell the dtype of {what} {x!r}; pass a Value or use coreai.constant")
    try:
        return _Pending(_make_constant(x, like, None))
    except ValueError as e:
        raise ValueError(f"{kind}: {what}: {e}") from None


def _emit(kind: str, operands: Sequence, attrs: dict, declared: Sequence[TensorType] = (), loc=None,
          callee: str | None = None) -> Operation:
    g = _graph(kind)
    types = [o.type for o in operands]
    for i, o in enumerate(operands):
        if isinstance(o, Value) and o.graph is not g:
            where = f"graph @{o.graph.name}" if o.graph is not None else "no graph (removed, or a host constant)"
            raise ValueError(f"{kind}: operand {i} ({o.type}) belongs to {where}, not to @{g.name} "
                             f"where the op is being built")
    attrs = {k: v for k, v in attrs.items() if v is not None}
    location = _loc(loc)
    try:
        results = infer(kind, types, attrs, declared)
    except OpError as e:
        msg = str(e)
        if not location.is_unknown:
            msg += f" at {location}"
        raise ValueError(msg) from None
    values = []
    for o in operands:
        if isinstance(o, _Pending):
            g.append(o.op)
            values.append(o.op.results[0])
        else:
            values.append(o)
    op = Operation(kind, values, results, attrs, callee, location)
    g.append(op)
    return op


def _one(op: Operation) -> Value:
    return op.results[0]


def _dtype_of(*xs) -> DType | None:
    for x in xs:
        if isinstance(x, Value):
            return x.type.element_type
    return None


def _ints_of(x, what: str, kind: str, n: int | None = None, pair: bool = False) -> list:
    """Integers from an int, a sequence, an array or a (host) constant Value."""
    if isinstance(x, Value):
        if not x.is_constant:
            raise ValueError(f"{kind}: {what} must be a constant to be read as an attribute, "
                             f"got {x.describe()}")
        arr = np.asarray(x.constant_value)
    elif isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{kind}: {what} must be integers, got {x!r}")
    elif isinstance(x, (int, np.integer)):
        arr = np.array([int(x)] * (2 if pair else 1))
    else:
        if _is_torch_tensor(x):
            x = x.detach().cpu().numpy()
        try:
            arr = np.asarray(x)
        except Exception:  # noqa: BLE001
            raise ValueError(f"{kind}: {what} must be integers, got {x!r}") from None
    arr = arr.reshape(-1) if arr.ndim != 0 else arr.reshape(1)
    if arr.dtype.kind == "f":
        if np.any(np.trunc(arr) != arr):
            raise ValueError(f"{kind}: {what} must be integers, got {arr.tolist()}")
    elif arr.dtype.kind not in "iu" and arr.size:
        raise ValueError(f"{kind}: {what} must be integers, got {x!r}")
    vals = [int(v) for v in arr.tolist()]
    if n is not None and len(vals) != n:
        raise ValueError(f"{kind}: {what} needs {n} integers, got {vals}")
    return vals


def _is_sym(x) -> bool:
    return isinstance(x, (Dim, Symbol))


def _extents_of(x, what: str, kind: str, n: int | None = None) -> list:
    """Like _ints_of, keeping symbolic extents (Dim, Symbol) as they are."""
    if isinstance(x, (list, tuple)) and _b.any(_is_sym(v) for v in x):
        vals = [v.dim() if isinstance(v, Symbol) else v if _is_sym(v) else _ints_of(v, what, kind, 1)[0] for v in x]
        if n is not None and len(vals) != n:
            raise ValueError(f"{kind}: {what} needs {n} values, got {vals}")
        return vals
    if _is_sym(x):
        return [x.dim() if isinstance(x, Symbol) else x]
    return _ints_of(x, what, kind, n)


def _shape_of(shape, kind: str) -> list:
    if isinstance(shape, TensorType):
        return list(shape.shape)
    return _extents_of(shape, "shape", kind)


# ---------------------------------------------------------------------------
# constants and casts
# ---------------------------------------------------------------------------

def constant(value, dtype=None, *, loc=None) -> Value:
    """A constant from a scalar, list, np.ndarray or torch.Tensor.

    dtype defaults to the data's: float -> f32 (float64 is narrowed),
    float16 -> f16, int32 -> i32, other ints -> i64, bool -> bool, torch
    bfloat16 -> bf16. An unsigned NumPy dtype makes a *host constant*: a
    value whose numbers builders read back as attributes; it is never saved
    and may not be used as an operand."""
    op = _make_constant(value, dtype, loc)
    ip = InsertionPoint.current_or_none()
    if ip is not None:
        ip.graph.append(op)
    elif op.host_dtype is None:
        raise ValueError("coreai.constant: no insertion point; build ops inside `with ir.InsertionPoint(graph):`")
    return op.results[0]


def cast(x, dtype, *, loc=None) -> Value:
    """x converted to dtype; a Python number or array x becomes a constant of dtype."""
    dt = DType.from_any(dtype)
    if not isinstance(x, Value):
        return constant(x, dt, loc=loc)
    return _one(_emit("coreai.cast", [x], {}, [x.type.with_element_type(dt)], loc))


# ---------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------

def _binary(kind: str):
    def build(a, b, *, loc=None) -> Value:
        like = _dtype_of(a, b)
        ops = [_operand(a, like, kind, "operand 0"), _operand(b, like, kind, "operand 1")]
        return _one(_emit(kind, ops, {}, (), loc))
    build.__name__ = kind.split(".")[1]
    build.__qualname__ = build.__name__
    build.__doc__ = f"`{kind}` of a and b (broadcasting); a scalar operand takes the other's dtype."
    return build


add = _binary("coreai.add")
sub = _binary("coreai.sub")
mul = _binary("coreai.mul")
div = _binary("coreai.div")
pow = _binary("coreai.pow")  # noqa: A001
maximum = _binary("coreai.maximum")
minimum = _binary("coreai.minimum")
equal = _binary("coreai.equal")
not_equal = _binary("coreai.not_equal")
less = _binary("coreai.less")
less_equal = _binary("coreai.less_equal")
greater = _binary("coreai.greater")
greater_equal = _binary("coreai.greater_equal")
logical_and = _binary("coreai.logical_and")
logical_or = _binary("coreai.logical_or")

# the names the seeds' custom lowerings use
broadcasting_add = add
broadcasting_sub = sub
broadcasting_mul = mul
broadcasting_divide = div


def _unary(kind: str):
    def build(x, *, loc=None) -> Value:
        if not isinstance(x, Value):
            raise ValueError(f"{kind}: the operand must be a Value, got {x!r}")
        return _one(_emit(kind, [x], {}, (), loc))
    build.__name__ = kind.split(".")[1]
    build.__qualname__ = build.__name__
    build.__doc__ = f"`{kind}` of x."
    return build


relu = _unary("coreai.relu")
rsqrt = _unary("coreai.rsqrt")
sqrt = _unary("coreai.sqrt")
exp = _unary("coreai.exp")
log = _unary("coreai.log")
tanh = _unary("coreai.tanh")
sigmoid = _unary("coreai.sigmoid")
silu = _unary("coreai.silu")
erf = _unary("coreai.erf")
sin = _unary("coreai.sin")
cos = _unary("coreai.cos")
reciprocal = _unary("coreai.reciprocal")
floor = _unary("coreai.floor")
ceil = _unary("coreai.ceil")
neg = _unary("coreai.neg")
abs = _unary("coreai.abs")  # noqa: A001
logical_not = _unary("coreai.logical_not")


def where(cond, a, b, *, loc=None) -> Value:
    """Elements of a where cond is true, else of b (all three broadcast)."""
    kind = "coreai.where"
    like = _dtype_of(a, b)
    ops = [_operand(cond, DType.bool_, kind, "the condition"),
           _operand(a, like, kind, "operand 1"), _operand(b, like, kind, "operand 2")]
    return _one(_emit(kind, ops, {}, (), loc))


def gelu(x, approximate: str = "none", *, loc=None) -> Value:
    attrs = {} if approximate == "none" else {"approximate": Attr("str", str(approximate))}
    return _one(_emit("coreai.gelu", [x], attrs, (), loc))


def clamp(x, min=None, max=None, *, loc=None) -> Value:  # noqa: A002
    attrs = {}
    if min is not None:
        attrs["min"] = Attr("f32", min)
    if max is not None:
        attrs["max"] = Attr("f32", max)
    return _one(_emit("coreai.clamp", [x], attrs, (), loc))


# ---------------------------------------------------------------------------
# linear algebra and reductions
# ---------------------------------------------------------------------------

def matmul(a, b, transpose_a: bool = False, transpose_b: bool = False, *, loc=None) -> Value:
    kind = "coreai.matmul"
    like = _dtype_of(a, b)
    ops = [_operand(a, like, kind, "operand 0"), _operand(b, like, kind, "operand 1")]
    attrs = {}
    if transpose_a:
        attrs["transpose_a"] = Attr("bool", True)
    if transpose_b:
        attrs["transpose_b"] = Attr("bool", True)
    return _one(_emit(kind, ops, attrs, (), loc))


def linear(x, weight, bias=None, weight_transposed: bool = False, *, loc=None) -> Value:
    """x @ weight.T + bias (weight [out, in]; [in, out] when weight_transposed)."""
    kind = "coreai.linear"
    like = _dtype_of(x, weight, bias)
    ops = [_operand(x, like, kind, "the input"), _operand(weight, like, kind, "the weight")]
    if bias is not None:
        ops.append(_operand(bias, like, kind, "the bias"))
    attrs = {"weight_transposed": Attr("bool", True)} if weight_transposed else {}
    return _one(_emit(kind, ops, attrs, (), loc))


def _reduce(kind: str):
    def build(x, axes, keep_dims: bool = False, *, loc=None) -> Value:
        ax = _ints_of(axes, "axes", kind) if axes is not None else []
        attrs = {"axes": Attr("si64[]", ax)}
        if keep_dims:
            attrs["keep_dims"] = Attr("bool", True)
        return _one(_emit(kind, [x], attrs, (), loc))
    build.__name__ = kind.split(".")[1]
    build.__qualname__ = build.__name__
    build.__doc__ = f"`{kind}` of x over axes (int or list; negative from the end; empty = all)."
    return build


reduce_sum = _reduce("coreai.reduce_sum")
reduce_mean = _reduce("coreai.reduce_mean")
reduce_max = _reduce("coreai.reduce_max")
reduce_min = _reduce("coreai.reduce_min")


def _axis(x, axis, kind) -> int:
    """axis normalised to be non-negative when x's rank allows (else as given,
    for the verifier's message)."""
    a = _ints_of(axis, "axis", kind, 1)[0]
    if isinstance(x, Value) and -x.type.rank <= a < 0:
        a += x.type.rank
    return a


def argmax(x, axis: int, keep_dims: bool = False, *, loc=None) -> Value:
    kind = "coreai.argmax"
    attrs = {"axis": Attr("si64", _axis(x, axis, kind))}
    if keep_dims:
        attrs["keep_dims"] = Attr("bool", True)
    return _one(_emit(kind, [x], attrs, (), loc))


def softmax(x, axis: int, *, loc=None) -> Value:
    kind = "coreai.softmax"
    return _one(_emit(kind, [x], {"axis": Attr("si64", _ints_of(axis, "axis", kind, 1)[0])}, (), loc))


# ---------------------------------------------------------------------------
# layout and data movement
# ---------------------------------------------------------------------------

def reshape(x, shape, *, loc=None) -> Value:
    """x with a new shape (one extent may be -1: inferred)."""
    kind = "coreai.reshape"
    dims = _shape_of(shape, kind)
    if isinstance(x, Value) and (x.type.is_dynamic or _b.any(_is_sym(d) for d in dims)) and -1 in dims:
        raise ValueError(f"{kind}({x.type}): give every extent of a symbolic shape (no -1), got {dims}")
    if isinstance(x, Value) and dims.count(-1) == 1:
        known = 1
        for d in dims:
            if d != -1:
                known *= d
        if known == 0 or x.type.numel % known:
            raise ValueError(f"{kind}({x.type}): cannot infer -1 in shape {dims}")
        dims[dims.index(-1)] = x.type.numel // known
    if _b.any(not _is_sym(d) and d < 0 for d in dims):
        raise ValueError(f"{kind}({x.type if isinstance(x, Value) else x!r}): invalid shape {dims}")
    et = x.type.element_type if isinstance(x, Value) else None
    if et is None:
        raise ValueError(f"{kind}: the operand must be a Value")
    return _one(_emit(kind, [x], {}, [TensorType(dims, et)], loc))


def transpose(x, perm, *, loc=None) -> Value:
    kind = "coreai.transpose"
    return _one(_emit(kind, [x], {"perm": Attr("si64[]", _ints_of(perm, "perm", kind))}, (), loc))


def broadcast_to(x, shape, *, loc=None) -> Value:
    kind = "coreai.broadcast_to"
    if not isinstance(x, Value):
        raise ValueError(f"{kind}: the operand must be a Value, got {x!r}")
    dims = _shape_of(shape, kind)
    return _one(_emit(kind, [x], {}, [TensorType(dims, x.type.element_type)], loc))


def concat(values, axis: int, *, loc=None) -> Value:
    kind = "coreai.concat"
    values = list(values)
    if not values:
        raise ValueError(f"{kind}(): needs at least one operand")
    like = _dtype_of(*values)
    ops = [_operand(v, like, kind, f"operand {i}") for i, v in enumerate(values)]
    first = next((v for v in values if isinstance(v, Value)), None)
    a = _axis(first, axis, kind)
    return _one(_emit(kind, ops, {"axis": Attr("si64", a)}, (), loc))


def slice(x, begins, ends, steps=None, *, loc=None) -> Value:  # noqa: A001
    """x[begins:ends:steps] per axis; negative begins/ends count from the end
    and ends past the extent are clamped (as in Python); steps >= 1."""
    kind = "coreai.slice"
    if not isinstance(x, Value):
        raise ValueError(f"{kind}: the operand must be a Value, got {x!r}")
    rank = x.type.rank
    b = _extents_of(begins, "begins", kind, rank)
    e = _extents_of(ends, "ends", kind, rank)
    s = _ints_of(steps, "steps", kind, rank) if steps is not None else [1] * rank
    for i, d in enumerate(x.type.shape):
        if _b.any(_is_sym(v) for v in (b[i], e[i], d)):
            continue  # a symbolic bound is taken as given: checked when the entrypoint runs
        if b[i] < 0:
            b[i] = _b.max(b[i] + d, 0)
        if e[i] < 0:
            e[i] = _b.max(e[i] + d, 0)
        b[i] = _b.min(b[i], d)
        e[i] = _b.min(e[i], d)
        if e[i] < b[i]:
            e[i] = b[i]
    sym = _b.any(_is_sym(v) for v in b + e)
    attrs = {"begins": Attr("dim[]" if sym else "si64[]", b), "ends": Attr("dim[]" if sym else "si64[]", e),
             "steps": Attr("si64[]", s)}
    return _one(_emit(kind, [x], attrs, (), loc))


def slice_update(x, update, begins, *, loc=None) -> Value:
    """x with the region [begins, begins + update.shape) replaced by update
    (begins may name symbols: checked against x when the entrypoint runs)."""
    kind = "coreai.slice_update"
    if not isinstance(x, Value) or not isinstance(update, Value):
        raise ValueError(f"{kind}: the operand and the update must be Values")
    b = _extents_of(begins, "begins", kind, x.type.rank)
    attrs = {"begins": Attr("dim[]" if _b.any(_is_sym(v) for v in b) else "si64[]", b)}
    return _one(_emit(kind, [x, update], attrs, (), loc))


def dim_value(value, dtype=DType.i64, shape=(), *, loc=None) -> Value:
    """A tensor holding the run-time value of an extent (a Dim, a Symbol or an
    int) in every element."""
    kind = "coreai.dim_value"
    v = _extents_of(value, "value", kind, 1)[0]
    return _one(_emit(kind, [], {"value": Attr("dim", v)}, [TensorType(_shape_of(shape, kind), dtype)], loc))


def gather(x, indices, axis: int, *, loc=None) -> Value:
    """x.take(indices, axis); indices is an int Value or integer data (i64 constant)."""
    kind = "coreai.gather"
    idx = indices
    if not isinstance(indices, Value):
        idx = _operand(indices, DType.i64, kind, "the indices")
    return _one(_emit(kind, [x, idx], {"axis": Attr("si64", _axis(x, axis, kind))}, (), loc))


def pad(x, pads, value: float = 0.0, *, loc=None) -> Value:
    """x padded with value; pads = 2 x rank amounts: befores, then afters."""
    kind = "coreai.pad"
    attrs = {"pads": Attr("si64[]", _ints_of(pads, "pads", kind))}
    if float(value) != 0.0 or np.signbit(float(value)):
        attrs["value"] = Attr("f64", value)
    return _one(_emit(kind, [x], attrs, (), loc))


def iota(n: int, start: float = 0.0, step: float = 1.0, dtype=DType.i64, *, loc=None) -> Value:
    """[start, start + step, ...] with n elements, of a numeric dtype."""
    kind = "coreai.iota"
    n = _extents_of(n, "n", kind, 1)[0]
    if not _is_sym(n) and n < 0:
        raise ValueError(f"{kind}(): n must be >= 0, got {n}")
    attrs = {"start": Attr("f64", start), "step": Attr("f64", step)}
    return _one(_emit(kind, [], attrs, [TensorType([n], dtype)], loc))


def fill(shape, value: float, dtype=DType.f32, *, loc=None) -> Value:
    """A tensor of shape with every element value."""
    kind = "coreai.fill"
    dims = _shape_of(shape, kind)
    return _one(_emit(kind, [], {"value": Attr("f64", value)}, [TensorType(dims, dtype)], loc))


# ---------------------------------------------------------------------------
# convolution and pooling
# ---------------------------------------------------------------------------

def conv2d(x, weight, bias=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), groups: int = 1,
           *, loc=None) -> Value:
    """NCHW convolution; pads = (top, left, bottom, right)."""
    kind = "coreai.conv2d"
    like = _dtype_of(x, weight, bias)
    ops = [_operand(x, like, kind, "the input"), _operand(weight, like, kind, "the weight")]
    if bias is not None:
        ops.append(_operand(bias, like, kind, "the bias"))
    attrs = {
        "strides": Attr("si64[]", _ints_of(strides, "strides", kind, 2, pair=True)),
        "pads": Attr("si64[]", _pads4(pads, kind)),
        "dilations": Attr("si64[]", _ints_of(dilations, "dilations", kind, 2, pair=True)),
        "groups": Attr("si64", _ints_of(groups, "groups", kind, 1)[0]),
    }
    return _one(_emit(kind, ops, attrs, (), loc))


def _pads4(pads, kind) -> list:
    p = _ints_of(pads, "pads", kind)
    if len(p) == 1:
        p = p * 4
    elif len(p) == 2:  # (h, w) symmetric, as PyTorch's padding=
        p = [p[0], p[1], p[0], p[1]]
    if len(p) != 4:
        raise ValueError(f"{kind}: pads needs 4 integers (top, left, bottom, right), got {p}")
    return p


def max_pool2d(x, kernel_size, strides=None, pads=(0, 0, 0, 0), dilations=(1, 1), ceil_mode: bool = False,
               *, loc=None) -> Value:
    kind = "coreai.max_pool2d"
    k = _ints_of(kernel_size, "kernel_size", kind, 2, pair=True)
    s = _ints_of(strides, "strides", kind, 2, pair=True) if strides is not None else k
    attrs = {"kernel_size": Attr("si64[]", k), "strides": Attr("si64[]", s),
             "pads": Attr("si64[]", _pads4(pads, kind)),
             "dilations": Attr("si64[]", _ints_of(dilations, "dilations", kind, 2, pair=True)),
             "ceil_mode": Attr("bool", bool(ceil_mode))}
    return _one(_emit(kind, [x], attrs, (), loc))


def avg_pool2d(x, kernel_size, strides=None, pads=(0, 0, 0, 0), ceil_mode: bool = False,
               count_include_pad: bool = True, *, loc=None) -> Value:
    kind = "coreai.avg_pool2d"
    k = _ints_of(kernel_size, "kernel_size", kind, 2, pair=True)
    s = _ints_of(strides, "strides", kind, 2, pair=True) if strides is not None else k
    attrs = {"kernel_size": Attr("si64[]", k), "strides": Attr("si64[]", s),
             "pads": Attr("si64[]", _pads4(pads, kind)), "ceil_mode": Attr("bool", bool(ceil_mode)),
             "count_include_pad": Attr("bool", bool(count_include_pad))}
    return _one(_emit(kind, [x], attrs, (), loc))


def sumpool2d(x, kernel_size, strides, dilation=(1, 1), pads=(0, 0, 0, 0), *, loc=None) -> Value:
    """Sum over each window. kernel_size, strides and dilation may be arrays
    (np.uint32 in the seeds) or host-constant Values."""
    kind = "coreai.sumpool2d"
    attrs = {"kernel_size": Attr("si64[]", _ints_of(kernel_size, "kernel_size", kind, 2, pair=True)),
             "strides": Attr("si64[]", _ints_of(strides, "strides", kind, 2, pair=True)),
             "dilations": Attr("si64[]", _ints_of(dilation, "dilation", kind, 2, pair=True)),
             "pads": Attr("si64[]", _pads4(pads, kind))}
    return _one(_emit(kind, [x], attrs, (), loc))


# ---------------------------------------------------------------------------
# user kernels and calls
# ---------------------------------------------------------------------------

def elementwise_kernel(inputs, name: str, source: str, input_names, output_names, result_types,
                       *, loc=None) -> list:
    """A user kernel (register_custom_kernels): `source` is C run for each
    `id` in [0, numel), reading inputs and writing outputs by name."""
    kind = "coreai.elementwise_kernel"
    types = []
    for t in result_types:
        if isinstance(t, TensorType):
            types.append(t)
        else:
            shape, dt = t
            types.append(TensorType(shape, dt))
    ops = []
    for i, v in enumerate(inputs):
        if not isinstance(v, Value):
            raise ValueError(f"{kind}: input {i} must be a Value, got {v!r}")
        ops.append(v)
    attrs = {"name": Attr("str", name), "source": Attr("str", source),
             "input_names": Attr("str[]", list(input_names)), "output_names": Attr("str[]", list(output_names))}
    return list(_emit(kind, ops, attrs, types, loc).results)


# ---------------------------------------------------------------------------
# compression (docs/model-format.md, "Compression")
# ---------------------------------------------------------------------------

def _offset_operands(kind, offset, minval):
    if minval is not None and offset is None:
        raise ValueError(f"{kind}: minval needs the offset operand too (the quantized minimum, q_min)")
    return [v for v in (offset, minval) if v is not None]


def blockwise_shift_scale(data, scale, offset=None, minval=None, *, loc=None) -> Value:
    """(data - offset) * scale [+ minval], scale (and offset, minval) repeated
    over blocks: every extent of scale divides data's. Result: scale's dtype."""
    kind = "coreai.blockwise_shift_scale"
    return _one(_emit(kind, [data, scale] + _offset_operands(kind, offset, minval), {}, (), loc))


def lut_to_dense(indices, lut, axis: int, *, loc=None) -> Value:
    """lut[groups of the index's position..., index, :] laid out along axis."""
    kind = "coreai.lut_to_dense"
    return _one(_emit(kind, [indices, lut], {"axis": Attr("si64", _axis(indices, axis, kind))}, (), loc))


def quantize(x, scale, dtype, zero_point=None, minval=None, axis: int = 0, *, loc=None) -> Value:
    """clamp(round_half_even((x [- minval]) / scale) [+ zero_point]) as i8 / u8;
    scale of rank 0 (per tensor) or 1 (along axis)."""
    kind = "coreai.quantize"
    ops = [x, scale] + _offset_operands(kind, zero_point, minval)
    attrs = {"axis": Attr("si64", _axis(x, axis, kind))} if axis != 0 else {}
    result = x.type.with_element_type(DType.from_any(dtype)) if isinstance(x, Value) else None
    return _one(_emit(kind, ops, attrs, [result] if result is not None else (), loc))


def dequantize(x, scale, offset=None, minval=None, axis: int = 0, *, loc=None) -> Value:
    """(x - offset) * scale [+ minval] with a scale of rank 0 (per tensor) or 1 (along axis)."""
    kind = "coreai.dequantize"
    ops = [x, scale] + _offset_operands(kind, offset, minval)
    attrs = {"axis": Attr("si64", _axis(x, axis, kind))} if axis != 0 else {}
    return _one(_emit(kind, ops, attrs, (), loc))


def invoke(graph_or_name, operands, *, loc=None) -> list:
    """Call a graph (an ir.Graph, or the name of a graph in the current
    graph's module); returns the list of its results."""
    kind = "coreai.invoke"
    g = _graph(kind)
    if isinstance(graph_or_name, ir.Graph):
        callee = graph_or_name
    else:
        mod = g.module
        callee = mod.find_graph(str(graph_or_name)) if mod is not None else None
        if callee is None:
            where = "the module" if mod is not None else "a module (add the calling graph to one, or pass the Graph)"
            raise ValueError(f"{kind}: no graph @{graph_or_name} in {where}")
    operands = list(operands)
    sig = f"{kind} @{callee.name}"
    if callee is g:
        raise ValueError(f"{sig}: a graph cannot invoke itself")
    if callee.outputs is None:
        raise ValueError(f"{sig}: the graph has no outputs yet (call set_outputs before invoking it)")
    if len(operands) != len(callee.arguments):
        raise ValueError(f"{sig}: passes {len(operands)} arguments but the graph has {len(callee.arguments)}")
    ops = [_operand(o, callee.arguments[i].type.element_type, kind, f"argument {i}")
           for i, o in enumerate(operands)]
    for i, (o, a) in enumerate(zip(ops, callee.arguments)):
        if o.type != a.type:
            types = ", ".join(str(x.type) for x in ops)
            raise ValueError(f"{sig}({types}): argument {i} is {o.type} but the graph expects {a.type}")
    for i, o in enumerate(ops):
        if isinstance(o, Value) and o.graph is not g:
            raise ValueError(f"{sig}: argument {i} ({o.type}) does not belong to @{g.name}")
    values = []
    for o in ops:
        if isinstance(o, _Pending):
            g.append(o.op)
            values.append(o.op.results[0])
        else:
            values.append(o)
    op = Operation(kind, values, callee.output_types, {}, callee.name, _loc(loc))
    g.append(op)
    return list(op.results)
