"""Seed 003 (composite ops guide), "The General Pattern" / "Generic skeleton",
as a whole program.

The page's two code blocks (imports, then the skeleton) use a `model`, its
`sample` and a composite-op class `SomeOp` with instance attributes `attr1`
and `attr2` that the page leaves to the reader: the prelude defines a
minimal one (SomeOp used as a named submodule, not as the root, as step 1
says).  The page lost its indentation in extraction; the code is copied
token for token with Python's indentation restored.
"""
# === implied by the page: SomeOp, model and sample ===
import torch
import torch.nn as nn


class SomeOp(nn.Module):
    """x * sigmoid(attr1 * x) + attr2 (a made-up composite op)."""

    def __init__(self, attr1: float = 1.5, attr2: float = 0.25):
        super().__init__()
        self.attr1 = attr1
        self.attr2 = attr2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.attr1 * x) + self.attr2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.op = SomeOp()

    def forward(self, x):
        return self.op(self.fc(x))


model = Model().eval()
sample = (torch.randn(2, 8),)
# === end implied ===

# === verbatim: 003_fcc202da9e1f16e5.txt, "Generic skeleton" (imports block) ===
import torch
import torch.nn as nn
import coreai_torch
from coreai_torch import ExternalizeSpec, TorchConverter
from coreai_torch.composite_ops import RMSNormImpl
# === end verbatim ===
# === verbatim: 003_fcc202da9e1f16e5.txt, "Generic skeleton" (skeleton block) ===
import torch
import coreai_torch
from coreai_torch import ExternalizeSpec, TorchConverter
coreai_program = (
    TorchConverter()
    .add_pytorch_module(
        model,
        export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(
            coreai_torch.get_decomp_table()
        ),
        externalize_modules=[
            ExternalizeSpec(
                target_class=SomeOp,
                composite_op_name="some_op",
                composite_attrs=["attr1", "attr2"],
            )
        ],
    )
    .to_coreai()
)
coreai_program.optimize()
# === end verbatim ===

# === check (not from the page) ===
import re

from _seedcheck import assert_close, done, run_program, single

text = str(coreai_program)
print(text)
decl = re.search(r'composite_declaration<"some_op" = \{[^>]*\}>', text)
assert decl, "no some_op composite"
assert 'input_names = ["x"]' in decl.group(0), decl.group(0)
assert "op_attrs = {attr1 = 1.50000000E+0 : f32, attr2 = 2.50000000E-1 : f32}" in decl.group(0), decl.group(0)
assert re.search(r"coreai\.graph private noinline @op\.some_op\w*\(", text), "no private @op.some_op graph"
x = torch.randn(2, 8)
out = run_program(coreai_program, [{"x": x}])[0]
with torch.no_grad():
    assert_close(single(out), model(x), "main")
done("003_generic_skeleton")
