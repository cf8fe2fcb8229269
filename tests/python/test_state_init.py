"""States' initial values (model format 3): a registered buffer's contents
and a mutated input's sample are recorded in the model file, read back, and
written by the generated C (NAME_state_init / the descriptor's init_state)
that the Python runtime calls; the oracle is the PyTorch module itself."""

import copy

import numpy as np
import pytest
import torch
import torch.nn as nn

from coreai import AIAsset, load
from coreai_torch import TorchConverter, get_decomp_table


class Buffers(nn.Module):
    """Three buffers (small, large, constant-valued) and a mutated input."""

    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.tensor([[1.0, -2.5, 3.0], [0.25, 5.0, -6.0]]))
        self.register_buffer("table", torch.randn(4, 16))
        self.register_buffer("count", torch.full((2,), 7, dtype=torch.int64))

    def forward(self, x, mem):
        self.acc.add_(x)
        self.table.mul_(2)
        self.count.add_(1)
        mem.mul_(3)
        return self.acc * 2 + self.table.sum() + mem.sum() + self.count.sum()


@pytest.fixture(scope="module")
def converted():
    torch.manual_seed(3)
    model = Buffers().eval()
    sample = (torch.ones(2, 3), torch.arange(5, dtype=torch.float32) - 1.5)
    oracle = {"acc": model.acc.clone(), "table": model.table.clone(), "count": model.count.clone(),
              "mem": sample[1].clone()}
    ep = torch.export.export(model, sample).run_decompositions(get_decomp_table())
    p = TorchConverter().add_exported_program(ep, state_names=["acc", "table", "count", "mem"], input_names=["x"],
                                              output_names=["y"]).to_coreai()
    return model, oracle, p


def test_model_file_records_initial_values(tmp_path, converted):
    _, oracle, p = converted
    xml, _ = p.serialize()
    assert '<coreai-model format="3">' in xml
    assert '<state name="count"><init fill="7"/></state>' in xml
    assert '<state name="acc"><init>1.0 -2.5 3.0 0.25 5.0 -6.0</init></state>' in xml
    assert '<state name="table"><init offset="' in xml  # 64 floats: in the weights file
    back = load(p.save(tmp_path / "m")).module.entrypoints[0].initial_states
    assert sorted(back) == sorted(oracle)
    for k, v in oracle.items():
        np.testing.assert_array_equal(back[k], v.numpy())


@pytest.mark.parametrize("weights_format", ["c", "incbin"])
def test_generated_state_init_gives_the_runtime_its_states(tmp_path, converted, weights_format, run_async):
    pristine, oracle, p = converted
    model = copy.deepcopy(pristine)
    p.save(tmp_path / "m")
    # from disk, with nothing held in memory: the values come from the C code
    with AIAsset(tmp_path / "m.xml").executable(weights_format=weights_format) as ex:
        assert ex._desc.init_state
        f = ex.load_function("main")
        for k, v in oracle.items():
            np.testing.assert_array_equal(f.state[k].numpy(), v.numpy())
        x = torch.randn(2, 3)
        mem = oracle["mem"].clone()
        want = model(x, mem)  # eager, from the same initial buffers
        got = run_async(f({"x": x}))
        np.testing.assert_allclose(got["y"].numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(got["count"].numpy(), model.count.numpy())
        np.testing.assert_allclose(got["mem"].numpy(), mem.numpy())
        f.reset_state()
        np.testing.assert_array_equal(f.state["acc"].numpy(), oracle["acc"].numpy())
