"""Every error the seeds name, and the converter's other diagnostics."""

import re

import pytest
import torch
import torch.nn as nn

import coreai_torch
from coreai_torch import ExternalizeSpec, TorchConverter, UnsupportedOpError, get_decomp_table
from coreai_torch.composite_ops import RMSNormImpl


def export_decomposed(model, sample):
    return torch.export.export(model, args=sample).run_decompositions(get_decomp_table())


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


# register_torch_lowering ------------------------------------------------------------


@pytest.mark.parametrize("name", ["scaled_add", "my_lib:scaled_add", "my_lib::", "::op", "my lib::op",
                                  "my_lib::op.default.extra", "", 3])
def test_register_lowering_rejects_malformed_names(name):
    with pytest.raises(ValueError, match="namespace::op_name"):
        TorchConverter().register_torch_lowering(name)


@pytest.mark.parametrize("name", ["aten::relu.default", "higher_order::cond", "coreai::foo", "coreaix::bar.default"])
def test_register_lowering_rejects_reserved_namespaces(name):
    with pytest.raises(ValueError, match="reserved"):
        TorchConverter().register_torch_lowering(name)
    # allowed as an explicit override
    TorchConverter().register_torch_lowering(name, allow_override=True)(lambda vm, node, loc: None)


def test_register_lowering_rejects_duplicates_without_override():
    conv = TorchConverter()
    conv.register_torch_lowering("my_lib::thing.default")(lambda vm, node, loc: None)
    with pytest.raises(ValueError, match="already registered"):
        conv.register_torch_lowering("my_lib::thing.default")
    marker = lambda vm, node, loc: None  # noqa: E731
    conv.register_torch_lowering("my_lib::thing.default", allow_override=True)(marker)
    assert conv._lowerings["my_lib::thing.default"] is marker
    # per instance: another converter is unaffected
    TorchConverter().register_torch_lowering("my_lib::thing.default")(lambda vm, node, loc: None)


def test_clear_keeps_lowerings():
    conv = TorchConverter()
    conv.register_torch_lowering("my_lib::kept.default")(lambda vm, node, loc: None)
    conv.add_exported_program(export_decomposed(Tiny().eval(), (torch.randn(1, 4),)))
    conv.clear()
    assert "my_lib::kept.default" in conv._lowerings
    with pytest.raises(ValueError, match="already registered"):
        conv.register_torch_lowering("my_lib::kept.default")


# ExternalizeSpec ------------------------------------------------------------------------


def test_externalize_spec_attrs_need_op_name():
    with pytest.raises(ValueError, match="composite_op_name"):
        ExternalizeSpec(target_class=RMSNormImpl, composite_attrs=["eps"])


def test_externalize_spec_validation():
    with pytest.raises(ValueError):
        ExternalizeSpec(target_class="RMSNormImpl")
    with pytest.raises(ValueError):
        ExternalizeSpec(target_class=int)
    with pytest.raises(ValueError):
        ExternalizeSpec(target_class=RMSNormImpl, composite_op_name="")
    with pytest.raises(ValueError):
        ExternalizeSpec(target_class=RMSNormImpl, composite_op_name="rms norm")
    with pytest.raises(ValueError):
        ExternalizeSpec(target_class=RMSNormImpl, composite_op_name="rms_norm", composite_attrs="eps")
    ok = ExternalizeSpec(target_class=RMSNormImpl)
    assert ok.composite_op_name is None and ok.composite_attrs is None


def test_unmatched_target_warns_and_converts():
    class Other(nn.Module):
        def forward(self, x):
            return x

    sample = (torch.randn(1, 4),)
    with pytest.warns(UserWarning, match="Other"):
        conv = TorchConverter().add_pytorch_module(
            Tiny().eval(), export_fn=lambda m: export_decomposed(m, sample),
            externalize_modules=[ExternalizeSpec(Other, "other_op"), Other])
    text = str(conv.to_coreai())
    assert "coreai.invoke" not in text


def test_bad_externalize_entries():
    with pytest.raises(ValueError, match="ExternalizeSpec"):
        TorchConverter().add_pytorch_module(Tiny(), export_fn=lambda m: None, externalize_modules=["Tiny"])


class Holder(nn.Module):
    def __init__(self, impl):
        super().__init__()
        self.impl = impl

    def forward(self, x):
        return self.impl(x)


def test_composite_attr_missing_on_instance():
    with pytest.raises(ValueError, match="no attribute 'epsilon'"):
        TorchConverter().add_pytorch_module(
            Holder(RMSNormImpl()), export_fn=lambda m: export_decomposed(m, (torch.randn(2, 4),)),
            externalize_modules=[ExternalizeSpec(RMSNormImpl, "rms_norm", ["epsilon"])])


def test_composite_attr_unsupported_type():
    impl = RMSNormImpl()
    impl.extra = {"a": 1}
    with pytest.raises(ValueError, match="unsupported type"):
        TorchConverter().add_pytorch_module(
            Holder(impl), export_fn=lambda m: export_decomposed(m, (torch.randn(2, 4),)),
            externalize_modules=[ExternalizeSpec(RMSNormImpl, "rms_norm", ["extra"])])


def test_externalized_module_must_not_mutate_state():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("n", torch.zeros(1))

        def forward(self, x):
            self.n.add_(1)
            return x + self.n

    with pytest.raises(ValueError, match="mutates"):
        TorchConverter().add_pytorch_module(
            Holder(Counter()), export_fn=lambda m: export_decomposed(m, (torch.randn(2),)),
            externalize_modules=[ExternalizeSpec(Counter, "counter")])


# staging and naming --------------------------------------------------------------------


def test_duplicate_entrypoint_names():
    ep = export_decomposed(Tiny().eval(), (torch.randn(1, 4),))
    conv = TorchConverter().add_exported_program(ep)
    with pytest.raises(ValueError, match="unique"):
        conv.add_exported_program(ep)
    with pytest.raises(ValueError, match="unique"):
        conv.add_pytorch_module(Tiny(), export_fn=lambda m: export_decomposed(m, (torch.randn(1, 4),)))
    conv.add_exported_program(ep, entrypoint_name="second")
    assert [e.name for e in conv.to_coreai().entrypoints] == ["main", "second"]


@pytest.mark.parametrize("bad", ["", "1abc", "has space", "a-b", None])
def test_entrypoint_name_must_be_identifier(bad):
    ep = export_decomposed(Tiny().eval(), (torch.randn(1, 4),))
    with pytest.raises(ValueError):
        TorchConverter().add_exported_program(ep, entrypoint_name=bad)


def test_name_count_mismatches():
    ep = export_decomposed(Tiny().eval(), (torch.randn(1, 4),))
    with pytest.raises(ValueError, match="input_names"):
        TorchConverter().add_exported_program(ep, input_names=["a", "b"]).to_coreai()
    with pytest.raises(ValueError, match="output_names"):
        TorchConverter().add_exported_program(ep, output_names=[]).to_coreai()
    with pytest.raises(ValueError, match="state_names"):
        TorchConverter().add_exported_program(ep, state_names=["s"]).to_coreai()
    with pytest.raises(ValueError, match="duplicate"):
        TorchConverter().add_exported_program(ep, input_names=["a", "a"])
    with pytest.raises(ValueError, match="unique"):
        TorchConverter().add_exported_program(ep, input_names=["y"], output_names=["y"]).to_coreai()


def test_to_coreai_needs_programs_and_known_entrypoints():
    with pytest.raises(ValueError, match="no program"):
        TorchConverter().to_coreai()
    conv = TorchConverter().add_exported_program(export_decomposed(Tiny().eval(), (torch.randn(1, 4),)))
    with pytest.raises(ValueError, match="unknown entrypoint"):
        conv.to_coreai(entrypoints=["decoder"])


def test_add_exported_program_type_check():
    with pytest.raises(TypeError):
        TorchConverter().add_exported_program(Tiny())


# unsupported ops ----------------------------------------------------------------------------


class Inner(nn.Module):
    def forward(self, x):
        return torch.cumprod(x, 1)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x) + 1


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = Layer()

    def forward(self, x):
        return self.layer(x * 2)


def test_unsupported_op_names_op_and_module_path():
    ep = export_decomposed(Net().eval(), (torch.randn(2, 3),))
    with pytest.raises(UnsupportedOpError) as err:
        TorchConverter().add_exported_program(ep).to_coreai()
    msg = str(err.value)
    assert "aten::cumprod.default" in msg
    assert "layer.inner" in msg and "Inner" in msg
    assert "register_torch_lowering" in msg
    assert isinstance(err.value, NotImplementedError)


@torch.library.custom_op("errlib::mystery", mutates_args=())
def mystery(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@mystery.register_fake
def _(x):
    return torch.empty_like(x)


_MYSTERY_CALL_LINE = next(i for i, text in enumerate(open(__file__).read().splitlines(), 1)
                          if text.rstrip().endswith("# " + "_MYSTERY_CALL_LINE"))


def test_unregistered_custom_op():
    class M(nn.Module):
        def forward(self, x):
            return torch.ops.errlib.mystery(x)  # _MYSTERY_CALL_LINE

    ep = export_decomposed(M(), (torch.randn(3),))
    # the error names the op and the model's source line that called it
    line = f"{__file__}:{_MYSTERY_CALL_LINE}"
    with pytest.raises(UnsupportedOpError, match=re.escape(line) + ".*errlib::mystery.default"):
        TorchConverter().add_exported_program(ep).to_coreai()


def test_unregistered_kernel_has_a_hint():
    from coreai_torch import MetalParameter, TorchMetalKernel

    k = TorchMetalKernel("err_scale", ["x"], ["out"], "out[id] = 2.0f * x[id];", lambda x: 2 * x,
                         [MetalParameter("id", "uint", "thread_position_in_grid")])

    class M(nn.Module):
        def forward(self, x):
            return k(x)

    ep = export_decomposed(M(), (torch.randn(3),))
    with pytest.raises(UnsupportedOpError, match="register_custom_kernels"):
        TorchConverter().add_exported_program(ep).to_coreai()


def test_training_dropout_is_rejected():
    m = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5)).train()
    ep = export_decomposed(m, (torch.randn(2, 3),))
    with pytest.raises(UnsupportedOpError):
        TorchConverter().add_exported_program(ep).to_coreai()


def test_kernel_definition_errors():
    from coreai_torch import MetalParameter, TorchMetalKernel

    with pytest.raises(ValueError):
        TorchMetalKernel("bad name", ["x"], ["y"], "y[id] = x[id];", lambda x: x)
    with pytest.raises(ValueError):
        TorchMetalKernel("k_dup", ["x"], ["x"], "x[id] = x[id];", lambda x: x)
    with pytest.raises(ValueError):
        TorchMetalKernel("k_empty", ["x"], [], "", lambda x: x)
    with pytest.raises(ValueError):
        MetalParameter("gid", "uint", "")
    k = TorchMetalKernel("k_vec", ["x"], ["y"], "y[gid.x] = x[gid.x];", lambda x: x + 0,
                         [MetalParameter("gid", "uint2", "thread_position_in_grid")])
    with pytest.raises(ValueError, match="no C equivalent"):
        k.c_source({"x": torch.float32})


# ---------------------------------------------------------------------------
# dtypes model format v1 cannot carry exactly: refused, never silently widened
# ---------------------------------------------------------------------------


class _Uint8Wrap(nn.Module):
    def forward(self, x):
        return (x.to(torch.uint8) + 200).float()  # PyTorch wraps: [210, 44, 194]


def test_uint8_arithmetic_is_refused_naming_op_and_line():
    ep = export_decomposed(_Uint8Wrap(), (torch.tensor([10.0, 100.0, 250.0]),))
    with pytest.raises(UnsupportedOpError, match=r"test_torch_errors\.py:\d+: op 'aten::_to_copy.default' .* "
                                                 r"computes in torch\.uint8.*does not wrap around at 8 bits"):
        TorchConverter().add_exported_program(ep).to_coreai()


@pytest.mark.parametrize("dtype", [torch.float64, torch.int8, torch.int16, torch.uint8])
def test_inexact_input_dtypes_are_refused(dtype):
    class Id(nn.Module):
        def forward(self, x):
            return x + 1

    ep = export_decomposed(Id(), (torch.ones(3, dtype=dtype),))
    with pytest.raises(UnsupportedOpError, match=rf"input 'x' is {dtype}, which model format v1 cannot carry"):
        TorchConverter().add_exported_program(ep).to_coreai()


def test_unbounded_dynamic_dimension_is_refused_naming_input_and_dimension():
    class Double(nn.Module):
        def forward(self, x):
            return x * 2

    seq = torch.export.Dim("seq", min=2)
    ep = torch.export.export(Double(), (torch.randn(1, 4, 3),), dynamic_shapes={"x": {1: seq}})
    ep = ep.run_decompositions(get_decomp_table())
    with pytest.raises(UnsupportedOpError, match=r"input 'x' dimension 1 \(torch.export.Dim 'seq'\) has no upper "
                                                 r"bound: give it one with torch.export.Dim\(\.\.\., max=N\)"):
        TorchConverter().add_exported_program(ep).to_coreai()
