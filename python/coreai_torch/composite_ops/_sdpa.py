"""The ``scaled_dot_product_attention`` composite op
(docs/composite-ops.md, ``scaled_dot_product_attention``)."""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn as nn

__all__ = ["SDPA", "scaled_dot_product_attention", "attention_mask"]

#: The logit penalty of a masked key (added, not -inf).
MASK_PENALTY = -1e4


def attention_mask(q_len: int, kv_len: int, is_causal: bool = False, window_size: int = 0,
                   device=None) -> Optional[torch.Tensor]:
    """The bool ``[q_len, kv_len]`` mask (True = attend) of ``is_causal`` /
    ``window_size``, aligned lower-right (query ``i`` sits at key position
    ``i + kv_len - q_len``); ``None`` when neither applies."""
    if window_size <= 0 and not is_causal:
        return None
    past = kv_len - q_len
    if window_size <= 0 and past < 0:
        raise ValueError(f"SDPA: a causal mask needs kv_len >= q_len, got q_len {q_len}, kv_len {kv_len}")
    qi = torch.arange(q_len, device=device).unsqueeze(1)
    # the key's position counted from the end: p = j - (kv_len - q_len)
    p = torch.arange(kv_len, device=device).unsqueeze(0) - past
    if window_size <= 0:
        return p <= qi
    left = p > qi - window_size
    if is_causal:
        return torch.logical_and(left, p <= qi)
    return torch.logical_and(left, p < qi + window_size)


def _repeat_heads(x: torch.Tensor, q_heads: int, what: str) -> torch.Tensor:
    """Head ``h`` of the result is head ``h // (q_heads / H)`` of ``x``."""
    heads = x.shape[1]
    if heads < 1 or q_heads % heads != 0:
        raise ValueError(f"SDPA: the number of query heads ({q_heads}) must be a multiple of the number of "
                         f"{what} heads ({heads})")
    reps = q_heads // heads
    if reps == 1:
        return x
    index = torch.div(torch.arange(q_heads, device=x.device), reps, rounding_mode="floor")
    return torch.index_select(x, 1, index)


def scaled_dot_product_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *,
                                 attn_mask: Optional[torch.Tensor] = None, sinks: Optional[torch.Tensor] = None,
                                 scale: Optional[float] = None, is_causal: bool = False, window_size: int = 0,
                                 use_hf_impl: bool = False) -> torch.Tensor:
    """Functional form of :class:`SDPA` (same semantics)."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dim() != 4:
            raise ValueError(f"SDPA: {name} must be [B, H, T, D], got shape {list(t.shape)}")
    hq = query.shape[1]
    key = _repeat_heads(key, hq, "key")
    value = _repeat_heads(value, hq, "value")
    if scale is None:
        scale = query.shape[-1] ** -0.5
    q_len, kv_len = query.shape[-2], key.shape[-2]
    if attn_mask is None:
        attn_mask = attention_mask(q_len, kv_len, is_causal, window_size, device=query.device)
    if use_hf_impl:
        # PyTorch's F.scaled_dot_product_attention semantics: a bool mask is
        # -inf where false, a float mask is added.
        if sinks is not None:
            raise NotImplementedError("SDPA(_use_hf_impl=True) has no sinks")
        scores = torch.matmul(query, key.transpose(-1, -2)) * scale
        if attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                scores = scores.masked_fill(torch.logical_not(attn_mask), float("-inf"))
            else:
                scores = scores + attn_mask
        return torch.matmul(torch.softmax(scores, dim=-1), value)
    scores = torch.matmul(scale * query, key.transpose(-1, -2))
    if attn_mask is not None:
        # nonzero = attend, for bool and float masks alike
        blocked = torch.logical_not(attn_mask).to(scores.dtype)
        scores = scores + MASK_PENALTY * blocked
    if sinks is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        if sinks.dim() != 1 or sinks.shape[0] != hq:
            raise ValueError(f"SDPA: sinks must be [{hq}] (one per query head), got {list(sinks.shape)}")
        column = sinks.to(scores.dtype).reshape(1, hq, 1, 1).expand(*scores.shape[:-1], 1)
        weights = torch.softmax(torch.cat((scores, column), dim=-1), dim=-1)
        weights = weights.narrow(-1, 0, kv_len)
    return torch.matmul(weights, value)


class SDPA(nn.Module):
    """Scaled dot-product attention with grouped heads, lower-right causal
    and sliding-window masks and attention sinks.

    ``SDPA(scale=None, is_causal=False, window_size=0)``;
    ``forward(query [B, Hq, Tq, D], key [Bk, Hk, Tkv, D], value [Bv, Hv, Tkv, Dv],
    attn_mask=None, sinks=None) -> [B, Hq, Tq, Dv]``.

    * ``scale``: ``None`` means ``D ** -0.5``.
    * ``Hk`` and ``Hv`` divide ``Hq`` (MHA, GQA, MQA): query head ``h`` uses
      key head ``h // (Hq / Hk)`` and value head ``h // (Hq / Hv)``.
    * A masked key gets ``-1e4`` added to its logit.  ``attn_mask`` (bool,
      or float read as nonzero = attend) decides alone when given; otherwise
      ``is_causal`` and ``window_size > 0`` build a lower-right aligned mask
      (key position ``p = j - (Tkv - Tq)``: causal keeps ``p <= i``, the
      window keeps ``i - w < p < i + w``, both keep ``i - w < p <= i``).
    * ``sinks`` ``[Hq]``: one extra logit per head in every softmax, without
      a value row.

    Composite op ``scaled_dot_product_attention``: ``ExternalizeSpec(SDPA,
    "scaled_dot_product_attention", ["scale", "is_causal", "window_size",
    "version"])``; ``scale = None`` is left out of the declaration.
    """

    def __init__(self, scale: Optional[float] = None, is_causal: bool = False, window_size: int = 0,
                 _use_hf_impl: bool = False):
        super().__init__()
        self.scale = None if scale is None else float(scale)
        self.is_causal = bool(is_causal)
        self.window_size = int(window_size)
        self.version = 1
        self._use_hf_impl = bool(_use_hf_impl)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                attn_mask: Optional[torch.Tensor] = None, sinks: Optional[torch.Tensor] = None) -> torch.Tensor:
        return scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, sinks=sinks, scale=self.scale,
                                            is_causal=self.is_causal, window_size=self.window_size,
                                            use_hf_impl=self._use_hf_impl)

    def extra_repr(self) -> str:
        return f"scale={self.scale}, is_causal={self.is_causal}, window_size={self.window_size}"
