#!/usr/bin/env python3
"""Writes a model that is one long chain, for the depth and scaling tests.

make_chain.py invoke N OUT.xml: main invokes g1, g1 invokes g2, ... gN-1 (a
relu): a call chain N graphs deep.
make_chain.py relu N OUT.xml: one graph of N relus in a row.
make_chain.py transpose N OUT.xml: one graph of N transposes in a row (2x4,
4x2, ...): none runs in place, so every result is a workspace block of its
own, N blocks to place.
"""
import sys


def main():
    kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    t = 'dtype="f32" shape="4"'
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<coreai-model format="1">']
    if kind == "invoke":
        for i in range(n - 1, 0, -1):
            lines.append(f'<graph name="g{i}" private="true"><arg id="x" {t}/>')
            if i == n - 1:
                lines.append(f'<op kind="coreai.relu"><operand ref="x"/><result id="y" {t}/></op>')
            else:
                lines.append(f'<op kind="coreai.invoke" callee="g{i + 1}"><operand ref="x"/>'
                             f'<result id="y" {t}/></op>')
            lines.append('<output><value ref="y"/></output></graph>')
        lines.append(f'<graph name="main"><arg id="x" {t}/>')
        lines.append(f'<op kind="coreai.invoke" callee="g1"><operand ref="x"/><result id="y" {t}/></op>')
        lines.append('<output><value ref="y"/></output></graph>')
    elif kind == "relu":
        lines.append(f'<graph name="main"><arg id="x" {t}/>')
        prev = "x"
        for i in range(n):
            lines.append(f'<op kind="coreai.relu"><operand ref="{prev}"/><result id="v{i}" {t}/></op>')
            prev = f"v{i}"
        lines.append(f'<output><value ref="{prev}"/></output></graph>')
    elif kind == "transpose":
        shapes = ("2 4", "4 2")
        lines.append(f'<graph name="main"><arg id="x" dtype="f32" shape="{shapes[0]}"/>')
        prev = "x"
        for i in range(n):
            lines.append(f'<op kind="coreai.transpose"><operand ref="{prev}"/>'
                         f'<attr name="perm" type="si64[]">1 0</attr>'
                         f'<result id="v{i}" dtype="f32" shape="{shapes[(i + 1) % 2]}"/></op>')
            prev = f"v{i}"
        lines.append(f'<output><value ref="{prev}"/></output></graph>')
    else:
        sys.exit(f"unknown chain kind {kind}")
    lines.append('<entrypoint name="main" graph="main"><input name="x"/><output name="y"/></entrypoint>')
    lines.append('</coreai-model>')
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
