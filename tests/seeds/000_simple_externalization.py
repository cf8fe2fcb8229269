"""Seed 000 (externalization guide), "Simple externalization (experimental)"
and the IR of "What externalization produces", as a whole program.

The page gives no code for simple externalization, only prose ("Passing a
bare module class to externalize_modules -- instead of an ExternalizeSpec
-- extracts the submodule into its own standalone graph with no
composite-op metadata") and the IR listing of "a model whose forward is
linear(norm(x)), with the norm submodule externalized" (1x10 -> 1x5).
That model is the one of seed 002 ("Composite op externalization"),
copied verbatim below; the converter call follows the page's prose.
"""
# === verbatim: 002_34423d4407a4cf1d.txt, "Composite op externalization" (the model linear(norm(x)) of 000's IR) ===
import torch
import torch.nn as nn
import coreai_torch
from coreai_torch import ExternalizeSpec, TorchConverter
from coreai_torch.composite_ops import RMSNormImpl


class RMSNorm(nn.Module):
    """Convenience wrapper that owns the learnable scale parameter."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.norm = RMSNormImpl(eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x, self.weight)


class ModelWithNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = RMSNorm(dim=10)
        self.linear = nn.Linear(10, 5)

    def forward(self, x):
        return self.linear(self.norm(x))


model = ModelWithNorm().eval()
sample = (torch.randn(1, 10),)
# === end verbatim ===

# === from the page's prose: a bare module class in externalize_modules ===
converter = TorchConverter().add_pytorch_module(
    model,
    export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(
        coreai_torch.get_decomp_table()
    ),
    externalize_modules=[RMSNorm],
)
coreai_program = converter.to_coreai()
coreai_program.optimize()
# === end prose ===

# === check (not from the page) ===
import re

from _seedcheck import assert_close, done, run_program, single

with torch.no_grad():
    model.norm.weight.copy_(1.0 + 0.5 * torch.randn(10))  # a scale that is not all ones
coreai_program = converter.to_coreai()  # re-converted: the weight is read at conversion
text = str(coreai_program)
# @norm itself is a plain (not private) graph without composite metadata.  (The
# converter recognizes the rms-norm arithmetic inside @norm as an rms_norm
# composite of its own, as it does for any model: that graph is not @norm.)
norm_header = re.search(r"coreai\.graph[^\n]*@norm\w*\([^\n]*", text).group(0)
assert "composite_decl" not in norm_header and "private" not in norm_header, norm_header
coreai_program.optimize()
text = str(coreai_program)
print(text)
# "coreai.graph noinline @norm(%arg0: tensor<1x10xf32>) -> tensor<1x10xf32>" (a hash suffix allowed)
assert re.search(r"coreai\.graph noinline @norm\w*\(%arg0: tensor<1x10xf32>[^,)]*\) -> tensor<1x10xf32>", text), \
    "no plain noinline @norm graph taking only x"
norm_header = re.search(r"coreai\.graph[^\n]*@norm\w*\([^\n]*", text).group(0)
assert "composite_decl" not in norm_header and "private" not in norm_header, norm_header
assert re.search(r"coreai\.invoke @norm\w*\(%arg0\) : \(tensor<1x10xf32>\) -> tensor<1x10xf32>", text)
assert re.search(r"coreai\.graph @main\(%arg0: tensor<1x10xf32>[^)]*\) -> tensor<1x5xf32>", text)

x = torch.randn(1, 10)
out = run_program(coreai_program, [{"x": x}])[0]
with torch.no_grad():
    assert_close(single(out), model(x), "main")
done("000_simple_externalization")
