#!/usr/bin/env python3
"""liveness_bound.py [--kernels] < IR: a lower bound on the workspace of a
model, computed from the textual IR (`coreai-gen print MODEL`) alone, with
none of the generator's planning code.

The rule: between two consecutive ops of a graph, every value that one op
wrote and a later op still reads has to be somewhere at once, so no frame
can be smaller than the most bytes live across any op boundary. A value
counts for its own bytes (its element count times its element size,
rounded up to the 64-byte alignment every buffer of the frame has), from
the op that writes it to the last op that reads it. What cannot take bytes
of the frame is left out, which only lowers the bound:
  - graph arguments, constants and graph results (the caller's buffers);
  - a view: a reshape, a cast to the same dtype, or a broadcast_to that
    repeats nothing, is the bytes of its operand (it extends their life);
  - a graph with a composite declaration, with --kernels: a kernel writes
    straight into the result, its scratch is not counted.
An invoke needs, during the op, the callee's own bound on top of every
value live at that op (its operands and results included).

Prints `liveness_bound_bytes N`: the most over the entrypoints."""

import re
import sys

ALIGN = 64
ELEM = {"f32": 4, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "bool": 1, "i8": 1, "u8": 1, "i16": 2}

GRAPH = re.compile(r"^\s*coreai\.graph .*?@([\w.\-]+)\((.*)$")
ENTRY = re.compile(r"^\s*coreai\.entrypoint @([\w.\-]+)(?: \{graph = @([\w.\-]+))?")
OP = re.compile(r"^\s*(%[\w]+(?:, %[\w]+)*) = (coreai\.\w+) ?(.*)$")
OUTPUT = re.compile(r"^\s*coreai\.output ?(.*?)(?: : .*)?$")
TENSOR = re.compile(r"tensor<([^>]*)>")
NAME = re.compile(r"%\w+")


def tensor_bytes(spec):
    *dims, dtype = spec.split("x") if "x" in spec else [spec]
    n = 1
    for d in dims:
        n *= int(d)
    return n * ELEM[dtype], n, dtype


def align(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def parse(lines):
    graphs, entries, g = {}, [], None
    for line in lines:
        m = GRAPH.match(line)
        if m:
            g = {"composite": "composite_decl" in line, "ops": [], "outputs": []}
            graphs[m.group(1)] = g
            continue
        m = ENTRY.match(line)
        if m:
            states = re.search(r"states = \[(.*?)\]", line)
            n_states = len(re.findall(r'"', states.group(1))) // 2 if states else 0
            entries.append((m.group(2) or m.group(1), n_states))
            continue
        m = OP.match(line)
        if m and g is not None:
            results = NAME.findall(m.group(1))
            rest = m.group(3)
            callee = None
            if m.group(2) == "coreai.invoke":
                callee = re.match(r"@([\w.\-]+)", rest).group(1)
            # the signature is the last ' : ' of the line: (operand types) -> result types
            head, _, sig = rest.rpartition(" : ")
            head = re.sub(r"\{.*\}", "", head)  # attributes name no values
            operands = NAME.findall(head)
            ins, _, outs = sig.partition(" -> ")
            g["ops"].append({"kind": m.group(2), "results": results, "operands": operands,
                             "callee": callee, "in_types": TENSOR.findall(ins),
                             "out_types": TENSOR.findall(outs) if outs else TENSOR.findall(sig)})
            continue
        m = OUTPUT.match(line)
        if m and g is not None:
            g["outputs"] = NAME.findall(m.group(1))
    return graphs, entries


# Kernels that read element i before they write element i (a row, for
# softmax), so their result may be written over an operand of its size.
POINTWISE = {
    "relu", "rsqrt", "sqrt", "exp", "neg", "log", "tanh", "sigmoid", "silu", "erf", "sin", "cos",
    "reciprocal", "floor", "ceil", "abs", "gelu", "clamp", "logical_not", "softmax", "add", "sub",
    "mul", "div", "maximum", "minimum", "pow", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_and", "logical_or", "where"}


def is_view(op):
    if op["kind"] == "coreai.reshape":
        return True
    if op["kind"] in ("coreai.cast", "coreai.broadcast_to"):
        _, n_in, t_in = tensor_bytes(op["in_types"][0])
        _, n_out, t_out = tensor_bytes(op["out_types"][0])
        return t_in == t_out if op["kind"] == "coreai.cast" else n_in == n_out
    return False


def graph_bound(graphs, name, kernels, memo, n_states=0):
    if (name, n_states) in memo:
        return memo[name, n_states]
    g = graphs[name]
    if kernels and g["composite"]:
        memo[name, n_states] = 0
        return 0
    root, size, first, last = {}, {}, {}, {}
    for i, op in enumerate(g["ops"]):
        if op["kind"] == "coreai.constant":
            continue
        for v in op["operands"]:
            r = root.get(v, v)
            if r in size:
                last[r] = i
        if is_view(op):
            root[op["results"][0]] = root.get(op["operands"][0], op["operands"][0])
            continue
        for v, t in zip(op["results"], op["out_types"], strict=True):
            size[v] = align(tensor_bytes(t)[0])
            first[v] = last[v] = i
    # a state result may be its argument's buffer, which later ops still
    # read: it is computed in the frame and copied out at the end
    for k, v in enumerate(g["outputs"]):
        if k >= n_states:
            size.pop(root.get(v, v), None)
        elif root.get(v, v) in size:
            last[root.get(v, v)] = len(g["ops"])
    bound = 0
    for i, op in enumerate(g["ops"]):
        if op["kind"] == "coreai.constant" or is_view(op):
            continue
        during = sum(s for v, s in size.items() if first[v] <= i <= last[v])
        # a result may take over the bytes of an operand of its type that dies here
        dying = {root.get(v, v) for v in op["operands"]}
        dying = [v for v in dying if v in size and last[v] == i and first[v] < i]
        if op["kind"].removeprefix("coreai.") not in POINTWISE:
            dying = []
        for r, t in zip(op["results"], op["out_types"], strict=True):
            same = [v for v in dying if size[v] == size.get(r, -1)]
            if same:
                during -= size[r]
                dying.remove(same[0])
        if op["callee"]:
            during += graph_bound(graphs, op["callee"], kernels, memo)
        bound = max(bound, during)
    memo[name, n_states] = bound
    return bound


def main():
    kernels = "--kernels" in sys.argv[1:]
    graphs, entries = parse(sys.stdin.read().splitlines())
    if not entries:
        sys.exit("liveness_bound.py: no entrypoint in the IR")
    memo = {}
    print("liveness_bound_bytes", max(graph_bound(graphs, e, kernels, memo, n) for e, n in entries))


if __name__ == "__main__":
    main()
