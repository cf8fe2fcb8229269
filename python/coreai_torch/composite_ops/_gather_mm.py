"""The ``gather_mm`` composite op: matmul of gathered operands
(docs/composite-ops.md, ``gather_mm``)."""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn as nn

__all__ = ["GatherMM", "gather_mm"]


def _gather(x: torch.Tensor, indices: torch.Tensor, axis: int, what: str) -> torch.Tensor:
    """``index_select`` of ``x`` along ``axis`` by the flattened indices,
    viewed as ``x.shape[:axis] + indices.shape + x.shape[axis+1:]``."""
    if axis > x.dim() - 3:
        raise ValueError(f"GatherMM: {what} of rank {x.dim()} has no batch axis {axis} to gather "
                         "(the gathered axis must come before the two matrix axes)")
    if indices.dtype.is_floating_point or indices.dtype == torch.bool:
        raise TypeError(f"GatherMM: {what}_indices must be an integer tensor, got {indices.dtype}")
    flat = indices.reshape(-1)
    if flat.dtype not in (torch.int32, torch.int64):
        flat = flat.to(torch.int64)
    picked = torch.index_select(x, axis, flat)
    return picked.reshape(tuple(x.shape[:axis]) + tuple(indices.shape) + tuple(x.shape[axis + 1:]))


def gather_mm(lhs: torch.Tensor, rhs: torch.Tensor, lhs_indices: Optional[torch.Tensor] = None,
              rhs_indices: Optional[torch.Tensor] = None, num_batch_axes: int = 0) -> torch.Tensor:
    """Functional form of :class:`GatherMM` (same semantics)."""
    if lhs_indices is not None:
        lhs = _gather(lhs, lhs_indices, num_batch_axes, "lhs")
    if rhs_indices is not None:
        rhs = _gather(rhs, rhs_indices, num_batch_axes, "rhs")
    return torch.matmul(lhs, rhs)


class GatherMM(nn.Module):
    """``matmul(gather(lhs, lhs_indices), gather(rhs, rhs_indices))``.

    ``GatherMM(num_batch_axes=0)``; ``forward(lhs, rhs, lhs_indices=None,
    rhs_indices=None)``.  A gather selects, along axis ``num_batch_axes``,
    the entries named by the (flattened) integer indices, and the index
    tensor's shape takes that axis' place; the matmul is NumPy-style
    (batch axes broadcast).  MoE: ``lhs [B, T, 1, 1, D]``, ``rhs [E, D, H]``,
    ``rhs_indices [B, T, K]`` -> ``[B, T, K, 1, H]``.

    Composite op ``gather_mm``: ``ExternalizeSpec(GatherMM, "gather_mm",
    ["num_batch_axes", "version"])``.
    """

    def __init__(self, num_batch_axes: int = 0):
        super().__init__()
        if int(num_batch_axes) < 0:
            raise ValueError(f"GatherMM: num_batch_axes must be >= 0, got {num_batch_axes}")
        self.num_batch_axes = int(num_batch_axes)
        self.version = 1

    def forward(self, lhs: torch.Tensor, rhs: torch.Tensor, lhs_indices: Optional[torch.Tensor] = None,
                rhs_indices: Optional[torch.Tensor] = None) -> torch.Tensor:
        return gather_mm(lhs, rhs, lhs_indices, rhs_indices, self.num_batch_axes)

    def extra_repr(self) -> str:
        return f"num_batch_axes={self.num_batch_axes}"
