"""Seed 000 (externalization guide), "Composite Op Externalization", as a whole program.

The page's two code blocks are complete (the model block, then the
converter block).  Here the externalized class is the root module itself,
so @main only invokes the composite graph; the check epilogue looks for
the composite declaration with the three attributes, then compares the
generated C with eager PyTorch.
"""
# === verbatim: 000_1e671057b6860f18.txt, "Composite Op Externalization" (model block) ===
import torch
import torch.nn as nn

from coreai_torch import ExternalizeSpec


class RMSNormComposite(nn.Module):
    def __init__(self, axes=-1, eps=1e-5, version=1):
        super().__init__()
        self.axes = axes
        self.eps = eps
        self.version = version

    def forward(self, input: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        x_f32 = input.to(torch.float32)
        inv_rms = torch.rsqrt((x_f32 * x_f32).mean(self.axes, keepdim=True) + self.eps)
        return (input * inv_rms).to(input.dtype) * scale

model = RMSNormComposite().eval()
sample = (torch.randn(10), torch.randn(10))
# === end verbatim ===
# === verbatim: 000_1e671057b6860f18.txt, "Composite Op Externalization" (converter block) ===
import torch

import coreai_torch
from coreai_torch import ExternalizeSpec, TorchConverter

converter = TorchConverter().add_pytorch_module(
    model,
    export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(
        coreai_torch.get_decomp_table()
    ),
    externalize_modules=[
        ExternalizeSpec(
            target_class=RMSNormComposite,
            composite_op_name="rms_norm",
            composite_attrs=["axes", "eps", "version"],
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
assert re.search(r"coreai\.graph private noinline @\w*rms_norm\w*\(", text), "no private rms_norm graph"
assert 'composite_declaration<"rms_norm"' in text
assert 'input_names = ["input", "scale"]' in text and 'output_names = ["output"]' in text
assert "op_attrs = {axes = -1 : si64, eps = 9.99999974E-6 : f32, version = 1 : si64}" in text
assert re.search(r"coreai\.invoke @\w*rms_norm\w*\(", text), "@main does not invoke the composite"
entry = coreai_program.entrypoints[0]
assert entry.inputs == ["input", "scale"], entry.inputs

out = run_program(coreai_program, [{"input": sample[0], "scale": sample[1]}])[0]
with torch.no_grad():
    assert_close(single(out), model(*sample), "main (sample)")
x, s = torch.randn(10) * 3, torch.randn(10)
out = run_program(coreai_program, [{"input": x, "scale": s}])[0]
with torch.no_grad():
    assert_close(single(out), model(x, s), "main (new input)")
done("000_composite_externalization")
