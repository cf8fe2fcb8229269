"""Every code example of the seed documents (the user's specification),
converted with coreai_torch, saved, generated with coreai-gen, compiled and
run, compared with PyTorch eager (max abs error <= 1e-5).

`torch.export.export(m, args=...)` of the seeds is `torch.export.export(m,
args=...)` here (PyTorch 1.13 has no torch.export).
"""
import asyncio
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

import coreai_torch
from coreai_torch import ExternalizeSpec, TorchConverter, get_decomp_table
from coreai_torch.composite_ops import RMSNormImpl
from coreai_torch.testing import max_abs_diff, run_program

ATOL = 1e-5


@pytest.fixture(autouse=True)
def _toolchain(coreai_gen, c_compiler):
    """Every test here runs generated C."""


def export_decomposed(model, sample):
    return torch.export.export(model, args=sample).run_decompositions(coreai_torch.get_decomp_table())


def single_output(result):
    assert len(result) == 1, result.keys()
    return list(result.values())[0]


# ---------------------------------------------------------------------------
# 000 Externalization guide
# ---------------------------------------------------------------------------


class RMSNormComposite(nn.Module):
    def __init__(self, axes=-1, eps=1e-5, version=1):
        super().__init__()
        self.axes = axes
        self.eps = eps
        self.version = version

    def forward(self, input: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        x_f32 = input.to(torch.float32)
        inv_rms = torch.rsqrt((x_f32 * x_f32).mean(self.axes, keepdim=True) + self.eps)
        return (input * inv_rms).to(input.dtype) * scale


def test_externalization_guide_composite_op_example():
    torch.manual_seed(0)
    model = RMSNormComposite().eval()
    sample = (torch.randn(10), torch.randn(10))
    converter = TorchConverter().add_pytorch_module(
        model,
        export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(coreai_torch.get_decomp_table()),
        externalize_modules=[
            ExternalizeSpec(
                target_class=RMSNormComposite,
                composite_op_name="rms_norm",
                composite_attrs=["axes", "eps", "version"],
            )
        ],
    )
    coreai_program = converter.to_coreai()
    coreai_program.optimize()
    text = str(coreai_program)
    # the root module itself is the composite op: @main just invokes it
    assert "coreai.graph private noinline @rms_norm_" in text
    assert 'composite_declaration<"rms_norm"' in text
    assert 'input_names = ["input", "scale"]' in text
    assert "axes = -1 : si64" in text and "eps = 9.99999974E-6 : f32" in text and "version = 1 : si64" in text
    assert 'output_names = ["output"]' in text
    assert "coreai.invoke @rms_norm_" in text
    out = run_program(coreai_program, [{"input": sample[0], "scale": sample[1]}])[0]
    with torch.no_grad():
        ref = model(*sample)
    assert max_abs_diff(ref, single_output(out)) <= ATOL


class RMSNormWrapper(nn.Module):
    """Convenience wrapper that owns the learnable scale parameter."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.norm = RMSNormImpl(eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x, self.weight)


class ModelWithNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = RMSNormWrapper(dim=10)
        self.linear = nn.Linear(10, 5)

    def forward(self, x):
        return self.linear(self.norm(x))


def _randomize_norm(model):
    with torch.no_grad():
        model.norm.weight.copy_(1.0 + 0.5 * torch.randn(10))
    return model


def test_externalization_guide_structure_composite():
    """The IR the guide shows: private noinline @norm.<...>.rms_norm_<hash>
    with input_names ["input", "scale"], op_attrs axes/eps/version, invoked
    from @main."""
    torch.manual_seed(1)
    model = _randomize_norm(ModelWithNorm().eval())
    sample = (torch.randn(1, 10),)
    program = TorchConverter().add_pytorch_module(
        model,
        export_fn=lambda m: export_decomposed(m, sample),
        externalize_modules=[ExternalizeSpec(target_class=RMSNormImpl, composite_op_name="rms_norm",
                                             composite_attrs=["axes", "eps", "version"])],
    ).to_coreai()
    program.optimize()
    text = str(program)
    head = ('coreai.graph private noinline @norm.norm.rms_norm_a99f94d1(%arg0: tensor<1x10xf32> '
            '{coreai.name = "input"}, %arg1: tensor<10xf32> {coreai.name = "scale"}) -> tensor<1x10xf32> '
            'attributes {composite_decl = #coreai.composite_declaration<"rms_norm" = {input_names = '
            '["input", "scale"], op_attrs = {axes = -1 : si64, eps = 9.99999974E-6 : f32, version = 1 : si64}, '
            'output_names = ["output"]}>}')
    assert head in text
    assert 'coreai.graph @main(%arg0: tensor<1x10xf32> {coreai.name = "x"}) -> tensor<1x5xf32>' in text
    main = text[text.index("coreai.graph @main"):]
    assert "coreai.invoke @norm.norm.rms_norm_a99f94d1(%arg0, %" in main
    assert "coreai.linear" in main
    # the composite graph comes before @main
    assert text.index("@norm.norm.rms_norm_a99f94d1(") < text.index("coreai.graph @main")
    out = run_program(program, [{"x": sample[0]}])[0]
    with torch.no_grad():
        ref = model(sample[0])
    assert max_abs_diff(ref, single_output(out)) <= ATOL


def test_externalization_guide_structure_simple():
    """A bare class: a plain `noinline` graph named by the module path, no
    composite_decl, taking only x (its scale is a constant inside)."""
    torch.manual_seed(2)
    model = _randomize_norm(ModelWithNorm().eval())
    sample = (torch.randn(1, 10),)
    program = TorchConverter().add_pytorch_module(
        model, export_fn=lambda m: export_decomposed(m, sample), externalize_modules=[RMSNormWrapper]).to_coreai()
    program.optimize()
    text = str(program)
    assert "coreai.graph noinline @norm(%arg0: tensor<1x10xf32> {coreai.name = \"x\"}) -> tensor<1x10xf32> {" in text
    assert "composite_decl" not in text
    assert "private" not in text
    assert "coreai.invoke @norm(%arg0) : (tensor<1x10xf32>) -> tensor<1x10xf32>" in text
    out = run_program(program, [{"x": sample[0]}])[0]
    with torch.no_grad():
        ref = model(sample[0])
    assert max_abs_diff(ref, single_output(out)) <= ATOL


# ---------------------------------------------------------------------------
# 002 Conversion workflows
# ---------------------------------------------------------------------------


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(10, 5)

    def forward(self, x):
        return self.linear(x)


def test_workflow_from_exported_program():
    model = MyModel().eval()
    ep = torch.export.export(model, args=(torch.randn(1, 10),))
    ep = ep.run_decompositions(get_decomp_table())
    converter = TorchConverter().add_exported_program(ep)
    coreai_program = converter.to_coreai()
    coreai_program.optimize()
    x = torch.randn(1, 10)
    out = run_program(coreai_program, [{"x": x}])[0]
    with torch.no_grad():
        assert max_abs_diff(model(x), single_output(out)) <= ATOL


def test_workflow_from_nn_module():
    model = MyModel().eval()
    sample = (torch.randn(1, 10),)
    converter = TorchConverter().add_pytorch_module(
        model,
        export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(coreai_torch.get_decomp_table()),
    )
    coreai_program = converter.to_coreai()
    coreai_program.optimize()
    out = run_program(coreai_program, [{"x": sample[0]}])[0]
    with torch.no_grad():
        assert max_abs_diff(model(sample[0]), single_output(out)) <= ATOL


def test_workflow_composite_op_externalization():
    torch.manual_seed(3)
    model = _randomize_norm(ModelWithNorm().eval())
    sample = (torch.randn(1, 10),)
    converter = TorchConverter().add_pytorch_module(
        model,
        export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(coreai_torch.get_decomp_table()),
        externalize_modules=[
            ExternalizeSpec(target_class=RMSNormImpl, composite_op_name="rms_norm", composite_attrs=["axes", "eps"])
        ],
    )
    coreai_program = converter.to_coreai()
    coreai_program.optimize()
    text = str(coreai_program)
    assert "op_attrs = {axes = -1 : si64, eps = 9.99999974E-6 : f32}" in text
    x = torch.randn(1, 10)
    out = run_program(coreai_program, [{"x": x}])[0]
    with torch.no_grad():
        assert max_abs_diff(model(x), single_output(out)) <= ATOL


def test_workflow_composite_ops_wrapper_from_package():
    """The packaged RMSNorm wrapper works the same (target stays RMSNormImpl)."""
    from coreai_torch.composite_ops import RMSNorm

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = RMSNorm(10)
            self.linear = nn.Linear(10, 5)

        def forward(self, x):
            return self.linear(self.norm(x))

    torch.manual_seed(4)
    model = M().eval()
    with torch.no_grad():
        model.norm.weight.copy_(torch.randn(10))
    sample = (torch.randn(3, 10),)
    program = TorchConverter().add_pytorch_module(
        model, export_fn=lambda m: export_decomposed(m, sample),
        externalize_modules=[ExternalizeSpec(RMSNormImpl, "rms_norm", ["axes", "eps", "version"])]).to_coreai()
    program.optimize()
    assert "@norm.norm.rms_norm_a99f94d1" in str(program)
    out = run_program(program, [{"x": sample[0]}])[0]
    with torch.no_grad():
        assert max_abs_diff(model(sample[0]), single_output(out)) <= ATOL


# ---------------------------------------------------------------------------
# 003 Composite ops guide (FeedForwardBlock + the verification flow)
# ---------------------------------------------------------------------------


class FeedForwardBlock(nn.Module):
    def __init__(self, dim: int, ff_dim: int, eps: float = 1e-5):
        super().__init__()
        self.norm = RMSNormWrapper(dim=dim, eps=eps)
        self.fc1 = nn.Linear(dim, ff_dim, bias=False)
        self.fc2 = nn.Linear(ff_dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(self.norm(x))))


def _feedforward_program(composite_attrs):
    torch.manual_seed(0)
    model = FeedForwardBlock(dim=64, ff_dim=256).eval()
    with torch.no_grad():
        model.norm.weight.copy_(1.0 + 0.5 * torch.randn(64))
    sample = (torch.randn(2, 16, 64),)
    coreai_program = (
        TorchConverter()
        .add_pytorch_module(
            model,
            export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(
                coreai_torch.get_decomp_table()),
            externalize_modules=[
                ExternalizeSpec(target_class=RMSNormImpl, composite_op_name="rms_norm",
                                composite_attrs=composite_attrs)
            ],
        )
        .to_coreai()
    )
    coreai_program.optimize()
    return model, sample, coreai_program


@pytest.mark.parametrize("composite_kernels", [True, False], ids=["kernel", "body"])
def test_composite_ops_guide_feedforward_verification_flow(composite_kernels):
    """The guide's run_and_compare, verbatim apart from the tolerance."""
    from coreai.runtime import NDArray

    model, sample, coreai_program = _feedforward_program(["axes", "eps"])
    result = {}

    async def run_and_compare(coreai_program, model, sample):
        with tempfile.TemporaryDirectory() as tmpdir:
            asset = coreai_program.save_asset(Path(tmpdir) / "rms_norm_example.aimodel")
            async with asset.executable(composite_kernels=composite_kernels) as ai_model:
                function = ai_model.load_function("main")
                x = sample[0]
                coreai_out = await function({"x": NDArray(x)})
                coreai_np = list(coreai_out.values())[0].numpy()
                with torch.no_grad():
                    torch_np = model(x).numpy()
                result["err"] = float(np.abs(torch_np - coreai_np).max())
                result["close"] = bool(np.allclose(torch_np, coreai_np, atol=1e-4))

    asyncio.run(run_and_compare(coreai_program, model, sample))
    assert result["close"]
    assert result["err"] <= ATOL


def test_composite_ops_guide_generic_skeleton_attrs_version():
    model, sample, program = _feedforward_program(["axes", "eps", "version"])
    text = str(program)
    assert "@norm.norm.rms_norm_a99f94d1" in text
    x = torch.randn(2, 16, 64)
    out = run_program(program, [{"x": x}])[0]
    with torch.no_grad():
        assert max_abs_diff(model(x), single_output(out)) <= ATOL


# ---------------------------------------------------------------------------
# 004 TorchConverter API reference
# ---------------------------------------------------------------------------


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)

    def forward(self, image):
        h = torch.relu(self.bn(self.conv(image)))
        return self.fc(torch.flatten(self.pool(h), 1))


def _init_bn(model):
    torch.manual_seed(5)
    with torch.no_grad():
        model.bn.running_mean.copy_(torch.randn(8) * 0.1)
        model.bn.running_var.copy_(torch.rand(8) + 0.5)
        model.bn.weight.copy_(torch.randn(8))
        model.bn.bias.copy_(torch.randn(8))
    return model


def test_api_add_exported_program_with_names():
    model = _init_bn(SmallCNN().eval())
    example_inputs = (torch.randn(1, 3, 224, 224),)
    exported = torch.export.export(model, example_inputs)
    exported = exported.run_decompositions(get_decomp_table())
    converter = TorchConverter().add_exported_program(exported, input_names=["image"], output_names=["logits"])
    coreai_program = converter.to_coreai()
    coreai_program.optimize()
    entry = coreai_program.entrypoints[0]
    assert (entry.inputs, entry.outputs, entry.states) == (["image"], ["logits"], [])
    x = torch.randn(1, 3, 224, 224)
    out = run_program(coreai_program, [{"image": x}])[0]
    with torch.no_grad():
        assert max_abs_diff(model(x), out["logits"]) <= ATOL


def test_api_add_pytorch_module_example():
    model = _init_bn(SmallCNN().eval())
    sample = (torch.randn(1, 3, 224, 224),)
    converter = TorchConverter().add_pytorch_module(
        model,
        export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(coreai_torch.get_decomp_table()),
    )
    coreai_program = converter.to_coreai()
    coreai_program.optimize()
    out = run_program(coreai_program, [{"image": sample[0]}])[0]
    with torch.no_grad():
        assert max_abs_diff(model(sample[0]), single_output(out)) <= ATOL


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return torch.tanh(self.fc(x))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)

    def forward(self, z):
        return torch.sigmoid(self.fc(z))


def test_api_clear_and_multiple_entrypoints():
    enc, dec = Encoder().eval(), Decoder().eval()
    ep_a = torch.export.export(enc, args=(torch.randn(2, 6),)).run_decompositions(get_decomp_table())
    ep_b = torch.export.export(dec, args=(torch.randn(2, 4),)).run_decompositions(get_decomp_table())
    converter = TorchConverter()
    converter.add_exported_program(ep_a, entrypoint_name="encoder")
    converter.add_exported_program(ep_b, entrypoint_name="decoder")
    program = converter.to_coreai()
    assert [e.name for e in program.entrypoints] == ["encoder", "decoder"]
    x, z = torch.randn(2, 6), torch.randn(2, 4)
    out_e = run_program(program, [{"x": x}], entrypoint="encoder")[0]
    out_d = run_program(program, [{"z": z}], entrypoint="decoder")[0]
    with torch.no_grad():
        assert max_abs_diff(enc(x), single_output(out_e)) <= ATOL
        assert max_abs_diff(dec(z), single_output(out_d)) <= ATOL
    only = converter.to_coreai(entrypoints=["decoder"])
    assert [e.name for e in only.entrypoints] == ["decoder"]
    # Remove just the encoder
    converter.clear(entrypoints=["encoder"])
    assert [e.name for e in converter.to_coreai().entrypoints] == ["decoder"]
    # Remove everything
    converter.clear()
    with pytest.raises(ValueError):
        converter.to_coreai()


def test_api_two_pytorch_modules_in_one_program():
    enc, dec = Encoder().eval(), Decoder().eval()
    converter = TorchConverter()
    converter.add_pytorch_module(enc, export_fn=lambda m: export_decomposed(m, (torch.randn(2, 6),)),
                                 entrypoint_name="encoder")
    converter.add_pytorch_module(dec, export_fn=lambda m: export_decomposed(m, (torch.randn(2, 4),)),
                                 entrypoint_name="decoder", output_names=["reconstruction"])
    program = converter.to_coreai()
    program.optimize()
    x, z = torch.randn(2, 6), torch.randn(2, 4)
    assert max_abs_diff(enc(x), single_output(run_program(program, [{"x": x}], "encoder")[0])) <= ATOL
    assert max_abs_diff(dec(z), run_program(program, [{"z": z}], "decoder")[0]["reconstruction"]) <= ATOL


def test_api_get_decomp_table_examples():
    model = MyModel().eval()
    example_inputs = (torch.randn(1, 10),)
    ep = torch.export.export(model, args=example_inputs)
    ep = ep.run_decompositions(get_decomp_table())
    coreai_program = TorchConverter().add_exported_program(ep).to_coreai()
    coreai_program.optimize()
    coreai_program2 = (
        TorchConverter()
        .add_pytorch_module(
            model,
            export_fn=lambda m: torch.export.export(m, args=example_inputs).run_decompositions(
                coreai_torch.get_decomp_table()),
        )
        .to_coreai()
    )
    coreai_program2.optimize()
    assert str(coreai_program) == str(coreai_program2)
    x = torch.randn(1, 10)
    with torch.no_grad():
        assert max_abs_diff(model(x), single_output(run_program(coreai_program, [{"x": x}])[0])) <= ATOL


# IO naming ------------------------------------------------------------------------


class Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x)


def test_io_naming_stateless_example():
    model = Linear().eval()
    ep = torch.export.export(model, args=(torch.randn(1, 8),))
    ep = ep.run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep, input_names=["features"], output_names=["logits"])
    program = program.to_coreai().optimize()
    entry = program.entrypoints[0]
    assert entry.inputs == ["features"] and entry.outputs == ["logits"] and entry.states == []
    x = torch.randn(1, 8)
    out = run_program(program, [{"features": x}])[0]
    with torch.no_grad():
        assert max_abs_diff(model(x), out["logits"]) <= ATOL


class KVCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("kv_cache", torch.zeros(1, 4))  # state[0]
        self.register_buffer("pos_idx", torch.zeros(1))  # state[1]

    def forward(self, x, y, z):
        self.kv_cache.add_(x)  # buffer mutation
        self.pos_idx.add_(1)  # buffer mutation
        y.mul_(2)  # state[2]: mutated user input
        # non-mutated: x -> input[0], z -> input[1]
        return self.kv_cache + y, z * 3


def test_io_naming_stateful_kvcache_example():
    torch.manual_seed(6)
    example = (torch.randn(1, 4), torch.randn(1, 4), torch.randn(1, 4))
    model = KVCache().eval()
    ep = torch.export.export(model, args=example)
    ep = ep.run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(
        ep,
        state_names=["kv_cache", "pos_idx", "y_state"],
        input_names=["query", "context"],
        output_names=["attn_out", "scaled"],
    ).to_coreai()
    program.optimize()
    entry = program.entrypoints[0]
    assert entry.states == ["kv_cache", "pos_idx", "y_state"]
    assert entry.inputs == ["query", "context"]
    assert entry.outputs == ["attn_out", "scaled"]
    # graph: arguments = states then inputs; results = state updates then outputs
    graph = program.module.find_graph(entry.graph)
    assert [a.name for a in graph.arguments] == ["kv_cache", "pos_idx", "y_state", "query", "context"]
    assert len(graph.outputs) == 5
    # the model and its inputs were not changed by exporting
    assert torch.equal(model.kv_cache, torch.zeros(1, 4)) and torch.equal(model.pos_idx, torch.zeros(1))

    eager = KVCache().eval()
    y = example[1].clone()  # the eager y keeps being doubled, as y_state does
    calls = [(torch.randn(1, 4), torch.randn(1, 4)) for _ in range(4)]
    outs = run_program(program, [{"query": q, "context": c} for q, c in calls])
    for (q, c), out in zip(calls, outs):
        with torch.no_grad():
            attn_out, scaled = eager(q, y, c)
        assert max_abs_diff(attn_out, out["attn_out"]) <= ATOL
        assert max_abs_diff(scaled, out["scaled"]) <= ATOL
        assert max_abs_diff(eager.kv_cache, out["kv_cache"]) <= ATOL
        assert max_abs_diff(eager.pos_idx, out["pos_idx"]) <= ATOL
        assert max_abs_diff(y, out["y_state"]) <= ATOL
    assert float(eager.pos_idx) == 4.0


def test_io_naming_defaults():
    example = (torch.randn(1, 4), torch.randn(1, 4), torch.randn(1, 4))
    ep = torch.export.export(KVCache().eval(), args=example).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    entry = program.entrypoints[0]
    assert entry.states == ["b_kv_cache", "b_pos_idx", "y"]
    assert entry.inputs == ["x", "z"]
    assert entry.outputs == ["add_2", "mul_1"]

    class TwoOut(nn.Module):
        def forward(self, a, b, c, d):
            return a + b, c * d

    ep = torch.export.export(TwoOut(), args=tuple(torch.randn(3) for _ in range(4)))
    entry = TorchConverter().add_exported_program(ep.run_decompositions(get_decomp_table())).to_coreai().entrypoints[0]
    assert entry.inputs == ["a", "b", "c", "d"] and entry.outputs == ["add", "mul"]


# register_torch_lowering -------------------------------------------------------------

from coreai._compiler.dialects import coreai  # noqa: E402
from coreai_torch._utils import get_operand, get_operands  # noqa: E402


@torch.library.custom_op("my_lib::scaled_add", mutates_args=())
def scaled_add(x: torch.Tensor, y: torch.Tensor, scale: float) -> torch.Tensor:
    return x + scale * y


@scaled_add.register_fake
def _(x, y, scale):
    return torch.empty_like(x)


class ScaledAddModel(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.ops.my_lib.scaled_add(x, y, 0.5)


def test_register_torch_lowering_custom_op_example():
    model = ScaledAddModel().eval()
    example_inputs = (torch.randn(4, 8), torch.randn(4, 8))
    exported = torch.export.export(model, args=example_inputs)
    exported = exported.run_decompositions(get_decomp_table())
    assert any(n.target is torch.ops.my_lib.scaled_add.default for n in exported.graph.nodes)

    converter = TorchConverter()

    @converter.register_torch_lowering("my_lib::scaled_add.default")
    def lower_scaled_add(values_map, node, loc):
        x, y = get_operands(values_map, node, [0, 1], loc)
        scale = node.args[2]  # plain Python float
        scale_val = coreai.constant(scale, dtype=x.type.element_type)
        scaled_y = coreai.broadcasting_mul(y, scale_val, loc=loc)
        return coreai.broadcasting_add(x, scaled_y, loc=loc)

    coreai_program = converter.add_exported_program(exported, input_names=["x", "y"],
                                                    output_names=["result"]).to_coreai()
    coreai_program.optimize()
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    out = run_program(coreai_program, [{"x": x, "y": y}])[0]
    assert max_abs_diff(model(x, y), out["result"]) <= ATOL


class PoolModel(nn.Module):
    def __init__(self, size=(1, 1)):
        super().__init__()
        self.size = size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.adaptive_avg_pool2d(x, self.size)


def _override_converter():
    converter = TorchConverter()
    calls = []

    @converter.register_torch_lowering("aten::_adaptive_avg_pool2d.default", allow_override=True)
    def lower_adaptive_avg_pool2d_static(values_map, node, loc):
        calls.append(node.name)
        x = get_operand(values_map, node, 0, loc)
        output_h, output_w = node.args[1]
        input_h, input_w = x.type.shape[2], x.type.shape[3]
        stride_h, stride_w = input_h // output_h, input_w // output_w
        kernel_h = input_h - (output_h - 1) * stride_h
        kernel_w = input_w - (output_w - 1) * stride_w
        return coreai.broadcasting_divide(
            coreai.sumpool2d(
                x,
                kernel_size=np.array([kernel_h, kernel_w], dtype=np.uint32),
                strides=np.array([stride_h, stride_w], dtype=np.uint32),
                dilation=coreai.constant([1, 1], dtype=np.uint32),
            ),
            coreai.cast(float(kernel_h * kernel_w), x.type.element_type),
        )

    return converter, calls


@pytest.mark.parametrize("size", [(1, 1), (2, 4)])
def test_register_torch_lowering_override_example(size):
    pool_model = PoolModel(size).eval()
    pool_input = (torch.randn(1, 3, 8, 8),)
    pool_exported = torch.export.export(pool_model, args=pool_input)
    pool_exported = pool_exported.run_decompositions(get_decomp_table())
    converter, calls = _override_converter()
    coreai_program = converter.add_exported_program(pool_exported).to_coreai()
    coreai_program.optimize()
    if size != (1, 1):
        # PyTorch 1.13 turns a (1, 1) adaptive pool into mean(); other sizes reach the override
        assert calls and "coreai.sumpool2d" in str(coreai_program)
    x = torch.randn(1, 3, 8, 8)
    out = run_program(coreai_program, [{"x": x}])[0]
    assert max_abs_diff(pool_model(x), single_output(out)) <= ATOL


# register_custom_kernels ---------------------------------------------------------------

from coreai_torch import MetalParameter, TorchMetalKernel  # noqa: E402


def torch_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y


kernel = TorchMetalKernel(
    "vector_add",
    input_names=["x", "y"],
    result_names=["output"],
    src="output[id] = x[id] + y[id];",
    torch_defn=torch_add,
    metal_params=[MetalParameter("id", "uint", "thread_position_in_grid")],
)


class AddModel(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return kernel(
            x,
            y,
            threads_per_grid=(x.shape[0], 1, 1),
            threads_per_thread_group=(1, 1, 1),
            result_shapes=[list(x.shape)],
        )


def test_register_custom_kernels_example():
    model = AddModel().eval()
    example_inputs = (torch.randn(16), torch.randn(16))
    converter = TorchConverter()
    converter.register_custom_kernels([kernel])
    exported = torch.export.export(model, args=example_inputs)
    exported = exported.run_decompositions(get_decomp_table())
    kernel_nodes = [n for n in exported.graph.nodes if n.op == "call_function"]
    assert len(kernel_nodes) == 1  # the kernel call is one node
    coreai_program = converter.add_exported_program(exported, input_names=["x", "y"],
                                                    output_names=["result"]).to_coreai()
    coreai_program.optimize()
    text = str(coreai_program)
    assert "coreai.elementwise_kernel" in text and "output[id] = x[id] + y[id];" in text
    x, y = torch.randn(16), torch.randn(16)
    out = run_program(coreai_program, [{"x": x, "y": y}])[0]
    assert max_abs_diff(model(x, y), out["result"]) <= ATOL
