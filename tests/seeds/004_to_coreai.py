"""Seed 004 (TorchConverter API reference), "to_coreai" example, as a whole program.

The page's snippet uses `TorchConverter` and an `exported` program without
defining them: the prelude exports a minimal classifier as the page's
add_exported_program example does.  The check epilogue also exercises
to_coreai(entrypoints=...) as the parameter table describes.
"""
# === implied by the page: imports, a model and its decomposed ExportedProgram `exported` ===
import torch
import torch.nn as nn

from coreai_torch import TorchConverter, get_decomp_table

model = nn.Sequential(nn.Linear(12, 16), nn.GELU(), nn.Linear(16, 3)).eval()
exported = torch.export.export(model, (torch.randn(4, 12),)).run_decompositions(get_decomp_table())
# === end implied ===

# === verbatim: 004_ad442e4f040d7109.txt, "to_coreai" (Example) ===
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

assert [(e.name, e.inputs, e.outputs) for e in coreai_program.entrypoints] == [("main", ["image"], ["logits"])]
# entrypoints=None converts all staged programs; a list selects them; unknown names are an error
converter.add_exported_program(exported, entrypoint_name="second")
assert [e.name for e in converter.to_coreai().entrypoints] == ["main", "second"]
assert [e.name for e in converter.to_coreai(entrypoints=["second"]).entrypoints] == ["second"]
try:
    converter.to_coreai(entrypoints=["nope"])
except ValueError as e:
    print(f"unknown entrypoint: ValueError: {e}")
else:
    raise AssertionError("to_coreai(entrypoints=['nope']) did not raise")

x = torch.randn(4, 12)
out = run_program(coreai_program, [{"image": x}])[0]
with torch.no_grad():
    assert_close(out["logits"], model(x), "logits")
done("004_to_coreai")
