"""ReLU and ReLU6 folded into the convolutions before them at generation
time (generator/src/clamp_fold.h, coreai_conv2d_params.clamp): CNN blocks
against eager PyTorch, and the generated C checked for what runs: the
activation gone where a convolution's result feeds only it, its bounds in
that convolution's parameters (f32, 4-bit compressed and depthwise), and the
activation kept where it cannot fold or where --no-fuse asks for one call
per op."""
import re

import numpy as np
import torch
from torch import nn

from conv_fold_run import generate
from coreai_torch.compression import quantize_weights


class Block(nn.Module):
    """conv -> ReLU6, depthwise conv -> ReLU6 (a clamp(0, 6)), conv -> relu,
    a conv whose result is read twice (the relu after it stays, in the
    elementwise loop of relu(z) + z), and a relu as the graph's output."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(4, 24, 1)
        self.c2 = nn.Conv2d(24, 24, 3, stride=2, padding=1, groups=24)
        self.c3 = nn.Conv2d(24, 16, 3, padding=1)
        self.c4 = nn.Conv2d(16, 16, 1)
        self.c5 = nn.Conv2d(16, 8, 1)

    def forward(self, x):
        y = nn.functional.relu6(self.c1(x))
        y = torch.clamp(self.c2(y), 0, 6)
        y = torch.relu(self.c3(y))
        z = self.c4(y)
        y = torch.relu(z) + z
        return torch.relu(self.c5(y))


def _conv_clamps(src):
    """The (clamp, min, max) fields of every coreai_conv2d_params initializer."""
    inits = re.findall(r"coreai_conv2d_params \w+ = \{([^}]*)\}", src)
    inits += re.findall(r"coreai_conv2d_(?:q|lut)_params \w+ = \{\{([^}]*)\}", src)
    return [tuple(f.strip() for f in i.split(",")[16:19]) for i in inits]


RELU6 = ("1", "0.0f", "0x1.800000p+2f")
RELU = ("1", "0.0f", "INFINITY")
NONE = ("0", "0.0f", "0.0f")


def test_relu_and_relu6_fold(coreai_gen, c_compiler, tmp_path):
    torch.manual_seed(11)
    model = Block().eval()
    x = torch.randn(2, 4, 13, 15, generator=torch.Generator().manual_seed(12)) * 2
    got, want, src, _ = generate(model, x, tmp_path, coreai_gen)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert (want == 0).mean() > 0.2 and (want > 0).mean() > 0.2  # the clamps bite
    assert _conv_clamps(src) == [RELU6, RELU6, RELU, NONE, RELU]
    assert "coreai_clamp_f32(" not in src and "COREAI_UNARY_OP_RELU" not in src


def test_no_fuse_keeps_the_activations(coreai_gen, c_compiler, tmp_path):
    model = Block().eval()
    x = torch.randn(1, 4, 9, 9, generator=torch.Generator().manual_seed(13))
    _, _, src, _ = generate(model, x, tmp_path, coreai_gen, "--no-fuse")
    assert _conv_clamps(src) == [NONE] * 5
    assert src.count("coreai_clamp_f32(") == 2 and src.count("COREAI_UNARY_OP_RELU") == 3


def test_compressed_conv_clamp(coreai_gen, c_compiler, tmp_path):
    """4-bit blockwise convolutions (the implicit GEMM and the depthwise
    loops on the compressed weight) apply the folded clamp too."""
    torch.manual_seed(14)
    model = quantize_weights(Block().eval(), nbits=4, block_size=None)
    x = torch.randn(1, 4, 13, 15, generator=torch.Generator().manual_seed(15)) * 2
    got, want, src, _ = generate(model, x, tmp_path, coreai_gen)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert "coreai_conv2d_q_f32(" in src and "coreai_clamp_f32(" not in src
    assert RELU6 in _conv_clamps(src)
