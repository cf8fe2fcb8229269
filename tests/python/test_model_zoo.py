"""The model zoo: real architectures nobody here wrote, end to end.

Hugging Face ``transformers`` models built from tiny configs with random
weights (tests/python/zoo_models.py; no downloads), each exported with
``torch.export``, decomposed with ``coreai_torch.get_decomp_table()``,
converted, optimized, generated with coreai-gen, compiled and run, and
compared with eager PyTorch:

    max|out - ref| <= 1e-5 * max(1, max|ref|)

f32 results differ from PyTorch's only by rounding: accumulation order in
the GEMMs and reductions, the kernels' double statistics (norms), the vector
exp of softmax (1.25 ulp).  That error grows with the reduction length and
the output's magnitude, hence a bound relative to max|ref| (absolute below
1).  On these models the worst observed error is 3.7e-7 * max|ref| (ViT),
so the bound leaves ~25x headroom for other ISAs and compilers while any
wrong lowering (a dropped term, a wrong mask, a swapped axis) shows as
errors of 1e-3 and more.  docs/model-zoo.md has the table
(tests/python/zoo_table.py prints it).

The torchvision / timm tier lives in tests/python/vision_tier_model_zoo.py.
"""
import os
import re

import numpy as np
import pytest
import torch
import torch.nn as nn

import zoo_models

pytest.importorskip("transformers")

#: Composite ops every model's program invokes (and whose kernels the
#: generated C calls): HF's SDPA attention reaches the attention kernel
#: except with T5's float position-bias mask (ATen adds a float mask, the
#: kernel would read it as nonzero = attend) and with attn_implementation
#: "eager" (matmul / softmax written out in Python).  The rotary embedding
#: of the decoders reaches rope (query and key of every layer).
_DECODER = {"scaled_dot_product_attention", "rms_norm", "rope"}
EXPECTED_COMPOSITES = {
    "llama": _DECODER,
    "llama-eager": {"rms_norm", "rope"},
    "llama-padded": _DECODER,
    "qwen2": _DECODER,
    "qwen3": _DECODER,
    "mistral": _DECODER,
    "phi3": _DECODER,
    "gpt2": {"scaled_dot_product_attention", "layer_norm"},
    "bert": {"scaled_dot_product_attention", "layer_norm"},
    "distilbert": {"scaled_dot_product_attention", "layer_norm"},
    "vit": {"scaled_dot_product_attention", "layer_norm"},
    "whisper-encoder": {"scaled_dot_product_attention", "layer_norm"},
    "t5-encoder": {"rms_norm"},
}


def test_every_model_has_expectations():
    assert set(EXPECTED_COMPOSITES) == set(zoo_models.ZOO)


@pytest.mark.parametrize("model_id", list(zoo_models.ZOO))
def test_model_zoo(model_id, coreai_gen, c_compiler):
    res = zoo_models.run_zoo_model(model_id)
    assert res.max_err <= res.tol, (
        f"{model_id}: max|out - ref| = {res.max_err:.3g} > {res.tol:.3g} (1e-5 * max(1, {res.max_ref:.3g}))")
    assert set(res.composites) == EXPECTED_COMPOSITES[model_id], res.composites
    if "rope" in res.composites:  # both rotations of every layer, none left op by op
        assert res.composites["rope"] == 2 * zoo_models.LAYERS, res.composites
    # the generated C calls the kernel of every composite (none falls back to its body)
    assert set(res.kernels) == EXPECTED_COMPOSITES[model_id], res.kernels


@pytest.mark.parametrize("model_id", ["llama-padded", "bert"])
def test_model_zoo_composite_bodies(model_id, coreai_gen, c_compiler):
    """The composites' op-by-op bodies (--no-composite-kernels) match PyTorch
    too, including the padded rows that see no key."""
    res = zoo_models.run_zoo_model(model_id, composite_kernels=False)
    assert res.kernels == ()
    assert res.max_err <= res.tol, f"{model_id}: {res.max_err:.3g} > {res.tol:.3g}"


# ---------------------------------------------------------------------------
# the lowerings the zoo needed, on their own
# ---------------------------------------------------------------------------

def _convert_and_run(model, args):
    import coreai_torch
    from coreai_torch import TorchConverter
    from coreai_torch.testing import run_program

    with torch.no_grad():
        ref = model(*args)
        ep = torch.export.export(model, args).run_decompositions(coreai_torch.get_decomp_table())
    conv = TorchConverter()
    conv.add_exported_program(ep)
    program = conv.to_coreai().optimize()
    names = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    out = run_program(program, [dict(zip(names, args))])[0]
    return program, list(out.values()), ref if isinstance(ref, tuple) else (ref,)


class AdvancedIndex(nn.Module):
    def forward(self, x, i, j, k, g):
        return (x[i, j],                  # adjacent indexed axes, broadcast [3,1] x [3]
                x[:, i, :, j],            # separated: the broadcast dims go first
                x[:, j, k],               # adjacent, after a slice
                torch.gather(x, 2, g[:, :, :3]),
                torch.gather(x, 3, g[:1, :2]))


def test_index_several_tensors_and_gather(coreai_gen, c_compiler):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 4, 5, generator=gen)
    i = torch.tensor([[1], [0], [-1]])
    j = torch.tensor([0, 2, 1])
    k = torch.tensor([[3], [1], [-4]])
    g = torch.randint(0, 4, (2, 3, 4, 5), generator=gen)
    _, out, ref = _convert_and_run(AdvancedIndex(), (x, i, j, k, g))
    for o, r in zip(out, ref, strict=True):
        assert o.shape == tuple(r.shape)
        np.testing.assert_array_equal(o, r.numpy())


class Attention(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, q, k, v, mask):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, **self.kw)


@pytest.mark.parametrize("case", ["bool-mask-empty-row", "float-mask-empty-row", "gqa", "causal-upper-left"])
def test_sdpa_matches_aten(case, coreai_gen, c_compiler):
    """ATen semantics: a row that sees no key gives zeros (safe softmax),
    enable_gqa, is_causal aligned upper-left when Tq != Tkv."""
    gen = torch.Generator().manual_seed(0)
    hk = 2 if case == "gqa" else 4
    tq = 3 if case == "causal-upper-left" else 6
    q = torch.randn(1, 4, tq, 8, generator=gen)
    k = torch.randn(1, hk, 6, 8, generator=gen)
    v = torch.randn(1, hk, 6, 8, generator=gen)
    mask = torch.rand(1, 1, tq, 6, generator=gen) > 0.4
    mask[..., 0, :] = False
    kw = {}
    if case == "float-mask-empty-row":
        mask = torch.zeros(mask.shape).masked_fill(~mask, float("-inf"))
    elif case == "gqa":
        kw = {"enable_gqa": True}
    elif case == "causal-upper-left":
        kw = {"is_causal": True}
    if case in ("gqa", "causal-upper-left"):
        model = Attention(**kw)
        model.forward = lambda q, k, v, mask=None: torch.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
    program, out, ref = _convert_and_run(Attention(**kw), (q, k, v, mask)) if case not in (
        "gqa", "causal-upper-left") else _convert_and_run(_NoMask(**kw), (q, k, v))
    if case != "float-mask-empty-row":
        assert "scaled_dot_product_attention" in str(program)
    np.testing.assert_allclose(out[0], ref[0].numpy(), rtol=0, atol=1e-5 * max(1.0, ref[0].abs().max().item()))
    if case.endswith("empty-row"):
        assert np.all(out[0][:, :, 0] == 0)


class _NoMask(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, **self.kw)


# ---------------------------------------------------------------------------
# an op without a lowering: the error names the ATen op and the source line
# ---------------------------------------------------------------------------

class TinyLMWithSort(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 8)

    def forward(self, ids):
        h = self.emb(ids)
        return torch.sort(h, dim=-1).values  # SORT_LINE


def test_unsupported_op_names_the_op_and_the_line():
    import coreai_torch
    from coreai_torch import TorchConverter, UnsupportedOpError

    ep = torch.export.export(TinyLMWithSort().eval(), (torch.tensor([[1, 2, 3]]),))
    ep = ep.run_decompositions(coreai_torch.get_decomp_table())
    conv = TorchConverter()
    conv.add_exported_program(ep)
    line = next(n for n, text in enumerate(open(__file__).read().splitlines(), 1) if text.endswith("# SORT_LINE"))
    with pytest.raises(UnsupportedOpError) as info:
        conv.to_coreai()
    msg = str(info.value)
    assert "aten::sort" in msg, msg
    assert re.search(rf"test_model_zoo\.py:{line}\b", msg), msg
