#!/usr/bin/env python3
"""Writes tests/e2e/cases/fuse_*: chains of f32 elementwise ops that
coreai-gen computes in one loop (generator/src/fuse.h), against a NumPy
float64 oracle (same conventions and helpers as make_models.py):

  * fuse_silu_bias: x * sigmoid(x) + b with b a [D] vector, a [T, D] matrix
    and a [1, 1, D] constant against [B, T, D], then times a scalar;
  * fuse_sq_diff: (a - b) * (a - b) / c with c a [D] vector (one value read
    twice by one op), and a tree of sub / add / mul / clamp / maximum /
    minimum / pow;
  * fuse_exp_recip: exp(-x) + 1 with two consumers inside the chain
    (reciprocal and div), and every unary op in one long chain;
  * fuse_output_mid: a chain whose middle value is also a graph output: the
    fusion stops there (two loops), and the output keeps its value;
  * fuse_second_consumer: values with a consumer outside the chain (a
    reduction; two different chains) are not fused past;
  * fuse_broadcast_end: an [N, 1] operand against [N, D] ends the chain;
    a rank-0 chain;
  * fuse_linear: a chain after a linear whose gelu runs in the GEMM
    epilogue, a sigmoid of a linear (no epilogue for it), and a fused loop
    whose result takes over the block of an input that dies with it.

CMake also runs each of these with --no-fuse, and checks that both paths
give the same bytes. Deterministic: rerunning it rewrites the same bytes.
"""
import math
import sys

import numpy as np

from make_models import Graph, f32, write_case


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def erf(x):
    return np.vectorize(math.erf)(x)


class Outputs:
    """Named outputs of a graph and their references."""

    def __init__(self, g):
        self.g, self.names, self.vids, self.refs = g, [], [], {}

    def add(self, name, vid, ref):
        self.names.append(name)
        self.vids.append(vid)
        self.refs[name] = ref

    def finish(self, case, inputs):
        self.g.output(*self.vids)
        write_case(case, [self.g], [("main", "main", [], list(inputs), self.names)], inputs, {}, self.refs)


def case_silu_bias(rng):
    shp = (4, 6, 16)
    x = f32(rng.standard_normal(shp))
    b = f32(rng.standard_normal(16))
    m = f32(rng.standard_normal((6, 16)))
    c = f32(rng.standard_normal((1, 1, 16)))
    g = Graph("main")
    ix, ib, im = g.arg(shp), g.arg((16,)), g.arg((6, 16))
    s = g.op("coreai.sigmoid", [ix], shp)
    xs = g.op("coreai.mul", [ix, s], shp)
    a = g.op("coreai.add", [xs, ib], shp)
    a2 = g.op("coreai.add", [a, im], shp)
    a3 = g.op("coreai.sub", [a2, g.const(c)], shp)
    y = g.op("coreai.mul", [a3, g.const(np.float32(0.5))], shp)
    out = Outputs(g)
    X, B, M, C = (v.astype(np.float64) for v in (x, b, m, c))
    out.add("y", y, ((X * sigmoid(X) + B) + M - C) * 0.5)
    out.finish("fuse_silu_bias", {"x": x, "b": b, "m": m})


def case_sq_diff(rng):
    shp = (3, 5, 8)
    a = f32(rng.standard_normal(shp))
    b = f32(rng.standard_normal(shp))
    c = f32(rng.uniform(0.5, 2.0, 8))
    e = f32(rng.uniform(0.5, 1.5, (5, 8)))
    g = Graph("main")
    ia, ib, ic, ie = g.arg(shp), g.arg(shp), g.arg((8,)), g.arg((5, 8))
    d = g.op("coreai.sub", [ia, ib], shp)
    sq = g.op("coreai.mul", [d, d], shp)
    q = g.op("coreai.div", [sq, ic], shp)
    # a tree: every binary op and clamp, several leaves
    s1 = g.op("coreai.sub", [ia, ib], shp)
    s2 = g.op("coreai.add", [ia, ib], shp)
    pr = g.op("coreai.mul", [s1, s2], shp)
    cl = g.op("coreai.clamp", [ia], shp, attrs=[("min", "f32", "-0.5"), ("max", "f32", "0.5")])
    mx = g.op("coreai.maximum", [pr, cl], shp)
    mn = g.op("coreai.minimum", [mx, g.const(np.float32(1.25))], shp)
    base = g.op("coreai.add", [g.op("coreai.abs", [mn], shp), g.const(np.float32(1.0))], shp)
    tree = g.op("coreai.pow", [base, ie], shp)
    out = Outputs(g)
    A, B, C, E = (v.astype(np.float64) for v in (a, b, c, e))
    out.add("q", q, (A - B) * (A - B) / C)
    T = np.minimum(np.maximum((A - B) * (A + B), np.clip(A, -0.5, 0.5)), 1.25)
    out.add("tree", tree, (np.abs(T) + 1.0) ** E)
    out.finish("fuse_sq_diff", {"a": a, "b": b, "c": c, "e": e})


def case_exp_recip(rng):
    shp = (5, 7)
    x = f32(rng.standard_normal(shp))
    y = f32(rng.standard_normal(shp))
    p = f32(rng.uniform(0.5, 2.0, shp))
    g = Graph("main")
    ix, iy, ip = g.arg(shp), g.arg(shp), g.arg(shp)
    e = g.op("coreai.exp", [g.op("coreai.neg", [ix], shp)], shp)
    d = g.op("coreai.add", [e, g.const(np.float32(1.0))], shp)
    r = g.op("coreai.reciprocal", [d], shp)
    q = g.op("coreai.div", [iy, d], shp)
    o = g.op("coreai.sub", [r, q], shp)
    # every unary op in one chain (inputs kept where each is smooth)
    v = g.op("coreai.rsqrt", [ip], shp)
    v = g.op("coreai.sqrt", [v], shp)
    v = g.op("coreai.log", [v], shp)
    v = g.op("coreai.tanh", [v], shp)
    v = g.op("coreai.sigmoid", [v], shp)
    v = g.op("coreai.silu", [v], shp)
    v = g.op("coreai.erf", [v], shp)
    v = g.op("coreai.sin", [v], shp)
    v = g.op("coreai.cos", [v], shp)
    v = g.op("coreai.gelu", [v], shp)
    v = g.op("coreai.gelu", [v], shp, attrs=[("approximate", "str", "tanh")])
    v = g.op("coreai.relu", [g.op("coreai.neg", [v], shp)], shp)
    v = g.op("coreai.abs", [g.op("coreai.sub", [v, ip], shp)], shp)
    # floor / ceil of x * 4 (exact in f32) so the oracle agrees on every step
    fl = g.op("coreai.floor", [g.op("coreai.mul", [ix, g.const(np.float32(4.0))], shp)], shp)
    ce = g.op("coreai.ceil", [g.op("coreai.mul", [ix, g.const(np.float32(4.0))], shp)], shp)
    steps = g.op("coreai.add", [fl, ce], shp)
    out = Outputs(g)
    X, Y, P = (a.astype(np.float64) for a in (x, y, p))
    D = np.exp(-X) + 1.0
    out.add("o", o, 1.0 / D - Y / D)
    V = np.log(np.sqrt(1.0 / np.sqrt(P)))
    V = sigmoid(np.tanh(V))
    V = erf(V * sigmoid(V))
    V = np.cos(np.sin(V))
    V = 0.5 * V * (1.0 + erf(V / math.sqrt(2.0)))
    V = 0.5 * V * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (V + 0.044715 * V ** 3)))
    V = np.abs(np.maximum(-V, 0.0) - P)
    out.add("unary", v, V)
    out.add("steps", steps, np.floor(X * 4.0) + np.ceil(X * 4.0))
    out.finish("fuse_exp_recip", {"x": x, "y": y, "p": p})


def case_output_mid(rng):
    shp = (4, 8)
    x = f32(rng.standard_normal(shp))
    g = Graph("main")
    ix = g.arg(shp)
    a = g.op("coreai.tanh", [ix], shp)
    b = g.op("coreai.mul", [a, g.const(np.float32(2.0))], shp)
    c = g.op("coreai.exp", [g.op("coreai.add", [b, ix], shp)], shp)
    out = Outputs(g)
    X = x.astype(np.float64)
    out.add("c", c, np.exp(2.0 * np.tanh(X) + X))
    out.add("mid", b, 2.0 * np.tanh(X))
    out.finish("fuse_output_mid", {"x": x})


def case_second_consumer(rng):
    shp = (4, 8)
    x = f32(rng.standard_normal(shp))
    g = Graph("main")
    ix = g.arg(shp)
    a = g.op("coreai.sigmoid", [ix], shp)
    b = g.op("coreai.mul", [a, ix], shp)
    c = g.op("coreai.relu", [g.op("coreai.sub", [b, g.const(np.float32(0.25))], shp)], shp)
    rs = g.op("coreai.reduce_sum", [a], (4, 1), attrs=[("axes", "si64[]", "-1"), ("keep_dims", "bool", "true")])
    # u feeds two different chains: neither may take it
    u = g.op("coreai.exp", [ix], shp)
    w = g.op("coreai.sqrt", [g.op("coreai.add", [u, g.const(np.float32(1.0))], shp)], shp)
    z = g.op("coreai.abs", [g.op("coreai.sub", [u, g.const(np.float32(1.0))], shp)], shp)
    out = Outputs(g)
    X = x.astype(np.float64)
    A = sigmoid(X)
    out.add("c", c, np.maximum(A * X - 0.25, 0.0))
    out.add("rs", rs, A.sum(axis=-1, keepdims=True))
    out.add("w", w, np.sqrt(np.exp(X) + 1.0))
    out.add("z", z, np.abs(np.exp(X) - 1.0))
    out.finish("fuse_second_consumer", {"x": x})


def case_broadcast_end(rng):
    shp = (4, 8)
    x = f32(rng.standard_normal(shp))
    col = f32(rng.standard_normal((4, 1)))
    s = f32(rng.standard_normal(()))
    g = Graph("main")
    ix, icol, isc = g.arg(shp), g.arg((4, 1)), g.arg(())
    e = g.op("coreai.exp", [ix], shp)
    t = g.op("coreai.mul", [e, icol], shp)
    v = g.op("coreai.add", [g.op("coreai.relu", [t], shp), g.const(np.float32(1.0))], shp)
    r0 = g.op("coreai.sqrt", [g.op("coreai.abs", [isc], ())], ())
    r0 = g.op("coreai.mul", [r0, g.const(np.float32(3.0))], ())
    out = Outputs(g)
    X, COL, S = (a.astype(np.float64) for a in (x, col, s))
    out.add("v", v, np.maximum(np.exp(X) * COL, 0.0) + 1.0)
    out.add("r0", r0, np.sqrt(np.abs(S)) * 3.0)
    out.finish("fuse_broadcast_end", {"x": x, "col": col, "s": s})


def case_linear(rng):
    x = f32(rng.uniform(-1, 1, (6, 12)))
    w = f32(rng.uniform(-0.5, 0.5, (10, 12)))
    bias = f32(rng.uniform(-0.5, 0.5, 10))
    scale = f32(rng.uniform(0.5, 1.5, 10))
    w2 = f32(rng.uniform(-0.5, 0.5, (10, 12)))
    bm = f32(rng.uniform(-0.5, 0.5, (10, 3)))
    g = Graph("main")
    ix = g.arg((6, 12))
    cw, cb, cs, cw2, cbm = g.const(w), g.const(bias), g.const(scale), g.const(w2), g.const(bm)
    # gelu runs in the linear's epilogue; the chain after it is fused
    l1 = g.op("coreai.linear", [ix, cw, cb], (6, 10))
    g1 = g.op("coreai.gelu", [l1], (6, 10))
    m1 = g.op("coreai.mul", [g1, cs], (6, 10))
    # l2 dies with the fused loop's root: its block takes the root's result
    l2 = g.op("coreai.linear", [ix, cw2], (6, 10))
    r1 = g.op("coreai.tanh", [g.op("coreai.add", [m1, l2], (6, 10))], (6, 10))
    p = g.op("coreai.matmul", [r1, cbm], (6, 3))
    # sigmoid has no epilogue: it joins a chain reading the linear's result
    l3 = g.op("coreai.linear", [ix, cw2, cb], (6, 10))
    gl = g.op("coreai.mul", [g.op("coreai.sigmoid", [l3], (6, 10)), l3], (6, 10))
    out = Outputs(g)
    X, W, B, S, W2, BM = (a.astype(np.float64) for a in (x, w, bias, scale, w2, bm))
    L1 = X @ W.T + B
    G1 = 0.5 * L1 * (1.0 + erf(L1 / math.sqrt(2.0)))
    R1 = np.tanh(G1 * S + X @ W2.T)
    out.add("p", p, R1 @ BM)
    L3 = X @ W2.T + B
    out.add("gl", gl, sigmoid(L3) * L3)
    out.finish("fuse_linear", {"x": x})


def main():
    rng = np.random.default_rng(20261123)
    case_silu_bias(rng)
    case_sq_diff(rng)
    case_exp_recip(rng)
    case_output_mid(rng)
    case_second_consumer(rng)
    case_broadcast_end(rng)
    case_linear(rng)
    return 0


if __name__ == "__main__":
    sys.exit(main())
