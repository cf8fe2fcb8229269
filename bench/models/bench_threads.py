#!/usr/bin/python3
"""Our generated C with 1 thread against itself with 2 threads, interleaved,
and no other runtime in the run (no onnxruntime, no PyTorch: their thread
pools spin after a call and take a CPU from ours).

  bench_threads.py --build BUILD [--base-build OLD] [--models a,b] [--rounds N] [--block-ms MS] [--cpus 0,1]

For every model: two children, bench_<name>-driver --serve --threads 1
(pinned to the last of --cpus) and --threads 2 (pinned to the first two),
started together; ROUNDS rounds of [1-thread block, 2-thread block], each
~BLOCK_MS of calls after one warm-up call and a 5 ms pause, every call
timed on its own by the driver. Prints the min over all calls of each and
their ratio (the speedup). --base-build OLD: OLD's two drivers run in the
same rounds, the four blocks interleaved, and each time is also given as
BUILD / OLD (a change measured against the build before it, both seeing
the same machine). On a shared machine run it with both CPUs free
(`chrt -f 1` gives them to it, bench/README.md).
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402  (Driver)


class PinnedDriver(bench.Driver):
    def __init__(self, path, inputs, threads, cpus):
        args = ["taskset", "-c", ",".join(str(c) for c in cpus), path]
        for i in inputs:
            args += ["--in", i]
        self.proc = subprocess.Popen(args + ["--threads", str(threads), "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="bench build directory")
    parser.add_argument("--base-build", help="an older bench build, run interleaved for comparison")
    parser.add_argument("--models", default="ffn,llama256,qwen2,llama1024")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--block-ms", type=float, default=15.0)
    parser.add_argument("--cpus", default="0,1")
    args = parser.parse_args(argv)
    builds = [args.build] + ([args.base_build] if args.base_build else [])
    mans = []
    for b in builds:
        with open(os.path.join(os.path.abspath(b), "bench", "models", "bench_models.json")) as f:
            mans.append(json.load(f))
    man = mans[0]
    cpus = [int(c) for c in args.cpus.split(",")]
    if len(cpus) < 2:
        parser.error("--cpus needs two CPUs")
    names = [n for n in args.models.split(",") if n]
    for name in names:
        for b, m in zip(builds, mans):
            if name not in m["models"]:
                print(f"bench_threads.py: {name} is not in {b}", file=sys.stderr)
                return 1
    print(f"== ours 1 thread vs 2 threads, {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())},"
          f" load {bench.load_average()}; {args.rounds} rounds of ~{args.block_ms:g} ms blocks, min of every call")
    for name in names:
        entry = man["models"][name]
        inputs = [os.path.join(entry["data"], "input.f32")]
        # keys (build index, threads); the base build's drivers read the same input
        drivers = {}
        # each build's own driver, found in its own tree: the manifest's path
        # is absolute, and a copied build tree would still name the original
        paths = [os.path.join(os.path.abspath(b), "bench", "models", os.path.basename(m["models"][name]["driver"]))
                 for b, m in zip(builds, mans)]
        if len(paths) > 1 and os.path.samefile(paths[0], paths[1]):
            print(f"bench_threads.py: --build and --base-build run the same driver {paths[0]}", file=sys.stderr)
            return 1
        for i, path in enumerate(paths):
            drivers[(i, 1)] = PinnedDriver(path, inputs, 1, cpus[-1:])
            drivers[(i, 2)] = PinnedDriver(path, inputs, 2, cpus[:2])
        try:
            per_call = {key: min(d.run(1, 3)) for key, d in drivers.items()}
            ks = {key: max(1, int(args.block_ms * 1e6 / per_call[key])) for key in drivers}
            times = {key: [] for key in drivers}
            for _ in range(args.rounds):
                for key, d in drivers.items():
                    time.sleep(0.005)
                    times[key] += d.run(1, ks[key])
        finally:
            for d in drivers.values():
                d.close()
        best = {key: min(t) * 1e-3 for key, t in times.items()}
        m1, m2 = best[(0, 1)], best[(0, 2)]
        print(f"  {name:<10} 1 thread {m1:10.1f} us   2 threads {m2:10.1f} us   speedup {m1 / m2:5.2f}x", flush=True)
        if len(mans) > 1:
            b1, b2 = best[(1, 1)], best[(1, 2)]
            print(f"  {'  base':<10} 1 thread {b1:10.1f} us   2 threads {b2:10.1f} us   speedup {b1 / b2:5.2f}x"
                  f"   build/base: 1 thread {m1 / b1:5.3f}, 2 threads {m2 / b2:5.3f}", flush=True)
    print(f"load average after: {bench.load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
