"""Seed 004 (TorchConverter API reference), "IO naming" / "Default names":
the table's four examples, as a whole program.

The table gives code fragments, not a program (no verbatim region here):
  Input          def forward(self, x, z)                     -> "x", "z"
  Output         return a + b, c * d                         -> "add", "mul"
  State (buffer) self.register_buffer("kv_cache", ...)       -> "b_kv_cache"
  State (mutated user input) def forward(self, y): y.mul_(2) -> "y"
Each row becomes a small module; the names real torch.export gives
(determined by running) are checked exactly, and each program runs in the
generated C against PyTorch, states carried across calls.
"""
import torch
import torch.nn as nn

from coreai_torch import TorchConverter, get_decomp_table
from _seedcheck import assert_close, done, run_program


class InputsAndBuffer(nn.Module):  # rows "Input" and "State (buffer)"
    def __init__(self):
        super().__init__()
        self.register_buffer("kv_cache", torch.zeros(2, 3))

    def forward(self, x, z):
        self.kv_cache.add_(x)
        return self.kv_cache * z


class Outputs(nn.Module):  # row "Output"
    def forward(self, a, b, c, d):
        return a + b, c * d


class MutatedInput(nn.Module):  # row "State (mutated user input)"
    def forward(self, y):
        y.mul_(2)
        return y - 1


def check(model_class, args, inputs, states, outputs, calls):
    """args: forward()'s argument names; the rest: the expected default names."""
    sample = tuple(torch.randn(2, 3) for _ in args)
    ep = torch.export.export(model_class().eval(), args=sample).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    program.optimize()
    entry = program.entrypoints[0]
    print(f"{model_class.__name__}: inputs={entry.inputs} outputs={entry.outputs} states={entry.states}")
    assert (entry.inputs, entry.outputs, entry.states) == (inputs, outputs, states), entry
    eager = model_class().eval()
    # a mutated user input starts from the export's sample, then carries over (as the eager tensor does)
    mutated = {n: ep.example_inputs[0][i].clone() for i, n in enumerate(args) if n in states}
    feeds = [{n: torch.randn(2, 3) for n in inputs} for _ in range(calls)]
    for i, (feed, out) in enumerate(zip(feeds, run_program(program, feeds))):
        with torch.no_grad():
            ref = eager(*[feed[n] if n in feed else mutated[n] for n in args])
        for name, r in zip(outputs, ref if isinstance(ref, tuple) else (ref,)):
            assert_close(out[name], r, f"{model_class.__name__} call {i}: {name}")
        for name in states:
            state = eager.kv_cache if name == "b_kv_cache" else mutated[name]
            assert_close(out[name], state, f"{model_class.__name__} call {i}: state {name}")


check(InputsAndBuffer, ["x", "z"], inputs=["x", "z"], states=["b_kv_cache"], outputs=["mul"], calls=3)
check(Outputs, ["a", "b", "c", "d"], inputs=["a", "b", "c", "d"], states=[], outputs=["add", "mul"], calls=1)
check(MutatedInput, ["y"], inputs=[], states=["y"], outputs=["sub"], calls=3)
done("004_io_naming_defaults")
