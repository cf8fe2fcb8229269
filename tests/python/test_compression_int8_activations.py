"""`coreai-gen generate --int8-activations` end to end: the compressed
FeedForwardBlock (one row: the GEMV; 8 rows: the GEMM), the decode step of the compressed fixed-shape
tinyllm (bench/quant/tinyllm_fixed.py, after an 8-token prefill) and a
20-output layer (its last weight panel padded), run as generated C against
two references (the layer against the first only):

  * eager PyTorch of the same compressed model whose linears (all of them
    run coreai_linear_q8a_f32, whatever their rows) first round their
    input the way the kernel does, q8_0 per run of 32 inputs
    (d = max|x| / 127, q = round_half_even(x * (127 / max|x|)), each product
    then in float64): the kernel's arithmetic up to f32 rounding, so the C
    must agree to the f32 tolerance of the plain fused path;
  * plain eager PyTorch (the model's own arithmetic): reported, and bounded
    by what rounding the activations costs (docs/compression.md).
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import coreai_torch
from coreai_torch import ExternalizeSpec, TorchConverter
from coreai_torch.composite_ops import RMSNormImpl
from coreai_torch.compression import CompressedLinear, quantize_weights

REPO = Path(__file__).resolve().parents[2]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, REPO / path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def q8_0(x):
    """x's runs of 32 (along the last axis) as the kernel rounds them, as
    float64 (each q * d exact)."""
    r = x.reshape(-1, 32)
    amax = r.abs().amax(-1, keepdim=True)
    inv = torch.where(amax > 0, torch.tensor(127.0) / amax, torch.zeros_like(amax))
    q = torch.round(r * inv).clamp(-127, 127)
    return (q.double() * (amax / 127.0).double()).reshape(x.shape)


class QuantizedActivations:
    """Within the block, CompressedLinear layers compute q8_0(x) @ W^T + b
    in float64 (W the dequantized weight)."""

    def __enter__(self):
        self.saved = CompressedLinear.forward

        def forward(mod, x):
            b = None if mod.bias is None else mod.bias.double()
            return F.linear(q8_0(x), mod.weight().double(), b).to(x.dtype)

        CompressedLinear.forward = forward
        return self

    def __exit__(self, *exc):
        CompressedLinear.forward = self.saved


def rel(got, want):
    return float(np.abs(np.asarray(got, np.float64) - want.double().numpy()).max() / want.abs().max())


def ffn(nbits):
    ff = load("examples/feedforward/export.py", "feedforward_export")
    torch.manual_seed(0)
    model = ff.FeedForwardBlock(dim=64, ff_dim=256).eval()
    with torch.no_grad():
        model.norm.weight.copy_(1.0 + 0.5 * torch.randn(64))
    return quantize_weights(model, nbits=nbits, block_size=32)


def run_ffn(model, x, a8):
    from coreai_torch.testing import run_program
    program = (TorchConverter()
               .add_pytorch_module(model, export_fn=lambda m: torch.export.export(m, args=(x,)).run_decompositions(
                   coreai_torch.get_decomp_table()),
                   externalize_modules=[ExternalizeSpec(RMSNormImpl, "rms_norm", ["axes", "eps", "version"])],
                   input_names=["x"], output_names=["output"])
               .to_coreai())
    program.optimize()
    return run_program(program, [{"x": x}], int8_activations=a8)[0]["output"]


@pytest.mark.parametrize("nbits,rows", [(4, 1), (8, 1), (4, 8), (8, 8)])
def test_feedforward_int8_activations(nbits, rows, coreai_gen, c_compiler, capsys):
    model = ffn(nbits)
    x = torch.randn(1, rows, 64, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        want = model(x)
        with QuantizedActivations():
            want_q8 = model(x)
    got = run_ffn(model, x, True)
    err_q8, err_eager = rel(got, want_q8), rel(got, want)
    with capsys.disabled():
        print(f"\nFeedForwardBlock int{nbits} --int8-activations, {rows} rows: max abs error / max |ref| "
              f"{err_q8:.1e} vs eager with q8_0 activations, {err_eager:.1e} vs plain eager "
              f"(the two references differ by {rel(want_q8.numpy(), want):.1e})")
    assert err_q8 < 1e-5, err_q8
    # rounding each input to 8 bits: about 2^-8 of a run's largest value per input
    assert 1e-4 < err_eager < 2e-2, err_eager


def test_tinyllm_decode_int8_activations(coreai_gen, c_compiler, capsys):
    """One decode step (1 row: int8 activations in every linear) of the
    4-bit tinyllm after an 8-token prefill; only the decode entrypoint is
    converted (the export is the slow part), its KV cache state set from
    the eager prefill."""
    from coreai.runtime import NDArray
    tl = load("bench/quant/tinyllm_fixed.py", "tinyllm_fixed")
    model = quantize_weights(tl.build_model(), nbits=4, block_size=32)
    model.reset_cache()  # the state's initial value is its value at export
    sample = (torch.zeros(1, 1, dtype=torch.int64), torch.tensor([0]))
    program = (TorchConverter()
               .add_pytorch_module(model, export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(
                   coreai_torch.get_decomp_table()), externalize_modules=tl.EXTERNALIZE,
                   input_names=["tokens", "position"], output_names=["logits"],
                   state_names=["k_cache", "v_cache"], entrypoint_name="decode")
               .to_coreai())
    program.optimize()
    pos8 = torch.tensor([tl.PROMPT_LEN])
    with torch.no_grad():
        model.reset_cache()
        tok = int(model(tl.prompt_tokens(), torch.tensor([0]))[0].argmax())
        cache = (model.k_cache.clone(), model.v_cache.clone())
        want = model(torch.tensor([[tok]]), pos8)
        model.k_cache.copy_(cache[0])
        model.v_cache.copy_(cache[1])
        with QuantizedActivations():
            want_q8 = model(torch.tensor([[tok]]), pos8)
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        with program.save_asset(Path(tmp) / "tinyllm").executable(int8_activations=True) as exe:
            got = exe.load_function("decode").call({"tokens": NDArray(torch.tensor([[tok]])), "position": NDArray(pos8),
                                                    "k_cache": NDArray(cache[0]), "v_cache": NDArray(cache[1])})
    got = got["logits"].numpy()
    err_q8, err_eager = rel(got, want_q8), rel(got, want)
    with capsys.disabled():
        print(f"\ntinyllm int4 decode step --int8-activations: max abs error / max |ref| {err_q8:.1e} vs eager with "
              f"q8_0 activations, {err_eager:.1e} vs plain eager (the references differ by "
              f"{rel(want_q8.numpy(), want):.1e})")
    assert err_q8 < 1e-5, err_q8
    assert 1e-4 < err_eager < 2e-2, err_eager


@pytest.mark.parametrize("nbits,symmetric,rows", [(4, True, 1), (8, True, 5), (4, False, 40)])
def test_padded_panel_int8_activations(nbits, symmetric, rows, coreai_gen, c_compiler):
    """20 outputs: the last of the kernel's panels of 16 (written by
    coreai-gen, test_compression_int8_panels.py) holds 4 outputs and 12 of
    padding, which must not reach the result; a relu fused into the layer."""
    from coreai_torch.testing import run_program
    torch.manual_seed(4)
    net = nn.Sequential(nn.Linear(64, 20), nn.ReLU(), nn.Linear(20, 3)).eval()
    # the 20-input layer is not a whole run of 32: it stays f32
    model = quantize_weights(net, nbits=nbits, block_size=32, symmetric=symmetric,
                             include=lambda name, mod: mod.in_features == 64)
    x = torch.randn(rows, 64, generator=torch.Generator().manual_seed(6))
    with torch.no_grad(), QuantizedActivations():
        want_q8 = model(x)
    ep = torch.export.export(model, (x,)).run_decompositions(coreai_torch.get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    program.optimize()
    got = next(iter(run_program(program, [{"input": x}], int8_activations=True)[0].values()))
    assert rel(got, want_q8) < 1e-5
