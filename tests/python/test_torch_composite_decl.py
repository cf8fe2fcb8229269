"""The composite declarations the converter emits, checked exactly against
docs/composite-ops.md (op name, input names in order with the absent
optional ones left out, attribute names / types / values, output names,
argument types).  Conversion only: no C toolchain needed (the sweep in
test_torch_composite_sweep.py runs them)."""
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import coreai_torch
from coreai_torch import ExternalizeSpec, TorchConverter, get_decomp_table
from coreai_torch.composite_ops import (COMPOSITE_SPECS, SDPA, GatedDeltaUpdate, GatherMM, RMSNorm, RMSNormImpl,
                                        RoPE, SwiGLU, SwiGLUImpl)
from coreai_torch.externalize import composite_hash


class Call(nn.Module):
    """Root module calling ``child`` with the keyword tensors it is given."""

    def __init__(self, child):
        super().__init__()
        self.child = child

    def forward(self, **kw):
        return self.child(**kw)


def composites(model, **inputs):
    """[(graph, decl)] of the composite graphs of ``model(**inputs)``."""
    model = model.eval()
    program = TorchConverter().add_pytorch_module(
        model, export_fn=lambda m: torch.export.export(m, args=(), kwargs=inputs).run_decompositions(
            get_decomp_table()),
        externalize_modules=list(COMPOSITE_SPECS.values())).to_coreai()
    program.optimize()
    return [(g, g.composite) for g in program.module.graphs if g.composite is not None]


def only(model, **inputs):
    (found,) = composites(model, **inputs)
    return found


def attrs(decl):
    return {k: (a.kind, a.value) for k, a in decl.attrs.items()}


def types(graph):
    return [str(a.type) for a in graph.arguments]


def check(decl, op, input_names, attributes, output_names=("output",)):
    assert decl.op_name == op
    assert decl.input_names == list(input_names)
    assert attrs(decl) == attributes
    assert decl.output_names == list(output_names)


F32 = lambda v: ("f32", pytest.approx(v, rel=1e-7))  # noqa: E731
V1 = ("si64", 1)

torch.manual_seed(0)
X = torch.randn(2, 3, 5, 8)


# ---------------------------------------------------------------------------
# module-class composites
# ---------------------------------------------------------------------------


def test_specs_table():
    assert {c.__name__: (s.composite_op_name, s.composite_attrs) for c, s in COMPOSITE_SPECS.items()} == {
        "RMSNormImpl": ("rms_norm", ["axes", "eps", "version"]),
        "RoPE": ("rope", ["scale", "base", "dims", "interleaved", "version"]),
        "SDPA": ("scaled_dot_product_attention", ["scale", "is_causal", "window_size", "version"]),
        "GatherMM": ("gather_mm", ["num_batch_axes", "version"]),
        "GatedDeltaUpdate": ("gated_delta_update", ["use_qk_l2_norm", "version"]),
        "SwiGLUImpl": ("swiglu", ["version"]),
    }


def test_rms_norm():
    g, d = only(Call(RMSNormImpl()), input=torch.randn(3, 7), scale=torch.randn(7))
    check(d, "rms_norm", ["input", "scale"], {"axes": ("si64", -1), "eps": F32(1e-5), "version": V1})
    assert g.name == f"child.rms_norm_{composite_hash('rms_norm', {'axes': -1, 'eps': 1e-5, 'version': 1})}"
    assert g.private and g.noinline
    _, d = only(Call(RMSNormImpl(axes=[-2, -1], eps=1e-6)), input=torch.randn(3, 4, 7))
    check(d, "rms_norm", ["input"], {"axes": ("si64[]", (-2, -1)), "eps": F32(1e-6), "version": V1})


def test_rms_norm_per_head_scale():
    m = RMSNorm(6, n_heads=3)
    assert m.weight.shape == (3, 1, 6)
    g, d = only(Call(m), x=torch.randn(2, 3, 5, 6))
    check(d, "rms_norm", ["input", "scale"], {"axes": ("si64", -1), "eps": F32(1e-5), "version": V1})
    assert types(g) == ["tensor<2x3x5x6xf32>", "tensor<3x1x6xf32>"]
    assert g.name.startswith("child.norm.rms_norm_")


ROPE_DEFAULT = {"scale": F32(1.0), "base": F32(1e4), "interleaved": ("bool", False), "version": V1}


@pytest.mark.parametrize("given,names", [
    ({}, ["input"]),
    ({"cos": torch.rand(5, 4), "sin": torch.rand(5, 4)}, ["input", "cos", "sin"]),
    ({"position_ids": torch.randint(0, 9, (2, 5))}, ["input", "position_ids"]),
    ({"freqs": torch.rand(4)}, ["input", "freqs"]),
    ({"offset": torch.tensor([1, 2])}, ["input", "offset"]),
    ({"position_ids": torch.randint(0, 9, (2, 5)), "freqs": torch.rand(4)}, ["input", "position_ids", "freqs"]),
], ids=["none", "cos_sin", "position_ids", "freqs", "offset", "position_ids_freqs"])
def test_rope_input_variants(given, names):
    g, d = only(Call(RoPE()), input=X, **given)
    check(d, "rope", names, ROPE_DEFAULT)
    assert "dims" not in d.attrs  # dims=None is left out
    assert g.name == f"child.rope_{composite_hash('rope', {'scale': 1.0, 'base': 1e4, 'interleaved': False, 'version': 1})}"


def test_rope_attributes():
    _, d = only(Call(RoPE(scale=0.25, base=500, dims=6, interleaved=True)), input=X)
    check(d, "rope", ["input"], {"scale": F32(0.25), "base": F32(500.0), "dims": ("si64", 6),
                                 "interleaved": ("bool", True), "version": V1})


QKV = {"query": torch.randn(2, 4, 3, 8), "key": torch.randn(2, 2, 5, 8), "value": torch.randn(2, 2, 5, 8)}


@pytest.mark.parametrize("given,names", [
    ({}, ["query", "key", "value"]),
    ({"attn_mask": torch.rand(3, 5) > 0.5}, ["query", "key", "value", "attn_mask"]),
    ({"sinks": torch.randn(4)}, ["query", "key", "value", "sinks"]),
    ({"attn_mask": torch.rand(2, 1, 3, 5) > 0.5, "sinks": torch.randn(4)}, ["query", "key", "value", "attn_mask", "sinks"]),
], ids=["qkv", "mask", "sinks", "mask_sinks"])
def test_sdpa_input_variants(given, names):
    g, d = only(Call(SDPA(is_causal=True)), **QKV, **given)
    check(d, "scaled_dot_product_attention", names,
          {"is_causal": ("bool", True), "window_size": ("si64", 0), "version": V1})
    assert "scale" not in d.attrs  # scale=None: the kernel uses head_dim ** -0.5
    if "attn_mask" in given:
        assert types(g)[3].endswith("xbool>")  # a bool mask stays bool


def test_sdpa_attributes():
    _, d = only(Call(SDPA(scale=0.125, window_size=3)), **QKV)
    check(d, "scaled_dot_product_attention", ["query", "key", "value"],
          {"scale": F32(0.125), "is_causal": ("bool", False), "window_size": ("si64", 3), "version": V1})


@pytest.mark.parametrize("given,names", [
    ({}, ["lhs", "rhs"]),
    ({"rhs_indices": torch.randint(0, 5, (2, 3, 2))}, ["lhs", "rhs", "rhs_indices"]),
    ({"lhs_indices": torch.zeros(2, 3, 1, dtype=torch.int32)}, ["lhs", "rhs", "lhs_indices"]),
    ({"lhs_indices": torch.zeros(2, 3, 1, dtype=torch.int32), "rhs_indices": torch.randint(0, 5, (2, 3, 2))},
     ["lhs", "rhs", "lhs_indices", "rhs_indices"]),
], ids=["plain", "rhs", "lhs", "both"])
def test_gather_mm_input_variants(given, names):
    lhs = torch.randn(2, 3, 1, 1, 8)
    rhs = torch.randn(5, 8, 6)
    if "lhs_indices" in given:
        lhs = torch.randn(4, 1, 8)
    g, d = only(Call(GatherMM()), lhs=lhs, rhs=rhs, **given)
    check(d, "gather_mm", names, {"num_batch_axes": ("si64", 0), "version": V1})
    if "rhs_indices" in given and "lhs_indices" not in given:
        assert types(g) == ["tensor<2x3x1x1x8xf32>", "tensor<5x8x6xf32>", "tensor<2x3x2xi64>"]
        assert str(g.outputs[0].type) == "tensor<2x3x2x1x6xf32>"


def test_gather_mm_batch_axis():
    _, d = only(Call(GatherMM(num_batch_axes=1)), lhs=torch.randn(2, 3, 1, 1, 8), rhs=torch.randn(2, 5, 8, 6),
                rhs_indices=torch.randint(0, 5, (2, 3, 2)))
    check(d, "gather_mm", ["lhs", "rhs", "rhs_indices"], {"num_batch_axes": ("si64", 1), "version": V1})


@pytest.mark.parametrize("l2", [True, False])
def test_gated_delta_update(l2):
    b, hk, hv, t, dk, dv = 2, 1, 2, 3, 4, 5
    g, d = only(Call(GatedDeltaUpdate(l2)), query=torch.randn(b, hk, t, dk), key=torch.randn(b, hk, t, dk),
                value=torch.randn(b, hv, t, dv), g=F.logsigmoid(torch.randn(b, hv, t)),
                beta=torch.rand(b, hv, t), initial_state=torch.randn(b, hv, dk, dv))
    check(d, "gated_delta_update", ["query", "key", "value", "g", "beta", "initial_state"],
          {"use_qk_l2_norm": ("bool", l2), "version": V1}, ["output_0", "output_1"])
    assert [str(o.type) for o in g.outputs] == ["tensor<2x3x2x5xf32>", "tensor<2x2x4x5xf32>"]


def test_swiglu():
    _, d = only(Call(SwiGLUImpl()), gate=torch.randn(3, 6), value=torch.randn(3, 6))
    check(d, "swiglu", ["gate", "value"], {"version": V1})
    block = SwiGLU(4, hidden_features=6)
    g, d = only(Call(block), x=torch.randn(2, 4))
    check(d, "swiglu", ["gate", "value"], {"version": V1})
    assert g.name.startswith("child.swiglu_impl.swiglu_")


def test_none_attribute_left_out_of_any_spec():
    class Op(nn.Module):
        def __init__(self, alpha=None, beta=2):
            super().__init__()
            self.alpha = alpha
            self.beta = beta

        def forward(self, x):
            return x * (self.alpha or 1.0) + self.beta

    spec = ExternalizeSpec(Op, "my_op", ["alpha", "beta"])
    for alpha, expected in ((None, {"beta": ("si64", 2)}), (0.5, {"alpha": F32(0.5), "beta": ("si64", 2)})):
        model = Call(Op(alpha)).eval()
        program = TorchConverter().add_pytorch_module(
            model, export_fn=lambda m: torch.export.export(m, args=(), kwargs={"x": torch.randn(3)}),
            externalize_modules=[spec]).to_coreai()
        (g,) = [g for g in program.module.graphs if g.composite is not None]
        assert attrs(g.composite) == expected
        assert g.name == f"child.my_op_{composite_hash('my_op', {k: v for k, v in (('alpha', alpha), ('beta', 2)) if v is not None})}"


# ---------------------------------------------------------------------------
# ATen-derived composites
# ---------------------------------------------------------------------------


class Fn(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, input):
        return self.f(input)


def _bn(affine):
    m = nn.BatchNorm2d(4, affine=affine)
    with torch.no_grad():
        m.running_mean.copy_(torch.randn(4))
        m.running_var.copy_(torch.rand(4) + 0.5)
    return m


@pytest.mark.parametrize("model,x,op,names,attributes,arg_types", [
    (_bn(True), torch.randn(2, 4, 3, 3), "batch_norm", ["input", "gamma", "beta", "mean", "variance"],
     {"eps": F32(1e-5)}, ["tensor<2x4x3x3xf32>"] + ["tensor<4xf32>"] * 4),
    (_bn(False), torch.randn(2, 4, 3, 3), "batch_norm", ["input", "mean", "variance"],
     {"eps": F32(1e-5)}, ["tensor<2x4x3x3xf32>"] + ["tensor<4xf32>"] * 2),
    (nn.GroupNorm(2, 4, eps=1e-3), torch.randn(2, 4, 5), "group_norm", ["input", "weight", "bias"],
     {"num_groups": ("si64", 2), "eps": F32(1e-3)}, ["tensor<2x4x5xf32>", "tensor<4xf32>", "tensor<4xf32>"]),
    (nn.GroupNorm(2, 4, affine=False), torch.randn(2, 4, 5), "group_norm", ["input"],
     {"num_groups": ("si64", 2), "eps": F32(1e-5)}, ["tensor<2x4x5xf32>"]),
    (nn.InstanceNorm2d(4, affine=True), torch.randn(2, 4, 3, 5), "instance_norm", ["input", "gamma", "beta"],
     {"eps": F32(1e-5)}, ["tensor<2x4x3x5xf32>", "tensor<4xf32>", "tensor<4xf32>"]),
    (nn.InstanceNorm1d(4), torch.randn(3, 4, 7), "instance_norm", ["input"], {"eps": F32(1e-5)},
     ["tensor<3x4x7xf32>"]),
    (nn.LayerNorm(5), torch.randn(2, 3, 5), "layer_norm", ["input", "weight", "bias"],
     {"axes": ("si64[]", (2,)), "eps": F32(1e-5)}, ["tensor<2x3x5xf32>", "tensor<5xf32>", "tensor<5xf32>"]),
    (nn.LayerNorm([3, 5], elementwise_affine=False), torch.randn(2, 3, 5), "layer_norm", ["input"],
     {"axes": ("si64[]", (1, 2)), "eps": F32(1e-5)}, ["tensor<2x3x5xf32>"]),
    (nn.PixelShuffle(2), torch.randn(1, 8, 2, 3), "pixel_shuffle", ["input"], {"upscale_factor": ("si64", 2)},
     ["tensor<1x8x2x3xf32>"]),
    (Fn(lambda x: F.log_softmax(x, -1)), torch.randn(2, 5), "log_softmax", ["input"], {"axis": ("si64", 1)},
     ["tensor<2x5xf32>"]),
    (nn.Hardsigmoid(), torch.randn(2, 5), "hard_sigmoid", ["input"], {}, ["tensor<2x5xf32>"]),
    (Fn(lambda x: torch.linalg.vector_norm(x, float("inf"), dim=(0, -1), keepdim=True)), torch.randn(2, 3, 4),
     "linalg_vector_norm", ["input"], {"ord": ("f32", math.inf), "axes": ("si64[]", (0, 2)), "keep_dim": ("bool", True)},
     ["tensor<2x3x4xf32>"]),
    (Fn(lambda x: x.norm()), torch.randn(2, 3), "linalg_vector_norm", ["input"],
     {"ord": F32(2.0), "axes": ("si64[]", (0, 1)), "keep_dim": ("bool", False)}, ["tensor<2x3xf32>"]),
], ids=["batch_norm", "batch_norm_noaffine", "group_norm", "group_norm_noaffine", "instance_norm",
        "instance_norm_noaffine", "layer_norm", "layer_norm_two_axes", "pixel_shuffle", "log_softmax",
        "hard_sigmoid", "vector_norm_inf", "tensor_norm"])
def test_aten_derived(model, x, op, names, attributes, arg_types):
    g, d = only(model, input=x)
    check(d, op, names, attributes)
    assert types(g) == arg_types
    assert g.private and g.noinline


def test_get_decomp_table_keeps_the_aten_composites():
    table = get_decomp_table()
    kept = {getattr(op, "overloadpacket", op).__name__.split(".")[-1] for op in table}
    for name in ("native_batch_norm", "_native_batch_norm_legit_no_training", "native_group_norm",
                 "native_layer_norm", "layer_norm", "group_norm", "batch_norm", "instance_norm", "pixel_shuffle",
                 "_log_softmax", "log_softmax", "hardsigmoid", "linalg_vector_norm"):
        assert name not in kept, name


def test_half_precision_composites_are_declared_in_f32():
    """docs/composite-ops.md: the kernels are f32-only, so a composite op
    called with bf16/f16 tensors is declared (and exported) on f32 and the
    caller casts around the invoke; integer inputs keep their type."""
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = RMSNorm(8, n_heads=4)
            self.rope = RoPE()
            self.attn = SDPA(is_causal=True)

        def forward(self, q, k, v, pos):
            return self.attn(self.rope(self.norm(q), position_ids=pos), k, v)

    dt = torch.bfloat16
    model = M().to(dt).eval()
    sample = (torch.randn(2, 4, 5, 8, dtype=dt), torch.randn(2, 2, 5, 8, dtype=dt), torch.randn(2, 2, 5, 8, dtype=dt),
              torch.arange(5).repeat(2, 1))
    program = TorchConverter().add_pytorch_module(
        model, export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(get_decomp_table()),
        externalize_modules=list(COMPOSITE_SPECS.values())).to_coreai()
    program.optimize()
    graphs = {g.composite.op_name: g for g in program.module.graphs if g.composite is not None}
    assert types(graphs["rms_norm"]) == ["tensor<2x4x5x8xf32>", "tensor<4x1x8xf32>"]
    assert types(graphs["rope"]) == ["tensor<2x4x5x8xf32>", "tensor<2x5xi64>"]
    assert types(graphs["scaled_dot_product_attention"]) == ["tensor<2x4x5x8xf32>", "tensor<2x2x5x8xf32>",
                                                              "tensor<2x2x5x8xf32>"]
    main = program.module.find_graph("main")
    assert types(main)[0] == "tensor<2x4x5x8xbf16>" and str(main.outputs[0].type) == "tensor<2x4x5x8xbf16>"
