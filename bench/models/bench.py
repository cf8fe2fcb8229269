#!/usr/bin/python3
"""Time the generated C of the benchmark models against PyTorch eager, in one
run, on one core (bench/run calls this; see bench/README.md).

  bench.py --build BUILD_DIR [--quick] [--models a,b,...] [--rounds N]
           [--block-ms MS] [--peak GFLOPS --peak-source TEXT] [--json FILE]

For every model (models.py):

* PyTorch: models.build(name) (seeded, the weights the build converted),
  eval(), torch.set_num_threads(1), torch.no_grad(), on the input the build
  wrote (data/<name>/input.f32). Its output is checked against the one the
  build saved (reference.f32), so the timed model is the converted one.
* ours: bench_<name>-driver --serve, a child process (so on the same core).
  One call's output is compared with PyTorch's: max abs error, and "WRONG"
  (exit status 1) above 1e-4 * max(1, max |PyTorch output|).
* Timing: ROUNDS rounds; each runs a block of ours then a block of PyTorch
  (A B A B ...). A block is W untimed warm-up calls, then K timed calls of
  ~BLOCK_MS in all (K from a first timing of each side, at least 1); every
  call is timed on its own (ours with CLOCK_MONOTONIC inside the driver,
  PyTorch with perf_counter_ns around model(x); gc off in both blocks).
  Reported: min and median of all timed calls of each side, ratio
  ours/PyTorch of the medians (and of the mins), GFLOP/s at the median
  (models.flops, analytic) and ours as a fraction of the FMA peak.

Pinning is done by the caller (bench/run: taskset -c CPU); this script checks
and prints the affinity. OPENBLAS_CORETYPE is read, never set.
"""

import argparse
import ctypes
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402

ERR_RTOL = 1e-4


# ---- environment ----

def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def cpu_times():
    """{cpu index: (busy, steal, total) jiffies} from /proc/stat."""
    out = {}
    try:
        with open("/proc/stat") as f:
            for line in f:
                parts = line.split()
                if parts[0].startswith("cpu") and parts[0] != "cpu":
                    v = [int(x) for x in parts[1:9]]
                    idle = v[3] + v[4]
                    out[int(parts[0][3:])] = (sum(v) - idle - v[7], v[7], sum(v))
    except (OSError, ValueError, IndexError):
        pass
    return out


def machine_noise(before, after, mine):
    """'CPU1 steal 0.3%; other CPUs busy 45%': what else ran during the timing."""
    words = []
    for c in sorted(after):
        if c not in before:
            continue
        busy, steal, total = (a - b for a, b in zip(after[c], before[c]))
        if total <= 0:
            continue
        if c in mine:
            words.append(f"CPU{c} (ours) steal {100 * steal / total:.1f}%")
        else:
            words.append(f"CPU{c} busy {100 * busy / total:.0f}% steal {100 * steal / total:.1f}%")
    return "; ".join(words) or "?"


def torch_blas():
    """(description, openblas core name or None): the BLAS libraries mapped
    into this process after a torch.mm, and OpenBLAS's own report."""
    a = torch.randn(64, 64)
    torch.mm(a, a)
    libs = []
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            base = os.path.basename(path)
            if any(k in base for k in ("blas", "lapack", "mkl_", "libdnnl", "libgomp")) and path not in libs:
                libs.append(path)
    desc = [p for p in libs if "blas" in os.path.basename(p) or "lapack" in os.path.basename(p)]
    core = config = None
    for p in libs:
        if "openblas" not in os.path.realpath(p):
            continue
        try:
            lib = ctypes.CDLL(p)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            lib.openblas_get_config.restype = ctypes.c_char_p
            core = lib.openblas_get_corename().decode()
            config = lib.openblas_get_config().decode()
            threads = lib.openblas_get_num_threads()
            config = f"{config}, {threads} thread(s)"
            break
        except (OSError, AttributeError):
            continue
    return desc, core, config


def torch_sgemm_gflops(n=512, reps=20):
    a, b = torch.randn(n, n), torch.randn(n, n)
    c = torch.empty(n, n)
    for _ in range(3):
        torch.mm(a, b, out=c)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.mm(a, b, out=c)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n ** 3 / best * 1e-9


LEAF_CONV_OPS = ("aten::_slow_conv2d_forward", "aten::mkldnn_convolution", "aten::_nnpack_spatial_convolution",
                 "aten::slow_conv_dilated2d", "aten::_convolution_depthwise2d", "aten::thnn_conv_depthwise2d")


def conv_ops(model, x):
    """{conv module name: the ATen kernel PyTorch ran it with}
    (_slow_conv2d_forward = im2col + BLAS sgemm, mkldnn_convolution = oneDNN)."""
    seen = {}

    def hook(name):
        def record(module, inputs, output):
            seen.setdefault(name, (module, inputs))  # returns None: the output is kept
        return record

    hooks = [m.register_forward_hook(hook(n)) for n, m in model.named_modules() if isinstance(m, torch.nn.Conv2d)]
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    result = {}
    for n, (m, inputs) in seen.items():
        with torch.no_grad(), torch.autograd.profiler.profile() as prof:
            m(*inputs)
        ops = [e.name for e in prof.function_events if e.name in LEAF_CONV_OPS]
        result[n] = ops[0].replace("aten::", "") if ops else "?"
    return result


# ---- ours: the driver ----

class Driver:
    def __init__(self, path, inputs):
        args = [path]
        for i in inputs:
            args += ["--in", i]
        self.proc = subprocess.Popen(args + ["--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)

    def _ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError(f"the driver exited (status {self.proc.wait()}) on: {line}")
        return reply.strip()

    def run(self, warmup, k):
        reply = self._ask(f"run {warmup} {k}").split()
        assert reply[0] == "ns" and len(reply) == k + 1, reply
        return [int(t) for t in reply[1:]]

    def output(self, path):
        assert self._ask(f"out {path}") == "ok"

    def close(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait()


# ---- PyTorch ----

def torch_run(model, x, warmup, k):
    for _ in range(warmup):
        model(x)
    t = []
    clock = time.perf_counter_ns
    for _ in range(k):
        t0 = clock()
        model(x)
        t.append(clock() - t0)
    return t


def read_f32(path, shape):
    return torch.from_numpy(np.fromfile(path, dtype="<f4").reshape(shape).copy())


def bench_model(name, entry, args, peak):
    cfg = models.MODELS[name]
    data = entry["data"]
    model, x_seeded = models.build(name)
    x = read_f32(os.path.join(data, "input.f32"), tuple(x_seeded.shape))
    res = {"name": name, "title": cfg["title"], "flops": models.flops(name), "target": cfg["target"]}
    with torch.no_grad():
        y = model(x)
        build_ref = read_f32(os.path.join(data, "reference.f32"), tuple(y.shape))
        res["torch_vs_build"] = float((y - build_ref).abs().max())
        if name == "convnet":
            res["conv_ops"] = conv_ops(model, x)

        drv = Driver(entry["driver"], [os.path.join(data, "input.f32")])
        try:
            out_path = os.path.join(args.build, f"bench_{name}.out.f32")
            drv.output(out_path)
            ours = read_f32(out_path, tuple(y.shape))
            res["max_abs_err"] = float((ours - y).abs().max())
            res["ref_max"] = float(y.abs().max())
            res["ok"] = bool(np.isfinite(res["max_abs_err"])
                             and res["max_abs_err"] <= ERR_RTOL * max(1.0, res["ref_max"]))

            # calibrate: calls per block of ~block_ms on each side
            t_ours = min(drv.run(1, 3)) * 1e-9
            t_torch = min(torch_run(model, x, 1, 3)) * 1e-9
            block = args.block_ms * 1e-3
            k_ours = max(1, int(round(block / max(t_ours, 1e-9))))
            k_torch = max(1, int(round(block / max(t_torch, 1e-9))))
            ours_t, torch_t, pair = [], [], []
            for _ in range(args.rounds):
                gc.disable()
                a = drv.run(args.warmup, k_ours)
                b = torch_run(model, x, args.warmup, k_torch)
                gc.enable()
                ours_t += a
                torch_t += b
                pair.append(statistics.median(a) / statistics.median(b))
        finally:
            drv.close()
    for side, t in (("ours", ours_t), ("torch", torch_t)):
        res[f"{side}_min_us"] = min(t) * 1e-3
        res[f"{side}_med_us"] = statistics.median(t) * 1e-3
        res[f"{side}_calls"] = len(t)
        res[f"{side}_gflops"] = res["flops"] / (res[f"{side}_med_us"] * 1e-6) * 1e-9
    res["ratio_med"] = res["ours_med_us"] / res["torch_med_us"]
    res["ratio_min"] = res["ours_min_us"] / res["torch_min_us"]
    res["ratio_rounds"] = statistics.median(pair)
    res["of_peak"] = res["ours_gflops"] / peak if peak else None
    return res


def measure_peak(manifest):
    """Fallback when bench/run has no bench/gemm peak: the driver's FMA loop."""
    driver = next(iter(manifest["models"].values()))["driver"]
    out = subprocess.run([driver, "--peak"], check=True, capture_output=True, text=True).stdout.split()
    # peak <isa> max <g> median <g> GFLOP/s
    return float(out[3]), f"bench_*-driver --peak ({out[1]} FMA loop, max of 8)"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="the build directory (build-bench)")
    parser.add_argument("--quick", action="store_true", help="few rounds (smoke run)")
    parser.add_argument("--models", help="comma-separated subset (default: every model of the build this"
                        " Python can build: resnet18 and mobilenetv2 need torchvision)")
    parser.add_argument("--rounds", type=int, help="A/B rounds per model (default 40, --quick 6)")
    parser.add_argument("--block-ms", type=float, help="time per block of calls (default 25, --quick 10)")
    parser.add_argument("--warmup", type=int, help="untimed calls before each block (default 2, --quick 1)")
    parser.add_argument("--peak", type=float, help="FMA peak GFLOP/s (else measured with the driver)")
    parser.add_argument("--peak-source", default="", help="where --peak comes from (printed)")
    parser.add_argument("--json", help="also write the results there")
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (6 if args.quick else 40)
    args.block_ms = args.block_ms or (10.0 if args.quick else 25.0)
    args.warmup = args.warmup if args.warmup is not None else (1 if args.quick else 2)
    args.build = os.path.abspath(args.build)

    with open(os.path.join(args.build, "bench", "models", "bench_models.json")) as f:
        manifest = json.load(f)
    if args.models is None:
        args.models = ",".join(n for n in manifest["models"] if models.available(n))
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    for n in [n for n in names if n in models.MODELS and not models.available(n)]:
        print(f"== {n} skipped: this Python cannot build it (torchvision)")
        names.remove(n)
    for n in names:
        if n not in manifest["models"]:
            parser.error(f"unknown model {n} (have {', '.join(manifest['models'])})")

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    affinity = sorted(os.sched_getaffinity(0))
    blas, core, config = torch_blas()
    print(f"== models bench {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}  load average {load_average()}"
          f"  ({os.cpu_count()} CPUs)")
    print(f"cpu: {cpu_model()}; pinned to CPU {','.join(map(str, affinity))}"
          + ("" if len(affinity) == 1 else "  WARNING: not pinned to one CPU"))
    print(f"ours: {manifest['c_compiler']}, {manifest['build_type']}, flags '{manifest['c_flags'].strip()}',"
          f" COREAI_NATIVE={manifest['native']} (runtime and models -march=native)")
    print(f"pytorch {torch.__version__}: {torch.get_num_threads()} thread, no_grad, eager;"
          f" OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')}")
    print(f"pytorch BLAS (mapped): {', '.join(blas) or '(none)'}")
    print(f"  OpenBLAS core {core or '?'} (OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}),"
          f" {config or '?'}; torch.mm 512^3: {torch_sgemm_gflops():.1f} GFLOP/s")
    if core is None:
        print("  WARNING: PyTorch does not use OpenBLAS here")
    if args.peak:
        peak, source = args.peak, args.peak_source or "--peak"
    else:
        peak, source = measure_peak(manifest)
    print(f"FMA peak: {peak:.1f} GFLOP/s ({source})")
    print(f"timing: {args.rounds} rounds of [ours block, PyTorch block], ~{args.block_ms:g} ms per block,"
          f" {args.warmup} warm-up call(s) before each; every call timed")
    print()

    results = []
    t0 = cpu_times()
    for n in names:
        r = bench_model(n, manifest["models"][n], args, peak)
        results.append(r)
        extra = ""
        if "conv_ops" in r:
            extra = "; PyTorch ran " + ", ".join(f"{k} with {v}" for k, v in r["conv_ops"].items())
        print(f"  {n}: {r['ours_calls']} + {r['torch_calls']} calls, PyTorch vs build-time reference"
              f" {r['torch_vs_build']:.1e}{extra}", flush=True)
        if not r["torch_vs_build"] <= ERR_RTOL * max(1.0, r["ref_max"]):
            print(f"  WARNING: PyTorch's {n} is not the model the build converted (rebuild: bench/run)")
    print()

    hdr = (f"{'model':<36} {'ours min':>9} {'ours med':>9} {'torch min':>9} {'torch med':>9}"
           f" {'ours/torch':>10} {'(min)':>6} {'(rnd)':>6} {'target':>6} {'MFLOP':>8} {'ours GF/s':>9} {'torch GF/s':>10}"
           f" {'of peak':>7} {'max|err|':>8}")
    print(hdr)
    print(f"{'':<36} {'us':>9} {'us':>9} {'us':>9} {'us':>9} {'(median)':>10}")
    print("-" * len(hdr))
    failed = []
    for r in results:
        meets = "" if r["ratio_med"] <= r["target"] else " !"
        status = "" if r["ok"] else "  WRONG"
        if not r["ok"]:
            failed.append(r["name"])
        print(f"{r['title']:<36} {r['ours_min_us']:9.1f} {r['ours_med_us']:9.1f} {r['torch_min_us']:9.1f}"
              f" {r['torch_med_us']:9.1f} {r['ratio_med']:9.3f}x {r['ratio_min']:5.2f}x {r['ratio_rounds']:5.2f}x"
              f" {r['target']:5.2f}{meets:1}"
              f" {r['flops'] / 1e6:8.2f} {r['ours_gflops']:9.1f} {r['torch_gflops']:10.1f}"
              f" {100 * r['of_peak']:6.1f}% {r['max_abs_err']:8.1e}{status}")
    print()
    print("ours/torch: ratio of the medians; (min): of the mins; (rnd): median over rounds of the ratio in the round;"
          " '!' = the median ratio is above the issue's target.\n"
          "GF/s at the median; of peak = ours GF/s / FMA peak.")
    print("FLOPs: 2*M*N*K per linear/GEMM, attention QK^T + PV dense (2*2*T*T*d), conv 2*outputs*Cin*kh*kw;"
          " norms, RoPE, softmax, activations not counted (bench/models/models.py).")
    print(f"load average after: {load_average()}; during the timing: {machine_noise(t0, cpu_times(), affinity)}"
          " (another CPU busy means other work shared the machine: rerun when quiet)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"peak_gflops": peak, "peak_source": source, "results": results}, f, indent=1)
    if failed:
        print(f"error: the generated C differs from PyTorch beyond {ERR_RTOL:g} * max|output|: {', '.join(failed)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
