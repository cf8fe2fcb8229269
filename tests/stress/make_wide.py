#!/usr/bin/env python3
"""Writes a model that is wide rather than deep, for the scaling tests of
the passes that once compared every op, constant or name with every other.

make_wide.py KIND N OUT.xml, KIND one of:
  consts       one graph adding N distinct constants in a row (constant
               de-duplication; one fused loop with N inputs)
  entrypoints  N graphs, each run by its own entrypoint
  names        one entrypoint with N inputs and N outputs
  live         N relus of the input, then summed: all N live at once
               (workspace placement, with --no-fuse)
  grow         N ops each reading the first op's result (the fuser's
               backwards search from every root reached back to op 0)
"""
import sys


def main():
    kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    t = 'dtype="f32" shape="4"'
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<coreai-model format="1">']
    entry = '<entrypoint name="main" graph="main"><input name="x"/><output name="y"/></entrypoint>'
    if kind == "consts":
        lines.append(f'<graph name="main"><arg id="x" {t}/>')
        for i in range(n):
            lines.append(f'<const id="c{i}" {t}>{i} {i} {i} {i + 1}</const>')
        prev = "x"
        for i in range(n):
            lines.append(f'<op kind="coreai.add"><operand ref="{prev}"/><operand ref="c{i}"/>'
                         f'<result id="v{i}" {t}/></op>')
            prev = f"v{i}"
        lines.append(f'<output><value ref="{prev}"/></output></graph>')
    elif kind == "entrypoints":
        entry = ""
        for i in range(n):
            lines.append(f'<graph name="g{i}"><arg id="x" {t}/>'
                         f'<op kind="coreai.relu"><operand ref="x"/><result id="y" {t}/></op>'
                         '<output><value ref="y"/></output></graph>')
        for i in range(n):
            lines.append(f'<entrypoint name="e{i}" graph="g{i}"><input name="x"/><output name="y"/></entrypoint>')
    elif kind == "names":
        lines.append('<graph name="main">')
        lines += [f'<arg id="x{i}" {t}/>' for i in range(n)]
        lines += [f'<op kind="coreai.relu"><operand ref="x{i}"/><result id="y{i}" {t}/></op>' for i in range(n)]
        lines.append('<output>' + "".join(f'<value ref="y{i}"/>' for i in range(n)) + '</output></graph>')
        entry = ('<entrypoint name="main" graph="main">' + "".join(f'<input name="x{i}"/>' for i in range(n)) +
                 "".join(f'<output name="y{i}"/>' for i in range(n)) + '</entrypoint>')
    elif kind == "live":
        lines.append(f'<graph name="main"><arg id="x" {t}/>')
        for i in range(n):
            lines.append(f'<op kind="coreai.relu"><operand ref="x"/><result id="r{i}" {t}/></op>')
        prev = "r0"
        for i in range(1, n):
            lines.append(f'<op kind="coreai.add"><operand ref="{prev}"/><operand ref="r{i}"/>'
                         f'<result id="s{i}" {t}/></op>')
            prev = f"s{i}"
        lines.append(f'<output><value ref="{prev}"/></output></graph>')
    elif kind == "grow":
        lines.append(f'<graph name="main"><arg id="x" {t}/>')
        lines.append(f'<op kind="coreai.relu"><operand ref="x"/><result id="a" {t}/></op>')
        prev = "a"
        for i in range(n):
            lines.append(f'<op kind="coreai.add"><operand ref="{prev}"/><operand ref="a"/>'
                         f'<result id="b{i}" {t}/></op>')
            lines.append(f'<op kind="coreai.neg"><operand ref="b{i}"/><result id="d{i}" {t}/></op>')
            prev = f"b{i}"
        lines.append(f'<output><value ref="{prev}"/></output></graph>')
    else:
        sys.exit(f"unknown kind {kind}")
    lines.append(entry)
    lines.append('</coreai-model>')
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
