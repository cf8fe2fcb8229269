"""Seed 001 (ExternalizeSpec reference), "Examples" (composite-op
externalization of SDPA), as a whole program.

The page's snippet uses `torch`, `coreai_torch`, a `model` containing an
SDPA submodule and its `sample` without defining them: the prelude gives a
minimal attention block.
"""
# === implied by the page: imports, a model with an SDPA submodule, its sample ===
import torch
import torch.nn as nn

import coreai_torch
from coreai_torch.composite_ops import SDPA


class Attention(nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.sdpa = SDPA(is_causal=True)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = self.sdpa(q, k, v)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


model = Attention().eval()
sample = (torch.randn(1, 6, 16),)
# === end implied ===

# === verbatim: 001_5e650fdc3c09faca.txt, "Examples" ===
from coreai_torch import TorchConverter, ExternalizeSpec
from coreai_torch.composite_ops import SDPA

converter = TorchConverter().add_pytorch_module(
    model,
    export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(
        coreai_torch.get_decomp_table()
    ),
    externalize_modules=[
        ExternalizeSpec(
            target_class=SDPA,
            composite_op_name="scaled_dot_product_attention",
            composite_attrs=["scale", "is_causal", "window_size"],
        )
    ],
)
coreai_program = converter.to_coreai()
coreai_program.optimize()
# === end verbatim ===

# === check (not from the page) ===
import re

from _seedcheck import assert_close, done, run_program, single

text = str(coreai_program)
decl = re.search(r'composite_declaration<"scaled_dot_product_attention" = \{[^>]*\}>', text)
assert decl, "no scaled_dot_product_attention composite"
print(decl.group(0))
assert "is_causal = true" in decl.group(0) and "window_size = 0 : si64" in decl.group(0), decl.group(0)
x = torch.randn(1, 6, 16)
out = run_program(coreai_program, [{"x": x}])[0]
with torch.no_grad():
    assert_close(single(out), model(x), "main")
done("001_sdpa_example")
