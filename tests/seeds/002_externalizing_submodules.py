"""Seed 002 (conversion workflows), "Externalizing submodules" / "Composite op
externalization", as a whole program.

The page's snippet is complete.  The check epilogue looks for the rms_norm
composite graph in the converted program, then compares the generated C
with eager PyTorch (once with the RMSNorm weight of ones the snippet leaves,
once with a random weight, so that the scale input is exercised).
"""
# === verbatim: 002_34423d4407a4cf1d.txt, "Composite op externalization" ===
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

converter = TorchConverter().add_pytorch_module(
    model,
    export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(
        coreai_torch.get_decomp_table()
    ),
    externalize_modules=[
        ExternalizeSpec(
            target_class=RMSNormImpl,
            composite_op_name="rms_norm",
            composite_attrs=["axes", "eps"],
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
print(text)
assert re.search(r"coreai\.graph private noinline @norm\.[\w.]*rms_norm\w*\(", text), "no private rms_norm graph"
assert 'composite_declaration<"rms_norm"' in text
assert 'input_names = ["input", "scale"]' in text and 'output_names = ["output"]' in text
assert "op_attrs = {axes = -1 : si64, eps = 9.99999974E-6 : f32}" in text
assert re.search(r"coreai\.invoke @norm\.[\w.]*rms_norm\w*\(", text), "@main does not invoke the composite"

x = torch.randn(1, 10)
out = run_program(coreai_program, [{"x": x}])[0]
with torch.no_grad():
    assert_close(single(out), model(x), "main (weight of ones)")

# the same conversion with a random RMSNorm weight (the page's converter call, re-run)
with torch.no_grad():
    model.norm.weight.copy_(1.0 + 0.5 * torch.randn(10))
program2 = TorchConverter().add_pytorch_module(
    model,
    export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(coreai_torch.get_decomp_table()),
    externalize_modules=[ExternalizeSpec(target_class=RMSNormImpl, composite_op_name="rms_norm",
                                         composite_attrs=["axes", "eps"])],
).to_coreai()
program2.optimize()
out = run_program(program2, [{"x": x}])[0]
with torch.no_grad():
    assert_close(single(out), model(x), "main (random weight)")
done("002_externalizing_submodules")
