"""Prints the model-zoo table of docs/model-zoo.md (markdown).

    COREAI_GEN=build/generator/coreai-gen .venv/bin/python tests/python/zoo_table.py [MODEL...]
    .venv/bin/python tests/python/zoo_table.py --vision-json results.jsonl   # rows of zoo_vision.py --json

Times are wall-clock seconds of one run: export = torch.export + run_decompositions,
convert = TorchConverter + to_coreai + optimize, generate = coreai-gen generate,
compile = cc -O2 of the generated model and its weights (the runtime's own
objects are compiled once and cached, as asset.executable() does).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "python"))

HEADER = ("| model | config | ATen ops | Core AI ops | composite kernels reached | max abs error | max abs ref | "
          "tolerance | export s | convert s | generate s | compile s |\n"
          "|---|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|")


def row(d: dict, config: str) -> str:
    if d.get("error"):
        return f"| {d['model']} | {config} | | | | fails: {d['error'][:300]} | | | | | | |"
    comps = ", ".join(f"{k} x{v}" for k, v in d["composites"].items()) or "none"
    not_reached = sorted(set(d["composites"]) - set(d["kernels"]))
    if not_reached:
        comps += f" (body, not kernel: {', '.join(not_reached)})"
    return (f"| {d['model']} | {config} | {d['aten_ops']} | {d['coreai_ops']} | {comps} | {d['max_err']:.2g} | "
            f"{d['max_ref']:.3g} | {d['tol']:.2g} | {d['export_s']:.1f} | {d['convert_s']:.2f} | "
            f"{d['generate_s']:.2f} | {d['compile_s']:.2f} |")


def main(argv) -> int:
    import dataclasses

    if argv[:1] == ["--vision-json"]:
        print(HEADER)
        for line in Path(argv[1]).read_text().splitlines():
            if line.startswith("{"):
                d = json.loads(line)
                import zoo_vision  # noqa: F401 - the configs (needs torch only)
                print(row(d, zoo_vision.VISION[d["model"]][0]))
        return 0
    import zoo_models

    print(HEADER)
    for name in argv or list(zoo_models.ZOO):
        try:
            d = dataclasses.asdict(zoo_models.run_zoo_model(name))
        except Exception as e:  # noqa: BLE001
            d = {"model": name, "error": f"{type(e).__name__}: {e}"}
        cfg = zoo_models.ZOO[name].config + f" ({zoo_models.ZOO[name].attn})"
        print(row(d, cfg), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
