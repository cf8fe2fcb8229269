"""Seed 004 (TorchConverter API reference), "add_pytorch_module" example,
as a whole program.

The page's snippet uses `torch`, `coreai_torch`, `TorchConverter` and
`MyModel` without importing or defining them: the prelude gives the
imports of the page's Overview and a minimal image classifier taking the
snippet's 1x3x224x224 sample.
"""
# === implied by the page: imports and MyModel ===
import torch
import torch.nn as nn

import coreai_torch
from coreai_torch import TorchConverter


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        h = torch.relu(self.bn(self.conv(x)))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(h, 1), 1))
# === end implied ===

# === verbatim: 004_ad442e4f040d7109.txt, "add_pytorch_module" (Example) ===
model = MyModel().eval()
sample = (torch.randn(1, 3, 224, 224),)

converter = TorchConverter().add_pytorch_module(
    model,
    export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(
        coreai_torch.get_decomp_table()
    ),
)
coreai_program = converter.to_coreai()
coreai_program.optimize()
# === end verbatim ===

# === check (not from the page) ===
from _seedcheck import assert_close, done, run_program, single

entry = coreai_program.entrypoints[0]
assert (entry.name, entry.inputs, entry.states) == ("main", ["x"], []), entry
out = run_program(coreai_program, [{"x": sample[0]}])[0]
with torch.no_grad():
    assert_close(single(out), model(sample[0]), "main")
done("004_add_pytorch_module")
