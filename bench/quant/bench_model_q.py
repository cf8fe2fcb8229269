#!/usr/bin/python3
"""The compressed-weight models through their generated C: the llama1024
block (bench/models/models.py: dim 1024, 16 heads, SwiGLU 2816; 51 MB of
f32 weights) for one token (the decode step) and for its 128-token prompt
(prefill), with f32, 8-bit and 4-bit weights (coreai_torch.compression.
quantize_weights, one f32 scale per 32 inputs), timed in one run.

  bench_model_q.py --build BUILD [--rounds N] [--block-ms MS]

BUILD is a bench build (bench/run's build-bench, COREAI_BUILD_BENCH=ON)
with the target bench-quant-models built. For each of the six models:

* its driver's output (bench/models/driver.c --serve) against the model in
  eager PyTorch, compressed weights included (models.build rebuilds it):
  max abs error relative to max |output|; "WRONG" and exit status 1 above
  1e-4 of it;
* `--info`: the weights' bytes in the image;
* timing: ROUNDS rounds, each a block of ~BLOCK_MS of calls of every model
  in turn (interleaved, so the host's drift falls on all of them), each call
  timed on its own by the driver (CLOCK_MONOTONIC); min and median per
  model, and f32 / int8, f32 / int4 of both, per step.

Pin it with taskset (bench/quant/run.sh does). Eager PyTorch is the oracle
here, not a timed peer: bench/run times the f32 model against PyTorch and
onnxruntime.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "models"))

import torch  # noqa: E402

import bench  # noqa: E402  (bench/models/bench.py: Driver, read_f32)
import models  # noqa: E402

STEPS = (("decode", "llama1024_t1"), ("prefill", "llama1024"))
KINDS = ("f32", "int8", "int4")
ERR_RTOL = 1e-4


def model_name(base, kind):
    return base if kind == "f32" else f"{base}_{kind}"


def entries(build):
    found = {}
    for manifest in ("bench_models.json", "bench_quant_models.json"):
        path = os.path.join(build, "bench", "models", manifest)
        if not os.path.exists(path):
            sys.exit(f"bench_model_q.py: no {path} (configure with -DCOREAI_BUILD_BENCH=ON and build bench-quant-models)")
        with open(path) as f:
            found.update(json.load(f)["models"])
    return found


def weight_bytes(driver):
    info = subprocess.run([driver, "--info"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"weights (\d+) bytes", info)
    return int(m.group(1)) if m else -1


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--block-ms", type=float, default=20.0)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    found = entries(args.build)
    names = [model_name(base, k) for _, base in STEPS for k in KINDS]
    missing = [n for n in names if n not in found or not os.path.exists(found[n]["driver"])]
    if missing:
        sys.exit(f"bench_model_q.py: not built: {', '.join(missing)} (cmake --build {args.build} "
                 "--target bench-quant-models)")

    print(f"== the llama1024 block's generated C with f32 / int8 / int4 weights, {args.rounds} rounds of "
          f"~{args.block_ms:g} ms blocks, interleaved; load {bench.load_average()}")
    print(f"cpu: {bench.cpu_model()}; affinity {sorted(os.sched_getaffinity(0))}")
    drivers, res, ok = {}, {}, True
    tmp = tempfile.mkdtemp(prefix="bench_model_q.")
    try:
        for n in names:
            e = found[n]
            model, xs = models.build(n)
            x = bench.read_f32(os.path.join(e["data"], "input.f32"), tuple(xs.shape))
            with torch.no_grad():
                y = model(x)
            d = bench.Driver(e["driver"], [os.path.join(e["data"], "input.f32")])
            drivers[n] = d
            out = os.path.join(tmp, f"{n}.f32")
            d.output(out)
            err = float((bench.read_f32(out, tuple(y.shape)) - y).abs().max()) / max(1e-30, float(y.abs().max()))
            good = err <= ERR_RTOL
            ok = ok and good
            res[n] = {"err": err, "ok": good, "weights": weight_bytes(e["driver"]), "t": []}
        ks = {n: max(1, int(round(args.block_ms * 1e-3 / max(min(drivers[n].run(1, 3)) * 1e-9, 1e-9))))
              for n in names}
        for _ in range(args.rounds):
            for n in names:
                res[n]["t"] += drivers[n].run(1, ks[n])
    finally:
        for d in drivers.values():
            d.close()
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)

    print()
    print(f"{'step':8} {'weights':7} {'bytes':>10} {'us min':>10} {'us median':>10} {'f32/this min':>12} "
          f"{'(median)':>9} {'rel err':>9}")
    for step, base in STEPS:
        f32 = res[model_name(base, "f32")]
        fmin, fmed = min(f32["t"]), statistics.median(f32["t"])
        for k in KINDS:
            r = res[model_name(base, k)]
            tmin, tmed = min(r["t"]), statistics.median(r["t"])
            print(f"{step:8} {k:7} {r['weights']:10d} {tmin / 1e3:10.1f} {tmed / 1e3:10.1f} {fmin / tmin:11.2f}x "
                  f"{fmed / tmed:8.2f}x {r['err']:9.1e}{'' if r['ok'] else '  WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
