#!/bin/bash
# usage: run_installed_flow.sh INSTALL_PREFIX SOURCE_DIR BUILD_DIR
#
# The Python verification flow of the composite-ops guide (seed 003:
# FeedForwardBlock, save_asset, `async with asset.executable()`,
# load_function, NDArray) with nothing but a coreai-codegen installed in
# INSTALL_PREFIX (cmake --install) and the Python packages pip-installed
# from it:
#   * a throwaway virtual environment (made by PYTHON, without pip) gets
#     `coreai` and `coreai_torch` by `pip install --no-deps` of
#     PREFIX/share/coreai-codegen/python (a copy of it: pip builds in place);
#     torch and numpy come from PYTHON's site-packages through a .pth file
#     (a path, so none of the .pth files there, such as an editable install
#     of the source tree, take effect);
#   * it runs from a directory outside the source tree with PYTHONPATH,
#     COREAI_GEN, COREAI_RUNTIME_DIR unset and PREFIX/bin first on PATH, and
#     checks that coreai, coreai_torch, coreai-gen and the runtime sources all
#     come from the venv or the prefix, none from SOURCE_DIR or BUILD_DIR;
#   * the generated C must match PyTorch (max abs error < 1e-4), once with
#     coreai-gen found on PATH and once through COREAI_PREFIX;
#   * without either, asset.executable() fails with an error that says what to
#     install (cmake --install), not a source-tree command.
# PYTHON: an interpreter with torch >= 2.8 and numpy (ctest passes
# COREAI_PYTHON_EXECUTABLE), and with pip. Exits non-zero on the first failure.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 INSTALL_PREFIX SOURCE_DIR BUILD_DIR" >&2
    exit 2
fi
prefix=$(cd "$1" && pwd -P)
src=$(cd "$2" && pwd -P)
bld=$(cd "$3" && pwd -P)
python=${PYTHON:-python3}

fail() {
    echo "run_installed_flow: FAIL: $*" >&2
    exit 1
}
step() {
    echo "run_installed_flow: $*"
}

pydir="$prefix/share/coreai-codegen/python"
[ -x "$prefix/bin/coreai-gen" ] || fail "no $prefix/bin/coreai-gen (was it installed?)"
[ -f "$pydir/pyproject.toml" ] || fail "no $pydir/pyproject.toml (was it installed?)"
[ -f "$prefix/share/coreai-codegen/runtime/include/coreai/runtime.h" ] ||
    fail "no runtime sources in $prefix/share/coreai-codegen/runtime (was it installed?)"

work=$(mktemp -d "${TMPDIR:-/tmp}/coreai-installed-flow.XXXXXX")
work=$(cd "$work" && pwd -P)
trap 'rm -rf "$work"' EXIT
case "$work/" in
    "$src/"* | "$bld/"*) fail "the work directory $work is inside the source or build tree" ;;
esac

step "virtual environment ($("$python" --version 2>&1), torch from $python)"
"$python" -m venv --without-pip "$work/venv"
venv_py="$work/venv/bin/python"
site=$("$venv_py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$python" -c 'import site; print("\n".join(site.getsitepackages()))' >"$site/torch-from-base.pth"
"$venv_py" -c 'import torch, numpy' || fail "torch / numpy not importable through $python's site-packages"

step "pip install --no-deps $pydir"
cp -r "$pydir" "$work/pysrc"
# pip of PYTHON, acting on the venv (--python); the package builds with the
# setuptools of PYTHON's site-packages (--no-build-isolation), offline.
"$python" -m pip --python "$venv_py" install --quiet --no-deps --no-build-isolation --no-index "$work/pysrc" \
    || fail "pip install of $pydir"
rm -rf "$work/pysrc"

mkdir "$work/run" "$work/cache"
cat >"$work/run/flow.py" <<'EOF'
# seed 003 (composite ops guide), the FeedForwardBlock and its verification flow
import asyncio
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

import coreai
import coreai_torch
from coreai import _toolchain
from coreai_torch import ExternalizeSpec, TorchConverter
from coreai_torch.composite_ops import RMSNormImpl
from coreai.runtime import NDArray

venv, src, bld, prefix, mode = sys.argv[1:6]


def under(path, root):
    return os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)


for mod in (coreai, coreai_torch):
    assert under(mod.__file__, venv), f"{mod.__name__} imported from {mod.__file__}, not from the venv {venv}"
# torch's site-packages may be the project's .venv/ (inside the source tree),
# but no sys.path entry may be (in) SOURCE_DIR/python or the build tree, or
# hold a coreai / coreai_torch package other than the venv's
for p in filter(None, sys.path):
    assert not (os.path.realpath(p) in (os.path.realpath(src), os.path.join(os.path.realpath(src), "python"))
                or under(p, os.path.join(src, "python")) or under(p, bld)), f"sys.path has {p}"
    for name in ("coreai", "coreai_torch"):
        assert under(p, venv) or not os.path.isdir(os.path.join(p, name)), f"{p} has a {name} package"
assert _toolchain.source_tree() is None, _toolchain.source_tree()

if mode == "missing":
    # no coreai-gen anywhere: the error says what to install
    try:
        _toolchain.find_coreai_gen()
    except _toolchain.ToolchainError as e:
        msg = str(e)
        print(f"error as expected: {msg}")
        assert "cmake --install" in msg and "COREAI_PREFIX" in msg, msg
        assert src not in msg and "scripts/" not in msg, msg
        sys.exit(0)
    sys.exit("find_coreai_gen() found a coreai-gen although none is installed")

gen = _toolchain.find_coreai_gen()
rt = _toolchain.runtime_dir(gen)
print(f"coreai-gen: {gen}\nruntime:    {rt}")
assert under(gen, prefix) and under(rt, prefix), (gen, rt)


class RMSNorm(nn.Module):
    """Convenience wrapper that owns the learnable scale parameter."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.norm = RMSNormImpl(eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x, self.weight)


class FeedForwardBlock(nn.Module):
    def __init__(self, dim: int, ff_dim: int, eps: float = 1e-5):
        super().__init__()
        self.norm = RMSNorm(dim=dim, eps=eps)
        self.fc1 = nn.Linear(dim, ff_dim, bias=False)
        self.fc2 = nn.Linear(ff_dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(self.norm(x))))


torch.manual_seed(0)
model = FeedForwardBlock(dim=64, ff_dim=256).eval()
sample = (torch.randn(2, 16, 64),)

coreai_program = (
    TorchConverter()
    .add_pytorch_module(
        model,
        export_fn=lambda m: torch.export.export(m, args=sample).run_decompositions(
            coreai_torch.get_decomp_table()
        ),
        externalize_modules=[
            ExternalizeSpec(
                target_class=RMSNormImpl,
                composite_op_name="rms_norm",
                composite_attrs=["axes", "eps"],
            )
        ],
    )
    .to_coreai()
)
coreai_program.optimize()

result = {}


async def run_and_compare(coreai_program, model, sample):
    with tempfile.TemporaryDirectory() as tmpdir:
        asset = coreai_program.save_asset(Path(tmpdir) / "rms_norm_example.aimodel")
        async with asset.executable() as ai_model:
            function = ai_model.load_function("main")
            x = sample[0]
            coreai_out = await function({"x": NDArray(x)})
            coreai_np = list(coreai_out.values())[0].numpy()
            with torch.no_grad():
                torch_np = model(x).numpy()
            print(f"Max abs error: {np.abs(torch_np - coreai_np).max():.2e}")
            print(f"Outputs match: {np.allclose(torch_np, coreai_np, atol=1e-4)}")
            result["err"] = float(np.abs(torch_np - coreai_np).max())


asyncio.run(run_and_compare(coreai_program, model, sample))
assert result["err"] < 1e-4, result
EOF

# run_flow MODE ENV...: the flow in a clean environment, from $work/run
run_flow() {
    local mode=$1
    shift
    (cd "$work/run" && env -u PYTHONPATH -u PYTHONHOME -u COREAI_GEN -u COREAI_RUNTIME_DIR -u COREAI_PREFIX \
        COREAI_CACHE_DIR="$work/cache" PYTHONDONTWRITEBYTECODE=1 "$@" \
        "$venv_py" flow.py "$work/venv" "$src" "$bld" "$prefix" "$mode")
}
# PATH without any directory that holds a coreai-gen (a developer's own),
# plus the C compiler's
clean_path=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
    [ -n "$d" ] && [ ! -e "$d/coreai-gen" ] && clean_path="$clean_path:$d"
done
clean_path=${clean_path#:}

step "flow with $prefix/bin on PATH"
run_flow path PATH="$prefix/bin:$clean_path" || fail "the verification flow with coreai-gen on PATH"
step "flow with COREAI_PREFIX=$prefix"
run_flow prefix PATH="$clean_path" COREAI_PREFIX="$prefix" || fail "the verification flow with COREAI_PREFIX"
step "no coreai-gen: the error names what to install"
run_flow missing PATH="$clean_path" || fail "the error without an installed coreai-gen"

echo "run_installed_flow: all checks passed"
