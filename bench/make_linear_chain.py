#!/usr/bin/env python3
"""make_linear_chain.py OUT_DIR [--layers N] [--dim D]: writes OUT_DIR/chain.xml
and OUT_DIR/chain.weights, a model in the project's format (docs/model-format.md)
of N f32 linears D x D with ReLU between them, the weights random, for
bench/weights_build.sh. Default: 6 x 4096 x 4096, about 100 M parameters."""
import argparse
import hashlib
import os

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("out_dir")
ap.add_argument("--layers", type=int, default=6)
ap.add_argument("--dim", type=int, default=4096)
a = ap.parse_args()
os.makedirs(a.out_dir, exist_ok=True)
d, n = a.dim, a.layers
rng = np.random.default_rng(0)
layer_bytes = d * d * 4
sha = hashlib.sha256()
with open(os.path.join(a.out_dir, "chain.weights"), "wb") as f:
    for _ in range(n):
        w = (rng.standard_normal((d, d), dtype=np.float32) / np.float32(np.sqrt(d))).tobytes()
        sha.update(w)
        f.write(w)
ops = []
cur = "arg0"
for i in range(n):
    ops.append(f'    <const id="w{i}" dtype="f32" shape="{d} {d}" offset="{i * layer_bytes}" length="{layer_bytes}"/>')
    ops.append(f'    <op kind="coreai.linear">\n      <operand ref="{cur}"/>\n      <operand ref="w{i}"/>\n'
               f'      <result id="l{i}" dtype="f32" shape="1 {d}"/>\n    </op>')
    cur = f"l{i}"
    if i + 1 < n:
        ops.append(f'    <op kind="coreai.relu">\n      <operand ref="{cur}"/>\n'
                   f'      <result id="r{i}" dtype="f32" shape="1 {d}"/>\n    </op>')
        cur = f"r{i}"
xml = f'''<?xml version="1.0" encoding="UTF-8"?>
<coreai-model format="1">
  <weights href="chain.weights" size="{n * layer_bytes}" sha256="{sha.hexdigest()}"/>
  <graph name="main">
    <arg id="arg0" dtype="f32" shape="1 {d}" name="x"/>
{chr(10).join(ops)}
    <output><value ref="{cur}"/></output>
  </graph>
  <entrypoint name="main" graph="main">
    <input name="x"/>
    <output name="y"/>
  </entrypoint>
</coreai-model>
'''
with open(os.path.join(a.out_dir, "chain.xml"), "w") as f:
    f.write(xml)
print(f"{n} x {d} x {d} f32 = {n * d * d} parameters, {n * layer_bytes} bytes")
