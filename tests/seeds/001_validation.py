"""Seed 001 (ExternalizeSpec reference): "Public import", "Declaration",
"Usage" and "Validation", as a whole program.

The "Usage" expression refers to RMSNormImpl, which the page does not
import (002 and 003 import it from coreai_torch.composite_ops).  The check
epilogue verifies the declared fields, the two validation rules (ValueError
for composite_attrs without composite_op_name; a UserWarning, not an error,
for a target_class that matches no submodule), and converts a model with
the "Usage" spec through the generated C.
"""
# === verbatim: 001_5e650fdc3c09faca.txt, "Overview" (public import) ===
from coreai_torch import ExternalizeSpec
# === end verbatim ===

# === implied by the page: RMSNormImpl, as imported on pages 002 and 003 ===
from coreai_torch.composite_ops import RMSNormImpl
# === end implied ===

# === verbatim: 001_5e650fdc3c09faca.txt, "Usage" ===
ExternalizeSpec(
    target_class=RMSNormImpl,
    composite_op_name="rms_norm",
    composite_attrs=["axes", "eps", "version"],
)
# === end verbatim ===

# === check (not from the page) ===
import dataclasses
import warnings

import torch
import torch.nn as nn

import coreai_torch
from coreai_torch import TorchConverter
from _seedcheck import assert_close, done, run_program, single

# "Declaration": @dataclass ExternalizeSpec(target_class, composite_op_name=None, composite_attrs=None)
assert dataclasses.is_dataclass(ExternalizeSpec)
fields = [(f.name, f.default) for f in dataclasses.fields(ExternalizeSpec)]
assert fields == [("target_class", dataclasses.MISSING), ("composite_op_name", None), ("composite_attrs", None)], fields
spec = ExternalizeSpec(target_class=RMSNormImpl, composite_op_name="rms_norm",
                       composite_attrs=["axes", "eps", "version"])

# Validation 1: composite_attrs without composite_op_name raises ValueError
try:
    ExternalizeSpec(target_class=RMSNormImpl, composite_attrs=["eps"])
except ValueError as e:
    print(f"ValueError: {e}")
else:
    raise AssertionError("composite_attrs without composite_op_name did not raise ValueError")
ExternalizeSpec(target_class=RMSNormImpl)  # target_class alone (simple externalization) is valid


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(8))
        self.norm = RMSNormImpl(eps=1e-5)

    def forward(self, x):
        return self.norm(x, self.weight) * 2.0


class Unused(nn.Module):
    def forward(self, x):
        return x


model = Scale().eval()
sample = (torch.randn(3, 8),)
export_fn = lambda m: torch.export.export(m, args=sample).run_decompositions(coreai_torch.get_decomp_table())

# Validation 2: a target_class matching no submodule -> UserWarning, not an error (a superset of specs)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    converter = TorchConverter().add_pytorch_module(
        model, export_fn=export_fn,
        externalize_modules=[spec, ExternalizeSpec(target_class=Unused, composite_op_name="unused")])
user_warnings = [w for w in caught if issubclass(w.category, UserWarning) and "Unused" in str(w.message)]
assert user_warnings, [str(w.message) for w in caught]
print(f"UserWarning: {user_warnings[0].message}")

coreai_program = converter.to_coreai()
coreai_program.optimize()
text = str(coreai_program)
assert 'composite_declaration<"rms_norm"' in text
assert "op_attrs = {axes = -1 : si64, eps = 9.99999974E-6 : f32, version = 1 : si64}" in text
assert "unused" not in text
x = torch.randn(3, 8)
out = run_program(coreai_program, [{"x": x}])[0]
with torch.no_grad():
    assert_close(single(out), model(x), "main")
done("001_validation")
