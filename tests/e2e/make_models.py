#!/usr/bin/env python3
"""Writes the end-to-end test models and their oracle data.

Each case folder under tests/e2e/cases/ gets model.xml (format v1, inline
constants only), inputs as in_<name>.npy / state_<name>.npy, and the expected
outputs as ref_<name>.npy. The oracle is NumPy in float64, written
independently of the generator and the C kernels. Deterministic: rerunning it
reproduces the same bytes.
"""
import math
import os
import sys

from xml.sax.saxutils import escape

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


class Graph:
    def __init__(self, name, private=False, composite=None):
        self.name, self.private, self.composite = name, private, composite
        self.args, self.body, self.outputs, self.n = [], [], [], 0

    def arg(self, shape, dtype="f32", name=None):
        vid = f"arg{len(self.args)}"
        self.args.append((vid, dtype, shape, name))
        return vid

    def const(self, array, dtype="f32"):
        vid = f"c{self.n}"
        self.n += 1
        def text(v):
            if dtype == "bool":
                return "true" if v else "false"
            if dtype in ("i32", "i64"):
                return str(int(v))
            return repr(float(v))
        flat = " ".join(text(v) for v in np.asarray(array).reshape(-1))
        shape = " ".join(str(d) for d in np.shape(array))
        self.body.append(f'    <const id="{vid}" dtype="{dtype}" shape="{shape}">{flat}</const>')
        return vid

    def op(self, kind, operands, shape, dtype="f32", attrs=(), callee=None, n_results=1, shapes=None, dtypes=None):
        ids = []
        lines = [f'    <op kind="{kind}"' + (f' callee="{callee}"' if callee else "") + ">"]
        lines += [f'      <operand ref="{o}"/>' for o in operands]
        for (n, t, v) in attrs:
            lines.append(f'      <attr name="{n}" type="{t}">{escape(v)}</attr>')
        for r in range(n_results):
            vid = f"v{self.n}"
            self.n += 1
            s = shapes[r] if shapes else shape
            dt = dtypes[r] if dtypes else dtype
            lines.append(f'      <result id="{vid}" dtype="{dt}" shape="{" ".join(map(str, s))}"/>')
            ids.append(vid)
        lines.append("    </op>")
        self.body.extend(lines)
        return ids[0] if n_results == 1 else ids

    def output(self, *vids):
        self.outputs = list(vids)

    def xml(self):
        attrs = f' name="{self.name}"' + (' private="true" noinline="true"' if self.private else "")
        out = [f"  <graph{attrs}>"]
        if self.composite:
            op, ins, outs, cattrs = self.composite
            out.append(f'    <composite-decl op="{op}">')
            out += [f"      <input-name>{n}</input-name>" for n in ins]
            out += [f"      <output-name>{n}</output-name>" for n in outs]
            out += [f'      <attr name="{n}" type="{t}">{v}</attr>' for (n, t, v) in cattrs]
            out.append("    </composite-decl>")
        for (vid, dt, shape, name) in self.args:
            nm = f' name="{name}"' if name else ""
            out.append(f'    <arg id="{vid}" dtype="{dt}" shape="{" ".join(map(str, shape))}"{nm}/>')
        out += self.body
        out.append("    <output>" + "".join(f'<value ref="{v}"/>' for v in self.outputs) + "</output>")
        out.append("  </graph>")
        return "\n".join(out)


def write_case(name, graphs, entry, inputs, states, refs):
    d = os.path.join(HERE, "cases", name)
    os.makedirs(d, exist_ok=True)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<coreai-model format="1">']
    lines += [g.xml() for g in graphs]
    for (ename, gname, snames, inames, onames) in entry:
        lines.append(f'  <entrypoint name="{ename}" graph="{gname}">')
        lines += [f'    <state name="{n}"/>' for n in snames]
        lines += [f'    <input name="{n}"/>' for n in inames]
        lines += [f'    <output name="{n}"/>' for n in onames]
        lines.append("  </entrypoint>")
    lines.append("</coreai-model>")
    with open(os.path.join(d, "model.xml"), "w") as f:
        f.write("\n".join(lines) + "\n")
    for prefix, arrays in (("in", inputs), ("state", states), ("ref", refs)):
        for k, v in arrays.items():
            np.save(os.path.join(d, f"{prefix}_{k}.npy"), as_stored(v))


def as_stored(v):
    """Floats are stored as f32 (the oracle computes in float64); integer
    and bool arrays keep their dtype."""
    a = np.asarray(v)
    if a.dtype.kind == "f":
        return a.astype(np.float32)
    return a


def f32(a):
    return np.asarray(a, dtype=np.float32)


def case_ops(rng):
    """Every plain op, with broadcasting, batch broadcast and transposes."""
    a = f32(rng.standard_normal((2, 3, 5)))
    b = f32(rng.standard_normal((5, 4)))
    w = f32(rng.standard_normal((6, 4)))
    bias = f32(rng.standard_normal(6))
    g = Graph("main")
    ia = g.arg((2, 3, 5))
    ib = g.arg((5, 4))
    cw = g.const(w)
    cbias = g.const(bias)
    mm = g.op("coreai.matmul", [ia, ib], (2, 3, 4))                                  # batch broadcast
    lin = g.op("coreai.linear", [mm, cw, cbias], (2, 3, 6))
    lin_t = g.op("coreai.linear", [mm, g.const(w.T.copy())], (2, 3, 6), attrs=[("weight_transposed", "bool", "true")])
    tr = g.op("coreai.transpose", [lin], (6, 2, 3), attrs=[("perm", "si64[]", "2 0 1")])
    sm = g.op("coreai.softmax", [tr], (6, 2, 3), attrs=[("axis", "si64", "-2")])
    rs = g.op("coreai.reduce_sum", [sm], (1, 2, 1), attrs=[("axes", "si64[]", "0 2"), ("keep_dims", "bool", "true")])
    rm = g.op("coreai.reduce_mean", [lin_t], (3,), attrs=[("axes", "si64[]", "0 -1")])
    d = g.op("coreai.div", [sm, rs], (6, 2, 3))
    e = g.op("coreai.exp", [g.op("coreai.neg", [d], (6, 2, 3))], (6, 2, 3))
    sq = g.op("coreai.sqrt", [g.op("coreai.mul", [e, e], (6, 2, 3))], (6, 2, 3))
    rsq = g.op("coreai.rsqrt", [g.op("coreai.add", [sq, g.const(np.float32(1.5))], (6, 2, 3))], (6, 2, 3))
    sub = g.op("coreai.sub", [rm, rsq], (6, 2, 3))
    rl = g.op("coreai.relu", [sub], (6, 2, 3))
    h = g.op("coreai.cast", [rl], (6, 2, 3), dtype="f16")
    back = g.op("coreai.cast", [h], (6, 2, 3))
    rsh = g.op("coreai.reshape", [back], (4, 9))
    at = g.op("coreai.matmul", [rsh, rsh], (9, 9), attrs=[("transpose_a", "bool", "true")])
    bt = g.op("coreai.matmul", [rsh, rsh], (4, 4), attrs=[("transpose_b", "bool", "true")])
    g.output(at, bt, rm)

    A, B, W, BI = (x.astype(np.float64) for x in (a, b, w, bias))
    MM = A @ B
    LIN = MM @ W.T + BI
    LINT = MM @ W.T
    TR = LIN.transpose(2, 0, 1)
    SM = np.exp(TR - TR.max(axis=1, keepdims=True))
    SM /= SM.sum(axis=1, keepdims=True)
    RS = SM.sum(axis=(0, 2), keepdims=True)
    RM = LINT.mean(axis=(0, 2))
    D = SM / RS
    E = np.exp(-D)
    SQ = np.sqrt(E * E)
    RSQ = 1.0 / np.sqrt(SQ + 1.5)
    SUB = RM - RSQ
    RL = np.maximum(SUB, 0)
    BACK = RL.astype(np.float32).astype(np.float16).astype(np.float64)
    RSH = BACK.reshape(4, 9)
    write_case("ops", [g], [("main", "main", [], ["a", "b"], ["at", "bt", "rm"])],
               {"a": a, "b": b}, {}, {"at": RSH.T @ RSH, "bt": RSH @ RSH.T, "rm": RM})


def case_state(rng):
    """State in/out on one buffer: outputs read the old state before the update lands."""
    s = f32(rng.standard_normal(4))
    t = f32(rng.standard_normal((2, 4)))
    x = f32(rng.standard_normal(4))
    g = Graph("main")
    gs = g.arg((4,))
    gt = g.arg((2, 4))
    gx = g.arg((4,))
    s_new = g.op("coreai.add", [gs, gx], (4,))
    y = g.op("coreai.mul", [gs, g.const(np.float32(2.0))], (4,))
    # second state: swapped rows, the update depends on the old value only
    t_new = g.op("coreai.transpose", [g.op("coreai.reshape", [gt], (2, 4))], (4, 2), attrs=[("perm", "si64[]", "1 0")])
    t_new = g.op("coreai.reshape", [t_new], (2, 4))
    g.output(s_new, t_new, y, gs)
    S, T, X = (v.astype(np.float64) for v in (s, t, x))
    write_case("state", [g], [("step", "main", ["s", "t"], ["x"], ["y", "old_s"])],
               {"x": x}, {"s": s, "t": t},
               {"s": S + X, "t": T.T.reshape(2, 4), "y": S * 2, "old_s": S})


def norm_body(g, x, shape, axes, eps, affine, layer):
    """Op-by-op body of rms_norm / layer_norm over `axes` (list)."""
    rank = len(shape)
    red = tuple(1 if (i in [a % rank for a in axes]) else d for i, d in enumerate(shape))
    ax = " ".join(map(str, axes))
    if layer:
        mean = g.op("coreai.reduce_mean", [x], red, attrs=[("axes", "si64[]", ax), ("keep_dims", "bool", "true")])
        x = g.op("coreai.sub", [x, mean], shape)
    sq = g.op("coreai.mul", [x, x], shape)
    ms = g.op("coreai.reduce_mean", [sq], red, attrs=[("axes", "si64[]", ax), ("keep_dims", "bool", "true")])
    inv = g.op("coreai.rsqrt", [g.op("coreai.add", [ms, g.const(np.float32(eps))], red)], red)
    y = g.op("coreai.mul", [x, inv], shape)
    for a in affine:
        y = g.op("coreai.mul" if a is affine[0] else "coreai.add", [y, a], shape)
    return y


def case_norms(rng):
    """rms_norm and layer_norm composites (kernel vs body), nested invokes, odd sizes."""
    shape = (3, 5, 7)
    x = f32(rng.standard_normal(shape) * 3 + 0.5)
    scale = f32(rng.standard_normal(7))
    lw = f32(rng.standard_normal((5, 7)))
    lb = f32(rng.standard_normal((5, 7)))
    eps = 1e-5
    eps32 = float(np.float32(eps))

    rms = Graph("blk.rms_norm_0a1b2c3d", private=True,
                composite=("rms_norm", ["input", "scale"], ["output"],
                           [("axes", "si64", "-1"), ("eps", "f32", repr(eps32)), ("version", "si64", "1")]))
    rx, rs = rms.arg(shape, name="input"), rms.arg((7,), name="scale")
    rms.output(norm_body(rms, rx, shape, [-1], eps32, [rs], False))

    ln = Graph("blk.layer_norm_4e5f6a7b", private=True,
               composite=("layer_norm", ["input", "weight", "bias"], ["output"],
                          [("axes", "si64[]", "-2 -1"), ("eps", "f32", repr(eps32))]))
    lx, lwa, lba = ln.arg(shape, name="input"), ln.arg((5, 7), name="weight"), ln.arg((5, 7), name="bias")
    ln.output(norm_body(ln, lx, shape, [-2, -1], eps32, [lwa, lba], True))

    blk = Graph("blk", private=True)
    bx = blk.arg(shape)
    r = blk.op("coreai.invoke", [bx, blk.const(scale)], shape, callee=rms.name)
    l2 = blk.op("coreai.invoke", [r, blk.const(lw), blk.const(lb)], shape, callee=ln.name)
    blk.output(blk.op("coreai.add", [l2, bx], shape))

    main = Graph("main")
    mx = main.arg(shape)
    o1 = main.op("coreai.invoke", [mx], shape, callee="blk")
    o2 = main.op("coreai.invoke", [o1], shape, callee="blk")
    main.output(o2, o1)

    def ref_blk(v):
        r_ = v / np.sqrt((v * v).mean(axis=-1, keepdims=True) + eps32) * scale.astype(np.float64)
        m = r_.mean(axis=(-2, -1), keepdims=True)
        c = r_ - m
        l_ = c / np.sqrt((c * c).mean(axis=(-2, -1), keepdims=True) + eps32) * lw + lb
        return l_ + v

    X = x.astype(np.float64)
    R1 = ref_blk(X)
    write_case("norms", [rms, ln, blk, main], [("main", "main", [], ["x"], ["y", "mid"])],
               {"x": x}, {}, {"y": ref_blk(R1), "mid": R1})


def i64(a):
    return np.asarray(a, dtype=np.int64)


def case_elementwise(rng):
    """The float element-wise ops, comparisons, logic and where, with broadcasting."""
    shp = (2, 3, 4)
    x = f32(rng.standard_normal(shp))
    y = f32(rng.standard_normal((3, 1)))
    p = f32(rng.uniform(0.5, 2.0, (4,)))
    g = Graph("main")
    ix, iy, ip = g.arg(shp), g.arg((3, 1)), g.arg((4,))
    one = g.const(np.float32(1.0))
    three = g.const(np.float32(3.0))
    outs, refs = [], {}
    X, Y, P = (v.astype(np.float64) for v in (x, y, p))

    def out(name, vid, ref):
        outs.append((name, vid))
        refs[name] = ref

    mx = g.op("coreai.maximum", [ix, iy], shp)
    out("maximum", mx, np.maximum(X, Y))
    mn = g.op("coreai.minimum", [iy, ix], shp)
    out("minimum", mn, np.minimum(Y, X))
    ab = g.op("coreai.abs", [ix], shp)
    base = g.op("coreai.add", [ab, one], shp)
    pw = g.op("coreai.pow", [base, ip], shp)
    out("pow", pw, (np.abs(X) + 1) ** P)
    out("log", g.op("coreai.log", [pw], shp), np.log((np.abs(X) + 1) ** P))
    # a chain whose intermediates die at once: the planner reuses buffers in place
    ch = g.op("coreai.tanh", [g.op("coreai.sigmoid", [g.op("coreai.neg", [ix], shp)], shp)], shp)
    out("tanh_sigmoid_neg", ch, np.tanh(1 / (1 + np.exp(X))))
    out("silu", g.op("coreai.silu", [ix], shp), X / (1 + np.exp(-X)))
    out("erf", g.op("coreai.erf", [ix], shp), np.vectorize(math.erf)(X))
    out("sin", g.op("coreai.sin", [ix], shp), np.sin(X))
    out("cos", g.op("coreai.cos", [mx], shp), np.cos(np.maximum(X, Y)))
    out("reciprocal", g.op("coreai.reciprocal", [base], shp), 1 / (np.abs(X) + 1))
    x3 = g.op("coreai.mul", [ix, three], shp)
    X3 = (x * np.float32(3)).astype(np.float64)  # one f32 rounding, as in C
    fl = g.op("coreai.floor", [x3], shp)
    out("floor", fl, np.floor(X3))
    out("ceil", g.op("coreai.ceil", [x3], shp), np.ceil(X3))
    out("gelu", g.op("coreai.gelu", [ix], shp), 0.5 * X * (1 + np.vectorize(math.erf)(X / math.sqrt(2))))
    out("gelu_tanh", g.op("coreai.gelu", [ix], shp, attrs=[("approximate", "str", "tanh")]),
        0.5 * X * (1 + np.tanh(math.sqrt(2 / math.pi) * (X + 0.044715 * X ** 3))))
    out("gelu_none", g.op("coreai.gelu", [iy], (3, 1), attrs=[("approximate", "str", "none")]),
        0.5 * Y * (1 + np.vectorize(math.erf)(Y / math.sqrt(2))))
    out("clamp", g.op("coreai.clamp", [ix], shp, attrs=[("min", "f32", "-0.5"), ("max", "f32", "0.75")]),
        np.clip(X, -0.5, 0.75))
    out("clamp_min", g.op("coreai.clamp", [ix], shp, attrs=[("min", "f32", "0")]), np.maximum(X, 0))
    out("clamp_max", g.op("coreai.clamp", [iy], (3, 1), attrs=[("max", "f32", "0.25")]), np.minimum(Y, 0.25))
    # comparisons (bool results) and logic
    lt = g.op("coreai.less", [ix, iy], shp, dtype="bool")
    out("less", lt, X < Y)
    ge = g.op("coreai.greater_equal", [ip, ix], shp, dtype="bool")
    out("greater_equal", ge, P >= X)
    out("less_equal", g.op("coreai.less_equal", [fl, g.const(np.float32(0.0))], shp, dtype="bool"),
        np.floor(X3) <= 0)
    out("greater", g.op("coreai.greater", [iy, ix], shp, dtype="bool"), Y > X)
    eq = g.op("coreai.equal", [fl, g.const(np.float32(-1.0))], shp, dtype="bool")
    out("equal", eq, np.floor(X3) == -1)
    out("not_equal", g.op("coreai.not_equal", [mx, ix], shp, dtype="bool"), np.maximum(X, Y) != X)
    land = g.op("coreai.logical_and", [lt, ge], shp, dtype="bool")
    out("logical_and", land, (X < Y) & (P >= X))
    lor = g.op("coreai.logical_or", [eq, g.const(np.array([True, False, False, True]), dtype="bool")], shp,
               dtype="bool")
    out("logical_or", lor, (np.floor(X3) == -1) | np.array([True, False, False, True]))
    lnot = g.op("coreai.logical_not", [land], shp, dtype="bool")
    out("logical_not", lnot, ~((X < Y) & (P >= X)))
    out("bool_equal", g.op("coreai.equal", [lt, ge], shp, dtype="bool"), (X < Y) == (P >= X))
    out("where", g.op("coreai.where", [land, ix, iy], shp), np.where((X < Y) & (P >= X), X, Y))
    out("where_scalar", g.op("coreai.where", [g.op("coreai.less", [iy, g.const(np.float32(0.0))], (3, 1),
                                                        dtype="bool"), g.const(np.float32(-2.0)), ip], (3, 4)),
        np.where(Y < 0, -2.0, P))
    out("where_bool", g.op("coreai.where", [lor, lt, ge], shp, dtype="bool"),
        np.where(refs["logical_or"], X < Y, P >= X))
    g.output(*[v for _, v in outs])
    write_case("elementwise", [g], [("main", "main", [], ["x", "y", "p"], [n for n, _ in outs])],
               {"x": x, "y": y, "p": p}, {}, refs)


def case_int_ops(rng):
    """Integer arithmetic (with wrap-around), int comparisons, casts, iota and fill."""
    a = i64([[3, -7, 2 ** 62], [-(2 ** 63), 5, 0]])
    b = i64([4, -3, 9])
    c = np.asarray([7, -2147483648, 5, -1], dtype=np.int32)
    d = np.asarray([-3, 2, 2147483647, -1], dtype=np.int32)
    g = Graph("main")
    ia, ib = g.arg((2, 3), dtype="i64"), g.arg((3,), dtype="i64")
    ic, idd = g.arg((4,), dtype="i32"), g.arg((4,), dtype="i32")
    outs, refs = [], {}

    def out(name, vid, ref):
        outs.append((name, vid))
        refs[name] = ref

    with np.errstate(over="ignore"):
        out("add", g.op("coreai.add", [ia, ib], (2, 3), dtype="i64"), a + b)
        out("sub", g.op("coreai.sub", [ib, ia], (2, 3), dtype="i64"), b - a)
        out("mul", g.op("coreai.mul", [ia, ib], (2, 3), dtype="i64"), a * b)
        out("maximum", g.op("coreai.maximum", [ia, ib], (2, 3), dtype="i64"), np.maximum(a, b))
        out("minimum", g.op("coreai.minimum", [ia, ib], (2, 3), dtype="i64"), np.minimum(a, b))
        out("neg", g.op("coreai.neg", [ia], (2, 3), dtype="i64"), -a)
        out("abs", g.op("coreai.abs", [ia], (2, 3), dtype="i64"), np.abs(a))
        out("add32", g.op("coreai.add", [ic, idd], (4,), dtype="i32"), c + d)
        out("mul32", g.op("coreai.mul", [ic, g.const(np.int32(3), dtype="i32")], (4,), dtype="i32"),
            c * np.int32(3))
        out("neg32", g.op("coreai.neg", [ic], (4,), dtype="i32"), -c)
        out("abs32", g.op("coreai.abs", [ic], (4,), dtype="i32"), np.abs(c))
        out("max32", g.op("coreai.maximum", [ic, idd], (4,), dtype="i32"), np.maximum(c, d))
    lt = g.op("coreai.less", [ia, ib], (2, 3), dtype="bool")
    out("less", lt, a < b)
    out("equal32", g.op("coreai.equal", [ic, idd], (4,), dtype="bool"), c == d)
    out("greater32", g.op("coreai.greater", [ic, idd], (4,), dtype="bool"), c > d)
    out("where", g.op("coreai.where", [lt, ia, g.const(i64(-1), dtype="i64")], (2, 3), dtype="i64"),
        np.where(a < b, a, -1))
    out("cast", g.op("coreai.cast", [ib], (3,)), b.astype(np.float64))
    out("iota64", g.op("coreai.iota", [], (6,), dtype="i64", attrs=[("start", "f64", "5"), ("step", "f64", "-2")]),
        5 - 2 * np.arange(6, dtype=np.int64))
    out("iota32", g.op("coreai.iota", [], (5,), dtype="i32", attrs=[("start", "f64", "-3"), ("step", "f64", "4")]),
        (-3 + 4 * np.arange(5)).astype(np.int32))
    out("iota_f32", g.op("coreai.iota", [], (7,), attrs=[("start", "f64", "0.5"), ("step", "f64", "0.1")]),
        0.5 + np.arange(7) * 0.1)
    out("fill_f32", g.op("coreai.fill", [], (2, 2), attrs=[("value", "f64", "1.5")]), np.full((2, 2), 1.5))
    out("fill_i64", g.op("coreai.fill", [], (3,), dtype="i64", attrs=[("value", "f64", "-7")]),
        np.full(3, -7, dtype=np.int64))
    out("fill_i32", g.op("coreai.fill", [], (2, 0), dtype="i32", attrs=[("value", "f64", "4")]),
        np.zeros((2, 0), dtype=np.int32))
    out("fill_bool", g.op("coreai.fill", [], (), dtype="bool", attrs=[("value", "f64", "1")]), np.bool_(True))
    g.output(*[v for _, v in outs])
    write_case("int_ops", [g], [("main", "main", [], ["a", "b", "c", "d"], [n for n, _ in outs])],
               {"a": a, "b": b, "c": c, "d": d}, {}, refs)


def case_layout(rng):
    """broadcast_to, concat, slice, gather, pad, argmax, reduce_max / reduce_min."""
    shp = (2, 3, 4)
    x = f32(rng.standard_normal(shp))
    idx = i64([[2, -1], [0, -3]])
    idx32 = np.asarray([3, -4, 1], dtype=np.int32)
    g = Graph("main")
    ix, ii, ij = g.arg(shp), g.arg((2, 2), dtype="i64"), g.arg((3,), dtype="i32")
    X = x.astype(np.float64)
    outs, refs = [], {}

    def out(name, vid, ref):
        outs.append((name, vid))
        refs[name] = ref

    col = g.op("coreai.slice", [ix], (1, 3, 1), attrs=[("begins", "si64[]", "1 0 2"), ("ends", "si64[]", "2 3 3"),
                                                        ("steps", "si64[]", "1 1 1")])
    out("broadcast", g.op("coreai.broadcast_to", [col], (2, 2, 3, 4)), np.broadcast_to(X[1:2, :, 2:3], (2, 2, 3, 4)))
    bv = g.op("coreai.broadcast_to", [g.op("coreai.reduce_max", [ix], (3, 4), attrs=[("axes", "si64[]", "0")])],
              (1, 1, 3, 4))
    out("broadcast_view", bv, X.max(axis=0).reshape(1, 1, 3, 4))
    out("reduce_min", g.op("coreai.reduce_min", [ix], (1, 3, 1),
                           attrs=[("axes", "si64[]", "0 2"), ("keep_dims", "bool", "true")]),
        X.min(axis=(0, 2), keepdims=True))
    out("reduce_max_all", g.op("coreai.reduce_max", [ix], (), attrs=[("axes", "si64[]", "")]), X.max())
    z = g.const(np.zeros((2, 0, 4), dtype=np.float32))
    out("concat", g.op("coreai.concat", [ix, z, ix], (2, 6, 4), attrs=[("axis", "si64", "-2")]),
        np.concatenate([X, X], axis=1))
    out("concat_last", g.op("coreai.concat", [ix, g.op("coreai.neg", [ix], shp), ix], (2, 3, 12),
                            attrs=[("axis", "si64", "2")]), np.concatenate([X, -X, X], axis=2))
    out("concat_first", g.op("coreai.concat", [ii, ii], (4, 2), dtype="i64", attrs=[("axis", "si64", "0")]),
        np.concatenate([idx, idx], axis=0))
    out("slice", g.op("coreai.slice", [ix], (1, 2, 2), attrs=[("begins", "si64[]", "1 0 1"), ("ends", "si64[]", "2 3 4"),
                                                               ("steps", "si64[]", "1 2 2")]), X[1:2, 0:3:2, 1:4:2])
    out("slice_step3", g.op("coreai.slice", [ix], (2, 1, 2), attrs=[("begins", "si64[]", "0 2 0"),
                                                                     ("ends", "si64[]", "2 3 4"),
                                                                     ("steps", "si64[]", "1 5 3")]), X[:, 2:3, 0:4:3])
    out("slice_empty", g.op("coreai.slice", [ix], (2, 0, 4), attrs=[("begins", "si64[]", "0 1 0"),
                                                                     ("ends", "si64[]", "2 1 4"),
                                                                     ("steps", "si64[]", "1 1 1")]), X[:, 1:1, :])
    out("gather", g.op("coreai.gather", [ix, ii], (2, 2, 2, 4), attrs=[("axis", "si64", "1")]), X[:, idx, :])
    out("gather_last", g.op("coreai.gather", [ix, ij], (2, 3, 3), attrs=[("axis", "si64", "-1")]), X[:, :, idx32])
    sel = np.asarray([1, -2, -1], dtype=np.int32)
    out("gather_int", g.op("coreai.gather", [ii, g.const(sel, dtype="i32")], (2, 3), dtype="i64",
                           attrs=[("axis", "si64", "1")]), idx[:, sel])
    out("pad", g.op("coreai.pad", [ix], (3, 4, 7), attrs=[("pads", "si64[]", "0 1 2 1 0 1"),
                                                            ("value", "f64", "-1.5")]),
        np.pad(X, [(0, 1), (1, 0), (2, 1)], constant_values=-1.5))
    out("pad_int", g.op("coreai.pad", [ii], (3, 4), dtype="i64", attrs=[("pads", "si64[]", "1 0 0 2"),
                                                                         ("value", "f64", "9")]),
        np.pad(idx, [(1, 0), (0, 2)], constant_values=9))
    out("pad_zero", g.op("coreai.pad", [ix], (2, 3, 4), attrs=[("pads", "si64[]", "0 0 0 0 0 0")]), X)
    out("argmax", g.op("coreai.argmax", [ix], (2, 1, 4), dtype="i64",
                       attrs=[("axis", "si64", "1"), ("keep_dims", "bool", "true")]),
        np.argmax(X, axis=1)[:, None, :])
    out("argmax_last", g.op("coreai.argmax", [ix], (2, 3), dtype="i64", attrs=[("axis", "si64", "-1")]),
        np.argmax(X, axis=-1))
    g.output(*[v for _, v in outs])
    write_case("layout", [g], [("main", "main", [], ["x", "idx", "idx32"], [n for n, _ in outs])],
               {"x": x, "idx": idx, "idx32": idx32}, {}, refs)


def ref_conv2d(x, w, b, strides, pads, dil, groups):
    """Naive NCHW convolution in float64: zero padding, then sliding windows."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    top, left, bottom, right = pads
    xp = np.zeros((n, c, h + top + bottom, wd + left + right))
    xp[:, :, top:top + h, left:left + wd] = x
    oh = (h + top + bottom - dil[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + left + right - dil[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        gi = oc // og
        for i in range(oh):
            for j in range(ow):
                r0, c0 = i * strides[0], j * strides[1]
                win = xp[:, gi * cg:(gi + 1) * cg, r0:r0 + dil[0] * (kh - 1) + 1:dil[0],
                         c0:c0 + dil[1] * (kw - 1) + 1:dil[1]]
                out[:, oc, i, j] = (win * w[oc]).sum(axis=(1, 2, 3)) + (b[oc] if b is not None else 0.0)
    return out


def pool_out(size, k, s, lo, hi, d, ceil):
    """PyTorch's pooling output size, with the last window starting inside."""
    num = size + lo + hi - d * (k - 1) - 1
    o = (-(-num // s) if ceil else num // s) + 1
    if ceil and (o - 1) * s >= size + lo:
        o -= 1
    return o


def ref_pool(x, kind, k, strides, pads, dil=(1, 1), ceil=False, include_pad=True):
    """Naive pooling: each window enumerated cell by cell."""
    n, c, h, w = x.shape
    top, left, bottom, right = pads
    oh = pool_out(h, k[0], strides[0], top, bottom, dil[0], ceil)
    ow = pool_out(w, k[1], strides[1], left, right, dil[1], ceil)
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            cells, padded = [], 0
            for a in range(k[0]):
                for b in range(k[1]):
                    r = i * strides[0] - top + a * dil[0]
                    q = j * strides[1] - left + b * dil[1]
                    if -top <= r < h + bottom and -left <= q < w + right:
                        padded += 1
                    if 0 <= r < h and 0 <= q < w:
                        cells.append(x[:, :, r, q])
            if kind == "max":
                out[:, :, i, j] = np.max(cells, axis=0) if cells else -np.inf
            elif kind == "sum":
                out[:, :, i, j] = np.sum(cells, axis=0) if cells else 0.0
            else:
                div = padded if include_pad else len(cells)
                out[:, :, i, j] = np.sum(cells, axis=0) / div if cells else 0.0
    return out


def case_conv_pool(rng):
    """conv2d (stride, padding, dilation, groups incl. depthwise, bias or not) and the pools."""
    xs = (2, 4, 7, 9)
    x = f32(rng.standard_normal(xs))
    w1 = f32(rng.standard_normal((6, 4, 3, 3)) * 0.3)
    b1 = f32(rng.standard_normal(6))
    w2 = f32(rng.standard_normal((4, 1, 3, 3)) * 0.3)
    w3 = f32(rng.standard_normal((6, 2, 1, 2)) * 0.3)
    b3 = f32(rng.standard_normal(6))
    g = Graph("main")
    ix = g.arg(xs)
    X = x.astype(np.float64)
    outs, refs = [], {}

    def out(name, vid, ref):
        outs.append((name, vid))
        refs[name] = ref

    def ints(v):
        return " ".join(map(str, v))

    r1 = ref_conv2d(X, w1.astype(np.float64), b1.astype(np.float64), (2, 1), (1, 2, 0, 1), (1, 2), 1)
    out("conv", g.op("coreai.conv2d", [ix, g.const(w1), g.const(b1)], r1.shape,
                     attrs=[("strides", "si64[]", "2 1"), ("pads", "si64[]", "1 2 0 1"),
                            ("dilations", "si64[]", "1 2")]), r1)
    r2 = ref_conv2d(X, w2.astype(np.float64), None, (1, 1), (1, 1, 1, 1), (1, 1), 4)
    out("conv_depthwise", g.op("coreai.conv2d", [ix, g.const(w2)], r2.shape,
                               attrs=[("pads", "si64[]", "1 1 1 1"), ("groups", "si64", "4")]), r2)
    r3 = ref_conv2d(X, w3.astype(np.float64), b3.astype(np.float64), (1, 3), (0, 0, 0, 0), (1, 1), 2)
    out("conv_grouped", g.op("coreai.conv2d", [ix, g.const(w3), g.const(b3)], r3.shape,
                             attrs=[("strides", "si64[]", "1 3"), ("groups", "si64", "2")]), r3)
    pools = [
        ("max_ceil", "coreai.max_pool2d", "max", (3, 2), (2, 2), (1, 0, 1, 1), (1, 1), True, True,
         [("ceil_mode", "bool", "true")]),
        ("max_dilated", "coreai.max_pool2d", "max", (2, 2), (2, 2), (0, 0, 0, 0), (2, 1), False, True,
         [("dilations", "si64[]", "2 1")]),
        ("avg_ceil_excl", "coreai.avg_pool2d", "avg", (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True, False,
         [("ceil_mode", "bool", "true"), ("count_include_pad", "bool", "false")]),
        ("avg_incl", "coreai.avg_pool2d", "avg", (2, 3), (1, 2), (1, 1, 0, 1), (1, 1), False, True, []),
        ("avg_ceil_incl", "coreai.avg_pool2d", "avg", (2, 2), (2, 2), (1, 1, 1, 1), (1, 1), True, True,
         [("ceil_mode", "bool", "true")]),
        ("sum", "coreai.sumpool2d", "sum", (2, 2), (1, 2), (0, 1, 1, 0), (2, 1), False, True,
         [("dilations", "si64[]", "2 1")]),
    ]
    for name, kind, how, k, s, pd, dl, ceil, incl, extra in pools:
        r = ref_pool(X, how, k, s, pd, dl, ceil, incl)
        attrs = [("kernel_size", "si64[]", ints(k)), ("pads", "si64[]", ints(pd))] + extra
        if how != "max" or name != "max_dilated":
            attrs.append(("strides", "si64[]", ints(s)))
        if how == "sum":
            attrs = [a for a in attrs if a[0] != "dilations"] + [("dilations", "si64[]", ints(dl))]
        out(name, g.op(kind, [ix], r.shape, attrs=attrs), r)
    g.output(*[v for _, v in outs])
    write_case("conv_pool", [g], [("main", "main", [], ["x"], [n for n, _ in outs])], {"x": x}, {}, refs)


def case_custom_kernel(rng):
    """coreai.elementwise_kernel: user C statements inline, several inputs and outputs."""
    shp = (3, 5)
    x = f32(rng.standard_normal(shp))
    m = i64(rng.integers(-4, 5, shp))
    g = Graph("main")
    ix, im = g.arg(shp), g.arg(shp, dtype="i64")
    src = ("float v = x[id] * 2.0f + (float)m[id];\n"
           "y[id] = v > 0.0f ? v : expf(v) - 1.0f;\n"
           "flag[id] = x[id] > 0.0f;")
    y, flag = g.op("coreai.elementwise_kernel", [ix, im], shp, n_results=2, shapes=[shp, shp],
                   attrs=[("name", "str", "elu_mix"), ("source", "str", src),
                          ("input_names", "str[]", "x m"), ("output_names", "str[]", "y flag")],
                   dtypes=["f32", "bool"])
    z = g.op("coreai.elementwise_kernel", [], (4,), dtype="i64",
             attrs=[("name", "str", "index"), ("source", "str", "z[id] = id * 3;"),
                    ("input_names", "str[]", ""), ("output_names", "str[]", "z")])
    g.output(y, flag, z)
    V = x.astype(np.float64) * 2 + m
    write_case("custom_kernel", [g], [("main", "main", [], ["x", "m"], ["y", "flag", "z"])],
               {"x": x, "m": m}, {},
               {"y": np.where(V > 0, V, np.exp(V) - 1), "flag": x > 0, "z": np.arange(4, dtype=np.int64) * 3})


def case_nonfinite(rng):
    """Overflow, log of zero and of a negative, 1/0 and inf - inf: the runtime
    must give inf, -inf and NaN where IEEE float32 does (compare.py requires
    the same non-finite values at the same places)."""
    del rng  # fixed inputs
    x = f32([[-2.0, -0.0, 0.0, 0.5], [1.0, 50.0, 100.0, 200.0]])
    g = Graph("main")
    ix = g.arg(x.shape)
    X = x.astype(np.float64)
    with np.errstate(all="ignore"):
        E = as_stored(np.exp(X)).astype(np.float64)  # inf where f32 overflows
        refs = {"exp": E, "log": np.log(X), "reciprocal": 1 / X, "exp_minus_exp": E - E}
    ex = g.op("coreai.exp", [ix], x.shape)
    lg = g.op("coreai.log", [ix], x.shape)
    rc = g.op("coreai.reciprocal", [ix], x.shape)
    dd = g.op("coreai.sub", [ex, ex], x.shape)
    g.output(ex, lg, rc, dd)
    write_case("nonfinite", [g], [("main", "main", [], ["x"], list(refs))], {"x": x}, {}, refs)


def main():
    rng = np.random.default_rng(20261121)
    case_ops(rng)
    case_state(rng)
    case_norms(rng)
    case_elementwise(rng)
    case_int_ops(rng)
    case_layout(rng)
    case_conv_pool(rng)
    case_custom_kernel(rng)
    case_nonfinite(rng)
    return 0


if __name__ == "__main__":
    sys.exit(main())
