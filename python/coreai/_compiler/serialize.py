"""Module -> model file (docs/model-format.md) + weights file: format 1, or
format 2 when the module has symbolic extents or an entrypoint without
outputs, or format 3 when it records states' initial values.

Deterministic: the bytes depend only on the program (graph order, op order,
attribute names sorted, value ids by position), never on dict order, object
ids or time.

Constants with >= 16 elements, or of rank >= 1 and >= 64 bytes, or holding
a NaN (which the loader does not read as text) go to the weights file at
64-byte-aligned offsets; identical payloads are stored once. The others are
written inline with text that reads back exactly.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np

from .dims import Dim
from .dtypes import DType, pack_bits, small_float_to_f64
from .ir import Module, Operation, TensorType
from .numbers import xml_float

EXTERNAL_MIN_ELEMENTS = 16
EXTERNAL_MIN_BYTES = 64
ALIGNMENT = 64

_LE = {DType.f32: "<f4", DType.f16: "<f2", DType.bf16: "<u2", DType.i64: "<i8", DType.i32: "<i4",
       DType.bool_: "u1", DType.i8: "i1", DType.u8: "u1"}


def constant_bytes(op: Operation) -> bytes:
    """Little-endian bytes of a constant (f16/bf16 as bit patterns, bool as
    0/1, sub-byte integers packed: dtypes.pack_bits)."""
    dt = op.results[0].type.element_type
    if dt.is_subbyte:
        return pack_bits(op.data, dt)
    return np.ascontiguousarray(op.data).astype(_LE[dt]).tobytes()


def _has_nan(op: Operation) -> bool:
    dt = op.results[0].type.element_type
    if dt is DType.bf16:
        bits = np.asarray(op.data, dtype=np.uint16)
        return bool(np.any(((bits & 0x7F80) == 0x7F80) & ((bits & 0x7F) != 0)))
    if dt.is_float:
        return bool(np.any(np.isnan(op.data)))
    return False


def is_external(op: Operation) -> bool:
    t = op.results[0].type
    if t.numel >= EXTERNAL_MIN_ELEMENTS or (t.rank > 0 and t.nbytes >= EXTERNAL_MIN_BYTES):
        return True
    return _has_nan(op)


class WeightsLayout:
    """Where each external constant lives in the weights file."""

    def __init__(self) -> None:
        self.offsets: dict = {}  # Operation -> (offset, length)
        self.blob = b""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.blob).hexdigest()

    @property
    def size(self) -> int:
        return len(self.blob)

    def __bool__(self) -> bool:
        return bool(self.offsets)


def state_init_ops(module: Module) -> dict:
    """{(entrypoint name, state name): constant Operation} of the recorded
    initial values, so they are laid out and written like constants."""
    out = {}
    for e in module.entrypoints:
        g = module.find_graph(e.graph)
        for i, name in enumerate(e.states):
            if name in e.initial_states:
                op = Operation("coreai.constant", [], [g.arguments[i].type])
                op.data = np.asarray(e.initial_states[name])
                out[(e.name, name)] = op
    return out


def _fill_text(op: Operation) -> str | None:
    """The one value of an initial value whose elements are all equal (and
    not NaN, which the text form cannot hold), else None."""
    flat = np.asarray(op.data).reshape(-1)
    if flat.size == 0 or _has_nan(op) or not np.all(flat == flat[0]):
        return None
    one = Operation("coreai.constant", [], [TensorType([], op.results[0].type.element_type)])
    one.data = flat[:1].reshape(())
    return inline_text(one)


def layout_weights(graphs, extra=()) -> WeightsLayout:
    """extra: more constant operations (states' initial values) after the graphs'."""
    lay = WeightsLayout()
    parts = []
    size = 0
    by_content: dict = {}
    for op in [op for g in graphs for op in g.serialized_operations()] + list(extra):
        if not op.is_constant or not is_external(op):
            continue
        data = constant_bytes(op)
        key = (hashlib.sha256(data).digest(), len(data))
        if key in by_content:
            lay.offsets[op] = (by_content[key], len(data))
            continue
        offset = (size + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        if offset > size:
            parts.append(b"\0" * (offset - size))
        parts.append(data)
        size = offset + len(data)
        by_content[key] = offset
        lay.offsets[op] = (offset, len(data))
    lay.blob = b"".join(parts)
    return lay


# ---------------------------------------------------------------------------
# XML
# ---------------------------------------------------------------------------

def _esc_text(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")


def _esc_attr(s: str) -> str:
    return (_esc_text(s).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;"))


def _shape(t) -> str:
    return " ".join(str(d) for d in t.shape)


def attr_text(a) -> str:
    k, v = a.kind, a.value
    if k == "si64":
        return str(v)
    if k in ("f32", "f64"):
        return xml_float(v)
    if k == "bool":
        return "true" if v else "false"
    if k == "str":
        return _esc_text(v)
    if k == "si64[]":
        return " ".join(str(x) for x in v)
    if k == "f32[]":
        return " ".join(xml_float(x) for x in v)
    if k == "dim":
        return str(v)
    if k == "dim[]":
        return " ".join(str(x) for x in v)
    return " ".join(_esc_text(x) for x in v)  # str[]


def _attr_lines(attrs: dict, indent: str) -> list:
    return [f'{indent}<attr name="{name}" type="{attrs[name].kind}">{attr_text(attrs[name])}</attr>'
            for name in sorted(attrs)]


def inline_text(op: Operation) -> str:
    dt = op.results[0].type.element_type
    flat = np.asarray(op.data).reshape(-1)
    if dt is DType.bool_:
        return " ".join("true" if x else "false" for x in flat.tolist())
    if dt.is_int or dt.is_quant:
        return " ".join(str(int(x)) for x in flat.tolist())
    if dt is DType.bf16:
        vals = small_float_to_f64(flat, dt)
    else:
        vals = flat.astype(np.float64)
    return " ".join(xml_float(x) for x in vals.tolist())


def format_version(module: Module) -> int:
    """3 when the module records states' initial values, 2 when it needs
    that (symbols, dim attributes, an entrypoint without outputs), else 1,
    which every coreai-gen reads."""
    if any(e.initial_states for e in module.entrypoints):
        return 3
    if module.all_symbols() or any(not e.outputs for e in module.entrypoints):
        return 2
    return 1


def _check_bounded(module: Module, symbols) -> None:
    for s in symbols:
        if s.max is not None:
            continue
        for e in module.entrypoints:
            g = module.find_graph(e.graph)
            for k, a in enumerate(g.arguments):
                for axis, d in enumerate(a.type.shape):
                    if isinstance(d, Dim) and s in d.terms:
                        what = "state" if k < len(e.states) else "input"
                        name = e.states[k] if k < len(e.states) else e.inputs[k - len(e.states)]
                        raise ValueError(f"{what} '{name}' of entrypoint '{e.name}' has dimension {axis} = '{d}' with "
                                         f"no upper bound: give symbol '{s.name}' a max (coreai-gen sizes the "
                                         "workspace for the largest extent)")
        raise ValueError(f"symbol '{s.name}' has no upper bound: give it a max (coreai-gen sizes the workspace for "
                         "the largest extent)")


def _state_line(name: str, op, layout: WeightsLayout) -> str:
    if op is None:
        return f'    <state name="{name}"/>'
    fill = _fill_text(op)
    if fill is not None:
        return f'    <state name="{name}"><init fill="{fill}"/></state>'
    if op in layout.offsets:
        off, length = layout.offsets[op]
        return f'    <state name="{name}"><init offset="{off}" length="{length}"/></state>'
    return f'    <state name="{name}"><init>{inline_text(op)}</init></state>'


def module_to_xml(module: Module, layout: WeightsLayout, weights_href: str | None, inits=None) -> str:
    symbols = module.all_symbols()
    names = {}
    for s in symbols:
        if s.name in names:
            raise ValueError(f"two symbols are named '{s.name}' with different ranges ([{names[s.name].min}, "
                             f"{names[s.name].max}] and [{s.min}, {s.max}])")
        names[s.name] = s
    _check_bounded(module, symbols)
    out = ['<?xml version="1.0" encoding="UTF-8"?>', f'<coreai-model format="{format_version(module)}">']
    if layout:
        out.append(f'  <weights href="{_esc_attr(weights_href)}" size="{layout.size}" sha256="{layout.sha256}"/>')
    out += [f'  <symbol name="{s.name}" min="{s.min}" max="{s.max}"/>' for s in symbols]
    for g in module.graphs:
        flags = (' private="true"' if g.private else "") + (' noinline="true"' if g.noinline else "")
        out.append(f'  <graph name="{g.name}"{flags}>')
        c = g.composite
        if c is not None:
            out.append(f'    <composite-decl op="{c.op_name}">')
            out += [f"      <input-name>{n}</input-name>" for n in c.input_names]
            out += [f"      <output-name>{n}</output-name>" for n in c.output_names]
            out += _attr_lines(c.attrs, "      ")
            out.append("    </composite-decl>")
        for a in g.arguments:
            name = f' name="{a.name}"' if a.name is not None else ""
            out.append(f'    <arg id="{a.id}" dtype="{a.type.element_type}" shape="{_shape(a.type)}"{name}/>')
        for op in g.serialized_operations():
            if op.is_constant:
                r = op.results[0]
                head = f'    <const id="{r.id}" dtype="{r.type.element_type}" shape="{_shape(r.type)}"'
                if op in layout.offsets:
                    off, length = layout.offsets[op]
                    out.append(f'{head} offset="{off}" length="{length}"/>')
                else:
                    out.append(f"{head}>{inline_text(op)}</const>")
                continue
            callee = f' callee="{op.callee}"' if op.kind == "coreai.invoke" else ""
            out.append(f'    <op kind="{op.kind}"{callee}>')
            out += [f'      <operand ref="{v.id}"/>' for v in op.operands]
            out += _attr_lines(op.attributes, "      ")
            out += [f'      <result id="{r.id}" dtype="{r.type.element_type}" shape="{_shape(r.type)}"/>'
                    for r in op.results]
            out.append("    </op>")
        out.append("    <output>" + "".join(f'<value ref="{v.id}"/>' for v in g.outputs) + "</output>")
        out.append("  </graph>")
    for e in module.entrypoints:
        out.append(f'  <entrypoint name="{e.name}" graph="{e.graph}">')
        out += [_state_line(n, (inits or {}).get((e.name, n)), layout) for n in e.states]
        out += [f'    <input name="{n}"/>' for n in e.inputs]
        out += [f'    <output name="{n}"/>' for n in e.outputs]
        out.append("  </entrypoint>")
    out.append("</coreai-model>")
    return "\n".join(out) + "\n"


def model_paths(path) -> tuple:
    """(model file, weights file) for a save path: "m.xml" -> m.xml + m.weights,
    anything else -> path.xml + path.weights."""
    p = Path(os.fspath(path))
    if p.suffix == ".xml":
        return p, p.with_suffix(".weights")
    return Path(str(p) + ".xml"), Path(str(p) + ".weights")


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix="." + path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        # mkstemp creates 0600; a saved model is an ordinary file (umask applies)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def serialize(module: Module, weights_href: str = "model.weights") -> tuple:
    """(xml text, weights bytes or None) without writing anything."""
    module.verify()
    inits = state_init_ops(module)
    lay = layout_weights(module.graphs, [op for op in inits.values() if _fill_text(op) is None])
    return module_to_xml(module, lay, weights_href, inits), (lay.blob if lay else None)


def save_module(module: Module, path) -> tuple:
    """Writes the model (and weights) files; returns (model path, weights path or None)."""
    model_path, weights_path = model_paths(path)
    href = weights_path.name
    if ":" in href or "\\" in href:
        raise ValueError(f"weights file name {href!r} may not contain ':' or '\\'")
    xml, blob = serialize(module, href)
    model_path.parent.mkdir(parents=True, exist_ok=True)
    if blob is not None:
        _write_atomic(weights_path, blob)
    _write_atomic(model_path, xml.encode("utf-8"))
    return model_path, (weights_path if blob is not None else None)
