#!/usr/bin/env python3
"""compressed_examples.py [--gen PATH] [--out DIR]: the FeedForwardBlock and
tinyllm examples with f32 weights, and compressed by
coreai_torch.compression.quantize_weights to 8-bit and 4-bit (symmetric,
one f32 scale per 32 inputs):

  * the generated C (the runtime's host build, through coreai_torch.testing)
    against the compressed model in eager PyTorch: the largest absolute
    error over the output, relative to the output's largest magnitude
    (FeedForwardBlock: x [2, 16, 64], 32 rows: the GEMM path, and x
    [1, 1, 64]: the GEMV path; tinyllm: prefill of the 8-byte prompt and
    one decode step, each from a fresh cache);
  * `coreai-gen generate --stats`: weight_bytes and the path of every
    compressed layer (fused or fallback);
  * the bytes of the generated weights object (NAME_weights.c) and model
    object (NAME.c) as `size` reports them (text = code + .rodata), built
    with the host compiler and for Cortex-M7 (arm-none-eabi-gcc -mcpu=cortex-m7
    -mthumb -O2) when that compiler is installed.

Run with the project's .venv/bin/python from the repository root; needs a
built coreai-gen (default build/generator/coreai-gen, or $COREAI_GEN).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import coreai_torch  # noqa: E402
from coreai_torch import ExternalizeSpec, TorchConverter  # noqa: E402
from coreai_torch.composite_ops import RMSNormImpl  # noqa: E402
from coreai_torch.compression import quantize_weights  # noqa: E402
from coreai_torch.testing import run_program  # noqa: E402


def example(name):
    """examples/NAME/export.py as a module (tinyllm: the fixed-shape model
    these measurements are of, bench/quant/tinyllm_fixed.py)."""
    import importlib.util
    path = os.path.join(ROOT, "examples", name, "export.py")
    if name == "tinyllm":
        path = os.path.join(ROOT, "bench", "quant", "tinyllm_fixed.py")
    spec = importlib.util.spec_from_file_location(f"{name}_export", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ffn_model():
    ff = example("feedforward")
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = ff.FeedForwardBlock(dim=64, ff_dim=256).eval()
    with torch.no_grad():
        model.norm.weight.copy_(1.0 + 0.5 * torch.randn(64))
    return model


def ffn_convert(model, x):
    return (TorchConverter()
            .add_pytorch_module(model,
                                export_fn=lambda m: torch.export.export(m, args=(x,)).run_decompositions(
                                    coreai_torch.get_decomp_table()),
                                externalize_modules=[ExternalizeSpec(RMSNormImpl, "rms_norm",
                                                                     ["axes", "eps", "version"])],
                                input_names=["x"], output_names=["output"])
            .to_coreai())


def compress(model, how):
    if how == "f32":
        return model
    return quantize_weights(model, nbits={"int8": 8, "int4": 4}[how], block_size=32)


def rel_err(got, want):
    want = want.detach().numpy().astype(np.float64)
    return float(np.abs(np.asarray(got, np.float64) - want).max() / np.abs(want).max())


def ffn_errors(how, tmp):
    model = compress(ffn_model(), how)
    errs = {}
    program = None
    for rows, shape in (("32 rows", (2, 16, 64)), ("1 row", (1, 1, 64))):
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(3))
        with torch.no_grad():
            want = model(x)
        p = ffn_convert(model, x)
        p.optimize()
        got = run_program(p, [{"x": x}], workdir=tmp)[0]
        errs[rows] = rel_err(next(iter(got.values())), want)
        program = program or p
    return program, errs


def tinyllm_errors(how, tmp):
    tl = example("tinyllm")
    model = compress(tl.build_model(), how)
    model.reset_cache()
    with torch.no_grad():
        want_prefill = model(tl.prompt_tokens(), torch.tensor([0]))
        model.reset_cache()
        tok = int(want_prefill[0].argmax())
        want_decode = model(torch.tensor([[tok]]), torch.tensor([0]))
        model.reset_cache()
    program = tl.convert(model)
    got_p = run_program(program, [{"tokens": tl.prompt_tokens(), "position": torch.tensor([0])}], "prefill",
                        workdir=tmp)[0]
    got_d = run_program(program, [{"tokens": torch.tensor([[tok]]), "position": torch.tensor([0])}], "decode",
                        workdir=tmp)[0]
    return program, {"prefill": rel_err(got_p["logits"], want_prefill),
                     "decode": rel_err(got_d["logits"], want_decode)}


def size_of(cc, obj_args, src, out):
    # in the source's directory: the weights object .incbin's NAME_weights.bin
    subprocess.run([cc, *obj_args, "-std=c11", "-O2", "-I", os.path.join(ROOT, "runtime-stubs", "include"),
                    "-c", src, "-o", out], check=True, cwd=os.path.dirname(src))
    size = shutil.which(cc.replace("gcc", "size")) if cc.endswith("gcc") else shutil.which("size")
    line = subprocess.run([size or "size", out], capture_output=True, text=True, check=True).stdout.splitlines()[1]
    text, data, bss = (int(v) for v in line.split()[:3])
    return text + data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen", default=os.environ.get("COREAI_GEN", os.path.join(ROOT, "build/generator/coreai-gen")))
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    tmp = a.out or tempfile.mkdtemp(prefix="coreai-compressed-")
    os.makedirs(tmp, exist_ok=True)
    m7 = shutil.which("arm-none-eabi-gcc")
    m7_args = ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"]
    print(f"{'model':9} {'weights':7} {'error vs eager (max abs / max |ref|)':44} {'weight_bytes':>12} "
          f"{'host weights.o':>14} {'M7 weights.o':>12} {'M7 model.o':>10}  paths")
    for name, run in (("ffn", ffn_errors), ("tinyllm", tinyllm_errors)):
        for how in ("f32", "int8", "int4"):
            program, errs = run(how, tmp)
            d = os.path.join(tmp, f"{name}_{how}")
            os.makedirs(d, exist_ok=True)
            path = program.save(os.path.join(d, name))
            r = subprocess.run([a.gen, "generate", str(path), "-o", d, "--stats"], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(r.stderr)
            stats = r.stdout.splitlines()
            wbytes = next(int(ln.split()[1]) for ln in stats if ln.startswith("weight_bytes "))
            paths = [ln.split()[-1] for ln in stats if ln.startswith("compressed_weight ")]
            host = size_of(os.environ.get("CC", "cc"), [], os.path.join(d, f"{name}_weights.c"),
                           os.path.join(d, "w.o"))
            m7w = m7c = "-"
            if m7:
                m7w = size_of(m7, m7_args, os.path.join(d, f"{name}_weights.c"), os.path.join(d, "w7.o"))
                m7c = size_of(m7, m7_args, os.path.join(d, f"{name}.c"), os.path.join(d, "m7.o"))
            err = ", ".join(f"{k} {v:.2e}" for k, v in errs.items())
            summary = f"{paths.count('fused')} fused, {paths.count('fallback')} fallback" if paths else "-"
            print(f"{name:9} {how:7} {err:44} {wbytes:12d} {host:14d} {m7w!s:>12} {m7c!s:>10}  {summary}",
                  flush=True)


if __name__ == "__main__":
    main()
