"""coreai._compiler.dialects.coreai: result types of every builder and the
errors for operands the verifier rejects (docs/model-format.md op table)."""
import numpy as np
import pytest

from coreai._compiler import ir
from coreai._compiler.dialects import coreai


@pytest.fixture
def g():
    graph = ir.Graph("main")
    with ir.InsertionPoint(graph):
        yield graph


def arg(g, shape, dtype=ir.f32):
    return g.add_argument(ir.TensorType(shape, dtype))


def T(shape, dtype=ir.f32):
    return ir.TensorType(shape, dtype)


# ---------------------------------------------------------------- constants

def test_constant_dtypes(g):
    assert coreai.constant(1.5).type == T(())
    assert coreai.constant(3).type == T((), ir.i64)
    assert coreai.constant(True).type == T((), ir.bool_)
    assert coreai.constant([[1.0, 2.0]]).type == T((1, 2))
    assert coreai.constant(np.zeros((2, 2), np.float64)).type == T((2, 2))  # float64 narrowed to f32
    assert coreai.constant(np.zeros(3, np.int32)).type == T((3,), ir.i32)
    assert coreai.constant(np.zeros(3, np.float16)).type == T((3,), ir.f16)
    assert coreai.constant([1, 2], dtype="i32").type == T((2,), ir.i32)
    c = coreai.constant([1.0, 2.5], dtype=ir.bf16)
    assert c.type == T((2,), ir.bf16) and c.constant_value.tolist() == [0x3F80, 0x4020]
    assert coreai.constant(np.array([1, 0]), dtype=ir.bool_).constant_value.tolist() == [True, False]


def test_constant_from_torch(g):
    torch = pytest.importorskip("torch")
    assert coreai.constant(torch.ones(2, 3)).type == T((2, 3))
    assert coreai.constant(torch.ones(2, dtype=torch.bfloat16)).type == T((2,), ir.bf16)
    assert coreai.constant(torch.arange(3)).type == T((3,), ir.i64)
    assert coreai.constant(torch.ones(2), dtype=ir.f16).type == T((2,), ir.f16)


def test_constant_errors(g):
    with pytest.raises(ValueError, match="non-integer"):
        coreai.constant([1.5], dtype=ir.i64)
    with pytest.raises(ValueError, match="out of range"):
        coreai.constant([70000.0], dtype=ir.f16)
    with pytest.raises(ValueError):
        coreai.constant(["a"])
    with pytest.raises(ValueError, match="rank"):
        coreai.constant(np.zeros((1,) * 9))


def test_constant_data_is_read_only(g):
    src = np.arange(4, dtype=np.float32)
    c = coreai.constant(src)
    src[0] = 99.0
    assert c.constant_value[0] == 0.0
    with pytest.raises(ValueError):
        c.constant_value[0] = 1.0


def test_host_constants(g):
    h = coreai.constant([1, 1], dtype=np.uint32)
    assert h.is_host_constant and h.constant_value.dtype == np.uint32
    assert h.type == T((2,), ir.i64)
    with pytest.raises(ValueError, match="out of range"):
        coreai.constant([-1], dtype=np.uint32)
    # without an insertion point a host constant is just detached data
    g2 = ir.Graph("other")
    with ir.InsertionPoint(g2):
        pass
    assert coreai.constant([2, 2], dtype=np.uint8).is_host_constant


def test_cast(g):
    x = arg(g, (2, 3))
    assert coreai.cast(x, ir.f16).type == T((2, 3), ir.f16)
    assert coreai.cast(x, "bool").type == T((2, 3), ir.bool_)
    assert coreai.cast(x, np.int32).owner.kind == "coreai.cast"
    c = coreai.cast(9.0, x.type.element_type)  # the seed's coreai.cast(float(k*k), dtype)
    assert c.is_constant and c.type == T(()) and c.constant_value == 9.0
    with pytest.raises(ValueError, match="unsigned"):
        coreai.cast(x, np.uint32)


# ---------------------------------------------------------------- elementwise

@pytest.mark.parametrize("fn", [coreai.add, coreai.sub, coreai.mul, coreai.maximum, coreai.minimum,
                                coreai.broadcasting_add, coreai.broadcasting_sub, coreai.broadcasting_mul])
def test_binary_numeric(g, fn):
    a, b = arg(g, (2, 1, 4)), arg(g, (3, 1))
    assert fn(a, b).type == T((2, 3, 4))
    i, j = arg(g, (4,), ir.i32), arg(g, (1,), ir.i32)
    assert fn(i, j).type == T((4,), ir.i32)
    with pytest.raises(ValueError, match=r"\(tensor<2x1x4xf32>, tensor<4xi32>\): operand dtypes differ"):
        fn(a, i)
    with pytest.raises(ValueError, match="do not broadcast"):
        fn(a, arg(g, (5,)))
    with pytest.raises(ValueError, match="operand 0 is bool"):
        fn(arg(g, (1,), ir.bool_), arg(g, (1,), ir.bool_))
    with pytest.raises(ValueError, match="operand 0 is f16"):
        fn(arg(g, (1,), ir.f16), arg(g, (1,), ir.f16))


@pytest.mark.parametrize("fn", [coreai.div, coreai.pow, coreai.broadcasting_divide])
def test_binary_float(g, fn):
    assert fn(arg(g, (2, 3)), arg(g, (3,))).type == T((2, 3))
    with pytest.raises(ValueError, match=fn.__name__ if fn is not coreai.broadcasting_divide else "coreai.div"):
        fn(arg(g, (2,), ir.i64), arg(g, (2,), ir.i64))


def test_scalar_operands_take_the_other_dtype(g):
    x = arg(g, (2,), ir.i32)
    y = coreai.add(x, 3)
    c = y.owner.operands[1]
    assert c.is_constant and c.type == T((), ir.i32)
    z = coreai.mul(2.0, arg(g, (3,)))
    assert z.owner.operands[0].type == T(())
    with pytest.raises(ValueError, match="non-integer"):
        coreai.add(x, 0.5)
    with pytest.raises(ValueError, match="cannot tell the dtype"):
        coreai.add(1.0, 2.0)


def test_failed_op_leaves_no_constant_behind(g):
    x = arg(g, (2,), ir.bool_)
    with pytest.raises(ValueError):
        coreai.add(x, 1)
    assert g.operations == []


@pytest.mark.parametrize("fn", [coreai.equal, coreai.not_equal])
def test_equality(g, fn):
    assert fn(arg(g, (2, 1)), arg(g, (3,))).type == T((2, 3), ir.bool_)
    assert fn(arg(g, (2,), ir.bool_), True).type == T((2,), ir.bool_)
    with pytest.raises(ValueError, match="dtypes differ"):
        fn(arg(g, (2,)), arg(g, (2,), ir.i64))


@pytest.mark.parametrize("fn", [coreai.less, coreai.less_equal, coreai.greater, coreai.greater_equal])
def test_ordering(g, fn):
    assert fn(arg(g, (2,), ir.i64), 0).type == T((2,), ir.bool_)
    with pytest.raises(ValueError, match="bool"):
        fn(arg(g, (2,), ir.bool_), arg(g, (2,), ir.bool_))


def test_logical(g):
    a, b = arg(g, (2, 1), ir.bool_), arg(g, (3,), ir.bool_)
    assert coreai.logical_and(a, b).type == T((2, 3), ir.bool_)
    assert coreai.logical_or(a, True).type == T((2, 1), ir.bool_)
    assert coreai.logical_not(a).type == T((2, 1), ir.bool_)
    with pytest.raises(ValueError, match="coreai.logical_and"):
        coreai.logical_and(arg(g, (2,)), arg(g, (2,)))
    with pytest.raises(ValueError, match="coreai.logical_not"):
        coreai.logical_not(arg(g, (2,)))


def test_where(g):
    c, a, b = arg(g, (2, 1), ir.bool_), arg(g, (1, 3)), arg(g, (3,))
    assert coreai.where(c, a, b).type == T((2, 3))
    assert coreai.where(c, a, 0.0).type == T((2, 3))
    with pytest.raises(ValueError, match="the condition is f32"):
        coreai.where(a, a, b)
    with pytest.raises(ValueError, match="dtypes differ"):
        coreai.where(c, a, arg(g, (3,), ir.i32))
    with pytest.raises(ValueError, match="broadcast"):
        coreai.where(c, a, arg(g, (4,)))


UNARY_FLOAT = [coreai.relu, coreai.rsqrt, coreai.sqrt, coreai.exp, coreai.log, coreai.tanh, coreai.sigmoid,
               coreai.silu, coreai.erf, coreai.sin, coreai.cos, coreai.reciprocal, coreai.floor, coreai.ceil]


@pytest.mark.parametrize("fn", UNARY_FLOAT)
def test_unary_float(g, fn):
    x = arg(g, (2, 3))
    assert fn(x).type == x.type and fn(x).owner.kind == "coreai." + fn.__name__
    with pytest.raises(ValueError, match=rf"coreai\.{fn.__name__}\(tensor<2xi32>\): operand 0 is i32"):
        fn(arg(g, (2,), ir.i32))


@pytest.mark.parametrize("fn", [coreai.neg, coreai.abs])
def test_unary_numeric(g, fn):
    assert fn(arg(g, (2,), ir.i64)).type == T((2,), ir.i64)
    with pytest.raises(ValueError):
        fn(arg(g, (2,), ir.bool_))
    with pytest.raises(ValueError, match="must be a Value"):
        fn(1.0)


def test_gelu_clamp(g):
    x = arg(g, (4,))
    y = coreai.gelu(x)
    assert y.type == x.type and y.owner.attributes == {}
    assert coreai.gelu(x, approximate="tanh").owner.attributes["approximate"] == ir.Attr("str", "tanh")
    with pytest.raises(ValueError, match="approximate"):
        coreai.gelu(x, approximate="fast")
    c = coreai.clamp(x, min=-1, max=1.5)
    assert c.owner.attributes == {"min": ir.Attr("f32", -1.0), "max": ir.Attr("f32", 1.5)}
    assert coreai.clamp(x, max=0.0).owner.attributes == {"max": ir.Attr("f32", 0.0)}
    with pytest.raises(ValueError, match="greater than max"):
        coreai.clamp(x, min=2, max=1)


# ---------------------------------------------------------------- linear algebra and reductions

@pytest.mark.parametrize("a,b,ta,tb,want", [
    ((3, 4), (4, 5), False, False, (3, 5)),
    ((2, 3, 4), (4, 5), False, False, (2, 3, 5)),           # batch broadcast
    ((2, 1, 3, 4), (5, 4, 6), False, False, (2, 5, 3, 6)),
    ((4, 3), (4, 5), True, False, (3, 5)),
    ((3, 4), (5, 4), False, True, (3, 5)),
    ((7, 4, 3), (7, 5, 4), True, True, (7, 3, 5)),
])
def test_matmul(g, a, b, ta, tb, want):
    r = coreai.matmul(arg(g, a), arg(g, b), transpose_a=ta, transpose_b=tb)
    assert r.type == T(want)
    attrs = r.owner.attributes
    assert ("transpose_a" in attrs) == ta and ("transpose_b" in attrs) == tb


def test_matmul_errors(g):
    with pytest.raises(ValueError, match=r"coreai.matmul\(tensor<3x4xf32>, tensor<5x6xf32>\): inner dimensions "
                                         r"differ \(4 vs 5\)"):
        coreai.matmul(arg(g, (3, 4)), arg(g, (5, 6)))
    with pytest.raises(ValueError, match="rank >= 2"):
        coreai.matmul(arg(g, (4,)), arg(g, (4, 2)))
    with pytest.raises(ValueError, match="batch shapes"):
        coreai.matmul(arg(g, (2, 3, 4)), arg(g, (3, 4, 5)))
    with pytest.raises(ValueError, match="i32"):
        coreai.matmul(arg(g, (2, 2), ir.i32), arg(g, (2, 2), ir.i32))


def test_linear(g):
    x = arg(g, (2, 5, 8))
    assert coreai.linear(x, arg(g, (3, 8))).type == T((2, 5, 3))
    assert coreai.linear(x, arg(g, (8, 3)), arg(g, (3,)), weight_transposed=True).type == T((2, 5, 3))
    w = np.ones((3, 8), np.float32)
    r = coreai.linear(x, w, np.zeros(3, np.float32))   # arrays become constants
    assert r.type == T((2, 5, 3)) and r.owner.operands[1].is_constant
    with pytest.raises(ValueError, match="input has 8 features but the weight expects 4"):
        coreai.linear(x, arg(g, (3, 4)))
    with pytest.raises(ValueError, match="bias must be tensor<3xf32>"):
        coreai.linear(x, arg(g, (3, 8)), arg(g, (4,)))
    with pytest.raises(ValueError, match="rank-2 weight"):
        coreai.linear(x, arg(g, (8,)))


@pytest.mark.parametrize("fn", [coreai.reduce_sum, coreai.reduce_mean, coreai.reduce_max, coreai.reduce_min])
def test_reduce(g, fn):
    x = arg(g, (2, 3, 4))
    assert fn(x, [0, 2]).type == T((3,))
    assert fn(x, -1, keep_dims=True).type == T((2, 3, 1))
    assert fn(x, [-1, 0], keep_dims=True).type == T((1, 3, 1))
    assert fn(x, []).type == T(())                              # empty = all
    r = fn(x, [-1])
    assert r.owner.attributes == {"axes": ir.Attr("si64[]", [-1])}  # axes kept as given
    with pytest.raises(ValueError, match="out of range or repeated"):
        fn(x, [3])
    with pytest.raises(ValueError, match="out of range or repeated"):
        fn(x, [1, -2])
    with pytest.raises(ValueError, match="i64"):
        fn(arg(g, (2,), ir.i64), [0])


def test_argmax_softmax(g):
    x = arg(g, (2, 3, 4))
    a = coreai.argmax(x, -1)
    assert a.type == T((2, 3), ir.i64) and a.owner.attributes["axis"].value == 2
    assert coreai.argmax(x, 1, keep_dims=True).type == T((2, 1, 4), ir.i64)
    with pytest.raises(ValueError, match="axis 3 out of range"):
        coreai.argmax(x, 3)
    s = coreai.softmax(x, -1)
    assert s.type == x.type and s.owner.attributes == {"axis": ir.Attr("si64", -1)}
    with pytest.raises(ValueError, match="axis -4 out of range"):
        coreai.softmax(x, -4)


# ---------------------------------------------------------------- layout and data movement

def test_reshape(g):
    x = arg(g, (2, 3, 4))
    assert coreai.reshape(x, (6, 4)).type == T((6, 4))
    assert coreai.reshape(x, [4, -1]).type == T((4, 6))
    assert coreai.reshape(arg(g, (1,), ir.i32), ()).type == T((), ir.i32)
    with pytest.raises(ValueError, match="cannot reshape to tensor<5x5xf32>"):
        coreai.reshape(x, (5, 5))
    with pytest.raises(ValueError, match="infer -1"):
        coreai.reshape(x, (5, -1))


def test_transpose(g):
    x = arg(g, (2, 3, 4), ir.i64)
    assert coreai.transpose(x, [2, 0, 1]).type == T((4, 2, 3), ir.i64)
    with pytest.raises(ValueError, match="not a permutation"):
        coreai.transpose(x, [0, 0, 1])
    with pytest.raises(ValueError, match="not a permutation"):
        coreai.transpose(x, [1, 0])


def test_broadcast_to(g):
    x = arg(g, (3, 1))
    assert coreai.broadcast_to(x, (2, 3, 4)).type == T((2, 3, 4))
    with pytest.raises(ValueError, match="does not broadcast to shape"):
        coreai.broadcast_to(x, (2, 4, 4))
    with pytest.raises(ValueError, match="does not broadcast to shape"):
        coreai.broadcast_to(x, (3,))


def test_concat(g):
    a, b = arg(g, (2, 3)), arg(g, (2, 5))
    r = coreai.concat([a, b], -1)
    assert r.type == T((2, 8)) and r.owner.attributes["axis"].value == 1
    assert coreai.concat([a], 0).type == a.type
    with pytest.raises(ValueError, match="extents differ on axis 1"):
        coreai.concat([a, b], 0)
    with pytest.raises(ValueError, match="same rank"):
        coreai.concat([a, arg(g, (3,))], 0)
    with pytest.raises(ValueError, match="dtypes differ"):
        coreai.concat([a, arg(g, (2, 3), ir.i32)], 0)
    with pytest.raises(ValueError, match="out of range"):
        coreai.concat([a, b], 2)
    with pytest.raises(ValueError, match="at least one"):
        coreai.concat([], 0)


def test_slice(g):
    x = arg(g, (10, 6))
    r = coreai.slice(x, [1, 0], [8, 6], [3, 2])
    assert r.type == T((3, 3))
    assert r.owner.attributes["begins"].value == (1, 0) and r.owner.attributes["steps"].value == (3, 2)
    neg = coreai.slice(x, [-3, 0], [100, -1])
    assert neg.type == T((3, 5)) and neg.owner.attributes["ends"].value == (10, 5)
    assert coreai.slice(x, [5, 0], [5, 6]).type == T((0, 6))
    with pytest.raises(ValueError, match="step 0"):
        coreai.slice(x, [0, 0], [10, 6], [0, 1])
    with pytest.raises(ValueError, match="needs 2 integers"):
        coreai.slice(x, [0], [10])


def test_gather(g):
    x = arg(g, (5, 6, 7))
    idx = arg(g, (2, 3), ir.i32)
    assert coreai.gather(x, idx, 1).type == T((5, 2, 3, 7))
    r = coreai.gather(x, [4, -1], -1)
    assert r.type == T((5, 6, 2)) and r.owner.operands[1].type == T((2,), ir.i64)
    assert coreai.gather(x, 0, 0).type == T((6, 7))    # a scalar index drops the axis
    with pytest.raises(ValueError, match="the indices is f32"):
        coreai.gather(x, arg(g, (2,)), 0)
    with pytest.raises(ValueError, match="axis 3 out of range"):
        coreai.gather(x, idx, 3)


def test_pad(g):
    x = arg(g, (2, 3))
    r = coreai.pad(x, [1, 0, 2, 3])
    assert r.type == T((5, 6)) and "value" not in r.owner.attributes
    assert coreai.pad(x, [0, 0, 0, 0], value=-1).owner.attributes["value"] == ir.Attr("f64", -1.0)
    assert coreai.pad(arg(g, (2,), ir.i32), [1, 1]).type == T((4,), ir.i32)
    with pytest.raises(ValueError, match="4 non-negative"):
        coreai.pad(x, [1, 1])
    with pytest.raises(ValueError, match="4 non-negative"):
        coreai.pad(x, [0, -1, 0, 0])
    with pytest.raises(ValueError, match="bool"):
        coreai.pad(arg(g, (2,), ir.bool_), [1, 1])


@pytest.mark.parametrize("dt", [ir.f16, ir.bf16])
def test_half_types_move_but_do_not_compute(g, dt):
    x = arg(g, (2, 3), dt)
    assert coreai.reshape(x, (3, 2)).type == T((3, 2), dt)
    assert coreai.transpose(x, [1, 0]).type == T((3, 2), dt)
    assert coreai.broadcast_to(x, (4, 2, 3)).type == T((4, 2, 3), dt)
    assert coreai.concat([x, x], 0).type == T((4, 3), dt)
    assert coreai.slice(x, [0, 1], [2, 3]).type == T((2, 2), dt)
    assert coreai.gather(x, [1], 1).type == T((2, 1), dt)
    assert coreai.where(arg(g, (2, 1), ir.bool_), x, x).type == x.type
    assert coreai.fill((2,), 1.5, dt).type == T((2,), dt)
    assert coreai.cast(x, ir.f32).type == T((2, 3))
    with pytest.raises(ValueError, match=f"operand 0 is {dt}; this op needs f32, i32 or i64"):
        coreai.add(x, x)
    with pytest.raises(ValueError, match=f"operand 0 is {dt}"):
        coreai.exp(x)
    with pytest.raises(ValueError, match=f"operand 0 is {dt}"):
        coreai.equal(x, x)
    with pytest.raises(ValueError, match=f"operand 0 is {dt}"):
        coreai.pad(x, [0, 0, 1, 1])


def test_rank0_and_empty_rules(g):
    with pytest.raises(ValueError, match="rank-0"):
        coreai.concat([arg(g, ())], 0)
    with pytest.raises(ValueError, match="rank-0"):
        coreai.gather(arg(g, ()), [0], 0)
    e = arg(g, (2, 0))
    assert coreai.reduce_sum(e, [1]).type == T((2,))
    with pytest.raises(ValueError, match="axis 1 is empty"):
        coreai.reduce_max(e, [-1])
    with pytest.raises(ValueError, match="axis 1 is empty"):
        coreai.argmax(e, 1)


def test_integer_attribute_values(g):
    with pytest.raises(ValueError, match="'value' = 0.5 is not a i32 value"):
        coreai.pad(arg(g, (2,), ir.i32), [1, 1], value=0.5)
    assert coreai.pad(arg(g, (2,), ir.i64), [1, 1], value=-3).type == T((4,), ir.i64)
    assert coreai.pad(arg(g, (2,)), [1, 1], value=0.5).type == T((4,))
    with pytest.raises(ValueError, match="'start' = 0.5"):
        coreai.iota(3, 0.5, 1, ir.i64)
    with pytest.raises(ValueError, match="last element"):
        coreai.iota(3, 2 ** 31 - 2, 1, ir.i32)
    assert coreai.iota(3, 0.5, 0.25, ir.f32).type == T((3,))
    with pytest.raises(ValueError, match="is not a i64 value"):
        coreai.fill((2,), 1e30, ir.i64)
    assert coreai.fill((2,), 1e30, ir.f32).type == T((2,))


def test_iota_fill(g):
    r = coreai.iota(5, 0.0, 0.5, ir.f32)
    assert r.type == T((5,)) and r.owner.operands == []
    assert r.owner.attributes == {"start": ir.Attr("f64", 0.0), "step": ir.Attr("f64", 0.5)}
    assert coreai.iota(3).type == T((3,), ir.i64)
    with pytest.raises(ValueError, match="rank-1 f32, i32 or i64"):
        coreai.iota(3, dtype=ir.bool_)
    f = coreai.fill((2, 3), 7, ir.i32)
    assert f.type == T((2, 3), ir.i32) and f.owner.attributes["value"] == ir.Attr("f64", 7.0)
    assert coreai.fill((), 1, "bool").type == T((), ir.bool_)


# ---------------------------------------------------------------- convolution and pooling

def test_conv2d(g):
    x = arg(g, (1, 4, 9, 9))
    assert coreai.conv2d(x, arg(g, (8, 4, 3, 3))).type == T((1, 8, 7, 7))
    r = coreai.conv2d(x, arg(g, (8, 2, 3, 3)), arg(g, (8,)), strides=(2, 2), pads=(1, 1, 1, 1), groups=2)
    assert r.type == T((1, 8, 5, 5))
    assert r.owner.attributes == {"strides": ir.Attr("si64[]", [2, 2]), "pads": ir.Attr("si64[]", [1, 1, 1, 1]),
                                  "dilations": ir.Attr("si64[]", [1, 1]), "groups": ir.Attr("si64", 2)}
    # OH = (H + top + bottom - dil*(KH-1) - 1) / stride + 1, asymmetric pads, dilation
    assert coreai.conv2d(x, arg(g, (1, 4, 3, 2)), pads=(0, 1, 2, 0), dilations=(2, 3), strides=(1, 2)).type \
        == T((1, 1, 7, 4))
    with pytest.raises(ValueError, match="groups 3 must divide"):
        coreai.conv2d(x, arg(g, (8, 2, 3, 3)), groups=3)
    with pytest.raises(ValueError, match="channels per group"):
        coreai.conv2d(x, arg(g, (8, 3, 3, 3)))
    with pytest.raises(ValueError, match="bias must be tensor<8xf32>"):
        coreai.conv2d(x, arg(g, (8, 4, 3, 3)), arg(g, (4,)))
    with pytest.raises(ValueError, match="does not fit"):
        coreai.conv2d(x, arg(g, (8, 4, 11, 11)))
    with pytest.raises(ValueError, match="rank 4"):
        coreai.conv2d(arg(g, (4, 9, 9)), arg(g, (8, 4, 3, 3)))
    with pytest.raises(ValueError, match="strides"):
        coreai.conv2d(x, arg(g, (8, 4, 3, 3)), strides=(0, 1))


@pytest.mark.parametrize("h,k,s,p,ceil,want", [
    (8, 2, 2, 0, False, 4), (7, 2, 2, 0, False, 3), (7, 2, 2, 0, True, 4),
    (6, 3, 2, 1, True, 4),   # ceil window starting in the right padding is dropped: 4 not 5 ... (6+2-3)/2 = 2.5
    (5, 3, 2, 1, True, 3), (10, 3, 3, 0, True, 4),
])
def test_max_pool2d_sizes(g, h, k, s, p, ceil, want):
    torch = None
    x = arg(g, (1, 2, h, h))
    r = coreai.max_pool2d(x, k, strides=s, pads=(p, p, p, p), ceil_mode=ceil)
    assert r.type == T((1, 2, want, want))
    try:
        import torch  # noqa: F811  the sizes PyTorch computes
    except ImportError:
        return
    y = torch.nn.functional.max_pool2d(torch.zeros(1, 2, h, h), k, s, p, ceil_mode=ceil)
    assert tuple(y.shape) == (1, 2, want, want)


def test_pool_attrs_and_errors(g):
    x = arg(g, (1, 3, 8, 8))
    m = coreai.max_pool2d(x, (2, 3))
    assert m.type == T((1, 3, 4, 2))
    assert m.owner.attributes["strides"].value == (2, 3)   # default: the kernel size
    a = coreai.avg_pool2d(x, 3, strides=1, pads=1, count_include_pad=False)
    assert a.type == T((1, 3, 8, 8)) and a.owner.attributes["count_include_pad"].value is False
    assert "dilations" not in a.owner.attributes
    with pytest.raises(ValueError, match="kernel_size"):
        coreai.max_pool2d(x, (0, 2))
    with pytest.raises(ValueError, match="rank 4"):
        coreai.avg_pool2d(arg(g, (3, 8, 8)), 2)
    with pytest.raises(ValueError, match="i32"):
        coreai.max_pool2d(arg(g, (1, 1, 4, 4), ir.i32), 2)


def test_sumpool2d_seed_style(g):
    """The seed's adaptive-avg-pool lowering: uint32 arrays and a uint32 host constant."""
    x = arg(g, (1, 3, 8, 6))
    output_h, output_w = 2, 3
    input_h, input_w = x.type.shape[2], x.type.shape[3]
    stride_h, stride_w = input_h // output_h, input_w // output_w
    kernel_h = input_h - (output_h - 1) * stride_h
    kernel_w = input_w - (output_w - 1) * stride_w
    y = coreai.broadcasting_divide(
        coreai.sumpool2d(
            x,
            kernel_size=np.array([kernel_h, kernel_w], dtype=np.uint32),
            strides=np.array([stride_h, stride_w], dtype=np.uint32),
            dilation=coreai.constant([1, 1], dtype=np.uint32),
        ),
        coreai.cast(float(kernel_h * kernel_w), x.type.element_type),
    )
    assert y.type == T((1, 3, 2, 3))
    sp = y.owner.operands[0].owner
    assert sp.attributes == {"kernel_size": ir.Attr("si64[]", [4, 2]), "strides": ir.Attr("si64[]", [4, 2]),
                             "dilations": ir.Attr("si64[]", [1, 1]), "pads": ir.Attr("si64[]", [0, 0, 0, 0])}
    with pytest.raises(ValueError, match="must be a constant"):
        coreai.sumpool2d(x, kernel_size=[2, 2], strides=x, dilation=[1, 1])
    with pytest.raises(ValueError, match="integers"):
        coreai.sumpool2d(x, kernel_size=[2.5, 2], strides=[1, 1])


# ---------------------------------------------------------------- kernels and calls

def test_elementwise_kernel(g):
    x, y = arg(g, (4,)), arg(g, (4,))
    (out,) = coreai.elementwise_kernel([x, y], "vector_add", "output[id] = x[id] + y[id];", ["x", "y"],
                                       ["output"], [T((4,))])
    assert out.type == T((4,))
    a = out.owner.attributes
    assert a["input_names"] == ir.Attr("str[]", ["x", "y"]) and a["source"].kind == "str"
    two = coreai.elementwise_kernel([x], "k", "a[id]=x[id]; b[id]=x[id]>0;", ["x"], ["a", "b"],
                                    [((4,), ir.f32), ((4,), ir.bool_)])
    assert [v.type for v in two] == [T((4,)), T((4,), ir.bool_)]
    with pytest.raises(ValueError, match="input 'x' is tensor<3xf32> but the results have shape"):
        coreai.elementwise_kernel([arg(g, (3,))], "k", "", ["x"], ["o"], [T((4,))])
    with pytest.raises(ValueError, match="'input_names' names 1 inputs but the op has 2"):
        coreai.elementwise_kernel([x, y], "k", "", ["x"], ["o"], [T((4,))])
    with pytest.raises(ValueError, match="both an input and an output"):
        coreai.elementwise_kernel([x], "k", "", ["x"], ["x"], [T((4,))])
    with pytest.raises(ValueError, match="f16"):
        coreai.elementwise_kernel([arg(g, (4,), ir.f16)], "k", "", ["x"], ["o"], [T((4,))])


@pytest.mark.parametrize("name,why", [
    ("x-1", "not a C identifier"), ("1x", "not a C identifier"), ("_x", "leading underscore"),
    ("id", "C keyword or a name"), ("float", "C keyword"), ("a0", "parameter of the generated"),
    ("r12", "parameter of the generated"), ("coreai_x", "runtime's names"), ("INT32_MAX", "stdint"),
])
def test_elementwise_kernel_names(g, name, why):
    x = arg(g, (4,))
    with pytest.raises(ValueError, match=why):
        coreai.elementwise_kernel([x], "k", "", [name], ["o"], [T((4,))])
    with pytest.raises(ValueError, match=why):
        coreai.elementwise_kernel([x], "k", "", ["x"], [name], [T((4,))])


def test_invoke():
    m = ir.Module()
    callee = ir.Graph("sq", private=True, noinline=True)
    m.add_graph(callee)
    a = callee.add_argument(T((2,)))
    with ir.InsertionPoint(callee):
        r = coreai.mul(a, a)
    main = ir.Graph("main")
    m.add_graph(main)
    x = main.add_argument(T((2,)))
    with ir.InsertionPoint(main):
        with pytest.raises(ValueError, match="no outputs yet"):
            coreai.invoke(callee, [x])
        callee.set_outputs([r, a])
        out = coreai.invoke("sq", [x])
        assert [v.type for v in out] == [T((2,)), T((2,))]
        assert out[0].owner.callee == "sq" and out[0].owner.kind == "coreai.invoke"
        data = coreai.invoke(callee, [np.ones(2, np.float32)])   # data becomes a constant of the arg type
        assert data[0].owner.operands[0].is_constant
        with pytest.raises(ValueError, match=r"argument 0 is tensor<3xf32> but the graph expects tensor<2xf32>"):
            coreai.invoke(callee, [main.add_argument(T((3,)))])
        with pytest.raises(ValueError, match="passes 2 arguments"):
            coreai.invoke(callee, [x, x])
        with pytest.raises(ValueError, match="no graph @nope"):
            coreai.invoke("nope", [x])
        with pytest.raises(ValueError, match="itself"):
            coreai.invoke(main, [])


def test_location_in_errors(g):
    x = arg(g, (2,))
    with pytest.raises(ValueError, match=r'at loc\("fc1"\)'):
        coreai.matmul(x, x, loc=ir.Location.name("fc1"))
    y = coreai.relu(x, loc="act")
    assert y.owner.location.text == "act"
