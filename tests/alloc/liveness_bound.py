#!/usr/bin/env python3
"""liveness_bound.py SCRATCH_SIZE < IR: lower bounds on the workspace of a
model, from its textual IR (`coreai-gen print MODEL`: every value's type,
producer and readers, and the op order) and from documented facts, with none
of the generator's planning code. SCRATCH_SIZE is the tests/alloc helper that
asks the runtime's *_scratch_size functions.

Prints four lines `liveness_bound_bytes KERNELS FUSE N` (KERNELS: composite
graphs run as kernel calls or as their bodies, as with
--no-composite-kernels; FUSE: fused elementwise loops or --no-fuse), the most
over the entrypoints, and `fused_loops KERNELS SIZES` (the member counts of
the elementwise loops the fuse rule forms, for the test to compare with the
generated code).

The rule: while an op runs, what it reads, what it writes, its kernel's
scratch and the frame of a graph it calls must all be in the frame at once,
with every value computed before and read after it; so no frame can be
smaller than the most bytes live at any op. A value counts for its bytes
rounded up to 64 (every buffer of the frame starts 64-aligned), scratch
too, from the op that writes it to the last op that reads it.

Dead ops (none of their results read, no graph output, not an invoke) are
removed first, as the generator does before planning.

What takes no bytes of the frame (docs/runtime-kernels.md):
  - graph arguments, constants, and the results of a graph (the caller's
    buffers; a value a result is a view of is computed straight into it);
    the state results of an entrypoint are the exception: computed in the
    frame and copied out at the end, so they live to the end;
  - views: reshape, cast to the same dtype, broadcast_to that repeats
    nothing, are the bytes of their operand (and extend its life);
  - what a GEMM absorbs ("which op calls what"): a relu / gelu / silu whose
    operand is a linear's result used nowhere else (reshapes or same-dtype
    casts in between, each used once, none a graph output) is that result
    (the epilogue); a transpose of the attention head split / merge between
    a packed linear and the [1..., H, T, D] side is its operand; an f32
    `add` of two operands of its type, one a packed linear's result used
    nowhere else, the other computed before that linear, is the linear's
    result, and its other operand is read by the linear; likewise (with
    composite kernels and fusion) a relu / gelu / silu whose operand is the
    result of an invoke of a batch_norm, group_norm or instance_norm
    composite: the norm's kernel applies it;
  - with FUSE, the intermediates of a fused elementwise loop ("Fused
    elementwise loops", grown backwards from each root, roots tried from the
    last op back): the loop reads the group's inputs at the root.
A composite graph run as a kernel (docs/composite-ops.md) has a frame of
only its kernel's scratch: rope with angles computed at run time. Kernel
scratch (linear / matmul with a B that is not a constant, conv2d, rope)
is what the runtime's size function returns for the op's parameters,
which this script derives from the IR ("GEMM", conv.h, the rope contract;
a Winograd layer on a constant f32 weight reads that weight transformed
from the weights, so its scratch is coreai_conv2d_winograd_scratch_size;
a small-map layer coreai_conv2d_panels takes reads it packed, so its
scratch is coreai_conv2d_panels_scratch_size).

In place ("In place", "Fused elementwise loops"): an op's result may take
the bytes of a value it reads that dies at that op: a flat unary kernel's
operand of its size, a broadcasting kernel's (binary, compare, logical,
where) operand of exactly the result's type, a fused loop's input of the
root's type. An invoke runs the callee's frame on top of everything live
there."""

import re
import subprocess
import sys

ALIGN = 64
ELEM = {"f32": 4, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "bool": 1, "i8": 1, "u8": 1, "i16": 2}

GRAPH = re.compile(r"^\s*coreai\.graph .*?@([\w.\-]+)\(")
ARG = re.compile(r"%(arg\d+): tensor<([^>]*)>")
ENTRY = re.compile(r"^\s*coreai\.entrypoint @([\w.\-]+) \{(?:graph = @([\w.\-]+), )?")
OP = re.compile(r"^\s*(%\w+(?:, %\w+)*) = (coreai\.\w+) ?(.*)$")
OUTPUT = re.compile(r"^\s*coreai\.output ?(.*?)(?: : .*)?$")
TENSOR = re.compile(r"tensor<([^>]*)>")
NAME = re.compile(r"%\w+")


def parse_type(spec):
    *dims, dtype = spec.split("x")
    return tuple(int(d) for d in dims), dtype


def numel(t):
    n = 1
    for d in t[0]:
        n *= d
    return n


def nbytes(t):
    return numel(t) * ELEM[t[1]]


def align(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def split_top(text, sep):
    """text split at each `sep` outside quotes and (), [], {}."""
    parts, depth, quoted, start, i = [], 0, False, 0, 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return parts


def braced(text, at):
    """The {...} that opens at text[at], without the braces."""
    depth = 0
    for i in range(at, len(text)):
        if text[i] in "{[(":
            depth += 1
        elif text[i] in "}])":
            depth -= 1
            if depth == 0:
                return text[at + 1:i]
    raise ValueError("unbalanced braces: " + text[at:at + 60])


def parse_attrs(text):
    """`a = 1 : si64, b = [1, 2], c = true, d = "s"` -> dict of Python values."""
    out = {}
    for item in split_top(text, ", "):
        if not item.strip():
            continue
        key, _, value = item.partition(" = ")
        value = split_top(value, " : ")[0].strip()
        if value in ("true", "false"):
            out[key.strip()] = value == "true"
        elif value.startswith("["):
            out[key.strip()] = [int(v) for v in re.findall(r"-?\d+", value)]
        elif re.fullmatch(r"-?\d+", value):
            out[key.strip()] = int(value)
        else:
            out[key.strip()] = value.strip('"')
    return out


def parse_op(line, m):
    results = NAME.findall(m.group(1))
    parts = split_top(m.group(3), " : ")  # operands {attributes} : signature
    head, sig = parts[0], parts[-1]
    op = {"kind": m.group(2).removeprefix("coreai."), "results": results, "callee": None, "attrs": {}}
    if op["kind"] == "constant":
        op["operands"] = []
        op["in_types"] = []
        op["out_types"] = [parse_type(t) for t in TENSOR.findall(sig)]
        return op
    if op["kind"] == "invoke":
        op["callee"] = re.match(r"@([\w.\-]+)", head).group(1)
    at = head.find("{")
    if at >= 0:
        op["attrs"] = parse_attrs(braced(head, at))
        head = head[:at]
    op["operands"] = NAME.findall(head)
    ins, _, outs = sig.partition(" -> ")
    op["in_types"] = [parse_type(t) for t in TENSOR.findall(ins)]
    op["out_types"] = [parse_type(t) for t in TENSOR.findall(outs)]
    if len(op["in_types"]) != len(op["operands"]) or len(op["out_types"]) != len(results):
        raise ValueError("cannot read the signature of: " + line.strip()[:200])
    return op


def parse(lines):
    graphs, entries, g = {}, [], None
    for line in lines:
        m = GRAPH.match(line)
        if m:
            g = {"name": m.group(1), "args": {}, "arg_order": [], "composite": None, "ops": [], "outputs": []}
            for name, t in ARG.findall(line.split(" -> ")[0]):
                g["args"]["%" + name] = parse_type(t)
                g["arg_order"].append("%" + name)
            at = line.find("composite_declaration<")
            if at >= 0:
                decl = line[at:]
                names = re.search(r"input_names = \[(.*?)\]", decl)
                attrs_at = decl.find("op_attrs = {")
                g["composite"] = {
                    "op": re.match(r'composite_declaration<"(\w+)"', decl).group(1),
                    "inputs": re.findall(r'"([^"]*)"', names.group(1)) if names else [],
                    "attrs": parse_attrs(braced(decl, attrs_at + len("op_attrs = "))) if attrs_at >= 0 else {}}
            graphs[g["name"]] = g
            continue
        m = ENTRY.match(line)
        if m:
            states = re.search(r"states = \[(.*?)\]", line)
            n_states = len(re.findall(r'"[^"]*"', states.group(1))) if states else 0
            entries.append((m.group(2) or m.group(1), n_states))
            continue
        m = OP.match(line)
        if m and g is not None:
            g["ops"].append(parse_op(line, m))
            continue
        m = OUTPUT.match(line)
        if m and g is not None:
            g["outputs"] = NAME.findall(m.group(1))
    return graphs, entries


# ---- facts of docs/runtime-kernels.md ---------------------------------------

UNARY = {"relu", "rsqrt", "sqrt", "exp", "neg", "log", "tanh", "sigmoid", "silu", "erf", "sin", "cos",
         "reciprocal", "floor", "ceil", "abs", "gelu", "clamp", "logical_not", "softmax"}
BROADCASTING = {"add", "sub", "mul", "div", "maximum", "minimum", "pow", "equal", "not_equal", "less",
                "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "where"}
FUSABLE = {"relu", "rsqrt", "sqrt", "neg", "log", "sin", "cos", "reciprocal", "floor", "ceil", "abs",
           "clamp", "add", "sub", "mul", "div", "maximum", "minimum", "pow"}
EPILOGUE = {"relu", "gelu", "silu"}
# composites whose kernel applies an activation in its last pass (with
# composite kernels and fusion on), as a linear's GEMM does
NORM_EPILOGUE = {"batch_norm", "group_norm", "instance_norm"}
ROPE_TABLE_MAX_FLOATS = 64 * 1024


class Graph:
    """One graph's values and uses, and which ops are views or absorbed."""

    def __init__(self, g, n_states):
        self.g, self.ops, self.n_states = g, g["ops"], n_states
        self.type, self.defn, self.uses, self.users = dict(g["args"]), {}, {}, {}
        self.consts = set()
        for i, op in enumerate(self.ops):
            for v, t in zip(op["results"], op["out_types"], strict=True):
                self.type[v], self.defn[v] = t, i
                if op["kind"] == "constant":
                    self.consts.add(v)
            for v in op["operands"]:
                self.uses[v] = self.uses.get(v, 0) + 1
                self.users.setdefault(v, []).append(i)
        self.outputs = set(g["outputs"])

    def plain_view(self, i):
        """A reshape or a cast to the same dtype: the same elements in order."""
        op = self.ops[i]
        return op["kind"] == "reshape" or (op["kind"] == "cast" and op["in_types"][0][1] == op["out_types"][0][1])

    def is_view(self, i):
        op = self.ops[i]
        if op["kind"] == "broadcast_to":
            return numel(op["in_types"][0]) == numel(op["out_types"][0])
        return self.plain_view(i)

    def single_use(self, v):
        return v not in self.outputs and self.uses.get(v, 0) == 1

    def single_use_source(self, v):
        """Back from v through plain views, every value on the way an op
        result used once and no graph output: the value an op computed."""
        while True:
            if v not in self.defn or v in self.consts or not self.single_use(v):
                return None
            i = self.defn[v]
            if not self.plain_view(i):
                return v
            v = self.ops[i]["operands"][0]

    def packed_linear(self, i):
        """A linear whose weight is an f32 constant of rank >= 2 (packed at
        build time): (rows, in, out) or None."""
        op = self.ops[i]
        if op["kind"] != "linear" or len(op["results"]) != 1 or not packed_b(self, i):
            return None
        x, o = op["in_types"][0], op["out_types"][0]
        if not x[0] or not o[0] or x[0][-1] <= 0 or o[0][-1] <= 0:
            return None
        return numel(o) // o[0][-1], x[0][-1], o[0][-1]

    def heads_transpose(self, i):
        op = self.ops[i]
        if op["kind"] != "transpose" or len(op["operands"]) != 1:
            return False
        dims, dtype = op["in_types"][0]
        r = len(dims)
        if dtype != "f32" or r < 3:
            return False
        want = [r - 2 if a == r - 3 else r - 3 if a == r - 2 else a for a in range(r)]
        return op["attrs"].get("perm") == want and all(dims[a] == 1 for a in range(r - 3))

    def takes_epilogue(self, i, norms):
        """A linear, or (norms: the composite graphs whose kernel runs with
        fusion on) an invoke of a channel-norm composite."""
        op = self.ops[i]
        if len(op["results"]) != 1:
            return False
        if op["kind"] == "linear":
            return True
        return op["kind"] == "invoke" and op["callee"] in norms

    def absorbed(self, norms=frozenset()):
        """By op index: ('epilogue' | 'heads', None) or ('residual', addend
        operand index) for the ops a GEMM (or a channel norm's kernel, in
        `norms`) absorbs."""
        out = {}
        for i, op in enumerate(self.ops):
            if self.is_view(i):
                continue
            if op["kind"] in EPILOGUE and len(op["operands"]) == 1 and op["in_types"][0][1] == "f32":
                src = self.single_use_source(op["operands"][0])
                if src is not None and self.takes_epilogue(self.defn[src], norms) and \
                        numel(self.type[src]) == numel(op["out_types"][0]):
                    out[i] = ("epilogue", self.defn[src])
                    continue
            if op["kind"] == "add" and len(op["operands"]) == 2:
                y = op["out_types"][0]
                if y[1] == "f32" and op["in_types"][0] == y and op["in_types"][1] == y and \
                        op["operands"][0] != op["operands"][1]:
                    for side in (0, 1):
                        src = self.single_use_source(op["operands"][side])
                        if src is None or self.packed_linear(self.defn[src]) is None:
                            continue
                        other = op["operands"][1 - side]
                        while other in self.defn and other not in self.consts and self.plain_view(self.defn[other]):
                            other = self.ops[self.defn[other]]["operands"][0]
                        if other in self.defn and other not in self.consts and self.defn[other] >= self.defn[src]:
                            continue
                        out[i] = ("residual", self.defn[src], 1 - side)
                        break
                    if i in out:
                        continue
            if self.heads_transpose(i):
                dims = op["in_types"][0][0]
                r = len(dims)
                src = self.single_use_source(op["operands"][0])
                lin = self.packed_linear(self.defn[src]) if src is not None else None
                if lin and lin[0] == dims[r - 3] and lin[2] == dims[r - 2] * dims[r - 1]:
                    out[i] = ("heads", self.defn[src])
                    continue
                ydims = op["out_types"][0][0]
                v = op["results"][0]
                while self.single_use(v) and self.plain_view(self.users[v][0]):
                    v = self.ops[self.users[v][0]]["results"][0]
                if self.single_use(v):
                    u = self.users[v][0]
                    lin = self.packed_linear(u)
                    if lin and self.ops[u]["operands"][0] == v and lin[0] == ydims[r - 3] and \
                            lin[1] == ydims[r - 2] * ydims[r - 1]:
                        out[i] = ("heads", u)
        return out

    def fused_groups(self, excluded):
        """The fused elementwise loops: lists of op indices, root last."""
        def periodic(t, out):
            dims = list(t[0])
            while dims and dims[0] == 1:
                dims.pop(0)
            return len(dims) <= len(out[0]) and tuple(dims) == out[0][len(out[0]) - len(dims):]

        def joins(i, out):
            op = self.ops[i]
            return (op["kind"] in FUSABLE and len(op["results"]) == 1 and op["out_types"][0] == out
                    and all(t[1] == "f32" for t in op["in_types"]) and out[1] == "f32"
                    and all(periodic(t, out) for t in op["in_types"]))

        group_of, groups = {}, []
        for r in range(len(self.ops) - 1, -1, -1):
            op = self.ops[r]
            if r in group_of or r in excluded or not op["out_types"] or numel(op["out_types"][0]) == 0 or \
                    not joins(r, op["out_types"][0]):
                continue
            out = op["out_types"][0]
            members, member_uses, pending = [r], {}, set()

            def add(i):
                for v in self.ops[i]["operands"]:
                    member_uses[v] = member_uses.get(v, 0) + 1
                    if v in self.defn and v not in self.consts:
                        pending.add(self.defn[v])

            add(r)
            while pending:
                k = max(pending)
                pending.discard(k)
                res = self.ops[k]["results"]
                if k in group_of or k in excluded or len(res) != 1 or res[0] in self.outputs or \
                        member_uses.get(res[0], 0) != self.uses.get(res[0], 0) or not joins(k, out):
                    continue
                members.append(k)
                add(k)
            if len(members) >= 2:
                for k in members:
                    group_of[k] = len(groups)
                groups.append(sorted(members))
        return groups


def scratch_requests(gr):
    """By op index: the line asking scratch_size for the op's kernel scratch."""
    reqs = {}
    for i, op in enumerate(gr.ops):
        if op["kind"] in ("matmul", "linear") and op["out_types"][0][1] == "f32" and not packed_b(gr, i):
            a, o = op["in_types"][0], op["out_types"][0]
            if op["kind"] == "matmul":
                ta = int(op["attrs"].get("transpose_a", False))
                m, n = o[0][-2], o[0][-1]
                k = a[0][-2] if ta else a[0][-1]
                batch = numel((o[0][:-2], "f32"))
                reqs[i] = f"matmul {batch} {m} {n} {k} {ta} {int(op['attrs'].get('transpose_b', False))}"
            else:
                inf, outf = a[0][-1], o[0][-1]
                rows = numel(a) // inf if inf > 0 else numel(o) // max(outf, 1)
                reqs[i] = f"linear {rows} {inf} {outf} {int(op['attrs'].get('weight_transposed', False))}"
        elif op["kind"] == "conv2d":
            x, w, o = op["in_types"][0][0], op["in_types"][1][0], op["out_types"][0][0]
            at = op["attrs"]

            def get(name, k, default):
                v = at.get(name)
                return v[k] if isinstance(v, list) and len(v) > k else default

            fields = [x[0], x[1], x[2], x[3], w[0], w[2], w[3], o[2], o[3], get("strides", 0, 1),
                      get("strides", 1, 1), get("pads", 0, 0), get("pads", 1, 0), get("dilations", 0, 1),
                      get("dilations", 1, 1), at.get("groups", 1)]
            # a 3 x 3 layer that runs as Winograd on a constant f32 weight
            # reads it transformed from the weights (conv.h's
            # coreai_conv2d_winograd_f32): its scratch is V and M only; a
            # small-map layer reads it packed (coreai_conv2d_panels_f32)
            kind = "conv2d_u" if const_weight(gr, i) else "conv2d"
            reqs[i] = kind + " " + " ".join(str(f) for f in fields)
    return reqs


def const_weight(gr, i):
    """Operand 1 of op i is an f32 constant, and it reads and writes f32."""
    op = gr.ops[i]
    return (op["operands"][1] in gr.consts and op["in_types"][1][1] == "f32"
            and op["in_types"][0][1] == "f32" and op["out_types"][0][1] == "f32")


def packed_b(gr, i):
    """A linear / matmul whose weight / B is an f32 constant of rank >= 2,
    packed at build time (no scratch)."""
    op = gr.ops[i]
    b = op["in_types"][1]
    return (op["operands"][1] in gr.consts and b[1] == "f32" and len(b[0]) >= 2
            and op["in_types"][0][1] == "f32" and op["out_types"][0][1] == "f32")


def rope_request(g):
    """The scratch_size line for a rope composite run as a kernel, or None
    (no scratch: cos / sin given, or a table coreai-gen computes)."""
    c = g["composite"]
    args = dict(zip(c["inputs"], (g["args"][a] for a in g["arg_order"]), strict=False))
    x = args["input"][0]
    n, d = len(x), x[-1]
    dims = c["attrs"].get("dims")
    rot = d if dims is None or dims >= d else dims
    if "cos" in args or "sin" in args:
        return None
    rows = list(x[:-1])
    strides = [0] * n
    pos_dtype, add_seq = "none", 1
    view = []
    if "position_ids" in args:
        p = args["position_ids"]
        view = [p[0][0], 1] + list(p[0][1:])
        pos_dtype, add_seq = p[1], 0
    elif "offset" in args:
        o = args["offset"]
        view = list(o[0]) + [1, 1] if o[0] else []
        pos_dtype = o[1]
    elif "freqs" not in args and x[-2] * rot <= ROPE_TABLE_MAX_FLOATS:
        return None  # positions known at build time: static cos / sin tables
    # the positions vary along the axes where their view is not 1
    for k, e in enumerate(reversed(view)):
        a = len(rows) - 1 - k
        if a >= 0 and e > 1:
            strides[a] = 1
    return "rope {} {} {} {} {} {}".format(n, " ".join(map(str, x)), rot, pos_dtype, add_seq,
                                           " ".join(map(str, strides)))


def norm_kernels(graphs):
    """The channel-norm composite graphs (their kernels take an epilogue)."""
    return frozenset(n for n, g in graphs.items() if g["composite"] and g["composite"]["op"] in NORM_EPILOGUE)


def graph_bound(graphs, states, name, kernels, fuse, scratch, memo):
    key = (name, kernels, fuse)
    if key in memo:
        return memo[key]
    g = graphs[name]
    if kernels and g["composite"]:
        memo[key] = align(scratch.get((name, "kernel"), 0))
        return memo[key]
    gr = graphs[name]["model"]
    absorbed = gr.absorbed(norm_kernels(graphs) if kernels and fuse else frozenset())
    groups = gr.fused_groups(set(absorbed)) if fuse else []
    group_of = {k: n for n, grp in enumerate(groups) for k in grp}
    root = {}

    def root_of(v):
        return root.get(v, v)

    # views and absorbed ops: their result is another value's bytes
    for i, op in enumerate(gr.ops):
        if gr.is_view(i) or absorbed.get(i, ("",))[0] in ("epilogue", "heads"):
            root[op["results"][0]] = root_of(op["operands"][0])
        elif i in absorbed:  # residual: the linear's result
            root[op["results"][0]] = root_of(op["operands"][1 - absorbed[i][2]])
    # where each op's reads happen, and which ops run
    runs, reads = set(), {}
    for i, op in enumerate(gr.ops):
        if op["kind"] == "constant" or gr.is_view(i):
            continue
        if i in absorbed:
            if absorbed[i][0] == "residual":
                addend = op["operands"][absorbed[i][2]]
                reads.setdefault(absorbed[i][1], []).append(addend)
            continue
        at = groups[group_of[i]][-1] if i in group_of else i
        runs.add(at)
        reads.setdefault(at, []).extend(op["operands"])
    # the values that own bytes of the frame and their lives
    size, first, last = {}, {}, {}
    for i, op in enumerate(gr.ops):
        if i not in runs:
            continue
        for v, t in zip(op["results"], op["out_types"], strict=True):
            if v not in root:
                size[v], first[v], last[v] = align(nbytes(t)), i, i
    for at, vs in reads.items():
        for v in vs:
            r = root_of(v)
            if r in size:
                last[r] = max(last[r], at)
    n_states = states.get(name, 0)
    for k, v in enumerate(g["outputs"]):
        r = root_of(v)
        if k >= n_states:
            size.pop(r, None)
        elif r in size:
            last[r] = len(gr.ops)
    bound = 0
    for i in sorted(runs):
        op = gr.ops[i]
        during = sum(s for v, s in size.items() if first[v] <= i <= last[v])
        dying = {root_of(v) for v in reads.get(i, [])}
        dying = [v for v in dying if v in size and last[v] == i and first[v] < i]
        for r, t in zip(op["results"], op["out_types"], strict=True):
            if r not in size:
                continue
            if i in group_of:
                ins = {root_of(v) for k in groups[group_of[i]] for v in gr.ops[k]["operands"]}
                same = [v for v in dying if v in ins and gr.type[v] == t]
            elif op["kind"] in UNARY:
                same = [v for v in dying if size[v] == size[r]]
            elif op["kind"] in BROADCASTING:
                same = [v for v in dying if gr.type[v] == t]
            else:
                same = []
            if same:
                during -= size[r]
                dying.remove(same[0])
        during += align(scratch.get((name, i), 0))
        if op["callee"]:
            during += graph_bound(graphs, states, op["callee"], kernels, fuse, scratch, memo)
        bound = max(bound, during)
    memo[key] = bound
    return bound


def emitted(graphs, roots, kernels):
    """The graphs whose bodies are generated: those the entrypoints run,
    but not inside a composite run as a kernel."""
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if not (kernels and graphs[name]["composite"]):
            todo += [op["callee"] for op in graphs[name]["ops"] if op["callee"]]
    return [n for n in seen if not (kernels and graphs[n]["composite"])]


def drop_dead_ops(g):
    """The generator removes dead ops before planning ("Dead ops",
    docs/runtime-kernels.md): an op other than invoke none of whose results
    is read or a graph output; backwards, so a dead chain goes whole."""
    uses = {}
    for op in g["ops"]:
        for v in op["operands"]:
            uses[v] = uses.get(v, 0) + 1
    outputs, kept = set(g["outputs"]), []
    for op in reversed(g["ops"]):
        if op["kind"] != "invoke" and not any(uses.get(v, 0) or v in outputs for v in op["results"]):
            for v in op["operands"]:
                uses[v] -= 1
            continue
        kept.append(op)
    g["ops"] = kept[::-1]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: liveness_bound.py SCRATCH_SIZE < IR")
    graphs, entries = parse(sys.stdin.read().splitlines())
    if not entries:
        sys.exit("liveness_bound.py: no entrypoint in the IR")
    # a graph keeps as many state results as the most any entrypoint running it has
    states = {}
    for e, n in entries:
        states[e] = max(states.get(e, 0), n)
    keys, lines = [], []
    for name, g in graphs.items():
        drop_dead_ops(g)
        g["model"] = Graph(g, states.get(name, 0))
        for i, line in scratch_requests(g["model"]).items():
            keys.append((name, i))
            lines.append(line)
        if g["composite"] and g["composite"]["op"] == "rope":
            line = rope_request(g)
            if line:
                keys.append((name, "kernel"))
                lines.append(line)
    out = subprocess.run([sys.argv[1]], input="".join(line + "\n" for line in lines), capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        sys.exit("liveness_bound.py: scratch_size failed: " + out.stderr.strip())
    scratch = dict(zip(keys, (int(v) for v in out.stdout.split()), strict=True))
    for kernels in (1, 0):
        for fuse in (1, 0):
            memo = {}
            bound = max(graph_bound(graphs, states, e, kernels, fuse, scratch, memo) for e, _ in entries)
            print("liveness_bound_bytes", kernels, fuse, bound)
        sizes = []
        for name in emitted(graphs, [e for e, _ in entries], kernels):
            gr = graphs[name]["model"]
            sizes += [len(grp) for grp in gr.fused_groups(set(gr.absorbed(norm_kernels(graphs) if kernels
                                                                            else frozenset())))]
        print("fused_loops", kernels, " ".join(map(str, sorted(sizes))))


if __name__ == "__main__":
    main()
