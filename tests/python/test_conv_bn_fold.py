"""Batch norms folded into the convolutions before them at generation time
(generator/src/bn_fold.h): a CNN in eval mode against eager PyTorch, and the
generated C checked for what runs: no batch_norm kernel or body where a
norm follows a convolution whose result nothing else reads, the norm kept
where it cannot fold (the convolution's result read twice, a norm after a
non-convolution)."""
import numpy as np
import pytest
import torch
from torch import nn

from conv_fold_run import generate


def _random_stats(model):
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                c = m.num_features
                m.running_mean.copy_(torch.rand(c, generator=g) * 2 - 1)
                m.running_var.copy_(torch.rand(c, generator=g) * 1.5 + 0.25)
                m.weight.copy_(torch.rand(c, generator=g) + 0.5)
                m.bias.copy_(torch.rand(c, generator=g) * 2 - 1)
    return model


class Block(nn.Module):
    """conv -> bn -> relu6, a depthwise conv -> bn, a conv with a bias -> bn,
    and a residual (stride 1) or the last norm as the graph's output (stride
    2): every folding case of a MobileNet block."""

    def __init__(self, bias, stride):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(4, 12, 1, bias=bias), nn.BatchNorm2d(12)
        self.c2, self.b2 = nn.Conv2d(12, 12, 3, stride=stride, padding=1, groups=12, bias=bias), nn.BatchNorm2d(12)
        self.c3, self.b3 = nn.Conv2d(12, 4, 1, bias=True), nn.BatchNorm2d(4, eps=1e-3)
        self.stride = stride

    def forward(self, x):
        y = torch.clamp(self.b1(self.c1(x)), 0, 6)
        y = torch.clamp(self.b2(self.c2(y)), 0, 6)
        y = self.b3(self.c3(y))
        return y + x if self.stride == 1 else y


class Unfoldable(nn.Module):
    """A conv whose result is also added back (read twice), and a norm after
    a relu: neither norm folds."""

    def __init__(self):
        super().__init__()
        self.c, self.b1, self.b2 = nn.Conv2d(4, 4, 3, padding=1), nn.BatchNorm2d(4), nn.BatchNorm2d(4)

    def forward(self, x):
        y = self.c(x)
        return self.b1(y) + y + self.b2(torch.relu(x))


@pytest.mark.parametrize("bias,stride", [(False, 1), (True, 1), (False, 2)])
def test_conv_bn_folds(bias, stride, coreai_gen, c_compiler, tmp_path):
    torch.manual_seed(5)
    model = _random_stats(Block(bias, stride).eval())
    x = torch.randn(2, 4, 11, 13, generator=torch.Generator().manual_seed(8))
    got, want, src, ir = generate(model, x, tmp_path, coreai_gen)
    # folded in double, rounded once: f32 rounding of the unfolded program
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6 * float(np.abs(want).max()))
    assert ir.count("batch_norm") >= 3  # the program has the three norms ...
    assert "coreai_batch_norm_f32(" not in src and "batch_norm" not in src.split("m_composite_ops")[0]
    calls = [c.split(";")[0] for c in src.split("coreai_conv2d_ws_f32(")[1:]]
    assert len(calls) == 3  # ... the C has three convolutions, each with its folded bias (argument 4)
    assert all(c.split(", ")[3] != "NULL" for c in calls), calls


def test_conv_bn_unfoldable_kept(coreai_gen, c_compiler, tmp_path):
    model = _random_stats(Unfoldable().eval())
    x = torch.randn(1, 4, 6, 7, generator=torch.Generator().manual_seed(9))
    got, want, src, _ = generate(model, x, tmp_path, coreai_gen)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * float(np.abs(want).max()))
    assert src.count("coreai_batch_norm_f32(") == 1  # the kernel, in the norms' graph function ...
    assert src.count("); /* @batch_norm") == 2  # ... called for both
