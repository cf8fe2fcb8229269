"""Result types of Core AI ops: the type rules of docs/model-format.md, as
coreai-gen's verifier applies them. One function for the builders and the
model loader: `infer(kind, operand_types, attrs, declared)`.

`declared` holds the result types an op states itself (reshape, cast,
broadcast_to, iota, fill, elementwise_kernel); for the others it is ignored
(or checked, when the loader passes the types from a file).
Errors are ValueError naming the op and its operand types.
"""
from __future__ import annotations

from typing import Sequence

from .dims import Dim, dim_bounds, product_equal
from .dtypes import DType
from .ir import MAX_RANK, Attr, TensorType

F32 = frozenset({DType.f32})                                   # "float"
INT = frozenset({DType.i32, DType.i64})                        # "int"
NUMERIC = F32 | INT                                            # "numeric"
ANY = NUMERIC | {DType.bool_}                                  # "any"
# pure data movement (reshape, transpose, broadcast_to, concat, slice, gather,
# where) and cast copy elements by size, so f16, bf16, i8 and u8 work too; the
# sub-byte integers are packed, so only the ops that decompress them read them
ALL = frozenset(d for d in DType if not d.is_subbyte)
BOOL = frozenset({DType.bool_})
# fill writes one scalar of the six arithmetic dtypes
FILL = frozenset({DType.f32, DType.f16, DType.bf16, DType.i32, DType.i64, DType.bool_})
# compressed weights (docs/model-format.md, "Compression")
FLOATS = frozenset({DType.f32, DType.f16, DType.bf16})        # scales, LUT values, results
QDATA = frozenset({DType.i8, DType.u8, DType.i4, DType.u4})     # quantized data
QACT = frozenset({DType.i8, DType.u8})                          # quantize results
INDICES = frozenset({DType.u1, DType.u2, DType.u4, DType.u6, DType.u8})  # LUT indices
LUT = FLOATS | QACT                                             # LUT values

_CLASS_NAMES = {F32: "f32", INT: "i32 or i64", NUMERIC: "f32, i32 or i64",
                ANY: "f32, i32, i64 or bool", BOOL: "bool", ALL: "any byte-sized dtype",
                FLOATS: "f32, f16 or bf16", QDATA: "i8, u8, i4 or u4", QACT: "i8 or u8",
                INDICES: "u1, u2, u4, u6 or u8", LUT: "f32, f16, bf16, i8 or u8",
                FILL: "f32, f16, bf16, i32, i64 or bool"}


class OpError(ValueError):
    pass


def _sig(kind: str, types: Sequence[TensorType]) -> str:
    return f"{kind}({', '.join(str(t) for t in types)})"


def fail(kind: str, types: Sequence[TensorType], msg: str) -> "None":
    raise OpError(f"{_sig(kind, types)}: {msg}")


# ---------------------------------------------------------------------------
# shape helpers
# ---------------------------------------------------------------------------

def broadcast_shapes(*shapes: Sequence[int]) -> tuple | None:
    """NumPy broadcast of shapes, or None when they do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        d = 1
        for s in shapes:
            j = len(s) - rank + i
            e = s[j] if j >= 0 else 1
            if e == 1:
                continue
            if d != 1 and e != d:
                return None
            d = e
        out.append(d)
    return tuple(out)


def normalize_axis(axis: int, rank: int) -> int | None:
    a = axis + rank if axis < 0 else axis
    return a if 0 <= a < rank else None


def normalize_axes(axes: Sequence[int], rank: int, empty_is_all: bool = True) -> list | None:
    """Sorted non-negative axes, or None when out of range or repeated."""
    if not axes and empty_is_all:
        return list(range(rank))
    seen = set()
    for a in axes:
        n = normalize_axis(a, rank)
        if n is None or n in seen:
            return None
        seen.add(n)
    return sorted(seen)


def pool_extent(size: int, k: int, s: int, p0: int, p1: int, d: int, ceil_mode: bool) -> int:
    """Output extent of a pooling/convolution window (PyTorch rules)."""
    num = size + p0 + p1 - d * (k - 1) - 1
    if num < 0:
        return 0
    if ceil_mode:
        o = -(-num // s) + 1
        if (o - 1) * s >= size + p0:  # the last window would start in the right padding
            o -= 1
        return o
    return num // s + 1


# ---------------------------------------------------------------------------
# attribute schemas: name -> (kind, required)
# ---------------------------------------------------------------------------

_NONE: dict = {}
_SCHEMAS: dict[str, dict] = {}


def _schema(kinds: Sequence[str], attrs: dict) -> None:
    for k in kinds:
        _SCHEMAS[k] = attrs


BINARY_NUMERIC = ("coreai.add", "coreai.sub", "coreai.mul", "coreai.maximum", "coreai.minimum")
BINARY_FLOAT = ("coreai.div", "coreai.pow")
COMPARE_ANY = ("coreai.equal", "coreai.not_equal")
COMPARE_NUMERIC = ("coreai.less", "coreai.less_equal", "coreai.greater", "coreai.greater_equal")
LOGICAL = ("coreai.logical_and", "coreai.logical_or")
UNARY_FLOAT = ("coreai.relu", "coreai.rsqrt", "coreai.sqrt", "coreai.exp", "coreai.log", "coreai.tanh",
               "coreai.sigmoid", "coreai.silu", "coreai.erf", "coreai.sin", "coreai.cos",
               "coreai.reciprocal", "coreai.floor", "coreai.ceil")
UNARY_NUMERIC = ("coreai.neg", "coreai.abs")
REDUCE = ("coreai.reduce_sum", "coreai.reduce_mean", "coreai.reduce_max", "coreai.reduce_min")

_schema(BINARY_NUMERIC + BINARY_FLOAT + COMPARE_ANY + COMPARE_NUMERIC + LOGICAL + UNARY_FLOAT
        + UNARY_NUMERIC + ("coreai.logical_not", "coreai.where", "coreai.cast", "coreai.reshape",
                           "coreai.broadcast_to"), _NONE)
_schema(["coreai.gelu"], {"approximate": ("str", False)})
_schema(["coreai.clamp"], {"min": ("f32", False), "max": ("f32", False)})
_schema(["coreai.elementwise_kernel"], {"name": ("str", True), "source": ("str", True),
                                        "input_names": ("str[]", True), "output_names": ("str[]", True)})
_schema(["coreai.matmul"], {"transpose_a": ("bool", False), "transpose_b": ("bool", False)})
_schema(["coreai.linear"], {"weight_transposed": ("bool", False)})
_schema(REDUCE, {"axes": ("si64[]", True), "keep_dims": ("bool", False)})
_schema(["coreai.argmax"], {"axis": ("si64", True), "keep_dims": ("bool", False)})
_schema(["coreai.softmax"], {"axis": ("si64", True)})
_schema(["coreai.transpose"], {"perm": ("si64[]", True)})
_schema(["coreai.concat"], {"axis": ("si64", True)})
# "si64[]|dim[]": the dim[] form may name symbols (format 2)
_schema(["coreai.slice"], {"begins": ("si64[]|dim[]", True), "ends": ("si64[]|dim[]", True),
                           "steps": ("si64[]", True)})
_schema(["coreai.slice_update"], {"begins": ("si64[]|dim[]", True)})
_schema(["coreai.dim_value"], {"value": ("dim", True)})
_schema(["coreai.gather"], {"axis": ("si64", True)})
_schema(["coreai.pad"], {"pads": ("si64[]", True), "value": ("f64", False)})
_schema(["coreai.iota"], {"start": ("f64", True), "step": ("f64", True)})
_schema(["coreai.fill"], {"value": ("f64", True)})
_schema(["coreai.conv2d"], {"strides": ("si64[]", False), "pads": ("si64[]", False),
                            "dilations": ("si64[]", False), "groups": ("si64", False)})
_schema(["coreai.max_pool2d"], {"kernel_size": ("si64[]", True), "strides": ("si64[]", False),
                                "pads": ("si64[]", False), "dilations": ("si64[]", False),
                                "ceil_mode": ("bool", False)})
_schema(["coreai.avg_pool2d"], {"kernel_size": ("si64[]", True), "strides": ("si64[]", False),
                                "pads": ("si64[]", False), "ceil_mode": ("bool", False),
                                "count_include_pad": ("bool", False)})
_schema(["coreai.sumpool2d"], {"kernel_size": ("si64[]", True), "strides": ("si64[]", True),
                               "dilations": ("si64[]", True), "pads": ("si64[]", False)})
_schema(["coreai.blockwise_shift_scale"], _NONE)
_schema(["coreai.lut_to_dense"], {"axis": ("si64", True)})
_schema(["coreai.quantize", "coreai.dequantize"], {"axis": ("si64", False)})

KNOWN_KINDS = frozenset(_SCHEMAS) | {"coreai.invoke"}

# (min, max) operand counts; None = unbounded
_ARITY: dict[str, tuple] = {}
for _k in BINARY_NUMERIC + BINARY_FLOAT + COMPARE_ANY + COMPARE_NUMERIC + LOGICAL + ("coreai.matmul",):
    _ARITY[_k] = (2, 2)
for _k in UNARY_FLOAT + UNARY_NUMERIC + REDUCE + (
        "coreai.logical_not", "coreai.gelu", "coreai.clamp", "coreai.cast", "coreai.argmax", "coreai.softmax",
        "coreai.reshape", "coreai.transpose", "coreai.broadcast_to", "coreai.slice", "coreai.pad",
        "coreai.max_pool2d", "coreai.avg_pool2d", "coreai.sumpool2d"):
    _ARITY[_k] = (1, 1)
_ARITY.update({"coreai.where": (3, 3), "coreai.linear": (2, 3), "coreai.conv2d": (2, 3),
               "coreai.slice_update": (2, 2), "coreai.dim_value": (0, 0),
               "coreai.gather": (2, 2), "coreai.concat": (1, None), "coreai.iota": (0, 0),
               "coreai.fill": (0, 0), "coreai.elementwise_kernel": (0, None),
               "coreai.blockwise_shift_scale": (2, 4), "coreai.lut_to_dense": (2, 2),
               "coreai.quantize": (2, 4), "coreai.dequantize": (2, 4)})

# ops whose result type the op states itself (the builder passes it)
DECLARED = frozenset({"coreai.reshape", "coreai.cast", "coreai.broadcast_to", "coreai.iota",
                      "coreai.fill", "coreai.elementwise_kernel", "coreai.dim_value",
                      "coreai.quantize"})


def attr_schema(kind: str) -> dict:
    return _SCHEMAS[kind]


# ---------------------------------------------------------------------------
# inference
# ---------------------------------------------------------------------------

def infer(kind: str, operand_types: Sequence[TensorType], attrs: dict, declared: Sequence[TensorType] = ()
          ) -> list:
    """The result types of op `kind`; raises OpError (a ValueError)."""
    ts = list(operand_types)
    if kind not in _SCHEMAS:
        fail(kind, ts, f"unknown op kind '{kind}'")
    lo, hi = _ARITY[kind]
    if len(ts) < lo or (hi is not None and len(ts) > hi):
        want = f"{lo}" if lo == hi else (f"{lo} to {hi}" if hi is not None else f"at least {lo}")
        fail(kind, ts, f"takes {want} operands, got {len(ts)}")
    schema = _SCHEMAS[kind]
    for name, a in attrs.items():
        if name not in schema:
            fail(kind, ts, f"has no attribute '{name}'")
        want = schema[name][0]
        if not isinstance(a, Attr) or a.kind not in want.split("|"):
            got = a.kind if isinstance(a, Attr) else type(a).__name__
            fail(kind, ts, f"attribute '{name}' must be {want}, not {got}")
    for name, (_, required) in schema.items():
        if required and name not in attrs:
            fail(kind, ts, f"needs attribute '{name}' ({schema[name][0]})")
    fn = _RULES[kind]
    out = fn(kind, ts, attrs, list(declared))
    return out if isinstance(out, list) else [out]


def _need(kind, ts, i, allowed, what=None):
    t = ts[i]
    if t.element_type not in allowed:
        what = what or f"operand {i}"
        fail(kind, ts, f"{what} is {t.element_type}; this op needs {_CLASS_NAMES[allowed]}")


def _same_dtype(kind, ts, idx):
    d = ts[idx[0]].element_type
    for i in idx[1:]:
        if ts[i].element_type is not d:
            fail(kind, ts, f"operand dtypes differ ({d} and {ts[i].element_type})")


def _bcast(kind, ts, shapes):
    r = broadcast_shapes(*shapes)
    if r is None:
        fail(kind, ts, "shapes do not broadcast")
    return r


def _attr(attrs, name, default=None):
    a = attrs.get(name)
    return a.value if a is not None else default


def _one_declared(kind, ts, declared):
    if len(declared) != 1 or not isinstance(declared[0], TensorType):
        fail(kind, ts, "needs its result type")
    return declared[0]


def _binary(allowed, result_dtype=None):
    def rule(kind, ts, attrs, declared):
        _need(kind, ts, 0, allowed)
        _need(kind, ts, 1, allowed)
        _same_dtype(kind, ts, [0, 1])
        shape = _bcast(kind, ts, [ts[0].shape, ts[1].shape])
        return TensorType(shape, result_dtype or ts[0].element_type)
    return rule


def _unary(allowed):
    def rule(kind, ts, attrs, declared):
        _need(kind, ts, 0, allowed)
        return ts[0]
    return rule


def _where(kind, ts, attrs, declared):
    _need(kind, ts, 0, BOOL, "the condition")
    _need(kind, ts, 1, ALL)
    _need(kind, ts, 2, ALL)
    _same_dtype(kind, ts, [1, 2])
    return TensorType(_bcast(kind, ts, [t.shape for t in ts]), ts[1].element_type)


def _gelu(kind, ts, attrs, declared):
    _need(kind, ts, 0, F32)
    ap = _attr(attrs, "approximate", "none")
    if ap not in ("none", "tanh"):
        fail(kind, ts, f"approximate must be 'none' or 'tanh', not {ap!r}")
    return ts[0]


def _clamp(kind, ts, attrs, declared):
    _need(kind, ts, 0, F32)
    lo, hi = _attr(attrs, "min"), _attr(attrs, "max")
    if lo is not None and hi is not None and lo > hi:
        fail(kind, ts, f"min {lo} is greater than max {hi}")
    return ts[0]


def _cast(kind, ts, attrs, declared):
    _need(kind, ts, 0, ALL)
    r = _one_declared(kind, ts, declared)
    if r.element_type not in ALL:
        fail(kind, ts, f"result {r} is packed; this op needs {_CLASS_NAMES[ALL]}")
    if r.shape != ts[0].shape:
        fail(kind, ts, f"result {r} must have the operand's shape")
    return r


_EWK_RESERVED = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if inline int long
    register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
    bool true false asm typeof main id ws NULL size_t ptrdiff_t offsetof int8_t int16_t int32_t int64_t uint8_t
    uint16_t uint32_t uint64_t intptr_t uintptr_t intmax_t uintmax_t NAN INFINITY HUGE_VAL HUGE_VALF HUGE_VALL
    isnan isinf isfinite isnormal signbit fpclassify float_t double_t errno""".split())


def ewk_name_problem(name: str) -> str | None:
    """Why `name` cannot be a variable of a user kernel (None when it can);
    the rules of coreai-gen's verifier."""
    if not name or name[0].isdigit() or not all(c.isascii() and (c.isalnum() or c == "_") for c in name):
        return "is not a C identifier"
    if name[0] == "_":
        return "is reserved (leading underscore)"
    if name in _EWK_RESERVED:
        return "is a C keyword or a name the generated code uses"
    if name[0] in "ar" and name[1:].isdigit():
        return "collides with a parameter of the generated graph function"
    if name.startswith(("coreai_", "COREAI_")):
        return "collides with the runtime's names (coreai_ / COREAI_)"
    if name.startswith(("INT", "UINT", "SIZE_", "PTRDIFF_")) and any(p in name for p in ("_MAX", "_MIN", "_C")):
        return "is a <stdint.h> macro"
    return None


def _elementwise_kernel(kind, ts, attrs, declared):
    in_names = list(_attr(attrs, "input_names"))
    out_names = list(_attr(attrs, "output_names"))
    if len(in_names) != len(ts):
        fail(kind, ts, f"attribute 'input_names' names {len(in_names)} inputs but the op has {len(ts)}")
    if len(declared) != len(out_names) or not declared:
        fail(kind, ts, f"attribute 'output_names' names {len(out_names)} outputs but the op has {len(declared)}")
    for lst, what in ((in_names, "input_names"), (out_names, "output_names")):
        for i, n in enumerate(lst):
            why = ewk_name_problem(n)
            if why:
                fail(kind, ts, f"name '{n}' in attribute '{what}' {why}")
            if n in lst[:i]:
                fail(kind, ts, f"name '{n}' appears twice in attribute '{what}'")
    for n in out_names:
        if n in in_names:
            fail(kind, ts, f"name '{n}' is both an input and an output")
    shape = declared[0].shape
    for n, r in zip(out_names, declared):
        if r.element_type not in ANY:
            fail(kind, ts, f"output '{n}' is {r}; the op supports {_CLASS_NAMES[ANY]}")
        if r.shape != shape:
            fail(kind, ts, f"every result must have one shape, got {declared[0]} and {r}")
    for i, t in enumerate(ts):
        _need(kind, ts, i, ANY, f"input '{in_names[i]}'")
        if t.shape != shape:
            fail(kind, ts, f"input '{in_names[i]}' is {t} but the results have shape {shape}")
    if not _attr(attrs, "name"):
        fail(kind, ts, "needs a non-empty kernel name")
    return list(declared)


def _matmul(kind, ts, attrs, declared):
    _need(kind, ts, 0, F32)
    _need(kind, ts, 1, F32)
    a, b = ts
    if a.rank < 2 or b.rank < 2:
        fail(kind, ts, "operands must have rank >= 2")
    ta, tb = _attr(attrs, "transpose_a", False), _attr(attrs, "transpose_b", False)
    m, ka = (a.shape[-1], a.shape[-2]) if ta else (a.shape[-2], a.shape[-1])
    kb, n = (b.shape[-1], b.shape[-2]) if tb else (b.shape[-2], b.shape[-1])
    if ka != kb:
        fail(kind, ts, f"inner dimensions differ ({ka} vs {kb})")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if batch is None:
        fail(kind, ts, "batch shapes do not broadcast")
    if len(batch) + 2 > MAX_RANK:
        fail(kind, ts, f"result rank exceeds {MAX_RANK}")
    return TensorType(batch + (m, n), a.element_type)


def _linear(kind, ts, attrs, declared):
    for i in range(len(ts)):
        _need(kind, ts, i, F32, ("the input", "the weight", "the bias")[i])
    x, w = ts[0], ts[1]
    if x.rank < 1 or w.rank != 2:
        fail(kind, ts, "needs input rank >= 1 and a rank-2 weight")
    wt = _attr(attrs, "weight_transposed", False)
    n_in, n_out = (w.shape[0], w.shape[1]) if wt else (w.shape[1], w.shape[0])
    if x.shape[-1] != n_in:
        fail(kind, ts, f"input has {x.shape[-1]} features but the weight expects {n_in}")
    if len(ts) == 3 and ts[2].shape != (n_out,):
        fail(kind, ts, f"bias must be tensor<{n_out}xf32>")
    return TensorType(x.shape[:-1] + (n_out,), x.element_type)


def _reduce(kind, ts, attrs, declared):
    _need(kind, ts, 0, F32)
    x = ts[0]
    axes = normalize_axes(_attr(attrs, "axes"), x.rank)
    if axes is None:
        fail(kind, ts, f"axes {list(_attr(attrs, 'axes'))} out of range or repeated for rank {x.rank}")
    if kind in ("coreai.reduce_max", "coreai.reduce_min"):
        for a in axes:
            if dim_bounds(x.shape[a])[0] <= 0:
                what = "empty for some values of its symbols" if isinstance(x.shape[a], Dim) else "empty"
                fail(kind, ts, f"axis {a} is {what}; the {kind[14:]} of no elements is undefined")
    keep = _attr(attrs, "keep_dims", False)
    shape = []
    for i, d in enumerate(x.shape):
        if i not in axes:
            shape.append(d)
        elif keep:
            shape.append(1)
    return TensorType(shape, x.element_type)


def _argmax(kind, ts, attrs, declared):
    _need(kind, ts, 0, F32)
    x = ts[0]
    a = normalize_axis(_attr(attrs, "axis"), x.rank)
    if a is None:
        fail(kind, ts, f"axis {_attr(attrs, 'axis')} out of range for rank {x.rank}")
    if dim_bounds(x.shape[a])[0] <= 0:
        fail(kind, ts, f"axis {a} is {'empty for some values of its symbols' if isinstance(x.shape[a], Dim) else 'empty'}")
    keep = _attr(attrs, "keep_dims", False)
    shape = [d if i != a else 1 for i, d in enumerate(x.shape) if i != a or keep]
    return TensorType(shape, DType.i64)


def _softmax(kind, ts, attrs, declared):
    _need(kind, ts, 0, F32)
    if normalize_axis(_attr(attrs, "axis"), ts[0].rank) is None:
        fail(kind, ts, f"axis {_attr(attrs, 'axis')} out of range for rank {ts[0].rank}")
    return ts[0]


def _reshape(kind, ts, attrs, declared):
    _need(kind, ts, 0, ALL)
    r = _one_declared(kind, ts, declared)
    if r.element_type is not ts[0].element_type or not product_equal(r.shape, ts[0].shape):
        fail(kind, ts, f"cannot reshape to {r}")
    return r


def _transpose(kind, ts, attrs, declared):
    _need(kind, ts, 0, ALL)
    x = ts[0]
    perm = list(_attr(attrs, "perm"))
    if sorted(perm) != list(range(x.rank)):
        fail(kind, ts, f"perm {perm} is not a permutation of the {x.rank} axes")
    return TensorType([x.shape[p] for p in perm], x.element_type)


def _broadcast_to(kind, ts, attrs, declared):
    _need(kind, ts, 0, ALL)
    r = _one_declared(kind, ts, declared)
    if r.element_type is not ts[0].element_type:
        fail(kind, ts, f"result {r} must have the operand's dtype")
    if ts[0].rank > r.rank or broadcast_shapes(ts[0].shape, r.shape) != r.shape:
        fail(kind, ts, f"does not broadcast to shape {r.shape}")
    return r


def _concat(kind, ts, attrs, declared):
    for i in range(len(ts)):
        _need(kind, ts, i, ALL)
    _same_dtype(kind, ts, list(range(len(ts))))
    rank = ts[0].rank
    if rank == 0:
        fail(kind, ts, "cannot concatenate rank-0 tensors")
    if any(t.rank != rank for t in ts):
        fail(kind, ts, "operands must have the same rank")
    a = normalize_axis(_attr(attrs, "axis"), rank)
    if a is None:
        fail(kind, ts, f"axis {_attr(attrs, 'axis')} out of range for rank {rank}")
    shape = list(ts[0].shape)
    for t in ts[1:]:
        for i in range(rank):
            if i != a and t.shape[i] != shape[i]:
                fail(kind, ts, f"extents differ on axis {i} ({shape[i]} vs {t.shape[i]})")
        shape[a] += t.shape[a]
    return TensorType(shape, ts[0].element_type)


def _region_possible(kind, ts, axis, begin, length, extent):
    """[begin, begin + length) can lie inside [0, extent) for some value of
    the symbols (whether it does for a call is checked at run time)."""
    room = dim_bounds(extent - (begin + length))[1]
    if dim_bounds(begin)[1] is not None and dim_bounds(begin)[1] < 0 or \
            dim_bounds(length)[1] is not None and dim_bounds(length)[1] < 0 or room is not None and room < 0:
        fail(kind, ts, f"axis {axis}: the region [{begin}, {begin} + {length}) lies outside [0, {extent}) for every "
                       "value of the symbols")


def _slice(kind, ts, attrs, declared):
    _need(kind, ts, 0, ALL)
    x = ts[0]
    b, e, s = (list(_attr(attrs, n)) for n in ("begins", "ends", "steps"))
    if not (len(b) == len(e) == len(s) == x.rank):
        fail(kind, ts, f"begins, ends and steps need {x.rank} entries each, got {len(b)}, {len(e)}, {len(s)}")
    shape = []
    for i, d in enumerate(x.shape):
        if not any(isinstance(v, Dim) for v in (b[i], e[i], d)):
            if not (0 <= b[i] <= e[i] <= d) or s[i] < 1:
                fail(kind, ts, f"axis {i}: begin {b[i]}, end {e[i]}, step {s[i]} is not a valid slice of "
                               f"extent {d} (0 <= begin <= end <= extent, step >= 1)")
            shape.append(-(-(e[i] - b[i]) // s[i]))
            continue
        if s[i] < 1:
            fail(kind, ts, f"axis {i}: step {s[i]} must be >= 1")
        length = e[i] - b[i]
        _region_possible(kind, ts, i, b[i], length, d)
        if isinstance(length, Dim) and s[i] != 1:
            fail(kind, ts, f"axis {i}: a slice of symbolic length {length} needs step 1, got {s[i]}")
        shape.append(length if isinstance(length, Dim) else -(-length // s[i]))
    return TensorType(shape, x.element_type)


def _slice_update(kind, ts, attrs, declared):
    _need(kind, ts, 0, ALL)
    _need(kind, ts, 1, ALL)
    _same_dtype(kind, ts, [0, 1])
    x, u = ts
    b = list(_attr(attrs, "begins"))
    if u.rank != x.rank or len(b) != x.rank:
        fail(kind, ts, f"the update, attribute 'begins' ({len(b)} values) and the operand must have the same rank")
    for i in range(x.rank):
        if not any(isinstance(v, Dim) for v in (b[i], u.shape[i], x.shape[i])):
            if not (0 <= b[i] <= x.shape[i] and u.shape[i] <= x.shape[i] - b[i]):
                fail(kind, ts, f"axis {i}: the update at begin {b[i]} does not fit")
            continue
        _region_possible(kind, ts, i, b[i], u.shape[i], x.shape[i])
    return x


def _dim_value(kind, ts, attrs, declared):
    r = _one_declared(kind, ts, declared)
    if r.element_type not in NUMERIC:
        fail(kind, ts, f"result {r} must be f32, i32 or i64")
    lo, hi = dim_bounds(_attr(attrs, "value"))
    if r.element_type is DType.i32 and (lo < -2 ** 31 or hi is None or hi >= 2 ** 31):
        fail(kind, ts, f"the value {_attr(attrs, 'value')} ranges beyond i32")
    return r


def _gather(kind, ts, attrs, declared):
    _need(kind, ts, 0, ALL)
    _need(kind, ts, 1, INT, "the indices")
    x, idx = ts
    if x.rank == 0:
        fail(kind, ts, "cannot gather from a rank-0 tensor")
    a = normalize_axis(_attr(attrs, "axis"), x.rank)
    if a is None:
        fail(kind, ts, f"axis {_attr(attrs, 'axis')} out of range for rank {x.rank}")
    shape = x.shape[:a] + idx.shape + x.shape[a + 1:]
    if len(shape) > MAX_RANK:
        fail(kind, ts, f"result rank exceeds {MAX_RANK}")
    return TensorType(shape, x.element_type)


_INT_RANGE = {DType.i32: (-2.0 ** 31, 2.0 ** 31), DType.i64: (-2.0 ** 63, 2.0 ** 63)}


def _int_value(kind, ts, name, v, dt):
    lo, hi = _INT_RANGE[dt]
    if not (lo <= v < hi) or v != int(v):
        fail(kind, ts, f"attribute '{name}' = {v!r} is not a {dt} value")


def _pad(kind, ts, attrs, declared):
    _need(kind, ts, 0, NUMERIC)
    x = ts[0]
    pads = list(_attr(attrs, "pads"))
    if len(pads) != 2 * x.rank or any(p < 0 for p in pads):
        fail(kind, ts, f"pads {pads} must be {2 * x.rank} non-negative amounts (befores, then afters)")
    if "value" in attrs and x.element_type.is_int:
        _int_value(kind, ts, "value", _attr(attrs, "value"), x.element_type)
    return TensorType([d + pads[i] + pads[x.rank + i] for i, d in enumerate(x.shape)], x.element_type)


def _iota(kind, ts, attrs, declared):
    r = _one_declared(kind, ts, declared)
    if r.rank != 1 or r.element_type not in NUMERIC:
        fail(kind, ts, f"result {r} must be a rank-1 f32, i32 or i64 tensor")
    if r.element_type.is_int:
        start, step = _attr(attrs, "start"), _attr(attrs, "step")
        _int_value(kind, ts, "start", start, DType.i64)
        _int_value(kind, ts, "step", step, DType.i64)
        _int_value(kind, ts, "start", start, r.element_type)
        n = dim_bounds(r.shape[0])[1]
        if n is None:
            fail(kind, ts, f"result {r} has an unbounded extent")
        last = start + max(n - 1, 0) * step
        lo, hi = _INT_RANGE[r.element_type]
        if not (lo <= last < hi):
            fail(kind, ts, f"the last element {last!r} does not fit {r}")
    return r


def _fill(kind, ts, attrs, declared):
    r = _one_declared(kind, ts, declared)
    if r.element_type not in FILL:
        fail(kind, ts, f"result {r}: this op needs {_CLASS_NAMES[FILL]}")
    if r.element_type.is_int:
        _int_value(kind, ts, "value", _attr(attrs, "value"), r.element_type)
    return r


def _ints(kind, ts, attrs, name, n, default, minimum):
    v = list(_attr(attrs, name, default))
    if len(v) != n or any(e < minimum for e in v):
        fail(kind, ts, f"{name} {v} must be {n} integers >= {minimum}")
    return v


def _window(kind, ts, attrs, kernel, dilated, stride_default):
    x = ts[0]
    strides = _ints(kind, ts, attrs, "strides", 2, stride_default, 1)
    pads = _ints(kind, ts, attrs, "pads", 4, (0, 0, 0, 0), 0)
    dil = _ints(kind, ts, attrs, "dilations", 2, (1, 1), 1) if dilated else [1, 1]
    ceil = _attr(attrs, "ceil_mode", False)
    oh = pool_extent(x.shape[2], kernel[0], strides[0], pads[0], pads[2], dil[0], ceil)
    ow = pool_extent(x.shape[3], kernel[1], strides[1], pads[1], pads[3], dil[1], ceil)
    if oh < 1 or ow < 1:
        fail(kind, ts, f"the window (kernel {kernel}, dilations {dil}) does not fit the padded input "
                       f"{x.shape[2]}x{x.shape[3]}")
    return oh, ow


def _fixed_spatial(kind, ts, x):
    for a, what in ((1, "the channel count"), (2, "the height"), (3, "the width")):
        if isinstance(x.shape[a], Dim):
            fail(kind, ts, f"{what} (axis {a}) is symbolic; it must be a fixed extent")


def _conv2d(kind, ts, attrs, declared):
    for i in range(len(ts)):
        _need(kind, ts, i, F32, ("the input", "the weight", "the bias")[i])
    x, w = ts[0], ts[1]
    if x.rank != 4 or w.rank != 4:
        fail(kind, ts, "input and weight must have rank 4 (NCHW, OIHW)")
    _fixed_spatial(kind, ts, x)
    groups = _attr(attrs, "groups", 1)
    if groups < 1 or x.shape[1] % groups or w.shape[0] % groups:
        fail(kind, ts, f"groups {groups} must divide the {x.shape[1]} input and {w.shape[0]} output channels")
    if w.shape[1] * groups != x.shape[1]:
        fail(kind, ts, f"weight has {w.shape[1]} channels per group but the input has {x.shape[1]} channels "
                       f"in {groups} group(s)")
    if len(ts) == 3 and ts[2].shape != (w.shape[0],):
        fail(kind, ts, f"bias must be tensor<{w.shape[0]}xf32>")
    oh, ow = _window(kind, ts, attrs, [w.shape[2], w.shape[3]], True, (1, 1))
    return TensorType((x.shape[0], w.shape[0], oh, ow), x.element_type)


def _pool(kind, ts, attrs, declared):
    _need(kind, ts, 0, F32)
    x = ts[0]
    if x.rank != 4:
        fail(kind, ts, "input must have rank 4 (NCHW)")
    _fixed_spatial(kind, ts, x)
    kernel = _ints(kind, ts, attrs, "kernel_size", 2, None, 1)
    oh, ow = _window(kind, ts, attrs, kernel, kind != "coreai.avg_pool2d", kernel)
    return TensorType((x.shape[0], x.shape[1], oh, ow), x.element_type)


# ---------------------------------------------------------------------------
# compression (docs/model-format.md, "Compression")
# ---------------------------------------------------------------------------

def _offsets(kind, ts, scale, qdtype, fdtype):
    """Operands 2 (offset: qdtype) and 3 (minval: fdtype) have scale's shape."""
    if len(ts) > 2:
        if ts[2].element_type is not qdtype:
            fail(kind, ts, f"the offset is {ts[2].element_type} but must be {qdtype}")
        if ts[2].shape != scale.shape:
            fail(kind, ts, f"the offset's shape {list(ts[2].shape)} differs from the scale's {list(scale.shape)}")
    if len(ts) > 3:
        if ts[3].element_type is not fdtype:
            fail(kind, ts, f"minval is {ts[3].element_type} but must be {fdtype}")
        if ts[3].shape != scale.shape:
            fail(kind, ts, f"minval's shape {list(ts[3].shape)} differs from the scale's {list(scale.shape)}")


def _blockwise(kind, ts, attrs, declared):
    _need(kind, ts, 0, QDATA, "the data")
    _need(kind, ts, 1, FLOATS, "the scale")
    x, s = ts[0], ts[1]
    if s.rank != x.rank:
        fail(kind, ts, f"the scale has rank {s.rank} but the data has rank {x.rank}; they must be equal")
    for i, (d, b) in enumerate(zip(x.shape, s.shape)):
        if b < 1 or d % b:
            fail(kind, ts, f"the scale's extent {b} on axis {i} does not divide the data's extent {d} "
                           f"(data shape {list(x.shape)}, scale shape {list(s.shape)})")
    _offsets(kind, ts, s, x.element_type, s.element_type)
    return TensorType(x.shape, s.element_type)


def _lut_to_dense(kind, ts, attrs, declared):
    _need(kind, ts, 0, INDICES, "the indices")
    _need(kind, ts, 1, LUT, "the lookup table")
    idx, lut = ts
    k = idx.rank
    if k < 1:
        fail(kind, ts, "the indices must have rank >= 1")
    if lut.rank != k + 2:
        fail(kind, ts, f"the lookup table has rank {lut.rank}; indices of rank {k} need rank {k + 2} "
                       "([groups per axis..., palettes, vector size])")
    palettes = 1 << idx.element_type.bits
    if lut.shape[-2] != palettes:
        fail(kind, ts, f"the lookup table has {lut.shape[-2]} palettes but {idx.element_type} indices need "
                       f"{palettes}")
    vs = lut.shape[-1]
    if vs < 1:
        fail(kind, ts, "the vector size (last extent of the lookup table) must be >= 1")
    for i in range(k):
        g = lut.shape[i]
        if g < 1 or idx.shape[i] % g:
            fail(kind, ts, f"the lookup table's {g} groups on axis {i} do not divide the indices' extent "
                           f"{idx.shape[i]}")
    a = normalize_axis(_attr(attrs, "axis"), k)
    if a is None:
        fail(kind, ts, f"axis {_attr(attrs, 'axis')} out of range for rank {k}")
    shape = list(idx.shape)
    shape[a] *= vs
    return TensorType(shape, lut.element_type)


def _per_axis_scale(kind, ts, attrs, x, s):
    """A scale of rank 0 (per tensor) or rank 1 along attribute axis."""
    if s.rank == 0:
        return
    if s.rank != 1:
        fail(kind, ts, f"the scale must have rank 0 (per tensor) or 1 (per axis), got rank {s.rank}")
    a = normalize_axis(_attr(attrs, "axis", 0), x.rank)
    if a is None:
        fail(kind, ts, f"axis {_attr(attrs, 'axis', 0)} out of range for rank {x.rank}")
    if s.shape[0] != x.shape[a]:
        fail(kind, ts, f"the scale has {s.shape[0]} elements but axis {a} of {x} has {x.shape[a]}")


def _quantize(kind, ts, attrs, declared):
    _need(kind, ts, 0, FLOATS, "the input")
    _need(kind, ts, 1, FLOATS, "the scale")
    x, s = ts[0], ts[1]
    if s.element_type is not x.element_type:
        fail(kind, ts, f"the scale is {s.element_type} but the input is {x.element_type}; they must be equal")
    r = _one_declared(kind, ts, declared)
    if r.element_type not in QACT or r.shape != x.shape:
        fail(kind, ts, f"result {r} must be i8 or u8 of the input's shape")
    _per_axis_scale(kind, ts, attrs, x, s)
    _offsets(kind, ts, s, r.element_type, x.element_type)
    return r


def _dequantize(kind, ts, attrs, declared):
    _need(kind, ts, 0, QDATA, "the input")
    _need(kind, ts, 1, FLOATS, "the scale")
    x, s = ts[0], ts[1]
    _per_axis_scale(kind, ts, attrs, x, s)
    _offsets(kind, ts, s, x.element_type, s.element_type)
    return TensorType(x.shape, s.element_type)


_RULES = {}
for _k in BINARY_NUMERIC:
    _RULES[_k] = _binary(NUMERIC)
for _k in BINARY_FLOAT:
    _RULES[_k] = _binary(F32)
for _k in COMPARE_ANY:
    _RULES[_k] = _binary(ANY, DType.bool_)
for _k in COMPARE_NUMERIC:
    _RULES[_k] = _binary(NUMERIC, DType.bool_)
for _k in LOGICAL:
    _RULES[_k] = _binary(BOOL)
for _k in UNARY_FLOAT:
    _RULES[_k] = _unary(F32)
for _k in UNARY_NUMERIC:
    _RULES[_k] = _unary(NUMERIC)
for _k in REDUCE:
    _RULES[_k] = _reduce
_RULES.update({
    "coreai.logical_not": _unary(BOOL), "coreai.where": _where, "coreai.gelu": _gelu,
    "coreai.clamp": _clamp, "coreai.cast": _cast, "coreai.elementwise_kernel": _elementwise_kernel,
    "coreai.matmul": _matmul, "coreai.linear": _linear, "coreai.argmax": _argmax,
    "coreai.softmax": _softmax, "coreai.reshape": _reshape, "coreai.transpose": _transpose,
    "coreai.broadcast_to": _broadcast_to, "coreai.concat": _concat, "coreai.slice": _slice,
    "coreai.gather": _gather, "coreai.pad": _pad, "coreai.iota": _iota, "coreai.fill": _fill,
    "coreai.conv2d": _conv2d, "coreai.max_pool2d": _pool, "coreai.avg_pool2d": _pool,
    "coreai.sumpool2d": _pool, "coreai.slice_update": _slice_update, "coreai.dim_value": _dim_value,
    "coreai.blockwise_shift_scale": _blockwise, "coreai.lut_to_dense": _lut_to_dense,
    "coreai.quantize": _quantize, "coreai.dequantize": _dequantize,
})
