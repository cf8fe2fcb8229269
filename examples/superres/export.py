#!/usr/bin/python3
"""Export the superres example: a small grayscale x2 (or x3) upscaling CNN.

The network (input [1, 1, H, W] in [0, 1], output [1, 1, r*H, r*W]):

    skip  = Conv2d(1 -> r*r, 5x5)(ReplicationPad2d(2)(x))     # fixed: bicubic
    feat  = ReLU(InstanceNorm2d(Conv2d(1 -> C, 5x5, pad 2)(x)))
    feat  = ReLU(InstanceNorm2d(Conv2d(C -> C, 3x3, pad 1)(feat)))
    res   = Conv2d(C -> r*r, 3x3, pad 1)(feat)
    y     = PixelShuffle(r)(skip + res)

`pixel_shuffle` is an ATen-derived composite op (coreai_torch keeps
aten::pixel_shuffle); the norms are nn.InstanceNorm2d modules (affine) whose
forward goes through InstanceNormImpl, externalized as the `instance_norm`
composite op (see InstanceNormImpl for why). coreai-gen emits each as one
call of coreai_pixel_shuffle_f32 / coreai_instance_norm_f32.

Weights: nothing is trained (training inside the build would be too slow).
The `skip` convolution is set analytically so that, phase by phase, it is
exactly PyTorch's bicubic interpolation (F.interpolate(mode="bicubic",
align_corners=False), A = -0.75, borders clamped = replicate padding); this
is checked below. The residual branch has a seeded random init
(torch.manual_seed(0)) and its last convolution is scaled so that it adds
a faint texture (about 1% of the range) on top of bicubic. So the output
is a visible, plausible x2 upscale whose every value goes through the CNN.

  export.py --output DIR/NAME.xml   write the model (+ NAME.weights): the build
                                    runs this (coreai_add_model PYTHON_SCRIPT)
  export.py --output ... --reference DIR
                                    also write PyTorch's float output for the
                                    image: DIR/reference_output.npy ([1,1,rH,rW]
                                    f32) and DIR/reference_bicubic.npy
  --image FILE.pgm                  the image the model is sized for and the
                                    reference is computed on (default
                                    test_image.pgm next to this script)
  --scale R                         2 (default) or 3
  --channels C                      width of the residual branch (default 32)

Run with the project's .venv/bin/python (PyTorch >= 2.8); PYTHONPATH must reach
this repository's python/ directory (the build sets it).
"""

import argparse
import io
import os
import sys
from typing import Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import coreai_torch  # noqa: E402
from coreai_torch import ExternalizeSpec, TorchConverter  # noqa: E402

A = -0.75  # PyTorch's bicubic coefficient
RESIDUAL_STD = 0.01  # target standard deviation of the residual branch


def cubic_weight(d):
    d = abs(d)
    if d <= 1.0:
        return ((A + 2.0) * d - (A + 3.0)) * d * d + 1.0
    if d < 2.0:
        return ((A * d - 5.0 * A) * d + 8.0 * A) * d - 4.0 * A
    return 0.0


def bicubic_phase_kernels(r):
    """[r*r, 1, 5, 5]: channel i*r + j produces output pixel (h*r + i, w*r + j)
    from the 5x5 neighbourhood of input pixel (h, w) (pixel_shuffle order)."""
    taps = np.zeros((r, 5))
    for phase in range(r):
        offset = (phase + 0.5) / r - 0.5  # source position relative to the centre pixel
        for k in range(-2, 3):
            taps[phase, k + 2] = cubic_weight(offset - k)
    kernels = np.zeros((r * r, 1, 5, 5))
    for i in range(r):
        for j in range(r):
            kernels[i * r + j, 0] = np.outer(taps[i], taps[j])
    return torch.tensor(kernels, dtype=torch.float32)


class InstanceNormImpl(nn.Module):
    """The `instance_norm` composite op as a module class: no parameters of
    its own, the affine ones passed in (docs/composite-ops.md: inputs
    `input`, `weight`, `bias`, attribute `eps`). Externalized with
    ExternalizeSpec(InstanceNormImpl, "instance_norm", ["eps", "version"]).

    Why not rely on the ATen-derived composite of nn.InstanceNorm2d: on
    PyTorch 1.13, aten::instance_norm is CompositeImplicitAutograd, so the
    capture only ever sees its decomposition (repeat + native_batch_norm)
    and coreai_torch emits no `instance_norm` composite for it.
    """

    def __init__(self, eps: float = 1e-5, version: int = 1):
        super().__init__()
        self.eps = float(eps)
        self.version = int(version)

    def forward(self, input: torch.Tensor, weight: Optional[torch.Tensor] = None,
                bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        return F.instance_norm(input, weight=weight, bias=bias, eps=self.eps)


class InstanceNorm2d(nn.InstanceNorm2d):
    """nn.InstanceNorm2d (same parameters, same result) computed through
    InstanceNormImpl, so the norm stays one composite op."""

    def __init__(self, num_features: int, eps: float = 1e-5, affine: bool = True):
        super().__init__(num_features, eps=eps, affine=affine)
        self.impl = InstanceNormImpl(eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.impl(x, self.weight, self.bias)


class SuperRes(nn.Module):
    def __init__(self, scale: int = 2, channels: int = 32):
        super().__init__()
        r = scale
        self.pad = nn.ReplicationPad2d(2)
        self.upsample = nn.Conv2d(1, r * r, 5, bias=False)
        self.conv1 = nn.Conv2d(1, channels, 5, padding=2)
        self.norm1 = InstanceNorm2d(channels, affine=True)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm2 = InstanceNorm2d(channels, affine=True)
        self.conv3 = nn.Conv2d(channels, r * r, 3, padding=1)
        self.shuffle = nn.PixelShuffle(r)

    def residual(self, x: torch.Tensor) -> torch.Tensor:
        f = torch.relu(self.norm1(self.conv1(x)))
        f = torch.relu(self.norm2(self.conv2(f)))
        return self.conv3(f)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shuffle(self.upsample(self.pad(x)) + self.residual(x))


def build_model(scale, channels, sample):
    torch.manual_seed(0)
    model = SuperRes(scale, channels).eval()
    with torch.no_grad():
        model.upsample.weight.copy_(bicubic_phase_kernels(scale))
        # non-trivial affine parameters of the norms (defaults are 1 and 0)
        for norm in (model.norm1, model.norm2):
            norm.weight.copy_(1.0 + 0.25 * torch.randn_like(norm.weight))
            norm.bias.copy_(0.1 * torch.randn_like(norm.bias))
        # scale the last conv so the residual is a faint texture over bicubic
        std = float(model.residual(sample).std())
        model.conv3.weight.mul_(RESIDUAL_STD / std)
        model.conv3.bias.mul_(RESIDUAL_STD / std)
    return model


def read_pgm(path):
    """8-bit binary PGM (P5, maxval 255) -> uint8 [H, W]."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while pos < len(data) and data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            while pos < len(data) and data[pos:pos + 1] not in (b"\n", b"\r"):
                pos += 1
            continue
        start = pos
        while pos < len(data) and not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    if fields[0] != b"P5" or int(fields[3]) != 255:
        raise ValueError(f"{path}: not an 8-bit binary PGM (P5, maxval 255)")
    w, h = int(fields[1]), int(fields[2])
    pixels = np.frombuffer(data, dtype=np.uint8, count=w * h, offset=pos + 1)
    return pixels.reshape(h, w)


def convert(image_path, scale, channels):
    """Returns (program, model input, PyTorch output, PyTorch bicubic)."""
    torch.set_num_threads(1)
    image = read_pgm(image_path)
    x = torch.tensor(image, dtype=torch.float32).div(255.0).reshape(1, 1, *image.shape)
    model = build_model(scale, channels, x)

    with torch.no_grad():
        y = model(x)
        # InstanceNorm2d is exactly nn.InstanceNorm2d
        for norm in (model.norm1, model.norm2):
            probe = torch.randn(1, norm.num_features, 9, 7)
            assert torch.equal(norm(probe), nn.InstanceNorm2d.forward(norm, probe))
        bicubic = F.interpolate(x, scale_factor=scale, mode="bicubic", align_corners=False)
        skip = model.shuffle(model.upsample(model.pad(x)))
    # The fixed branch is PyTorch's bicubic interpolation.
    err = float((skip - bicubic).abs().max())
    assert err < 1e-5, f"bicubic phase kernels differ from F.interpolate by {err}"

    program = (
        TorchConverter()
        .add_pytorch_module(
            model,
            export_fn=lambda m: torch.export.export(m, args=(x,)).run_decompositions(
                coreai_torch.get_decomp_table()
            ),
            externalize_modules=[
                ExternalizeSpec(
                    target_class=InstanceNormImpl,
                    composite_op_name="instance_norm",
                    composite_attrs=["eps", "version"],
                )
            ],
            input_names=["image"],
            output_names=["upscaled"],
        )
        .to_coreai()
    )
    program.optimize()
    return program, x, y, bicubic


def npy_bytes(array):
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array, dtype="<f4"), allow_pickle=False)
    return buf.getvalue()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, help="model file to write (its weights go beside it)")
    parser.add_argument("--reference", metavar="DIR", help="write PyTorch's output for the image there")
    parser.add_argument("--image", default=os.path.join(HERE, "test_image.pgm"))
    parser.add_argument("--scale", type=int, default=2, choices=(2, 3))
    parser.add_argument("--channels", type=int, default=32)
    args = parser.parse_args(argv)

    program, _, y, bicubic = convert(args.image, args.scale, args.channels)
    program.save(args.output)
    if args.reference:
        os.makedirs(args.reference, exist_ok=True)
        for name, array in (("reference_output.npy", y), ("reference_bicubic.npy", bicubic)):
            path = os.path.join(args.reference, name)
            with open(path + ".tmp", "wb") as f:
                f.write(npy_bytes(array.numpy()))
            os.replace(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
