#!/usr/bin/python3
"""Export the composite-ops guide's FeedForwardBlock with coreai_torch.

The model is exactly the guide's worked example: an RMSNorm wrapper around an
RMSNormImpl (externalized as the `rms_norm` composite op, attributes axes, eps
and version), Linear 64->256 without bias, relu, Linear 256->64 without bias,
input 2x16x64. Conversion follows the guide: add_pytorch_module with an
ExternalizeSpec, to_coreai(), optimize().

  export.py --output DIR/NAME.xml   write the model (+ NAME.weights) there: the
                                    build runs this (coreai_add_model PYTHON_SCRIPT)
  export.py                         rewrite the committed files next to this
                                    script, plus reference_input/output.npy
  export.py --check                 exit 1 if the committed files differ from a
                                    fresh export (the reference output may differ
                                    by 1e-6: PyTorch's CPU GEMM depends on the CPU)

The committed files also hold the same model with its two Linear weights
compressed by coreai_torch.compression.quantize_weights (symmetric, one f32
scale per block of 32 inputs) to 8 and 4 bits: feedforward_int8.xml/.weights,
feedforward_int4.xml/.weights, and the compressed models' eager PyTorch
outputs on the same input, reference_output_int8.npy / _int4.npy (the
bare-metal Cortex-M7 images of tests/cross/baremetal run them).

Deterministic: torch.manual_seed(0), one thread. Run with
the project's .venv/bin/python (PyTorch >= 2.8); PYTHONPATH must reach this repository's
python/ directory (the build sets it).
"""

import argparse
import io
import os
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import coreai_torch  # noqa: E402
from coreai_torch import ExternalizeSpec, TorchConverter  # noqa: E402
from coreai_torch.composite_ops import RMSNormImpl  # noqa: E402
from coreai_torch.compression import quantize_weights  # noqa: E402

OUTPUT_CHECK_TOLERANCE = 1e-6


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


# the compressed variants: name suffix -> quantize_weights' nbits
COMPRESSED = {"int8": 8, "int4": 4}
BLOCK_SIZE = 32


def convert(nbits=None):
    """Returns (program, sample input, PyTorch eager output); with nbits, of
    the model whose Linear weights are quantized to nbits."""
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = FeedForwardBlock(dim=64, ff_dim=256).eval()
    with torch.no_grad():  # a non-trivial scale, so a dropped or misplaced scale shows up
        model.norm.weight.copy_(1.0 + 0.5 * torch.randn(64))
    sample = (torch.randn(2, 16, 64),)
    if nbits is not None:
        model = quantize_weights(model, nbits=nbits, block_size=BLOCK_SIZE)
    with torch.no_grad():
        reference = model(*sample)
    program = (
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
                    composite_attrs=["axes", "eps", "version"],
                )
            ],
            input_names=["x"],
            output_names=["output"],
        )
        .to_coreai()
    )
    program.optimize()
    return program, sample[0], reference


def npy_bytes(array):
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array, dtype="<f4"), allow_pickle=False)
    return buf.getvalue()


def committed_files():
    program, x, reference = convert()
    with tempfile.TemporaryDirectory() as tmp:
        model = program.save(os.path.join(tmp, "feedforward.xml"))
        files = {}
        for name in sorted(os.listdir(tmp)):
            with open(os.path.join(tmp, name), "rb") as f:
                files[name] = f.read()
    files["reference_input.npy"] = npy_bytes(x.numpy())
    files["reference_output.npy"] = npy_bytes(reference.numpy())
    assert os.path.basename(model) in files
    for suffix, nbits in COMPRESSED.items():
        program, x_q, reference = convert(nbits)
        assert torch.equal(x_q, x)
        with tempfile.TemporaryDirectory() as tmp:
            program.save(os.path.join(tmp, f"feedforward_{suffix}.xml"))
            for name in sorted(os.listdir(tmp)):
                with open(os.path.join(tmp, name), "rb") as f:
                    files[name] = f.read()
        files[f"reference_output_{suffix}.npy"] = npy_bytes(reference.numpy())
    return files


def write_if_changed(path, data):
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return False
    except FileNotFoundError:
        pass
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
    return True


def check(files):
    stale = []
    for name, data in files.items():
        path = os.path.join(HERE, name)
        try:
            with open(path, "rb") as f:
                on_disk = f.read()
        except FileNotFoundError:
            on_disk = None
        same, note = on_disk == data, ""
        if not same and on_disk is not None and name.startswith("reference_output"):
            diff = np.abs(np.load(io.BytesIO(on_disk)).astype(np.float64) - np.load(io.BytesIO(data))).max()
            same = bool(diff <= OUTPUT_CHECK_TOLERANCE)
            note = f" (differs by {diff:.3g}, tolerance {OUTPUT_CHECK_TOLERANCE:g})"
        print(f"{'ok     ' if same else 'STALE  '}{path}{note}")
        if not same:
            stale.append(name)
    if stale:
        print(f"error: {', '.join(stale)} differ from what export.py produces; rerun it", file=sys.stderr)
        return 1
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", help="model file to write (its weights go beside it)")
    parser.add_argument("--check", action="store_true", help="verify the committed files")
    args = parser.parse_args(argv)
    if args.output:
        program, _, _ = convert()
        program.save(args.output)
        return 0
    files = committed_files()
    if args.check:
        return check(files)
    for name, data in files.items():
        changed = write_if_changed(os.path.join(HERE, name), data)
        print(f"{'wrote    ' if changed else 'unchanged'} {os.path.join(HERE, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
