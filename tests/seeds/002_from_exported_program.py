"""Seed 002 (conversion workflows), "From an ExportedProgram", as a whole program.

The page's snippet is complete; the check epilogue runs the converted
program through the generated C and compares it with eager PyTorch.
"""
# === verbatim: 002_34423d4407a4cf1d.txt, "From an ExportedProgram" ===
import torch
import torch.nn as nn

from coreai_torch import TorchConverter, get_decomp_table


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(10, 5)

    def forward(self, x):
        return self.linear(x)


model = MyModel().eval()

ep = torch.export.export(model, args=(torch.randn(1, 10),))
ep = ep.run_decompositions(get_decomp_table())

converter = TorchConverter().add_exported_program(ep)
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
done("002_from_exported_program")
