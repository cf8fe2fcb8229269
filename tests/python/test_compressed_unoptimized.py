"""Compressed models converted WITHOUT AIProgram.optimize(): the converter
leaves a dead transpose of every linear's weight, a second reader of the
dequantized weight. coreai-gen removes dead ops before planning
(generator/src/dce.h), so every linear still runs on its compressed weight
(`generate --stats`: path fused), and the generated C follows the
compressed model in eager PyTorch. (The stateful decoder without
optimize(): tests/python/test_llm_workflow.py,
test_compressed_generation_loop_in_generated_c, 4 bits.)"""
import importlib.util
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import coreai_torch
from coreai_torch import ExternalizeSpec, TorchConverter
from coreai_torch.composite_ops import RMSNormImpl
from coreai_torch.compression import quantize_weights
from coreai_torch.testing import run_program

REPO = Path(__file__).resolve().parents[2]


def feedforward_block():
    spec = importlib.util.spec_from_file_location("feedforward_export", REPO / "examples" / "feedforward" / "export.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    model = mod.FeedForwardBlock(dim=64, ff_dim=256).eval()
    with torch.no_grad():
        model.norm.weight.copy_(1.0 + 0.5 * torch.randn(64))
    return model


def convert(model, x):
    return (TorchConverter()
            .add_pytorch_module(model, export_fn=lambda m: torch.export.export(m, args=(x,)).run_decompositions(
                coreai_torch.get_decomp_table()),
                externalize_modules=[ExternalizeSpec(RMSNormImpl, "rms_norm", ["axes", "eps", "version"])],
                input_names=["x"], output_names=["output"])
            .to_coreai())


def stats(coreai_gen, path, out):
    r = subprocess.run([coreai_gen, "generate", str(path), "-o", str(out), "--stats"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return [ln.split() for ln in r.stdout.splitlines() if ln.startswith("compressed_weight ")]


@pytest.mark.parametrize("nbits,shape", [(4, (1, 1, 64)), (8, (2, 16, 64))])
def test_feedforward_unoptimized_runs_fused(nbits, shape, coreai_gen, c_compiler, tmp_path):
    model = quantize_weights(feedforward_block(), nbits=nbits, block_size=32)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        want = model(x)
    program = convert(model, x)
    # the dead transposes are there: this is what optimize() would remove
    assert str(program).count("coreai.transpose") == 2
    layers = stats(coreai_gen, program.save(tmp_path / "m"), tmp_path / "out")
    assert [(ln[-3], ln[-1]) for ln in layers] == [("coreai.linear", "fused")] * 2, layers
    src = (tmp_path / "out" / "m.c").read_text()
    # i8 / i4 data in blocks of 32: both layers read the generation-time
    # panels (the 32-row input takes the panels' GEMM strips, 1 row the tiles)
    assert src.count("coreai_linear_qp_f32(") == 2 and "coreai_shift_scale(" not in src
    assert "coreai_linear_q_f32(" not in src
    assert "coreai_transpose" not in src
    got = next(iter(run_program(program, [{"x": x}], workdir=str(tmp_path))[0].values()))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5 * float(want.abs().max()))


class MatmulTransposed(torch.nn.Module):
    """torch.matmul(x, W.T) on a dequantized weight, not an nn.Linear."""

    def __init__(self):
        super().__init__()
        from coreai_torch.compression import quantize_tensor
        w = torch.randn(32, 64, generator=torch.Generator().manual_seed(8))
        self.w = quantize_tensor(w, 4, 32, True, torch.float32)

    def forward(self, x):
        return torch.matmul(x, self.w().T)


def test_matmul_with_transposed_weight_runs_fused(coreai_gen, c_compiler, tmp_path):
    """The decomposition turns matmul(x, W.T) of a 3-D x into a linear on W
    (plus a dead transpose): the fused kernel, unoptimized too."""
    model = MatmulTransposed()
    x = torch.randn(2, 3, 64, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        want = model(x)
    ep = torch.export.export(model, (x,)).run_decompositions(coreai_torch.get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    assert "coreai.transpose" in str(program)
    layers = stats(coreai_gen, program.save(tmp_path / "m"), tmp_path / "out")
    assert [(ln[-3], ln[-1]) for ln in layers] == [("coreai.linear", "fused")], layers
    got = next(iter(run_program(program, [{"x": x}], workdir=str(tmp_path))[0].values()))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5 * float(want.abs().max()))
