"""Seed 004 (TorchConverter API reference), "Constructor", as a whole program.

The check epilogue verifies what the page says: a new converter has no
loaded programs (to_coreai() has nothing to convert) and no custom
lowerings (so registering one for a fresh op name does not conflict), and
then that it converts a staged program that runs in the generated C.
"""
# === verbatim: 004_ad442e4f040d7109.txt, "Constructor" ===
import torch
from coreai_torch import TorchConverter

converter = TorchConverter()
# === end verbatim ===

# === check (not from the page) ===
import torch.nn as nn

from coreai_torch import get_decomp_table
from _seedcheck import assert_close, done, run_program, single

try:
    converter.to_coreai()
except ValueError as e:
    print(f"empty converter: ValueError: {e}")
else:
    raise AssertionError("a new TorchConverter converted something")


@converter.register_torch_lowering("my_lib::never_used")  # no existing lowering: no conflict
def _never_used(values_map, node, loc):
    raise AssertionError("not called")


model = nn.Sequential(nn.Linear(4, 3), nn.Tanh()).eval()
ep = torch.export.export(model, args=(torch.randn(2, 4),)).run_decompositions(get_decomp_table())
program = converter.add_exported_program(ep).to_coreai()
program.optimize()
x = torch.randn(2, 4)
with torch.no_grad():
    assert_close(single(run_program(program, [{"input": x}])[0]), model(x), "main")
done("004_constructor")
