"""coreai_torch.export (the torch.export stand-in on PyTorch 1.13) and
get_decomp_table(): graph capture, signature, naming, mutations, metadata."""
import operator

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import coreai_torch
from coreai_torch import get_decomp_table
from coreai_torch._decomp import KEPT_AS_COMPOSITES


def call_targets(ep):
    return [n.target for n in ep.graph.nodes if n.op == "call_function"]


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


def test_signature_placeholders_and_mutations():
    model = KVCache().eval()
    args = (torch.randn(1, 4), torch.randn(1, 4), torch.randn(1, 4))
    before = [a.clone() for a in args]
    ep = coreai_torch.export(model, args=args)
    sig = ep.graph_signature
    names = [n.name for n in ep.graph.nodes if n.op == "placeholder"]
    assert names == ["p_proj_weight", "p_proj_bias", "b_kv_cache", "b_pos_idx", "b_unused_buf", "x", "y", "z"]
    assert sig.parameters == ["proj.weight", "proj.bias"]
    assert sig.buffers == ["kv_cache", "pos_idx", "unused_buf"]
    assert sig.user_inputs == ["x", "y", "z"]
    assert sig.mutated_buffers == ["kv_cache", "pos_idx"]
    assert sig.mutated_user_inputs == ["y"]
    kinds = [s.kind for s in sig.output_specs]
    assert kinds == ["BUFFER_MUTATION", "BUFFER_MUTATION", "USER_INPUT_MUTATION", "USER_OUTPUT", "USER_OUTPUT"]
    assert list(sig.buffers_to_mutate.values()) == ["kv_cache", "pos_idx"]
    assert list(sig.user_inputs_to_mutate.values()) == ["y"]
    # no in-place op is left in the graph
    assert not any(getattr(t, "_schema", None) is not None and t._schema.name.endswith("_")
                   for t in call_targets(ep))
    # exporting changed neither the module nor the inputs
    assert torch.equal(model.kv_cache, torch.zeros(1, 4))
    assert all(torch.equal(a, b) for a, b in zip(args, before))
    assert set(ep.state_dict) == {"proj.weight", "proj.bias", "kv_cache", "pos_idx", "unused_buf"}


def test_program_module_runs_like_eager_with_state():
    torch.manual_seed(0)
    model = KVCache().eval()
    eager = KVCache().eval()
    eager.load_state_dict(model.state_dict())
    ep = coreai_torch.export(model, args=(torch.randn(1, 4), torch.randn(1, 4), torch.randn(1, 4)))
    run = ep.run_decompositions(get_decomp_table()).module()
    y1, y2 = torch.randn(1, 4), None
    y2 = y1.clone()
    for _ in range(3):
        x, z = torch.randn(1, 4), torch.randn(1, 4)
        got = run(x, y1, z)
        with torch.no_grad():
            want = eager(x, y2, z)
        for g, w in zip(got, want):
            assert torch.allclose(g, w, atol=1e-6)
        assert torch.equal(y1, y2)


def test_output_names_follow_producing_nodes():
    class M(nn.Module):
        def forward(self, a, b, c, d):
            return a + b, c * d

    ep = coreai_torch.export(M(), args=tuple(torch.randn(2) for _ in range(4)))
    assert ep.graph_signature.user_outputs == ["add", "mul"]


def test_kwargs_and_non_tensor_arguments():
    class M(nn.Module):
        def forward(self, x, scale: float = 1.0, bias=None):
            out = x * scale
            if bias is not None:
                out = out + bias
            return out

    ep = coreai_torch.export(M(), args=(torch.randn(3),), kwargs={"scale": 2.5, "bias": torch.randn(3)})
    assert ep.graph_signature.user_inputs == ["x", "bias"]
    x, b = torch.randn(3), torch.randn(3)
    (out,) = (ep.module()(x, bias=b),)
    assert torch.allclose(out, x * 2.5 + b)


def test_nested_input_structures_are_flattened():
    class M(nn.Module):
        def forward(self, pair):
            a, b = pair
            return a - b

    ep = coreai_torch.export(M(), args=((torch.randn(2), torch.randn(2)),))
    assert ep.graph_signature.user_inputs == ["pair_0", "pair_1"]


def test_input_named_like_a_builtin():
    lin = nn.Linear(3, 2)  # forward(self, input)
    ep = coreai_torch.export(lin, args=(torch.randn(1, 3),))
    spec = [s for s in ep.graph_signature.input_specs if s.kind == "USER_INPUT"][0]
    assert spec.target == "input"
    assert spec.name in [n.name for n in ep.graph.nodes if n.op == "placeholder"]


def test_parameter_mutation_is_rejected():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(2))

        def forward(self, x):
            with torch.no_grad():
                self.w.add_(x)
            return x * 2

    with pytest.raises(RuntimeError, match="mutates parameter"):
        coreai_torch.export(M(), args=(torch.ones(2),))


def test_nn_module_stack_metadata():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.fc(x))

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            return self.block(x) * 2

    ep = coreai_torch.export(M(), args=(torch.randn(1, 4),)).run_decompositions(get_decomp_table())
    by_name = {n.name: n for n in ep.graph.nodes}
    assert list(by_name["addmm"].meta["nn_module_stack"]) == ["block", "block.fc"]
    assert by_name["addmm"].meta["nn_module_stack"]["block.fc"][1] == "Linear"
    assert list(by_name["relu"].meta["nn_module_stack"]) == ["block"]
    assert by_name["mul"].meta["nn_module_stack"] == {}
    assert by_name["addmm"].meta["val"].shape == (1, 4)


def test_run_decompositions_uses_the_table():
    class M(nn.Module):
        def forward(self, x, y):
            return torch.addcmul(x, x, y, value=0.5), F.silu(x), F.hardswish(y), torch.rsub(x, 1.0)

    ep = coreai_torch.export(M(), args=(torch.randn(3), torch.randn(3)))
    assert torch.ops.aten.addcmul.default in call_targets(ep)
    dec = ep.run_decompositions(get_decomp_table())
    targets = call_targets(dec)
    assert torch.ops.aten.addcmul.default not in targets
    assert torch.ops.aten.rsub.Scalar not in targets
    # kept as composites
    assert torch.ops.aten.silu.default in targets
    assert torch.ops.aten.hardswish.default in targets
    # the original program is unchanged
    assert torch.ops.aten.addcmul.default in call_targets(ep)
    # the default table of run_decompositions() decomposes silu too
    assert torch.ops.aten.silu.default not in call_targets(ep.run_decompositions())
    x, y = torch.randn(3), torch.randn(3)
    for a, b in zip(dec.module()(x, y), M()(x, y)):
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
                 "_log_softmax", "gelu", "constant_pad_nd", "linalg_vector_norm"):
        assert kept in KEPT_AS_COMPOSITES
        assert kept not in packets
    assert torch.ops.aten.addcmul.default in t2
    # only ATen-to-ATen decompositions: nothing lowers to prims
    assert all(getattr(fn, "__module__", "") == "torch._decomp.decompositions" for fn in t2.values())


def test_layer_norm_and_friends_survive_decomposition():
    model = nn.Sequential(nn.LayerNorm(8), nn.GELU(), nn.Hardsigmoid())
    ep = coreai_torch.export(model, args=(torch.randn(2, 8),)).run_decompositions(get_decomp_table())
    targets = call_targets(ep)
    assert torch.ops.aten.native_layer_norm.default in targets
    assert torch.ops.aten.gelu.default in targets
    assert torch.ops.aten.hardsigmoid.default in targets


def test_getitem_of_multi_output_ops():
    ep = coreai_torch.export(nn.LayerNorm(4), args=(torch.randn(2, 4),))
    assert operator.getitem in call_targets(ep)


def test_same_tensor_passed_as_two_arguments():
    """m(x, x) still has two user inputs, each used where its argument is."""

    class M(nn.Module):
        def forward(self, q, k):
            return q * 2 + k

    x = torch.randn(3)
    ep = coreai_torch.export(M(), args=(x, x))
    assert ep.graph_signature.user_inputs == ["q", "k"]
    used = {n.name for n in ep.graph.nodes if n.op == "placeholder" and n.users}
    assert used == {"q", "k"}
    a, b = torch.randn(3), torch.randn(3)
    assert torch.allclose(ep.module()(a, b), a * 2 + b)
    assert torch.allclose(ep.run_decompositions(get_decomp_table()).module()(a, b), a * 2 + b)
