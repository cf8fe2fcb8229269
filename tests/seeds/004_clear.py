"""Seed 004 (TorchConverter API reference), "clear" example, as a whole program.

The page's snippet uses `TorchConverter` and two decomposed exported
programs `ep_a` and `ep_b` without defining them: the prelude gives a small
encoder and decoder.  The snippet is copied in three verbatim pieces, with
checks between them: after staging, the converted program has the two
entrypoints "encoder" and "decoder", both run in the generated C and equal
PyTorch; after clear(entrypoints=["encoder"]) only "decoder" is left (and
a registered custom lowering is still there); after clear() nothing is
staged.
"""
# === implied by the page: imports, ep_a and ep_b ===
import torch
import torch.nn as nn

from coreai_torch import TorchConverter, get_decomp_table

encoder = nn.Sequential(nn.Linear(6, 4), nn.Tanh()).eval()
decoder = nn.Sequential(nn.Linear(4, 6), nn.Sigmoid()).eval()
ep_a = torch.export.export(encoder, args=(torch.randn(2, 6),)).run_decompositions(get_decomp_table())
ep_b = torch.export.export(decoder, args=(torch.randn(2, 4),)).run_decompositions(get_decomp_table())
# === end implied ===

# === verbatim: 004_ad442e4f040d7109.txt, "clear" (Example, staging) ===
converter = TorchConverter()
converter.add_exported_program(ep_a, entrypoint_name="encoder")
converter.add_exported_program(ep_b, entrypoint_name="decoder")
# === end verbatim ===

# === check (not from the page): two entrypoints ===
from _seedcheck import assert_close, run_program, single, done


@converter.register_torch_lowering("my_lib::kept_across_clear")
def _kept(values_map, node, loc):
    raise AssertionError("not called")


program = converter.to_coreai()
program.optimize()
assert [(e.name, e.inputs) for e in program.entrypoints] == [("encoder", ["input"]), ("decoder", ["input"])], \
    [(e.name, e.inputs) for e in program.entrypoints]
x, z = torch.randn(2, 6), torch.randn(2, 4)
with torch.no_grad():
    assert_close(single(run_program(program, [{"input": x}], entrypoint="encoder")[0]), encoder(x), "encoder")
    assert_close(single(run_program(program, [{"input": z}], entrypoint="decoder")[0]), decoder(z), "decoder")
# === end check ===

# === verbatim: 004_ad442e4f040d7109.txt, "clear" (Example, remove just the encoder) ===
# Remove just the encoder
converter.clear(entrypoints=["encoder"])
# === end verbatim ===

# === check (not from the page): only the decoder is left; custom lowerings are kept ===
program = converter.to_coreai()
assert [e.name for e in program.entrypoints] == ["decoder"], [e.name for e in program.entrypoints]
with torch.no_grad():
    assert_close(single(run_program(program, [{"input": z}], entrypoint="decoder")[0]), decoder(z),
                 "decoder after clear(entrypoints=['encoder'])")
try:
    converter.register_torch_lowering("my_lib::kept_across_clear")(_kept)
except ValueError as e:
    print(f"custom lowering kept across clear: ValueError: {e}")
else:
    raise AssertionError("the custom lowering did not survive clear()")
# === end check ===

# === verbatim: 004_ad442e4f040d7109.txt, "clear" (Example, remove everything) ===
# Remove everything
converter.clear()
# === end verbatim ===

# === check (not from the page): nothing is staged ===
try:
    converter.to_coreai()
except ValueError as e:
    print(f"after clear(): ValueError: {e}")
else:
    raise AssertionError("to_coreai() after clear() converted something")
converter.add_exported_program(ep_a, entrypoint_name="encoder")  # the name is free again
assert [e.name for e in converter.to_coreai().entrypoints] == ["encoder"]
done("004_clear")
