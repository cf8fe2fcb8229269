#!/usr/bin/python3
"""Convert one benchmark model (models.py) with coreai_torch; the build runs
this through coreai_add_model(... PYTHON_SCRIPT).

  export.py --model NAME --output DIR/PREFIX.xml --data DATA_DIR

writes the model file (+ its weights beside it) and, in DATA_DIR, the input
and PyTorch's output for it as raw little-endian float32 (what the C timing
driver reads):

  input.f32        the model input x (models.build(NAME)[1])
  reference.f32    PyTorch eager's output for it (one thread, no_grad)

Run with the project's .venv/bin/python (PyTorch >= 2.8); PYTHONPATH must reach
this repository's python/ directory (the build sets it).
"""

import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402


def write_f32(path, tensor):
    data = np.ascontiguousarray(tensor.detach().numpy(), dtype="<f4").tobytes()
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, choices=sorted(models.MODELS))
    parser.add_argument("--output", required=True, help="model file to write (its weights go beside it)")
    parser.add_argument("--data", required=True, help="directory for input.f32 and reference.f32")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)
    model, x = models.build(args.model)
    with torch.no_grad():
        reference = model(x)
    program = models.convert(args.model, model, x)
    program.save(args.output)
    os.makedirs(args.data, exist_ok=True)
    write_f32(os.path.join(args.data, "input.f32"), x)
    write_f32(os.path.join(args.data, "reference.f32"), reference)
    print(f"{args.model}: x {list(x.shape)} -> {list(reference.shape)}, {models.flops(args.model) / 1e6:.2f} MFLOP")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
