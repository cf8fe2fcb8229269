#!/usr/bin/python3
"""Export the tinyllm example: a Qwen3-style decoder whose KV cache is state.

The model is coreai_torch.testing_llm.TinyQwen (docs/llm-workflow.md) at
the sizes below, seeded, untrained: vocab 256 (bytes), hidden 64, 2 layers,
4 query heads / 2 key-value heads of 16, gated MLP 128, max context 64.
RMSNorm (also per head over the fused query/key heads), RoPE at
position_ids and causal SDPA are composite ops; the caches

    k_cache, v_cache   f32 [2, 1, 2, 64, 16]

are user inputs the model mutates through a custom update-and-fetch op,
lowered to coreai.slice_update. One export, two entrypoints sharing the
caches, any length up to the context:

    prefill(input_ids i64[1, query_len], position_ids i64[1, seq_len])
    main   (input_ids i64[1, query_len], position_ids i64[1, seq_len]) -> logits f32[1, query_len, 256]

A generation: prefill the prompt but its last token, then `main` on the
last prompt token and on each generated token, seq_len growing by one.

  export.py --output DIR/NAME.xml   write the model (+ NAME.weights): the build
                                    runs this (coreai_add_model PYTHON_SCRIPT)
  export.py --output ... --reference DIR
                                    also write PyTorch's greedy generation for
                                    the fixed prompt: DIR/reference_prompt.txt,
                                    reference_tokens.txt (one per main call) and
                                    reference_logits.npy (f32 [1 + steps, 256])
  --steps N                         decode steps of the reference (default 32)
  --prompt-reference TEXT STEPS DIR the same for another prompt (any length
                                    1..64 bytes; repeatable)

Before writing anything the script checks, in PyTorch, that the cached
generation equals a recomputation of the whole sequence and that no greedy
choice is a near tie (top-2 margin >= 1e-3), so the C tokens can be
required to match exactly.

Run with the project's .venv/bin/python; PYTHONPATH must reach this
repository's python/ directory (the build sets it).
"""

import argparse
import io
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from coreai_torch.testing_llm import LLMConfig, TinyQwen, export_llm  # noqa: E402

CONFIG = LLMConfig(vocab=256, hidden=64, intermediate=128, layers=2, heads=4, kv_heads=2, head_dim=16,
                   max_seq=64, eps=1e-5)
SEED = 5
PROMPT = b"Core AI!"
MIN_MARGIN = 1e-3  # smallest allowed gap between the best and second-best logit


def build_model():
    torch.set_num_threads(1)
    return TinyQwen(CONFIG, seed=SEED).eval()


def call(model, ids, seq, k, v, prefill=False):
    model.prefill_mode = prefill
    try:
        with torch.no_grad():
            return model(torch.tensor([ids]), torch.arange(seq).unsqueeze(0), k, v)
    finally:
        model.prefill_mode = False


def generate(model, steps, prompt=PROMPT):
    """Greedy generation with the cache, as main.c runs it. Returns (tokens
    [1 + steps], logits [1 + steps, vocab]): one per main call."""
    k, v = model.new_cache()
    n = len(prompt)
    if n > 1:
        call(model, list(prompt[:-1]), n - 1, k, v, prefill=True)
    out = call(model, [prompt[-1]], n, k, v)
    tokens, logits = [], []
    for step in range(steps + 1):
        logits.append(out[0, -1].clone())
        tokens.append(int(out[0, -1].argmax()))
        if step < steps:
            out = call(model, [tokens[-1]], n + step + 1, k, v)
    return tokens, torch.stack(logits)


def check(model, prompt, tokens, logits):
    """The cached logits equal one forward over the whole sequence, and no
    greedy choice is a near tie."""
    seq = list(prompt) + tokens[:-1]
    full = call(model, seq, len(seq), *model.new_cache())[0, len(prompt) - 1:]
    err = float((full - logits).abs().max())
    assert err < 1e-4, f"cached logits differ from a full recompute by {err}"
    top2 = logits.topk(2, dim=-1).values
    margin = float((top2[:, 0] - top2[:, 1]).min())
    assert margin >= MIN_MARGIN, f"{prompt!r}: a greedy choice is a near tie (margin {margin})"
    return margin


def write_file(path, data):
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)


def write_reference(directory, tokens, logits, prompt):
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
                        default=[], help="also write the reference of another prompt")
    args = parser.parse_args(argv)
    if not 0 <= args.steps <= CONFIG.max_seq - len(PROMPT):
        parser.error(f"--steps must be in 0..{CONFIG.max_seq - len(PROMPT)}")

    model = build_model()
    refs = [(PROMPT, args.steps, args.reference)]
    for text, steps, directory in args.prompt_reference:
        prompt = text.encode()
        if not 1 <= len(prompt) <= CONFIG.max_seq - int(steps):
            parser.error(f"--prompt-reference: {text!r} and {steps} steps do not fit the context "
                         f"({CONFIG.max_seq} tokens)")
        refs.append((prompt, int(steps), directory))
    results = []
    for prompt, steps, directory in refs:
        tokens, logits = generate(model, steps, prompt)
        margin = check(model, prompt, tokens, logits)
        results.append((prompt, tokens, logits, directory, margin))

    export_llm(model).save(args.output)
    for prompt, tokens, logits, directory, margin in results:
        if directory:
            write_reference(directory, tokens, logits, prompt)
        print(f"tinyllm: prompt {prompt!r} -> {tokens} (smallest top-2 margin {margin:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
