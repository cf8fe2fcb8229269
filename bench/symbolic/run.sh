#!/bin/bash
# bench/symbolic/run.sh: decode step vs prefill of one model with symbols
# (README.md). Builds coreai-gen and the runtime in build-bench-sym/
# (Release, -O3 -march=native), then runs bench.py with the project's .venv.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$src/build-bench-sym
mkdir -p "$build"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOREAI_NATIVE=ON \
    -DCOREAI_BUILD_TESTS=OFF -DCOREAI_BUILD_EXAMPLES=OFF > "$build/build.log" 2>&1
cmake --build "$build" -j2 --target coreai-gen coreai_runtime >> "$build/build.log" 2>&1
mkdir -p "$build/symbolic"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
OMP_NUM_THREADS=1 "$src/.venv/bin/python" "$src/bench/symbolic/bench.py" "$build/symbolic" \
    "$build/runtime-stubs/libcoreai_runtime.a"
