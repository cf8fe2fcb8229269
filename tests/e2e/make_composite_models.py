#!/usr/bin/env python3
"""Writes the end-to-end cases of the composite ops (docs/composite-ops.md).

Each case folder tests/e2e/cases/comp_<name>/ gets
  model.xml   a composite graph carrying BOTH its composite-decl and a correct
              op-by-op body, called from @main with coreai.invoke;
  in_*.npy    the inputs (f32, i32, i64 or bool);
  ref_*.npy   the expected outputs, from PyTorch eager ops in float64 (the
              oracle: independent of the generator, the kernels and the body);
  kernel.txt  the runtime function the kernel build must call directly.

tests/e2e/CMakeLists.txt runs every case twice, once through the composite
kernel and once through the body (--no-composite-kernels), so both are held
to the oracle at 1e-5. The bodies use only the plain ops of the first
generator release (add sub mul div relu rsqrt sqrt exp neg matmul linear
reduce_sum reduce_mean reshape transpose softmax cast invoke): slices and
concatenations are products with 0/1 matrices (exact), sigmoid is
1 / (1 + exp(-x)), tanh is 2 sigmoid(2x) - 1, |x| is relu(x) + relu(-x),
log is Halley's iteration on exp, sin / cos are Taylor polynomials after a
Cody-Waite reduction whose integer part comes from a float->int cast.

Deterministic: rerunning it rewrites the same bytes. Run with
/usr/bin/python3 (numpy and torch).
"""
import math
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
PREFIX = "comp_"

NP_DTYPE = {"f32": np.float32, "i32": np.int32, "i64": np.int64, "bool": np.bool_}


def f32(a):
    return np.asarray(a, dtype=np.float32)


def lit(v, dtype):
    if dtype == "bool":
        return "true" if v else "false"
    if dtype in ("i32", "i64"):
        return str(int(v))
    return repr(float(np.float32(v)))


# ---- a tiny builder of model.xml graphs that tracks shapes ------------------------

class V:
    def __init__(self, vid, shape, dtype):
        self.id, self.shape, self.dtype = vid, tuple(int(d) for d in shape), dtype


class G:
    def __init__(self, name, composite=None):
        self.name, self.composite = name, composite
        self.args, self.body, self.outs, self.n = [], [], [], 0

    def arg(self, shape, dtype="f32", name=None):
        v = V(f"arg{len(self.args)}", shape, dtype)
        self.args.append((v, name))
        return v

    def const(self, array, dtype="f32"):
        a = np.asarray(array)
        v = V(f"c{self.n}", a.shape, dtype)
        self.n += 1
        text = " ".join(lit(x, dtype) for x in a.reshape(-1))
        self.body.append(f'    <const id="{v.id}" dtype="{dtype}" shape="{" ".join(map(str, a.shape))}">{text}</const>')
        return v

    def _v(self, x):
        return x if isinstance(x, V) else self.const(np.float32(x))

    def op(self, kind, operands, shapes, dtypes=None, attrs=(), callee=None):
        out = []
        lines = [f'    <op kind="{kind}"' + (f' callee="{callee}"' if callee else "") + ">"]
        lines += [f'      <operand ref="{o.id}"/>' for o in operands]
        for (n, t, val) in attrs:
            lines.append(f'      <attr name="{n}" type="{t}">{val}</attr>')
        for i, s in enumerate(shapes):
            v = V(f"v{self.n}", s, dtypes[i] if dtypes else "f32")
            self.n += 1
            lines.append(f'      <result id="{v.id}" dtype="{v.dtype}" shape="{" ".join(map(str, v.shape))}"/>')
            out.append(v)
        lines.append("    </op>")
        self.body.extend(lines)
        return out

    # elementwise
    def _bin(self, kind, a, b):
        a, b = self._v(a), self._v(b)
        return self.op(kind, [a, b], [np.broadcast_shapes(a.shape, b.shape)])[0]

    def add(self, a, b): return self._bin("coreai.add", a, b)
    def sub(self, a, b): return self._bin("coreai.sub", a, b)
    def mul(self, a, b): return self._bin("coreai.mul", a, b)
    def div(self, a, b): return self._bin("coreai.div", a, b)

    def _un(self, kind, x): return self.op(kind, [x], [x.shape])[0]
    def relu(self, x): return self._un("coreai.relu", x)
    def exp(self, x): return self._un("coreai.exp", x)
    def neg(self, x): return self._un("coreai.neg", x)
    def rsqrt(self, x): return self._un("coreai.rsqrt", x)
    def sqrt(self, x): return self._un("coreai.sqrt", x)

    def softmax(self, x, axis):
        return self.op("coreai.softmax", [x], [x.shape], attrs=[("axis", "si64", axis)])[0]

    def cast(self, x, dtype):
        return self.op("coreai.cast", [x], [x.shape], dtypes=[dtype])[0]

    def reshape(self, x, shape):
        assert int(np.prod(shape)) == int(np.prod(x.shape)), (shape, x.shape)
        return self.op("coreai.reshape", [x], [shape], dtypes=[x.dtype])[0]

    def transpose(self, x, perm):
        return self.op("coreai.transpose", [x], [tuple(x.shape[p] for p in perm)], dtypes=[x.dtype],
                       attrs=[("perm", "si64[]", " ".join(map(str, perm)))])[0]

    def matmul(self, a, b, ta=False, tb=False):
        a, b = (self.const(f32(x)) if not isinstance(x, V) else x for x in (a, b))
        m, k = (a.shape[-1], a.shape[-2]) if ta else (a.shape[-2], a.shape[-1])
        k2, n = (b.shape[-1], b.shape[-2]) if tb else (b.shape[-2], b.shape[-1])
        assert k == k2, (a.shape, b.shape)
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        attrs = []
        if ta:
            attrs.append(("transpose_a", "bool", "true"))
        if tb:
            attrs.append(("transpose_b", "bool", "true"))
        return self.op("coreai.matmul", [a, b], [tuple(batch) + (m, n)], attrs=attrs)[0]

    def linear(self, x, w, b=None):
        ops = [x, w] + ([b] if b is not None else [])
        return self.op("coreai.linear", ops, [x.shape[:-1] + (w.shape[0],)])[0]

    def _reduce(self, kind, x, axes, keep):
        r = len(x.shape)
        ax = sorted(a % r for a in axes)
        shape = tuple(1 if i in ax else d for i, d in enumerate(x.shape) if keep or i not in ax)
        return self.op(kind, [x], [shape], attrs=[("axes", "si64[]", " ".join(map(str, axes))),
                                                  ("keep_dims", "bool", "true" if keep else "false")])[0]

    def rsum(self, x, axes, keep=True): return self._reduce("coreai.reduce_sum", x, axes, keep)
    def rmean(self, x, axes, keep=True): return self._reduce("coreai.reduce_mean", x, axes, keep)

    def invoke(self, callee, operands):
        return self.op("coreai.invoke", operands, [v.shape for v in callee.outs],
                       dtypes=[v.dtype for v in callee.outs], callee=callee.name)

    def output(self, *vs):
        self.outs = list(vs)

    def xml(self):
        attrs = f' name="{self.name}"' + (' private="true" noinline="true"' if self.composite else "")
        out = [f"  <graph{attrs}>"]
        if self.composite:
            op, ins, outs, cattrs = self.composite
            out.append(f'    <composite-decl op="{op}">')
            out += [f"      <input-name>{n}</input-name>" for n in ins]
            out += [f"      <output-name>{n}</output-name>" for n in outs]
            out += [f'      <attr name="{n}" type="{t}">{v}</attr>' for (n, t, v) in cattrs]
            out.append("    </composite-decl>")
        for (v, name) in self.args:
            nm = f' name="{name}"' if name else ""
            out.append(f'    <arg id="{v.id}" dtype="{v.dtype}" shape="{" ".join(map(str, v.shape))}"{nm}/>')
        out += self.body
        out.append("    <output>" + "".join(f'<value ref="{v.id}"/>' for v in self.outs) + "</output>")
        out.append("  </graph>")
        return "\n".join(out)


# ---- body building blocks (plain ops only) --------------------------------------

def sigmoid(g, x):
    return g.div(1.0, g.add(g.exp(g.neg(x)), 1.0))


def tanh(g, x):
    return g.sub(g.mul(sigmoid(g, g.mul(x, 2.0)), 2.0), 1.0)


def absv(g, x):
    return g.add(g.relu(x), g.relu(g.neg(x)))


def log_halley(g, s, iters=14):
    """log(s) for s > 0 by Halley's iteration y += 2 (s - e^y) / (s + e^y) from 0."""
    y = g.const(np.zeros(s.shape, np.float32))
    for _ in range(iters):
        e = g.exp(y)
        y = g.add(y, g.div(g.mul(g.sub(s, e), 2.0), g.add(s, e)))
    return y


TWO_PI = 2.0 * math.pi
# 2 pi in three parts: the first two have 12 significant bits, so k * part is exact for k < 2^12
C1 = float(np.float32(math.ldexp(round(math.ldexp(TWO_PI, 9)), -9)))
C2 = float(np.float32(math.ldexp(round(math.ldexp(TWO_PI - C1, 21)), -21)))
C3 = float(np.float32(TWO_PI - C1 - C2))


def sincos(g, a):
    """(cos a, sin a) for a > -400: Cody-Waite reduction to [-pi, pi], then Taylor."""
    t = g.add(g.mul(a, float(np.float32(1.0 / TWO_PI))), 64.5)
    k = g.sub(g.cast(g.cast(t, "i32"), "f32"), 64.0)  # the cast truncates; t > 0 so it floors
    r = g.sub(g.sub(g.sub(a, g.mul(k, C1)), g.mul(k, C2)), g.mul(k, C3))
    r2 = g.mul(r, r)
    # sin r = r (1 - r^2/3! + r^4/5! ...), cos r = 1 - r^2/2! + ...; Horner in r^2
    s = g.const(np.float32(((-1) ** 11) / math.factorial(23)))
    for n in range(10, -1, -1):
        s = g.add(g.mul(s, r2), float(np.float32(((-1) ** n) / math.factorial(2 * n + 1))))
    c = g.const(np.float32(((-1) ** 12) / math.factorial(24)))
    for n in range(11, -1, -1):
        c = g.add(g.mul(c, r2), float(np.float32(((-1) ** n) / math.factorial(2 * n))))
    return c, g.mul(s, r)


def take_last(g, x, idx):
    """x[..., idx] (a list of positions) as x @ E with a 0/1 matrix: exact."""
    e = np.zeros((x.shape[-1], len(idx)), np.float32)
    for j, i in enumerate(idx):
        e[i, j] = 1.0
    return g.matmul(x, e)


def place_last(g, x, idx, n):
    """A [..., n] tensor holding x's last axis at positions idx, zeros elsewhere."""
    e = np.zeros((x.shape[-1], n), np.float32)
    for j, i in enumerate(idx):
        e[j, i] = 1.0
    return g.matmul(x, e)


def row(g, x2d, t):
    """Row t of a 2-D tensor, as [1, cols]."""
    e = np.zeros((1, x2d.shape[0]), np.float32)
    e[0, t] = 1.0
    return g.matmul(e, x2d)


def repeat_heads(g, x, reps):
    """repeat_interleave along axis 1 of a rank-4 tensor by a multiplication with ones."""
    if reps == 1:
        return x
    b, h, t, d = x.shape
    y = g.mul(g.reshape(x, (b, h, 1, t * d)), g.const(np.ones((1, 1, reps, 1), np.float32)))
    return g.reshape(y, (b, h * reps, t, d))


# ---- cases -------------------------------------------------------------------------

class Case:
    def __init__(self, name, kernel):
        self.name, self.kernel = PREFIX + name, kernel
        self.inputs = []  # (name, array, dtype)
        self.act = None   # an activation @main applies to the one result (ACTS)
        self.act_shape = None  # ... after a reshape to this shape

    def add_input(self, name, array, dtype="f32"):
        self.inputs.append((name, np.asarray(array, dtype=NP_DTYPE[dtype]), dtype))

    def write(self, comp, refs):
        d = os.path.join(CASES, self.name)
        os.makedirs(d, exist_ok=True)
        main = G("main")
        args = [main.arg(a.shape, dt) for (_, a, dt) in self.inputs]
        res = main.invoke(comp, args)
        if self.act:
            # the activation a channel norm's kernel runs as its epilogue
            kind, attrs, fn = ACTS[self.act]
            y = res[0]
            if self.act_shape:
                y = main.reshape(y, self.act_shape)
            y = main.op(kind, [y], [y.shape], attrs=attrs)[0]
            if self.act_shape:
                y = main.reshape(y, res[0].shape)
            res = [y]
            refs = [fn(refs[0])]
        main.output(*res)
        out_names = comp.composite[2]
        assert len(out_names) == len(res) == len(refs)
        lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<coreai-model format="1">', comp.xml(), main.xml(),
                 '  <entrypoint name="main" graph="main">']
        lines += [f'    <input name="{n}"/>' for (n, _, _) in self.inputs]
        lines += [f'    <output name="{n}"/>' for n in out_names]
        lines += ["  </entrypoint>", "</coreai-model>"]
        with open(os.path.join(d, "model.xml"), "w") as f:
            f.write("\n".join(lines) + "\n")
        for (n, a, _) in self.inputs:
            np.save(os.path.join(d, f"in_{n}.npy"), a)
        for n, r in zip(out_names, refs):
            r = np.asarray(r.detach().numpy() if isinstance(r, torch.Tensor) else r, dtype=np.float64)
            assert r.shape == tuple(v.shape for v in comp.outs)[out_names.index(n)], (self.name, n, r.shape)
            np.save(os.path.join(d, f"ref_{n}.npy"), r.astype(np.float32))
        with open(os.path.join(d, "kernel.txt"), "w") as f:
            f.write(self.kernel + "\n")


# name: (op kind, attributes, float64 reference)
ACTS = {
    "relu": ("coreai.relu", [], torch.relu),
    "gelu": ("coreai.gelu", [("approximate", "str", "none")], lambda t: F.gelu(t)),
    "gelu_tanh": ("coreai.gelu", [("approximate", "str", "tanh")], lambda t: F.gelu(t, approximate="tanh")),
    "silu": ("coreai.silu", [], F.silu),
}


def t64(a):
    return torch.from_numpy(np.asarray(a).astype(np.float64))


def decl(op, ins, outs, attrs):
    return (op, ins, outs, attrs + [("version", "si64", "1")])


def comp_graph(name, op, case, attrs, outs=("output",)):
    """The composite graph with one argument per case input, named like it."""
    g = G(f"blk.{name}_0c0ffee", decl(op, [n for (n, _, _) in case.inputs], list(outs), attrs))
    vals = {n: g.arg(a.shape, dt, name=n) for (n, a, dt) in case.inputs}
    return g, vals


# ---- normalisations ---------------------------------------------------------------

def norm_core(g, x, axes, eps, center):
    if center:
        x = g.sub(x, g.rmean(x, axes))
    inv = g.rsqrt(g.add(g.rmean(g.mul(x, x), axes), float(np.float32(eps))))
    return g.mul(x, inv)


def case_rms_norm(rng, name, shape, scale_shape, axes):
    c = Case(name, "coreai_rms_norm_f32")
    x = f32(rng.standard_normal(shape) * 2 + 0.3)
    c.add_input("input", x)
    if scale_shape is not None:
        c.add_input("scale", f32(rng.standard_normal(scale_shape)))
    eps = float(np.float32(1e-5))
    ax = " ".join(map(str, axes))
    g, v = comp_graph(name, "rms_norm", c, [("axes", "si64" if len(axes) == 1 else "si64[]", ax), ("eps", "f32", repr(eps))])
    y = norm_core(g, v["input"], axes, eps, False)
    if scale_shape is not None:
        y = g.mul(y, v["scale"])
    g.output(y)
    X = t64(x)
    ref = X / torch.sqrt((X * X).mean(dim=axes, keepdim=True) + eps)
    if scale_shape is not None:
        ref = ref * t64(c.inputs[1][1])
    c.write(g, [ref])


def case_layer_norm(rng, name, shape, axes, names, affine):
    c = Case(name, "coreai_layer_norm_f32")
    x = f32(rng.standard_normal(shape) * 3 + 1.5)
    c.add_input("input", x)
    nshape = tuple(shape[a] for a in sorted(a % len(shape) for a in axes))
    if affine:
        c.add_input(names[0], f32(rng.standard_normal(nshape)))
        c.add_input(names[1], f32(rng.standard_normal(nshape)))
    eps = float(np.float32(1e-5))
    g, v = comp_graph(name, "layer_norm", c, [("axes", "si64[]", " ".join(map(str, axes))), ("eps", "f32", repr(eps))])
    y = norm_core(g, v["input"], axes, eps, True)
    if affine:
        y = g.add(g.mul(y, v[names[0]]), v[names[1]])
    g.output(y)
    ref = F.layer_norm(t64(x), nshape, t64(c.inputs[1][1]) if affine else None,
                       t64(c.inputs[2][1]) if affine else None, eps)
    c.write(g, [ref])


def per_channel(g, vec, rank):
    """[C] viewed as [C, 1, ...] so it broadcasts over (N, C, *spatial)."""
    return g.reshape(vec, (vec.shape[0],) + (1,) * (rank - 2))


def case_batch_norm(rng, name, shape, affine, act=None, act_shape=None):
    c = Case(name, "coreai_batch_norm_f32")
    c.act, c.act_shape = act, act_shape
    C = shape[1]
    x = f32(rng.standard_normal(shape) * 2 + 1)
    c.add_input("input", x)
    if affine:
        c.add_input("gamma", f32(rng.standard_normal(C)))
        c.add_input("beta", f32(rng.standard_normal(C)))
    mean, var = f32(rng.standard_normal(C)), f32(rng.uniform(0.5, 2.0, C))
    c.add_input("mean", mean)
    c.add_input("variance", var)
    eps = float(np.float32(1e-3))
    g, v = comp_graph(name, "batch_norm", c, [("eps", "f32", repr(eps))])
    r = len(shape)
    y = g.mul(g.sub(v["input"], per_channel(g, v["mean"], r)),
              g.rsqrt(g.add(per_channel(g, v["variance"], r), eps)))
    if affine:
        y = g.add(g.mul(y, per_channel(g, v["gamma"], r)), per_channel(g, v["beta"], r))
    g.output(y)
    ref = F.batch_norm(t64(x), t64(mean), t64(var), t64(c.inputs[1][1]) if affine else None,
                       t64(c.inputs[2][1]) if affine else None, training=False, eps=eps)
    c.write(g, [ref])


def case_group_norm(rng, name, shape, groups, affine, with_channels, act=None, act_shape=None):
    c = Case(name, "coreai_group_norm_f32")
    c.act, c.act_shape = act, act_shape
    N, C = shape[0], shape[1]
    x = f32(rng.standard_normal(shape) * 2 - 0.7)
    c.add_input("input", x)
    if affine:
        c.add_input("weight", f32(rng.standard_normal(C)))
        c.add_input("bias", f32(rng.standard_normal(C)))
    eps = float(np.float32(1e-5))
    attrs = [("num_groups", "si64", str(groups))]
    if with_channels:
        attrs.append(("num_channels", "si64", str(C)))
    g, v = comp_graph(name, "group_norm", c, attrs + [("eps", "f32", repr(eps))])
    r = len(shape)
    grouped = g.reshape(v["input"], (N, groups, int(np.prod(shape[1:])) // groups))
    y = g.reshape(norm_core(g, grouped, [-1], eps, True), shape)
    if affine:
        y = g.add(g.mul(y, per_channel(g, v["weight"], r)), per_channel(g, v["bias"], r))
    g.output(y)
    ref = F.group_norm(t64(x), groups, t64(c.inputs[1][1]) if affine else None,
                       t64(c.inputs[2][1]) if affine else None, eps)
    c.write(g, [ref])


def case_instance_norm(rng, name, shape, affine, act=None, act_shape=None):
    c = Case(name, "coreai_instance_norm_f32")
    c.act, c.act_shape = act, act_shape
    C = shape[1]
    x = f32(rng.standard_normal(shape) * 1.5 + 2)
    c.add_input("input", x)
    if affine:
        c.add_input("gamma", f32(rng.standard_normal(C)))
        c.add_input("beta", f32(rng.standard_normal(C)))
    eps = float(np.float32(1e-5))
    g, v = comp_graph(name, "instance_norm", c, [("eps", "f32", repr(eps))])
    r = len(shape)
    y = norm_core(g, v["input"], list(range(2, r)), eps, True)
    if affine:
        y = g.add(g.mul(y, per_channel(g, v["gamma"], r)), per_channel(g, v["beta"], r))
    g.output(y)
    ref = F.instance_norm(t64(x), weight=t64(c.inputs[1][1]) if affine else None,
                          bias=t64(c.inputs[2][1]) if affine else None, eps=eps)
    c.write(g, [ref])


# ---- small ATen-derived ops -------------------------------------------------------

def case_pixel_shuffle(rng, name, shape, r):
    c = Case(name, "coreai_pixel_shuffle_f32")
    x = f32(rng.standard_normal(shape))
    c.add_input("input", x)
    g, v = comp_graph(name, "pixel_shuffle", c, [("upscale_factor", "si64", str(r))])
    lead = shape[:-3]
    C, H, W = shape[-3] // (r * r), shape[-2], shape[-1]
    n = int(np.prod(lead)) if lead else 1
    y = g.reshape(v["input"], (n, C, r, r, H, W))
    y = g.transpose(y, (0, 1, 4, 2, 5, 3))
    g.output(g.reshape(y, tuple(lead) + (C, H * r, W * r)))
    c.write(g, [F.pixel_shuffle(t64(x), r)])


def case_log_softmax(rng, name, shape, axis):
    c = Case(name, "coreai_log_softmax_f32")
    x = f32(rng.uniform(-3, 3, shape))
    c.add_input("input", x)
    g, v = comp_graph(name, "log_softmax", c, [("axis", "si64", str(axis))])
    lse = log_halley(g, g.rsum(g.exp(v["input"]), [axis]))
    g.output(g.sub(v["input"], lse))
    c.write(g, [F.log_softmax(t64(x), dim=axis)])


def case_hard_sigmoid(rng, name, shape):
    c = Case(name, "coreai_hard_sigmoid_f32")
    x = f32(rng.uniform(-5, 5, shape))
    c.add_input("input", x)
    g, v = comp_graph(name, "hard_sigmoid", c, [])
    t = g.relu(g.add(v["input"], 3.0))
    m = g.sub(6.0, g.relu(g.sub(6.0, t)))  # min(t, 6)
    g.output(g.div(m, 6.0))
    c.write(g, [F.hardsigmoid(t64(x))])


def case_swiglu(rng, name, shape, packed):
    c = Case(name, "coreai_swiglu_f32")
    if packed:
        x = f32(rng.standard_normal(shape) * 2)
        c.add_input("input", x)
        g, v = comp_graph(name, "swiglu", c, [])
        half = shape[-1] // 2
        gate = take_last(g, v["input"], list(range(half)))
        val = take_last(g, v["input"], list(range(half, 2 * half)))
        X = t64(x)
        ref = F.silu(X[..., :half]) * X[..., half:]
    else:
        gt, vl = f32(rng.standard_normal(shape) * 2), f32(rng.standard_normal(shape))
        c.add_input("gate", gt)
        c.add_input("value", vl)
        g, v = comp_graph(name, "swiglu", c, [])
        gate, val = v["gate"], v["value"]
        ref = F.silu(t64(gt)) * t64(vl)
    g.output(g.mul(g.mul(gate, sigmoid(g, gate)), val))
    c.write(g, [ref])


def case_vector_norm(rng, name, shape, ord_, axes, keep, attr_axes=True, mag=1.0):
    c = Case(name, "coreai_linalg_vector_norm_f32")
    x = mag * rng.uniform(0.2, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    x = f32(x)
    c.add_input("input", x)
    r = len(shape)
    red = sorted(a % r for a in axes) if axes else list(range(r))  # None or [] reduce everything
    ord_text = "inf" if ord_ == math.inf else "-inf" if ord_ == -math.inf else repr(float(ord_))
    attrs = [("ord", "f64", ord_text)]
    if attr_axes:
        attrs.append(("axes", "si64[]", " ".join(map(str, axes if axes is not None else []))))
    attrs.append(("keep_dim", "bool", "true" if keep else "false"))
    g, v = comp_graph(name, "linalg_vector_norm", c, attrs)
    xv = v["input"]
    kept = [a for a in range(r) if a not in red]
    out_shape = tuple(1 if a in red else shape[a] for a in range(r) if keep or a not in red)
    if ord_ in (math.inf, -math.inf):
        # move the reduced axes last and take the max / min pairwise over them
        t = g.transpose(xv, kept + red) if kept + red != list(range(r)) else xv
        n = int(np.prod([shape[a] for a in red]))
        rest = int(np.prod([shape[a] for a in kept])) if kept else 1
        m2 = g.reshape(absv(g, t), (rest, n))
        best = take_last(g, m2, [0])
        for j in range(1, n):
            col = take_last(g, m2, [j])
            if ord_ == math.inf:
                best = g.add(best, g.relu(g.sub(col, best)))
            else:
                best = g.sub(best, g.relu(g.sub(best, col)))
        y = g.reshape(best, out_shape)
    else:
        a = absv(g, xv)
        if ord_ == 2:
            y = g.sqrt(g.rsum(g.mul(xv, xv), red, keep))
        elif ord_ == 1:
            y = g.rsum(a, red, keep)
        else:
            p = g.exp(g.mul(log_halley(g, a), float(ord_)))
            y = g.exp(g.div(log_halley(g, g.rsum(p, red, keep)), float(ord_)))
    g.output(y)
    ref = torch.linalg.vector_norm(t64(x), ord=ord_, dim=axes if axes is not None else None, keepdim=keep)
    c.write(g, [ref])


# ---- rope ---------------------------------------------------------------------------

def rope_pairs(rot, interleaved):
    half = rot // 2
    if interleaved:
        return [2 * i for i in range(half)], [2 * i + 1 for i in range(half)]
    return list(range(half)), list(range(half, rot))


def rope_apply(g, x, cos, sin, rot, interleaved):
    """y = x * C + (x R) * S with C, S the cos / sin spread to the pair slots."""
    D = x.shape[-1]
    p1, p2 = rope_pairs(rot, interleaved)
    e = np.zeros((rot // 2, D), np.float32)
    for i in range(rot // 2):
        e[i, p1[i]] = e[i, p2[i]] = 1.0
    passthrough = np.zeros(D, np.float32)
    passthrough[rot:] = 1.0
    cfull = g.add(g.matmul(cos, e), g.const(passthrough))
    sfull = g.matmul(sin, e)
    rmat = np.zeros((D, D), np.float32)
    for i in range(rot // 2):
        rmat[p2[i], p1[i]] = -1.0  # slot p1 gets -x2
        rmat[p1[i], p2[i]] = 1.0   # slot p2 gets  x1
    return g.add(g.mul(x, cfull), g.mul(g.matmul(x, rmat), sfull))


def rope_reference(x, cos, sin, rot, interleaved):
    """The reference rotation in float64: x1 / x2 halves or even / odd, concatenated back."""
    X = t64(x)
    half = rot // 2
    if interleaved:
        x1, x2 = X[..., 0:rot:2], X[..., 1:rot:2]
    else:
        x1, x2 = X[..., :half], X[..., half:rot]
    y1, y2 = cos * x1 - sin * x2, sin * x1 + cos * x2
    if interleaved:
        y = torch.stack((y1, y2), dim=-1).reshape(*X.shape[:-1], rot)
    else:
        y = torch.cat((y1, y2), dim=-1)
    return torch.cat((y, X[..., rot:]), dim=-1)


def f32_freqs(half, base, freqs=None):
    """freq_i * scale is formed by the caller; this is freq_i in f32 as the reference makes it."""
    if freqs is not None:
        return torch.from_numpy(freqs)
    exponent = torch.arange(half, dtype=torch.float32) / half
    return 1.0 / torch.pow(base, exponent)


def case_rope(rng, name, shape, mode, interleaved=False, dims=None, scale=None, base=None, pos_dtype="i64",
              with_freqs=False, offset_rank=0, offset_attr=None):
    """mode: cossin | position_ids | offset | none (positions from the offset attribute)."""
    c = Case(name, "coreai_rope_f32")
    D, T = shape[-1], shape[-2]
    rot = D if dims is None or dims >= D else dims
    half = rot // 2
    x = f32(rng.standard_normal(shape))
    c.add_input("input", x)
    attrs = []
    if scale is not None:
        attrs.append(("scale", "f32", repr(float(np.float32(scale)))))
    if base is not None:
        attrs.append(("base", "f32", repr(float(np.float32(base)))))
    if dims is not None:
        attrs.append(("dims", "si64", str(dims)))
    attrs.append(("interleaved", "bool", "true" if interleaved else "false"))
    if offset_attr is not None:
        attrs.append(("offset", "si64", str(offset_attr)))
    sc = np.float32(1.0 if scale is None else scale)
    bs = 1e4 if base is None else float(np.float32(base))
    if mode == "cossin":
        cshape = (T, half) if len(shape) != 4 else (shape[0], 1, T, half)
        ang = f32(rng.uniform(-4, 4, cshape))
        cs, sn = f32(np.cos(ang)), f32(np.sin(ang))
        c.add_input("cos", cs)
        c.add_input("sin", sn)
        g, v = comp_graph(name, "rope", c, attrs)
        g.output(rope_apply(g, v["input"], v["cos"], v["sin"], rot, interleaved))
        c.write(g, [rope_reference(x, t64(cs), t64(sn), rot, interleaved)])
        return
    B = shape[0]
    pos = None
    if mode == "position_ids":
        p = rng.integers(0, 20, (B, T))
        c.add_input("position_ids", p, pos_dtype)
        pos = c.inputs[-1][1]
    elif mode == "offset":
        oshape = () if offset_rank == 0 else (B,)
        o = rng.integers(0, 12, oshape)
        c.add_input("offset", o, pos_dtype)
        pos = c.inputs[-1][1]
    fq = None
    if with_freqs:
        fq = f32(rng.uniform(0.05, 1.0, half))
        c.add_input("freqs", fq)
    g, v = comp_graph(name, "rope", c, attrs)
    # positions as f32, in the reference's broadcast layout
    if mode == "position_ids":
        pf = g.cast(v["position_ids"], "f32") if pos_dtype != "f32" else v["position_ids"]
        pv = g.reshape(pf, (B, 1, T, 1))
        P = torch.from_numpy(pos.astype(np.float32)).reshape(B, 1, T)
    elif mode == "offset":
        of = g.cast(v["offset"], "f32") if pos_dtype != "f32" else v["offset"]
        ar = g.const(np.arange(T, dtype=np.float32))
        if offset_rank == 0:
            pv = g.reshape(g.add(of, ar), (T, 1))
            P = (torch.from_numpy(np.asarray(pos, np.int64)) + torch.arange(T)).float()
        else:
            pv = g.reshape(g.add(g.reshape(of, (B, 1, 1)), ar), (B, 1, T, 1))
            P = (torch.from_numpy(np.asarray(pos, np.int64)).reshape(B, 1, 1) + torch.arange(T)).float()
    else:
        off = offset_attr or 0
        pv = g.const(f32(np.arange(T) + off).reshape(T, 1))
        P = (torch.arange(T) + off).float()
    if with_freqs:
        fs = g.mul(v["freqs"], float(sc))
    else:
        fs = g.const(f32_freqs(half, bs).numpy())
        fs = g.mul(fs, float(sc))
    angle = g.mul(pv, fs)
    cosv, sinv = sincos(g, angle)
    g.output(rope_apply(g, v["input"], cosv, sinv, rot, interleaved))
    # oracle: the reference's f32 angle, then cos / sin and the rotation in float64
    FS = f32_freqs(half, bs, fq) * torch.tensor(sc)
    A = (P.unsqueeze(-1) * FS).double()
    c.write(g, [rope_reference(x, torch.cos(A), torch.sin(A), rot, interleaved)])


# ---- scaled_dot_product_attention ------------------------------------------------------

def sdpa_rule(tq, tk, causal, window):
    """The reference's visibility matrix (lower-right) or None."""
    q = np.arange(tq)[:, None]
    k = np.arange(tk)[None, :]
    if window <= 0:
        return (q >= k - (tk - tq)) if causal else None
    left_out = q >= k - (tk - tq - window)
    if causal:
        return np.logical_xor(q >= k - (tk - tq), left_out)
    right_out = q <= k - (tk - tq + window)
    return np.logical_not(np.logical_or(left_out, right_out))


def case_sdpa(rng, name, b, hq, hk, hv, tq, tk, d, dv, causal=False, window=0, scale=None, mask=None,
              sinks=False, kv_batch=None):
    """mask: None | 'bool' | 'float' (0/1 values, read as nonzero = attend)."""
    c = Case(name, "coreai_sdpa_f32")
    kb = b if kv_batch is None else kv_batch
    q = f32(rng.uniform(-1.5, 1.5, (b, hq, tq, d)))
    k = f32(rng.uniform(-1.5, 1.5, (kb, hk, tk, d)))
    vv = f32(rng.uniform(-1, 1, (kb, hv, tk, dv)))
    c.add_input("query", q)
    c.add_input("key", k)
    c.add_input("value", vv)
    vis = None
    if mask is not None:
        vis = rng.random((tq, tk)) < 0.6
        vis[np.arange(tq), rng.integers(0, tk, tq)] = True  # no row fully masked
        c.add_input("attn_mask", vis if mask == "bool" else f32(vis), "bool" if mask == "bool" else "f32")
    if sinks:
        c.add_input("sinks", f32(rng.uniform(-1, 2, hq)))
    attrs = [("is_causal", "bool", "true" if causal else "false"), ("window_size", "si64", str(window))]
    if scale is not None:
        attrs.insert(0, ("scale", "f32", repr(float(np.float32(scale)))))
    g, v = comp_graph(name, "scaled_dot_product_attention", c, attrs)
    sc = float(np.float32(scale if scale is not None else d ** -0.5))
    kr = repeat_heads(g, v["key"], hq // hk)
    vr = repeat_heads(g, v["value"], hq // hv)
    scores = g.matmul(g.mul(v["query"], sc), kr, tb=True)
    rule = sdpa_rule(tq, tk, causal, window) if mask is None else None
    if mask is not None:
        m = g.cast(v["attn_mask"], "f32") if mask == "bool" else v["attn_mask"]
        scores = g.add(scores, g.mul(g.sub(1.0, m), -1e4))
    elif rule is not None:
        assert rule.any(axis=1).all()
        scores = g.add(scores, g.const(f32(np.where(rule, 0.0, -1e4))))
    if sinks:
        e1 = np.concatenate([np.eye(tk, dtype=np.float32), np.zeros((tk, 1), np.float32)], axis=1)
        e2 = np.zeros((1, tk + 1), np.float32)
        e2[0, tk] = 1.0
        col = g.add(g.reshape(v["sinks"], (1, hq, 1, 1)), g.const(np.zeros((b, hq, tq, 1), np.float32)))
        ext = g.add(g.matmul(scores, e1), g.matmul(col, e2))
        w = g.matmul(g.softmax(ext, -1), f32(e1.T))
    else:
        w = g.softmax(scores, -1)
    g.output(g.matmul(w, vr))
    # oracle
    Q, K, Vv = t64(q), t64(k), t64(vv)
    K = K.repeat_interleave(hq // hk, dim=1)
    Vv = Vv.repeat_interleave(hq // hv, dim=1)
    S = torch.matmul(Q * sc, K.transpose(-1, -2))
    vis_m = vis if vis is not None else rule
    if vis_m is not None:
        S = S - 1e4 * torch.from_numpy(np.logical_not(vis_m).astype(np.float64))
    if sinks:
        sk = t64(c.inputs[-1][1]).reshape(1, hq, 1, 1).expand(b, hq, tq, 1)
        Wt = torch.softmax(torch.cat([S, sk], dim=-1), dim=-1)[..., :tk]
    else:
        Wt = torch.softmax(S, dim=-1)
    c.write(g, [torch.matmul(Wt, Vv)])


# ---- gather_mm ----------------------------------------------------------------------------

def gather_body(g, x, idx, nba):
    """index_select along axis nba as a one-hot matmul: onehot = relu(1 - |i - e|), exact on integers."""
    E = x.shape[nba]
    n = int(np.prod(idx.shape)) if idx.shape else 1
    fi = g.reshape(g.cast(idx, "f32"), (n, 1))
    diff = g.sub(fi, g.const(np.arange(E, dtype=np.float32).reshape(1, E)))
    onehot = g.relu(g.sub(1.0, absv(g, diff)))
    pre = int(np.prod(x.shape[:nba])) if nba else 1
    post = int(np.prod(x.shape[nba + 1:]))
    sel = g.matmul(onehot, g.reshape(x, (pre, E, post)))  # [pre, n, post]
    return g.reshape(sel, tuple(x.shape[:nba]) + tuple(idx.shape) + tuple(x.shape[nba + 1:]))


def case_gather_mm(rng, name, lshape, rshape, nba=0, lidx=None, ridx=None, idx_dtype="i32"):
    c = Case(name, "coreai_gather_mm_f32")
    lhs, rhs = f32(rng.standard_normal(lshape)), f32(rng.standard_normal(rshape))
    c.add_input("lhs", lhs)
    c.add_input("rhs", rhs)
    if lidx is not None:
        c.add_input("lhs_indices", rng.integers(0, lshape[nba], lidx), idx_dtype)
    if ridx is not None:
        c.add_input("rhs_indices", rng.integers(0, rshape[nba], ridx), idx_dtype)
    g, v = comp_graph(name, "gather_mm", c, [("num_batch_axes", "si64", str(nba))])
    a = gather_body(g, v["lhs"], v["lhs_indices"], nba) if lidx is not None else v["lhs"]
    b = gather_body(g, v["rhs"], v["rhs_indices"], nba) if ridx is not None else v["rhs"]
    g.output(g.matmul(a, b))

    def gather(xa, ia):
        X = t64(xa)
        I = torch.from_numpy(np.asarray(ia, np.int64))
        flat = torch.index_select(X, nba, I.flatten())
        return flat.reshape(X.shape[:nba] + I.shape + X.shape[nba + 1:])

    inp = {n: a_ for (n, a_, _) in c.inputs}
    A = gather(lhs, inp["lhs_indices"]) if lidx is not None else t64(lhs)
    Bm = gather(rhs, inp["rhs_indices"]) if ridx is not None else t64(rhs)
    c.write(g, [torch.matmul(A, Bm)])


# ---- gated_delta_update ------------------------------------------------------------------

def case_gated_delta(rng, name, b, hk, hv, t, dk, dv, l2):
    c = Case(name, "coreai_gated_delta_update_f32")
    amp = 1.0 if l2 else 0.5 / math.sqrt(dk)
    q = f32(rng.uniform(-amp, amp, (b, hk, t, dk)))
    k = f32(rng.uniform(-amp, amp, (b, hk, t, dk)))
    vv = f32(rng.uniform(-1, 1, (b, hv, t, dv)))
    gg = f32(np.log(1.0 / (1.0 + np.exp(-rng.standard_normal((b, hv, t))))))  # log-sigmoid: negative
    be = f32(rng.uniform(0, 1, (b, hv, t)))
    s0 = f32(rng.uniform(-0.5, 0.5, (b, hv, dk, dv)))
    for n, a in (("query", q), ("key", k), ("value", vv), ("g", gg), ("beta", be), ("initial_state", s0)):
        c.add_input(n, a)
    g, v = comp_graph(name, "gated_delta_update", c, [("use_qk_l2_norm", "bool", "true" if l2 else "false")],
                      outs=("output_0", "output_1"))
    qv, kv = v["query"], v["key"]
    if l2:
        qv = g.mul(qv, g.rsqrt(g.add(g.rsum(g.mul(qv, qv), [-1]), 1e-6)))
        kv = g.mul(kv, g.rsqrt(g.add(g.rsum(g.mul(kv, kv), [-1]), 1e-6)))
    qv = g.mul(qv, float(np.float32(dk ** -0.5)))
    qv, kv = repeat_heads(g, qv, hv // hk), repeat_heads(g, kv, hv // hk)
    decay = g.reshape(g.exp(v["g"]), (b, hv, t, 1))
    beta = g.reshape(v["beta"], (b, hv, t, 1))
    S = v["initial_state"]
    acc = None
    for step in range(t):
        e = np.zeros((1, t), np.float32)
        e[0, step] = 1.0
        qt, kt, vt = g.matmul(e, qv), g.matmul(e, kv), g.matmul(e, v["value"])
        S = g.mul(S, g.matmul(e, decay))
        delta = g.mul(g.sub(vt, g.matmul(kt, S)), g.matmul(e, beta))
        S = g.add(S, g.matmul(kt, delta, ta=True))
        y = g.matmul(g.const(f32(e.T)), g.matmul(qt, S))  # [B, Hv, T, Dv] with row `step` only
        acc = y if acc is None else g.add(acc, y)
    g.output(g.transpose(acc, (0, 2, 1, 3)), S)
    # oracle
    Q, K, Vv, Gg, Be, St = (t64(a) for a in (q, k, vv, gg, be, s0))
    if l2:
        Q = Q / torch.sqrt((Q * Q).sum(-1, keepdim=True) + 1e-6)
        K = K / torch.sqrt((K * K).sum(-1, keepdim=True) + 1e-6)
    Q = Q * float(np.float32(dk ** -0.5))
    Q, K = Q.repeat_interleave(hv // hk, dim=1), K.repeat_interleave(hv // hk, dim=1)
    out = torch.zeros(b, t, hv, dv, dtype=torch.float64)
    for step in range(t):
        St = St * torch.exp(Gg[:, :, step])[..., None, None]
        kvm = (St * K[:, :, step, :, None]).sum(-2)
        delta = (Vv[:, :, step] - kvm) * Be[:, :, step, None]
        St = St + K[:, :, step, :, None] * delta[:, :, None, :]
        out[:, step] = (St * Q[:, :, step, :, None]).sum(-2)
    c.write(g, [out, St])


# ---- rnn / gru / lstm --------------------------------------------------------------------

def recurrent_case(rng, name, kind, S, B, I, H, bidir, act="tanh"):
    kernel = {"rnn": "coreai_rnn_f32", "gru": "coreai_gru_f32", "lstm": "coreai_lstm_f32"}[kind]
    c = Case(name, kernel)
    gates = {"rnn": 1, "gru": 3, "lstm": 4}[kind]
    D = 2 if bidir else 1
    x = f32(rng.uniform(-1, 1, (S, B, I)))
    h0 = f32(rng.uniform(-1, 1, (B, D * H)))
    c.add_input("x", x)
    c.add_input("initial_h", h0)
    if kind == "lstm":
        c.add_input("initial_c", f32(rng.uniform(-1, 1, (B, D * H))))
    # PyTorch weights per direction, then the composite's layout of them
    tw = []
    for _ in range(D):
        wih = f32(rng.uniform(-0.5, 0.5, (gates * H, I)))
        whh = f32(rng.uniform(-0.5, 0.5, (gates * H, H)))
        bih = f32(rng.uniform(-0.5, 0.5, gates * H))
        bhh = f32(rng.uniform(-0.5, 0.5, gates * H))
        tw.append((wih, whh, bih, bhh))
    ifog = np.concatenate([np.arange(0, H), np.arange(H, 2 * H), np.arange(3 * H, 4 * H), np.arange(2 * H, 3 * H)])
    for di, suffix in enumerate(["", "_back"][:D]):
        wih, whh, bih, bhh = tw[di]
        if kind == "lstm":  # PyTorch i, f, g, o -> composite i, f, o, g; one bias
            c.add_input("weight_ih" + suffix, wih[ifog])
            c.add_input("weight_hh" + suffix, whh[ifog])
            c.add_input("bias" + suffix, f32(bih + bhh)[ifog])
        elif kind == "rnn":
            c.add_input("weight_ih" + suffix, wih)
            c.add_input("weight_hh" + suffix, whh)
            c.add_input("bias" + suffix, f32(bih + bhh))
        else:
            c.add_input("weight_ih" + suffix, wih)
            c.add_input("weight_hh" + suffix, whh)
            c.add_input("bias_ih" + suffix, bih)
            c.add_input("bias_hh" + suffix, bhh)
    attrs = [("direction", "str", "bidirectional" if bidir else "forward"), ("output_sequence", "bool", "true")]
    if kind == "rnn":
        attrs.append(("activation", "str", act))
    elif kind == "gru":
        attrs += [("recurrent_activation", "str", "sigmoid"), ("activation", "str", "tanh"),
                  ("reset_after", "bool", "true")]
    else:
        attrs += [("recurrent_activation", "str", "sigmoid"), ("cell_activation", "str", "tanh"),
                  ("activation", "str", "tanh")]
    outs = ("output", "h_n", "c_n") if kind == "lstm" else ("output", "h_n")
    g, v = comp_graph(name, kind, c, attrs, outs=outs)
    x2 = g.reshape(v["x"], (S, B * I))
    seqs, hns, cns = [], [], []
    for di, suffix in enumerate(["", "_back"][:D]):
        cols = list(range(di * H, (di + 1) * H))
        h = take_last(g, v["initial_h"], cols)
        cc = take_last(g, v["initial_c"], cols) if kind == "lstm" else None
        wih, whh = v["weight_ih" + suffix], v["weight_hh" + suffix]
        acc = None
        for step in range(S):
            t = S - 1 - step if di == 1 else step
            xt = g.reshape(row(g, x2, t), (B, I))
            if kind == "rnn":
                a = g.add(g.linear(xt, wih, v["bias" + suffix]), g.linear(h, whh))
                h = g.relu(a) if act == "relu" else tanh(g, a)
            elif kind == "gru":
                gi = g.linear(xt, wih, v["bias_ih" + suffix])
                gh = g.linear(h, whh, v["bias_hh" + suffix])
                part = [list(range(j * H, (j + 1) * H)) for j in range(3)]
                r = sigmoid(g, g.add(take_last(g, gi, part[0]), take_last(g, gh, part[0])))
                z = sigmoid(g, g.add(take_last(g, gi, part[1]), take_last(g, gh, part[1])))
                n = tanh(g, g.add(take_last(g, gi, part[2]), g.mul(r, take_last(g, gh, part[2]))))
                h = g.add(g.mul(g.sub(1.0, z), n), g.mul(z, h))
            else:
                gs = g.add(g.linear(xt, wih, v["bias" + suffix]), g.linear(h, whh))
                part = [take_last(g, gs, list(range(j * H, (j + 1) * H))) for j in range(4)]
                i_, f_, o_ = sigmoid(g, part[0]), sigmoid(g, part[1]), sigmoid(g, part[2])
                cc = g.add(g.mul(f_, cc), g.mul(i_, tanh(g, part[3])))
                h = g.mul(o_, tanh(g, cc))
            et = np.zeros((S, 1), np.float32)
            et[t, 0] = 1.0
            y = g.matmul(et, g.reshape(h, (1, B * H)))
            acc = y if acc is None else g.add(acc, y)
        seqs.append(g.reshape(acc, (S, B, H)))
        hns.append(h)
        cns.append(cc)

    def join(parts):
        if D == 1:
            return parts[0]
        return g.add(place_last(g, parts[0], list(range(H)), 2 * H), place_last(g, parts[1], list(range(H, 2 * H)), 2 * H))

    results = [join(seqs), join(hns)] + ([join(cns)] if kind == "lstm" else [])
    g.output(*results)
    # oracle: torch.nn in float64 with the PyTorch-layout weights
    mod = {"rnn": lambda: torch.nn.RNN(I, H, nonlinearity=act, bidirectional=bidir),
           "gru": lambda: torch.nn.GRU(I, H, bidirectional=bidir),
           "lstm": lambda: torch.nn.LSTM(I, H, bidirectional=bidir)}[kind]().double()
    with torch.no_grad():
        for di, suffix in enumerate(["", "_reverse"][:D]):
            wih, whh, bih, bhh = tw[di]
            if kind != "gru":  # the composite sees one summed f32 bias; give it all to b_ih
                bih, bhh = f32(bih + bhh), np.zeros_like(bhh)
            getattr(mod, "weight_ih_l0" + suffix).copy_(t64(wih))
            getattr(mod, "weight_hh_l0" + suffix).copy_(t64(whh))
            getattr(mod, "bias_ih_l0" + suffix).copy_(t64(bih))
            getattr(mod, "bias_hh_l0" + suffix).copy_(t64(bhh))
        hh = t64(h0).reshape(B, D, H).transpose(0, 1).contiguous()
        if kind == "lstm":
            cc0 = t64(c.inputs[2][1]).reshape(B, D, H).transpose(0, 1).contiguous()
            out, (hn, cn) = mod(t64(x), (hh, cc0))
            refs = [out, hn.transpose(0, 1).reshape(B, D * H), cn.transpose(0, 1).reshape(B, D * H)]
        else:
            out, hn = mod(t64(x), hh)
            refs = [out, hn.transpose(0, 1).reshape(B, D * H)]
    c.write(g, refs)


# ---- all cases -------------------------------------------------------------------------

def main():
    torch.set_grad_enabled(False)
    rng = np.random.default_rng(20260511)
    if os.path.isdir(CASES):
        for d in os.listdir(CASES):
            if d.startswith(PREFIX):
                shutil.rmtree(os.path.join(CASES, d))

    case_rms_norm(rng, "rms_norm_last", (2, 5, 16), (16,), [-1])
    case_rms_norm(rng, "rms_norm_heads", (2, 4, 3, 8), (4, 1, 8), [-1])
    case_rms_norm(rng, "rms_norm_noscale", (3, 5, 7), None, [-2, -1])
    case_layer_norm(rng, "layer_norm_wb", (3, 5, 7), [-1], ("weight", "bias"), True)
    case_layer_norm(rng, "layer_norm_gamma_beta", (2, 3, 4, 6), [-2, -1], ("gamma", "beta"), True)
    case_layer_norm(rng, "layer_norm_plain", (4, 9), [-1], None, False)

    case_batch_norm(rng, "batch_norm_4d", (2, 3, 4, 5), True)
    case_batch_norm(rng, "batch_norm_2d", (5, 4), True)
    case_batch_norm(rng, "batch_norm_stats_only", (2, 3, 7), False)
    case_batch_norm(rng, "batch_norm_5d", (1, 2, 3, 2, 4), True)
    case_group_norm(rng, "group_norm_3", (2, 6, 4, 3), 3, True, True)
    case_group_norm(rng, "group_norm_1", (2, 4, 5), 1, True, False)
    case_group_norm(rng, "group_norm_per_channel", (1, 6, 7), 6, False, True)
    case_instance_norm(rng, "instance_norm_2d", (2, 3, 4, 5), True)
    case_instance_norm(rng, "instance_norm_1d", (2, 4, 6), False)
    case_instance_norm(rng, "instance_norm_3d", (1, 2, 3, 2, 4), True)

    case_pixel_shuffle(rng, "pixel_shuffle_2", (1, 8, 3, 2), 2)
    case_pixel_shuffle(rng, "pixel_shuffle_3", (2, 9, 2, 3), 3)
    case_pixel_shuffle(rng, "pixel_shuffle_rank3", (4, 2, 5), 2)
    case_pixel_shuffle(rng, "pixel_shuffle_rank5", (2, 1, 4, 2, 2), 2)
    case_log_softmax(rng, "log_softmax_last", (3, 7), -1)
    case_log_softmax(rng, "log_softmax_mid", (2, 5, 4), 1)
    case_log_softmax(rng, "log_softmax_first", (4, 3, 2), 0)
    case_hard_sigmoid(rng, "hard_sigmoid", (3, 17))
    case_hard_sigmoid(rng, "hard_sigmoid_4d", (2, 2, 3, 5))
    case_swiglu(rng, "swiglu_two", (2, 3, 8), False)
    case_swiglu(rng, "swiglu_packed", (4, 10), True)
    case_vector_norm(rng, "vector_norm_l2_all", (3, 4, 5), 2.0, None, False, attr_axes=False)
    case_vector_norm(rng, "vector_norm_l1_keep", (3, 4, 5), 1.0, [1], True)
    case_vector_norm(rng, "vector_norm_inf", (3, 4, 5), math.inf, [0, 2], False)
    case_vector_norm(rng, "vector_norm_neg_inf", (2, 3, 4), -math.inf, [-1], True)
    case_vector_norm(rng, "vector_norm_l3", (2, 3, 4), 3.0, [1, 2], False)
    case_vector_norm(rng, "vector_norm_neg_frac", (4, 6), -1.5, [-1], False)
    case_vector_norm(rng, "vector_norm_half", (2, 5), 0.5, [], True, mag=0.1)  # [] = every axis

    case_rope(rng, "rope_cossin", (2, 3, 5, 8), "cossin")
    case_rope(rng, "rope_cossin_interleaved_partial", (4, 6, 10), "cossin", interleaved=True, dims=6)
    case_rope(rng, "rope_position_ids", (2, 3, 5, 8), "position_ids", pos_dtype="i64")
    case_rope(rng, "rope_position_ids_freqs", (2, 2, 4, 6), "position_ids", interleaved=True, pos_dtype="i32",
              with_freqs=True, scale=0.5)
    case_rope(rng, "rope_position_ids_partial", (1, 2, 6, 10), "position_ids", dims=4, pos_dtype="f32", base=500.0)
    case_rope(rng, "rope_offset_batch", (3, 2, 4, 8), "offset", offset_rank=1, pos_dtype="i32")
    case_rope(rng, "rope_offset_scalar", (2, 5, 12), "offset", offset_rank=0, pos_dtype="i64", dims=8,
              interleaved=True, scale=2.0)
    case_rope(rng, "rope_default", (2, 2, 7, 8), "none", offset_attr=3, base=500000.0, scale=0.5)
    case_rope(rng, "rope_freqs_only", (3, 6, 4), "none", with_freqs=True)

    case_sdpa(rng, "sdpa_mha", 2, 4, 4, 4, 5, 7, 11, 13)
    case_sdpa(rng, "sdpa_gqa_causal", 2, 4, 2, 2, 5, 7, 8, 8, causal=True)
    case_sdpa(rng, "sdpa_mqa_window", 1, 4, 1, 1, 6, 9, 4, 5, window=2)
    case_sdpa(rng, "sdpa_causal_window", 2, 2, 2, 1, 7, 7, 6, 3, causal=True, window=3, scale=1.5)
    case_sdpa(rng, "sdpa_bool_mask", 2, 4, 2, 4, 5, 7, 4, 6, mask="bool", causal=True)
    case_sdpa(rng, "sdpa_float_mask_sinks", 1, 4, 4, 2, 3, 6, 5, 4, mask="float", sinks=True)
    case_sdpa(rng, "sdpa_gqa_sinks_causal", 2, 6, 3, 3, 4, 9, 8, 8, causal=True, sinks=True)
    case_sdpa(rng, "sdpa_decode_long", 1, 2, 1, 1, 1, 70, 8, 8, causal=True, scale=0.7)
    case_sdpa(rng, "sdpa_prefill_tiles", 1, 2, 2, 2, 70, 70, 4, 4, causal=True, window=20)
    case_sdpa(rng, "sdpa_kv_batch_broadcast", 2, 2, 1, 1, 3, 5, 4, 4, kv_batch=1)

    case_gather_mm(rng, "gather_mm_moe", (2, 3, 1, 1, 8), (5, 8, 7), ridx=(2, 3, 2))
    case_gather_mm(rng, "gather_mm_fused", (2, 3, 1, 1, 8), (2, 5, 8, 7), nba=1, ridx=(2, 3, 2), idx_dtype="i64")
    case_gather_mm(rng, "gather_mm_lhs", (6, 2, 3), (3, 5), lidx=(4,))
    case_gather_mm(rng, "gather_mm_both", (3, 7, 2, 4), (3, 5, 4, 3), nba=1, lidx=(2, 3), ridx=(2, 3), idx_dtype="i64")
    case_gather_mm(rng, "gather_mm_plain", (4, 3, 5), (5, 6))

    case_gated_delta(rng, "gated_delta_l2", 1, 2, 2, 3, 8, 8, True)
    case_gated_delta(rng, "gated_delta_grouped", 1, 1, 2, 4, 5, 6, False)
    case_gated_delta(rng, "gated_delta_batch", 2, 2, 4, 2, 4, 3, True)

    recurrent_case(rng, "rnn_tanh", "rnn", 4, 2, 3, 5, False)
    recurrent_case(rng, "rnn_relu_bidir", "rnn", 3, 3, 4, 2, True, act="relu")
    recurrent_case(rng, "gru_forward", "gru", 4, 2, 3, 4, False)
    recurrent_case(rng, "gru_bidir", "gru", 3, 1, 2, 3, True)
    recurrent_case(rng, "lstm_forward", "lstm", 4, 2, 3, 4, False)
    recurrent_case(rng, "lstm_bidir", "lstm", 3, 3, 2, 3, True)

    # a channel norm followed by an activation, which the kernel applies as
    # its epilogue (docs/runtime-kernels.md); a generator of their own, so
    # the cases above keep their inputs
    rng = np.random.default_rng(20260728)
    case_instance_norm(rng, "instance_norm_relu", (1, 4, 9, 130), True, act="relu")
    case_batch_norm(rng, "batch_norm_silu", (2, 3, 4, 5), True, act="silu", act_shape=(6, 20))
    case_group_norm(rng, "group_norm_gelu", (2, 6, 4, 3), 3, True, True, act="gelu")
    case_batch_norm(rng, "batch_norm_gelu_tanh", (3, 5, 7), False, act="gelu_tanh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
