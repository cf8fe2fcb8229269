"""A small Qwen3-style decoder with a KV cache, written as a user of the
converter writes one (docs/llm-workflow.md): the model, its update-and-fetch
cache op, that op's lowering to ``coreai.slice_update``, and the export of
the two entrypoints ``prefill`` and ``main``. The tests, the tinyllm example
and the benchmark share it, so they test one workflow.

The calling convention (the reference converter's stateful LLM form):

* ``input_ids`` ``i64[1, query_len]``: the new tokens;
* ``position_ids`` ``i64[1, seq_len]``: the positions of every token so far,
  ``0 .. seq_len - 1``; the new tokens sit at ``seq_len - query_len ..``;
* ``k_cache``, ``v_cache`` ``f32[layers, 1, kv_heads, max_seq, head_dim]``:
  user inputs the model mutates in place (states of the converted program).

Each attention layer writes its new keys and values into rows
``[seq_len - query_len, seq_len)`` of its cache layer and attends, with a
lower-right causal mask, over rows ``[0, seq_len)``. ``prefill`` is the same
module traced with ``prefill_mode``: it returns nothing, so only the cache
writes remain.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import torch
import torch.nn as nn

from coreai._compiler.dialects import coreai

from . import composite_ops
from .converter import TorchConverter
from .externalize import ExternalizeSpec
from ._decomp import get_decomp_table
from ._utils import get_operands

__all__ = ["LLMConfig", "TinyQwen", "update_and_fetch", "lower_update_and_fetch", "export_llm", "EXTERNALIZE"]


@dataclasses.dataclass(frozen=True)
class LLMConfig:
    vocab: int = 64
    hidden: int = 32
    intermediate: int = 64
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2
    head_dim: int = 8
    max_seq: int = 32
    eps: float = 1e-6
    rope_base: float = 10000.0

    @property
    def cache_shape(self) -> tuple:
        return (self.layers, 1, self.kv_heads, self.max_seq, self.head_dim)


# ---------------------------------------------------------------------------
# the cache op: write the new rows of one layer, return that layer's prefix
# ---------------------------------------------------------------------------

@torch.library.custom_op("coreai_llm::update_and_fetch", mutates_args=["cache"])
def update_and_fetch(cache: torch.Tensor, update: torch.Tensor, layer: int, end: int) -> torch.Tensor:
    """``cache[layer, 0, :, end - T:end] = update[0]`` (``update`` is
    ``[1, kv_heads, T, head_dim]``), then ``cache[layer, :, :, :end]``."""
    t = update.shape[2]
    cache[layer, :, :, end - t:end, :] = update
    return cache[layer, :, :, :end, :].clone()


@update_and_fetch.register_fake
def _(cache, update, layer, end):
    return cache.new_empty((cache.shape[1], cache.shape[2], end, cache.shape[4]))


def lower_update_and_fetch(values_map, node, loc):
    """The custom lowering (``TorchConverter.register_torch_lowering``): the
    fetched prefix, then the cache's new value (a mutating op's lowering
    returns its results, then each mutated argument's new value)."""
    cache, update = get_operands(values_map, node, [0, 1], loc)
    layer, end = node.args[2], node.args[3]
    if isinstance(end, torch.fx.Node):
        end = values_map[end.name]  # a size: an int or a symbolic extent
    _, b, h, _, d = cache.type.shape
    t = update.type.shape[2]
    new_rows = coreai.reshape(update, [1, b, h, t, d], loc=loc)
    written = coreai.slice_update(cache, new_rows, [layer, 0, 0, end - t, 0], loc=loc)
    prefix = coreai.slice(written, [layer, 0, 0, 0, 0], [layer + 1, b, h, end, d], loc=loc)
    return coreai.reshape(prefix, [b, h, end, d], loc=loc), written


# ---------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------

class Attention(nn.Module):
    def __init__(self, cfg: LLMConfig, layer: int):
        super().__init__()
        self.cfg, self.layer = cfg, layer
        n = cfg.heads + 2 * cfg.kv_heads
        self.qkv = nn.Linear(cfg.hidden, n * cfg.head_dim, bias=False)  # fused Q, K, V projection
        self.out = nn.Linear(cfg.heads * cfg.head_dim, cfg.hidden, bias=False)
        # one per-head RMSNorm over the query and key heads together
        self.qk_norm = composite_ops.RMSNorm(cfg.head_dim, eps=cfg.eps, n_heads=cfg.heads + cfg.kv_heads)
        self.rope = composite_ops.RoPE(base=cfg.rope_base)
        self.sdpa = composite_ops.SDPA(is_causal=True)

    def forward(self, x, position_ids, k_cache, v_cache):
        cfg = self.cfg
        b, q_len, _ = x.shape
        qkv = self.qkv(x).reshape(b, q_len, cfg.heads + 2 * cfg.kv_heads, cfg.head_dim).transpose(1, 2)
        qk = self.qk_norm(qkv[:, :cfg.heads + cfg.kv_heads])
        v = qkv[:, cfg.heads + cfg.kv_heads:]
        seq_len = position_ids.shape[1]
        torch._check(seq_len >= q_len)
        # the positions of the new tokens: the last q_len entries (picked by
        # index, as a slice at a symbolic start makes torch.export assume it
        # is not 0)
        last = torch.arange(q_len, device=x.device) + (seq_len - q_len)
        qk = self.rope(qk, position_ids=position_ids.index_select(1, last))
        q, k = qk[:, :cfg.heads], qk[:, cfg.heads:]
        keys = update_and_fetch(k_cache, k, self.layer, seq_len)
        values = update_and_fetch(v_cache, v, self.layer, seq_len)
        o = self.sdpa(q, keys, values)  # lower-right causal: query i sees keys <= seq_len - q_len + i
        return self.out(o.transpose(1, 2).reshape(b, q_len, cfg.heads * cfg.head_dim))


class MLP(nn.Module):
    def __init__(self, cfg: LLMConfig):
        super().__init__()
        self.gate = nn.Linear(cfg.hidden, cfg.intermediate, bias=False)
        self.up = nn.Linear(cfg.hidden, cfg.intermediate, bias=False)
        self.down = nn.Linear(cfg.intermediate, cfg.hidden, bias=False)

    def forward(self, x):
        return self.down(nn.functional.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, cfg: LLMConfig, layer: int):
        super().__init__()
        self.attn_norm = composite_ops.RMSNorm(cfg.hidden, eps=cfg.eps)
        self.attn = Attention(cfg, layer)
        self.mlp_norm = composite_ops.RMSNorm(cfg.hidden, eps=cfg.eps)
        self.mlp = MLP(cfg)

    def forward(self, x, position_ids, k_cache, v_cache):
        h = x + self.attn(self.attn_norm(x), position_ids, k_cache, v_cache)
        return h + self.mlp(self.mlp_norm(h))


class TinyQwen(nn.Module):
    """``forward(input_ids, position_ids, k_cache, v_cache)``: the logits of
    every new token ``[1, query_len, vocab]``, or ``()`` in ``prefill_mode``."""

    def __init__(self, cfg: Optional[LLMConfig] = None, seed: int = 0):
        super().__init__()
        cfg = cfg or LLMConfig()
        self.cfg = cfg
        gen = torch.Generator().manual_seed(seed)
        self.embed = nn.Embedding(cfg.vocab, cfg.hidden)
        self.blocks = nn.ModuleList([Block(cfg, i) for i in range(cfg.layers)])
        self.norm = composite_ops.RMSNorm(cfg.hidden, eps=cfg.eps)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)
        self.prefill_mode = False
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("norm.weight"):  # not all ones, so the scales matter
                    p.copy_(1 + 0.2 * torch.randn(p.shape, generator=gen))
                else:
                    p.copy_(torch.randn(p.shape, generator=gen) * (0.3 if p.dim() > 1 else 1.0))

    def forward(self, input_ids, position_ids, k_cache, v_cache):
        h = self.embed(input_ids)
        for block in self.blocks:
            h = block(h, position_ids, k_cache, v_cache)
        if self.prefill_mode:
            return ()
        return self.lm_head(self.norm(h))

    def new_cache(self) -> tuple:
        return torch.zeros(self.cfg.cache_shape), torch.zeros(self.cfg.cache_shape)


EXTERNALIZE = [
    ExternalizeSpec(composite_ops.RMSNormImpl, "rms_norm", ["axes", "eps", "version"]),
    ExternalizeSpec(composite_ops.RoPE, "rope", ["scale", "base", "dims", "interleaved", "version"]),
    ExternalizeSpec(composite_ops.SDPA, "scaled_dot_product_attention",
                    ["scale", "is_causal", "window_size", "version"]),
]


def export_llm(model: TinyQwen, trace_query: int = 3, trace_offset: int = 2):
    """The converted program: ``prefill`` (writes the caches) and ``main``
    (returns the logits), both taking any ``query_len`` in
    ``[1, max_seq]`` and ``seq_len`` in ``[1, max_seq]``, sharing the caches
    as the states ``k_cache`` and ``v_cache``."""
    cfg = model.cfg
    ids = torch.zeros(1, trace_query, dtype=torch.int64)
    pos = torch.arange(trace_query + trace_offset).unsqueeze(0)
    k, v = model.new_cache()
    dyn = {"input_ids": {1: torch.export.Dim("query_len", min=1, max=cfg.max_seq)},
           "position_ids": {1: torch.export.Dim("seq_len", min=1, max=cfg.max_seq)},
           "k_cache": None, "v_cache": None}

    def export_fn(prefill: bool):
        def fn(m):
            m.prefill_mode = prefill  # set here: the converter re-exports composite ops later
            try:
                with torch.no_grad():
                    ep = torch.export.export(m, (ids, pos, k.clone(), v.clone()), dynamic_shapes=dyn)
                return ep.run_decompositions(get_decomp_table())
            finally:
                m.prefill_mode = False
        return fn

    converter = TorchConverter()
    converter.register_torch_lowering("coreai_llm::update_and_fetch.default")(lower_update_and_fetch)
    names = dict(input_names=["input_ids", "position_ids"], state_names=["k_cache", "v_cache"],
                 externalize_modules=EXTERNALIZE)
    converter.add_pytorch_module(model, export_fn=export_fn(True), output_names=[], entrypoint_name="prefill",
                                 **names)
    converter.add_pytorch_module(model, export_fn=export_fn(False), output_names=["logits"],
                                 entrypoint_name="main", **names)
    return converter.to_coreai()
