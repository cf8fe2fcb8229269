"""Weight compression of a model's nn.Linear and nn.Conv2d layers.

``quantize_weights(model, nbits=4, block_size=32, symmetric=True)`` and
``palettize_weights(model, nbits=4, group_size=None)`` return a copy of the
model whose matching layers are ``CompressedLinear`` / ``CompressedConv2d``:
their ``forward`` dequantizes the weight with the compression ops
(``torch.ops.coreai.constexpr_blockwise_shift_scale`` or ``lut_to_dense``)
and runs the layer, so eager PyTorch gives the numbers the converted model
must reproduce. See docs/compression.md, "Compressing a model".
"""
from __future__ import annotations

import copy
from typing import Callable, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ._modules import PalettizeModule, WeightDequantizeModule
from ._ops import int_range

__all__ = ["quantize_weights", "palettize_weights", "CompressedLinear", "CompressedConv2d",
           "quantize_tensor", "kmeans_palettize_tensor"]

_SCALE_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


class CompressedLinear(nn.Module):
    """nn.Linear with a compressed weight: ``weight`` is a module whose
    ``forward()`` returns the dense weight (cast to the input's dtype)."""

    def __init__(self, weight: nn.Module, bias: Optional[torch.Tensor], in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = weight
        self.bias = None if bias is None else nn.Parameter(bias.detach().clone(), requires_grad=False)
        self.in_features = in_features
        self.out_features = out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight()
        if w.dtype != x.dtype:
            w = w.to(x.dtype)
        return F.linear(x, w, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class CompressedConv2d(nn.Module):
    """nn.Conv2d (zeros padding) with a compressed weight."""

    def __init__(self, weight: nn.Module, conv: nn.Conv2d) -> None:
        super().__init__()
        self.weight = weight
        self.bias = None if conv.bias is None else nn.Parameter(conv.bias.detach().clone(), requires_grad=False)
        self.stride, self.padding, self.dilation, self.groups = conv.stride, conv.padding, conv.dilation, conv.groups

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight()
        if w.dtype != x.dtype:
            w = w.to(x.dtype)
        return F.conv2d(x, w, self.bias, self.stride, self.padding, self.dilation, self.groups)


# ---------------------------------------------------------------------------
# blockwise linear quantization
# ---------------------------------------------------------------------------

def quantize_tensor(w: torch.Tensor, nbits: int = 4, block_size: Optional[int] = 32, symmetric: bool = True,
                    scale_dtype: torch.dtype = torch.float32) -> WeightDequantizeModule:
    """A ``WeightDequantizeModule`` for weight w ([out, in, ...]): one scale per
    output channel and block of ``block_size`` input channels (None or 0: the
    whole input axis). Symmetric: signed data, scale = max|w| / q_max, no zero
    point. Otherwise unsigned data with a zero point over [min(w, 0), max(w, 0)].
    Every element is the nearest level of its block's grid (within scale / 2)."""
    if nbits not in (4, 8):
        raise ValueError(f"quantize_tensor: nbits must be 4 or 8, got {nbits}")
    if w.dim() < 2:
        raise ValueError(f"quantize_tensor: the weight must be [out, in, ...], got shape {list(w.shape)}")
    if scale_dtype not in _SCALE_DTYPES:
        raise ValueError(f"quantize_tensor: scale_dtype must be float32, float16 or bfloat16, got {scale_dtype}")
    w = w.detach().to(torch.float32)
    cin = w.shape[1]
    bs = cin if not block_size else int(block_size)
    if bs < 1 or cin % bs:
        raise ValueError(f"quantize_tensor: block_size {block_size} does not divide the {cin} input channels of "
                         f"weight shape {list(w.shape)}")
    o = w.shape[0]
    blocks = w.reshape(o, cin // bs, bs, -1)                        # [O, I/bs, bs, rest]
    scale_shape = [o, cin // bs] + [1] * (w.dim() - 2)
    logical = (torch.int4 if nbits == 4 else torch.int8) if symmetric else (torch.uint4 if nbits == 4 else torch.uint8)
    lo, hi = int_range(logical)
    if symmetric:
        amax = blocks.abs().amax(dim=(2, 3))
        scale = torch.where(amax > 0, amax / hi, torch.ones_like(amax)).to(scale_dtype)
        s = scale.to(torch.float32)[:, :, None, None]
        q = torch.clamp(torch.round(blocks / s), lo, hi)
        zp = None
    else:
        wmin = blocks.amin(dim=(2, 3)).clamp(max=0)
        wmax = blocks.amax(dim=(2, 3)).clamp(min=0)
        span = wmax - wmin
        scale = torch.where(span > 0, span / (hi - lo), torch.ones_like(span)).to(scale_dtype)
        s = scale.to(torch.float32)
        zp = torch.clamp(torch.round(-wmin / s), lo, hi)
        q = torch.clamp(torch.round(blocks / s[:, :, None, None]) + zp[:, :, None, None], lo, hi)
    container = torch.int8 if symmetric else torch.uint8
    data = q.reshape(w.shape).to(container)
    zero_point = None if zp is None else zp.reshape(scale_shape).to(container)
    return WeightDequantizeModule(data, scale.reshape(scale_shape), zero_point=zero_point, input_dtype=logical)


# ---------------------------------------------------------------------------
# k-means palettization
# ---------------------------------------------------------------------------

def _kmeans_1d(x: np.ndarray, k: int, iterations: int) -> np.ndarray:
    """Lloyd's algorithm on the values x (1-D, float64) until no element
    changes cluster (or `iterations`): k sorted centroids, started at the
    quantiles of x (deterministic); an empty cluster keeps its centroid."""
    c = np.quantile(x, (np.arange(k) + 0.5) / k)
    assign = None
    for _ in range(iterations):
        new_assign = _nearest(x, c)
        if assign is not None and np.array_equal(new_assign, assign):
            break
        assign = new_assign
        sums = np.bincount(assign, weights=x, minlength=k)
        counts = np.bincount(assign, minlength=k)
        c = np.sort(np.where(counts > 0, sums / np.maximum(counts, 1), c))
    return c


def _nearest(x: np.ndarray, sorted_c: np.ndarray) -> np.ndarray:
    """Index of the nearest of the sorted centroids (the lower one on a tie)."""
    return np.searchsorted((sorted_c[1:] + sorted_c[:-1]) / 2, x, side="left")


def kmeans_palettize_tensor(w: torch.Tensor, nbits: int = 4, group_size: Optional[int] = None,
                            iterations: int = 1000, lut_dtype: torch.dtype = torch.float32) -> PalettizeModule:
    """A ``PalettizeModule`` for weight w ([out, ...]): one lookup table of
    2**nbits values per group of ``group_size`` output channels (None: one for
    the tensor), found by 1-D k-means; every element is its group's nearest
    table value."""
    if nbits not in (1, 2, 4, 6, 8):
        raise ValueError(f"kmeans_palettize_tensor: nbits must be 1, 2, 4, 6 or 8, got {nbits}")
    if lut_dtype not in _SCALE_DTYPES:
        raise ValueError(f"kmeans_palettize_tensor: lut_dtype must be float32, float16 or bfloat16, got {lut_dtype}")
    w = w.detach().to(torch.float64)
    o = w.shape[0]
    gs = o if not group_size else int(group_size)
    if gs < 1 or o % gs:
        raise ValueError(f"kmeans_palettize_tensor: group_size {group_size} does not divide the {o} output "
                         f"channels of weight shape {list(w.shape)}")
    k = 1 << nbits
    groups = w.reshape(o // gs, -1).numpy()
    luts, indices = [], []
    for g in groups:
        c = torch.from_numpy(_kmeans_1d(g, k, iterations)).to(lut_dtype)
        # assign against the stored (rounded) table, so each index picks the
        # nearest value the model will actually use
        cs, order = torch.sort(c.to(torch.float64))
        indices.append(order[torch.from_numpy(_nearest(g, cs.numpy()))])
        luts.append(c)
    lut = torch.stack(luts).reshape([o // gs] + [1] * (w.dim() - 1) + [k, 1])
    idx = torch.stack(indices).reshape(w.shape).to(torch.uint8)
    return PalettizeModule(idx, lut, axis=0)


# ---------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------

def _compress_model(model: nn.Module, make: Callable[[torch.Tensor], nn.Module],
                    include: Optional[Callable[[str, nn.Module], bool]], inplace: bool) -> nn.Module:
    root = model if inplace else copy.deepcopy(model)
    # every replacement is built (and every error raised) before the first
    # one is installed, so a failure leaves an in-place model untouched
    replacements = []
    for name, m in root.named_modules():
        if not isinstance(m, (nn.Linear, nn.Conv2d)) or (include is not None and not include(name, m)):
            continue
        if not name:
            raise ValueError("quantize_weights: the model itself is a layer; wrap it in a module")
        if isinstance(m, nn.Conv2d) and m.padding_mode != "zeros":
            raise ValueError(f"layer '{name}': padding_mode '{m.padding_mode}' is not supported")
        weight = make(m.weight)
        new = (CompressedLinear(weight, m.bias, m.in_features, m.out_features) if isinstance(m, nn.Linear)
               else CompressedConv2d(weight, m))
        replacements.append((name, new))
    for name, new in replacements:
        parent, _, attr = name.rpartition(".")
        setattr(root.get_submodule(parent), attr, new)
    return root


def quantize_weights(model: nn.Module, nbits: int = 4, block_size: Optional[int] = 32, symmetric: bool = True,
                     scale_dtype: torch.dtype = torch.float32,
                     include: Optional[Callable[[str, nn.Module], bool]] = None,
                     inplace: bool = False) -> nn.Module:
    """A copy of model (or model itself with inplace=True) whose nn.Linear and
    nn.Conv2d layers (those include(name, module) accepts) hold their weights
    quantized to nbits (4 or 8) with one scale per output channel and block of
    block_size input channels (see quantize_tensor)."""
    return _compress_model(model, lambda w: quantize_tensor(w, nbits, block_size, symmetric, scale_dtype), include,
                           inplace)


def palettize_weights(model: nn.Module, nbits: int = 4, group_size: Optional[int] = None, iterations: int = 1000,
                      lut_dtype: torch.dtype = torch.float32,
                      include: Optional[Callable[[str, nn.Module], bool]] = None,
                      inplace: bool = False) -> nn.Module:
    """A copy of model whose nn.Linear and nn.Conv2d weights are k-means
    palettized: 2**nbits values per table, one table per group_size output
    channels (None: per tensor); see kmeans_palettize_tensor."""
    return _compress_model(model, lambda w: kmeans_palettize_tensor(w, nbits, group_size, iterations, lut_dtype),
                           include, inplace)
