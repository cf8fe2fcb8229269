"""Symbolic models (model format 2) through the generated C: torch.export
programs with dynamic dimensions, converted by the front end, generated
once by coreai-gen, compiled and run through the Python runtime at the
smallest, the largest and an odd size of each range, against eager
PyTorch; a size outside a range is refused before the call."""

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

from coreai.runtime import NDArray
from coreai_torch import TorchConverter, get_decomp_table

TOL = 2e-5


def export(model, sample, dynamic_shapes):
    ep = torch.export.export(model, sample, dynamic_shapes=dynamic_shapes).run_decompositions(get_decomp_table())
    return TorchConverter().add_exported_program(ep).to_coreai()


def run_c(program, tmp_path, calls, bad=(), **executable):
    """Generates and loads the program once; runs each dict of inputs, and
    each of `bad`, returning what those raised."""
    asset = program.save_asset(tmp_path / "m")
    with asset.executable(**executable) as exe:
        fn = exe.load_function(exe.entrypoints[0])
        results = [fn.call({k: NDArray(v) for k, v in c.items()}) for c in calls]
        errors = []
        for c in bad:
            try:
                fn.call({k: NDArray(v) for k, v in c.items()})
                errors.append(None)
            except ValueError as e:
                errors.append(str(e))
        return fn.symbols, results, errors


def check(model, names, calls, results):
    for inputs, got in zip(calls, results):
        want = model(*[torch.from_numpy(inputs[n]) for n in names])
        want = want if isinstance(want, tuple) else (want,)
        outs = list(got.values())
        assert len(outs) == len(want)
        for w, g in zip(want, outs):
            assert tuple(g.shape) == tuple(w.shape)
            np.testing.assert_allclose(g.numpy(), w.detach().numpy(), atol=TOL, rtol=TOL)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 8)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return torch.softmax(self.fc2(h) * 0.5, dim=-1), h.mean(dim=1)


@pytest.mark.parametrize("dynamic", ["batch", "seq"])
def test_mlp_dynamic_batch_or_seq(tmp_path, coreai_gen, dynamic):
    """x [batch, 5, 8] or [1, seq, 8] (a product of two symbols is not affine:
    the front end refuses it, so one symbol per model)."""
    torch.manual_seed(0)
    model = MLP().eval()
    if dynamic == "batch":
        dim, sample, axis, shape = torch.export.Dim("batch", min=1, max=6), torch.randn(2, 5, 8), 0, (None, 5, 8)
    else:
        dim, sample, axis, shape = torch.export.Dim("seq", min=1, max=16), torch.randn(1, 5, 8), 1, (1, None, 8)
    p = export(model, (sample,), {"x": {axis: dim}})
    lo, hi = dim.min, dim.max
    rng = np.random.default_rng(1)

    def with_size(n):
        return tuple(n if d is None else d for d in shape)
    calls = [{"x": rng.standard_normal(with_size(n)).astype(np.float32)} for n in (lo, hi, 3, hi - 1)]
    # one past the bound, one below: refused, naming the symbol and its range
    bad = [{"x": np.zeros(with_size(n), np.float32)} for n in (hi + 1, lo - 1)]
    symbols, results, errors = run_c(p, tmp_path, calls, bad)
    check(model, ["x"], calls, results)
    assert symbols == [(dynamic, lo, hi)]
    for n, e in zip((hi + 1, lo - 1), errors):
        assert e is not None and f"symbol '{dynamic}' would be {n}, outside its range [{lo}, {hi}]" in e


def test_external_weights_same_bits(tmp_path, coreai_gen):
    """weights_format="external" with a symbol: the blob goes to the symbolic
    adapter; every size gives the linked (incbin) form's bits, which eager
    PyTorch bounds; a damaged blob is refused before any call."""
    torch.manual_seed(0)
    model = MLP().eval()
    dim = torch.export.Dim("seq", min=1, max=16)
    p = export(model, (torch.randn(1, 5, 8),), {"x": {1: dim}})
    rng = np.random.default_rng(2)
    calls = [{"x": rng.standard_normal((1, n, 8)).astype(np.float32)} for n in (1, 7, 16)]
    _, linked, _ = run_c(p, tmp_path / "incbin", calls)
    _, ext, _ = run_c(p, tmp_path / "external", calls, weights_format="external")
    check(model, ["x"], calls, linked)
    for a, b in zip(linked, ext):
        assert list(a) == list(b)
        for k in a:
            assert a[k].numpy().shape == b[k].numpy().shape
            assert a[k].numpy().tobytes() == b[k].numpy().tobytes(), k
    with p.save_asset(tmp_path / "m2").executable(weights_format="external") as exe:
        assert exe.external_weights
        blob = next(Path(exe.library_path).parent.glob("*_weights.bin"))
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0x01
    (tmp_path / "flipped.bin").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="SHA-256 differs"):
        run_c(p, tmp_path / "bad", calls, weights_format="external", weights=tmp_path / "flipped.bin")


class SharedDerived(nn.Module):
    """A size shared by two inputs, a derived size (seq + 2), a reshape of
    the symbolic axis, and a window whose begin is symbolic (the last 3 rows)."""

    def forward(self, x, y):
        z = torch.cat([x, x[:, :2]], dim=1)
        b, s, h = x.shape
        w = x.reshape(b, s, 2, h // 2).transpose(1, 2)
        return torch.softmax(z * 2, -1), w * 3, y + x.sum(), x[:, -3:] - 1


def test_shared_derived_and_symbolic_begin(tmp_path, coreai_gen):
    model = SharedDerived().eval()
    s = torch.export.Dim("seq", min=3, max=12)
    p = export(model, (torch.randn(1, 5, 8), torch.randn(3, 5)), {"x": {1: s}, "y": {1: s}})
    rng = np.random.default_rng(2)
    calls = [{"x": rng.standard_normal((1, n, 8)).astype(np.float32),
              "y": rng.standard_normal((3, n)).astype(np.float32)} for n in (3, 12, 7)]
    # past the bound; and two inputs disagreeing on their shared symbol
    bad = [{"x": np.zeros((1, 13, 8), np.float32), "y": np.zeros((3, 13), np.float32)},
           {"x": np.zeros((1, 5, 8), np.float32), "y": np.zeros((3, 6), np.float32)}]
    _, results, errors = run_c(p, tmp_path, calls, bad)
    check(model, ["x", "y"], calls, results)
    assert "symbol 'seq' would be 13, outside its range [3, 12]" in errors[0]
    assert "has shape [3, 6], but the symbols read from the inputs (seq=5) make it [3, 5]" in errors[1]


class AttentionBlock(nn.Module):
    """What a decoder step computes, with two symbols: the query length seq
    and the cached length past. RMSNorm, an embedding (gather), a linear,
    the head split, RoPE at position_ids, a KV cache of past + seq rows
    (concat) and causal attention aligned lower-right (query i sees keys
    up to past + i), built on coreai_torch.composite_ops and exported
    without externalizing them, so their decompositions reach the C."""

    def __init__(self):
        super().__init__()
        from coreai_torch.composite_ops import SDPA, RMSNorm, RoPE
        self.norm, self.rope, self.attn = RMSNorm(8), RoPE(), SDPA(is_causal=True)
        self.q = nn.Linear(8, 16)
        self.emb = nn.Embedding(20, 16)

    def forward(self, x, pos, kpast, vpast, tok):
        s = x.shape[1]
        q = self.q(self.norm(x)) + self.emb(tok)
        q = self.rope(q.reshape(1, s, 2, 8).transpose(1, 2), position_ids=pos)
        k = torch.cat([kpast, q], dim=2)
        v = torch.cat([vpast, q * 0.5], dim=2)
        return self.attn(q, k, v).transpose(1, 2).reshape(1, s, 16)


def test_attention_block_lower_right_causal(tmp_path, coreai_gen):
    torch.manual_seed(0)
    model = AttentionBlock().eval()
    s, p = torch.export.Dim("seq", min=1, max=8), torch.export.Dim("past", min=0, max=8)
    sample = (torch.randn(1, 3, 8), torch.arange(2, 5).unsqueeze(0), torch.randn(1, 2, 2, 8), torch.randn(1, 2, 2, 8),
              torch.randint(0, 20, (1, 3)))
    prog = export(model, sample, {"x": {1: s}, "pos": {1: s}, "kpast": {2: p}, "vpast": {2: p}, "tok": {1: s}})
    rng = np.random.default_rng(3)
    calls = []
    # (seq, past): decode steps (seq 1), prefill, both at their bounds, odd ones
    for seq, past in [(1, 0), (8, 8), (3, 5), (1, 7), (8, 0), (5, 2)]:
        calls.append({"x": rng.standard_normal((1, seq, 8)).astype(np.float32),
                      "pos": np.arange(past, past + seq, dtype=np.int64)[None],
                      "kpast": rng.standard_normal((1, 2, past, 8)).astype(np.float32),
                      "vpast": rng.standard_normal((1, 2, past, 8)).astype(np.float32),
                      "tok": rng.integers(0, 20, (1, seq), dtype=np.int64)})
    symbols, results, _ = run_c(prog, tmp_path, calls)
    assert symbols == [("past", 0, 8), ("seq", 1, 8)]
    check(model, ["x", "pos", "kpast", "vpast", "tok"], calls, results)
