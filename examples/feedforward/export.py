#!/usr/bin/python3
"""Export the composite-ops guide's FeedForwardBlock as a Core AI model file.

Writes, next to this script (or into --output-dir):

  feedforward.xml        model file, format v1 (docs/model-format.md)
  feedforward.weights    little-endian f32 constants, 64-byte-aligned offsets
  reference_input.npy    the sample input x, float32 [2, 16, 64]
  reference_output.npy   PyTorch eager output for it, float32 [2, 16, 64]

The RMSNormImpl submodule is externalized as the `rms_norm` composite op
(ExternalizeSpec(target_class=RMSNormImpl, composite_op_name="rms_norm",
composite_attrs=["axes", "eps", "version"])): it becomes a private noinline
graph carrying a composite-decl plus its op-by-op body, and `main` calls it
with coreai.invoke. The graphs are lowered from torch.fx traces, so the body
is exactly what RMSNormImpl.forward computes.

Deterministic: torch.manual_seed(0), one thread, and files are only rewritten
when their bytes change. `--check` regenerates in memory and exits 1 if any
file on disk differs (used by the test suite; the reference output may differ
by rounding, at most 1e-6, since PyTorch's CPU GEMM kernel depends on the CPU).

Run with Debian's interpreter: /usr/bin/python3 export.py
"""

import argparse
import dataclasses
import hashlib
import inspect
import io
import operator
import os
import struct
import sys
import tempfile
from xml.sax.saxutils import escape, quoteattr

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.passes.shape_prop import ShapeProp


# --------------------------------------------------------------------------
# The model: exactly the composite-ops guide's worked example.
# --------------------------------------------------------------------------

class RMSNormImpl(nn.Module):
    """The rms_norm composite op (coreai_torch.composite_ops.RMSNormImpl)."""

    def __init__(self, axes=-1, eps=1e-5, version=1):
        super().__init__()
        self.axes = axes
        self.eps = eps
        self.version = version

    def forward(self, input: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        x_f32 = input.to(torch.float32)
        inv_rms = torch.rsqrt((x_f32 * x_f32).mean(self.axes, keepdim=True) + self.eps)
        return (input * inv_rms).to(input.dtype) * scale


class RMSNorm(nn.Module):
    """Convenience wrapper that owns the learnable scale parameter."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.norm = RMSNormImpl(eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x, self.weight)


class FeedForwardBlock(nn.Module):
    def __init__(self, dim: int, ff_dim: int, eps: float = 1e-5):
        super().__init__()
        self.norm = RMSNorm(dim=dim, eps=eps)
        self.fc1 = nn.Linear(dim, ff_dim, bias=False)
        self.fc2 = nn.Linear(ff_dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(self.norm(x))))


@dataclasses.dataclass
class ExternalizeSpec:
    """Same fields as coreai_torch.ExternalizeSpec (composite-op form only)."""
    target_class: type
    composite_op_name: str
    composite_attrs: list


# --------------------------------------------------------------------------
# Lowering: torch.fx graph -> model-format v1 graphs.
# --------------------------------------------------------------------------

WEIGHTS_ALIGNMENT = 64
OUTPUT_CHECK_TOLERANCE = 1e-6  # --check: reference output vs a rerun on this machine

DTYPES = {
    torch.float32: ("f32", 4),
    torch.float16: ("f16", 2),
    torch.bfloat16: ("bf16", 2),
    torch.int64: ("i64", 8),
    torch.int32: ("i32", 4),
    torch.bool: ("bool", 1),
}

BINARY = {
    operator.add: "coreai.add", torch.add: "coreai.add", "add": "coreai.add",
    operator.sub: "coreai.sub", torch.sub: "coreai.sub", "sub": "coreai.sub",
    operator.mul: "coreai.mul", torch.mul: "coreai.mul", "mul": "coreai.mul",
    operator.truediv: "coreai.div", torch.div: "coreai.div", "div": "coreai.div",
}
UNARY = {
    torch.relu: "coreai.relu", F.relu: "coreai.relu", "relu": "coreai.relu",
    torch.rsqrt: "coreai.rsqrt", "rsqrt": "coreai.rsqrt",
    torch.sqrt: "coreai.sqrt", "sqrt": "coreai.sqrt",
    torch.exp: "coreai.exp", "exp": "coreai.exp",
    operator.neg: "coreai.neg", torch.neg: "coreai.neg", "neg": "coreai.neg",
}


def f32_text(value):
    """Shortest-safe decimal that round-trips an f32 exactly."""
    return "%.9g" % float(np.float32(value))


def attr_xml(name, value):
    """(type, text) of a Python attribute value, as model-format v1 spells it."""
    if isinstance(value, bool):
        return "bool", "true" if value else "false"
    if isinstance(value, int):
        return "si64", str(value)
    if isinstance(value, float):
        return "f32", f32_text(value)
    if isinstance(value, (list, tuple)) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return "si64[]", " ".join(str(v) for v in value)
    if isinstance(value, str):
        return "str", value
    raise TypeError(f"attribute {name!r}: unsupported value {value!r}")


def tensor_type(meta):
    dtype, _ = DTYPES[meta.dtype]
    return dtype, " ".join(str(int(d)) for d in meta.shape)


class Weights:
    """The weights file: constants appended at 64-byte-aligned offsets."""

    def __init__(self):
        self.data = bytearray()

    def add(self, tensor):
        arr = tensor.detach().cpu().contiguous().numpy()
        if arr.dtype != np.float32:
            raise TypeError(f"only f32 constants are exported, got {arr.dtype}")
        raw = arr.astype("<f4").tobytes()
        pad = (-len(self.data)) % WEIGHTS_ALIGNMENT
        self.data += b"\0" * pad
        offset = len(self.data)
        self.data += raw
        return offset, len(raw)


class Graph:
    """One <graph> being written."""

    def __init__(self, name, private=False, noinline=False):
        self.name = name
        self.private = private
        self.noinline = noinline
        self.decl = []      # lines of the composite-decl, if any
        self.args = []      # lines
        self.body = []      # lines of const/op in program order
        self.output = None
        self.n_results = 0
        self.const_ids = set()

    def fresh(self):
        rid = str(self.n_results)
        self.n_results += 1
        return rid

    def lines(self):
        attrs = f"name={quoteattr(self.name)}"
        if self.private:
            attrs += ' private="true"'
        if self.noinline:
            attrs += ' noinline="true"'
        out = [f"  <graph {attrs}>"]
        out += ["    " + line for line in self.decl + self.args + self.body]
        out.append(f"    <output>{''.join(f'<value ref={quoteattr(r)}/>' for r in self.output)}</output>")
        out.append("  </graph>")
        return out


class Exporter:
    def __init__(self, model, specs):
        self.model = model
        self.specs = specs
        self.weights = Weights()
        self.graphs = []            # Graph, callees before callers
        self.composites = {}        # id(module) -> graph name
        self.external_consts = {}   # (graph name, state_dict key) -> id

    # ---- tracing ----

    def spec_for(self, module):
        for spec in self.specs:
            if isinstance(module, spec.target_class):
                return spec
        return None

    def trace(self, module, example_inputs):
        exporter = self

        class Tracer(torch.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return exporter.spec_for(m) is not None or super().is_leaf_module(m, qualname)

        graph = Tracer().trace(module)
        gm = torch.fx.GraphModule(module, graph)
        ShapeProp(gm).propagate(*example_inputs)
        return gm

    # ---- lowering ----

    def lower(self, gm, graph, root, prefix, composite=None):
        """Lower the fx graph `gm` of module `root` (at qualified name `prefix`) into `graph`."""
        env = {}  # fx node -> value id (or a marker for non-tensor nodes)
        modules = dict(root.named_modules())
        arg_index = 0
        input_names = []

        def operand(value):
            if isinstance(value, torch.fx.Node):
                ref = env[value]
                if ref is None:
                    raise TypeError(f"{value.name} is not a tensor value")
                return ref
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return self.scalar_const(graph, value, composite)
            raise TypeError(f"unsupported operand {value!r}")

        def emit(kind, operands, node, attrs=(), callee=None):
            rid = graph.fresh()
            dtype, shape = tensor_type(node.meta["tensor_meta"])
            head = f'<op kind="{kind}"' + (f" callee={quoteattr(callee)}" if callee else "") + ">"
            graph.body.append(head)
            graph.body.append("  " + "".join(f"<operand ref={quoteattr(o)}/>" for o in operands))
            for name, (atype, text) in attrs:
                graph.body.append(f'  <attr name="{name}" type="{atype}">{escape(text)}</attr>')
            graph.body.append(f'  <result id="{rid}" dtype="{dtype}" shape="{shape}"/>')
            graph.body.append("</op>")
            env[node] = rid

        for node in gm.graph.nodes:
            meta = node.meta.get("tensor_meta")
            if node.op == "placeholder":
                dtype, shape = tensor_type(meta)
                aid = f"arg{arg_index}"
                arg_index += 1
                name = f" name={quoteattr(node.target)}" if composite is not None else ""
                graph.args.append(f'<arg id="{aid}" dtype="{dtype}" shape="{shape}"{name}/>')
                input_names.append(node.target)
                env[node] = aid
            elif node.op == "get_attr":
                env[node] = self.param_const(graph, root, prefix, node.target)
            elif node.op == "output":
                results = node.args[0] if isinstance(node.args[0], (tuple, list)) else (node.args[0],)
                graph.output = [operand(r) for r in results]
            elif node.op == "call_module":
                sub = modules[node.target]
                qual = f"{prefix}.{node.target}" if prefix else node.target
                if self.spec_for(sub) is not None:
                    callee = self.composite_graph(sub, qual, node.args)
                    emit("coreai.invoke", [operand(a) for a in node.args], node, callee=callee)
                elif isinstance(sub, nn.Linear):
                    ops = [operand(node.args[0]),
                           self.param_const(graph, root, prefix, f"{node.target}.weight")]
                    if sub.bias is not None:
                        ops.append(self.param_const(graph, root, prefix, f"{node.target}.bias"))
                    emit("coreai.linear", ops, node)
                elif isinstance(sub, nn.ReLU):
                    emit("coreai.relu", [operand(node.args[0])], node)
                else:
                    raise NotImplementedError(f"module {type(sub).__name__} at {qual}")
            elif node.op in ("call_function", "call_method"):
                target = node.target
                if target is getattr and node.args[1] == "dtype":
                    env[node] = None  # only feeds .to(); not a tensor
                elif target in BINARY and len(node.args) == 2 and not node.kwargs:
                    emit(BINARY[target], [operand(a) for a in node.args], node)
                elif target in UNARY and len(node.args) == 1 and not node.kwargs:
                    emit(UNARY[target], [operand(node.args[0])], node)
                elif target in ("mean", torch.mean, "sum", torch.sum):
                    kind = "coreai.reduce_mean" if target in ("mean", torch.mean) else "coreai.reduce_sum"
                    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", ())
                    keep = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
                    dims = [dims] if isinstance(dims, int) else list(dims)
                    emit(kind, [operand(node.args[0])], node,
                         attrs=[("axes", attr_xml("axes", dims)), ("keep_dims", attr_xml("keep_dims", bool(keep)))])
                elif target == "to":
                    src = node.args[0]
                    if src.meta["tensor_meta"].dtype == meta.dtype:
                        env[node] = operand(src)  # same dtype: a no-op, like the converter folds it
                    else:
                        emit("coreai.cast", [operand(src)], node)
                else:
                    raise NotImplementedError(f"{node.op} {target} ({node.format_node()})")
            else:
                raise NotImplementedError(node.format_node())
        return input_names

    def scalar_const(self, graph, value, composite):
        """A Python scalar operand: an inline rank-0 f32 constant."""
        name = None
        if composite is not None:  # name it after the composite attribute it came from
            module, spec = composite
            for attr in spec.composite_attrs:
                v = getattr(module, attr)
                if not isinstance(v, bool) and isinstance(v, (int, float)) and v == value:
                    name = attr
                    break
        cid = name or f"c{len(graph.const_ids)}"
        while cid in graph.const_ids:
            cid += "_"
        graph.const_ids.add(cid)
        graph.body.append(f'<const id={quoteattr(cid)} dtype="f32" shape="">{f32_text(value)}</const>')
        return cid

    def param_const(self, graph, root, prefix, target):
        """A parameter or buffer: an external constant in the weights file, once per graph."""
        key = f"{prefix}.{target}" if prefix else target
        if (graph.name, key) in self.external_consts:
            return self.external_consts[(graph.name, key)]
        tensor = root.get_parameter(target) if target in dict(root.named_parameters()) else root.get_buffer(target)
        offset, length = self.weights.add(tensor)
        dtype, _ = DTYPES[tensor.dtype]
        shape = " ".join(str(d) for d in tensor.shape)
        graph.body.append(f'<const id={quoteattr(key)} dtype="{dtype}" shape="{shape}" '
                          f'offset="{offset}" length="{length}"/>')
        graph.const_ids.add(key)
        self.external_consts[(graph.name, key)] = key
        return key

    def composite_graph(self, module, qualname, call_args):
        if id(module) in self.composites:
            return self.composites[id(module)]
        spec = self.spec_for(module)
        attrs = [(a, attr_xml(a, getattr(module, a))) for a in spec.composite_attrs]
        canon = spec.composite_op_name + "|" + ";".join(f"{n}:{t}={v}" for n, (t, v) in attrs)
        digest = hashlib.sha256(canon.encode("utf-8")).hexdigest()[:8]
        name = f"{qualname}.{spec.composite_op_name}_{digest}"

        examples = []
        for a in call_args:
            meta = a.meta["tensor_meta"]
            examples.append(torch.zeros(tuple(meta.shape), dtype=meta.dtype))
        gm = self.trace(module, examples)
        graph = Graph(name, private=True, noinline=True)
        input_names = self.lower(gm, graph, module, qualname, composite=(module, spec))
        # input/output names come from forward()'s signature, like the converter does.
        params = list(inspect.signature(module.forward).parameters)
        assert params == input_names, (params, input_names)
        graph.decl = [f'<composite-decl op={quoteattr(spec.composite_op_name)}>']
        graph.decl += [f"  <input-name>{escape(n)}</input-name>" for n in input_names]
        graph.decl += ["  <output-name>output</output-name>"]
        graph.decl += [f'  <attr name="{n}" type="{t}">{escape(v)}</attr>' for n, (t, v) in attrs]
        graph.decl += ["</composite-decl>"]
        self.graphs.append(graph)
        self.composites[id(module)] = name
        return name

    def export(self, sample, weights_href):
        gm = self.trace(self.model, sample)
        main = Graph("main")
        inputs = self.lower(gm, main, self.model, "")
        self.graphs.append(main)

        lines = ['<?xml version="1.0" encoding="UTF-8"?>',
                 "<!-- generated by examples/feedforward/export.py - do not edit -->",
                 '<coreai-model format="1">']
        if self.weights.data:
            sha = hashlib.sha256(bytes(self.weights.data)).hexdigest()
            lines.append(f"  <weights href={quoteattr(weights_href)} size=\"{len(self.weights.data)}\""
                         f" sha256=\"{sha}\"/>")
        for g in self.graphs:
            lines += g.lines()
        lines.append('  <entrypoint name="main" graph="main">')
        lines += [f"    <input name={quoteattr(n)}/>" for n in inputs]
        lines.append('    <output name="output"/>')
        lines.append("  </entrypoint>")
        lines.append("</coreai-model>")
        return ("\n".join(lines) + "\n").encode("utf-8"), bytes(self.weights.data)


# --------------------------------------------------------------------------

def npy_bytes(array):
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array, dtype="<f4"), allow_pickle=False)
    return buf.getvalue()


def build():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = FeedForwardBlock(dim=64, ff_dim=256).eval()
    with torch.no_grad():  # a non-trivial scale, so a dropped or misplaced scale shows up
        model.norm.weight.copy_(1.0 + 0.5 * torch.randn(64))
    x = torch.randn(2, 16, 64)
    with torch.no_grad():
        reference = model(x)

    specs = [ExternalizeSpec(target_class=RMSNormImpl, composite_op_name="rms_norm",
                             composite_attrs=["axes", "eps", "version"])]
    xml, weights = Exporter(model, specs).export((x,), "feedforward.weights")
    return {
        "feedforward.xml": xml,
        "feedforward.weights": weights,
        "reference_input.npy": npy_bytes(x.numpy()),
        "reference_output.npy": npy_bytes(reference.numpy()),
    }


def write_if_changed(path, data):
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return False
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return True


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output-dir", default=os.path.dirname(os.path.abspath(__file__)),
                        help="where to write the files (default: next to this script)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the files on disk are not what this script produces")
    args = parser.parse_args(argv)

    files = build()
    stale = []
    for name, data in files.items():
        path = os.path.join(args.output_dir, name)
        if args.check:
            try:
                with open(path, "rb") as f:
                    on_disk = f.read()
            except FileNotFoundError:
                on_disk = None
            same = on_disk == data
            note = ""
            if not same and on_disk is not None and name == "reference_output.npy":
                # PyTorch's CPU GEMM may sum in another order on another CPU
                # (BLAS kernels are picked at run time): allow for rounding.
                diff = np.abs(np.load(io.BytesIO(on_disk)).astype(np.float64)
                              - np.load(io.BytesIO(data))).max()
                same = bool(diff <= OUTPUT_CHECK_TOLERANCE)
                note = f" (differs by {diff:.3g}, tolerance {OUTPUT_CHECK_TOLERANCE:g})"
            if not same:
                stale.append(name)
            print(f"{'ok     ' if same else 'STALE  '}{path}{note}")
        else:
            changed = write_if_changed(path, data)
            print(f"{'wrote    ' if changed else 'unchanged'} {path} ({len(data)} bytes)")
    if stale:
        print(f"error: {', '.join(stale)} differ from what export.py produces; rerun it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
