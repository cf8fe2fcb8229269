"""Custom ops and kernels beyond the seeds' examples: composite graphs built
by custom lowerings (generate_composite_decl), lowerings with several
results, kernels with several results / index parameters / dtype
templates, and torch.library.custom_op ops seen through torch.export."""
from typing import Optional, Sequence, Tuple

import numpy as np
import pytest
import torch
import torch.nn as nn

import coreai_torch
from coreai._compiler import ir
from coreai._compiler.dialects import coreai
from coreai_torch import (MetalParameter, TorchConverter, TorchMetalKernel, generate_composite_decl,
                          get_decomp_table)
from coreai_torch._utils import get_operand, get_operands
from coreai_torch.testing import max_abs_diff, run_program

ATOL = 1e-5


def export_decomposed(model, *args):
    return torch.export.export(model, args=args).run_decompositions(get_decomp_table())


@torch.library.custom_op("custlib::swish_gate", mutates_args=())
def swish_gate(x: torch.Tensor, gate: torch.Tensor, beta: float) -> torch.Tensor:
    return x * torch.sigmoid(beta * gate)


@swish_gate.register_fake
def _(x, gate, beta):
    return torch.empty_like(x)


@torch.library.custom_op("custlib::minmax", mutates_args=())
def minmax(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    return x.amin(-1), x.amax(-1)


@minmax.register_fake
def _(x):
    return x.amin(-1), x.amax(-1)


def test_custom_op_traces_as_one_node():
    assert swish_gate._qualname == "custlib::swish_gate"
    x, g = torch.randn(3), torch.randn(3)
    assert torch.allclose(swish_gate(x, g, 2.0), x * torch.sigmoid(2.0 * g))

    class M(nn.Module):
        def forward(self, x, g):
            return torch.ops.custlib.swish_gate(x, g, 1.5) + 1

    ep = export_decomposed(M(), x, g)
    targets = [n.target for n in ep.graph.nodes if n.op == "call_function"]
    assert targets[0] is torch.ops.custlib.swish_gate.default
    # the fake kernel gives shapes without running the function
    meta = torch.ops.custlib.swish_gate(torch.empty(2, 5, device="meta"), torch.empty(2, 5, device="meta"), 1.0)
    assert meta.shape == (2, 5) and meta.device.type == "meta"


def test_custom_lowering_building_a_composite_graph(coreai_gen, c_compiler):
    """generate_composite_decl + a private noinline graph + coreai.invoke."""

    class M(nn.Module):
        def forward(self, x, g):
            return torch.ops.custlib.swish_gate(x, g, 2.0) * 3

    x, g = torch.randn(4, 8), torch.randn(4, 8)
    ep = export_decomposed(M(), x, g)
    converter = TorchConverter()

    @converter.register_torch_lowering("custlib::swish_gate")  # any overload
    def lower(values_map, node, loc):
        arg0 = values_map[node.args[0].name]
        arg1 = values_map[node.args[1].name]
        beta = node.args[2]
        decl = generate_composite_decl(None, "swish_gate", ["input", "gate"], ["output"],
                                       {"beta": beta, "version": 1})
        graph = ir.Graph(f"swish_gate_{len(values_map.ctx.module.graphs)}", private=True, noinline=True,
                         composite=decl)
        a = graph.add_argument(arg0.type, "input")
        b = graph.add_argument(arg1.type, "gate")
        with ir.InsertionPoint(graph):
            scaled = coreai.mul(b, coreai.constant(beta, dtype=b.type.element_type))
            graph.set_outputs([coreai.mul(a, coreai.sigmoid(scaled), loc=loc)])
        values_map.ctx.module.add_graph(graph)
        return coreai.invoke(graph, [arg0, arg1], loc=loc)[0]

    program = converter.add_exported_program(ep).to_coreai()
    program.optimize()
    text = str(program)
    assert 'composite_declaration<"swish_gate" = {input_names = ["input", "gate"], op_attrs = {beta = ' in text
    assert "version = 1 : si64" in text
    out = run_program(program, [{"x": x, "g": g}])[0]
    assert max_abs_diff(M()(x, g), list(out.values())[0]) <= ATOL


def test_generate_composite_decl_validation():
    attrs = {"beta": 0.5}
    decl = generate_composite_decl(None, "op", ["a"], ["out"], attrs, version=1)
    assert attrs == {"beta": 0.5}  # the caller's dict is left alone
    assert decl.attrs["version"].value == 1 and decl.attrs["beta"].kind == "f32"
    assert generate_composite_decl(None, "op", ["a"], ["out"], {"beta": 0.5}).attrs["version"].value == 1
    assert generate_composite_decl(None, "op", ["a"], ["out"], {"version": 2}).attrs["version"].value == 2
    with pytest.raises(ValueError):
        generate_composite_decl(None, "op", "a", ["out"], {"version": 1})


def test_custom_lowering_with_several_results(coreai_gen, c_compiler):
    class M(nn.Module):
        def forward(self, x):
            lo, hi = torch.ops.custlib.minmax(x)
            return hi - lo

    x = torch.randn(3, 7)
    ep = export_decomposed(M(), x)
    converter = TorchConverter()

    @converter.register_torch_lowering("custlib::minmax.default")
    def lower(values_map, node, loc):
        v = get_operand(values_map, node, 0, loc)
        return [coreai.reduce_min(v, [-1], loc=loc), coreai.reduce_max(v, [-1], loc=loc)]

    program = converter.add_exported_program(ep, output_names=["range"]).to_coreai()
    out = run_program(program, [{"x": x}])[0]
    assert max_abs_diff(M()(x), out["range"]) <= ATOL


def test_override_of_a_builtin_lowering_wins():
    class M(nn.Module):
        def forward(self, x):
            return torch.relu(x)

    ep = export_decomposed(M(), torch.randn(3))
    converter = TorchConverter()

    @converter.register_torch_lowering("aten::relu.default", allow_override=True)
    def lower(values_map, node, loc):
        (x,) = get_operands(values_map, node, [0], loc)
        return coreai.maximum(x, coreai.constant(0.0, dtype=x.type.element_type), loc=loc)

    text = str(converter.add_exported_program(ep).to_coreai())
    assert "coreai.maximum" in text and "coreai.relu" not in text


def torch_sincos(x: torch.Tensor):
    return [torch.sin(x), torch.cos(x)]


sincos_kernel = TorchMetalKernel(
    "sincos",
    input_names=["x"],
    result_names=["out_sin", "out_cos"],
    src="out_sin[id] = sin(x[id]); out_cos[id] = cos(x[id]);",
    torch_defn=torch_sincos,
    metal_params=[MetalParameter("id", "uint", "thread_position_in_grid")],
)

scale_kernel = TorchMetalKernel(
    "scale_by_index",
    input_names=["A"],
    result_names=["B"],
    src="B[gid] = A[gid] * (TYPE)2;",
    torch_defn=lambda a: a * 2,
    metal_params=[MetalParameter("gid", "uint", "thread_position_in_grid")],
    template_dtypes={"A": "TYPE"},
)


class SinCosModel(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        results = sincos_kernel(
            x,
            threads_per_grid=(x.shape[0], 1, 1),
            threads_per_thread_group=(1, 1, 1),
            result_shapes=[list(x.shape), list(x.shape)],
        )
        return results[0] + results[1]  # sin(x) + cos(x)


def test_kernel_with_two_results(coreai_gen, c_compiler):
    x = torch.randn(12)
    ep = export_decomposed(SinCosModel().eval(), x)
    program = TorchConverter().register_custom_kernels([sincos_kernel]).add_exported_program(ep).to_coreai()
    text = str(program)
    assert text.count("coreai.elementwise_kernel") == 1
    out = run_program(program, [{"x": x}])[0]
    assert max_abs_diff(SinCosModel()(x), list(out.values())[0]) <= ATOL


def test_kernel_index_parameter_and_dtype_template(coreai_gen, c_compiler):
    class M(nn.Module):
        def forward(self, a, i):
            return scale_kernel(a) + 1, scale_kernel(i)

    a = torch.randn(2, 5)
    i = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    assert scale_kernel.c_source({"A": torch.float32}).startswith("const unsigned int gid = (unsigned int)id;")
    assert "(int32_t)2" in scale_kernel.c_source({"A": torch.int32})
    ep = export_decomposed(M(), a, i)
    program = TorchConverter().register_custom_kernels([scale_kernel]).add_exported_program(ep).to_coreai()
    out = list(run_program(program, [{"a": a, "i": i}])[0].values())
    ref = M()(a, i)
    assert max_abs_diff(ref[0], out[0]) <= ATOL
    assert np.array_equal(ref[1].numpy(), out[1])


def test_kernel_eager_call_checks():
    x = torch.randn(4)
    assert torch.allclose(sincos_kernel(x)[0], torch.sin(x))
    with pytest.raises(ValueError, match="result shape"):
        sincos_kernel(x, result_shapes=[[3], [4]])
    with pytest.raises(TypeError):
        sincos_kernel(x, x)
    assert sincos_kernel.qualified_name == "coreai_kernels::sincos.default"


# ---------------------------------------------------------------------------
# mutating custom ops: auto_functionalized nodes in the exported program
# ---------------------------------------------------------------------------


@torch.library.custom_op("custlib::write_rows", mutates_args=["cache"])
def write_rows(cache: torch.Tensor, new: torch.Tensor, start: int) -> torch.Tensor:
    cache[:, start:start + new.shape[1]] = new
    return cache.sum(1)


@write_rows.register_fake
def _(cache, new, start):
    return cache.new_empty(cache.shape[0])


def _lower_write_rows(values_map, node, loc):
    """The op's result, then the new value of its mutated argument."""
    cache, new = get_operands(values_map, node, [0, 1], loc)
    start = node.args[2]
    width = cache.type.shape[1]
    parts = []
    if start > 0:
        parts.append(coreai.slice(cache, [0, 0], [cache.type.shape[0], start], [1, 1], loc=loc))
    parts.append(new)
    end = start + new.type.shape[1]
    if end < width:
        parts.append(coreai.slice(cache, [0, end], [cache.type.shape[0], width], [1, 1], loc=loc))
    updated = coreai.concat(parts, 1, loc=loc)
    return coreai.reduce_sum(updated, [1], loc=loc), updated


class WritesCaches(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(2, 8))

    def forward(self, x, k):
        s = torch.ops.custlib.write_rows(self.cache, x, 2)
        s2 = torch.ops.custlib.write_rows(k, x * 2, 5)
        return s + 1, s2


def test_mutating_custom_op_updates_buffer_and_input_state(coreai_gen, c_compiler):
    """auto_functionalized(_v2) nodes lower through the op's own lowering: the
    mutated buffer and the mutated user input become states that carry over."""
    torch.manual_seed(3)
    model = WritesCaches().eval()
    k0 = torch.randn(2, 8)
    ep = export_decomposed(model, torch.randn(2, 3), k0.clone())
    assert any("auto_functionalized" in str(n.target) for n in ep.graph.nodes)
    converter = TorchConverter()
    converter.register_torch_lowering("custlib::write_rows.default")(_lower_write_rows)
    program = converter.add_exported_program(ep, state_names=["cache", "k"], output_names=["s", "s2"]).to_coreai()
    eager = WritesCaches().eval()
    k_eager = k0.clone()
    calls, want = [], []
    for _ in range(2):
        x = torch.randn(2, 3)
        calls.append({"x": x})
        s, s2 = eager(x, k_eager)
        want.append({"s": s.clone(), "s2": s2.clone(), "cache": eager.cache.clone(), "k": k_eager.clone()})
    got = run_program(program, calls)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert sorted(g) == sorted(w)
        for name in w:
            assert max_abs_diff(w[name], g[name]) <= 1e-5, name


def test_mutating_custom_op_errors():
    ep = export_decomposed(WritesCaches().eval(), torch.randn(2, 3), torch.randn(2, 8))
    with pytest.raises(coreai_torch.UnsupportedOpError,
                       match=r"test_torch_custom\.py:\d+: no lowering for the mutating op 'custlib::write_rows"):
        TorchConverter().add_exported_program(ep).to_coreai()

    converter = TorchConverter()

    @converter.register_torch_lowering("custlib::write_rows.default")
    def only_result(values_map, node, loc):
        return _lower_write_rows(values_map, node, loc)[0]

    with pytest.raises(ValueError, match=r"returned 1 value\(s\).*followed by the new value of each mutated "
                                         r"argument \(cache\)"):
        converter.add_exported_program(ep).to_coreai()
