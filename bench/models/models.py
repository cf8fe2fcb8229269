"""The benchmark models: PyTorch definitions, deterministic construction,
conversion with coreai_torch, and analytic FLOP counts.

Shared by export.py (run at build time by coreai_add_model(PYTHON_SCRIPT))
and bench.py (run by bench/run: times PyTorch eager on the same model and
input). Both call build(name), which seeds torch, so they get the same
weights; bench.py also checks PyTorch's output against the one export.py
saved at build time.

| name       | model |
|------------|-------|
| ffn        | FeedForwardBlock of the seeds (examples/feedforward): RMSNorm (composite) -> Linear 64->256 -> relu -> Linear 256->64, x [2, 16, 64] |
| llama256   | Llama-style block: x + Wo SDPA(RoPE(Wq h), RoPE(Wk h), Wv h), h = RMSNorm(x); then + SwiGLU(RMSNorm(.)); dim 256, 8 heads, seq 64, hidden 688, x [1, 64, 256] |
| llama1024  | the same at dim 1024, 16 heads, seq 128, hidden 2816, x [1, 128, 1024] |
| convnet    | conv 3->16 3x3 pad 1 -> instance_norm (composite, affine) -> relu -> conv 16->32 3x3 stride 2 pad 1 -> pixel_shuffle 2, x [1, 3, 64, 64] -> [1, 8, 64, 64] |
| resnet18   | torchvision resnet18 (weights=None: random; BatchNorms given random statistics so the logits are not ~0), x [1, 3, 224, 224] -> [1, 1000]; only with torchvision (the `.venv-vision` environment of docs/model-zoo.md, BENCH_VISION_PYTHON) |
| mobilenetv2 | torchvision mobilenet_v2, the same way: 17 depthwise 3x3 layers (strides 1 and 2), 1x1 expansions and projections, ReLU6 |
| llama1024_t1, llama1024[_t1]_int8, llama1024[_t1]_int4 | llama1024 for one token (x [1, 1, 1024]) and its weights compressed to 8 / 4 bits (QUANT_MODELS; bench/quant/bench_model_q.py) |
| qwen2      | Hugging Face transformers Qwen2ForCausalLM built from a config (random weights, no download): 4 layers, hidden 256, 8 heads / 2 KV heads (GQA), qkv bias, intermediate 688, vocab 2048, sdpa attention; input inputs_embeds x [1, 64, 256] (so every input is f32), all-ones attention_mask; output the logits [1, 64, 2048] |

Composite ops (one runtime kernel call each in the generated C):
rms_norm, rope, scaled_dot_product_attention (causal), swiglu,
instance_norm, pixel_shuffle (ATen-derived).

FLOPs (flops(name)), multiply and add counted as 2, only the products:
  linear  [M, K] x [K, N]                      2 * M * N * K
  attention per head, T queries, T keys, hd:   QK^T 2 * T * T * hd  +  PV 2 * T * T * hd
                                               (dense T x T, the causal half is NOT subtracted)
  conv    2 * (output elements) * (C_in / groups) * kh * kw
Norms, RoPE, softmax, SiLU, relu, residual adds, bias adds and pixel_shuffle
are not counted (they are O(elements), not O(MACs)).
"""

from __future__ import annotations

import os
import sys
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from coreai_torch import ExternalizeSpec  # noqa: E402
from coreai_torch.composite_ops import (COMPOSITE_SPECS, SDPA, RMSNorm, RMSNormImpl, RoPE,  # noqa: E402
                                        SwiGLU, SwiGLUImpl)

SEED = 0

MODELS = {
    "ffn": dict(kind="ffn", dim=64, ff=256, shape=(2, 16, 64), target=0.35,
                title="FeedForward 64-256-64 x[2,16,64]"),
    "llama256": dict(kind="llama", dim=256, heads=8, seq=64, hidden=688, shape=(1, 64, 256), target=0.30,
                     title="Llama block d256 h8 T64 ff688"),
    "llama1024": dict(kind="llama", dim=1024, heads=16, seq=128, hidden=2816, shape=(1, 128, 1024),
                      target=0.45, title="Llama block d1024 h16 T128 ff2816"),
    "convnet": dict(kind="conv", shape=(1, 3, 64, 64), target=0.45,
                    title="ConvNet 3-16-32 pxshuf x[1,3,64,64]"),
    "resnet18": dict(kind="tv", arch="resnet18", shape=(1, 3, 224, 224), target=0.45,
                     title="torchvision resnet18 224x224"),
    "mobilenetv2": dict(kind="tv", arch="mobilenet_v2", shape=(1, 3, 224, 224), target=0.45,
                        title="torchvision mobilenet_v2 224x224"),
    "qwen2": dict(kind="hf", layers=4, dim=256, heads=8, kv_heads=2, hidden=688, vocab=2048, seq=64,
                  shape=(1, 64, 256), target=0.45, title="HF Qwen2 4L d256 h8/2 T64"),
}

# Compressed weights (bench/quant/bench_model_q.py, built by the target
# bench-quant-models, not by bench-models): the llama1024 block for one
# token (the decode step: 51 MB of f32 weights read for 2 x 12.8 M
# multiply-adds) and for its 128-token prompt, its seven linears compressed
# by coreai_torch.compression.quantize_weights (symmetric, one f32 scale
# per 32 inputs); the f32 prompt is llama1024 itself. The same seeded f32
# weights in every variant.
for _t in (1, 128):
    for _bits in (None, 8, 4):
        if _t == 128 and _bits is None:
            continue
        _name = "llama1024" + ("_t1" if _t == 1 else "") + (f"_int{_bits}" if _bits else "")
        MODELS[_name] = dict(MODELS["llama1024"], seq=_t, shape=(1, _t, 1024), quant=_bits,
                             title=f"Llama block d1024 T{_t} {f'int{_bits}' if _bits else 'f32'}")
QUANT_MODELS = sorted(n for n in MODELS if n.startswith("llama1024_"))


# ---- FeedForwardBlock (as in examples/feedforward/export.py) ----

class FeedForwardBlock(nn.Module):
    def __init__(self, dim: int, ff_dim: int, eps: float = 1e-5):
        super().__init__()
        self.norm = RMSNorm(dim, eps=eps)
        self.fc1 = nn.Linear(dim, ff_dim, bias=False)
        self.fc2 = nn.Linear(ff_dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(self.norm(x))))


# ---- Llama-style block ----

class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        # one RoPE instance per call site (coreai_torch keys an externalized
        # instance's calls by argument names; see examples/tinyllm)
        self.q_rope = RoPE(base=10000.0)
        self.k_rope = RoPE(base=10000.0)
        self.sdpa = SDPA(is_causal=True)  # scale = head_dim ** -0.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q = self.wq(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        y = self.sdpa(self.q_rope(q), self.k_rope(k), v)
        return self.wo(y.transpose(1, 2).reshape(b, t, d))


class LlamaBlock(nn.Module):
    def __init__(self, dim: int, heads: int, hidden: int, eps: float = 1e-5):
        super().__init__()
        self.attn_norm = RMSNorm(dim, eps=eps)
        self.attn = Attention(dim, heads)
        self.mlp_norm = RMSNorm(dim, eps=eps)
        self.mlp = SwiGLU(dim, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attn(self.attn_norm(x))
        return h + self.mlp(self.mlp_norm(h))


# ---- conv net ----

class InstanceNormImpl(nn.Module):
    """The `instance_norm` composite op (docs/composite-ops.md; as in
    examples/superres: aten::instance_norm is decomposed on PyTorch 1.13, so
    the norm is kept whole through this externalized class)."""

    def __init__(self, eps: float = 1e-5, version: int = 1):
        super().__init__()
        self.eps = float(eps)
        self.version = int(version)

    def forward(self, input: torch.Tensor, weight: Optional[torch.Tensor] = None,
                bias: Optional[torch.Tensor] = None) -> torch.Tensor:
        return F.instance_norm(input, weight=weight, bias=bias, eps=self.eps)


class InstanceNorm2d(nn.InstanceNorm2d):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__(num_features, eps=eps, affine=True)
        self.impl = InstanceNormImpl(eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.impl(x, self.weight, self.bias)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.norm = InstanceNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shuffle(self.conv2(torch.relu(self.norm(self.conv1(x)))))


# ---- Hugging Face decoder ----

class HFLogits(nn.Module):
    """A transformers causal LM fed inputs_embeds (an f32 input, as the C
    driver takes), with an explicit all-ones attention_mask (without one,
    transformers 5 looks for packed sequences with aten::diff, which the
    TorchScript ONNX exporter lacks); returns the logits."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = torch.ones(x.shape[0], x.shape[1], dtype=torch.int64)
        return self.model(inputs_embeds=x, attention_mask=mask, use_cache=False).logits


def build_hf(cfg) -> nn.Module:
    from transformers import Qwen2Config, Qwen2ForCausalLM
    config = Qwen2Config(vocab_size=cfg["vocab"], hidden_size=cfg["dim"], intermediate_size=cfg["hidden"],
                         num_hidden_layers=cfg["layers"], num_attention_heads=cfg["heads"],
                         num_key_value_heads=cfg["kv_heads"], max_position_embeddings=2 * cfg["seq"],
                         attn_implementation="sdpa")
    return HFLogits(Qwen2ForCausalLM(config))


# ---- torchvision CNN ----

#: multiply-adds at 224x224, from torchvision's model cards (Weights.meta["_ops"])
TV_GMACS = {"resnet18": 1.814, "mobilenet_v2": 0.301}


def build_tv(arch: str) -> nn.Module:
    import torchvision
    model = getattr(torchvision.models, arch)(weights=None)
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():  # fresh BatchNorms (mean 0, var 1, weight 1, bias 0) would be trivial
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                c = m.num_features
                m.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(c, generator=g) + 0.5)
                m.weight.copy_(torch.rand(c, generator=g) + 0.5)
                m.bias.copy_(torch.randn(c, generator=g) * 0.1)
    return model


def available(name: str) -> bool:
    """Whether this Python can build the model (the "tv" ones need torchvision)."""
    if MODELS[name]["kind"] == "tv":
        import importlib.util
        return importlib.util.find_spec("torchvision") is not None
    return True


# ---- construction ----

def build(name: str):
    """(model in eval mode, input tensor): deterministic (seeded)."""
    cfg = MODELS[name]
    torch.manual_seed(SEED)
    kind = cfg["kind"]
    if kind == "ffn":
        model = FeedForwardBlock(cfg["dim"], cfg["ff"])
    elif kind == "llama":
        model = LlamaBlock(cfg["dim"], cfg["heads"], cfg["hidden"])
    elif kind == "hf":
        model = build_hf(cfg)
    elif kind == "tv":
        model = build_tv(cfg["arch"])
    else:
        model = ConvNet()
    model.eval()
    with torch.no_grad():  # non-trivial norm scales (a dropped scale shows up)
        for m in model.modules():
            if isinstance(m, RMSNorm):
                m.weight.copy_(1.0 + 0.1 * torch.randn_like(m.weight))
            elif isinstance(m, InstanceNorm2d):
                m.weight.copy_(1.0 + 0.25 * torch.randn_like(m.weight))
                m.bias.copy_(0.1 * torch.randn_like(m.bias))
    if cfg.get("quant"):
        from coreai_torch.compression import quantize_weights
        model = quantize_weights(model, nbits=cfg["quant"], block_size=32).eval()
    x = torch.rand(cfg["shape"]) if kind in ("conv", "tv") else torch.randn(cfg["shape"])
    return model, x


def externalize(name: str):
    kind = MODELS[name]["kind"]
    if kind == "conv":
        return [ExternalizeSpec(InstanceNormImpl, "instance_norm", ["eps", "version"])]
    if kind == "ffn":
        return [COMPOSITE_SPECS[RMSNormImpl]]
    return [COMPOSITE_SPECS[c] for c in (RMSNormImpl, RoPE, SDPA, SwiGLUImpl)]


def convert(name: str, model: nn.Module, x: torch.Tensor):
    import coreai_torch
    from coreai_torch import TorchConverter

    if MODELS[name]["kind"] in ("hf", "tv"):
        # as the model zoo (docs/model-zoo.md): HF's written-out RMSNorm,
        # rotary embedding and sdpa reach the composite kernels by themselves
        with torch.no_grad():
            ep = torch.export.export(model, args=(x,)).run_decompositions(coreai_torch.get_decomp_table())
        program = TorchConverter().add_exported_program(ep, input_names=["x"], output_names=["output"]).to_coreai()
        program.optimize()
        return program

    program = (
        TorchConverter()
        .add_pytorch_module(
            model,
            export_fn=lambda m: torch.export.export(m, args=(x,)).run_decompositions(
                coreai_torch.get_decomp_table()),
            externalize_modules=externalize(name),
            input_names=["x"],
            output_names=["output"],
        )
        .to_coreai()
    )
    program.optimize()
    return program


# ---- FLOPs ----

def flops(name: str) -> int:
    """Analytic FLOP count of one forward pass (see the module docstring)."""
    cfg = MODELS[name]
    kind = cfg["kind"]
    if kind == "ffn":
        m = cfg["shape"][0] * cfg["shape"][1]
        return 2 * m * cfg["dim"] * cfg["ff"] * 2
    if kind == "llama":
        b, t, d = cfg["shape"]
        m, hid = b * t, cfg["hidden"]
        proj = 4 * 2 * m * d * d          # wq, wk, wv, wo
        mlp = 3 * 2 * m * d * hid         # w_gate, w_val, w_out
        attn = b * 2 * (2 * t * t * d)    # QK^T and PV over all heads (heads * head_dim = d)
        return proj + mlp + attn
    if kind == "tv":
        return round(2e9 * TV_GMACS[cfg["arch"]])
    if kind == "hf":
        b, t, d = cfg["shape"]
        m, hid, kv = b * t, cfg["hidden"], d // cfg["heads"] * cfg["kv_heads"]
        proj = 2 * m * d * (2 * d + 2 * kv)  # q, o: d x d; k, v: d x kv
        mlp = 3 * 2 * m * d * hid
        attn = b * 2 * (2 * t * t * d)
        return cfg["layers"] * (proj + mlp + attn) + 2 * m * d * cfg["vocab"]
    # conv net: conv1 16x64x64 outputs from 3x3x3, conv2 32x32x32 outputs from 16x3x3
    conv1 = 2 * (16 * 64 * 64) * 3 * 9
    conv2 = 2 * (32 * 32 * 32) * 16 * 9
    return conv1 + conv2


def flops_formula(name: str) -> str:
    kind = MODELS[name]["kind"]
    if kind == "ffn":
        return "2*M*N*K per linear, M=32: 2*32*64*256*2"
    if kind == "llama":
        return "4 proj 2*T*d*d + 3 mlp 2*T*d*hid + attn (QK^T+PV) 2*2*T*T*d (dense)"
    if kind == "tv":
        arch = MODELS[name]["arch"]
        return f"{arch} 224x224: {TV_GMACS[arch]} GMAC x 2 (torchvision's model card)"
    if kind == "hf":
        return "layers * (q,o 2*T*d*d + k,v 2*T*d*kv + 3 mlp 2*T*d*hid + attn 2*2*T*T*d) + lm_head 2*T*d*vocab"
    return "2*outputs*Cin*9 per conv: 2*16*64*64*3*9 + 2*32*32*32*16*9"
