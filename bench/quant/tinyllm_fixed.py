#!/usr/bin/python3
"""The fixed-shape tinyllm of before examples/tinyllm became the symbolic
decoder workflow (docs/llm-workflow.md), kept for compressed_examples.py,
whose measurements (docs/compression.md) are of this model: a 2-layer
Llama-style decoder with a KV cache.

Model (seeded random init, torch.manual_seed(5); nothing is trained):

    vocab 256 (bytes), dim 64, 2 layers, 4 query heads / 2 key-value heads
    (GQA, head_dim 16), SwiGLU MLP (hidden 128), RMSNorm (eps 1e-5) before
    attention, MLP and the separate (untied) lm_head, RoPE (base 10000,
    split-half), max context 64.

Composite ops (coreai_torch.composite_ops, externalized with ExternalizeSpec):
RMSNormImpl -> rms_norm, RoPE -> rope, SDPA -> scaled_dot_product_attention,
SwiGLUImpl -> swiglu; coreai-gen emits each as one runtime kernel call.

The KV cache is model state: two registered buffers

    k_cache, v_cache   f32 [layers, 1, kv_heads, context, head_dim]

updated in place (`copy_`) by both entrypoints of ONE program:

    prefill(tokens i64[1, 8], position i64[1]) -> logits f32[1, 256]
    decode (tokens i64[1, 1], position i64[1]) -> logits f32[1, 256]

Each writes the keys/values of its tokens at [position, position + T) of
every layer's cache (a gather of the new rows + `where`, so the write
position can be a runtime input; see `write_cache`), attends over the cache
with a bool mask (key j visible to query t iff j <= position + t) and
returns the logits of its last token. Both are converted with
add_pytorch_module(..., entrypoint_name=..., state_names=["k_cache",
"v_cache"]) on the same converter, so the generated C declares
tinyllm_prefill and tinyllm_decode with the same two state buffers.

  export.py --output DIR/NAME.xml   write the model (+ NAME.weights): the build
                                    runs this (coreai_add_model PYTHON_SCRIPT)
  export.py --output ... --reference DIR
                                    also write PyTorch's greedy generation for
                                    the fixed prompt: DIR/reference_prompt.txt,
                                    reference_tokens.txt (prefill's token, then
                                    one per decode step) and
                                    reference_logits.npy (f32 [1 + steps, 256])
  --steps N                         decode steps of the reference (default 32)
  --prompt-reference TEXT STEPS DIR the same for another 8-byte prompt and
                                    STEPS decode steps (repeatable)

Before writing anything the script checks, in PyTorch, that the cached
generation equals a plain recomputation over the whole sequence (no cache)
and that no greedy choice is a near tie (top-2 margin >= 1e-3), so the C
tokens can be required to match exactly.

Run with the project's .venv/bin/python (PyTorch >= 2.8); PYTHONPATH must reach
this repository's python/ directory (the build sets it).
"""

import argparse
import io
import os
import sys

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))  # bench/quant -> the repository

import coreai_torch  # noqa: E402
from coreai_torch import ExternalizeSpec, TorchConverter  # noqa: E402
from coreai_torch.composite_ops import SDPA, RMSNorm, RMSNormImpl, RoPE, SwiGLU, SwiGLUImpl  # noqa: E402

VOCAB = 256
DIM = 64
LAYERS = 2
HEADS = 4
KV_HEADS = 2
HEAD_DIM = DIM // HEADS
HIDDEN = 128
CONTEXT = 64
PROMPT_LEN = 8
SEED = 5  # chosen among the first few for a varied greedy continuation
EPS = 1e-5
ROPE_BASE = 10000.0

PROMPT = b"Core AI!"  # the fixed prompt: 8 byte tokens
MIN_MARGIN = 1e-3  # smallest allowed gap between the best and second-best logit

EXTERNALIZE = [
    ExternalizeSpec(RMSNormImpl, "rms_norm", ["axes", "eps", "version"]),
    ExternalizeSpec(RoPE, "rope", ["scale", "base", "dims", "interleaved", "version"]),
    ExternalizeSpec(SDPA, "scaled_dot_product_attention", ["scale", "is_causal", "window_size", "version"]),
    ExternalizeSpec(SwiGLUImpl, "swiglu", ["version"]),
]


def write_cache(cache, new, position):
    """`cache` [B, H, C, D] with rows [position, position + T) replaced by
    `new` [B, H, T, D]. Out of place and shape-static (position is a runtime
    tensor): gather row clamp(c - position, 0, T-1) of `new` for every cache
    row c, then keep it where position <= c < position + T."""
    t, c = new.shape[2], cache.shape[2]
    rows = torch.arange(c) - position  # [C]
    index = rows.clamp(0, t - 1)
    inside = (rows >= 0) & (rows < t)
    scattered = torch.index_select(new, 2, index)
    return torch.where(inside.view(1, 1, c, 1), scattered, cache)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(DIM, HEADS * HEAD_DIM, bias=False)
        self.wk = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wv = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wo = nn.Linear(HEADS * HEAD_DIM, DIM, bias=False)
        # One RoPE instance per call site: coreai_torch keys an externalized
        # instance's calls by argument names, not shapes, so one instance
        # applied to q [1, 4, T, 16] and k [1, 2, T, 16] would be converted
        # with the shapes of one call only (see README.md, "Limitations").
        self.q_rope = RoPE(base=ROPE_BASE)
        self.k_rope = RoPE(base=ROPE_BASE)
        self.sdpa = SDPA()  # scale = head_dim ** -0.5; GQA by head index

    def forward(self, x, position, mask, k_cache, v_cache):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.wk(x).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.wv(x).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        q = self.q_rope(q, offset=position)
        k = self.k_rope(k, offset=position)
        k_cache = write_cache(k_cache, k, position)
        v_cache = write_cache(v_cache, v, position)
        y = self.sdpa(q, k_cache, v_cache, attn_mask=mask)
        y = y.transpose(1, 2).reshape(b, t, HEADS * HEAD_DIM)
        return self.wo(y), k_cache, v_cache


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = RMSNorm(DIM, eps=EPS)
        self.attn = Attention()
        self.mlp_norm = RMSNorm(DIM, eps=EPS)
        self.mlp = SwiGLU(DIM, HIDDEN)

    def forward(self, x, position, mask, k_cache, v_cache):
        a, k_cache, v_cache = self.attn(self.attn_norm(x), position, mask, k_cache, v_cache)
        x = x + a
        return x + self.mlp(self.mlp_norm(x)), k_cache, v_cache


class TinyLLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.norm = RMSNorm(DIM, eps=EPS)
        self.lm_head = nn.Linear(DIM, VOCAB, bias=False)
        cache = (LAYERS, 1, KV_HEADS, CONTEXT, HEAD_DIM)
        self.register_buffer("k_cache", torch.zeros(cache))
        self.register_buffer("v_cache", torch.zeros(cache))

    def forward(self, tokens, position):
        """tokens i64 [1, T] at positions position .. position + T - 1
        (position i64 [1]); returns the logits of the last token [1, VOCAB]."""
        t = tokens.shape[1]
        x = self.embed(tokens)
        # key j is visible to query i iff j <= position + i
        mask = torch.arange(CONTEXT).view(1, CONTEXT) <= (position + torch.arange(t)).view(t, 1)
        mask = mask.view(1, 1, t, CONTEXT)
        new_k, new_v = [], []
        for i, layer in enumerate(self.layers):
            x, k, v = layer(x, position, mask, self.k_cache[i], self.v_cache[i])
            new_k.append(k)
            new_v.append(v)
        self.k_cache.copy_(torch.stack(new_k))
        self.v_cache.copy_(torch.stack(new_v))
        return self.lm_head(self.norm(x[:, -1, :]))

    def reset_cache(self):
        self.k_cache.zero_()
        self.v_cache.zero_()


def build_model():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    model = TinyLLM().eval()
    with torch.no_grad():  # non-trivial norm scales, so a dropped scale shows up
        for m in model.modules():
            if isinstance(m, RMSNorm):
                m.weight.copy_(1.0 + 0.1 * torch.randn_like(m.weight))
    return model


def prompt_tokens(prompt=PROMPT):
    assert len(prompt) == PROMPT_LEN
    return torch.tensor([list(prompt)], dtype=torch.int64)


def generate(model, steps, prompt=PROMPT):
    """Greedy generation with the cache: prefill the prompt, then `steps`
    decode calls. Returns (tokens [1 + steps], logits [1 + steps, VOCAB])."""
    model.reset_cache()
    tokens, logits = [], []
    with torch.no_grad():
        out = model(prompt_tokens(prompt), torch.tensor([0]))
        for step in range(steps + 1):
            logits.append(out[0].clone())
            tokens.append(int(out[0].argmax()))
            if step < steps:
                out = model(torch.tensor([[tokens[-1]]]), torch.tensor([PROMPT_LEN + step]))
    model.reset_cache()
    return tokens, torch.stack(logits)


def check_against_recompute(model, tokens, logits):
    """The cached generation equals running the whole sequence from
    position 0 each time (one prefill-sized call, fresh cache)."""
    seq = list(PROMPT) + tokens
    with torch.no_grad():
        for i in range(len(tokens)):
            model.reset_cache()
            n = PROMPT_LEN + i
            ref = model(torch.tensor([seq[:n]]), torch.tensor([0]))[0]
            err = float((ref - logits[i]).abs().max())
            assert err < 1e-4, f"step {i}: cached logits differ from a full recompute by {err}"
    model.reset_cache()


def convert(model):
    model.reset_cache()  # a state's initial value is its value at export
    converter = TorchConverter()
    for name, t in (("prefill", PROMPT_LEN), ("decode", 1)):
        sample = (torch.zeros(1, t, dtype=torch.int64), torch.tensor([0]))
        converter.add_pytorch_module(
            model,
            export_fn=lambda m, sample=sample: torch.export.export(m, args=sample).run_decompositions(
                coreai_torch.get_decomp_table()
            ),
            externalize_modules=EXTERNALIZE,
            input_names=["tokens", "position"],
            output_names=["logits"],
            state_names=["k_cache", "v_cache"],
            entrypoint_name=name,
        )
    program = converter.to_coreai()
    program.optimize()
    return program


def write_file(path, data):
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)


def write_reference(directory, tokens, logits, prompt=PROMPT):
    os.makedirs(directory, exist_ok=True)
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(logits.numpy(), dtype="<f4"), allow_pickle=False)
    write_file(os.path.join(directory, "reference_logits.npy"), buf.getvalue())
    write_file(os.path.join(directory, "reference_tokens.txt"), (" ".join(map(str, tokens)) + "\n").encode())
    write_file(os.path.join(directory, "reference_prompt.txt"), (" ".join(map(str, prompt)) + "\n").encode())


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, help="model file to write (its weights go beside it)")
    parser.add_argument("--reference", metavar="DIR", help="write PyTorch's greedy tokens and logits there")
    parser.add_argument("--steps", type=int, default=32, help="decode steps of the reference")
    parser.add_argument("--prompt-reference", nargs=3, metavar=("TEXT", "STEPS", "DIR"), action="append",
                        default=[], help=f"also write the reference of another {PROMPT_LEN}-byte prompt")
    args = parser.parse_args(argv)
    if not 0 <= args.steps <= CONTEXT - PROMPT_LEN:
        parser.error(f"--steps must be in 0..{CONTEXT - PROMPT_LEN}")

    model = build_model()
    tokens, logits = generate(model, args.steps)
    check_against_recompute(model, tokens, logits)
    top2 = logits.topk(2, dim=-1).values
    margin = float((top2[:, 0] - top2[:, 1]).min())
    assert margin >= MIN_MARGIN, f"a greedy choice is a near tie (margin {margin}); change the seed or prompt"

    program = convert(model)
    program.save(args.output)
    if args.reference:
        write_reference(args.reference, tokens, logits)
    for text, steps, directory in args.prompt_reference:
        prompt = text.encode()
        if len(prompt) != PROMPT_LEN:
            parser.error(f"--prompt-reference: {text!r} is not {PROMPT_LEN} bytes")
        p_tokens, p_logits = generate(model, int(steps), prompt)
        p_top2 = p_logits.topk(2, dim=-1).values
        p_margin = float((p_top2[:, 0] - p_top2[:, 1]).min())
        assert p_margin >= MIN_MARGIN, f"{text!r}: a greedy choice is a near tie (margin {p_margin})"
        write_reference(directory, p_tokens, p_logits, prompt=prompt)
    print(f"tinyllm: prompt {list(PROMPT)} -> {tokens} (smallest top-2 margin {margin:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
