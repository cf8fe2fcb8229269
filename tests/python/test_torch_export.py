"""What the converter reads from real ``torch.export`` programs (PyTorch >= 2.8):
the graph signature (parameters, buffers, constants, user inputs, buffer and
user-input mutations), the default IO/state names of the seeds' naming
rules, module-stack metadata, and get_decomp_table()."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from coreai_torch import TorchConverter, UnsupportedOpError, get_decomp_table
from coreai_torch._decomp import KEPT_AS_COMPOSITES
from coreai_torch._program import module_path_of, source_line_of
from coreai_torch.testing import max_abs_diff, run_program


def call_targets(ep):
    return [n.target for n in ep.graph.nodes if n.op == "call_function"]


def export(model, *args, **kwargs):
    return torch.export.export(model, args=args, kwargs=kwargs or None).run_decompositions(get_decomp_table())


def entry(program, name="main"):
    return next(e for e in program.module.entrypoints if e.name == name)


class KVCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("kv_cache", torch.zeros(1, 4))
        self.register_buffer("pos_idx", torch.zeros(1))
        self.register_buffer("unused_buf", torch.ones(2))
        self.proj = nn.Linear(4, 4)

    def forward(self, x, y, z):
        self.kv_cache.add_(x)
        self.pos_idx.add_(1)
        y.mul_(2)
        return self.kv_cache + y, z * 3 + self.proj(x)


def test_signature_kinds_and_default_names():
    """Buffers first then mutated user inputs are states (named b_<buffer>
    and the argument name), the other arguments inputs, outputs named by
    their producing node."""
    ep = export(KVCache().eval(), torch.randn(1, 4), torch.randn(1, 4), torch.randn(1, 4))
    kinds = [s.kind.name for s in ep.graph_signature.output_specs]
    assert kinds == ["BUFFER_MUTATION", "BUFFER_MUTATION", "USER_INPUT_MUTATION", "USER_OUTPUT", "USER_OUTPUT"]
    e = entry(TorchConverter().add_exported_program(ep).to_coreai())
    assert e.states == ["b_kv_cache", "b_pos_idx", "y"]
    assert e.inputs == ["x", "z"]
    assert e.outputs == ["add", "add_1"] or len(e.outputs) == 2 and len(set(e.outputs)) == 2


def test_stateful_program_runs_like_eager(coreai_gen, c_compiler):
    """Three calls: the buffers and the mutated input carry over in C as in eager."""
    torch.manual_seed(0)
    model = KVCache().eval()
    eager = KVCache().eval()
    eager.load_state_dict(model.state_dict())
    y0 = torch.randn(1, 4)
    ep = export(model, torch.randn(1, 4), y0.clone(), torch.randn(1, 4))
    program = TorchConverter().add_exported_program(ep, state_names=["kv", "pos", "y_state"]).to_coreai()
    calls, want = [], []
    y_eager = y0.clone()
    for _ in range(3):
        x, z = torch.randn(1, 4), torch.randn(1, 4)
        calls.append({"x": x, "z": z})
        with torch.no_grad():
            want.append([t.clone() for t in eager(x, y_eager, z)] + [eager.kv_cache.clone(), eager.pos_idx.clone(),
                                                                     y_eager.clone()])
    got = run_program(program, calls)
    assert len(got) == len(want) == 3
    for g, w in zip(got, want):
        outs = [v for k, v in g.items() if k not in ("kv", "pos", "y_state")]
        assert len(outs) == 2
        for o, r in zip(outs, w[:2]):
            assert max_abs_diff(r, o) <= 1e-6
        assert max_abs_diff(w[2], g["kv"]) <= 1e-6 and max_abs_diff(w[3], g["pos"]) == 0
        assert max_abs_diff(w[4], g["y_state"]) <= 1e-6


def test_kwargs_and_specialized_non_tensor_arguments(coreai_gen, c_compiler):
    class M(nn.Module):
        def forward(self, x, scale: float = 1.0, bias=None):
            out = x * scale
            if bias is not None:
                out = out + bias
            return out

    ep = export(M(), torch.randn(3), scale=2.5, bias=torch.randn(3))
    program = TorchConverter().add_exported_program(ep).to_coreai()
    assert entry(program).inputs == ["x", "bias"]
    x, b = torch.randn(3), torch.randn(3)
    (out,) = run_program(program, [{"x": x, "bias": b}])[0].values()
    assert max_abs_diff(x * 2.5 + b, out) <= 1e-6


def test_nested_input_structures_are_flattened():
    class M(nn.Module):
        def forward(self, pair):
            a, b = pair
            return a - b

    ep = export(M(), (torch.randn(2), torch.randn(2)))
    assert entry(TorchConverter().add_exported_program(ep).to_coreai()).inputs == ["pair_0", "pair_1"]


def test_input_named_like_a_builtin():
    ep = export(nn.Linear(3, 2), torch.randn(1, 3))  # forward(self, input)
    assert entry(TorchConverter().add_exported_program(ep).to_coreai()).inputs == ["input"]


def test_constant_tensor_attribute_is_folded(coreai_gen, c_compiler):
    """A plain tensor attribute (not a parameter or buffer) is a CONSTANT_TENSOR input."""

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = torch.arange(6.0).reshape(2, 3)

        def forward(self, x):
            return x * self.table

    ep = export(M(), torch.randn(2, 3))
    assert "CONSTANT_TENSOR" in [s.kind.name for s in ep.graph_signature.input_specs]
    x = torch.randn(2, 3)
    (out,) = run_program(TorchConverter().add_exported_program(ep).to_coreai(), [{"x": x}])[0].values()
    assert max_abs_diff(x * torch.arange(6.0).reshape(2, 3), out) == 0


def test_module_path_and_source_line_metadata():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.fc(x))  # the relu line

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            return self.block(x) * 2

    ep = export(M(), torch.randn(1, 4))
    by_target = {n.target: n for n in ep.graph.nodes if n.op == "call_function"}
    relu = by_target[torch.ops.aten.relu.default]
    assert module_path_of(relu) == "block"
    assert module_path_of(by_target[torch.ops.aten.mul.Tensor]) == ""
    path, line = source_line_of(relu).rsplit(":", 1)
    assert path == __file__
    assert open(__file__).read().splitlines()[int(line) - 1].strip().endswith("# the relu line")


def test_unsupported_graph_input_kind_is_named():
    class Tok(nn.Module):
        def forward(self, x):
            print("side effect")  # not captured; the program stays plain
            return x + 1

    ep = export(Tok(), torch.randn(2))
    TorchConverter().add_exported_program(ep).to_coreai()  # fine: print is not traced

    with pytest.raises(TypeError, match="torch.export.ExportedProgram"):
        TorchConverter().add_exported_program(Tok())


def test_run_decompositions_uses_the_table():
    class M(nn.Module):
        def forward(self, x, y):
            return torch.addcmul(x, x, y, value=0.5), F.silu(x), F.hardswish(y), torch.rsub(x, 1.0)

    ep = torch.export.export(M(), args=(torch.randn(3), torch.randn(3)))
    dec = ep.run_decompositions(get_decomp_table())
    targets = call_targets(dec)
    assert torch.ops.aten.addcmul.default not in targets
    # kept as composites
    assert torch.ops.aten.silu.default in targets
    assert torch.ops.aten.hardswish.default in targets
    # the default table of run_decompositions() decomposes silu
    assert torch.ops.aten.silu.default not in call_targets(ep.run_decompositions())
    x, y = torch.randn(3), torch.randn(3)
    for a, b in zip(dec.module()(x, y), M()(x, y), strict=True):
        assert torch.allclose(a, b, atol=1e-6)


def test_get_decomp_table_is_fresh_and_excludes_composites():
    t1 = get_decomp_table()
    t2 = get_decomp_table()
    assert t1 is not t2 and t1.keys() == t2.keys()
    t1.clear()
    assert len(get_decomp_table()) == len(t2) > 0
    packets = {str(op.overloadpacket).split(".")[-1] for op in t2}
    assert not (packets & set(KEPT_AS_COMPOSITES))
    for kept in ("silu", "hardswish", "hardsigmoid", "native_layer_norm", "native_group_norm", "native_batch_norm",
                 "_log_softmax", "gelu", "constant_pad_nd", "linalg_vector_norm", "scaled_dot_product_attention"):
        assert kept in KEPT_AS_COMPOSITES
        assert kept not in packets
    assert torch.ops.aten.addcmul.default in t2


def test_layer_norm_and_friends_survive_decomposition():
    model = nn.Sequential(nn.LayerNorm(8), nn.GELU(), nn.Hardsigmoid())
    targets = call_targets(export(model, torch.randn(2, 8)))
    assert {torch.ops.aten.native_layer_norm.default, torch.ops.aten.layer_norm.default} & set(targets)
    assert torch.ops.aten.gelu.default in targets
    assert torch.ops.aten.hardsigmoid.default in targets


def test_equal_samples_stay_two_arguments(coreai_gen, c_compiler):
    """m(x, x.clone()) has two user inputs, each used where its argument is
    (torch.export itself merges the uses of one tensor passed twice)."""

    class M(nn.Module):
        def forward(self, q, k):
            return q * 2 + k

    x = torch.randn(3)
    program = TorchConverter().add_exported_program(export(M(), x, x.clone())).to_coreai()
    assert entry(program).inputs == ["q", "k"]
    a, b = torch.randn(3), torch.randn(3)
    (out,) = run_program(program, [{"q": a, "k": b}])[0].values()
    assert max_abs_diff(a * 2 + b, out) <= 1e-6


def test_unsupported_op_names_op_and_line():
    class M(nn.Module):
        def forward(self, x):
            return torch.special.zeta(x, x)  # no lowering

    ep = export(M(), torch.rand(3) + 2)
    with pytest.raises(UnsupportedOpError, match=r"test_torch_export\.py:\d+: .*aten::special_zeta"):
        TorchConverter().add_exported_program(ep).to_coreai()
