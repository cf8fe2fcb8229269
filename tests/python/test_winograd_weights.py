"""A 3x3 stride-1 convolution that runs as Winograd (16 to 256 channels:
coreai_conv2d_winograd in runtime-stubs/include/coreai/kernels/conv.h)
reads its weight transformed at generation time: coreai-gen writes
U = G g G^T for each of the (m + 2)^2 patch positions into the weights and
the layer calls coreai_conv2d_winograd_f32; `--no-winograd-weights` keeps
the weight as stored and coreai_conv2d_ws_f32 transforms it on every call.

Checked here: both ways against eager PyTorch; U's bytes in every weights
form against U computed here in float64 from Lavin and Gray's G (the points
0, 1, -1 for F(2x2, 3x3); 0, 1, -1, 2, -2 for F(4x4, 3x3)), rounded to f32;
which layers take which call; and --stats' weight and workspace bytes.
"""
import re

import numpy as np
import pytest
import torch
from torch import nn
from weights_dump import external_bytes, generate, linked_arrays, linked_bytes

from coreai_torch import TorchConverter, get_decomp_table
from coreai_torch.testing import run_program

G = {2: np.array([[1, 0, 0], [1 / 2, 1 / 2, 1 / 2], [1 / 2, -1 / 2, 1 / 2], [0, 0, 1]]),
     4: np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                  [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]])}


class Net(nn.Module):
    """a: 16 -> 24 on 28 x 28 (F(4x4)); b: stride 2 (never Winograd);
    c: 16 -> 32 on 14 x 14 (F(2x2)); d: 32 -> 8 (too few outputs)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(16, 24, 3, padding=1)
        self.b = nn.Conv2d(24, 16, 3, stride=2, padding=1)
        self.c = nn.Conv2d(16, 32, 3, padding=1, bias=False)
        self.d = nn.Conv2d(32, 8, 3, padding=1)

    def forward(self, x):
        return self.d(torch.relu(self.c(self.b(torch.relu(self.a(x))))))


def oracle_u(w, m):
    """U as conv.h's coreai_conv2d_winograd_u_pos lays it out: patch
    position xi's out x in block, then 16 floats of zeros, xi after xi; and
    beside it each value's sum of |terms| (0 in the padding)."""
    g = G[m]
    o, c = w.shape[:2]

    def lay(u, dtype):
        blocks = u.reshape((m + 2) ** 2, o * c).astype(dtype)
        return np.concatenate([blocks, np.zeros(((m + 2) ** 2, 16), dtype)], axis=1).reshape(-1)

    w = w.astype(np.float64)
    return (lay(np.einsum("rk,ockl,sl->rsoc", g, w, g), np.float32),
            lay(np.einsum("rk,ockl,sl->rsoc", np.abs(g), np.abs(w), np.abs(g)), np.float64))


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(7)
    model = Net().eval()
    x = torch.randn(1, 16, 28, 28)
    ep = torch.export.export(model, (x,)).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    program.optimize()
    return model, x, program


@pytest.mark.parametrize("winograd_weights", [True, False])
def test_against_eager(net, winograd_weights, tmp_path):
    model, x, program = net
    with torch.no_grad():
        want = model(x).numpy()
    got = next(iter(run_program(program, [{"x": x}], workdir=str(tmp_path),
                                winograd_weights=winograd_weights)[0].values()))
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err < 2e-5, err


def test_calls_and_sizes(net, coreai_gen, tmp_path):
    _, _, program = net
    src, stats = generate(coreai_gen, program, tmp_path / "on", "c")
    calls = re.findall(r"(coreai_conv2d_\w+_f32)\(&\w+, [^,]+, (\w+),", src)
    assert [c for c, _ in calls] == ["coreai_conv2d_winograd_f32", "coreai_conv2d_ws_f32",
                                     "coreai_conv2d_winograd_f32", "coreai_conv2d_ws_f32"], calls
    assert calls[0][1].endswith("_wino4") and calls[2][1].endswith("_wino2"), calls
    src_off, stats_off = generate(coreai_gen, program, tmp_path / "off", "c", "--no-winograd-weights")
    assert "coreai_conv2d_winograd_f32" not in src_off and "_wino" not in src_off
    assert src_off.count("coreai_conv2d_ws_f32(") == 4
    # the image: a's and c's weights as U ((m + 2)^2 (out in + 16) floats)
    # instead of as stored (9 out in), with 64-byte alignment between arrays
    u_floats = 36 * (24 * 16 + 16) + 16 * (32 * 16 + 16)
    grown = 4 * (u_floats - 9 * (24 * 16 + 32 * 16))
    assert abs(stats["weight_bytes"] - stats_off["weight_bytes"] - grown) < 64 * 4, (stats, stats_off)
    # the workspace: U is no longer in the largest layer's scratch
    assert stats["workspace_bytes"] < stats_off["workspace_bytes"], (stats, stats_off)


@pytest.mark.parametrize("fmt", ["c", "incbin", "external"])
def test_u_bytes(net, fmt, coreai_gen, c_compiler, tmp_path):
    model, _, program = net
    out = tmp_path / fmt
    src, _ = generate(coreai_gen, program, out, fmt)
    syms = dict((s[-1], s) for s in re.findall(r"\b(m_g\d+_c\d+_wino([24]))\b", src))
    assert set(syms) == {"2", "4"}, syms
    if fmt == "external":
        got = external_bytes(out, src)
    else:
        got = linked_bytes(c_compiler, out, linked_arrays(src), fmt)
    for m, conv in ((4, model.a), (2, model.c)):
        want, mag = oracle_u(conv.weight.detach().numpy(), m)
        have = np.frombuffer(got[syms[str(m)][0]][:4 * want.size], "<f4")
        assert have.size == want.size
        pad = np.ones(want.size, bool).reshape((m + 2) ** 2, -1)
        pad[:, :-16] = False
        pad = pad.reshape(-1)
        assert np.all(have[pad] == 0)
        # G g G^T summed in float64 and rounded once: numpy's sum and
        # coreai-gen's differ in order, by float64 rounding of the sum of
        # |terms| (which shows where terms cancel), so the two f32 values
        # are at most an ulp apart beyond that, and mostly equal
        bound = np.spacing(np.abs(want[~pad])) + 1e-15 * mag[~pad]
        assert np.all(np.abs(have[~pad] - want[~pad]) <= bound)
        assert np.mean(have[~pad] == want[~pad]) > 0.99


class Shared(nn.Module):
    """One weight read by an F(4x4) layer (28 x 28), an F(2x2) one (6 x 6)
    and, as stored, by an elementwise op."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(16, 16, 3, 3) * 0.2)

    def forward(self, x1, x2, x3):
        y1 = torch.nn.functional.conv2d(x1, self.w, padding=1)
        y2 = torch.nn.functional.conv2d(x2, self.w, padding=1)
        return y1, y2, self.w * x3


def test_shared_weight(coreai_gen, tmp_path):
    """A constant read in several forms is emitted in each: U for each tile,
    and as stored for the other use; every output against eager."""
    torch.manual_seed(3)
    model = Shared().eval()
    x1, x2, x3 = torch.randn(1, 16, 28, 28), torch.randn(1, 16, 6, 6), torch.randn(16, 16, 3, 3)
    ep = torch.export.export(model, (x1, x2, x3)).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    program.optimize()
    with torch.no_grad():
        want = [t.numpy() for t in model(x1, x2, x3)]
    got = list(run_program(program, [{"x1": x1, "x2": x2, "x3": x3}], workdir=str(tmp_path))[0].values())
    assert len(got) == 3
    for g, w in zip(got, want):
        assert np.abs(g - w).max() <= 2e-5 * np.abs(w).max()
    src, _ = generate(coreai_gen, program, tmp_path / "c", "c")
    calls = re.findall(r"coreai_conv2d_winograd_f32\(&\w+, [^,]+, (\w+),", src)
    assert sorted(c[-1] for c in calls) == ["2", "4"], calls
    assert calls[0][:-len("_wino4")] == calls[1][:-len("_wino2")], calls  # one constant
    plain = calls[0][:-len("_wino4")]
    assert re.search(rf"\b{plain}\b(?!_wino)", src), "the weight as stored, for the multiply"
