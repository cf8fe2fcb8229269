"""The ``gated_delta_update`` composite op: the gated delta-rule recurrence
of linear-attention layers (docs/composite-ops.md, ``gated_delta_update``)."""

from __future__ import annotations

from typing import Tuple

import torch
import torch.nn as nn

__all__ = ["GatedDeltaUpdate", "gated_delta_update"]

L2_EPS = 1e-6


def _l2_normalize(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + L2_EPS)


def gated_delta_update(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, g: torch.Tensor,
                       beta: torch.Tensor, initial_state: torch.Tensor,
                       use_qk_l2_norm: bool = True) -> Tuple[torch.Tensor, torch.Tensor]:
    """Functional form of :class:`GatedDeltaUpdate` (same semantics)."""
    if query.dim() != 4 or key.shape != query.shape or value.dim() != 4:
        raise ValueError("GatedDeltaUpdate: query and key must be [B, Hk, T, Dk] and value [B, Hv, T, Dv], got "
                         f"{list(query.shape)}, {list(key.shape)}, {list(value.shape)}")
    dtype = value.dtype
    b, hk, t, dk = query.shape
    hv, dv = value.shape[1], value.shape[3]
    if hv % hk != 0:
        raise ValueError(f"GatedDeltaUpdate: the value heads ({hv}) must be a multiple of the key heads ({hk})")
    q = query.float()
    k = key.float()
    if use_qk_l2_norm:
        q = _l2_normalize(q)
        k = _l2_normalize(k)
    q = q * (dk ** -0.5)
    if hv != hk:
        index = torch.div(torch.arange(hv, device=q.device), hv // hk, rounding_mode="floor")
        q = torch.index_select(q, 1, index)
        k = torch.index_select(k, 1, index)
    v = value.float()
    decay = g.float().exp()
    beta = beta.float()
    state = initial_state.float()
    outputs = []
    for step in range(t):
        k_t = k[:, :, step]                      # [B, Hv, Dk]
        state = state * decay[:, :, step].reshape(b, hv, 1, 1)
        recalled = torch.matmul(k_t.unsqueeze(-2), state).squeeze(-2)  # S^T k: [B, Hv, Dv]
        delta = (v[:, :, step] - recalled) * beta[:, :, step].unsqueeze(-1)
        state = state + k_t.unsqueeze(-1) * delta.unsqueeze(-2)
        outputs.append(torch.matmul(q[:, :, step].unsqueeze(-2), state).squeeze(-2))  # S^T q
    if outputs:
        out = torch.stack(outputs, dim=1)       # [B, T, Hv, Dv]
    else:
        out = torch.zeros(b, 0, hv, dv, dtype=torch.float32, device=value.device)
    return out.to(dtype), state.to(dtype)


class GatedDeltaUpdate(nn.Module):
    """The gated delta rule over a sequence.

    ``GatedDeltaUpdate(use_qk_l2_norm=True)``; ``forward(query, key, value,
    g, beta, initial_state) -> (output [B, T, Hv, Dv], final_state [B, Hv, Dk, Dv])``
    with ``query``, ``key`` ``[B, Hk, T, Dk]``, ``value`` ``[B, Hv, T, Dv]``,
    ``g`` (log decay) and ``beta`` ``[B, Hv, T]``, ``initial_state``
    ``[B, Hv, Dk, Dv]``; value head ``h`` uses key head ``h // (Hv / Hk)``.
    Per step, with ``q``, ``k`` L2-normalised when ``use_qk_l2_norm`` and
    ``q`` scaled by ``Dk ** -0.5``::

        S = exp(g_t) * S;  delta = (v_t - S^T k_t) * beta_t
        S = S + k_t delta^T;  y_t = S^T q_t

    Computed in float32; both results have ``value``'s dtype.

    Composite op ``gated_delta_update``: ``ExternalizeSpec(GatedDeltaUpdate,
    "gated_delta_update", ["use_qk_l2_norm", "version"])``.
    """

    def __init__(self, use_qk_l2_norm: bool = True):
        super().__init__()
        self.use_qk_l2_norm = bool(use_qk_l2_norm)
        self.version = 1

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, g: torch.Tensor,
                beta: torch.Tensor, initial_state: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return gated_delta_update(query, key, value, g, beta, initial_state, self.use_qk_l2_norm)

    def extra_repr(self) -> str:
        return f"use_qk_l2_norm={self.use_qk_l2_norm}"
