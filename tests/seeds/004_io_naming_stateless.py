"""Seed 004 (TorchConverter API reference), "IO naming" / "Examples",
"Stateless model", as a whole program.

The snippet uses `nn`, `torch`, `TorchConverter` and `get_decomp_table`
from the page's Overview without importing them.  It discards the converted
program (`...to_coreai().optimize()`), so the check epilogue converts the
same `ep` again with the same arguments to inspect the names (inputs
["features"], outputs ["logits"], no states) and run it; it also checks the
default names (input "x" from forward(self, x); the output named after the
last op's FX node).
"""
# === implied by the page: the Overview's imports ===
import torch
import torch.nn as nn

from coreai_torch import TorchConverter, get_decomp_table
# === end implied ===

# === verbatim: 004_ad442e4f040d7109.txt, "IO naming" (Stateless model) ===
class Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x)

ep = torch.export.export(Linear().eval(), args=(torch.randn(1, 8),))
ep = ep.run_decompositions(get_decomp_table())

TorchConverter().add_exported_program(
    ep,
    input_names=["features"],
    output_names=["logits"],
).to_coreai().optimize()
# === end verbatim ===

# === check (not from the page) ===
from _seedcheck import assert_close, done, run_program

program = TorchConverter().add_exported_program(ep, input_names=["features"], output_names=["logits"]).to_coreai()
program.optimize()
entry = program.entrypoints[0]
print(f"named: inputs={entry.inputs} outputs={entry.outputs} states={entry.states}")
assert (entry.inputs, entry.outputs, entry.states) == (["features"], ["logits"], []), entry

default = TorchConverter().add_exported_program(ep).to_coreai().entrypoints[0]
output_node = [n for n in ep.graph.nodes if n.op == "output"][0].args[0][0].name
print(f"default: inputs={default.inputs} outputs={default.outputs} states={default.states} (FX output node "
      f"{output_node!r})")
assert (default.inputs, default.outputs, default.states) == (["x"], ["addmm"], []), default
assert default.outputs == [output_node]

x = torch.randn(1, 8)
module = ep.module()  # the exported Linear, with its weights
out = run_program(program, [{"features": x}])[0]
assert list(out) == ["logits"], list(out)
with torch.no_grad():
    assert_close(out["logits"], module(x), "logits")
done("004_io_naming_stateless")
