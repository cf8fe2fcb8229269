"""Seed 002 (conversion workflows), "From an nn.Module", as a whole program.

The snippet uses `MyModel` and `TorchConverter` from the page's previous
section ("From an ExportedProgram"); they are repeated in the prelude.
"""
# === implied by the page: MyModel and the imports of "From an ExportedProgram" ===
import torch.nn as nn

from coreai_torch import TorchConverter


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(10, 5)

    def forward(self, x):
        return self.linear(x)
# === end implied ===

# === verbatim: 002_34423d4407a4cf1d.txt, "From an nn.Module" ===
import torch
import coreai_torch

model = MyModel().eval()
sample = (torch.randn(1, 10),)

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
x = torch.randn(1, 10)
out = run_program(coreai_program, [{"x": x}])[0]
with torch.no_grad():
    assert_close(single(out), model(x), "main")
done("002_from_nn_module")
