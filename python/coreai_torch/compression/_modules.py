"""Modules whose forward() calls the compression ops: a compressed weight
(``forward()`` returns the dense weight) and activation quantization."""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from . import _ops  # noqa: F401  (registers torch.ops.coreai.*)

__all__ = [
    "WeightDequantizeModule",
    "PalettizeModule",
    "ActivationQuantizeModule",
    "ActivationDequantizeModule",
]


class WeightDequantizeModule(nn.Module):
    """A blockwise-quantized weight: ``forward()`` is
    ``torch.ops.coreai.constexpr_blockwise_shift_scale`` of its buffers."""

    def __init__(self, quantized_data: torch.Tensor, scale: torch.Tensor, zero_point: Optional[torch.Tensor] = None,
                 minval: Optional[torch.Tensor] = None, input_dtype: Optional[torch.dtype] = None) -> None:
        super().__init__()
        self.register_buffer("quantized_data", quantized_data)
        self.register_buffer("scale", scale)
        self.register_buffer("zero_point", zero_point)
        self.register_buffer("minval", minval)
        self.input_dtype = input_dtype

    def forward(self) -> torch.Tensor:
        return torch.ops.coreai.constexpr_blockwise_shift_scale(
            self.quantized_data, self.scale, zero_point=self.zero_point, minval=self.minval,
            input_dtype=self.input_dtype)


class PalettizeModule(nn.Module):
    """A palettized weight: ``forward()`` is ``torch.ops.coreai.lut_to_dense``."""

    def __init__(self, indices: torch.Tensor, lut: torch.Tensor, axis: int = 0) -> None:
        super().__init__()
        self.register_buffer("indices", indices)
        self.register_buffer("lut", lut)
        self.axis = axis

    def forward(self) -> torch.Tensor:
        return torch.ops.coreai.lut_to_dense(self.indices, self.lut, self.axis)


class ActivationQuantizeModule(nn.Module):
    """``forward(x)`` is ``torch.ops.coreai.quantize(x, scale, output_dtype, ...)``."""

    def __init__(self, scale: torch.Tensor, output_dtype: torch.dtype, zero_point: Optional[torch.Tensor] = None,
                 minval: Optional[torch.Tensor] = None, axis: int = 0) -> None:
        super().__init__()
        self.register_buffer("scale", scale)
        self.register_buffer("zero_point", zero_point)
        self.register_buffer("minval", minval)
        self.output_dtype = output_dtype
        self.axis = axis

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.coreai.quantize(x, self.scale, self.output_dtype, zero_point=self.zero_point,
                                         minval=self.minval, axis=self.axis)


class ActivationDequantizeModule(nn.Module):
    """``forward(x)`` is ``torch.ops.coreai.dequantize(x, scale, ...)``."""

    def __init__(self, scale: torch.Tensor, zero_point: Optional[torch.Tensor] = None,
                 minval: Optional[torch.Tensor] = None, axis: int = 0,
                 input_dtype: Optional[torch.dtype] = None) -> None:
        super().__init__()
        self.register_buffer("scale", scale)
        self.register_buffer("zero_point", zero_point)
        self.register_buffer("minval", minval)
        self.axis = axis
        self.input_dtype = input_dtype

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.coreai.dequantize(x, self.scale, zero_point=self.zero_point, minval=self.minval,
                                           axis=self.axis, input_dtype=self.input_dtype)
