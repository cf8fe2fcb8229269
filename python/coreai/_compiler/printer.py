"""The textual IR, byte-identical to `coreai-gen print` of the saved model
(generator/src/print.c)."""
from __future__ import annotations

import numpy as np

from .dtypes import DType, small_float_to_f64
from .numbers import format_f32, format_f64
from .serialize import layout_weights

MAX_INLINE = 16


def _string(s: str) -> str:
    out = ['"']
    for b in s.encode("utf-8"):
        if b in (0x22, 0x5C):
            out.append("\\" + chr(b))
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append("\\%02X" % b)
    out.append('"')
    return "".join(out)


def _string_list(items) -> str:
    return "[" + ", ".join(_string(s) for s in items) + "]"


def _type(t) -> str:
    return str(t)


def _type_tuple(types, parens: bool) -> str:
    s = ", ".join(_type(t) for t in types)
    return f"({s})" if parens else s


def _attr_value(a) -> str:
    k, v = a.kind, a.value
    if k == "si64":
        return f"{v} : si64"
    if k == "f32":
        return f"{format_f32(v)} : f32"
    if k == "f64":
        return f"{format_f64(v)} : f64"
    if k == "bool":
        return "true" if v else "false"
    if k == "str":
        return _string(v)
    if k == "si64[]":
        return "[" + ", ".join(str(x) for x in v) + "]"
    if k == "f32[]":
        return "[" + ", ".join(format_f32(x) for x in v) + "]"
    if k == "dim":
        return f"{v} : dim"
    if k == "dim[]":
        return "[" + ", ".join(str(x) for x in v) + "] : dim"
    return _string_list(v)  # str[]


def _attr_dict(attrs: dict) -> str:
    # strcmp order == code point order for the ASCII identifiers attributes use
    return "{" + ", ".join(f"{k} = {_attr_value(attrs[k])}" for k in sorted(attrs)) + "}"


def _elements(op) -> list:
    dt = op.results[0].type.element_type
    flat = np.asarray(op.data).reshape(-1)
    if dt is DType.f32:
        return [format_f32(x) for x in flat.astype(np.float64).tolist()]
    if dt in (DType.f16, DType.bf16):
        bits = flat.view(np.uint16) if dt is DType.f16 else flat.astype(np.uint16)
        vals = small_float_to_f64(bits, dt).tolist()
        return [format_f32(v) if np.isfinite(v) else "0x%04X" % int(b) for v, b in zip(vals, bits.tolist())]
    if dt.is_int or dt.is_quant:
        return [str(int(x)) for x in flat.tolist()]
    return ["true" if x else "false" for x in flat.tolist()]


def _dense(shape, elems) -> str:
    pos = [0]

    def rec(dim):
        if dim == len(shape):
            s = elems[pos[0]]
            pos[0] += 1
            return s
        return "[" + ", ".join(rec(dim + 1) for _ in range(shape[dim])) + "]"

    return rec(0)


def _const(op, layout) -> str:
    r = op.results[0]
    t = r.type
    if op in layout.offsets:
        off, length = layout.offsets[op]
        body = f"dense_resource<{off}:{length}>"
    elif t.numel > MAX_INLINE:
        body = "dense_resource<inline>"
    elif t.numel == 0:
        body = "dense<>"
    else:
        body = f"dense<{_dense(t.shape, _elements(op))}>"
    return f"    %{r.id} = coreai.constant {body} : {_type(t)}\n"


def _op(op) -> str:
    s = "    " + ", ".join(f"%{r.id}" for r in op.results) + f" = {op.kind}"
    operands = ", ".join(f"%{v.id}" for v in op.operands)
    if op.kind == "coreai.invoke":
        s += f" @{op.callee}({operands})"
    elif op.operands:
        s += f" {operands}"
    if op.attributes:
        s += " " + _attr_dict(op.attributes)
    s += " : " + _type_tuple([v.type for v in op.operands], True)
    s += " -> " + _type_tuple([r.type for r in op.results], len(op.results) != 1)
    return s + "\n"


def _graph(g, layout) -> str:
    head = "  coreai.graph " + ("private " if g.private else "") + ("noinline " if g.noinline else "")
    args = []
    for a in g.arguments:
        s = f"%{a.id}: {_type(a.type)}"
        if a.name is not None:
            s += " {coreai.name = " + _string(a.name) + "}"
        args.append(s)
    outputs = g.outputs or []
    s = head + f"@{g.name}(" + ", ".join(args) + ") -> " + _type_tuple([o.type for o in outputs], len(outputs) != 1)
    c = g.composite
    if c is not None:
        s += (" attributes {composite_decl = #coreai.composite_declaration<" + _string(c.op_name)
              + " = {input_names = " + _string_list(c.input_names) + ", op_attrs = " + _attr_dict(c.attrs)
              + ", output_names = " + _string_list(c.output_names) + "}>}")
    s += " {\n"
    for op in g.serialized_operations():
        s += _const(op, layout) if op.is_constant else _op(op)
    s += "    coreai.output " + ", ".join(f"%{o.id}" for o in outputs) + " : "
    s += _type_tuple([o.type for o in outputs], False) + "\n  }\n"
    return s


def _entrypoint(e) -> str:
    s = f"  coreai.entrypoint @{e.name} {{"
    if e.graph != e.name:
        s += f"graph = @{e.graph}, "
    s += (f"inputs = {_string_list(e.inputs)}, outputs = {_string_list(e.outputs)}, "
          f"states = {_string_list(e.states)}}}\n")
    return s


def print_module(module) -> str:
    layout = layout_weights(module.graphs)
    symbols = "".join(f"  coreai.symbol {s.name} : [{s.min}, {s.max}]\n" for s in module.all_symbols())
    return ("module {\n" + symbols + "".join(_graph(g, layout) for g in module.graphs)
            + "".join(_entrypoint(e) for e in module.entrypoints) + "}\n")


def print_graph(graph, layout=None) -> str:
    if layout is None:
        if graph.module is not None:
            layout = layout_weights(graph.module.graphs)
        else:
            layout = layout_weights([graph])
    return _graph(graph, layout)
