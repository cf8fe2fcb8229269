"""Decode step vs prefill of one symbolic model (bench/symbolic/README.md).

Exports a small decoder layer with a dynamic query length `seq` and cached
length `past` (bounds 128 each), generates its C once, and times one call
at several (seq, past) pairs: the generated C (driver.c, pinned to one
core) and PyTorch eager on the same model and sizes, in the same run.
Usage: bench.py BUILD_DIR RUNTIME_LIB (run.sh passes them)."""

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "python"))
from coreai_torch import TorchConverter, get_decomp_table  # noqa: E402
from coreai_torch.composite_ops import SDPA, RMSNorm, RoPE  # noqa: E402

D, H, F, MAX = 256, 4, 512, 128


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.n1, self.n2, self.rope, self.attn = RMSNorm(D), RMSNorm(D), RoPE(), SDPA(is_causal=True)
        self.qkv, self.o = nn.Linear(D, 3 * D, bias=False), nn.Linear(D, D, bias=False)
        self.up, self.down = nn.Linear(D, 2 * F, bias=False), nn.Linear(F, D, bias=False)

    def forward(self, x, pos, kpast, vpast):
        s = x.shape[1]
        q, k, v = self.qkv(self.n1(x)).reshape(1, s, 3, H, D // H).permute(2, 0, 3, 1, 4)
        q, k = self.rope(q, position_ids=pos), self.rope(k, position_ids=pos)
        k, v = torch.cat([kpast, k], dim=2), torch.cat([vpast, v], dim=2)
        x = x + self.o(self.attn(q, k, v).transpose(1, 2).reshape(1, s, D))
        g, u = self.up(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(torch.nn.functional.silu(g) * u)


def inputs(seq, past):
    return (torch.randn(1, seq, D), torch.arange(past, past + seq).unsqueeze(0), torch.randn(1, H, past, D // H),
            torch.randn(1, H, past, D // H))


def torch_us(model, args, n=50):
    with torch.no_grad():
        for _ in range(5):
            model(*args)
        t = []
        for _ in range(n):
            t0 = time.perf_counter()
            model(*args)
            t.append((time.perf_counter() - t0) * 1e6)
    return min(t), float(np.median(t))


def main():
    build, runtime_lib = Path(sys.argv[1]), sys.argv[2]
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Layer().eval()
    s, p = torch.export.Dim("seq", min=1, max=MAX), torch.export.Dim("past", min=0, max=MAX)
    ep = torch.export.export(model, inputs(3, 2), dynamic_shapes={"x": {1: s}, "pos": {1: s}, "kpast": {2: p},
                                                                   "vpast": {2: p}}).run_decompositions(
        get_decomp_table())
    prog = TorchConverter().add_exported_program(ep).to_coreai()
    path = prog.save(build / "layer")
    gen = str(HERE.parents[1] / "build-bench-sym" / "generator" / "coreai-gen")
    stats = subprocess.run([gen, "generate", str(path), "-o", str(build / "c"), "--prefix", "m",
                            "--weights-format", "c", "--stats"], check=True, capture_output=True, text=True).stdout
    print(stats.strip())
    inc = HERE.parents[1] / "runtime-stubs" / "include"
    exe = build / "driver"
    subprocess.run(["cc", "-std=c11", "-O2", "-I", str(inc), "-I", str(build / "c"), str(HERE / "driver.c"),
                    str(build / "c" / "m.c"), str(build / "c" / "m_weights.c"), runtime_lib, "-lm", "-lpthread",
                    "-o", str(exe)], check=True)
    cases = [("decode", 1, MAX - 1), ("decode", 1, 0), ("chunk", 8, 64), ("prefill", 32, 0), ("prefill", MAX, 0)]
    print(f"{'call':8} {'seq':>4} {'past':>4} {'C min us':>9} {'torch min':>9} {'C/torch':>8} "
          f"{'C/C(prefill max)':>16} {'seq/max':>8}")
    rows = []
    for name, seq, past in cases:
        out = subprocess.run(["taskset", "-c", "1", str(exe), f"seq={seq}", f"past={past}", "-n", "100"],
                             check=True, capture_output=True, text=True).stdout
        c_min = float(out.split("min=")[1].split()[0])
        t_min, _ = torch_us(model, inputs(seq, past))
        rows.append((name, seq, past, c_min, t_min))
    full = rows[-1][3]
    for name, seq, past, c_min, t_min in rows:
        print(f"{name:8} {seq:4} {past:4} {c_min:9.1f} {t_min:9.1f} {c_min / t_min:8.2f} {c_min / full:16.3f} "
              f"{seq / MAX:8.3f}")


if __name__ == "__main__":
    main()
