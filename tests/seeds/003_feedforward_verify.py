"""Seed 003 (composite ops guide), "Worked Example: RMSNorm": Define a model,
Convert, Verify numerical correctness -- as a whole program.

The "Convert" block uses TorchConverter, ExternalizeSpec and RMSNormImpl
from the page's "Generic skeleton" imports (RMSNormImpl is also imported by
"Define a model"); the top-level `await run_and_compare(...)` runs under
asyncio.run.  The page lost its indentation in extraction; the code is
copied token for token with Python's indentation restored.  The snippet
prints "Outputs match: True" (np.allclose, atol=1e-4); the check epilogue
runs run_and_compare again capturing what it prints, asserts that line and
the max abs error against 1e-5 * max(1, max|ref|), and repeats with a
random RMSNorm weight.
"""
# === implied by the page: the "Generic skeleton" imports ===
import asyncio

from coreai_torch import ExternalizeSpec, TorchConverter
# === end implied ===

# === verbatim: 003_fcc202da9e1f16e5.txt, "Define a model" ===
import torch
import torch.nn as nn
from coreai_torch.composite_ops import RMSNormImpl
class RMSNorm(nn.Module):
    """Convenience wrapper that owns the learnable scale parameter."""
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.norm = RMSNormImpl(eps=eps)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x, self.weight)
class FeedForwardBlock(nn.Module):
    def __init__(self, dim: int, ff_dim: int, eps: float = 1e-5):
        super().__init__()
        self.norm = RMSNorm(dim=dim, eps=eps)
        self.fc1 = nn.Linear(dim, ff_dim, bias=False)
        self.fc2 = nn.Linear(ff_dim, dim, bias=False)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(self.norm(x))))
model = FeedForwardBlock(dim=64, ff_dim=256).eval()
sample = (torch.randn(2, 16, 64),)
# === end verbatim ===

# === verbatim: 003_fcc202da9e1f16e5.txt, "Convert" ===
import torch
import coreai_torch
coreai_program = (
    TorchConverter()
    .add_pytorch_module(
        model,
        export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(
            coreai_torch.get_decomp_table()
        ),
        externalize_modules=[
            ExternalizeSpec(
                target_class=RMSNormImpl,
                composite_op_name="rms_norm",
                composite_attrs=["axes", "eps"],
            )
        ],
    )
    .to_coreai()
)
coreai_program.optimize()
# === end verbatim ===

# === verbatim: 003_fcc202da9e1f16e5.txt, "Verify numerical correctness" (top-level await under asyncio.run) ===
import tempfile
import torch
from pathlib import Path
import numpy as np
from coreai.runtime import NDArray
async def run_and_compare(coreai_program, model, sample):
    with tempfile.TemporaryDirectory() as tmpdir:
        asset = coreai_program.save_asset(Path(tmpdir) / "rms_norm_example.aimodel")
        async with asset.executable() as ai_model:
            function = ai_model.load_function("main")
            x = sample[0]
            coreai_out = await function({"x": NDArray(x)})
            coreai_np = list(coreai_out.values())[0].numpy()
    with torch.no_grad():
        torch_np = model(x).numpy()
    print(f"Max abs error: {np.abs(torch_np - coreai_np).max():.2e}")
    print(f"Outputs match: {np.allclose(torch_np, coreai_np, atol=1e-4)}")
asyncio.run(run_and_compare(coreai_program, model, sample))
# === end verbatim ===

# === check (not from the page) ===
import contextlib
import io
import re

from _seedcheck import done, tolerance


def check_run(program, what):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        asyncio.run(run_and_compare(program, model, sample))
    printed = buf.getvalue()
    print(f"{what}: {printed.strip()!r}")
    assert "Outputs match: True" in printed.splitlines(), printed
    err = float(re.search(r"Max abs error: (\S+)", printed).group(1))
    with torch.no_grad():
        tol = tolerance(model(sample[0]))
    assert err <= tol, f"{what}: max abs error {err} > {tol}"


text = str(coreai_program)
assert 'composite_declaration<"rms_norm"' in text and "op_attrs = {axes = -1 : si64, eps = 9.99999974E-6 : f32}" in text
check_run(coreai_program, "weight of ones")

with torch.no_grad():  # a scale that is not all ones, and a new input
    model.norm.weight.copy_(1.0 + 0.5 * torch.randn(64))
sample = (torch.randn(2, 16, 64),)
program2 = TorchConverter().add_pytorch_module(
    model,
    export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(coreai_torch.get_decomp_table()),
    externalize_modules=[ExternalizeSpec(target_class=RMSNormImpl, composite_op_name="rms_norm",
                                         composite_attrs=["axes", "eps"])],
).to_coreai()
program2.optimize()
check_run(program2, "random weight")
done("003_feedforward_verify")
