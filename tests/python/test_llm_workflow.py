"""The stateful decoder workflow of the reference converter
(coreai_torch.testing_llm, docs/llm-workflow.md): a Qwen3-style decoder
whose K and V caches are user inputs mutated through a custom
update-and-fetch op (auto_functionalized in the exported graph), lowered by
a custom lowering to coreai.slice_update, exported once with a dynamic query
length and a dynamic position_ids length as two entrypoints sharing the
caches. A generation loop (prefill 8 tokens, a 3-token chunk at offset 8,
4 single-token decode steps) runs in the NumPy interpreter and is compared
with eager PyTorch at every step: logits and both caches."""

import numpy as np
import pytest
import torch

from coreai._compiler import ir
from coreai.runtime import NDArray, RuntimeCallError
from coreai_torch.testing_llm import LLMConfig, TinyQwen, export_llm

PROMPT, CHUNK, DECODES = 8, 3, 4


@pytest.fixture(scope="module")
def llm():
    torch.manual_seed(0)
    model = TinyQwen(LLMConfig(), seed=1).eval()
    return model, export_llm(model)


def generation_steps(vocab: int, seed: int = 2):
    """(entrypoint, input_ids, position_ids) of the loop: prefill, a chunk at
    a non-zero offset (its causal mask is aligned lower-right), decodes."""
    gen = torch.Generator().manual_seed(seed)
    steps, seq = [], 0
    for i, q in enumerate([PROMPT, CHUNK] + [1] * DECODES):
        seq += q
        steps.append(("prefill" if i == 0 else "main", torch.randint(0, vocab, (1, q), generator=gen),
                      torch.arange(seq).unsqueeze(0)))
    return steps


def eager_step(model, entry, ids, pos, k, v):
    model.prefill_mode = entry == "prefill"
    try:
        with torch.no_grad():
            out = model(ids, pos, k, v)
    finally:
        model.prefill_mode = False
    return None if isinstance(out, tuple) else out


def test_eager_cache_matches_a_full_forward(llm):
    """The oracle itself: the cached loop gives the logits of one forward
    over the whole sequence (so a shared mistake cannot hide)."""
    model, _ = llm
    steps = generation_steps(model.cfg.vocab)
    ids = torch.cat([s[1] for s in steps], 1)
    full = eager_step(model, "main", ids, torch.arange(ids.shape[1]).unsqueeze(0), *model.new_cache())
    k, v = model.new_cache()
    got = []
    for entry, i, p in steps:
        out = eager_step(model, "main" if entry == "prefill" else entry, i, p, k, v)
        got.append(out)
    assert (torch.cat(got, 1) - full).abs().max().item() < 1e-5


def test_exported_structure(llm):
    model, p = llm
    m = p.module
    assert [(e.name, e.states, e.inputs, e.outputs) for e in m.entrypoints] == [
        ("prefill", ["k_cache", "v_cache"], ["input_ids", "position_ids"], []),
        ("main", ["k_cache", "v_cache"], ["input_ids", "position_ids"], ["logits"])]
    q, s = ir.Symbol("query_len", 1, model.cfg.max_seq), ir.Symbol("seq_len", 1, model.cfg.max_seq)
    assert m.all_symbols() == [q, s]
    main = m.find_graph("main")
    assert [a.type.shape for a in main.arguments[2:]] == [(1, q.dim()), (1, s.dim())]
    assert main.outputs[2].type.shape == (1, q.dim(), model.cfg.vocab)
    # the cache writes: one slice_update per cache and layer, at row seq_len - query_len
    for g in (m.find_graph("prefill"), main):
        ups = [op for op in g.operations if op.kind == "coreai.slice_update"]
        assert len(ups) == 2 * model.cfg.layers
        assert list(ups[0].attributes["begins"].value) == [0, 0, 0, s.dim() - q.dim(), 0]
    # the composite ops keep the symbolic sizes (not the traced 3 and 5)
    composites = {g.composite.op_name: g for g in m.graphs if g.composite is not None}
    assert sorted(composites) == ["rms_norm", "rope", "scaled_dot_product_attention"]
    sdpa = composites["scaled_dot_product_attention"]
    assert [a.type.shape[2] for a in sdpa.arguments] == [q.dim(), s.dim(), s.dim()]
    assert sdpa.composite.attrs["is_causal"].value is True


def test_generation_loop_in_the_interpreter(llm, capsys):
    model, p = llm
    k_ref, v_ref = model.new_cache()
    states = {"k_cache": np.zeros(model.cfg.cache_shape, np.float32),
              "v_cache": np.zeros(model.cfg.cache_shape, np.float32)}
    report = []
    for n, (entry, ids, pos) in enumerate(generation_steps(model.cfg.vocab)):
        want = eager_step(model, entry, ids, pos, k_ref, v_ref)
        got = p.interpret(entry, {"input_ids": ids.numpy(), "position_ids": pos.numpy()}, states)
        states = {"k_cache": got["k_cache"], "v_cache": got["v_cache"]}
        err_k = float(np.abs(got["k_cache"] - k_ref.numpy()).max())
        err_v = float(np.abs(got["v_cache"] - v_ref.numpy()).max())
        err_l = float(np.abs(got["logits"] - want.numpy()).max()) if want is not None else 0.0
        if want is not None:
            assert got["logits"].shape == tuple(want.shape)
        report.append(f"step {n} {entry:7s} query {ids.shape[1]} at {pos.shape[1] - ids.shape[1]:2d}: "
                      f"logits {err_l:.2e} k_cache {err_k:.2e} v_cache {err_v:.2e}")
        assert max(err_l, err_k, err_v) < 1e-4, report[-1]
    # not vacuous: every written row is non-zero, the rest untouched
    written = PROMPT + CHUNK + DECODES
    assert np.all(np.abs(states["k_cache"][..., :written, :]).sum(-1) > 0)
    assert np.all(states["k_cache"][..., written:, :] == 0)
    with capsys.disabled():
        print("\n" + "\n".join(report))


def c_loop(fns, model, steps, report=None, greedy=False):
    """Runs steps through the generated C (prefill and main share the caches:
    each call gets the caches the previous one left), comparing logits and
    caches with eager PyTorch after every step; returns the max error. With
    greedy, a single-token main step after one with logits feeds the eager
    model's most likely next token instead of its own, and the generated C
    must pick the same token at every step."""
    k_ref, v_ref = model.new_cache()
    caches = {"k_cache": NDArray(k_ref.numpy().copy()), "v_cache": NDArray(v_ref.numpy().copy())}
    worst, last = 0.0, None
    for n, (entry, ids, pos) in enumerate(steps):
        if greedy and last is not None and ids.shape[1] == 1:
            ids = last[:, -1:].argmax(-1)
        want = eager_step(model, entry, ids, pos, k_ref, v_ref)
        got = fns[entry].call({"input_ids": NDArray(ids), "position_ids": NDArray(pos), **caches})
        caches = {"k_cache": got["k_cache"], "v_cache": got["v_cache"]}
        errs = [float(np.abs(got[n].numpy() - r.numpy()).max()) for n, r in (("k_cache", k_ref), ("v_cache", v_ref))]
        if want is not None:
            assert got["logits"].numpy().shape == tuple(want.shape)
            errs.append(float(np.abs(got["logits"].numpy() - want.numpy()).max()))
            if greedy:
                np.testing.assert_array_equal(got["logits"].numpy().argmax(-1), want.numpy().argmax(-1))
            last = want
        if report is not None:
            scale = float(want.abs().max()) if want is not None else float(k_ref.abs().max())
            report.append(f"C step {n} {entry:7s} query {ids.shape[1]:2d} at {pos.shape[1] - ids.shape[1]:2d}: "
                          f"max error {max(errs):.2e} ({max(errs) / scale:.1e} of the largest "
                          f"{'logit' if want is not None else 'cache entry'})")
        worst = max(worst, *errs)
    return worst


def loop_steps(model, queries, seed):
    gen = torch.Generator().manual_seed(seed)
    steps, seq = [], 0
    for i, q in enumerate(queries):
        seq += q
        steps.append(("prefill" if i == 0 else "main", torch.randint(0, model.cfg.vocab, (1, q), generator=gen),
                      torch.arange(seq).unsqueeze(0)))
    return steps


def test_generation_loop_in_generated_c(llm, tmp_path, capsys):
    """The same loop through the generated C, one build for every length: the
    standard loop, the smallest prompt, an odd one that fills the cache to its
    bound, and a whole-context main call; then the bound plus one (refused
    before the call) and a chunk longer than the positions (refused by the
    generated code's region check), neither touching the caches."""
    model, p = llm
    top = model.cfg.max_seq
    with p.save_asset(tmp_path / "qwen").executable() as exe:
        fns = {n: exe.load_function(n) for n in ("prefill", "main")}
        report = []
        assert c_loop(fns, model, generation_steps(model.cfg.vocab), report) < 1e-4
        for queries, seed in (([1, 1, 1], 3), ([top - 7, 3] + [1] * 4, 4), ([top], 5)):
            assert c_loop(fns, model, loop_steps(model, queries, seed)) < 1e-4, queries
        # a main call over the whole context at once (query_len = seq_len = bound)
        ids = torch.randint(0, model.cfg.vocab, (1, top), generator=torch.Generator().manual_seed(6))
        assert c_loop(fns, model, [("main", ids, torch.arange(top).unsqueeze(0))]) < 1e-4
        zeros = {"k_cache": NDArray(np.zeros(model.cfg.cache_shape, np.float32)),
                 "v_cache": NDArray(np.zeros(model.cfg.cache_shape, np.float32))}
        with pytest.raises(ValueError, match=r"symbol 'query_len' would be 33, outside its range \[1, 32\]"):
            fns["main"].call({"input_ids": NDArray(torch.zeros(1, top + 1, dtype=torch.int64)),
                              "position_ids": NDArray(torch.arange(top + 1).unsqueeze(0)), **zeros})
        before = fns["main"].state["k_cache"].numpy().copy()
        with pytest.raises(RuntimeCallError, match="invalid argument"):
            fns["main"].call({"input_ids": NDArray(torch.zeros(1, 3, dtype=torch.int64)),
                              "position_ids": NDArray(torch.arange(2).unsqueeze(0))})
        np.testing.assert_array_equal(fns["main"].state["k_cache"].numpy(), before)
    with capsys.disabled():
        print("\n" + "\n".join(report))


class NormOfGrown(torch.nn.Module):
    """A composite op on a tensor whose size is an expression (seq + 1)."""

    def __init__(self):
        super().__init__()
        from coreai_torch import composite_ops
        self.norm = composite_ops.RMSNorm(8)

    def forward(self, x):
        return self.norm(torch.cat([x, x[:, :1]], 1))


def test_composite_on_a_derived_size_is_refused():
    from coreai_torch import TorchConverter, get_decomp_table
    from coreai_torch.testing_llm import EXTERNALIZE
    dyn = {"x": {1: torch.export.Dim("seq", min=2, max=16)}}
    x = torch.randn(1, 5, 8)
    conv = TorchConverter()
    with pytest.raises(NotImplementedError, match=r"externalized module 'norm.norm' \(RMSNormImpl\): argument "
                                                  r"'input' dimension 1 has the size .*; an externalized module's "
                                                  r"symbolic sizes must each be one exported size"):
        conv.add_pytorch_module(NormOfGrown().eval(), externalize_modules=EXTERNALIZE[:1],
                                export_fn=lambda m: torch.export.export(m, (x,), dynamic_shapes=dyn)
                                .run_decompositions(get_decomp_table()))


@pytest.mark.parametrize("nbits", [4, 8])
def test_compressed_generation_loop_in_generated_c(nbits, coreai_gen, tmp_path, capsys):
    """The decoder with every linear quantized blockwise (one f32 scale per
    32 inputs, coreai_torch.compression.quantize_weights), exported with the
    same symbols: generate --stats puts every linear on the fused kernel
    (the weights stay packed), and the greedy loop through the generated C
    follows the COMPRESSED model in eager PyTorch (logits, caches, tokens)."""
    import subprocess
    from coreai_torch.compression import quantize_weights
    torch.manual_seed(0)
    model = quantize_weights(TinyQwen(LLMConfig(), seed=1).eval(), nbits=nbits, block_size=32)
    # 8 bits: optimize() drops the converter's dead transposes of the
    # weights; 4 bits: left in, they are second readers of each dequantized
    # weight, which coreai-gen's dead-op removal (generator/src/dce.h) drops
    # before it matches the fused linear, so the result is the same
    p = export_llm(model)
    weight_transpose = "{perm = [1, 0]}"  # the attention's transposes are 4-D
    assert weight_transpose in str(p)
    if nbits == 8:
        p.optimize()
        assert weight_transpose not in str(p)
    asset = p.save_asset(tmp_path / "qwen")
    r = subprocess.run([coreai_gen, "generate", str(tmp_path / "qwen.xml"), "-o", str(tmp_path / "gen"), "--stats"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    layers = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("compressed_weight ")]
    # main: 5 linears per layer and lm_head; prefill keeps what writes the caches
    cfg = model.cfg
    assert sum(ln[1] == "@main" for ln in layers) == 5 * cfg.layers + 1
    assert {(ln[4].rsplit("x", 1)[-1], ln[-2], ln[-1]) for ln in layers} == {(f"i{nbits}>", "path", "fused")}
    weight_bytes = next(int(ln.split()[1]) for ln in r.stdout.splitlines() if ln.startswith("weight_bytes "))
    report = [f"int{nbits} weight_bytes {weight_bytes}"]
    with asset.executable() as exe:
        fns = {n: exe.load_function(n) for n in ("prefill", "main")}
        # the quantization steps are large, but the C computes the same
        # dequantized weights as eager: the f32 model's tolerance holds
        assert c_loop(fns, model, generation_steps(cfg.vocab), report, greedy=True) < 1e-4
        assert c_loop(fns, model, loop_steps(model, [cfg.max_seq - 7, 3] + [1] * 4, 4), greedy=True) < 1e-4
    with capsys.disabled():
        print("\n" + "\n".join(report))
