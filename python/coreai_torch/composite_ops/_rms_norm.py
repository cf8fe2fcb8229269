"""The ``rms_norm`` composite op (docs/composite-ops.md, ``rms_norm``)."""

from __future__ import annotations

from typing import List, Optional, Union

import torch
import torch.nn as nn

__all__ = ["RMSNormImpl", "RMSNorm"]


class RMSNormImpl(nn.Module):
    """Root-mean-square normalisation over ``axes``, optionally scaled.

    ``output = input * rsqrt(mean(input^2, axes, keepdim) + eps) * scale``.
    The statistics are computed in float32; the normalised value is cast to
    ``input``'s dtype before the scale is applied when ``scale`` has that
    dtype, otherwise the product is formed first (in the promoted dtype) and
    then cast.  ``scale`` broadcasts to the output; ``None`` leaves the op
    unscaled (and then ``scale`` is not an input of the composite op).

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
        normed = input * inv_rms
        if scale is None:
            return normed.to(input.dtype)
        if scale.dtype != input.dtype:
            return (normed * scale).to(input.dtype)
        return normed.to(input.dtype) * scale

    def extra_repr(self) -> str:
        return f"axes={self.axes}, eps={self.eps}, version={self.version}"


class RMSNorm(nn.Module):
    """Convenience wrapper owning the learnable scale ``weight`` (ones).

    ``RMSNorm(dim, eps=1e-5)``: ``weight`` is ``[dim]``, the usual norm over
    the last axis.  ``RMSNorm(dim, eps, n_heads=H)``: ``weight`` is
    ``[H, 1, dim]``, one scale per head for the fused per-head query/key
    norm of a ``[B, H, T, dim]`` input.  The inner ``RMSNormImpl`` is
    ``.norm``; externalize ``RMSNormImpl``, not ``RMSNorm``, so the
    composite op's inputs are ``["input", "scale"]``.
    """

    def __init__(self, dim: int, eps: float = 1e-5, n_heads: Optional[int] = None):
        super().__init__()
        self.dim = int(dim)
        self.n_heads = None if n_heads is None else int(n_heads)
        shape = (self.dim,) if self.n_heads is None else (self.n_heads, 1, self.dim)
        self.weight = nn.Parameter(torch.ones(shape))
        self.norm = RMSNormImpl(eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x, self.weight)

    def extra_repr(self) -> str:
        heads = "" if self.n_heads is None else f", n_heads={self.n_heads}"
        return f"dim={self.dim}{heads}"
