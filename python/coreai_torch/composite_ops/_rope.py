"""The ``rope`` composite op: rotary positional embedding
(docs/composite-ops.md, ``rope``)."""

from __future__ import annotations

from typing import Optional, Tuple, Union

import torch
import torch.nn as nn

__all__ = ["RoPE", "rope"]


def _rotary_dims(input: torch.Tensor, dims: Optional[int]) -> Tuple[bool, int]:
    """(partial?, number of rotated features R)."""
    d = input.shape[-1]
    partial = dims is not None and dims < d
    r = int(dims) if partial else int(d)
    if r < 2 or r % 2 != 0:
        raise ValueError(f"RoPE: the rotated dimension must be even and >= 2, got {r} "
                         f"(input last extent {d}, dims={dims})")
    return partial, r


def _angles_cos_sin(input: torch.Tensor, half: int, position_ids: Optional[torch.Tensor],
                    freqs: Optional[torch.Tensor], offset: Union[int, torch.Tensor], scale: float,
                    base: float, use_hf_impl: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """cos/sin halves ``[..., T, R/2]`` from positions and frequencies."""
    if position_ids is not None:
        # [P0, P1, ...] -> [P0, 1, P1, ...]: the usual [B, T] against [B, H, T, D]
        pos = position_ids.unsqueeze(1)
    else:
        t = input.shape[-2]
        if isinstance(offset, torch.Tensor):
            # [O...] -> [O..., 1, 1], plus the sequence index: [O..., 1, T]
            offset = offset.unsqueeze(-1).unsqueeze(-1)
        pos = offset + torch.arange(t, device=input.device)
    pos = pos.to(torch.float32)
    if freqs is None:
        exponent = torch.arange(half, dtype=torch.float32, device=input.device) / half
        freqs = 1.0 / torch.pow(base, exponent)
    if freqs.dtype != torch.float32:
        raise TypeError(f"RoPE: freqs must be float32, got {freqs.dtype}")
    scaled = freqs * scale
    if use_hf_impl:
        scaled = scaled.to(input.dtype)
    angle = pos.unsqueeze(-1) * scaled.float()
    return angle.cos().to(input.dtype), angle.sin().to(input.dtype)


def _rotate(input: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, dims: Optional[int],
            interleaved: bool) -> torch.Tensor:
    partial, r = _rotary_dims(input, dims)
    half = r // 2
    if interleaved:
        x1 = input[..., 0:r:2]
        x2 = input[..., 1:r:2]
    else:
        x1 = input[..., :half]
        x2 = input[..., half:r]
    y1 = cos * x1 - sin * x2
    y2 = sin * x1 + cos * x2
    if interleaved:
        y = torch.stack((y1, y2), dim=-1)
        y = y.reshape(*y.shape[:-2], r)
    else:
        y = torch.cat((y1, y2), dim=-1)
    if partial:
        y = torch.cat((y, input[..., r:]), dim=-1)
    return y


def rope(input: torch.Tensor, *, cos: Optional[torch.Tensor] = None, sin: Optional[torch.Tensor] = None,
         position_ids: Optional[torch.Tensor] = None, freqs: Optional[torch.Tensor] = None,
         offset: Union[int, torch.Tensor] = 0, scale: float = 1.0, base: float = 1e4,
         dims: Optional[int] = None, interleaved: bool = False, use_hf_impl: bool = False) -> torch.Tensor:
    """Functional form of :class:`RoPE` (same semantics)."""
    if cos is None or sin is None:
        _, r = _rotary_dims(input, dims)
        cos, sin = _angles_cos_sin(input, r // 2, position_ids, freqs, offset, scale, base, use_hf_impl)
    return _rotate(input, cos, sin, dims, interleaved)


class RoPE(nn.Module):
    """Rotary positional embedding of ``input [..., T, D]``.

    ``RoPE(scale=1.0, base=1e4, dims=None, interleaved=False)``; the first
    ``R = dims`` features are rotated (all when ``dims`` is ``None`` or
    ``>= D``; ``R`` must be even), the rest are copied.  Split-half pairs
    feature ``i`` with ``i + R/2``; interleaved pairs ``2i`` with ``2i+1``.

    ``forward(input, cos=None, sin=None, position_ids=None, freqs=None,
    offset=None)``.  The angles come from the first that applies:

    1. ``cos`` and ``sin`` (both; each broadcasting to ``[..., T, R/2]``);
    2. otherwise ``angle_i = pos * (freq_i * scale)`` in float32, with
       ``freq_i = freqs[i]`` (``freqs`` float32 ``[R/2]``) or
       ``1 / base ** (i / (R/2))``, and ``pos`` = ``position_ids``
       (``[P0, P1, ...]`` viewed as ``[P0, 1, P1, ...]``), else
       ``offset + t`` (a ``[B]`` offset viewed as ``[B, 1, 1]``), else ``t``.

    Composite op ``rope``: ``ExternalizeSpec(RoPE, "rope", ["scale", "base",
    "dims", "interleaved", "version"])``; ``dims = None`` is left out of the
    declaration, the inputs are the tensors passed, in the order above.
    """

    def __init__(self, scale: float = 1.0, base: float = 1e4, dims: Optional[int] = None,
                 interleaved: bool = False, _use_hf_impl: bool = False):
        super().__init__()
        self.scale = float(scale)
        self.base = float(base)
        self.dims = None if dims is None else int(dims)
        self.interleaved = bool(interleaved)
        self.version = 1
        self._use_hf_impl = bool(_use_hf_impl)

    def forward(self, input: torch.Tensor, cos: Optional[torch.Tensor] = None, sin: Optional[torch.Tensor] = None,
                position_ids: Optional[torch.Tensor] = None, freqs: Optional[torch.Tensor] = None,
                offset: Optional[torch.Tensor] = None) -> torch.Tensor:
        return rope(input, cos=cos, sin=sin, position_ids=position_ids, freqs=freqs,
                    offset=offset if offset is not None else 0, scale=self.scale, base=self.base,
                    dims=self.dims, interleaved=self.interleaved, use_hf_impl=self._use_hf_impl)

    def extra_repr(self) -> str:
        return (f"scale={self.scale}, base={self.base}, dims={self.dims}, interleaved={self.interleaved}")
