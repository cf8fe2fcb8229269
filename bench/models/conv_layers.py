#!/usr/bin/python3
"""Layer by layer: each convolution of a bench model (models.py) on our
kernel against the node onnxruntime runs for it, in one run.

  conv_layers.py --build BUILD [--models resnet18,mobilenetv2] [--threads 1]
                 [--rounds N] [--cpu N]

* The model as bench_ort.py exports it (BUILD/bench/onnx/<name>.onnx, made
  here when missing). Its Conv nodes, in graph order, with the shapes ONNX's
  shape inference gives and the ReLU / Clip that follows each (onnxruntime
  fuses it, and so does our generated code).
* onnxruntime (ORT_ENABLE_ALL, intra_op_num_threads T, profiling on): the
  kernel time of every Conv-like node, min over ROUNDS runs, paired with the
  graph's Conv by name (onnxruntime names a node after its output: the
  Conv's, or the ReLU's / addition's it fused; every Conv must pair).
* ours: bench_conv_layers (conv_layers.c) on the same layers (a Winograd
  layer on its weight transformed beforehand, as coreai-gen writes it;
  --no-winograd-weights: transformed on every call), the fused clamp
  included, each reading the output of the convolution that feeds it in the
  graph (through activations and additions), min over ROUNDS rounds; the
  other nodes (pooling, additions) are not timed here. A layer fed by
  anything else (the first one, one after a pooling) reads an input of its
  own, cold in the cache where the model's would be warm.

Rounds alternate the two sides, pinned to --cpu (T = 1) or the first T CPUs.
Prints, per layer, both times and ours/ORT, then the totals; the non-Conv
nodes' onnxruntime time is listed apart.
"""

import argparse
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

import models  # noqa: E402

CONV_OPS = ("Conv", "FusedConv", "NchwcConv")


def onnx_path_for(build, name):
    path = os.path.join(build, "bench", "onnx", f"{name}.onnx")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        model, x = models.build(name)
        with torch.no_grad():
            torch.onnx.export(model, (x,), path, dynamo=False, opset_version=17, input_names=["x"],
                              output_names=["y"])
    return path


def conv_layers(path):
    """The Conv nodes as bench_conv_layers lines, in graph order."""
    m = onnx.shape_inference.infer_shapes(onnx.load(path))
    g = m.graph
    shapes = {}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
        shapes[v.name] = dims
    for t in g.initializer:
        shapes[t.name] = list(t.dims)
    consumers = collections.defaultdict(list)
    producer = {}
    for n in g.node:
        for i in n.input:
            consumers[i].append(n)
        for o in n.output:
            producer[o] = n
    conv_index = {}

    def source(tensor, depth=0):
        """The Conv (its index) whose output reaches tensor through
        elementwise ops that keep its size, or -1."""
        n = producer.get(tensor)
        if n is None or depth > 8:
            return -1
        if n.op_type == "Conv":
            return conv_index.get(n.output[0], -1)
        if n.op_type in ("Relu", "Clip", "Add", "Identity", "BatchNormalization"):
            for i in n.input:
                if shapes.get(i) == shapes.get(tensor):
                    src = source(i, depth + 1)
                    if src >= 0:
                        return src
        return -1

    lines, names, keys = [], [], []
    for n in g.node:
        if n.op_type != "Conv":
            continue
        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        xs, ws, ys = shapes[n.input[0]], shapes[n.input[1]], shapes[n.output[0]]
        kh, kw = ws[2], ws[3]
        st = a.get("strides", [1, 1])
        pads = a.get("pads", [0, 0, 0, 0])
        dil = a.get("dilations", [1, 1])
        group = a.get("group", 1)
        clamp, lo, hi = 0, 0.0, float("inf")
        nxt = consumers.get(n.output[0], [])
        if len(nxt) == 1 and nxt[0].op_type == "Relu":
            clamp = 1
        elif len(nxt) == 1 and nxt[0].op_type == "Clip":
            clamp, lo, hi = 1, 0.0, 6.0  # torchvision's ReLU6
        lines.append(" ".join(str(v) for v in [xs[0], xs[1], xs[2], xs[3], ys[1], kh, kw, ys[2], ys[3], st[0],
                                               st[1], pads[0], pads[1], dil[0], dil[1], group, clamp, lo, hi,
                                               source(n.input[0])]))
        conv_index[n.output[0]] = len(lines) - 1
        names.append(f"{xs[1]}->{ys[1]} {xs[2]}x{xs[3]} k{kh}x{kw} s{st[0]} g{group}")
        # onnxruntime names a node after its output, which after fusing is
        # that of the activation or addition the convolution flows into
        k, out = {n.output[0]}, n.output[0]
        for _ in range(3):
            nxt = consumers.get(out, [])
            if len(nxt) != 1 or nxt[0].op_type not in ("Relu", "Clip", "Add"):
                break
            out = nxt[0].output[0]
            k.add(out)
        keys.append(k)
    return lines, names, keys


def ort_profile(path, threads, rounds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.enable_profiling = True
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    i = sess.get_inputs()[0]
    x = np.random.default_rng(0).standard_normal([d if isinstance(d, int) else 1 for d in i.shape],
                                                 dtype=np.float32)
    for _ in range(rounds + 1):
        sess.run(None, {i.name: x})
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    os.remove(f.name)
    order, times, ops = [], collections.defaultdict(list), {}
    for e in events:
        n = e.get("name", "")
        if e.get("cat") != "Node" or not n.endswith("_kernel_time"):
            continue
        if n not in times:
            order.append(n)
            ops[n] = e["args"].get("op_name", "")
        times[n].append(e["dur"])
    # the first run (a warm-up) left out of the min
    return [(n[:-len("_kernel_time")], ops[n], min(times[n][1:] or times[n])) for n in order]


def ours(build, lines, threads, rounds, cpus, winograd_weights=True, conv_panels=True):
    exe = os.path.join(build, "bench", "models", "bench_conv_layers")
    extra = ([] if winograd_weights else ["--no-winograd-weights"]) + ([] if conv_panels else ["--no-panels"])
    res = subprocess.run(["taskset", "-c", cpus, exe, "--rounds", str(rounds), "--threads", str(threads), *extra],
                         input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    return [float(l.split()[3]) for l in res.stdout.splitlines()], \
        [int(l.split()[5]) for l in res.stdout.splitlines()]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True)
    p.add_argument("--models", default="resnet18,mobilenetv2")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--cpu", type=int, default=int(os.environ.get("BENCH_CPU", "1")))
    p.add_argument("--no-winograd-weights", action="store_true",
                   help="Winograd layers transform their weight on every call (coreai-gen's option)")
    p.add_argument("--no-conv-panels", action="store_true",
                   help="small-map layers read their weight as stored (coreai-gen's option)")
    a = p.parse_args(argv)
    cpus = str(a.cpu) if a.threads == 1 else ",".join(str(c) for c in range(a.threads))
    os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})
    for name in a.models.split(","):
        path = onnx_path_for(a.build, name)
        lines, names, keys = conv_layers(path)
        best_ours, best_ort, wino = [float("inf")] * len(lines), None, None
        other = {}
        for _ in range(3):  # alternate the sides
            t, wino = ours(a.build, lines, a.threads, a.rounds, cpus, not a.no_winograd_weights, not a.no_conv_panels)
            best_ours = [min(x, y) for x, y in zip(best_ours, t)]
            prof = ort_profile(path, a.threads, a.rounds)
            conv = {n.removesuffix("_nchwc"): t for n, op, t in prof if op in CONV_OPS}
            t_ort = []
            for i, k in enumerate(keys):
                hit = [conv[x] for x in k if x in conv]
                if len(hit) != 1:
                    print(f"{name}: layer {i} ({names[i]}): no onnxruntime node named after {sorted(k)}",
                          file=sys.stderr)
                    return 1
                t_ort.append(hit[0])
            if len(conv) != len(lines):
                print(f"{name}: onnxruntime ran {len(conv)} convolution nodes for the graph's {len(lines)}",
                      file=sys.stderr)
                return 1
            best_ort = t_ort if best_ort is None else [min(x, y) for x, y in zip(best_ort, t_ort)]
            for n, op, t in prof:
                if op not in CONV_OPS:
                    other[(n, op)] = min(other.get((n, op), float("inf")), t)
        kernel = "coreai_conv2d_ws_f32" if a.no_winograd_weights else "Winograd weights made beforehand"
        print(f"== {name}: convolutions, ours ({kernel}) vs onnxruntime {ort.__version__}, "
              f"{a.threads} thread(s), min of {3 * a.rounds} runs, us")
        print(f"{'#':>3} {'layer':34} {'ours':>8} {'ORT':>8} {'ours/ORT':>9}")
        for i, (nm, o, r) in enumerate(zip(names, best_ours, best_ort)):
            tag = f" wino F({wino[i]}x{wino[i]})" if wino[i] else ""
            print(f"{i:3d} {nm + tag:34} {o:8.1f} {r:8.1f} {o / r:8.2f}x")
        so, sr = sum(best_ours), sum(best_ort)
        print(f"    {'all convolutions':34} {so:8.1f} {sr:8.1f} {so / sr:8.2f}x")
        for (n, op), t in other.items():
            print(f"    onnxruntime {op:18} {t:8.1f}  {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
