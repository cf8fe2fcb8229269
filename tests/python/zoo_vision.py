"""The model zoo's optional vision tier: torchvision and timm CNNs / ViTs
with random weights (weights=None / pretrained=False), run by the vision
interpreter (torch 2.14.1 + torchvision 0.29.1 + timm, e.g. .venv-vision;
see docs/model-zoo.md).

    .venv-vision/bin/python tests/python/zoo_vision.py [--json] [MODEL...]

prints one line per model (or one JSON object per line with --json: the
fields of zoo_models.ZooResult).  tests/python/vision_tier_model_zoo.py
runs it (ctest python.model_zoo_vision, -DCOREAI_ZOO_VISION=ON).
"""
from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "python"))

import torch  # noqa: E402

import zoo_models  # noqa: E402


def _image(size: int) -> torch.Tensor:
    return torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(1))


def _lively(model: torch.nn.Module) -> torch.nn.Module:
    """Random weights that keep a signal: torchvision's fresh BatchNorms
    (mean 0, var 1, weight 1, bias 0) and zero-initialised heads shrink the
    logits of an untrained net to ~1e-15, where no comparison means
    anything; give every BatchNorm random statistics and affine terms, and
    every all-zero Linear small random weights."""
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                c = m.num_features
                m.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(c, generator=g) + 0.5)
                if m.weight is not None:
                    m.weight.copy_(torch.rand(c, generator=g) + 0.5)
                    m.bias.copy_(torch.randn(c, generator=g) * 0.1)
            elif isinstance(m, torch.nn.Linear) and not m.weight.any():
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * 0.05)
    return model


class Images(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)


def _tv(name: str, size: int = 64, **kw):
    def make():
        import torchvision

        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None, **kw)
        return Images(_lively(model)).eval(), {"x": _image(size)}
    return make


def _tv_int4(name: str, size: int = 64):
    """A torchvision CNN with its convolution and linear weights compressed
    to 4 bits (coreai_torch.compression.quantize_weights, one f32 scale per
    32 input channels; layers whose input channels 32 does not divide, the
    3-channel stem, stay f32): the generated C runs each compressed layer
    on its packed weight (coreai_conv2d_q_f32 / coreai_linear_q_f32), the
    reference is the compressed model in eager PyTorch."""
    def make():
        from coreai_torch.compression import quantize_weights

        model, inputs = _tv(name, size)()
        def include(_name, m):
            return (m.in_channels if isinstance(m, torch.nn.Conv2d) else m.in_features) % 32 == 0
        return quantize_weights(model, nbits=4, block_size=32, include=include).eval(), inputs
    return make


def _tv_vit():
    from torchvision.models.vision_transformer import VisionTransformer

    torch.manual_seed(0)
    model = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128,
                              num_classes=10)
    return Images(_lively(model)).eval(), {"x": _image(32)}


def _timm(name: str, size: int, **kw):
    def make():
        import timm

        torch.manual_seed(0)
        model = timm.create_model(name, pretrained=False, **kw)
        return Images(_lively(model)).eval(), {"x": _image(size)}
    return make


#: model id -> (config in words, builder)
VISION = {
    "resnet18": ("torchvision, 1x3x64x64, 1000 classes", _tv("resnet18")),
    "resnet18 int4": ("torchvision, 1x3x64x64, weights quantize_weights(nbits=4, block_size=32)",
                      _tv_int4("resnet18")),
    "mobilenet_v3_small": ("torchvision, 1x3x64x64", _tv("mobilenet_v3_small")),
    "efficientnet_b0": ("torchvision, 1x3x64x64", _tv("efficientnet_b0")),
    "convnext_tiny": ("torchvision, 1x3x64x64", _tv("convnext_tiny")),
    "vit (torchvision)": ("VisionTransformer image 32, patch 8, 2 layers, 4 heads, hidden 64, mlp 128",
                          _tv_vit),
    "vit_tiny (timm)": ("timm vit_tiny_patch16_224, img_size 32, patch 8", _timm(
        "vit_tiny_patch16_224", 32, img_size=32, patch_size=8)),
}


#: The weights as a linked binary blob (coreai-gen --weights-format incbin),
#: the form for megabytes of weights: convnext_tiny's 28.6 M weights (114 MB)
#: are refused as C initializer text, and resnet18's 11.7 M took 130 s to
#: compile that way.
WEIGHTS_FORMAT = "incbin"


def main(argv) -> int:
    as_json = "--json" in argv
    names = [a for a in argv if a != "--json"] or list(VISION)
    status = 0
    for name in names:
        t0 = time.perf_counter()
        try:
            res = zoo_models.run_zoo_model(name, make=VISION[name][1], weights_format=WEIGHTS_FORMAT)
        except Exception as e:  # noqa: BLE001 - reported per model
            res = zoo_models.ZooResult(name, error=f"{type(e).__name__}: {e}")
            status = 1
        total = time.perf_counter() - t0
        if as_json:
            d = dataclasses.asdict(res)
            d["total_s"] = total
            print(json.dumps(d), flush=True)
        else:
            print(f"{name}: {res.error or ''} aten {res.aten_ops} coreai {res.coreai_ops} {res.composites} "
                  f"kernels {res.kernels} err {res.max_err:.3g} tol {res.tol:.3g} export {res.export_s:.1f}s "
                  f"convert {res.convert_s:.2f}s generate {res.generate_s:.2f}s compile {res.compile_s:.2f}s "
                  f"total {total:.1f}s", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
