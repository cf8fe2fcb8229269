"""Seed 004 (TorchConverter API reference), "IO naming" / "Examples",
"Stateful model", as a whole program.

The snippet uses `nn`, `torch`, `TorchConverter` and `get_decomp_table`
from the page's Overview without importing them.  It discards the converted
program (`...to_coreai().optimize()`), so the check epilogue converts the
same `ep` again with the same arguments to inspect and run it:
  * names: states ["kv_cache", "pos_idx", "y_state"] (buffers in
    registration order, then the mutated user input), inputs ["query",
    "context"] (x, z), outputs ["attn_out", "scaled"];
  * the default names of the "Default names" table, as real torch.export
    gives them (determined by running): states ["b_kv_cache", "b_pos_idx",
    "y"], inputs ["x", "z"], outputs named after the FX nodes of
    `self.kv_cache + y` and `z * 3`;
  * four calls through the generated C against eager PyTorch, the states
    carried from call to call (y starts from the export's sample y, which
    the converter takes as the state's initial value).
"""
# === implied by the page: the Overview's imports ===
import torch
import torch.nn as nn

from coreai_torch import TorchConverter, get_decomp_table
# === end implied ===

# === verbatim: 004_ad442e4f040d7109.txt, "IO naming" (Stateful model) ===
class KVCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("kv_cache", torch.zeros(1, 4))  # state[0]
        self.register_buffer("pos_idx", torch.zeros(1))      # state[1]

    def forward(self, x, y, z):
        self.kv_cache.add_(x)       # buffer mutation
        self.pos_idx.add_(1)        # buffer mutation
        y.mul_(2)                   # state[2]: mutated user input
        # non-mutated: x -> input[0], z -> input[1]
        return self.kv_cache + y, z * 3

ep = torch.export.export(
    KVCache().eval(),
    args=(torch.randn(1, 4), torch.randn(1, 4), torch.randn(1, 4)),
)
ep = ep.run_decompositions(get_decomp_table())

TorchConverter().add_exported_program(
    ep,
    state_names=["kv_cache", "pos_idx", "y_state"],
    input_names=["query", "context"],
    output_names=["attn_out", "scaled"],
).to_coreai().optimize()
# === end verbatim ===

# === check (not from the page) ===
from _seedcheck import assert_close, done, run_program

program = TorchConverter().add_exported_program(
    ep,
    state_names=["kv_cache", "pos_idx", "y_state"],
    input_names=["query", "context"],
    output_names=["attn_out", "scaled"],
).to_coreai()
program.optimize()
entry = program.entrypoints[0]
print(f"named: states={entry.states} inputs={entry.inputs} outputs={entry.outputs}")
assert entry.states == ["kv_cache", "pos_idx", "y_state"], entry.states
assert entry.inputs == ["query", "context"], entry.inputs
assert entry.outputs == ["attn_out", "scaled"], entry.outputs
# mutated buffers and mutated user inputs become state (in state_names order), then the inputs
graph = program.module.find_graph(entry.graph)
assert [a.name for a in graph.arguments] == ["kv_cache", "pos_idx", "y_state", "query", "context"]

default = TorchConverter().add_exported_program(ep).to_coreai().entrypoints[0]
returned = [n.name for n in [n for n in ep.graph.nodes if n.op == "output"][0].args[0][-2:]]
print(f"default: states={default.states} inputs={default.inputs} outputs={default.outputs} "
      f"(FX return nodes {returned})")
assert default.states == ["b_kv_cache", "b_pos_idx", "y"], default.states
assert default.inputs == ["x", "z"], default.inputs
assert default.outputs == ["add_2", "mul_1"] == returned, (default.outputs, returned)

eager = KVCache().eval()
y = ep.example_inputs[0][1].clone()  # the state's initial value: the export's sample y
calls = [(torch.randn(1, 4), torch.randn(1, 4)) for _ in range(4)]
outs = run_program(program, [{"query": q, "context": c} for q, c in calls])
for i, ((q, c), out) in enumerate(zip(calls, outs)):
    with torch.no_grad():
        attn_out, scaled = eager(q, y, c)  # mutates eager's buffers and y, as the states
    assert sorted(out) == sorted(["attn_out", "scaled", "kv_cache", "pos_idx", "y_state"]), list(out)
    assert_close(out["attn_out"], attn_out, f"call {i}: attn_out")
    assert_close(out["scaled"], scaled, f"call {i}: scaled")
    assert_close(out["kv_cache"], eager.kv_cache, f"call {i}: kv_cache")
    assert_close(out["pos_idx"], eager.pos_idx, f"call {i}: pos_idx")
    assert_close(out["y_state"], y, f"call {i}: y_state")
assert float(eager.pos_idx) == 4.0
done("004_io_naming_stateful")
