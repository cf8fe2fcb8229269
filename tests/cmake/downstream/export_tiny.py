"""Converts a tiny PyTorch model at build time (coreai_add_model PYTHON_SCRIPT):
the installed coreai_torch is on PYTHONPATH; the model goes to --output."""
import argparse

import torch
import torch.nn as nn

import coreai_torch
from coreai_torch import TorchConverter


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


parser = argparse.ArgumentParser()
parser.add_argument("--output", required=True)
args = parser.parse_args()
torch.manual_seed(0)
sample = (torch.randn(2, 8),)
program = TorchConverter().add_pytorch_module(
    Tiny().eval(),
    export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(coreai_torch.get_decomp_table()),
    input_names=["x"], output_names=["y"],
).to_coreai()
program.optimize()
program.save(args.output)
