"""NumPy semantics of every op, used for constant folding and as a reference
interpreter (`interpret`).

Data are in dtype storage (float32, float16, uint16 bf16 bit patterns,
int64, int32, bool). Float arithmetic is computed in float64 and rounded
once to the result dtype, which is exact for + - * / and sqrt and within
an ulp of libm for the transcendental functions. Integer arithmetic wraps.
"""
from __future__ import annotations

import math

import numpy as np

from . import infer as _inf
from .dims import Dim
from .dtypes import DType, small_float_from_f64, storage_to_float64
from .ir import Attr, TensorType

_SQRT1_2 = 1.0 / math.sqrt(2.0)


class EvalError(ValueError):
    """The op cannot be evaluated on these data (e.g. a gather index out of
    range, or an op with no host semantics)."""


def _f64(x, t):
    return storage_to_float64(x, t.element_type)


def _store(values, t):
    """Round computed values to the storage of type t (no range errors)."""
    dt = t.element_type
    v = np.asarray(values)
    if dt is DType.f32:
        with np.errstate(over="ignore", invalid="ignore"):
            return v.astype(np.float64).astype(np.float32).reshape(t.shape)
    if dt in (DType.f16, DType.bf16):
        bits, _ = small_float_from_f64(v.astype(np.float64), dt)
        bits = bits.reshape(t.shape)
        return bits.view(np.float16) if dt is DType.f16 else bits
    if dt is DType.bool_:
        return (v != 0).reshape(t.shape)
    return v.astype(dt.storage).reshape(t.shape)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _unary_float(kind, x):
    with np.errstate(all="ignore"):
        if kind == "coreai.relu":
            return np.where(x > 0, x, 0.0 * x)  # keeps NaN, gives +0 for negatives
        if kind == "coreai.rsqrt":
            return 1.0 / np.sqrt(x)
        if kind == "coreai.sqrt":
            return np.sqrt(x)
        if kind == "coreai.exp":
            return np.exp(x)
        if kind == "coreai.log":
            return np.log(x)
        if kind == "coreai.tanh":
            return np.tanh(x)
        if kind == "coreai.sigmoid":
            return 1.0 / (1.0 + np.exp(-x))
        if kind == "coreai.silu":
            return x / (1.0 + np.exp(-x))
        if kind == "coreai.erf":
            return _erf(x) if x.size else x
        if kind == "coreai.sin":
            return np.sin(x)
        if kind == "coreai.cos":
            return np.cos(x)
        if kind == "coreai.reciprocal":
            return 1.0 / x
        if kind == "coreai.floor":
            return np.floor(x)
        if kind == "coreai.ceil":
            return np.ceil(x)
    raise EvalError(f"no host semantics for {kind}")


def cast_values(x, src: DType, dst_type):
    """coreai.cast per runtime-stubs/src/cast.c: float -> int truncates toward
    zero, NaN -> 0, out of range saturates; i64 -> i32 wraps; -> bool is != 0;
    to f16/bf16 rounds to nearest even from the exact value."""
    dst = dst_type.element_type
    if src is dst:
        return np.array(x, copy=True)
    if dst is DType.bool_:
        if src is DType.bf16:
            return (storage_to_float64(x, src) != 0)
        return np.asarray(x) != 0
    if dst.is_int or dst.is_quant:
        if src.is_int or src.is_quant or src is DType.bool_:
            return np.asarray(x).astype(np.int64).astype(dst.storage)  # wraps like two's complement
        v = storage_to_float64(x, src)
        info = np.iinfo(dst.storage)  # i8 / u8 saturate at their own range, as runtime-stubs/src/cast.c
        with np.errstate(invalid="ignore"):
            t = np.trunc(np.nan_to_num(v, nan=0.0, posinf=math.inf, neginf=-math.inf))
            out = np.where(t >= float(info.max), info.max,
                           np.where(t <= float(info.min), info.min, 0))
            inside = (t < float(info.max)) & (t > float(info.min))
            res = out.astype(np.int64)
            res[inside] = t[inside].astype(np.int64)
        return res.astype(dst.storage).reshape(dst_type.shape)
    # to a float type
    if src is DType.i64 and dst is DType.f32:
        return np.asarray(x).astype(np.float32)  # direct, correctly rounded
    return _store(storage_to_float64(x, src), dst_type)


def _window_sum(xp, kh, kw, s, d, oh, ow, reduce):
    acc = None
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * d[0]: i * d[0] + s[0] * (oh - 1) + 1: s[0],
                       j * d[1]: j * d[1] + s[1] * (ow - 1) + 1: s[1]]
            acc = patch.copy() if acc is None else reduce(acc, patch)
    return acc


def _pool(kind, x, attrs, out_t):
    n, c, h, w = x.shape
    k = list(attrs["kernel_size"].value)
    s = list(attrs["strides"].value) if "strides" in attrs else k
    p = list(attrs["pads"].value) if "pads" in attrs else [0, 0, 0, 0]
    d = list(attrs["dilations"].value) if "dilations" in attrs else [1, 1]
    oh, ow = out_t.shape[2], out_t.shape[3]
    need_h = (oh - 1) * s[0] + d[0] * (k[0] - 1) + 1
    need_w = (ow - 1) * s[1] + d[1] * (k[1] - 1) + 1
    extra_h = max(0, need_h - (h + p[0] + p[2]))
    extra_w = max(0, need_w - (w + p[1] + p[3]))
    widths = ((0, 0), (0, 0), (p[0], p[2] + extra_h), (p[1], p[3] + extra_w))
    if kind == "coreai.max_pool2d":
        xp = np.pad(x, widths, constant_values=-np.inf)
        return _window_sum(xp, k[0], k[1], s, d, oh, ow, np.maximum)
    xp = np.pad(x, widths, constant_values=0.0)
    total = _window_sum(xp, k[0], k[1], s, d, oh, ow, np.add)
    if kind == "coreai.sumpool2d":
        return total
    include = attrs["count_include_pad"].value if "count_include_pad" in attrs else True
    mask = np.zeros((1, 1, h + p[0] + p[2] + extra_h, w + p[1] + p[3] + extra_w))
    if include:
        mask[:, :, : h + p[0] + p[2], : w + p[1] + p[3]] = 1.0
    else:
        mask[:, :, p[0]: p[0] + h, p[1]: p[1] + w] = 1.0
    count = _window_sum(mask, k[0], k[1], s, d, oh, ow, np.add)
    with np.errstate(all="ignore"):
        return total / count


def _conv2d(x, w, b, attrs, out_t):
    s = list(attrs["strides"].value) if "strides" in attrs else [1, 1]
    p = list(attrs["pads"].value) if "pads" in attrs else [0, 0, 0, 0]
    d = list(attrs["dilations"].value) if "dilations" in attrs else [1, 1]
    groups = attrs["groups"].value if "groups" in attrs else 1
    n, o, oh, ow = out_t.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    cg, og = x.shape[1] // groups, o // groups
    out = np.zeros((n, o, oh, ow))
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(w.shape[2]):
            for j in range(w.shape[3]):
                patch = xs[:, :, i * d[0]: i * d[0] + s[0] * (oh - 1) + 1: s[0],
                           j * d[1]: j * d[1] + s[1] * (ow - 1) + 1: s[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    if b is not None:
        out += b.reshape(1, o, 1, 1)
    return out


# ---- compression (docs/model-format.md, "Compression") ----

def _round_to(values, dtype: DType) -> np.ndarray:
    """float64 values rounded to dtype (f32 / f16 / bf16) and back: the
    result of one operation computed in that dtype (f32 holds the exact
    product or sum of two f16 / bf16 values, so rounding once is exact)."""
    from .ir import TensorType
    v = np.asarray(values, dtype=np.float64)
    return storage_to_float64(_store(v, TensorType(v.shape, dtype)), dtype)


def _expand_blocks(a, shape):
    """a repeated along every axis to shape (each extent of a divides shape's)."""
    for i, (d, b) in enumerate(zip(shape, a.shape)):
        if b != d:
            a = np.repeat(a, d // b, axis=i)
    return a


def _along_axis(a, rank, axis):
    """A rank-0 or rank-1 per-axis tensor shaped to broadcast against rank."""
    if a.ndim == 0:
        return a
    shape = [1] * rank
    shape[axis] = a.shape[0]
    return a.reshape(shape)


def _shift_scale(q, scale, offset, minval, fdtype):
    """(q - offset) * scale [+ minval], each operation rounded to fdtype."""
    d = q.astype(np.float64) - (offset.astype(np.float64) if offset is not None else 0.0)
    y = _round_to(d * scale, fdtype)
    if minval is not None:
        y = _round_to(y + minval, fdtype)
    return y


def _quantize(x, scale, zero_point, minval, xdtype, rdtype):
    """clamp(round_half_even((x [- minval]) / scale) [+ zero_point]); NaN gives 0."""
    with np.errstate(all="ignore"):
        if minval is not None:
            x = _round_to(x - minval, xdtype)
        q = np.rint(_round_to(x / scale, xdtype))
        if zero_point is not None:
            q = q + zero_point.astype(np.float64)
        lo, hi = rdtype.int_range
        q = np.where(np.isnan(q), 0.0, np.clip(q, lo, hi))
    return q.astype(rdtype.storage)


def _lut_to_dense(idx, lut, axis, out_shape):
    k = idx.ndim
    index = []
    for i in range(k):
        block = idx.shape[i] // lut.shape[i]
        shape = [1] * k
        shape[i] = idx.shape[i]
        index.append((np.arange(idx.shape[i]) // block).reshape(shape))
    index.append(idx.astype(np.int64))
    g = lut[tuple(index)]                      # idx.shape + (vector size,)
    return np.moveaxis(g, -1, axis + 1).reshape(out_shape)


def evaluate_op(op, inputs: list) -> list:
    """Results (storage arrays) of `op` applied to operand data `inputs`."""
    kind = op.kind
    attrs = op.attributes
    ts = [v.type for v in op.operands]
    rts = [r.type for r in op.results]
    rt = rts[0]

    def a(name, default=None):
        x = attrs.get(name)
        return x.value if x is not None else default

    def f(i):
        return _f64(inputs[i], ts[i])

    if kind in _inf.BINARY_NUMERIC or kind in _inf.BINARY_FLOAT:
        fn = {"coreai.add": np.add, "coreai.sub": np.subtract, "coreai.mul": np.multiply,
              "coreai.maximum": np.maximum, "coreai.minimum": np.minimum, "coreai.div": np.divide,
              "coreai.pow": np.power}[kind]
        with np.errstate(all="ignore"):
            if rt.element_type.is_int:
                return [fn(inputs[0], inputs[1]).astype(rt.element_type.storage).reshape(rt.shape)]
            return [_store(fn(f(0), f(1)), rt)]
    if kind in _inf.COMPARE_ANY or kind in _inf.COMPARE_NUMERIC:
        fn = {"coreai.equal": np.equal, "coreai.not_equal": np.not_equal, "coreai.less": np.less,
              "coreai.less_equal": np.less_equal, "coreai.greater": np.greater,
              "coreai.greater_equal": np.greater_equal}[kind]
        x, y = (f(0), f(1)) if ts[0].element_type.is_float else (inputs[0], inputs[1])
        return [np.asarray(fn(x, y)).reshape(rt.shape)]
    if kind in _inf.LOGICAL:
        fn = np.logical_and if kind == "coreai.logical_and" else np.logical_or
        return [np.asarray(fn(inputs[0], inputs[1])).reshape(rt.shape)]
    if kind == "coreai.logical_not":
        return [np.logical_not(inputs[0])]
    if kind == "coreai.where":
        return [np.where(inputs[0], inputs[1], inputs[2]).astype(inputs[1].dtype).reshape(rt.shape)]
    if kind in _inf.UNARY_FLOAT:
        return [_store(_unary_float(kind, f(0)), rt)]
    if kind in ("coreai.neg", "coreai.abs"):
        fn = np.negative if kind == "coreai.neg" else np.abs
        with np.errstate(all="ignore"):
            if rt.element_type.is_int:
                return [fn(inputs[0]).astype(rt.element_type.storage)]
            return [_store(fn(f(0)), rt)]
    if kind == "coreai.gelu":
        x = f(0)
        with np.errstate(all="ignore"):
            if a("approximate", "none") == "tanh":
                y = 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
            else:
                y = 0.5 * x * (1.0 + (_erf(x * _SQRT1_2) if x.size else x))
        return [_store(y, rt)]
    if kind == "coreai.clamp":
        y = f(0)
        if a("min") is not None:
            y = np.where(y < a("min"), a("min"), y)
        if a("max") is not None:
            y = np.where(y > a("max"), a("max"), y)
        return [_store(y, rt)]
    if kind == "coreai.cast":
        return [cast_values(inputs[0], ts[0].element_type, rt).reshape(rt.shape)]
    if kind == "coreai.matmul":
        x, y = f(0), f(1)
        if a("transpose_a", False):
            x = np.swapaxes(x, -1, -2)
        if a("transpose_b", False):
            y = np.swapaxes(y, -1, -2)
        return [_store(np.matmul(x, y), rt)]
    if kind == "coreai.linear":
        x, w = f(0), f(1)
        y = x @ (w if a("weight_transposed", False) else w.T)
        if len(inputs) == 3:
            y = y + f(2)
        return [_store(y, rt)]
    if kind in _inf.REDUCE:
        x = f(0)
        axes = tuple(_inf.normalize_axes(a("axes"), x.ndim))
        fn = {"coreai.reduce_sum": np.sum, "coreai.reduce_mean": np.mean, "coreai.reduce_max": np.max,
              "coreai.reduce_min": np.min}[kind]
        if x.size == 0 and kind in ("coreai.reduce_max", "coreai.reduce_min") and axes:
            raise EvalError(f"{kind} of an empty tensor")
        with np.errstate(all="ignore"):
            y = fn(x, axis=axes, keepdims=True) if axes else x
        return [_store(y, rt)]
    if kind == "coreai.argmax":
        x = f(0)
        ax = _inf.normalize_axis(a("axis"), x.ndim)
        y = np.argmax(x, axis=ax)
        return [y.astype(np.int64).reshape(rt.shape)]
    if kind == "coreai.softmax":
        x = f(0)
        ax = _inf.normalize_axis(a("axis"), x.ndim)
        with np.errstate(all="ignore"):
            e = np.exp(x - np.max(x, axis=ax, keepdims=True)) if x.size else x
            y = e / np.sum(e, axis=ax, keepdims=True) if x.size else x
        return [_store(y, rt)]
    if kind == "coreai.reshape":
        return [np.array(inputs[0]).reshape(rt.shape)]
    if kind == "coreai.transpose":
        return [np.array(np.transpose(inputs[0], a("perm")), order="C")]
    if kind == "coreai.broadcast_to":
        return [np.array(np.broadcast_to(inputs[0], rt.shape))]
    if kind == "coreai.concat":
        ax = _inf.normalize_axis(a("axis"), ts[0].rank)
        return [np.concatenate([np.asarray(x) for x in inputs], axis=ax)]
    if kind == "coreai.slice":
        for b, e, d in zip(a("begins"), a("ends"), ts[0].shape):
            if not 0 <= b <= e <= d:
                raise EvalError(f"coreai.slice: [{b}, {e}) lies outside [0, {d})")
        idx = tuple(slice(b, e, s) for b, e, s in zip(a("begins"), a("ends"), a("steps")))
        return [np.array(np.asarray(inputs[0])[idx])]
    if kind == "coreai.slice_update":
        out = np.array(inputs[0], copy=True)
        for b, u, d in zip(a("begins"), ts[1].shape, ts[0].shape):
            if not (0 <= b and b + u <= d):
                raise EvalError(f"coreai.slice_update: [{b}, {b + u}) lies outside [0, {d})")
        out[tuple(slice(b, b + u) for b, u in zip(a("begins"), ts[1].shape))] = inputs[1]
        return [out]
    if kind == "coreai.dim_value":
        return [_store(np.full(rt.shape, a("value"), dtype=np.float64), rt)]
    if kind == "coreai.gather":
        x, idx = inputs
        ax = _inf.normalize_axis(a("axis"), ts[0].rank)
        n = ts[0].shape[ax]
        i = np.asarray(idx).astype(np.int64)
        if i.size and (i.min() < -n or i.max() >= n):
            raise EvalError(f"coreai.gather: an index is outside [{-n}, {n})")
        i = np.where(i < 0, i + n, i)
        return [np.take(x, i, axis=ax).reshape(rt.shape)]
    if kind == "coreai.pad":
        x = inputs[0]
        r = ts[0].rank
        p = a("pads")
        widths = [(p[i], p[r + i]) for i in range(r)]
        fill = _store(np.asarray(a("value", 0.0)), type(rt)((), rt.element_type))
        return [np.pad(x, widths, constant_values=fill.item())]
    if kind == "coreai.iota":
        n = rt.shape[0]
        v = a("start") + np.arange(n, dtype=np.float64) * a("step")
        if rt.element_type.is_int:
            return [np.trunc(v).astype(rt.element_type.storage)]
        return [_store(v, rt)]
    if kind == "coreai.fill":
        return [_store(np.full(rt.shape, a("value"), dtype=np.float64), rt)]
    if kind == "coreai.conv2d":
        b = f(2) if len(inputs) == 3 else None
        return [_store(_conv2d(f(0), f(1), b, attrs, rt), rt)]
    if kind in ("coreai.max_pool2d", "coreai.avg_pool2d", "coreai.sumpool2d"):
        return [_store(_pool(kind, f(0), attrs, rt), rt)]
    if kind == "coreai.blockwise_shift_scale":
        shape = ts[0].shape
        off = _expand_blocks(np.asarray(inputs[2]), shape) if len(inputs) > 2 else None
        mv = _expand_blocks(f(3), shape) if len(inputs) > 3 else None
        y = _shift_scale(np.asarray(inputs[0]), _expand_blocks(f(1), shape), off, mv, rt.element_type)
        return [_store(y, rt)]
    if kind == "coreai.dequantize":
        rank = ts[0].rank
        ax = _inf.normalize_axis(a("axis", 0), rank) if ts[1].rank == 1 else 0
        off = _along_axis(np.asarray(inputs[2]), rank, ax) if len(inputs) > 2 else None
        mv = _along_axis(f(3), rank, ax) if len(inputs) > 3 else None
        y = _shift_scale(np.asarray(inputs[0]), _along_axis(f(1), rank, ax), off, mv, rt.element_type)
        return [_store(y, rt)]
    if kind == "coreai.quantize":
        rank = ts[0].rank
        ax = _inf.normalize_axis(a("axis", 0), rank) if ts[1].rank == 1 else 0
        zp = _along_axis(np.asarray(inputs[2]), rank, ax) if len(inputs) > 2 else None
        mv = _along_axis(f(3), rank, ax) if len(inputs) > 3 else None
        q = _quantize(f(0), _along_axis(f(1), rank, ax), zp, mv, ts[0].element_type, rt.element_type)
        return [q.reshape(rt.shape)]
    if kind == "coreai.lut_to_dense":
        ax = _inf.normalize_axis(a("axis"), ts[0].rank)
        return [_lut_to_dense(np.asarray(inputs[0]), np.asarray(inputs[1]), ax, rt.shape)]
    raise EvalError(f"no host semantics for {kind}")


class _Typed:
    __slots__ = ("type",)

    def __init__(self, t) -> None:
        self.type = t


class _AtValues:
    """An op with its symbolic extents replaced by their values for one call
    (what evaluate_op reads: kind, attributes, operand and result types)."""

    def __init__(self, op, values: dict) -> None:
        self.kind = op.kind
        self.operands = [_Typed(_concrete(v.type, values)) for v in op.operands]
        self.results = [_Typed(_concrete(r.type, values)) for r in op.results]
        self.attributes = {}
        for k, at in op.attributes.items():
            if at.kind == "dim":
                at = Attr("si64", _value(at.value, values))
            elif at.kind == "dim[]":
                at = Attr("si64[]", [_value(x, values) for x in at.value])
            self.attributes[k] = at


def _value(e, values: dict) -> int:
    return e.evaluate(values) if isinstance(e, Dim) else int(e)


def _concrete(t, values: dict):
    if not t.is_dynamic:
        return t
    shape = [_value(d, values) for d in t.shape]
    if any(d < 0 for d in shape):
        raise EvalError(f"{t} has a negative extent for the symbols' values {values}")
    return TensorType(shape, t.element_type)


def bind_symbols(types: list, arrays: list) -> dict:
    """Symbol values from the shapes of input arrays of these types (each
    symbol taken from an extent `c*s + k` in it alone, then every extent
    checked); ValueError when they disagree or leave a symbol's range."""
    values: dict = {}
    ranges = {}
    for t, x in zip(types, arrays):
        shape = np.shape(x)
        if len(shape) != t.rank:
            raise ValueError(f"an input of type {t} has shape {tuple(shape)} (rank {len(shape)})")
        for d, n in zip(t.shape, shape):
            if isinstance(d, Dim) and len(d.terms) == 1:
                (sym, c), = d.terms.items()
                ranges[sym.name] = sym
                if sym.name not in values and (n - d.constant) % c == 0:
                    values[sym.name] = (n - d.constant) // c
    for name, sym in ranges.items():
        v = values.get(name)
        if v is None or v < sym.min or v > sym.max:
            raise ValueError(f"symbol '{name}' = {v} is outside its range [{sym.min}, {sym.max}]")
    for t, x in zip(types, arrays):
        want = tuple(_value(d, values) if not isinstance(d, Dim) or all(s.name in values for s in d.terms)
                     else None for d in t.shape)
        if any(w is None for w in want) or tuple(np.shape(x)) != want:
            raise ValueError(f"an input of type {t} has shape {tuple(np.shape(x))}, not {want} for {values}")
    return values


def run_graph(module, graph, args: list, values: dict | None = None) -> list:
    """Interpret `graph` on argument data (storage arrays); returns its
    outputs. `values` gives the symbols of a symbolic graph."""
    env = {}
    for v, x in zip(graph.arguments, args):
        env[v] = np.asarray(x)
    for op in graph.operations:
        if op.is_constant:
            env[op.results[0]] = op.data
            continue
        ins = [env[v] for v in op.operands]
        if op.kind == "coreai.invoke":
            callee = module.find_graph(op.callee) if module is not None else None
            if callee is None:
                raise EvalError(f"coreai.invoke: unknown graph @{op.callee}")
            outs = run_graph(module, callee, ins, values)
        else:
            outs = evaluate_op(_AtValues(op, values) if values else op, ins)
        for r, x in zip(op.results, outs):
            env[r] = x
    return [env[v] for v in graph.outputs]


def interpret(module, entrypoint: str, inputs: dict, states: dict | None = None) -> dict:
    """Run an entrypoint with the reference semantics: {name: storage array}
    for outputs, then updated states (initial states as in the module)."""
    e = module.find_entrypoint(entrypoint)
    if e is None:
        raise ValueError(f"no entrypoint '{entrypoint}'")
    g = module.find_graph(e.graph)
    states = dict(states or {})
    args = []
    for i, s in enumerate(e.states):
        t = g.arguments[i].type
        if s in states:
            args.append(np.asarray(states[s]).astype(t.element_type.storage).reshape(t.shape))
        elif s in e.initial_states:
            args.append(np.asarray(e.initial_states[s]).astype(t.element_type.storage).reshape(t.shape))
        else:
            args.append(np.zeros(t.shape, t.element_type.storage))
    for n in e.inputs:
        if n not in inputs:
            raise ValueError(f"missing input '{n}'")
    in_types = [g.arguments[len(e.states) + i].type for i in range(len(e.inputs))]
    values = bind_symbols(in_types, [inputs[n] for n in e.inputs]) if any(t.is_dynamic for t in in_types) else {}
    for i, n in enumerate(e.inputs):
        t = _concrete(in_types[i], values)
        args.append(np.asarray(inputs[n]).astype(t.element_type.storage).reshape(t.shape))
    outs = run_graph(module, g, args, values)
    ns = len(e.states)
    result = {n: outs[ns + i] for i, n in enumerate(e.outputs)}
    result.update({n: outs[i] for i, n in enumerate(e.states)})
    return result
