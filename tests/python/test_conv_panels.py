"""A convolution on a small output map with many channels
(coreai_conv2d_panels in runtime-stubs/include/coreai/kernels/conv.h: one
group, not Winograd's, not 1 x 1, at least 64 output channels, at most 256
output pixels) reads its weight packed at generation time as a linear
layer's, [out][in * kh * kw] in 16-channel panels, and calls
coreai_conv2d_panels_f32, which runs the pixels as the GEMM's rows;
`--no-conv-panels` keeps the weight as stored and coreai_conv2d_ws_f32.

Checked here: the model against eager PyTorch; which layers take which
call, with and without the option; the packed bytes in every weights form
against the panel layout built here from the PyTorch weight (a copy, so
bit for bit); and --stats' weight bytes (the padding to 16 channels).
"""
import re

import numpy as np
import pytest
import torch
from torch import nn
from weights_dump import external_bytes, generate, linked_arrays, linked_bytes

from coreai_torch import TorchConverter, get_decomp_table
from coreai_torch.testing import run_program


class Net(nn.Module):
    """a: 8 -> 64, stride 2 from 14 x 14 to 7 x 7 (panels); b: 64 -> 264 on
    7 x 7 (past Winograd's 256 channels: panels, 264 padded to 272); c: 1 x 1
    (never); d: 264 -> 32 (too few outputs)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(8, 64, 3, stride=2, padding=1)
        self.b = nn.Conv2d(64, 264, 3, padding=1, bias=False)
        self.c = nn.Conv2d(264, 64, 1)
        self.d = nn.Conv2d(264, 32, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.b(torch.relu(self.a(x))))
        return self.c(y) + self.d(y).sum(dim=1, keepdim=True)


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(11)
    model = Net().eval()
    x = torch.randn(1, 8, 14, 14)
    ep = torch.export.export(model, (x,)).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    program.optimize()
    return model, x, program


def oracle_panels(w):
    """[out][in][kh][kw] as matmul.h's packed B of W^T: panel o // 16, row
    p = (c, kh, kw), lane o % 16; the lanes past the last channel 0."""
    o = w.shape[0]
    k = w.size // o
    wf = np.zeros(((o + 15) // 16 * 16, k), np.float32)
    wf[:o] = w.reshape(o, k)
    return wf.reshape(-1, 16, k).transpose(0, 2, 1).reshape(-1)


@pytest.mark.parametrize("conv_panels", [True, False])
def test_against_eager(net, conv_panels, tmp_path):
    model, x, program = net
    with torch.no_grad():
        want = model(x).numpy()
    got = next(iter(run_program(program, [{"x": x}], workdir=str(tmp_path), conv_panels=conv_panels)[0].values()))
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err < 2e-5, err


def test_calls_and_sizes(net, coreai_gen, tmp_path):
    _, _, program = net
    src, stats = generate(coreai_gen, program, tmp_path / "on", "c")
    calls = re.findall(r"(coreai_conv2d_\w+_f32)\(&\w+, [^,]+, (\w+),", src)
    assert sorted(c for c, _ in calls) == sorted(["coreai_conv2d_panels_f32"] * 2 + ["coreai_conv2d_ws_f32"] * 2), calls
    assert all(s.endswith("_packed_conv") == (c == "coreai_conv2d_panels_f32") for c, s in calls), calls
    src_off, stats_off = generate(coreai_gen, program, tmp_path / "off", "c", "--no-conv-panels")
    assert "coreai_conv2d_panels_f32" not in src_off and "_packed_conv" not in src_off
    assert src_off.count("coreai_conv2d_ws_f32(") == 4
    # the same floats but b's 8 padding channels (8 x 64 x 9 floats), with
    # 64-byte alignment between arrays
    grown = 4 * 8 * 64 * 9
    assert abs(stats["weight_bytes"] - stats_off["weight_bytes"] - grown) < 64 * 4, (stats, stats_off)


@pytest.mark.parametrize("fmt", ["c", "incbin", "external"])
def test_packed_bytes(net, fmt, coreai_gen, c_compiler, tmp_path):
    model, _, program = net
    out = tmp_path / fmt
    src, _ = generate(coreai_gen, program, out, fmt)
    syms = re.findall(r"coreai_conv2d_panels_f32\(&\w+, [^,]+, (\w+),", src)
    assert len(syms) == 2, syms
    got = external_bytes(out, src) if fmt == "external" else linked_bytes(c_compiler, out, linked_arrays(src), fmt)
    by_size = {}
    for s in syms:
        by_size[s] = np.frombuffer(got[s], "<f4")
    for conv in (model.a, model.b):
        want = oracle_panels(conv.weight.detach().numpy())
        match = [s for s, v in by_size.items() if v.size >= want.size and np.array_equal(v[:want.size], want)]
        assert len(match) == 1, (conv, [v.size for v in by_size.values()], want.size)
        assert np.all(by_size[match[0]][want.size:] == 0)  # alignment padding, if any
