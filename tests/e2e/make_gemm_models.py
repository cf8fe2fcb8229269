#!/usr/bin/env python3
"""Writes tests/e2e/cases/gemm: the products the generator hands to the
runtime's GEMM, against a NumPy float64 oracle (same conventions and helpers
as make_models.py):

  * coreai.linear with a constant weight, as [out][in] and transposed: the
    weight is emitted pre-packed (coreai_linear_packed_f32);
  * activations the linear's epilogue takes over: relu through a reshape,
    gelu (tanh) on a transposed weight, gelu (erf) as a graph output, silu on
    a linear whose weight is an argument (coreai_linear_ex_f32, packed into
    workspace scratch); and a silu that must NOT be fused (the linear's
    result has a second use);
  * coreai.matmul with a constant B: batched (packed per matrix, batch
    strides in packed floats), transposed, and broadcast over A's batch
    (coreai_matmul_packed_f32); and with two arguments, B broadcast
    (coreai_matmul_ws_f32, B packed once into scratch);
  * out_features / n not multiples of 16, k past 16;
  * gemm_heads: the transposes of attention's head split and merge folded
    into the packed linears' head layouts, and near misses that stay;
  * gemm_residual: residual adds folded into the linear producing one
    operand, and near misses that stay.

Deterministic: rerunning it rewrites the same bytes.
"""
import math
import sys

import numpy as np

from make_models import Graph, f32, write_case


def gelu(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x / (1.0 + np.exp(-x))


def case_gemm(rng):
    def u(*shape, scale=1.0):
        return f32(rng.uniform(-scale, scale, shape))

    x = u(2, 5, 24)                  # rows 10, in 24
    w1, b1 = u(37, 24, scale=0.5), u(37)
    w2t = u(37, 19, scale=0.5)       # [in][out] (weight_transposed)
    w3 = u(21, 19, scale=0.5)
    wa = u(23, 24, scale=0.5)        # argument weight
    bmat = u(2, 24, 19, scale=0.5)   # batched constant B
    bmat_t = u(2, 19, 24, scale=0.5) # the same, stored transposed
    b2d = u(24, 19, scale=0.5)       # broadcast over the batch
    y = u(24, 19)                    # argument B

    g = Graph("main")
    ix, iw, iy = g.arg((2, 5, 24)), g.arg((23, 24)), g.arg((24, 19))
    cw1, cb1, cw2t, cw3 = g.const(w1), g.const(b1), g.const(w2t), g.const(w3)
    cbm, cbmt, cb2 = g.const(bmat), g.const(bmat_t), g.const(b2d)

    # linear (packed [out][in] weight, bias) -> reshape -> relu: fused
    rx = g.op("coreai.reshape", [ix], (10, 24))
    l1 = g.op("coreai.linear", [rx, cw1, cb1], (10, 37))
    r1 = g.op("coreai.relu", [g.op("coreai.reshape", [l1], (2, 5, 37))], (2, 5, 37))
    # linear (transposed constant weight) -> gelu tanh: fused
    l2 = g.op("coreai.linear", [g.op("coreai.reshape", [r1], (10, 37)), cw2t], (10, 19),
              attrs=[("weight_transposed", "bool", "true")])
    g2 = g.op("coreai.gelu", [l2], (10, 19), attrs=[("approximate", "str", "tanh")])
    # linear -> gelu (erf), the graph's output: fused, computed into the result
    l3 = g.op("coreai.linear", [g2, cw3], (10, 21))
    g3 = g.op("coreai.gelu", [l3], (10, 21), attrs=[("approximate", "str", "none")])
    # linear with an argument weight -> silu: fused, weight packed into scratch
    l4 = g.op("coreai.linear", [rx, iw], (10, 23))
    s4 = g.op("coreai.silu", [l4], (10, 23))
    # silu whose operand has a second use: not fused
    l5 = g.op("coreai.linear", [rx, iw], (10, 23))
    s5 = g.op("coreai.silu", [l5], (10, 23))
    d5 = g.op("coreai.sub", [s5, l5], (10, 23))
    # matmuls with a constant B: batched, transposed, broadcast
    m1 = g.op("coreai.matmul", [ix, cbm], (2, 5, 19))
    m2 = g.op("coreai.matmul", [ix, cbmt], (2, 5, 19), attrs=[("transpose_b", "bool", "true")])
    m3 = g.op("coreai.matmul", [ix, cb2], (2, 5, 19))
    # matmul of two arguments, B broadcast over the batch
    m4 = g.op("coreai.matmul", [ix, iy], (2, 5, 19))
    g.output(g3, s4, d5, m1, m2, m3, m4)

    X = x.astype(np.float64).reshape(10, 24)
    W1, B1, W2T, W3, WA = (a.astype(np.float64) for a in (w1, b1, w2t, w3, wa))
    BM, BMT, B2, Y = (a.astype(np.float64) for a in (bmat, bmat_t, b2d, y))
    R1 = np.maximum(X @ W1.T + B1, 0.0)
    G2 = gelu_tanh(R1 @ W2T)
    G3 = gelu(G2 @ W3.T)
    L4 = X @ WA.T
    S4 = silu(L4)
    D5 = silu(L4) - L4
    XB = x.astype(np.float64)
    M1 = XB @ BM
    M2 = XB @ BMT.transpose(0, 2, 1)
    M3 = XB @ B2
    M4 = XB @ Y
    write_case("gemm", [g], [("main", "main", [], ["x", "w", "y"], ["g3", "s4", "d5", "m1", "m2", "m3", "m4"])],
               {"x": x, "w": wa, "y": y}, {},
               {"g3": G3, "s4": S4, "d5": D5, "m1": M1, "m2": M2, "m3": M3, "m4": M4})


def case_gemm_heads(rng):
    """Attention's transposes between [1, T, H*D] and [1, H, T, D] that the
    generator folds into the packed linear on the other side (pack.h
    cg_pack_heads_*), and near misses it must leave as transposes."""
    def u(*shape, scale=1.0):
        return f32(rng.uniform(-scale, scale, shape))

    T, H, D = 6, 5, 8
    x = u(1, T, H * D)
    x2 = u(2, 3, H * D)
    wq, bq = u(H * D, H * D, scale=0.3), u(H * D)
    wo = u(24, H * D, scale=0.3)
    wk = u(H * D, H * D, scale=0.3)
    wr = u(H * D, H * D, scale=0.3)
    wb = u(H * D, H * D, scale=0.3)
    wg = u(36, H * D, scale=0.3)

    g = Graph("main")
    ix, ix2 = g.arg((1, T, H * D)), g.arg((2, 3, H * D))
    perm = [("perm", "si64[]", "0 2 1 3")]
    rx = g.op("coreai.reshape", [ix], (T, H * D))
    # folded (producer): linear with bias -> [1, T, H, D] -> [1, H, T, D]
    q = g.op("coreai.linear", [rx, g.const(wq), g.const(bq)], (T, H * D))
    qt = g.op("coreai.transpose", [g.op("coreai.reshape", [q], (1, T, H, D))], (1, H, T, D), attrs=perm)
    # an op between, reading the [H, T, D] layout
    sq = g.op("coreai.tanh", [qt], (1, H, T, D))
    # folded (consumer): back to [1, T, H, D] -> [T, H*D] -> linear with relu
    st = g.op("coreai.transpose", [sq], (1, T, H, D), attrs=perm)
    o = g.op("coreai.linear", [g.op("coreai.reshape", [st], (T, H * D)), g.const(wo)], (T, 24))
    o = g.op("coreai.relu", [o], (T, 24))
    # folded (producer), rank 3 and straight into the graph's output
    k = g.op("coreai.linear", [rx, g.const(wk)], (T, H * D))
    kt = g.op("coreai.transpose", [g.op("coreai.reshape", [k], (T, H, D))], (H, T, D),
              attrs=[("perm", "si64[]", "1 0 2")])
    # not folded: the linear's result has a second use
    r = g.op("coreai.linear", [rx, g.const(wr)], (T, H * D))
    rt = g.op("coreai.transpose", [g.op("coreai.reshape", [r], (1, T, H, D))], (1, H, T, D), attrs=perm)
    rs = g.op("coreai.add", [r, r], (T, H * D))
    # not folded: batch 2 (rows are not one sequence)
    b = g.op("coreai.linear", [g.op("coreai.reshape", [ix2], (6, H * D)), g.const(wb)], (6, H * D))
    bt = g.op("coreai.transpose", [g.op("coreai.reshape", [b], (2, 3, H, D))], (2, H, 3, D), attrs=perm)
    # not folded: the transposed value has a second use besides the linear
    gt = g.op("coreai.transpose", [qt], (1, T, H, D), attrs=perm)
    gl = g.op("coreai.linear", [g.op("coreai.reshape", [gt], (T, H * D)), g.const(wg)], (T, 36))
    gs = g.op("coreai.neg", [gt], (1, T, H, D))
    g.output(o, kt, rt, rs, bt, gl, gs)

    X = x.astype(np.float64).reshape(T, H * D)
    Q = X @ wq.astype(np.float64).T + bq
    QT = Q.reshape(1, T, H, D).transpose(0, 2, 1, 3)
    ST = np.tanh(QT).transpose(0, 2, 1, 3).reshape(T, H * D)
    O = np.maximum(ST @ wo.astype(np.float64).T, 0.0)
    KT = (X @ wk.astype(np.float64).T).reshape(T, H, D).transpose(1, 0, 2)
    R = X @ wr.astype(np.float64).T
    RT = R.reshape(1, T, H, D).transpose(0, 2, 1, 3)
    B = (x2.astype(np.float64).reshape(6, H * D) @ wb.astype(np.float64).T).reshape(2, 3, H, D).transpose(0, 2, 1, 3)
    GT = QT.transpose(0, 2, 1, 3)
    GL = GT.reshape(T, H * D) @ wg.astype(np.float64).T
    write_case("gemm_heads", [g], [("main", "main", [], ["x", "x2"], ["o", "kt", "rt", "rs", "bt", "gl", "gs"])],
               {"x": x, "x2": x2}, {},
               {"o": O, "kt": KT, "rt": RT, "rs": R + R, "bt": B, "gl": GL, "gs": -GT})


def case_gemm_residual(rng):
    """Residual adds folded into the packed linear producing one operand
    (pack.h cg_pack_residual_linear: coreai_linear_packed_add_f32), and the
    adds that must stay separate."""
    def u(*shape, scale=1.0):
        return f32(rng.uniform(-scale, scale, shape))

    x, x3, r3 = u(1, 6, 40), u(5, 300), u(5, 24)
    w1, w2, b2, w3, w4, w5, w6, w7 = (u(40, 40, scale=0.3), u(40, 40, scale=0.3), u(40), u(40, 40, scale=0.3),
                                      u(40, 40, scale=0.3), u(40, 40, scale=0.3), u(24, 300, scale=0.1),
                                      u(40, 40, scale=0.3))
    g = Graph("main")
    ix, ix3, ir3 = g.arg((1, 6, 40)), g.arg((5, 300)), g.arg((5, 24))
    rx = g.op("coreai.reshape", [ix], (6, 40))
    # folded: x + linear(x) through reshapes, the residual a graph argument
    h = g.op("coreai.reshape", [g.op("coreai.linear", [rx, g.const(w1)], (6, 40))], (1, 6, 40))
    y1 = g.op("coreai.add", [ix, h], (1, 6, 40))
    # not folded (an activation in between; the relu is the linear's epilogue)
    l2 = g.op("coreai.linear", [g.op("coreai.reshape", [y1], (6, 40)), g.const(w2), g.const(b2)], (6, 40))
    y2 = g.op("coreai.add", [g.op("coreai.relu", [l2], (6, 40)), rx], (6, 40))
    # two linears: folded into the later one, the earlier one's result its addend
    l3 = g.op("coreai.linear", [rx, g.const(w3)], (6, 40))
    l4 = g.op("coreai.linear", [y2, g.const(w4)], (6, 40))
    y3 = g.op("coreai.add", [l3, l4], (6, 40))
    # not folded: the other operand is computed after the linear
    l5 = g.op("coreai.linear", [rx, g.const(w5)], (6, 40))
    t5 = g.op("coreai.tanh", [y3], (6, 40))
    y5 = g.op("coreai.add", [l5, t5], (6, 40))
    # folded, k past one cache block (300 > 256), straight into the output
    y6 = g.op("coreai.add", [ir3, g.op("coreai.linear", [ix3, g.const(w6)], (5, 24))], (5, 24))
    # not folded: the linear's result has a second use
    l7 = g.op("coreai.linear", [rx, g.const(w7)], (6, 40))
    y7 = g.op("coreai.add", [l7, rx], (6, 40))
    z7 = g.op("coreai.mul", [l7, y7], (6, 40))
    g.output(y1, y3, y5, y6, z7)

    X = x.astype(np.float64).reshape(6, 40)
    d = lambda a: a.astype(np.float64)
    Y1 = X + X @ d(w1).T
    Y2 = np.maximum(Y1 @ d(w2).T + d(b2), 0.0) + X
    Y3 = X @ d(w3).T + Y2 @ d(w4).T
    Y5 = X @ d(w5).T + np.tanh(Y3)
    Y6 = d(r3) + d(x3) @ d(w6).T
    L7 = X @ d(w7).T
    Z7 = L7 * (L7 + X)
    write_case("gemm_residual", [g], [("main", "main", [], ["x", "x3", "r3"], ["y1", "y3", "y5", "y6", "z7"])],
               {"x": x, "x3": x3, "r3": r3}, {},
               {"y1": Y1.reshape(1, 6, 40), "y3": Y3, "y5": Y5, "y6": Y6, "z7": Z7})


def main():
    rng = np.random.default_rng(20261122)
    case_gemm(rng)
    case_gemm_heads(rng)
    case_gemm_residual(rng)
    return 0


if __name__ == "__main__":
    sys.exit(main())
