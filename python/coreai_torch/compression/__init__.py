"""Compressed weights and quantized activations (docs/compression.md).

Importing ``coreai_torch`` registers the ops ``torch.ops.coreai.
constexpr_blockwise_shift_scale``, ``lut_to_dense``, ``quantize`` and
``dequantize`` (eager implementations and fake kernels, so
``torch.export`` keeps them as single nodes); ``TorchConverter`` lowers
them to the model format's ``coreai.blockwise_shift_scale``,
``coreai.lut_to_dense``, ``coreai.quantize`` and ``coreai.dequantize``, and
coreai-gen keeps the compressed bytes in the generated weights.

``quantize_weights(model, nbits, block_size, symmetric)`` and
``palettize_weights(model, nbits, group_size)`` compress a model's
nn.Linear / nn.Conv2d weights into modules using those ops.
"""
from . import _ops
from ._compress import (CompressedConv2d, CompressedLinear, kmeans_palettize_tensor, palettize_weights,
                        quantize_tensor, quantize_weights)
from ._modules import (ActivationDequantizeModule, ActivationQuantizeModule, PalettizeModule,
                       WeightDequantizeModule)
from ._ops import PALETTE_NBITS, constexpr_blockwise_shift_scale, dequantize, int_range, lut_to_dense, quantize

__all__ = [
    *_ops.__all__,
    "WeightDequantizeModule",
    "PalettizeModule",
    "ActivationQuantizeModule",
    "ActivationDequantizeModule",
    "quantize_weights",
    "palettize_weights",
    "quantize_tensor",
    "kmeans_palettize_tensor",
    "CompressedLinear",
    "CompressedConv2d",
]
