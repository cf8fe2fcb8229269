"""The NumPy reference semantics (used by constant folding and
AIProgram.interpret) against independent oracles: PyTorch where it has the
op, plain NumPy float64 otherwise."""
import math

import numpy as np
import pytest

from coreai import AIProgram
from coreai._compiler import ir
from coreai._compiler.dialects import coreai as cai

torch = pytest.importorskip("torch")
F = torch.nn.functional


def run(build, *inputs):
    m = ir.Module()
    g = m.add_graph(ir.Graph("main"))
    args = [g.add_argument(ir.TensorType(x.shape, ir.DType.from_numpy(x.dtype))) for x in inputs]
    with ir.InsertionPoint(g):
        outs = build(*args)
    outs = outs if isinstance(outs, list) else [outs]
    g.set_outputs(outs)
    m.add_entrypoint("main", g, inputs=[f"x{i}" for i in range(len(args))],
                     outputs=[f"y{i}" for i in range(len(outs))])
    res = AIProgram(m).interpret("main", {f"x{i}": x for i, x in enumerate(inputs)})
    return [res[f"y{i}"] for i in range(len(outs))]


rng = np.random.default_rng(7)


@pytest.mark.parametrize("n,c,h,w,o,k,s,p,d,groups", [
    (1, 3, 9, 9, 4, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    (2, 4, 10, 7, 6, (3, 2), (2, 1), (1, 0, 1, 0), (1, 2), 2),
    (1, 4, 8, 8, 4, (3, 3), (2, 2), (1, 1, 1, 1), (2, 2), 4),
    (1, 2, 6, 6, 2, (1, 1), (3, 3), (0, 0, 0, 0), (1, 1), 1),
])
def test_conv2d(n, c, h, w, o, k, s, p, d, groups):
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((o, c // groups) + k).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    (y,) = run(lambda a: cai.conv2d(a, wt, b, strides=s, pads=p, dilations=d, groups=groups), x)
    ref = F.conv2d(torch.from_numpy(x).double(), torch.from_numpy(wt).double(), torch.from_numpy(b).double(),
                   stride=s, padding=(p[0], p[1]), dilation=d, groups=groups).numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_conv2d_asymmetric_pads():
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    wt = rng.standard_normal((3, 2, 2, 3)).astype(np.float32)
    (y,) = run(lambda a: cai.conv2d(a, wt, pads=(1, 0, 2, 3)), x)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 2), (0, 3)))
    ref = F.conv2d(torch.from_numpy(xp).double(), torch.from_numpy(wt).double()).numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("h,k,s,p,d,ceil", [
    (8, 2, 2, 0, 1, False), (7, 3, 2, 1, 1, True), (9, 3, 2, 1, 2, True), (5, 2, 3, 1, 1, True),
    (10, 3, 3, 0, 1, True),
])
def test_max_pool2d(h, k, s, p, d, ceil):
    x = rng.standard_normal((2, 3, h, h + 1)).astype(np.float32)
    (y,) = run(lambda a: cai.max_pool2d(a, k, strides=s, pads=p, dilations=d, ceil_mode=ceil), x)
    ref = F.max_pool2d(torch.from_numpy(x), k, s, p, d, ceil_mode=ceil).numpy()
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("h,k,s,p,ceil,cip", [
    (8, 2, 2, 0, False, True), (7, 3, 2, 1, True, True), (7, 3, 2, 1, True, False), (6, 3, 2, 1, False, False),
    (5, 2, 3, 1, True, True),
])
def test_avg_pool2d(h, k, s, p, ceil, cip):
    x = rng.standard_normal((1, 2, h, h)).astype(np.float32)
    (y,) = run(lambda a: cai.avg_pool2d(a, k, strides=s, pads=p, ceil_mode=ceil, count_include_pad=cip), x)
    ref = F.avg_pool2d(torch.from_numpy(x).double(), k, s, p, ceil_mode=ceil, count_include_pad=cip).numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)


def test_sumpool2d_is_adaptive_avg_pool_times_window():
    x = rng.standard_normal((1, 3, 8, 6)).astype(np.float32)
    (y,) = run(lambda a: cai.div(cai.sumpool2d(a, kernel_size=np.array([4, 2], np.uint32),
                                               strides=np.array([4, 2], np.uint32),
                                               dilation=cai.constant([1, 1], dtype=np.uint32)),
                                 cai.cast(8.0, ir.f32)), x)
    ref = F.adaptive_avg_pool2d(torch.from_numpy(x).double(), (2, 3)).numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)


def test_sumpool2d_dilated_padded():
    x = rng.standard_normal((1, 1, 7, 7)).astype(np.float32)
    (y,) = run(lambda a: cai.sumpool2d(a, [3, 3], [2, 2], [2, 2], pads=(1, 1, 1, 1)), x)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ones = torch.ones(1, 1, 3, 3, dtype=torch.float64)
    ref = F.conv2d(torch.from_numpy(xp), ones, stride=2, dilation=2).numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)


def test_unary_functions():
    x = rng.standard_normal(200).astype(np.float32) * 3
    t = torch.from_numpy(x).double()
    fns = {cai.relu: torch.relu, cai.tanh: torch.tanh, cai.sigmoid: torch.sigmoid, cai.silu: F.silu,
           cai.erf: torch.erf, cai.sin: torch.sin, cai.cos: torch.cos, cai.floor: torch.floor, cai.ceil: torch.ceil,
           cai.exp: torch.exp, cai.neg: torch.neg, cai.abs: torch.abs,
           (lambda v: cai.gelu(v)): F.gelu, (lambda v: cai.gelu(v, approximate="tanh")):
               (lambda v: F.gelu(v, approximate="tanh")),
           (lambda v: cai.clamp(v, min=-1.0, max=0.5)): (lambda v: torch.clamp(v, -1.0, 0.5))}
    for fn, ref in fns.items():
        (y,) = run(fn, x)
        np.testing.assert_allclose(y, ref(t).numpy(), rtol=2e-7, atol=1e-7)
    pos = np.abs(x) + 0.1
    tp = torch.from_numpy(pos).double()
    for fn, ref in {cai.log: torch.log, cai.sqrt: torch.sqrt, cai.rsqrt: torch.rsqrt,
                    cai.reciprocal: torch.reciprocal}.items():
        (y,) = run(fn, pos)
        np.testing.assert_allclose(y, ref(tp).numpy(), rtol=2e-7)


def test_softmax_argmax_reductions():
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    t = torch.from_numpy(x).double()
    y = run(lambda a: [cai.softmax(a, -2), cai.argmax(a, 1), cai.argmax(a, -1, keep_dims=True),
                       cai.reduce_max(a, [0, 2]), cai.reduce_min(a, [], keep_dims=True), cai.reduce_mean(a, [1])], x)
    np.testing.assert_allclose(y[0], torch.softmax(t, -2).numpy(), rtol=1e-6)
    np.testing.assert_array_equal(y[1], torch.argmax(t, 1).numpy())
    np.testing.assert_array_equal(y[2], torch.argmax(t, -1, keepdim=True).numpy())
    np.testing.assert_array_equal(y[3], t.amax((0, 2)).numpy().astype(np.float32))
    assert y[4].shape == (1, 1, 1) and y[4].item() == x.min()
    np.testing.assert_allclose(y[5], t.mean(1).numpy(), rtol=1e-6)


def test_argmax_takes_first_maximum():
    x = np.array([[1.0, 3.0, 3.0, 2.0]], np.float32)
    (y,) = run(lambda a: cai.argmax(a, 1), x)
    assert y.tolist() == [1]


def test_casts_match_torch():
    x = np.array([1.5, -2.5, 3.999, -0.4, 1e-40, 3.4e38, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -math.inf], np.float32)
    bf, h = run(lambda a: [cai.cast(a, ir.bf16), cai.cast(a, ir.f16)], x)
    want_bf = torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    assert bf.tolist() == want_bf.tolist()
    want_h = torch.from_numpy(x).to(torch.float16).numpy()
    assert h.view(np.uint16).tolist() == want_h.view(np.uint16).tolist()
    finite = x[np.isfinite(x) & (np.abs(x) < 1e9)]
    (i,) = run(lambda a: cai.cast(a, ir.i32), finite)
    assert i.tolist() == torch.from_numpy(finite).to(torch.int32).tolist()


def test_integer_ops_and_comparisons():
    a = np.array([5, -3, 7, 0], np.int64)
    b = np.array([2, 2, -8, 0], np.int64)
    y = run(lambda p, q: [cai.add(p, q), cai.sub(p, q), cai.mul(p, q), cai.maximum(p, q), cai.minimum(p, q),
                          cai.less(p, q), cai.greater_equal(p, q), cai.abs(p)], a, b)
    assert [v.tolist() for v in y] == [(a + b).tolist(), (a - b).tolist(), (a * b).tolist(),
                                       np.maximum(a, b).tolist(), np.minimum(a, b).tolist(), (a < b).tolist(),
                                       (a >= b).tolist(), np.abs(a).tolist()]
    assert all(v.dtype in (np.int64, np.bool_) for v in y)


def test_pow_div_where_broadcast():
    a = np.abs(rng.standard_normal((2, 1, 3))).astype(np.float32) + 0.5
    b = rng.standard_normal((4, 1)).astype(np.float32)
    c = rng.standard_normal((4, 3)) > 0
    y = run(lambda p, q, r: [cai.pow(p, q), cai.div(p, q), cai.where(r, p, q)], a, b, c)
    A, B = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(y[0], A ** B, rtol=1e-6)
    np.testing.assert_allclose(y[1], A / B, rtol=1e-6)
    np.testing.assert_array_equal(y[2], np.where(c, a, b))


def test_matmul_linear_batch_broadcast():
    a = rng.standard_normal((2, 1, 3, 4)).astype(np.float32)
    b = rng.standard_normal((5, 4, 6)).astype(np.float32)
    w = rng.standard_normal((7, 6)).astype(np.float32)
    y = run(lambda p, q: [cai.matmul(p, q), cai.linear(cai.matmul(p, q), w, np.ones(7, np.float32)),
                          cai.matmul(q, p, transpose_a=True, transpose_b=True)], a, b)
    mm = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(y[0], mm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y[1], mm @ w.T.astype(np.float64) + 1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y[2], np.swapaxes(b, -1, -2).astype(np.float64) @ np.swapaxes(a, -1, -2),
                               rtol=1e-5, atol=1e-6)
