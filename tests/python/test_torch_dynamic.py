"""Symbolic dimensions (model format 2): torch.export programs with
dynamic_shapes converted, saved, read back by coreai-gen and run by the
reference interpreter at several sizes, against eager PyTorch."""

import subprocess

import numpy as np
import pytest
import torch
import torch.nn as nn

from coreai import load
from coreai._compiler import ir
from coreai_torch import TorchConverter, UnsupportedOpError, get_decomp_table


def convert(model, sample, dynamic_shapes, **names):
    ep = torch.export.export(model, sample, dynamic_shapes=dynamic_shapes).run_decompositions(get_decomp_table())
    return TorchConverter().add_exported_program(ep, **names).to_coreai()


class CatReshape(nn.Module):
    """A size shared by two inputs, a derived size (seq + 2) and a reshape
    of the symbolic axis."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, y):
        z = torch.cat([x, x[:, :2]], dim=1)
        b, s, h = x.shape
        w = self.fc(x).reshape(b, s, 2, h // 2)
        return torch.softmax(z * 2, -1), w, y + x.sum()


@pytest.fixture(scope="module")
def cat_reshape():
    """(model, program): one export serves the tests below (exports take seconds)."""
    torch.manual_seed(0)
    model = CatReshape().eval()
    seq = torch.export.Dim("seq", min=2, max=16)
    return model, convert(model, (torch.randn(1, 5, 8), torch.randn(3, 5)), {"x": {1: seq}, "y": {1: seq}})


def test_symbols_shared_and_derived(tmp_path, coreai_gen, cat_reshape):
    _, p = cat_reshape
    g = p.module.graphs[0]
    s = ir.Symbol("seq", 2, 16)
    assert [a.type.shape for a in g.arguments] == [(1, s.dim(), 8), (3, s.dim())]
    assert [o.type.shape for o in g.outputs] == [(1, s + 2, 8), (1, s.dim(), 2, 4), (3, s.dim())]
    xml, _ = p.serialize()
    assert '<coreai-model format="2">' in xml
    assert '<symbol name="seq" min="2" max="16"/>' in xml
    assert 'shape="1 seq+2 8"' in xml
    path = p.save(tmp_path / "m")
    # coreai-gen reads it, and prints exactly what the package prints
    printed = subprocess.run([coreai_gen, "print", str(path)], capture_output=True, text=True, check=True).stdout
    assert printed == str(load(path))


@pytest.mark.parametrize("n", [2, 7, 16])  # smallest, odd, largest
def test_interpreter_at_several_sizes(n, cat_reshape):
    model, p = cat_reshape
    x, y = torch.randn(1, n, 8), torch.randn(3, n)
    with torch.no_grad():
        want = model(x, y)
    e = p.module.entrypoints[0]
    got = p.interpret("main", {"x": x.numpy(), "y": y.numpy()})
    for name, w in zip(e.outputs, want):
        np.testing.assert_allclose(got[name], w.numpy(), rtol=1e-5, atol=1e-5)


def test_interpreter_refuses_sizes_outside_the_range(cat_reshape):
    _, p = cat_reshape
    with pytest.raises(ValueError, match=r"symbol 'seq' = 17 is outside its range \[2, 16\]"):
        p.interpret("main", {"x": np.zeros((1, 17, 8), np.float32), "y": np.zeros((3, 17), np.float32)})
    with pytest.raises(ValueError, match=r"has shape \(3, 6\), not \(3, 5\)"):
        p.interpret("main", {"x": np.zeros((1, 5, 8), np.float32), "y": np.zeros((3, 6), np.float32)})


class Window(nn.Module):
    """The last `seq` positions of a longer input: a slice whose start is
    the difference of two sizes."""

    def forward(self, ids, pos):
        q, n = ids.shape[-1], pos.shape[-1]
        torch._check(n - q >= 0)
        return pos.narrow(-1, n - q, q) * 2 + ids


def test_two_symbols_and_their_difference():
    dyn = {"ids": {1: torch.export.Dim("seq", min=1, max=30)}, "pos": {1: torch.export.Dim("ctx", min=4, max=32)}}
    p = convert(Window(), (torch.zeros(1, 3, dtype=torch.int64), torch.arange(6).unsqueeze(0)), dyn)
    text = str(p)
    assert "coreai.symbol ctx : [4, 32]" in text and "coreai.symbol seq : [1, 30]" in text
    assert "begins = [0, ctx-seq] : dim, ends = [1, ctx] : dim" in text
    for q, n in [(1, 4), (3, 9), (30, 32)]:
        ids, pos = torch.randint(0, 9, (1, q)), torch.arange(n).unsqueeze(0)
        got = p.interpret("main", {"ids": ids.numpy(), "pos": pos.numpy()})
        np.testing.assert_array_equal(list(got.values())[0], Window()(ids, pos).numpy())


class Flatten2(nn.Module):
    def forward(self, x):
        return x.reshape(-1) * 2


def test_product_of_two_sizes_is_refused():
    dyn = {"x": {0: torch.export.Dim("a", max=8), 1: torch.export.Dim("b", max=8)}}
    with pytest.raises(UnsupportedOpError, match=r"is a\*b, which is not an integer affine combination"):
        convert(Flatten2(), (torch.randn(3, 4),), dyn)


def test_static_models_stay_format_1():
    p = convert(nn.Linear(4, 2), (torch.randn(3, 4),), None)
    assert '<coreai-model format="1">' in p.serialize()[0]


@torch.library.custom_op("w13_test::twice", mutates_args=())
def _twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@_twice.register_fake
def _(x):
    return torch.empty_like(x)


class Twice(nn.Module):
    def forward(self, x):
        return _twice(x)


def test_lowering_needing_a_fixed_size_names_the_node():
    conv = TorchConverter()

    @conv.register_torch_lowering("w13_test::twice.default")
    def lower(vm, node, loc):
        x = vm[node.args[0].name]
        n = int(x.type.shape[1])  # a fixed number is needed here: the extent is symbolic
        return x if n else x

    ep = torch.export.export(Twice(), (torch.randn(2, 5),), dynamic_shapes={"x": {1: torch.export.Dim("n", max=9)}})
    with pytest.raises(UnsupportedOpError, match=r"op 'w13_test::twice.default' \(node '\w+'\).*symbolic extent n "
                                                 r"has no fixed value \(int\(\)\)"):
        conv.add_exported_program(ep.run_decompositions(get_decomp_table())).to_coreai()


class Accumulate(nn.Module):
    """forward returns nothing: the entrypoint only updates its state
    (format 2; an LLM's prefill has this form)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.tensor([1.0, 2.0, 3.0, 4.0]))

    def forward(self, x):
        self.acc.add_(2 * x)
        return ()


def test_entrypoint_without_outputs_runs_in_c(tmp_path, coreai_gen, c_compiler):
    import asyncio

    from coreai.runtime import NDArray

    ep = torch.export.export(Accumulate(), (torch.ones(4),)).run_decompositions(get_decomp_table())
    p = TorchConverter().add_exported_program(ep, state_names=["acc"]).to_coreai()
    assert p.module.entrypoints[0].outputs == []
    # format 3: the buffer's initial value is recorded too
    assert '<coreai-model format="3">' in p.serialize()[0]
    asset = p.save_asset(tmp_path / "acc")

    async def run():
        async with asset.executable() as m:
            f = m.load_function("main")
            for _ in range(2):
                out = await f({"x": NDArray(torch.tensor([10.0, 20.0, 30.0, 40.0]))})
            return out

    out = asyncio.run(run())
    # [1, 2, 3, 4] + 2 * 2 * [10, 20, 30, 40], worked out by hand
    np.testing.assert_array_equal(out["acc"].numpy(), [41.0, 82.0, 123.0, 164.0])
