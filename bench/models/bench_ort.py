#!/usr/bin/python3
"""The benchmark models (models.py): ours (the default build, and optionally a
COREAI_NATIVE=ON build) against onnxruntime and PyTorch eager, in one run,
interleaved, with 1 and 2 threads.

  bench_ort.py --build BUILD [--native-build BUILD2] [--models a,b] [--threads 1,2]
               [--rounds N] [--block-ms MS] [--cpus 1|0,1]

For every model (models.py) and thread count T:

* ours: bench_<name>-driver --serve --threads T (coreai_runner_pool), a child
  process; its output is checked against PyTorch's (1e-4 * max|y|).
* onnxruntime: the PyTorch model exported with torch.onnx.export (TorchScript
  exporter, opset 17) into BUILD/bench/onnx/<name>.onnx, an InferenceSession
  with ORT_ENABLE_ALL, intra_op_num_threads=T, inter_op_num_threads=1,
  sequential execution; output checked against PyTorch's too.
* PyTorch eager: torch.set_num_threads(T), no_grad.
* Pinning: T = 1 on the last CPU of --cpus, T = 2 on the first two
  (os.sched_setaffinity before the children start; they inherit it).
* Timing: ROUNDS rounds of [ours block, (ours native block), ORT block,
  PyTorch block], each ~BLOCK_MS of calls after one warm-up call and a 20 ms
  pause (so the thread pools of the previous side, which spin after a call,
  are asleep), every call timed on its own. Reported: the min over all calls of each side (the
  machine is shared: min-of-N is the least noisy), the ratios of the mins.
"""

import argparse
import gc
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402  (Driver, read_f32, environment helpers)
import models  # noqa: E402

import onnxruntime as ort  # noqa: E402


class ThreadedDriver(bench.Driver):
    def __init__(self, path, inputs, threads):
        import subprocess
        args = [path]
        for i in inputs:
            args += ["--in", i]
        self.proc = subprocess.Popen(args + ["--threads", str(threads), "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)


def ort_session(path, threads):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def timed(fn, warmup, k):
    for _ in range(warmup):
        fn()
    t = []
    clock = time.perf_counter_ns
    for _ in range(k):
        t0 = clock()
        fn()
        t.append(clock() - t0)
    return t


def bench_one(name, entry, native_entry, threads, args):
    model, x_seeded = models.build(name)
    x = bench.read_f32(os.path.join(entry["data"], "input.f32"), tuple(x_seeded.shape))
    torch.set_num_threads(threads)
    onnx_dir = os.path.join(args.build, "bench", "onnx")
    os.makedirs(onnx_dir, exist_ok=True)
    onnx_path = os.path.join(onnx_dir, f"{name}.onnx")
    with torch.no_grad():
        y = model(x)
        if not os.path.exists(onnx_path):
            torch.onnx.export(model, (x,), onnx_path, dynamo=False, opset_version=17,
                              input_names=["x"], output_names=["y"])
    sess = ort_session(onnx_path, threads)
    feed = {sess.get_inputs()[0].name: x.numpy()}
    y_ort = sess.run(None, feed)[0]
    tol = 1e-4 * max(1.0, float(y.abs().max()))
    res = {"name": name, "threads": threads, "ort_err": float(np.abs(y_ort - y.numpy()).max())}
    sides = {}
    drivers = []
    try:
        inputs = [os.path.join(entry["data"], "input.f32")]
        drv = ThreadedDriver(entry["driver"], inputs, threads)
        drivers.append(drv)
        sides["ours"] = lambda w, k: drv.run(w, k)
        if native_entry is not None:
            ndrv = ThreadedDriver(native_entry["driver"], inputs, threads)
            drivers.append(ndrv)
            sides["native"] = lambda w, k: ndrv.run(w, k)
        for tag, d in (("ours", drv),) + ((("native", drivers[1]),) if native_entry is not None else ()):
            out = os.path.join(args.build, f"bench_{name}.t{threads}.{tag}.f32")
            d.output(out)
            err = float((bench.read_f32(out, tuple(y.shape)) - y).abs().max())
            res[f"{tag}_err"] = err
            res[f"{tag}_ok"] = bool(np.isfinite(err) and err <= tol)
        with torch.no_grad():
            sides["ort"] = lambda w, k: timed(lambda: sess.run(None, feed), w, k)
            sides["torch"] = lambda w, k: timed(lambda: model(x), w, k)
            per_call = {s: min(f(1, 3)) * 1e-9 for s, f in sides.items()}
            ks = {s: max(1, int(round(args.block_ms * 1e-3 / max(t, 1e-9)))) for s, t in per_call.items()}
            times = {s: [] for s in sides}
            for _ in range(args.rounds):
                gc.disable()
                for s, f in sides.items():
                    # the other sides' pools (ours, ORT's, OpenMP's) spin a
                    # while after their last call: let them go to sleep
                    time.sleep(0.02)
                    times[s] += f(1, ks[s])
                gc.enable()
    finally:
        for d in drivers:
            d.close()
    for s, t in times.items():
        res[f"{s}_min_us"] = min(t) * 1e-3
        res[f"{s}_med_us"] = statistics.median(t) * 1e-3
    res["ours_ort"] = res["ours_min_us"] / res["ort_min_us"]
    res["ours_torch"] = res["ours_min_us"] / res["torch_min_us"]
    if native_entry is not None:
        res["ours_native"] = res["ours_min_us"] / res["native_min_us"]
    return res


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="bench build directory of the default (portable) build")
    parser.add_argument("--native-build", help="bench build directory configured with COREAI_NATIVE=ON")
    parser.add_argument("--models", help="comma-separated subset (default: every model of the build this Python"
                        " can build: resnet18 and mobilenetv2 need torchvision)")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--block-ms", type=float, default=20.0)
    parser.add_argument("--cpus", default="0,1", help="CPUs to pin to (T = 1 uses the last)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    args.build = os.path.abspath(args.build)

    def manifest_of(build):
        with open(os.path.join(build, "bench", "models", "bench_models.json")) as f:
            return json.load(f)

    man = manifest_of(args.build)
    nat = manifest_of(os.path.abspath(args.native_build)) if args.native_build else None
    cpus = [int(c) for c in args.cpus.split(",")]
    if args.models is None:
        args.models = ",".join(n for n in man["models"] if models.available(n))
    names = [n for n in args.models.split(",") if n]
    for n in [n for n in names if n in models.MODELS and not models.available(n)]:
        print(f"== {n} skipped: this Python cannot build it (torchvision)")
        names.remove(n)
    thread_counts = [int(t) for t in args.threads.split(",")]
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    print(f"== ours vs onnxruntime {ort.__version__} vs PyTorch {torch.__version__} eager,"
          f" {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, load {bench.load_average()}")
    print(f"cpu: {bench.cpu_model()}; ours: {man['c_compiler']} '{man['c_flags'].strip()}'"
          f" COREAI_NATIVE={man['native']}" + (f"; native build: COREAI_NATIVE={nat['native']}" if nat else ""))
    print(f"timing: {args.rounds} rounds of interleaved blocks (~{args.block_ms:g} ms each), min of every call")
    results = []
    t0 = bench.cpu_times()
    for threads in thread_counts:
        pin = {cpus[-1]} if threads == 1 else set(cpus[:threads])
        os.sched_setaffinity(0, pin)
        for n in names:
            r = bench_one(n, man["models"][n], nat["models"][n] if nat else None, threads, args)
            r["pinned"] = sorted(pin)
            results.append(r)
            print(f"  {n} T={threads} pinned {sorted(pin)}: done", flush=True)
    print()
    hdr = (f"{'model':<34} {'T':>2} {'ours':>9} " + (f"{'native':>9} " if nat else "")
           + f"{'ORT':>9} {'eager':>9} {'ours/ORT':>8} {'ours/eager':>10}" + (f" {'ours/native':>11}" if nat else "")
           + f" {'err ours':>8} {'err ORT':>8}")
    print(hdr)
    print(f"{'':<34} {'':>2} {'us min':>9} " + (f"{'us min':>9} " if nat else "") + f"{'us min':>9} {'us min':>9}")
    print("-" * len(hdr))
    failed = []
    for r in results:
        title = models.MODELS[r["name"]]["title"]
        line = f"{title:<34} {r['threads']:>2} {r['ours_min_us']:9.1f} "
        if nat:
            line += f"{r['native_min_us']:9.1f} "
        line += (f"{r['ort_min_us']:9.1f} {r['torch_min_us']:9.1f} {r['ours_ort']:7.2f}x {r['ours_torch']:9.2f}x")
        if nat:
            line += f" {r['ours_native']:10.3f}x"
        line += f" {r['ours_err']:8.1e} {r['ort_err']:8.1e}"
        if not r["ours_ok"] or (nat and not r["native_ok"]):
            line += "  WRONG"
            failed.append(r["name"])
        print(line)
    print()
    by = {(r["name"], r["threads"]): r for r in results}
    for n in names:
        if (n, 1) in by and (n, 2) in by:
            print(f"{models.MODELS[n]['title']:<34} 2 threads vs 1: ours {by[(n, 1)]['ours_min_us'] / by[(n, 2)]['ours_min_us']:.2f}x,"
                  f" ORT {by[(n, 1)]['ort_min_us'] / by[(n, 2)]['ort_min_us']:.2f}x,"
                  f" eager {by[(n, 1)]['torch_min_us'] / by[(n, 2)]['torch_min_us']:.2f}x")
    print(f"load average after: {bench.load_average()}; during: {bench.machine_noise(t0, bench.cpu_times(), set(cpus))}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if failed:
        print(f"error: outputs differ from PyTorch: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
