"""Seed 004 (TorchConverter API reference), "get_decomp_table": both examples
("With add_exported_program" and "With add_pytorch_module"), as a whole program.

The snippets use a `model` and its `example_inputs` without defining them,
and the second uses `torch` and `coreai_torch` without importing them: the
prelude gives a small model with a LayerNorm (an op the table keeps from
being decomposed).  The check epilogue verifies what the page says of the
table (the default table minus the ops lowered as composites; a fresh copy
each call), that both forms give the same program, and compares the
generated C with PyTorch.
"""
# === implied by the page: imports, model and example_inputs ===
import torch
import torch.nn as nn

import coreai_torch

model = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.SiLU(), nn.Linear(16, 4)).eval()
example_inputs = (torch.randn(3, 8),)
# === end implied ===

# === verbatim: 004_ad442e4f040d7109.txt, "get_decomp_table" (With add_exported_program) ===
import torch
from coreai_torch import TorchConverter, get_decomp_table

ep = torch.export.export(model, args=example_inputs)
ep = ep.run_decompositions(get_decomp_table())

coreai_program = TorchConverter().add_exported_program(ep).to_coreai()
coreai_program.optimize()
# === end verbatim ===

first_program = coreai_program  # (not from the page: kept for the check)

# === verbatim: 004_ad442e4f040d7109.txt, "get_decomp_table" (With add_pytorch_module) ===
from coreai_torch import TorchConverter

coreai_program = (
    TorchConverter()
    .add_pytorch_module(
        model,
        export_fn=lambda m: torch.export.export(m, args=example_inputs).run_decompositions(
            coreai_torch.get_decomp_table()
        ),
    )
    .to_coreai()
)
coreai_program.optimize()
# === end verbatim ===

# === check (not from the page) ===
from _seedcheck import assert_close, done, run_program, single

table = get_decomp_table()
default = torch.export.default_decompositions()
assert isinstance(table, dict) and set(table) < set(default), "not the default table minus some ops"
kept = {torch.ops.aten.layer_norm.default, torch.ops.aten.scaled_dot_product_attention.default,
        torch.ops.aten.silu.default}
assert not kept & set(table) and kept <= set(default), kept & set(table)
assert any(n.target is torch.ops.aten.layer_norm.default for n in ep.graph.nodes), "layer_norm was decomposed"
size = len(table)
table.clear()  # a fresh copy each call: mutating it does not affect other callers
assert len(get_decomp_table()) == size > 0

assert str(first_program) == str(coreai_program), "the two forms differ"
x = torch.randn(3, 8)
with torch.no_grad():
    ref = model(x)
assert_close(single(run_program(first_program, [{"input": x}])[0]), ref, "with add_exported_program")
assert_close(single(run_program(coreai_program, [{"input": x}])[0]), ref, "with add_pytorch_module")
done("004_get_decomp_table")
