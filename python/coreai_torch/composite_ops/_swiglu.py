"""The ``swiglu`` composite op (docs/composite-ops.md, small ATen-derived ops)."""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["SwiGLUImpl", "SwiGLU"]


class SwiGLUImpl(nn.Module):
    """``silu(gate) * value`` (same shapes).

    Composite op ``swiglu``: ``ExternalizeSpec(SwiGLUImpl, "swiglu",
    ["version"])``; inputs ``["gate", "value"]``.
    """

    def __init__(self):
        super().__init__()
        self.version = 1

    def forward(self, gate: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        return F.silu(gate) * value


class SwiGLU(nn.Module):
    """SwiGLU feed-forward block: ``w_out(silu(w_gate(x)) * w_val(x))``.

    ``SwiGLU(in_features, hidden_features=None, out_features=None,
    bias=False)``; ``hidden_features`` defaults to ``int(8 * in_features /
    3)``, ``out_features`` to ``in_features``.  The activation is the inner
    ``SwiGLUImpl`` (``.swiglu_impl``), which is what to externalize.
    """

    def __init__(self, in_features: int, hidden_features: Optional[int] = None,
                 out_features: Optional[int] = None, bias: bool = False):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or int(2 * in_features * 4 / 3)
        self.w_gate = nn.Linear(in_features, hidden_features, bias=bias)
        self.w_val = nn.Linear(in_features, hidden_features, bias=bias)
        self.w_out = nn.Linear(hidden_features, out_features, bias=bias)
        self.swiglu_impl = SwiGLUImpl()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w_out(self.swiglu_impl(self.w_gate(x), self.w_val(x)))
