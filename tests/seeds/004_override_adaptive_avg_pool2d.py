"""Seed 004 (TorchConverter API reference), "register_torch_lowering",
"Example -- override a built-in ATen op lowering", as a whole program.

The snippet uses `TorchConverter` (imported in the page's Overview) and an
`exported` program without defining them: the prelude exports a small
model whose adaptive average pool reaches aten::_adaptive_avg_pool2d (a
2x2 output from 8x8, which torch.export keeps as that op).  The check
epilogue verifies that the override ran (its coreai.sumpool2d is in the
program, and the built-in lowering's program differs), then compares the
generated C with PyTorch.
"""
# === implied by the page: imports and `exported` ===
import torch
import torch.nn as nn

from coreai_torch import TorchConverter, get_decomp_table


class Pool(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.nn.functional.adaptive_avg_pool2d(self.conv(x), (2, 2))


model = Pool().eval()
exported = torch.export.export(model, args=(torch.randn(1, 3, 8, 8),))
exported = exported.run_decompositions(get_decomp_table())
# === end implied ===

# === verbatim: 004_ad442e4f040d7109.txt, "register_torch_lowering" (override example) ===
import numpy as np
from coreai._compiler.dialects import coreai
from coreai_torch._utils import get_operand

converter = TorchConverter()

@converter.register_torch_lowering("aten::_adaptive_avg_pool2d.default", allow_override=True)
def lower_adaptive_avg_pool2d_static(values_map, node, loc):
    x = get_operand(values_map, node, 0, loc)
    output_h, output_w = node.args[1]
    input_h, input_w = x.type.shape[2], x.type.shape[3]
    stride_h, stride_w = input_h // output_h, input_w // output_w
    kernel_h = input_h - (output_h - 1) * stride_h
    kernel_w = input_w - (output_w - 1) * stride_w
    return coreai.broadcasting_divide(
        coreai.sumpool2d(
            x,
            kernel_size=np.array([kernel_h, kernel_w], dtype=np.uint32),
            strides=np.array([stride_h, stride_w], dtype=np.uint32),
            dilation=coreai.constant([1, 1], dtype=np.uint32),
        ),
        coreai.cast(float(kernel_h * kernel_w), x.type.element_type),
    )

coreai_program = converter.add_exported_program(exported).to_coreai()
coreai_program.optimize()
# === end verbatim ===

# === check (not from the page) ===
from _seedcheck import assert_close, done, run_program, single

assert any(n.target is torch.ops.aten._adaptive_avg_pool2d.default for n in exported.graph.nodes), exported.graph
text = str(coreai_program)
builtin = TorchConverter().add_exported_program(exported).to_coreai()
builtin.optimize()
assert "coreai.sumpool2d" in text, text
assert text != str(builtin), "the override made no difference"
x = torch.randn(1, 3, 8, 8)
with torch.no_grad():
    ref = model(x)
assert_close(single(run_program(coreai_program, [{"x": x}])[0]), ref, "override")
assert_close(single(run_program(builtin, [{"x": x}])[0]), ref, "built-in")
done("004_override_adaptive_avg_pool2d")
