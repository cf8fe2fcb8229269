"""Externalization details: naming and hashing, input/output names,
distinct configurations, optional inputs, owned parameters, nesting,
simple externalization; every program also runs against PyTorch."""
import re

import pytest
import torch
import torch.nn as nn

import coreai_torch
from coreai_torch import ExternalizeSpec, TorchConverter, get_decomp_table
from coreai_torch.composite_ops import COMPOSITE_SPECS, RMSNorm, RMSNormImpl, RoPE
from coreai_torch.externalize import composite_hash, signature_hash
from coreai_torch.testing import max_abs_diff, run_program

ATOL = 1e-5
RMS_SPEC = ExternalizeSpec(RMSNormImpl, "rms_norm", ["axes", "eps", "version"])


def convert(model, sample, specs, **kw):
    program = TorchConverter().add_pytorch_module(
        model, export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(get_decomp_table()),
        externalize_modules=specs, **kw).to_coreai()
    program.optimize()
    return program


def graphs(program):
    return {g.name: g for g in program.module.graphs}


def check_numerics(program, model, sample, names=None):
    names = names or [s.arg.name for s in torch.export.export(model, args=sample).graph_signature.input_specs
                      if s.kind.name == "USER_INPUT"]
    inputs = [torch.randn_like(s) for s in sample]
    out = run_program(program, [dict(zip(names, inputs))])[0]
    with torch.no_grad():
        ref = model(*inputs)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    for r, o in zip(refs, out.values(), strict=True):
        assert max_abs_diff(r, o) <= ATOL


@pytest.fixture
def toolchain(coreai_gen, c_compiler):
    return True


class TwoNorms(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = RMSNorm(8, eps=1e-5)
        self.b = RMSNorm(8, eps=1e-3)
        self.c = RMSNorm(8, eps=1e-5)
        for i, n in enumerate((self.a, self.b, self.c)):
            with torch.no_grad():
                n.weight.copy_(torch.linspace(0.5, 1.5, 8) * (i + 1))

    def forward(self, x):
        return self.c(self.b(self.a(x)))


def test_distinct_configurations_get_distinct_composites(toolchain):
    torch.manual_seed(0)
    model = TwoNorms().eval()
    sample = (torch.randn(2, 8),)
    program = convert(model, sample, [RMS_SPEC])
    names = sorted(n for n in graphs(program) if n != "main")
    h5 = composite_hash("rms_norm", {"axes": -1, "eps": 1e-5, "version": 1})
    h3 = composite_hash("rms_norm", {"axes": -1, "eps": 1e-3, "version": 1})
    assert h5 != h3 and re.fullmatch(r"[0-9a-f]{8}", h5)
    assert names == [f"a.norm.rms_norm_{h5}", f"b.norm.rms_norm_{h3}", f"c.norm.rms_norm_{h5}"]
    for n in names:
        g = graphs(program)[n]
        assert g.private and g.noinline and g.composite.op_name == "rms_norm"
    assert graphs(program)[names[1]].composite.attrs["eps"].value == pytest.approx(1e-3, rel=1e-6)
    main = str(program)[str(program).index("coreai.graph @main"):]
    assert main.count("coreai.invoke") == 3
    check_numerics(program, model, sample)


def test_optional_none_input_is_excluded(toolchain):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = RMSNormImpl(eps=1e-6)

        def forward(self, x):
            return self.norm(x) * 3

    model = M().eval()
    sample = (torch.randn(3, 5),)
    program = convert(model, sample, [RMS_SPEC])
    (g,) = [g for g in program.module.graphs if g.composite is not None]
    assert g.composite.input_names == ["input"]
    assert [a.name for a in g.arguments] == ["input"]
    assert g.composite.output_names == ["output"]
    check_numerics(program, model, sample)


def test_same_instance_with_and_without_optional(toolchain):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(5))
            self.norm = RMSNormImpl()

        def forward(self, x):
            return self.norm(x, self.w) + self.norm(x)

    model = M().eval()
    sample = (torch.randn(3, 5),)
    program = convert(model, sample, [RMS_SPEC])
    comps = sorted((g.name, g.composite.input_names) for g in program.module.graphs if g.composite is not None)
    h = composite_hash("rms_norm", {"axes": -1, "eps": 1e-5, "version": 1})
    # the second signature (no scale) is named by a hash of its signature
    sig = signature_hash([("input", "tensor<3x5xf32>")], ["tensor<3x5xf32>"], {})
    assert comps == [(f"norm.rms_norm_{h}", ["input", "scale"]), (f"norm.rms_norm_{h}_{sig}", ["input"])]
    check_numerics(program, model, sample)


class OwnsWeight(nn.Module):
    """A composite op class owning its parameters (they become inputs)."""

    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.register_buffer("shift", torch.randn(dim))
        self.alpha = 0.5
        self.dims = [1, 2]
        self.causal = True
        self.mode = "fast"
        self.factors = [0.25, 2.0]

    def forward(self, x, gate=None):
        y = x * self.weight + self.shift * self.alpha
        if gate is not None:
            y = y * torch.sigmoid(gate)
        return y, y.sum(-1)


def test_owned_state_and_tuple_outputs_and_attr_types(toolchain):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.op = OwnsWeight(4)

        def forward(self, x, g):
            a, b = self.op(x, gate=g)
            return a * 2, b

    model = M().eval()
    sample = (torch.randn(2, 4), torch.randn(2, 4))
    spec = ExternalizeSpec(OwnsWeight, "owned_op", ["alpha", "dims", "causal", "mode", "factors"])
    program = convert(model, sample, [spec])
    (g,) = [g for g in program.module.graphs if g.composite is not None]
    assert g.name.startswith("op.owned_op_")
    assert g.composite.input_names == ["weight", "shift", "x", "gate"]
    assert [a.name for a in g.arguments] == ["weight", "shift", "x", "gate"]
    assert g.composite.output_names == ["output_0", "output_1"]
    kinds = {k: v.kind for k, v in g.composite.attrs.items()}
    assert kinds == {"alpha": "f32", "dims": "si64[]", "causal": "bool", "mode": "str", "factors": "f32[]"}
    text = str(program)
    assert 'op_attrs = {alpha = 5.00000000E-1 : f32' in text or "alpha = 5" in text
    check_numerics(program, model, sample)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = RMSNorm(6)
        self.fc = nn.Linear(6, 6)
        with torch.no_grad():
            self.norm.weight.copy_(torch.linspace(0.2, 2.0, 6))

    def forward(self, x):
        return x + self.fc(self.norm(x))


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def test_nested_simple_and_composite(toolchain):
    torch.manual_seed(1)
    model = Stack().eval()
    sample = (torch.randn(3, 6),)
    program = convert(model, sample, [Block, RMS_SPEC])
    h = composite_hash("rms_norm", {"axes": -1, "eps": 1e-5, "version": 1})
    g = graphs(program)
    assert set(g) == {"blocks.0", "blocks.1", f"blocks.0.norm.norm.rms_norm_{h}",
                      f"blocks.1.norm.norm.rms_norm_{h}", "main"}
    assert g["blocks.0"].noinline and not g["blocks.0"].private and g["blocks.0"].composite is None
    assert [a.name for a in g["blocks.0"].arguments] == ["x"]
    assert g["blocks.0"].callees() == [f"blocks.0.norm.norm.rms_norm_{h}"]
    assert g["main"].callees() == ["blocks.0", "blocks.1"]
    # callees are defined before their callers
    order = [gr.name for gr in program.module.graphs]
    assert order.index(f"blocks.0.norm.norm.rms_norm_{h}") < order.index("blocks.0") < order.index("main")
    check_numerics(program, model, sample)


def test_instance_called_twice_shares_its_graph(toolchain):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = RMSNorm(4)

        def forward(self, x, y):
            return self.norm(x) - self.norm(y)

    model = M().eval()
    with torch.no_grad():
        model.norm.weight.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    sample = (torch.randn(2, 4), torch.randn(2, 4))
    program = convert(model, sample, [RMS_SPEC])
    comps = [g for g in program.module.graphs if g.composite is not None]
    assert len(comps) == 1
    assert graphs(program)["main"].callees() == [comps[0].name, comps[0].name]
    check_numerics(program, model, sample)


def test_module_is_restored_after_conversion():
    model = Stack().eval()
    forwards = [type(b).forward for b in model.blocks]
    convert(model, (torch.randn(1, 6),), [Block, RMS_SPEC])
    assert all("forward" not in b.__dict__ for b in model.modules())
    assert [type(b).forward for b in model.blocks] == forwards
    x = torch.randn(1, 6)
    # eager still works (and externalization leaves no custom op behind)
    traced = torch.export.export(model, args=(x,))
    assert not any("coreai_ext" in str(n.target) for n in traced.graph.nodes)


def test_hash_is_stable_and_attribute_sensitive():
    a = composite_hash("rms_norm", {"axes": -1, "eps": 1e-5, "version": 1})
    assert a == "a99f94d1"  # the name examples/feedforward uses
    assert composite_hash("rms_norm", {"axes": -1, "eps": 1e-5}) != a
    assert composite_hash("layer_norm", {"axes": -1, "eps": 1e-5, "version": 1}) != a
    assert composite_hash("rms_norm", {"axes": [-1], "eps": 1e-5, "version": 1}) != a


def test_externalizing_the_root_module(toolchain):
    model = RMSNorm(6).eval()
    with torch.no_grad():
        model.weight.copy_(torch.arange(6.0))
    sample = (torch.randn(2, 6),)
    program = convert(model, sample, [ExternalizeSpec(RMSNorm, "rms_norm_wrapped")])
    (g,) = [g for g in program.module.graphs if g.composite is not None]
    assert g.name == "rms_norm_wrapped_" + composite_hash("rms_norm_wrapped", {})
    assert g.composite.input_names == ["weight", "x"]
    assert graphs(program)["main"].callees() == [g.name]
    check_numerics(program, model, sample)


def test_two_entrypoints_share_identical_composites(toolchain):
    """The same model staged twice (e.g. two sequence lengths): graphs with
    identical bodies and types are shared, different shapes get their own."""
    torch.manual_seed(3)
    model = Stack().eval()
    conv = TorchConverter()
    for name, t in (("prefill", 4), ("decode", 1), ("decode_again", 1)):
        conv.add_pytorch_module(
            model, export_fn=lambda m, t=t: torch.export.export(m, args=(torch.randn(t, 6),)).run_decompositions(
                get_decomp_table()),
            externalize_modules=[RMS_SPEC], entrypoint_name=name)
    program = conv.to_coreai()
    program.optimize()
    comps = [g.name for g in program.module.graphs if g.composite is not None]
    h = composite_hash("rms_norm", {"axes": -1, "eps": 1e-5, "version": 1})
    # one graph per instance and shape; "decode_again" reuses the graphs of "decode"
    sig = signature_hash([("input", "tensor<1x6xf32>"), ("scale", "tensor<6xf32>")], ["tensor<1x6xf32>"], {})
    assert sorted(comps) == sorted([f"blocks.0.norm.norm.rms_norm_{h}", f"blocks.1.norm.norm.rms_norm_{h}",
                                    f"blocks.0.norm.norm.rms_norm_{h}_{sig}",
                                    f"blocks.1.norm.norm.rms_norm_{h}_{sig}"])
    assert program.module.find_graph("decode").callees() == program.module.find_graph("decode_again").callees()
    for name, t in (("prefill", 4), ("decode", 1), ("decode_again", 1)):
        x = torch.randn(t, 6)
        out = run_program(program, [{"x": x}], entrypoint=name)[0]
        with torch.no_grad():
            assert max_abs_diff(model(x), list(out.values())[0]) <= ATOL


# ---------------------------------------------------------------------------
# one instance, several call signatures (shapes, dtypes, None pattern, static
# arguments): one correctly typed graph per distinct signature, identical
# signatures share one graph
# ---------------------------------------------------------------------------

_GRAPH_HEADER = re.compile(r"coreai\.graph (?:private )?(?:noinline )?@([^\s(]+)\((.*?)\) ->")


def printed_graphs(program):
    """{graph name: argument list text} as the printed program shows them."""
    return dict(_GRAPH_HEADER.findall(str(program)))


def main_callees(program):
    return graphs(program)["main"].callees()


def test_composite_instance_called_with_two_shapes(toolchain):
    """The tinyllm report: one RoPE on q [1,4,8,16] and k [1,2,8,16]."""

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.rope = RoPE()

        def forward(self, q, k, q2):
            return self.rope(q), self.rope(k), self.rope(q2)

    torch.manual_seed(4)
    model = M().eval()
    sample = (torch.randn(1, 4, 8, 16), torch.randn(1, 2, 8, 16), torch.randn(1, 4, 8, 16))
    program = convert(model, sample, [COMPOSITE_SPECS[RoPE]])
    h = composite_hash("rope", {"scale": 1.0, "base": 1e4, "interleaved": False, "version": 1})
    assert h == "c6a163c6"
    sig_k = signature_hash([("input", "tensor<1x2x8x16xf32>")], ["tensor<1x2x8x16xf32>"], {})
    first, second = f"rope.rope_{h}", f"rope.rope_{h}_{sig_k}"
    printed = printed_graphs(program)
    # one graph per distinct signature (q and q2 share one), each typed by its call
    assert set(printed) == {first, second, "main"}
    assert "tensor<1x4x8x16xf32>" in printed[first] and "1x2x8x16" not in printed[first]
    assert "tensor<1x2x8x16xf32>" in printed[second] and "1x4x8x16" not in printed[second]
    g = graphs(program)
    assert [a.type.shape for a in g[first].arguments] == [(1, 4, 8, 16)]
    assert [o.type.shape for o in g[first].outputs] == [(1, 4, 8, 16)]
    assert [a.type.shape for a in g[second].arguments] == [(1, 2, 8, 16)]
    assert [o.type.shape for o in g[second].outputs] == [(1, 2, 8, 16)]
    # the same composite declaration
    a, b = g[first].composite, g[second].composite
    assert (a.op_name, a.input_names, a.output_names) == (b.op_name, b.input_names, b.output_names) == (
        "rope", ["input"], ["output"])
    assert {k: (v.kind, v.value) for k, v in a.attrs.items()} == {k: (v.kind, v.value) for k, v in b.attrs.items()}
    assert main_callees(program) == [first, second, first]
    check_numerics(program, model, sample)


class Scaled(nn.Module):
    """A simple-externalized class with its own weight and a static argument."""

    def __init__(self, dim):
        super().__init__()
        self.w = nn.Parameter(torch.linspace(-1.0, 1.0, dim))

    def forward(self, x, bias=None, k: float = 1.0):
        y = torch.tanh(x * self.w) * k
        return y if bias is None else y + bias


def test_simple_instance_called_with_distinct_signatures(toolchain):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.f = Scaled(8)

        def forward(self, a, b, c, d):
            return (self.f(a),            # [2, 8]
                    self.f(b),            # [3, 8]: other shape
                    self.f(c),            # [2, 8]: same signature as a
                    self.f(a, k=3.0),     # other static argument
                    self.f(a, bias=d),    # other None pattern
                    self.f(d.half()))     # other dtype

    torch.manual_seed(5)
    model = M().eval()
    sample = (torch.randn(2, 8), torch.randn(3, 8), torch.randn(2, 8), torch.randn(2, 8))
    program = convert(model, sample, [Scaled])
    printed = printed_graphs(program)
    ext = sorted(n for n in printed if n != "main")
    assert len(ext) == 5 and "f" in ext
    assert all(re.fullmatch(r"f_[0-9a-f]{8}", n) for n in ext if n != "f")
    # static arguments (defaults included) are part of the signature
    assert f"f_{signature_hash([('x', 'tensor<3x8xf32>')], ['tensor<3x8xf32>'], {'k': 1.0})}" in ext
    callees = main_callees(program)
    assert len(callees) == 6 and len(set(callees)) == 5
    assert callees[0] == callees[2] == "f"
    g = graphs(program)
    assert [a.type.shape for a in g[callees[1]].arguments] == [(3, 8)]
    assert [a.name for a in g[callees[4]].arguments] == ["x", "bias"]
    assert str(g[callees[5]].arguments[0].type) == "tensor<2x8xf16>"
    for n in ext:
        assert g[n].composite is None and g[n].noinline and not g[n].private
    check_numerics(program, model, sample)


class RoPEBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = RMSNorm(16)
        self.rope = RoPE()
        with torch.no_grad():
            self.norm.weight.copy_(torch.linspace(0.5, 1.5, 16))

    def forward(self, x):
        return self.rope(self.norm(x)) * 2


@pytest.mark.parametrize("outer", ["simple", "composite"])
def test_nested_instance_called_with_two_shapes(toolchain, outer):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.blk = RoPEBlock()

        def forward(self, q, k, q2):
            return self.blk(q), self.blk(k), self.blk(q2)

    torch.manual_seed(6)
    model = M().eval()
    sample = (torch.randn(1, 4, 8, 16), torch.randn(1, 2, 8, 16), torch.randn(1, 4, 8, 16))
    outer_spec = RoPEBlock if outer == "simple" else ExternalizeSpec(RoPEBlock, "rope_block")
    program = convert(model, sample, [outer_spec, RMS_SPEC, COMPOSITE_SPECS[RoPE]])
    printed = printed_graphs(program)
    g = graphs(program)
    # two signatures of the block, each calling the graphs of its children's signatures
    callees = main_callees(program)
    assert len(callees) == 3 and callees[0] == callees[2] != callees[1]
    assert set(printed) == {"main", *callees, *g[callees[0]].callees(), *g[callees[1]].callees()}
    assert len(printed) == 1 + 2 * 3
    for blk, shape in ((callees[0], (1, 4, 8, 16)), (callees[1], (1, 2, 8, 16))):
        assert g[blk].arguments[-1].type.shape == shape and g[blk].outputs[0].type.shape == shape
        norm, rope = g[blk].callees()
        assert norm.startswith("blk.norm.norm.rms_norm_") and rope.startswith("blk.rope.rope_")
        assert g[norm].arguments[0].type.shape == shape and g[rope].arguments[0].type.shape == shape
    assert callees[0] == ("blk" if outer == "simple" else "blk.rope_block_" + composite_hash("rope_block", {}))
    assert re.fullmatch(re.escape(callees[0]) + r"_[0-9a-f]{8}", callees[1])
    check_numerics(program, model, sample)
