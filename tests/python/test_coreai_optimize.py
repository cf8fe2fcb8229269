"""AIProgram.optimize(): constant folding (numerically equal to NumPy in the
op's dtype), identity casts, dead code and unreachable graphs."""
import math

import numpy as np
import pytest

from coreai import AIProgram
from coreai._compiler import ir
from coreai._compiler.dialects import coreai as cai
from coreai._compiler.dtypes import small_float_from_f64


def T(shape, dtype=ir.f32):
    return ir.TensorType(shape, dtype)


def module_with(build, arg_types=((4,),), n_out=None):
    m = ir.Module()
    g = m.add_graph(ir.Graph("main"))
    args = [g.add_argument(T(*a) if isinstance(a[0], tuple) else T(a)) for a in arg_types]
    with ir.InsertionPoint(g):
        outs = build(*args)
    outs = outs if isinstance(outs, list) else [outs]
    g.set_outputs(outs)
    m.add_entrypoint("main", g, inputs=[f"x{i}" for i in range(len(args))],
                     outputs=[f"y{i}" for i in range(len(outs))])
    return AIProgram(m), g


def kinds(g):
    return [op.kind for op in g.operations]


def test_fold_chain_to_one_constant():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    w = rng.standard_normal((4, 2)).astype(np.float32)

    def build(x):
        c = cai.matmul(cai.mul(cai.add(cai.constant(a), cai.constant(b)), 2.0), cai.constant(w))
        return cai.add(x, cai.reduce_sum(c, [0]))

    p, g = module_with(build, [(2,)])
    x = rng.standard_normal(2).astype(np.float32)
    before = p.interpret("main", {"x0": x})["y0"]
    assert p.optimize() is p
    assert kinds(g) == ["coreai.constant", "coreai.add"]
    folded = g.operations[0].data
    want = ((a + b) * np.float32(2)).astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(folded, want.sum(0), rtol=1e-6)
    assert folded.dtype == np.float32 and folded.shape == (2,)
    np.testing.assert_array_equal(p.interpret("main", {"x0": x})["y0"], before)
    assert p.last_optimize_stats["folded"] == 4   # add, mul, matmul, reduce_sum


def test_fold_is_exact_for_f32_arithmetic():
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(64).astype(np.float32) * 1e3 for _ in range(2))
    ops = {cai.add: np.add, cai.sub: np.subtract, cai.mul: np.multiply, cai.div: np.divide,
           cai.maximum: np.maximum, cai.minimum: np.minimum}
    for fn, ref in ops.items():
        p, g = module_with(lambda x: cai.add(x, fn(cai.constant(a), cai.constant(b))), [(64,)])
        p.optimize()
        np.testing.assert_array_equal(g.operations[0].data, ref(a, b))   # f32-rounded, bit for bit
    p, g = module_with(lambda x: cai.add(x, cai.sqrt(cai.constant(np.abs(a)))), [(64,)])
    p.optimize()
    np.testing.assert_array_equal(g.operations[0].data, np.sqrt(np.abs(a)))


def test_fold_integer_and_bool_semantics():
    big = np.array([2 ** 31 - 1, -5, 7], np.int32)

    def build(x):
        wrapped = cai.add(cai.constant(big), np.int32(1))                     # i32 wraps
        neg = cai.neg(cai.constant(np.array([3, -4], np.int64)))
        cmp = cai.logical_and(cai.greater(cai.constant(big), 0), cai.equal(cai.constant(big), 7))
        sel = cai.where(cmp, cai.constant(np.ones(3, np.float32)), -1.0)
        return [cai.add(x, sel), wrapped, neg, cmp]

    p, g = module_with(build, [(3,)])
    p.optimize()
    consts = [op.data for op in g.operations if op.is_constant]
    assert kinds(g).count("coreai.constant") == 4 and kinds(g).count("coreai.add") == 1
    out = p.interpret("main", {"x0": np.zeros(3, np.float32)})
    assert out["y1"].tolist() == [-2 ** 31, -4, 8]
    assert out["y2"].tolist() == [-3, 4]
    assert out["y3"].tolist() == [False, False, True]
    assert out["y0"].tolist() == [-1.0, -1.0, 1.0]
    assert len(consts) == 4


def test_fold_casts():
    vals = np.array([1.5, -2.7, math.nan, 1e10, -1e10, 0.0, 65520.0, 1 + 2 ** -8], np.float32)

    def build(x):
        c = cai.constant(vals)
        return [x, cai.cast(c, ir.i32), cai.cast(c, ir.i64), cai.cast(c, ir.bool_), cai.cast(c, ir.f16),
                cai.cast(c, ir.bf16), cai.cast(cai.constant(np.array([2 ** 40 + 3, -1], np.int64)), ir.i32),
                cai.cast(cai.constant(np.array([2 ** 53 + 1], np.int64)), ir.f32)]

    p, g = module_with(build, [(1,)])
    p.optimize()
    assert "coreai.cast" not in kinds(g)
    out = p.interpret("main", {"x0": np.zeros(1, np.float32)})
    assert out["y1"].tolist() == [1, -2, 0, 2 ** 31 - 1, -2 ** 31, 0, 65520, 1]      # trunc, NaN->0, saturate
    assert out["y2"].tolist() == [1, -2, 0, 10 ** 10, -10 ** 10, 0, 65520, 1]
    assert out["y3"].tolist() == [True, True, True, True, True, False, True, True]
    with np.errstate(all="ignore"):
        assert out["y4"].view(np.uint16).tolist() == vals.astype(np.float16).view(np.uint16).tolist()
    assert out["y5"].tolist() == small_float_from_f64(vals.astype(np.float64), ir.bf16)[0].tolist()
    assert out["y6"].tolist() == [3, -1]                                            # i64 -> i32 wraps
    assert out["y7"].tolist() == [np.float32(2 ** 53)]


def test_fold_data_movement():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

    def build(x):
        c = cai.constant(a)
        t = cai.transpose(c, [2, 0, 1])
        s = cai.slice(t, [1, 0, 0], [4, 2, 3], [2, 1, 2])
        r = cai.reshape(s, (-1,))
        cat = cai.concat([r, cai.constant(np.array([100.0], np.float32))], 0)
        gat = cai.gather(cat, np.array([[0, -1], [2, 3]]), 0)
        pad = cai.pad(gat, [1, 0, 0, 1], value=-1.0)
        io = cai.cast(cai.iota(3, 1.0, 0.5, ir.f32), ir.f32)
        fl = cai.fill((2,), 7.0, ir.i64)
        return [x, pad, io, fl, cai.broadcast_to(cai.constant(np.float32(3)), (2, 2))]

    p, g = module_with(build, [(1,)])
    p.optimize()
    assert all(op.is_constant for op in g.operations)
    out = p.interpret("main", {"x0": np.zeros(1, np.float32)})
    r = a.transpose(2, 0, 1)[1:4:2, 0:2, 0:3:2].reshape(-1)
    cat = np.concatenate([r, [100.0]])
    gat = cat[np.array([[0, -1], [2, 3]])]
    np.testing.assert_array_equal(out["y1"], np.pad(gat, ((1, 0), (0, 1)), constant_values=-1))
    np.testing.assert_array_equal(out["y2"], [1.0, 1.5, 2.0])
    assert out["y3"].tolist() == [7, 7] and out["y3"].dtype == np.int64
    np.testing.assert_array_equal(out["y4"], np.full((2, 2), 3.0, np.float32))


def test_no_fold_when_it_would_add_much_data():
    def build(x):
        big = cai.broadcast_to(cai.constant(np.float32(2)), (100, 100))
        f = cai.fill((64, 128), 1.0, ir.f32)
        return [cai.add(x, big), cai.mul(f, 2.0)]

    p, g = module_with(build, [(100, 100)])
    p.optimize()
    assert "coreai.broadcast_to" in kinds(g) and "coreai.fill" in kinds(g)


def test_no_fold_of_invalid_gather_or_kernels():
    def build(x):
        bad = cai.gather(cai.constant(np.arange(3, dtype=np.float32)), np.array([5]), 0)
        (k,) = cai.elementwise_kernel([cai.constant(np.ones(1, np.float32))], "k", "o[id] = i[id];", ["i"], ["o"],
                                      [T((1,))])
        return [cai.add(x, bad), cai.add(x, k)]

    p, g = module_with(build, [(1,)])
    p.optimize()
    assert "coreai.gather" in kinds(g) and "coreai.elementwise_kernel" in kinds(g)


def test_dead_code_and_identity_casts():
    def build(x):
        cai.exp(x)                                 # unused
        unused_const = cai.constant(np.ones(100, np.float32))
        cai.add(x, cai.reduce_sum(unused_const, []))
        cai.constant([1, 1], dtype=np.uint32)      # host constant: only for attributes
        same = cai.cast(x, ir.f32)                 # identity
        return cai.relu(same)

    p, g = module_with(build)
    p.optimize()
    assert kinds(g) == ["coreai.relu"]
    assert g.operations[0].operands[0] is g.arguments[0]
    assert p.last_optimize_stats["dead"] >= 4 and p.last_optimize_stats["casts"] == 1


def test_identity_cast_on_output_is_bypassed():
    p, g = module_with(lambda x: cai.cast(x, ir.f32))
    p.optimize()
    assert g.operations == [] and g.outputs == [g.arguments[0]]
    p.verify()


def test_unreachable_graphs_removed():
    m = ir.Module()

    def unary(name, fn, callee=None):
        g = m.add_graph(ir.Graph(name, private=True))
        x = g.add_argument(T((2,)))
        with ir.InsertionPoint(g):
            y = fn(x) if callee is None else cai.invoke(callee, [fn(x)])[0]
        g.set_outputs([y])
        return g

    leaf = unary("leaf", cai.exp)
    mid = unary("mid", cai.neg, leaf)
    unary("orphan", cai.relu, leaf)
    only_dead = unary("only_dead_caller", cai.sqrt)
    main = m.add_graph(ir.Graph("main"))
    x = main.add_argument(T((2,)))
    with ir.InsertionPoint(main):
        (y,) = cai.invoke(mid, [x])
        cai.invoke(only_dead, [x])            # result unused: the call is dead, then the graph
    main.set_outputs([y])
    m.add_entrypoint("main", main, inputs=["x"], outputs=["y"])
    p = AIProgram(m).optimize()
    assert [g.name for g in m.graphs] == ["leaf", "mid", "main"]
    assert p.last_optimize_stats["graphs"] == 2
    out = p.interpret("main", {"x": np.array([1.0, 2.0], np.float32)})["y"]
    np.testing.assert_allclose(out, np.exp(-np.array([1.0, 2.0])), rtol=1e-6)


def test_optimize_keeps_state_updates():
    m = ir.Module()
    g = m.add_graph(ir.Graph("main"))
    s = g.add_argument(T((3,)))
    x = g.add_argument(T((3,)))
    with ir.InsertionPoint(g):
        one = cai.add(cai.constant(np.ones(3, np.float32)), cai.constant(np.zeros(3, np.float32)))
        s2 = cai.add(s, one)
        y = cai.mul(x, s)
    g.set_outputs([s2, y])
    m.add_entrypoint("main", g, states=["s"], inputs=["x"], outputs=["y"])
    p = AIProgram(m).optimize()
    assert kinds(g) == ["coreai.constant", "coreai.add", "coreai.mul"]
    out = p.interpret("main", {"x": np.full(3, 2.0, np.float32)}, states={"s": np.ones(3, np.float32)})
    assert out["s"].tolist() == [2.0] * 3 and out["y"].tolist() == [2.0] * 3


def test_optimize_without_entrypoints_keeps_graphs():
    m = ir.Module()
    g = m.add_graph(ir.Graph("lib"))
    x = g.add_argument(T((2,)))
    g.set_outputs([x])
    AIProgram(m).optimize()
    assert m.graphs == [g]


@pytest.mark.parametrize("seed", range(3))
def test_fold_matches_unfolded_interpretation(seed):
    """Random constant subgraphs: folding changes nothing the program computes."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((5, 3)).astype(np.float32)

    def build(x):
        ca, cb = cai.constant(a), cai.constant(b)
        h = cai.softmax(cai.matmul(ca, cb), -1)
        h = cai.gelu(cai.sigmoid(cai.tanh(h)), approximate="tanh" if seed % 2 else "none")
        h = cai.clamp(cai.add(cai.log(cai.add(h, 1.0)), cai.erf(h)), min=0.1, max=0.9)
        return cai.mul(x, h)

    p, g = module_with(build, [(3, 3)])
    x = rng.standard_normal((3, 3)).astype(np.float32)
    before = p.interpret("main", {"x0": x})["y0"]
    p.optimize()
    assert kinds(g) == ["coreai.constant", "coreai.mul"]
    np.testing.assert_array_equal(p.interpret("main", {"x0": x})["y0"], before)
