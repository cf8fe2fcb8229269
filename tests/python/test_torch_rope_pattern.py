"""Hugging Face's rotary embedding (``q * cos + rotate_half(q) * sin``)
reaches the ``rope`` composite kernel when the cos / sin tables' halves are
proved equal (python/coreai_torch/_rope_pattern.py), and stays op by op
otherwise; either way the generated C equals eager PyTorch.

HF's own ``LlamaRotaryEmbedding`` / ``apply_rotary_pos_emb`` on a tiny
attention block: positions built in the model (static tables), positions
as an input (tables computed at run time), llama3 / yarn rope scaling, an
old-style table cached in a buffer and indexed by the positions; and
tables whose halves differ, or that the model is given, which must not be
rewritten.
"""
import numpy as np
import pytest
import torch
import torch.nn as nn

pytest.importorskip("transformers")

from transformers import LlamaConfig  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb  # noqa: E402

B, T, HIDDEN, HEADS, KV, D = 2, 6, 32, 4, 2, 8


def _config(rope=None):
    kw = {} if rope is None else {"rope_parameters": rope}
    return LlamaConfig(hidden_size=HIDDEN, num_attention_heads=HEADS, num_key_value_heads=KV, head_dim=D,
                       max_position_embeddings=64, **kw)


class Rotary(nn.Module):
    """The projections and rotation of HF's attention; returns q and k rotated."""

    def __init__(self, rope=None, table=None):
        super().__init__()
        torch.manual_seed(0)
        self.q = nn.Linear(HIDDEN, HEADS * D)
        self.k = nn.Linear(HIDDEN, KV * D)
        self.rotary = LlamaRotaryEmbedding(_config(rope))
        self.table = table  # "cached": old HF style cos / sin buffers indexed by position

    def tables(self, x, position_ids):
        if self.table is None:
            return self.rotary(x, position_ids)
        return self.cos_cached[position_ids], self.sin_cached[position_ids]

    def rotate(self, x, position_ids):
        q = self.q(x).view(x.shape[0], T, HEADS, D).transpose(1, 2)
        k = self.k(x).view(x.shape[0], T, KV, D).transpose(1, 2)
        cos, sin = self.tables(x, position_ids)
        return apply_rotary_pos_emb(q, k, cos, sin)


class StaticPositions(Rotary):
    def forward(self, x):
        return self.rotate(x, torch.arange(T).unsqueeze(0).expand(x.shape[0], T))


class PositionInput(Rotary):
    def forward(self, x, position_ids):
        return self.rotate(x, position_ids)


class GivenTables(Rotary):
    """cos / sin are inputs: nothing proves their halves equal."""

    def forward(self, x, cos, sin):
        q = self.q(x).view(x.shape[0], T, HEADS, D).transpose(1, 2)
        k = self.k(x).view(x.shape[0], T, KV, D).transpose(1, 2)
        return apply_rotary_pos_emb(q, k, cos, sin)


def _cached(module, skew=1.0):
    """Buffers cos_cached / sin_cached [64, D] as HF computed them before
    4.38; ``skew`` != 1 makes the second half's angles differ."""
    t = torch.arange(64, dtype=torch.float32)
    freqs = torch.outer(t, module.rotary.inv_freq)
    emb = torch.cat((freqs, freqs * skew), dim=-1)
    module.register_buffer("cos_cached", emb.cos(), persistent=False)
    module.register_buffer("sin_cached", emb.sin(), persistent=False)
    return module


def _x():
    return torch.randn(B, T, HIDDEN, generator=torch.Generator().manual_seed(1))


def _positions():
    # a continuation at different offsets per row (e.g. after a prompt)
    return torch.stack([torch.arange(5, 5 + T), torch.arange(17, 17 + T)])


CASES = {
    "static": (lambda: StaticPositions(), lambda: (_x(),), 2),
    "position-input": (lambda: PositionInput(), lambda: (_x(), _positions()), 2),
    "llama3-scaling": (lambda: StaticPositions({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                "high_freq_factor": 4.0, "original_max_position_embeddings": 4,
                                                "rope_theta": 10000.0}), lambda: (_x(),), 2),
    "yarn-position-input": (lambda: PositionInput({"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0,
                                                   "original_max_position_embeddings": 16}),
                            lambda: (_x(), _positions()), 2),
    "cached-buffer": (lambda: _cached(PositionInput(table="cached")), lambda: (_x(), _positions()), 2),
    # not rewritten: the halves of the table differ / cannot be proved equal
    "cached-unequal-halves": (lambda: _cached(PositionInput(table="cached"), skew=1.001),
                              lambda: (_x(), _positions()), 0),
    "given-tables": (lambda: GivenTables(), lambda: (_x(),) + tuple(
        LlamaRotaryEmbedding(_config())(_x(), _positions())), 0),
}


def _convert(model, args):
    import coreai_torch
    import zoo_models
    from coreai_torch import TorchConverter

    with torch.no_grad():
        ref = model(*args)
        ep = torch.export.export(model, args).run_decompositions(coreai_torch.get_decomp_table())
    conv = TorchConverter()
    conv.add_exported_program(ep)
    program = conv.to_coreai().optimize()
    res = zoo_models.ZooResult("rope")
    zoo_models.count_ops(program, res)
    names = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    return program, dict(zip(names, args)), ref, res.composites.get("rope", 0)


@pytest.mark.parametrize("case", list(CASES))
def test_hf_rotary_reaches_rope(case, coreai_gen, c_compiler):
    from coreai_torch.testing import run_program

    make, inputs, ropes = CASES[case]
    model = make().eval()
    program, feed, ref, found = _convert(model, inputs())
    assert found == ropes, f"{case}: {found} rope call sites, expected {ropes}"
    kernels = [True, False] if case == "position-input" else [True]
    for composite_kernels in kernels:  # the kernel, and the composite's op-by-op body
        out = run_program(program, [feed], composite_kernels=composite_kernels)[0]
        got = list(out.values())
        assert len(got) == 2
        for g, r in zip(got, ref):
            r = r.numpy()
            # the tables are PyTorch's own numbers: only the rounding of the
            # four products and one sum per feature may differ (FMA contraction)
            tol = 1e-6 * max(1.0, float(np.abs(r).max()))
            np.testing.assert_allclose(g, r, rtol=0, atol=tol, err_msg=f"{case} (kernels {composite_kernels})")
