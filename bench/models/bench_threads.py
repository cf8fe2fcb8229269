#!/usr/bin/python3
"""Our generated C with 1 thread against itself with 2 threads, interleaved,
and no other runtime in the run (no onnxruntime, no PyTorch: their thread
pools spin after a call and take a CPU from ours).

  bench_threads.py --build BUILD [--models a,b] [--rounds N] [--block-ms MS] [--cpus 0,1]

For every model: two children, bench_<name>-driver --serve --threads 1
(pinned to the last of --cpus) and --threads 2 (pinned to the first two),
started together; ROUNDS rounds of [1-thread block, 2-thread block], each
~BLOCK_MS of calls after one warm-up call and a 5 ms pause, every call
timed on its own by the driver. Prints the min over all calls of each and
their ratio (the speedup). On a shared machine run it with both CPUs free
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
    parser.add_argument("--models", default="ffn,llama256,qwen2,llama1024")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--block-ms", type=float, default=15.0)
    parser.add_argument("--cpus", default="0,1")
    args = parser.parse_args(argv)
    with open(os.path.join(os.path.abspath(args.build), "bench", "models", "bench_models.json")) as f:
        man = json.load(f)
    cpus = [int(c) for c in args.cpus.split(",")]
    if len(cpus) < 2:
        parser.error("--cpus needs two CPUs")
    names = [n for n in args.models.split(",") if n]
    for name in names:
        if name not in man["models"]:
            print(f"bench_threads.py: {name} is not in {args.build}", file=sys.stderr)
            return 1
    print(f"== ours 1 thread vs 2 threads, {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())},"
          f" load {bench.load_average()}; {args.rounds} rounds of ~{args.block_ms:g} ms blocks, min of every call")
    for name in names:
        entry = man["models"][name]
        inputs = [os.path.join(entry["data"], "input.f32")]
        drivers = {1: PinnedDriver(entry["driver"], inputs, 1, cpus[-1:]),
                   2: PinnedDriver(entry["driver"], inputs, 2, cpus[:2])}
        try:
            per_call = {t: min(d.run(1, 3)) for t, d in drivers.items()}
            ks = {t: max(1, int(args.block_ms * 1e6 / per_call[t])) for t in drivers}
            times = {t: [] for t in drivers}
            for _ in range(args.rounds):
                for t, d in drivers.items():
                    time.sleep(0.005)
                    times[t] += d.run(1, ks[t])
        finally:
            for d in drivers.values():
                d.close()
        m1, m2 = min(times[1]) * 1e-3, min(times[2]) * 1e-3
        print(f"  {name:<10} 1 thread {m1:10.1f} us   2 threads {m2:10.1f} us   speedup {m1 / m2:5.2f}x", flush=True)
    print(f"load average after: {bench.load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
