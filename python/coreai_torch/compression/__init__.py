"""Compressed weights and quantized activations (docs/compression.md).

Importing ``coreai_torch`` registers the ops ``torch.ops.coreai.
constexpr_blockwise_shift_scale``, ``lut_to_dense``, ``quantize`` and
``dequantize`` (eager implementations and fake kernels, so
``torch.export`` keeps them as single nodes); ``TorchConverter`` lowers
them to the model format's ``coreai.blockwise_shift_scale``,
``coreai.lut_to_dense``, ``coreai.quantize`` and ``coreai.dequantize``, and
coreai-gen keeps the compressed bytes in the generated weights.
"""
from . import _ops
from ._modules import (ActivationDequantizeModule, ActivationQuantizeModule, PalettizeModule,
                       WeightDequantizeModule)
from ._ops import PALETTE_NBITS, int_range

constexpr_blockwise_shift_scale = _ops.constexpr_blockwise_shift_scale
lut_to_dense = _ops.lut_to_dense
quantize = _ops.quantize
dequantize = _ops.dequantize

__all__ = [
    "constexpr_blockwise_shift_scale",
    "lut_to_dense",
    "quantize",
    "dequantize",
    "int_range",
    "PALETTE_NBITS",
    "WeightDequantizeModule",
    "PalettizeModule",
    "ActivationQuantizeModule",
    "ActivationDequantizeModule",
]
