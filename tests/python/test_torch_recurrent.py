"""nn.RNN / nn.GRU / nn.LSTM convert to rnn / gru / lstm composites
(python/coreai_torch/_recurrent.py, docs/composite-ops.md): results equal
PyTorch eager with and without the composite kernels, and the generated C
calls the recurrent kernel directly."""

import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

import coreai_torch
from coreai_torch import TorchConverter, get_decomp_table

KERNEL = {"rnn": "coreai_rnn_f32", "gru": "coreai_gru_f32", "lstm": "coreai_lstm_f32"}


class Wrap(nn.Module):
    def __init__(self, rnn, with_state):
        super().__init__()
        self.rnn = rnn
        self.with_state = with_state

    def forward(self, x, h0=None, c0=None):
        if isinstance(self.rnn, nn.LSTM):
            out, (h, c) = self.rnn(x, (h0, c0) if self.with_state else None)
            return out, h, c
        out, h = self.rnn(x, h0 if self.with_state else None)
        return out, h


CASES = {
    "rnn_tanh": (lambda: nn.RNN(5, 6), {}),
    "rnn_relu": (lambda: nn.RNN(5, 6, nonlinearity="relu"), {}),
    "rnn_tanh_state_bidir": (lambda: nn.RNN(5, 6, bidirectional=True), {"state": True}),
    "gru": (lambda: nn.GRU(5, 6), {}),
    "gru_state_batch_first": (lambda: nn.GRU(5, 6, batch_first=True), {"state": True}),
    "gru_bidir_2layer": (lambda: nn.GRU(5, 6, num_layers=2, bidirectional=True), {"state": True}),
    "lstm": (lambda: nn.LSTM(5, 6), {}),
    "lstm_state": (lambda: nn.LSTM(5, 6), {"state": True}),
    "lstm_batch_first_bidir": (lambda: nn.LSTM(5, 6, batch_first=True, bidirectional=True), {"state": True}),
    "lstm_2layer": (lambda: nn.LSTM(5, 6, num_layers=2), {"state": True}),
    "lstm_nobias": (lambda: nn.LSTM(5, 6, bias=False), {}),
    "rnn_relu_2layer_nostate": (lambda: nn.RNN(5, 6, num_layers=2, nonlinearity="relu", batch_first=True), {}),
}


def _op(rnn):
    return {"LSTM": "lstm", "GRU": "gru"}.get(rnn.mode, "rnn")


def _build(case):
    from coreai import _toolchain
    from coreai.runtime import AIExecutable, NDArray

    torch.manual_seed(0)
    make, opts = CASES[case]
    rnn = make().eval()
    with_state = opts.get("state", False)
    model = Wrap(rnn, with_state).eval()
    S, B = 4, 3
    D = 2 if rnn.bidirectional else 1
    x = torch.randn(B, S, 5) if rnn.batch_first else torch.randn(S, B, 5)
    feed = {"x": x}
    if with_state:
        feed["h0"] = torch.randn(rnn.num_layers * D, B, 6)
        if isinstance(rnn, nn.LSTM):
            feed["c0"] = torch.randn(rnn.num_layers * D, B, 6)
    with torch.no_grad():
        ref = model(**{k: v.clone() for k, v in feed.items()})
    program = TorchConverter().add_pytorch_module(
        model, export_fn=lambda m: torch.export.export(m, args=(), kwargs=feed).run_decompositions(
            get_decomp_table())).to_coreai()
    program.optimize()
    outs, src = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        asset = program.save_asset(Path(tmp) / "m.aimodel")
        prefix = _toolchain.c_prefix(asset.model_path)
        for kernels in (True, False):
            lib = _toolchain.build_library(asset.model_path, prefix, kernels)
            src[kernels] = (lib.parent / f"{prefix}.c").read_text()
            exe = AIExecutable(lib, prefix, asset.initial_states.get("main", {}))
            fn = exe.load_function("main")
            names = [f.name if hasattr(f, "name") else f for f in fn.output_names] \
                if hasattr(fn, "output_names") else None
            res = fn.call({k: NDArray(v.contiguous()) for k, v in feed.items()})
            outs[kernels] = [np.asarray(v.numpy()) for v in res.values()]
            exe.close()
    return rnn, program, ref, outs, src


_RUNS = {}


def _run(case):
    if case not in _RUNS:
        _RUNS[case] = _build(case)
    return _RUNS[case]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("kernels", [True, False], ids=["kernels", "no_kernels"])
def test_matches_eager(case, kernels):
    _, _, ref, outs, _ = _run(case)
    got = outs[kernels]
    assert len(got) == len(ref)
    for r, g in zip(ref, got):
        assert tuple(r.shape) == g.shape
        assert np.max(np.abs(r.numpy().astype(np.float64) - g)) <= 1e-5


@pytest.mark.parametrize("case", sorted(CASES))
def test_composite_graphs_and_kernel_calls(case):
    rnn, program, _, _, src = _run(case)
    op = _op(rnn)
    graphs = [g for g in program.module.graphs if g.composite is not None]
    assert graphs and all(g.composite.op_name == op for g in graphs), [g.name for g in graphs]
    # one composite per layer (identical layers may share a graph)
    invokes = [o for g in program.module.graphs if g.name == "main" for o in g.operations
               if o.kind == "coreai.invoke"]
    assert len(invokes) == rnn.num_layers
    D = "_back" if rnn.bidirectional else None
    for g in graphs:
        decl = g.composite
        names = list(decl.input_names)
        base = {"rnn": ["x", "initial_h", "weight_ih", "weight_hh", "bias"],
                "gru": ["x", "initial_h", "weight_ih", "weight_hh", "bias_ih", "bias_hh"],
                "lstm": ["x", "initial_h", "initial_c", "weight_ih", "weight_hh", "bias"]}[op]
        if not rnn.bias:
            base = [n for n in base if not n.startswith("bias")]
        if D:
            base += [n + "_back" for n in base if n.startswith(("weight", "bias"))]
        assert names == base
        assert list(decl.output_names) == (["output", "h_n", "c_n"] if op == "lstm" else ["output", "h_n"])
        attrs = dict(decl.attrs)
        assert attrs["direction"].value == ("bidirectional" if rnn.bidirectional else "forward")
        assert attrs["output_sequence"].value is True
        if op == "rnn":
            assert attrs["activation"].value == ("tanh" if rnn.mode == "RNN_TANH" else "relu")
        assert g.private and g.noinline
    kernel = KERNEL[op]
    fns = {m.group(1): m.group(2) for m in re.finditer(
        r"^/\* @(\S+?)(?:: composite \"[^\"]+\"[^\n]*)?\n(.*?)^}\n", src[True], re.M | re.S)}
    for g in graphs:
        assert f"return {kernel}(&" in fns[g.name], fns[g.name]
    assert f"{kernel}(" not in src[False]


def test_module_restored_after_conversion():
    rnn = nn.LSTM(3, 4)
    x = torch.randn(2, 1, 3)
    TorchConverter().add_pytorch_module(
        rnn, export_fn=lambda m: torch.export.export(m, args=(x,)).run_decompositions(get_decomp_table()))
    assert "forward" not in rnn.__dict__
    assert [n for n, _ in rnn.named_modules()] == [""]


def test_unbatched_and_nested_in_externalized_module():
    from coreai_torch.testing import max_abs_diff, run_program

    torch.manual_seed(1)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.LSTM(3, 4)
            self.g = nn.GRU(4, 5, batch_first=True)
            self.r = nn.RNN(5, 2, num_layers=2)

        def forward(self, x):
            y, (h, c) = self.l(x)
            z, hg = self.g(y.transpose(0, 1))
            u, hr = self.r(z[0])  # unbatched [S, I]
            return z, h, c, hg, u, hr

    m = M().eval()
    x = torch.randn(5, 2, 3)
    with torch.no_grad():
        ref = m(x)
    for ext in (None, [nn.LSTM]):
        program = TorchConverter().add_pytorch_module(
            m, export_fn=lambda mm: torch.export.export(mm, args=(x,)).run_decompositions(get_decomp_table()),
            externalize_modules=ext).to_coreai()
        program.optimize()
        ops = sorted(g.composite.op_name for g in program.module.graphs if g.composite is not None)
        assert ops == ["gru", "lstm", "rnn", "rnn"]
        for kernels in (True, False):
            out = run_program(program, [{"x": x}], composite_kernels=kernels)[0]
            for r, o in zip(ref, out.values(), strict=True):
                assert max_abs_diff(r, o) <= 1e-5
    assert not any("forward" in mod.__dict__ for mod in m.modules())
