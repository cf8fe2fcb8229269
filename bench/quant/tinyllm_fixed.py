#!/usr/bin/python3
"""The fixed-shape tinyllm of before examples/tinyllm became the symbolic
decoder workflow (docs/llm-workflow.md), kept for compressed_examples.py,
whose measurements (docs/compression.md) are of this model: a 2-layer
Llama-style decoder with a KV cache.

Model (seeded random init, torch.manual_seed(5); nothing is trained):

    vocab 256 (bytes), dim 64, 2 layers, 4 query heads / 2 key-value heads
    (GQA, head_dim 16), SwiGLU MLP (hidden 128), RMSNorm (eps 1e-5) before
    attention, MLP and the separate (untied) lm_head, RoPE (base 10000,
    split-half), max context 64.

Composite ops (coreai_torch.composite_ops, externalized with ExternalizeSpec):
RMSNormImpl -> rms_norm, RoPE -> rope, SDPA -> scaled_dot_product_attention,
SwiGLUImpl -> swiglu; coreai-gen emits each as one runtime kernel call.

The KV cache is model state: two registered buffers

    k_cache, v_cache   f32 [layers, 1, kv_heads, context, head_dim]

updated in place (`copy_`) by both entrypoints of ONE program:

    prefill(tokens i64[1, 8], position i64[1]) -> logits f32[1, 256]
    decode (tokens i64[1, 1], position i64[1]) -> logits f32[1, 256]

Each writes the keys/values of its tokens at [position, position + T) of
every layer's cache (a gather of the new rows + `where`, so the write
position can be a runtime input; see `write_cache`), attends over the cache
with a bool mask (key j visible to query t iff j <= position + t) and
returns the logits of its last token. Both are converted with
add_pytorch_module(..., entrypoint_name=..., state_names=["k_cache",
"v_cache"]) on the same converter, so the generated C declares
tinyllm_prefill and tinyllm_decode with the same two state buffers.

A module, not a script: compressed_examples.py imports build_model,
prompt_tokens and convert (the reference outputs come from eager PyTorch
there). It puts this repository's python/ directory on sys.path itself.
"""

import os
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))  # bench/quant -> the repository

import coreai_torch  # noqa: E402
from coreai_torch import ExternalizeSpec, TorchConverter  # noqa: E402
from coreai_torch.composite_ops import SDPA, RMSNorm, RMSNormImpl, RoPE, SwiGLU, SwiGLUImpl  # noqa: E402

VOCAB = 256
DIM = 64
LAYERS = 2
HEADS = 4
KV_HEADS = 2
HEAD_DIM = DIM // HEADS
HIDDEN = 128
CONTEXT = 64
PROMPT_LEN = 8
SEED = 5  # chosen among the first few for a varied greedy continuation
EPS = 1e-5
ROPE_BASE = 10000.0

PROMPT = b"Core AI!"  # the fixed prompt: 8 byte tokens

EXTERNALIZE = [
    ExternalizeSpec(RMSNormImpl, "rms_norm", ["axes", "eps", "version"]),
    ExternalizeSpec(RoPE, "rope", ["scale", "base", "dims", "interleaved", "version"]),
    ExternalizeSpec(SDPA, "scaled_dot_product_attention", ["scale", "is_causal", "window_size", "version"]),
    ExternalizeSpec(SwiGLUImpl, "swiglu", ["version"]),
]


def write_cache(cache, new, position):
    """`cache` [B, H, C, D] with rows [position, position + T) replaced by
    `new` [B, H, T, D]. Out of place and shape-static (position is a runtime
    tensor): gather row clamp(c - position, 0, T-1) of `new` for every cache
    row c, then keep it where position <= c < position + T."""
    t, c = new.shape[2], cache.shape[2]
    rows = torch.arange(c) - position  # [C]
    index = rows.clamp(0, t - 1)
    inside = (rows >= 0) & (rows < t)
    scattered = torch.index_select(new, 2, index)
    return torch.where(inside.view(1, 1, c, 1), scattered, cache)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(DIM, HEADS * HEAD_DIM, bias=False)
        self.wk = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wv = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wo = nn.Linear(HEADS * HEAD_DIM, DIM, bias=False)
        # One RoPE instance per call site: coreai_torch keys an externalized
        # instance's calls by argument names, not shapes, so one instance
        # applied to q [1, 4, T, 16] and k [1, 2, T, 16] would be converted
        # with the shapes of one call only (see README.md, "Limitations").
        self.q_rope = RoPE(base=ROPE_BASE)
        self.k_rope = RoPE(base=ROPE_BASE)
        self.sdpa = SDPA()  # scale = head_dim ** -0.5; GQA by head index

    def forward(self, x, position, mask, k_cache, v_cache):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.wk(x).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.wv(x).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        q = self.q_rope(q, offset=position)
        k = self.k_rope(k, offset=position)
        k_cache = write_cache(k_cache, k, position)
        v_cache = write_cache(v_cache, v, position)
        y = self.sdpa(q, k_cache, v_cache, attn_mask=mask)
        y = y.transpose(1, 2).reshape(b, t, HEADS * HEAD_DIM)
        return self.wo(y), k_cache, v_cache


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = RMSNorm(DIM, eps=EPS)
        self.attn = Attention()
        self.mlp_norm = RMSNorm(DIM, eps=EPS)
        self.mlp = SwiGLU(DIM, HIDDEN)

    def forward(self, x, position, mask, k_cache, v_cache):
        a, k_cache, v_cache = self.attn(self.attn_norm(x), position, mask, k_cache, v_cache)
        x = x + a
        return x + self.mlp(self.mlp_norm(x)), k_cache, v_cache


class TinyLLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.norm = RMSNorm(DIM, eps=EPS)
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)
        cache = (LAYERS, 1, KV_HEADS, CONTEXT, HEAD_DIM)
        self.register_buffer("k_cache", torch.zeros(cache))
        self.register_buffer("v_cache", torch.zeros(cache))

    def forward(self, tokens, position):
        """tokens i64 [1, T] at positions position .. position + T - 1
        (position i64 [1]); returns the logits of the last token [1, VOCAB]."""
        t = tokens.shape[1]
        x = self.embed(tokens)
        # key j is visible to query i iff j <= position + i
        mask = torch.arange(CONTEXT).view(1, CONTEXT) <= (position + torch.arange(t)).view(t, 1)
        mask = mask.view(1, 1, t, CONTEXT)
        new_k, new_v = [], []
        for i, layer in enumerate(self.layers):
            x, k, v = layer(x, position, mask, self.k_cache[i], self.v_cache[i])
            new_k.append(k)
            new_v.append(v)
        self.k_cache.copy_(torch.stack(new_k))
        self.v_cache.copy_(torch.stack(new_v))
        return self.lm_head(self.norm(x[:, -1, :]))

    def reset_cache(self):
        self.k_cache.zero_()
        self.v_cache.zero_()


def build_model():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    model = TinyLLM().eval()
    with torch.no_grad():  # non-trivial norm scales, so a dropped scale shows up
        for m in model.modules():
            if isinstance(m, RMSNorm):
                m.weight.copy_(1.0 + 0.1 * torch.randn_like(m.weight))
    return model


def prompt_tokens(prompt=PROMPT):
    assert len(prompt) == PROMPT_LEN
    return torch.tensor([list(prompt)], dtype=torch.int64)


def convert(model):
    model.reset_cache()  # a state's initial value is its value at export
    converter = TorchConverter()
    for name, t in (("prefill", PROMPT_LEN), ("decode", 1)):
        sample = (torch.zeros(1, t, dtype=torch.int64), torch.tensor([0]))
        converter.add_pytorch_module(
            model,
            export_fn=lambda m, sample=sample: torch.export.export(m, args=sample).run_decompositions(
                coreai_torch.get_decomp_table()
            ),
            externalize_modules=EXTERNALIZE,
            input_names=["tokens", "position"],
            output_names=["logits"],
            state_names=["k_cache", "v_cache"],
            entrypoint_name=name,
        )
    program = converter.to_coreai()
    program.optimize()
    return program
