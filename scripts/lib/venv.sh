# shellcheck shell=bash
# scripts/lib/venv.sh - the project's Python: a virtual environment in .venv/
# at the repository root with PyTorch 2.13.0 (CPU), the test dependencies and
# this checkout's `coreai` / `coreai_torch` installed editable
# (pip install -e python/). Sourced by scripts/demo and scripts/check after
# coreai_ensure_deps (scripts/lib/deps.sh), which installs python3-venv.
#
# CMake picks .venv/bin/python by default (COREAI_PYTHON_EXECUTABLE, see
# cmake/CoreaiAddModel.cmake); tests, examples and bench/run use it.
#
# torch is always pinned: an unpinned `pip install torch` takes PyPI's CUDA
# build (gigabytes); torch==2.13.0 is the CPU wheel this project is tested on.

COREAI_VENV_TORCH=torch==2.13.0
# what tests/python needs besides torch (pyproject.toml's [test] extra);
# onnxruntime pinned to the release tested here
COREAI_VENV_PACKAGES=(numpy pytest transformers onnx onnxruntime==1.30.0)

# coreai_venv_ok PYTHON ROOT: exit status 0 when PYTHON has torch >= 2.8,
# the test packages, and coreai / coreai_torch from ROOT/python (an editable
# install of this checkout); otherwise prints what is missing.
coreai_venv_ok() {
    "$1" - "$2" <<'EOF'
import importlib.metadata
import importlib.util
import os
import sys

root = os.path.realpath(sys.argv[1])
missing = []
try:  # the installed distribution's version: no `import torch` (seconds)
    torch_version = importlib.metadata.version("torch")
    version = tuple(int("".join(c for c in p if c.isdigit()) or 0)
                    for p in torch_version.split("+")[0].split(".")[:2])
    if version < (2, 8) or importlib.util.find_spec("torch") is None:
        missing.append(f"torch>=2.8 (found {torch_version})")
except importlib.metadata.PackageNotFoundError:
    missing.append("torch")
for name in ("numpy", "pytest", "transformers", "onnx", "onnxruntime"):
    if importlib.util.find_spec(name) is None:
        missing.append(name)
for name in ("coreai", "coreai_torch"):
    spec = importlib.util.find_spec(name)
    origin = os.path.realpath(spec.origin) if spec is not None and spec.origin else ""
    if not origin.startswith(os.path.join(root, "python", name) + os.sep):
        missing.append(f"{name} from {root}/python (found: {origin or 'none'})")
if missing:
    print("missing: " + ", ".join(missing))
    sys.exit(1)
EOF
}

# coreai_ensure_venv ROOT: creates ROOT/.venv if it does not exist (with
# python3 from PATH, or COREAI_BASE_PYTHON) and pip-installs into it what
# coreai_venv_ok finds missing. Fast (one Python start) when all is there.
coreai_ensure_venv() {
    local root=$1
    local venv="$root/.venv"
    local py="$venv/bin/python"
    local base=${COREAI_BASE_PYTHON:-python3}
    local why

    if [ ! -x "$py" ]; then
        if ! command -v "$base" >/dev/null 2>&1; then
            echo "error: $base not found; install Python 3 (Debian: apt-get install python3 python3-venv)" >&2
            exit 1
        fi
        if ! "$base" -c 'import ensurepip, venv' >/dev/null 2>&1; then
            echo "error: $base cannot create a virtual environment (no ensurepip);" >&2
            echo "install it as root with:" >&2
            echo "  apt-get install -y --no-install-recommends python3-venv" >&2
            exit 1
        fi
        echo "==> creating the Python virtual environment $venv ($("$base" --version 2>&1))"
        # --clear: a .venv/ whose interpreter is gone (its base Python was removed)
        "$base" -m venv --clear "$venv"
    fi

    if why=$(coreai_venv_ok "$py" "$root"); then
        return 0
    fi
    echo "==> installing into $venv ($why)"
    # setuptools >= 70.1 builds the editable wheel without the `wheel` package;
    # --no-build-isolation builds with it instead of fetching one.
    "$py" -m pip install --quiet "setuptools>=70.1" "$COREAI_VENV_TORCH" "${COREAI_VENV_PACKAGES[@]}"
    "$py" -m pip install --quiet --no-build-isolation -e "$root/python[test]" "$COREAI_VENV_TORCH" \
        "${COREAI_VENV_PACKAGES[@]}"
    if ! why=$(coreai_venv_ok "$py" "$root"); then
        echo "error: $venv is still incomplete after pip install ($why)" >&2
        exit 1
    fi
}
