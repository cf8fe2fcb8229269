"""Seed 004 (TorchConverter API reference), "register_custom_kernels" example,
as a whole program.

The snippet uses a `model` calling the kernel and its `example_inputs`
without defining them: the prelude gives a minimal model whose forward
calls the snippet's `kernel` (looked up when forward runs, i.e. after the
snippet has defined it).  This project turns the kernel body into a C loop
(coreai.elementwise_kernel, python/coreai_torch/_torch_metal_kernel.py).
The check epilogue verifies that the kernel call is one node of the
exported graph and an elementwise_kernel carrying the page's source in the
converted program, then compares the generated C with PyTorch.
"""
# === implied by the page: a model calling `kernel`, and example_inputs ===
import torch
import torch.nn as nn


class AddModel(nn.Module):
    def forward(self, x, y):
        h = kernel(x, y, threads_per_grid=(x.numel(), 1, 1), threads_per_thread_group=(1, 1, 1),
                   result_shapes=[list(x.shape)])
        return torch.relu(h)


model = AddModel().eval()
example_inputs = (torch.randn(16), torch.randn(16))
# === end implied ===

# === verbatim: 004_ad442e4f040d7109.txt, "register_custom_kernels" (Example) ===
import torch
from coreai_torch import TorchConverter, TorchMetalKernel, MetalParameter, get_decomp_table

def torch_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y

kernel = TorchMetalKernel(
    "vector_add",
    input_names=["x", "y"],
    result_names=["output"],
    src="output[id] = x[id] + y[id];",
    torch_defn=torch_add,
    metal_params=[MetalParameter("id", "uint", "thread_position_in_grid")],
)

converter = TorchConverter()
converter.register_custom_kernels([kernel])

exported = torch.export.export(model, args=example_inputs)
exported = exported.run_decompositions(get_decomp_table())

coreai_program = converter.add_exported_program(exported).to_coreai()
coreai_program.optimize()
# === end verbatim ===

# === check (not from the page) ===
from _seedcheck import assert_close, done, run_program, single

kernel_nodes = [n for n in exported.graph.nodes if n.op == "call_function" and "vector_add" in str(n.target)]
assert len(kernel_nodes) == 1, exported.graph
text = str(coreai_program)
print(text)
assert "coreai.elementwise_kernel" in text and "output[id] = x[id] + y[id];" in text, text
x, y = torch.randn(16), torch.randn(16)
with torch.no_grad():
    assert_close(single(run_program(coreai_program, [{"x": x, "y": y}])[0]), model(x, y), "main")
done("004_register_custom_kernels")
