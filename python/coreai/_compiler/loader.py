"""Model file (formats 1 and 2) -> ir.Module: the inverse of serialize.py.

Value ids of the file are not kept (a graph numbers its values by
position), so loading a file this package saved and saving it again gives
the same bytes. Like coreai-gen, the loader never reads a DTD or expands
entities, and checks the weights file's size and SHA-256.
"""
from __future__ import annotations

import hashlib
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from .dims import Symbol, parse_extent
from .dtypes import DType, to_storage, unpack_bits
from .infer import DECLARED, OpError, infer
from .ir import Attr, CompositeDecl, Graph, Module, Operation, TensorType

_ATTR_KINDS = ("si64", "f32", "f64", "bool", "str", "si64[]", "f32[]", "str[]", "dim", "dim[]")
NEWEST_FORMAT = 3


def _err(path, msg) -> ValueError:
    return ValueError(f"{path}: error: {msg}")


def _float(tok: str) -> float:
    t = tok.strip()
    if t.lower().lstrip("-").startswith("0x"):
        return float.fromhex(t)
    v = float(t)
    if v != v:
        raise ValueError("NaN")
    return v


def _int(tok: str) -> int:
    t = tok.strip()
    if not (t.lstrip("-").isdigit()):
        raise ValueError(f"'{tok}' is not a decimal integer")
    return int(t)


def _parse_attr(el, path, symbols=None) -> tuple:
    name, kind, text = el.get("name"), el.get("type"), el.text or ""
    if kind not in _ATTR_KINDS:
        raise _err(path, f"attribute '{name}' has unknown type '{kind}'")
    if kind in ("dim", "dim[]") and symbols is None:
        raise _err(path, f"attribute '{name}': type '{kind}' needs model format 2")
    try:
        toks = text.split()
        if kind == "dim[]":
            value = [parse_extent(t, symbols) for t in toks]
        elif kind == "dim":
            if len(toks) != 1:
                raise ValueError(f"needs exactly one value, got {len(toks)}")
            value = parse_extent(toks[0], symbols)
        elif kind == "str":
            value = text
        elif kind == "si64[]":
            value = [_int(t) for t in toks]
        elif kind == "f32[]":
            value = [_float(t) for t in toks]
        elif kind == "str[]":
            value = toks
        else:
            if len(toks) != 1:
                raise ValueError(f"needs exactly one value, got {len(toks)}")
            t = toks[0]
            if kind == "si64":
                value = _int(t)
            elif kind in ("f32", "f64"):
                value = _float(t)
            else:
                if t not in ("true", "false"):
                    raise ValueError(f"'{t}' is not true or false")
                value = t == "true"
        return name, Attr(kind, value)
    except ValueError as e:
        raise _err(path, f"attribute '{name}' ({kind}): {e}") from None


def _type(el, path, symbols=None) -> TensorType:
    try:
        shape = [parse_extent(t, symbols or {}) for t in (el.get("shape") or "").split()]
        return TensorType(shape, el.get("dtype"))
    except ValueError as e:
        raise _err(path, f"<{el.tag} id={el.get('id')!r}>: {e}") from None


def _const_data(el, t: TensorType, weights: bytes | None, path) -> np.ndarray:
    dt = t.element_type
    cid = el.get("id")
    if el.get("offset") is not None:
        if weights is None:
            raise _err(path, f"constant '{cid}' refers to the weights file, but the model has no <weights> element")
        off, length = int(el.get("offset")), int(el.get("length"))
        if length != t.nbytes:
            raise _err(path, f"constant '{cid}' has length {length}, but {t} needs {t.nbytes} bytes")
        if off + length > len(weights):
            raise _err(path, f"constant '{cid}' (offset {off}, length {length}) lies outside the weights file")
        if dt.is_subbyte:
            return unpack_bits(weights[off:off + length], dt, t.numel).reshape(t.shape)
        le = {DType.f32: "<f4", DType.f16: "<f2", DType.bf16: "<u2", DType.i64: "<i8", DType.i32: "<i4",
              DType.bool_: "u1", DType.i8: "i1", DType.u8: "u1"}[dt]
        raw = np.frombuffer(weights, dtype=le, count=t.numel, offset=off)
        return (raw != 0 if dt is DType.bool_ else raw.astype(dt.storage)).reshape(t.shape)
    toks = (el.text or "").split()
    if len(toks) != t.numel:
        raise _err(path, f"constant '{cid}' has {len(toks)} values, but {t} has {t.numel} elements")
    try:
        if dt is DType.bool_:
            bad = [x for x in toks if x not in ("true", "false", "1", "0")]
            if bad:
                raise ValueError(f"'{bad[0]}' is not true, false, 1 or 0")
            vals = np.array([x in ("true", "1") for x in toks], dtype=np.bool_)
        elif dt.is_int or dt.is_quant:
            vals = np.array([_int(x) for x in toks], dtype=np.int64)
        else:
            vals = np.array([_float(x) for x in toks], dtype=np.float64)
        return to_storage(vals, dt, what=f"constant '{cid}'").reshape(t.shape)
    except ValueError as e:
        raise _err(path, f"constant '{cid}': {e}") from None


def load_module(path) -> Module:
    path = Path(os.fspath(path))
    raw = path.read_bytes()
    if b"<!DOCTYPE" in raw or b"<!ENTITY" in raw:
        raise _err(path, "DTDs and entities are not allowed in a model file")
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as e:
        raise _err(path, f"malformed XML: {e}") from None
    fmt = root.get("format")
    if root.tag != "coreai-model" or fmt not in ("1", "2", "3"):
        if root.tag == "coreai-model" and (fmt or "").isdigit() and int(fmt) > NEWEST_FORMAT:
            raise _err(path, f"model format {fmt} is newer than this package reads (formats 1 to {NEWEST_FORMAT})")
        raise _err(path, f"not a Core AI model file of format 1 to {NEWEST_FORMAT}")
    symbols = None
    m = Module()
    if fmt != "1":
        symbols = {}
        for sel in root.findall("symbol"):
            if sel.get("max") is None:
                raise _err(path, f"symbol '{sel.get('name')}' has no upper bound (max)")
            s = Symbol(sel.get("name"), int(sel.get("min")), int(sel.get("max")))
            if s.name in symbols:
                raise _err(path, f"symbol '{s.name}' redefined")
            symbols[s.name] = m.add_symbol(s)
    elif root.findall("symbol"):
        raise _err(path, "<symbol> needs model format 2 (this file declares format 1)")
    weights = None
    w = root.find("weights")
    if w is not None:
        href = w.get("href")
        wpath = path.parent / href
        try:
            weights = wpath.read_bytes()
        except OSError as e:
            raise _err(path, f"cannot read the weights file {wpath}: {e}") from None
        if len(weights) != int(w.get("size")):
            raise _err(wpath, f"size {len(weights)} differs from the {w.get('size')} the model records")
        if hashlib.sha256(weights).hexdigest() != w.get("sha256"):
            raise _err(wpath, "SHA-256 differs from the one the model records")
    pending_invokes = []
    for gel in root.findall("graph"):
        composite = None
        cel = gel.find("composite-decl")
        if cel is not None:
            attrs = dict(_parse_attr(a, path, symbols) for a in cel.findall("attr"))
            composite = CompositeDecl(cel.get("op"), [e.text for e in cel.findall("input-name")],
                                      [e.text for e in cel.findall("output-name")], attrs)
        g = Graph(gel.get("name"), private=gel.get("private") == "true", noinline=gel.get("noinline") == "true",
                  composite=composite)
        m.add_graph(g)
        env = {}

        def define(vid, value):
            if vid in env:
                raise _err(path, f"value '{vid}' redefined in graph @{g.name}")
            env[vid] = value

        def use(vid):
            if vid not in env:
                raise _err(path, f"undefined value '{vid}' in graph @{g.name}")
            return env[vid]

        for el in gel:
            if el.tag == "arg":
                define(el.get("id"), g.add_argument(_type(el, path, symbols), el.get("name")))
            elif el.tag == "const":
                t = _type(el, path, symbols)
                if t.is_dynamic:
                    raise _err(path, f"constant '{el.get('id')}' has a symbolic extent; a constant's shape is fixed")
                op = Operation("coreai.constant", [], [t])
                data = np.array(_const_data(el, t, weights, path), order="C", copy=True)
                data.setflags(write=False)
                op.data = data
                g.append(op)
                define(el.get("id"), op.results[0])
            elif el.tag == "op":
                kind = el.get("kind")
                operands = [use(o.get("ref")) for o in el.findall("operand")]
                attrs = dict(_parse_attr(a, path, symbols) for a in el.findall("attr"))
                results = [_type(r, path, symbols) for r in el.findall("result")]
                if kind == "coreai.invoke":
                    op = Operation(kind, operands, results, attrs, callee=el.get("callee"))
                    pending_invokes.append((g, op))
                else:
                    declared = results if kind in DECLARED else ()
                    try:
                        got = infer(kind, [v.type for v in operands], attrs, declared)
                    except OpError as e:
                        raise _err(path, str(e)) from None
                    if got != results:
                        raise _err(path, f"{kind}: results are declared {[str(t) for t in results]} but the "
                                         f"operands give {[str(t) for t in got]}")
                    op = Operation(kind, operands, results, attrs)
                g.append(op)
                for r, rel in zip(op.results, el.findall("result")):
                    define(rel.get("id"), r)
            elif el.tag == "output":
                g.set_outputs([use(v.get("ref")) for v in el.findall("value")])
    for eel in root.findall("entrypoint"):
        states = [e.get("name") for e in eel.findall("state")]
        initial = {}
        g = m.find_graph(eel.get("graph"))
        for i, sel in enumerate(eel.findall("state")):
            iel = sel.find("init")
            if iel is None:
                continue
            if fmt in ("1", "2"):
                raise _err(path, f"<init> of state '{states[i]}' needs model format 3 (this file declares format {fmt})")
            if g is None or i >= len(g.arguments):
                continue  # add_entrypoint names the graph or the argument count
            t = g.arguments[i].type
            if iel.get("fill") is not None:
                one = TensorType([], t.element_type)
                iel_one = ET.Element("init")
                iel_one.text = iel.get("fill")
                iel_one.set("id", f"{states[i]}.init")
                initial[states[i]] = np.broadcast_to(_const_data(iel_one, one, weights, path), t.shape).copy()
            else:
                iel.set("id", f"{states[i]}.init")
                initial[states[i]] = _const_data(iel, t, weights, path)
        m.add_entrypoint(eel.get("name"), eel.get("graph"), states=states,
                         inputs=[e.get("name") for e in eel.findall("input")],
                         outputs=[e.get("name") for e in eel.findall("output")], initial_states=initial)
    m.verify()
    return m
