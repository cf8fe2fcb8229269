"""The ``rms_norm`` composite op (docs/model-format.md, "Composite ops with kernels")."""

from __future__ import annotations

from typing import List, Optional, Union

import torch
import torch.nn as nn

__all__ = ["RMSNormImpl", "RMSNorm"]


class RMSNormImpl(nn.Module):
    """Root-mean-square normalisation over ``axes``, optionally scaled.

    ``output = input * rsqrt(mean(input^2, axes, keepdim) + eps) * scale``,
    computed in float32 and returned in ``input``'s dtype (before the scale).
    ``scale`` broadcasts to the output; ``None`` leaves the op unscaled (and
    then ``scale`` is not an input of the composite op).

    Attributes (the composite op's ``op_attrs``): ``axes`` (int or list of
    ints), ``eps`` (float), ``version`` (int, 1).
    """

    def __init__(self, axes: Union[int, List[int]] = -1, eps: float = 1e-5, version: int = 1):
        super().__init__()
        self.axes = list(axes) if isinstance(axes, (list, tuple)) else int(axes)
        self.eps = float(eps)
        self.version = int(version)

    def forward(self, input: torch.Tensor, scale: Optional[torch.Tensor] = None) -> torch.Tensor:
        x_f32 = input.to(torch.float32)
        inv_rms = torch.rsqrt((x_f32 * x_f32).mean(self.axes, keepdim=True) + self.eps)
        out = (input * inv_rms).to(input.dtype)
        if scale is not None:
            out = out * scale
        return out

    def extra_repr(self) -> str:
        return f"axes={self.axes}, eps={self.eps}, version={self.version}"


class RMSNorm(nn.Module):
    """Convenience wrapper owning the learnable scale (``weight``, ones)."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.norm = RMSNormImpl(eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x, self.weight)
