"""Seed 004 (TorchConverter API reference), "register_torch_lowering",
"Example -- register a lowering for a custom torch op", as a whole program.

The snippet uses `TorchConverter` (imported in the page's Overview) and an
`exported` program calling the custom op, which it does not define: that
program can only be exported once the snippet has defined the op, so the
snippet is copied in two verbatim pieces with the export between them.
The check epilogue verifies that the lowering was used (the op node is in
the exported graph and no error is raised converting it), compares the
generated C with the op's eager result, and checks the three ValueErrors
of "Raises".
"""
# === implied by the page: the Overview's import ===
from coreai_torch import TorchConverter, get_decomp_table
# === end implied ===

# === verbatim: 004_ad442e4f040d7109.txt, "register_torch_lowering" (custom op example, up to the lowering) ===
import torch
from coreai._compiler.dialects import coreai
from coreai_torch._utils import get_operands

@torch.library.custom_op("my_lib::scaled_add", mutates_args=())
def scaled_add(x: torch.Tensor, y: torch.Tensor, scale: float) -> torch.Tensor:
    return x + scale * y

@scaled_add.register_fake
def _(x, y, scale):
    return torch.empty_like(x)

converter = TorchConverter()

@converter.register_torch_lowering("my_lib::scaled_add.default")
def lower_scaled_add(values_map, node, loc):
    x, y = get_operands(values_map, node, [0, 1], loc)
    scale = node.args[2]  # plain Python float
    scale_val = coreai.constant(scale, dtype=x.type.element_type)
    scaled_y = coreai.broadcasting_mul(y, scale_val, loc=loc)
    return coreai.broadcasting_add(x, scaled_y, loc=loc)
# === end verbatim ===

# === implied by the page: a model calling the custom op, exported and decomposed as `exported` ===
class ScaledAdd(torch.nn.Module):
    def forward(self, x, y):
        return scaled_add(x, y, 0.5)


model = ScaledAdd().eval()
exported = torch.export.export(model, args=(torch.randn(4, 8), torch.randn(4, 8)))
exported = exported.run_decompositions(get_decomp_table())
# === end implied ===

# === verbatim: 004_ad442e4f040d7109.txt, "register_torch_lowering" (custom op example, conversion) ===
coreai_program = converter.add_exported_program(exported).to_coreai()
coreai_program.optimize()
# === end verbatim ===

# === check (not from the page) ===
from _seedcheck import assert_close, done, run_program, single

assert any(n.target is torch.ops.my_lib.scaled_add.default for n in exported.graph.nodes), exported.graph
assert [e.inputs for e in coreai_program.entrypoints] == [["x", "y"]]
x, y = torch.randn(4, 8), torch.randn(4, 8)
out = run_program(coreai_program, [{"x": x, "y": y}])[0]
assert_close(single(out), model(x, y), "main")


def expect_value_error(name, **kw):
    try:
        converter.register_torch_lowering(name, **kw)(lower_scaled_add)
    except ValueError as e:
        print(f"register_torch_lowering({name!r}{', ' if kw else ''}{', '.join(f'{k}={v}' for k, v in kw.items())})"
              f": ValueError: {e}")
    else:
        raise AssertionError(f"register_torch_lowering({name!r}, {kw}) did not raise ValueError")


# not in "namespace::op_name" form
for bad in ["scaled_add", "my_lib.scaled_add", "my_lib:scaled_add", "::scaled_add", "my_lib::"]:
    expect_value_error(bad)
# reserved namespaces
for ns in ["aten", "higher_order", "coreai", "coreaix"]:
    expect_value_error(f"{ns}::my_op")
# a lowering already exists and allow_override is False
expect_value_error("my_lib::scaled_add.default")
# allow_override=True replaces it, silently
converter.register_torch_lowering("my_lib::scaled_add.default", allow_override=True)(lower_scaled_add)
done("004_register_torch_lowering_custom_op")
