#!/usr/bin/python3
"""Where the generated C spends its time: `perf record` on each model's
timing driver, samples attributed to the runtime kernel the generated code
called (bench/run --perf runs this; see bench/README.md).

  perf_breakdown.py --build BUILD_DIR [--models a,b] [--seconds S] [--cpu N]

Per model: `perf record -e cpu-clock -F 1000 --call-graph dwarf,65528` of
`bench_<name>-driver --repeat N` (N calls of ~S seconds in all) pinned to
CPU N. Every sample whose stack goes through the driver's call of the entrypoint
(bench_call_model) is charged to the outermost frame below it that is not
generated code (bench_<name>_*): the kernel the generated graph called,
coreai_linear_packed_f32, coreai_sdpa_f32, ... (a sample in the generated
code itself counts as "(generated code)"); the rest (loading, the driver's
clock reads) is left out. A kernel that tail-calls a static helper shows
as that helper (e.g. `grouped` for coreai_instance_norm_f32). For each kernel the
table shows its share of the model's time, that share of the median
latency in microseconds, and the leaf functions the samples were in
(e.g. libm's exp inside swiglu). The large dwarf stack copy is needed
because the GEMM's frame (its packing buffers) is big.
"""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys


def record(driver, data_dir, cpu, seconds, out):
    inp = os.path.join(data_dir, "input.f32")
    probe = subprocess.run(["taskset", "-c", str(cpu), driver, "--in", inp, "--repeat", "3"],
                           check=True, capture_output=True, text=True).stdout
    med_us = float(re.search(r"median=([0-9.]+)", probe).group(1))
    repeat = max(5, int(seconds * 1e6 / max(med_us, 1.0)))
    res = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000", "--call-graph", "dwarf,65528",
                          "-o", out, "--", "taskset", "-c", str(cpu), driver, "--in", inp, "--repeat", str(repeat)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"perf record failed: {res.stderr.strip()}")
    m = re.search(r"median=([0-9.]+)", res.stdout)
    return float(m.group(1)) if m else med_us, repeat


def samples(path):
    """Yields each sample's stack as a list of symbols, leaf first."""
    proc = subprocess.Popen(["perf", "script", "-i", path, "-F", "ip,sym"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    stack = []
    for line in proc.stdout:
        s = line.strip()
        if not s:
            if stack:
                yield stack
            stack = []
            continue
        parts = s.split(None, 1)  # "<ip> <symbol>[ (inlined)]"
        sym = parts[1] if len(parts) == 2 else "[unknown]"
        stack.append(sym.replace(" (inlined)", "").split("+0x")[0])
    if stack:
        yield stack
    proc.wait()


ANCHOR = "bench_call_model"  # driver.c: the (noinline) call of the entrypoint


def breakdown(path, prefix):
    generated = prefix + "_"
    per_op = collections.Counter()
    leaves = collections.defaultdict(collections.Counter)
    total = outside = 0
    for stack in samples(path):
        entry = next((i for i in range(len(stack) - 1, -1, -1) if stack[i] == ANCHOR), None)
        if entry is None:
            outside += 1
            continue
        total += 1
        op = "(generated code)"
        for i in range(entry - 1, -1, -1):
            if not stack[i].startswith(generated):
                op = stack[i]
                break
        per_op[op] += 1
        leaves[op][stack[0]] += 1
    return total, outside, per_op, leaves


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--models", default="")
    parser.add_argument("--seconds", type=float, default=2.0, help="profiled run time per model")
    parser.add_argument("--cpu", type=int, default=int(os.environ.get("BENCH_CPU", "1")))
    parser.add_argument("--keep", action="store_true", help="keep the perf.data files (BUILD/perf/)")
    args = parser.parse_args(argv)
    if not shutil.which("perf"):
        print("perf not found (Debian: linux-perf); no breakdown", file=sys.stderr)
        return 1
    with open(os.path.join(args.build, "bench", "models", "bench_models.json")) as f:
        manifest = json.load(f)
    names = [n for n in args.models.split(",") if n] or list(manifest["models"])
    outdir = os.path.join(args.build, "perf")
    os.makedirs(outdir, exist_ok=True)
    for name in names:
        entry = manifest["models"][name]
        data = os.path.join(outdir, f"{name}.data")
        med_us, repeat = record(entry["driver"], entry["data"], args.cpu, args.seconds, data)
        total, outside, per_op, leaves = breakdown(data, f"bench_{name}")
        if not args.keep:
            os.remove(data)
        print(f"-- {name}: {repeat} calls, median {med_us:.1f} us; {total} samples in the model"
              f" ({outside} outside it left out)")
        if total == 0:
            continue
        print(f"   {'kernel called by the generated code':<34} {'share':>6} {'~us/call':>9}  leaf functions (share of the kernel)")
        for op, n in per_op.most_common():
            share = n / total
            if share < 0.005:
                continue
            top = ", ".join(f"{leaf} {100 * c / n:.0f}%" for leaf, c in leaves[op].most_common(4)
                            if c / n >= 0.03)
            print(f"   {op:<34} {100 * share:5.1f}% {share * med_us:9.1f}  {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
