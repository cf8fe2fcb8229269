"""Seed 004 (TorchConverter API reference), "add_exported_program" example,
as a whole program.

The page's snippet uses `MyModel` and `example_inputs` without defining
them: the prelude gives a minimal image classifier (one input, one output,
as input_names=["image"] and output_names=["logits"] require).
"""
# === implied by the page: MyModel and example_inputs ===
import torch
import torch.nn as nn


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        h = torch.relu(self.conv(x))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(h, 1), 1))


example_inputs = (torch.randn(1, 3, 32, 32),)
# === end implied ===

# === verbatim: 004_ad442e4f040d7109.txt, "add_exported_program" (Example) ===
import torch
from coreai_torch import TorchConverter, get_decomp_table

model = MyModel()
exported = torch.export.export(model, example_inputs)
exported = exported.run_decompositions(get_decomp_table())

converter = TorchConverter().add_exported_program(
    exported,
    input_names=["image"],
    output_names=["logits"],
)
coreai_program = converter.to_coreai()
coreai_program.optimize()
# === end verbatim ===

# === check (not from the page) ===
from _seedcheck import assert_close, done, run_program

entry = coreai_program.entrypoints[0]
assert (entry.name, entry.inputs, entry.outputs, entry.states) == ("main", ["image"], ["logits"], []), entry
x = torch.randn(1, 3, 32, 32)
out = run_program(coreai_program, [{"image": x}])[0]
assert list(out) == ["logits"], list(out)
with torch.no_grad():
    assert_close(out["logits"], model(x), "logits")
done("004_add_exported_program")
