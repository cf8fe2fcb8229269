#!/usr/bin/env python3
"""Writes the end-to-end test models and their oracle data.

Each case folder under tests/e2e/cases/ gets model.xml (format v1, inline
constants only), inputs as in_<name>.npy / state_<name>.npy, and the expected
outputs as ref_<name>.npy. The oracle is NumPy in float64, written
independently of the generator and the C kernels. Deterministic: rerunning it
reproduces the same bytes.
"""
import os
import sys

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
        flat = " ".join(repr(float(v)) if dtype != "bool" else ("true" if v else "false")
                        for v in np.asarray(array).reshape(-1))
        shape = " ".join(str(d) for d in np.shape(array))
        self.body.append(f'    <const id="{vid}" dtype="{dtype}" shape="{shape}">{flat}</const>')
        return vid

    def op(self, kind, operands, shape, dtype="f32", attrs=(), callee=None, n_results=1, shapes=None):
        ids = []
        lines = [f'    <op kind="{kind}"' + (f' callee="{callee}"' if callee else "") + ">"]
        lines += [f'      <operand ref="{o}"/>' for o in operands]
        for (n, t, v) in attrs:
            lines.append(f'      <attr name="{n}" type="{t}">{v}</attr>')
        for r in range(n_results):
            vid = f"v{self.n}"
            self.n += 1
            s = shapes[r] if shapes else shape
            lines.append(f'      <result id="{vid}" dtype="{dtype}" shape="{" ".join(map(str, s))}"/>')
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
            np.save(os.path.join(d, f"{prefix}_{k}.npy"), np.asarray(v, dtype=np.float32))


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


def main():
    rng = np.random.default_rng(20261121)
    case_ops(rng)
    case_state(rng)
    case_norms(rng)
    return 0


if __name__ == "__main__":
    sys.exit(main())
