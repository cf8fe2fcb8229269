"""Compressing a model's weights (coreai_torch.compression.quantize_weights,
palettize_weights): the compressed tensors against properties checked with
NumPy (every element within half a step of its block's grid; every element
the nearest value of its group's table, each table value the mean of its
elements), and the compressed model converted and run as generated C
against the compressed model in eager PyTorch."""
import numpy as np
import pytest
import torch
from torch import nn

import compression_oracle as oracle
import coreai_torch  # noqa: F401
from coreai_torch import TorchConverter, get_decomp_table
from coreai_torch.compression import (CompressedConv2d, CompressedLinear, PalettizeModule, WeightDequantizeModule,
                                      kmeans_palettize_tensor, palettize_weights, quantize_tensor, quantize_weights)
from coreai_torch.testing import run_program


def _weights():
    g = torch.Generator().manual_seed(9)
    return {"linear": torch.randn(24, 64, generator=g) * 0.3,
            "conv": torch.randn(16, 8, 3, 3, generator=g) * 0.1,
            "outlier": torch.cat([torch.randn(8, 31, generator=g), torch.full((8, 1), 40.0)], dim=1)}


@pytest.mark.parametrize("nbits", [4, 8])
@pytest.mark.parametrize("block_size", [None, 8, 32])
@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("scale_dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("which", ["linear", "conv", "outlier"])
def test_quantize_tensor_is_within_half_a_step(nbits, block_size, symmetric, scale_dtype, which):
    w = _weights()[which]
    if block_size and w.shape[1] % block_size:
        block_size = w.shape[1]
    mod = quantize_tensor(w, nbits, block_size, symmetric, scale_dtype)
    q, s = mod.quantized_data.numpy().astype(np.int64), mod.scale.to(torch.float64).numpy()
    lo, hi = oracle.int_range(nbits, symmetric)
    assert q.min() >= lo and q.max() <= hi
    assert mod.input_dtype == {(4, True): torch.int4, (4, False): torch.uint4, (8, True): torch.int8,
                               (8, False): torch.uint8}[(nbits, symmetric)]
    bs = block_size or w.shape[1]
    assert list(mod.scale.shape) == [w.shape[0], w.shape[1] // bs] + [1] * (w.dim() - 2)
    zp = None if symmetric else mod.zero_point.numpy().astype(np.int64)
    assert (zp is None) == (mod.zero_point is None)
    deq = oracle.blockwise(q, s, {torch.float32: "f32", torch.float16: "f16"}[scale_dtype], zp)
    step = np.abs(np.repeat(np.repeat(s, w.shape[0] // s.shape[0], 0), bs, 1))
    step = step.reshape(step.shape[:2] + (1,) * (w.dim() - 2))
    err = np.abs(w.double().numpy() - deq)
    # half a step, plus the rounding of the product to the scale's dtype
    slack = np.abs(deq) * (2.0 ** -11 if scale_dtype == torch.float16 else 2.0 ** -24)
    assert np.all(err <= step / 2 * (1 + 1e-6) + slack), (err / step).max()
    # the module computes exactly the documented dequantization
    np.testing.assert_array_equal(mod().double().numpy(), deq)


@pytest.mark.parametrize("nbits", [1, 2, 4, 6, 8])
@pytest.mark.parametrize("group_size", [None, 4])
@pytest.mark.parametrize("which", ["linear", "conv"])
def test_kmeans_palettize_tensor(nbits, group_size, which):
    w = _weights()[which]
    mod = kmeans_palettize_tensor(w, nbits, group_size)
    idx, lut = mod.indices.numpy().astype(np.int64), mod.lut.double().numpy()
    o = w.shape[0]
    gs = group_size or o
    assert list(lut.shape) == [o // gs] + [1] * (w.dim() - 1) + [1 << nbits, 1]
    assert idx.min() >= 0 and idx.max() < (1 << nbits)
    dense = oracle.lut_to_dense(idx, lut, 0)
    np.testing.assert_array_equal(mod().double().numpy(), dense)
    wg = w.double().numpy().reshape(o // gs, -1)
    for g in range(o // gs):
        table = lut[g].reshape(-1)
        member = idx.reshape(o // gs, -1)[g]
        # every element takes its table's nearest value
        dist = np.abs(wg[g][:, None] - table[None, :])
        assert np.all(dist[np.arange(wg.shape[1]), member] <= dist.min(axis=1) + 1e-12)
        # Lloyd's fixed point: each used value is the mean of its elements
        for k in np.unique(member):
            np.testing.assert_allclose(table[k], wg[g][member == k].mean(), rtol=1e-6, atol=1e-9)


def test_palettization_error_shrinks_with_more_bits():
    w = _weights()["linear"]
    errs = [float((kmeans_palettize_tensor(w, n)() - w).pow(2).mean()) for n in (1, 2, 4, 6)]
    assert errs == sorted(errs, reverse=True) and errs[-1] < errs[0] / 100, errs


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.conv = nn.Conv2d(8, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 1, bias=False)
        self.fc1 = nn.Linear(16 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10, bias=False)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = torch.relu(self.conv2(x))
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


def test_quantize_weights_replaces_layers():
    net = Net()
    q = quantize_weights(net, nbits=4, block_size=8, include=lambda name, m: name != "fc2")
    assert isinstance(q.conv, CompressedConv2d) and isinstance(q.conv.weight, WeightDequantizeModule)
    assert isinstance(q.fc1, CompressedLinear) and isinstance(q.fc2, nn.Linear)
    assert isinstance(net.conv, nn.Conv2d)  # the original is untouched
    p = palettize_weights(net, nbits=2)
    assert isinstance(p.fc2.weight, PalettizeModule)
    x = torch.randn(2, 8, 4, 4, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ref = net(x)
        err4 = float((q(x) - ref).abs().max())
        err8 = float((quantize_weights(net, nbits=8, block_size=8)(x) - ref).abs().max())
    assert err8 < 0.02 * float(ref.abs().max()) and err8 < err4 / 4, (err8, err4)
    with pytest.raises(ValueError, match=r"block_size 5 does not divide the 8 input channels"):
        quantize_weights(net, nbits=4, block_size=5)
    with pytest.raises(ValueError, match="nbits must be 4 or 8"):
        quantize_weights(net, nbits=3)
    with pytest.raises(ValueError, match="nbits must be 1, 2, 4, 6 or 8"):
        palettize_weights(net, nbits=3)


@pytest.mark.parametrize("how", ["int8-block16", "int4-block8", "uint4-zp-channel", "int4-f16-scale", "pal2",
                                 "pal4-group4", "pal6", "pal4-f16-lut"])
def test_compressed_model_converted_matches_eager(how, coreai_gen, c_compiler, tmp_path):
    net = Net()
    if how == "int8-block16":
        m = quantize_weights(net, nbits=8, block_size=16, include=lambda n, _: n != "conv")
    elif how == "int4-block8":
        m = quantize_weights(net, nbits=4, block_size=8)
    elif how == "uint4-zp-channel":
        m = quantize_weights(net, nbits=4, block_size=None, symmetric=False)
    elif how == "int4-f16-scale":
        m = quantize_weights(net, nbits=4, block_size=8, scale_dtype=torch.float16)
    elif how == "pal2":
        m = palettize_weights(net, nbits=2)
    elif how == "pal4-group4":
        m = palettize_weights(net, nbits=4, group_size=2)
    elif how == "pal4-f16-lut":
        m = palettize_weights(net, nbits=4, group_size=2, lut_dtype=torch.float16)
    else:
        m = palettize_weights(net, nbits=6)
    x = torch.randn(2, 8, 4, 4, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        want = m(x)
    ep = torch.export.export(m, (x,)).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    program.optimize()
    text = str(program)
    op = "coreai.lut_to_dense" if how.startswith("pal") else "coreai.blockwise_shift_scale"
    assert text.count(op) == sum(isinstance(mm, (CompressedLinear, CompressedConv2d)) for mm in m.modules())
    got = run_program(program, [{"x": x}], workdir=str(tmp_path))[0]
    out = next(iter(got.values()))
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-5, atol=1e-5 * float(want.abs().max()))
    # generate --stats lists every compressed layer, its packed bytes and the path it takes
    import subprocess
    path = program.save(tmp_path / "m")
    r = subprocess.run([coreai_gen, "generate", str(path), "-o", str(tmp_path / "out"), "--stats"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("compressed_weight ")]
    layers = [mm for mm in m.modules() if isinstance(mm, (CompressedLinear, CompressedConv2d))]
    assert len(lines) == len(layers)
    bits = {"i8": 8, "u8": 8, "i4": 4, "u4": 4, "u1": 1, "u2": 2, "u6": 6}
    for ln in lines:
        numel = int(np.prod([int(d) for d in ln[4][len("tensor<"):].split("x")[:-1]]))
        dtype = ln[4].split("x")[-1].rstrip(">")
        # the scale's dtype is the dense weight's; an f16 table is widened
        # to f32 at generation time, and its lookup with it (lut_widen.h)
        dense = 2 if how == "int4-f16-scale" else 4
        assert int(ln[6]) == (numel * bits[dtype] + 7) // 8 and int(ln[8]) == dense * numel
        # an f16 weight is cast to the f32 the layer computes in
        consumers = ("coreai.cast",) if how == "int4-f16-scale" else ("coreai.linear", "coreai.conv2d")
        assert ln[10] in consumers, ln
        # every layer runs on its compressed weight: blockwise
        # (coreai_linear_q_f32, coreai_conv2d_q_f32; an f16 one through its
        # cast) and on a palette (coreai_linear_lut_f32,
        # coreai_conv2d_lut_f32)
        assert ln[3] in ("blockwise_shift_scale", "lut_to_dense")
        assert ln[-2:] == ["path", "fused"], ln
    if how in ("int8-block16", "int4-block8", "uint4-zp-channel", "int4-f16-scale"):
        src = (tmp_path / "out" / "m.c").read_text()
        convs = 1 if how == "int8-block16" else 2
        assert sum(ln[-1] == "fused" for ln in lines) == 2 + convs  # fc1, fc2 and the compressed convolutions
        # fc1's u4 data in one block of 256 inputs reads the generation-time
        # panels; blocks of 8 or 16, f16 scales and fc2's 10 outputs (6 of
        # padding in a panel of 16) keep the stored form
        panels = 1 if how == "uint4-zp-channel" else 0
        assert src.count("coreai_linear_qp_f32(") == panels
        assert src.count("coreai_linear_q_f32(") == 2 - panels and src.count("coreai_conv2d_q_f32(") == convs
        assert "coreai_shift_scale(" not in src
    if how.startswith("pal"):
        src = (tmp_path / "out" / "m.c").read_text()
        assert sum(ln[-1] == "fused" for ln in lines) == 4
        assert src.count("coreai_linear_lut_f32(") == 2 and src.count("coreai_conv2d_lut_f32(") == 2
        assert "coreai_lut_to_dense(" not in src


@pytest.mark.parametrize("nbits,symmetric,rows", [(4, True, 1), (4, False, 8), (8, True, 8), (8, False, 1)])
def test_fused_linear_matches_eager(nbits, symmetric, rows, coreai_gen, c_compiler, tmp_path):
    """Linears on weights kept compressed: i8 / i4 / u4 data in the
    generation-time panels (coreai_linear_qp_f32), u8 data as stored
    (coreai_linear_q_f32); 1 and 8 rows against the compressed model in eager
    PyTorch, with a relu fused into the first layer's epilogue."""
    torch.manual_seed(12)
    net = nn.Sequential(nn.Linear(64, 96), nn.ReLU(), nn.Linear(96, 32, bias=False)).eval()
    m = quantize_weights(net, nbits=nbits, block_size=32, symmetric=symmetric)
    x = torch.randn(rows, 64, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        want = m(x)
    ep = torch.export.export(m, (x,)).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    program.optimize()
    got = next(iter(run_program(program, [{"input": x}], workdir=str(tmp_path))[0].values()))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5 * float(want.abs().max()))
    import subprocess
    path = program.save(tmp_path / "m")
    r = subprocess.run([coreai_gen, "generate", str(path), "-o", str(tmp_path / "out"), "--stats"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    paths = [ln.split()[-1] for ln in r.stdout.splitlines() if ln.startswith("compressed_weight ")]
    assert paths == ["fused", "fused"]
    src = (tmp_path / "out" / "m.c").read_text()
    u8 = (nbits, symmetric) == (8, False)
    assert src.count("coreai_linear_q_f32(") == (2 if u8 else 0) and "coreai_shift_scale(" not in src
    assert src.count("coreai_linear_qp_f32(") == (0 if u8 else 2), src
    # --int8-activations: layers on i8 / i4 / u4 data take the integer dot
    # products, any number of rows; u8 data keeps the f32 path
    r = subprocess.run([coreai_gen, "generate", str(path), "-o", str(tmp_path / "a8"), "--stats", "--int8-activations"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    a8 = (nbits, symmetric) != (8, False)
    paths = [ln.split()[-1] for ln in r.stdout.splitlines() if ln.startswith("compressed_weight ")]
    assert paths == ["fused_int8_activations" if a8 else "fused"] * 2
    src = (tmp_path / "a8" / "m.c").read_text()
    assert src.count("coreai_linear_q8a_f32(") == (2 if a8 else 0), src


@pytest.mark.parametrize("nbits,block_size,symmetric,groups,stride,scale_dtype",
                         [(4, 8, True, 1, 1, torch.float32), (8, None, False, 2, 2, torch.float32),
                          (4, 16, False, 1, 2, torch.float16), (8, 4, True, 4, 1, torch.float32),
                          (4, None, True, 32, 1, torch.float32)])
def test_fused_conv_matches_eager(nbits, block_size, symmetric, groups, stride, scale_dtype, coreai_gen, c_compiler,
                                  tmp_path):
    """Convolutions on weights kept compressed (coreai_conv2d_q_f32) against
    the compressed model in eager PyTorch: 4 and 8 bits, blocks of input
    channels or one per output channel, zero points, f16 scales, groups,
    stride 2, batch 2; a depthwise 3 x 3 layer at 4 bits, whose blocks of 9
    weights start mid-byte."""
    torch.manual_seed(21)
    net = nn.Sequential(nn.Conv2d(32, 32, 3, stride=stride, padding=1, groups=groups), nn.ReLU(),
                        nn.Conv2d(32, 16, 1, bias=False)).eval()
    m = quantize_weights(net, nbits=nbits, block_size=block_size, symmetric=symmetric, scale_dtype=scale_dtype,
                         include=lambda name, _: not (groups == 32 and name == "2"))
    x = torch.randn(2, 32, 9, 10, generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        want = m(x)
    ep = torch.export.export(m, (x,)).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    program.optimize()
    got = next(iter(run_program(program, [{"input": x}], workdir=str(tmp_path))[0].values()))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5 * float(want.abs().max()))
    import subprocess
    path = program.save(tmp_path / "m")
    r = subprocess.run([coreai_gen, "generate", str(path), "-o", str(tmp_path / "out"), "--stats"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    paths = [ln.split()[-1] for ln in r.stdout.splitlines() if ln.startswith("compressed_weight ")]
    src = (tmp_path / "out" / "m.c").read_text()
    if groups == 32:  # the depthwise layer alone, 4-bit blocks of 9
        assert paths == ["fused"] and src.count("coreai_conv2d_q_f32(") == 1 and "coreai_shift_scale(" not in src
    else:
        assert paths == ["fused", "fused"]
        assert src.count("coreai_conv2d_q_f32(") == 2 and "coreai_shift_scale(" not in src


@pytest.mark.parametrize("nbits,group_size,rows,features,lut_dtype",
                         [(4, None, 1, 64, torch.float32), (2, 8, 8, 64, torch.float32),
                          (6, None, 3, 300, torch.float32), (1, 32, 5, 64, torch.float32),
                          (8, 16, 1, 300, torch.float32), (4, 16, 1, 64, torch.float16),
                          (4, None, 8, 64, torch.bfloat16), (6, 8, 5, 300, torch.float16)])
def test_fused_palettized_linear_matches_eager(nbits, group_size, rows, features, lut_dtype, coreai_gen, c_compiler,
                                               tmp_path):
    """Linears on palettized weights kept as indices and tables
    (coreai_linear_lut_f32): every index width, one table per tensor or per
    group of outputs, 300 inputs (more than the kernel's 256-weight chunk,
    and 6-bit indices straddling bytes), a relu in the first layer's
    epilogue and a bias; against the palettized model in eager PyTorch.
    f16 and bf16 tables (an f16 lookup cast to the layer's f32) run fused
    too, on the table widened at generation time (lut_widen.h)."""
    torch.manual_seed(12)
    net = nn.Sequential(nn.Linear(features, 96), nn.ReLU(), nn.Linear(96, 32, bias=False)).eval()
    m = palettize_weights(net, nbits=nbits, group_size=group_size, lut_dtype=lut_dtype)
    x = torch.randn(rows, features, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        want = m(x)
    ep = torch.export.export(m, (x,)).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    got = next(iter(run_program(program, [{"input": x}], workdir=str(tmp_path))[0].values()))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5 * float(want.abs().max()))
    import subprocess
    path = program.save(tmp_path / "m")
    r = subprocess.run([coreai_gen, "generate", str(path), "-o", str(tmp_path / "out"), "--stats"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("compressed_weight ")]
    assert [(ln[3], ln[-1]) for ln in lines] == [("lut_to_dense", "fused")] * 2, lines
    src = (tmp_path / "out" / "m.c").read_text()
    assert src.count("coreai_linear_lut_f32(") == 2 and "coreai_lut_to_dense(" not in src
    # no dense weight in the workspace: at most the activations (x is an input)
    ws = next(int(ln.split()[1]) for ln in r.stdout.splitlines() if ln.startswith("workspace_bytes "))
    assert ws <= 4 * rows * 96 + 64, ws


def _minval_weight(w, nbits, block, sdt):
    """w as unsigned integers with a scale and minval per block (the form
    the reference converter's asymmetric modes produce): w ~ (q - q_min) *
    scale + minval, q_min 0 for uint4 / uint8."""
    o, i = w.shape
    blocks = w.reshape(o, i // block, block)
    lo, hi = blocks.amin(-1), blocks.amax(-1)
    levels = (1 << nbits) - 1
    scale = torch.where(hi > lo, (hi - lo) / levels, torch.ones_like(hi)).to(sdt)
    minval = lo.to(sdt)
    q = torch.round((blocks - minval.float()[..., None]) / scale.float()[..., None]).clamp(0, levels)
    return WeightDequantizeModule(q.reshape(o, i).to(torch.uint8), scale, minval=minval,
                                  input_dtype=torch.uint4 if nbits == 4 else torch.uint8)


# each path (GEMV: 1 row, GEMM: 8 rows) with f16, bf16 and minval
@pytest.mark.parametrize("sdt,minval,rows", [(torch.float16, False, 1), (torch.float16, True, 8),
                                             (torch.bfloat16, True, 1), (torch.bfloat16, False, 8),
                                             (torch.float32, True, 1), (torch.float32, True, 8)])
def test_fused_linear_scale_dtypes_and_minval(sdt, minval, rows, coreai_gen, c_compiler, tmp_path):
    """f16 / bf16 scales (the weight in the scale's dtype, cast to f32 by
    the layer) and minval run fused too: the GEMV (1 row) and the GEMM (8
    rows) against the compressed model in eager PyTorch, at f32 accuracy
    (each weight formed and rounded exactly as eager forms it)."""
    torch.manual_seed(13)
    net = nn.Sequential(nn.Linear(64, 96), nn.ReLU(), nn.Linear(96, 32, bias=False)).eval()
    if minval:
        m = nn.Sequential(*[CompressedLinear(_minval_weight(lin.weight.detach(), nbits, 32, sdt), lin.bias,
                                             lin.in_features, lin.out_features) if isinstance(lin, nn.Linear) else lin
                            for lin, nbits in zip(net, (4, 0, 8))]).eval()
    else:
        m = quantize_weights(net, nbits=4, block_size=32, scale_dtype=sdt)
    x = torch.randn(rows, 64, generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        want = m(x)
        # the weights really are rounded to the scale's dtype (a test that
        # formed them in f32 would miss that)
        if sdt != torch.float32:
            assert m[0].weight().dtype == sdt
    ep = torch.export.export(m, (x,)).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    program.optimize()
    got = next(iter(run_program(program, [{"input": x}], workdir=str(tmp_path))[0].values()))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5 * float(want.abs().max()))
    import subprocess
    path = program.save(tmp_path / "m")
    r = subprocess.run([coreai_gen, "generate", str(path), "-o", str(tmp_path / "out"), "--stats"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    paths = [ln.split()[-1] for ln in r.stdout.splitlines() if ln.startswith("compressed_weight ")]
    assert paths == ["fused", "fused"], r.stdout
    src = (tmp_path / "out" / "m.c").read_text()
    assert src.count("coreai_linear_q_f32(") == 2 and "coreai_shift_scale(" not in src
    assert "coreai_cast" not in src or sdt == torch.float32


def test_compress_inplace_failure_changes_nothing():
    """Every layer is compressed before the first is installed: an error in
    any layer leaves an in-place model as it was."""
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 6))
    model = nn.Sequential(net, nn.Linear(6, 4))  # the last layer's 6 inputs are no blocks of 8
    with pytest.raises(ValueError, match="block_size 8 does not divide the 6 input channels"):
        quantize_weights(model, nbits=4, block_size=8, inplace=True)
    assert isinstance(net[0], nn.Linear) and isinstance(net[2], nn.Linear)
    with pytest.raises(ValueError, match="the model itself is a layer"):
        quantize_weights(nn.Linear(8, 8), nbits=8, block_size=8)
