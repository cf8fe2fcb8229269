#!/bin/bash
# bench/gemm/run.sh [BUILD_DIR] [-- bench_gemm options]
#
# Builds bench/gemm (the runtime at -O3 -march=native, OpenBLAS) in BUILD_DIR
# (default: build-bench-gemm next to the sources' root) and runs it pinned to
# one CPU (BENCH_CPU, default 1), single-threaded. OPENBLAS_CORETYPE is left
# as the environment sets it; the benchmark prints the core OpenBLAS picked.
# Options after -- go to bench_gemm (--repeats N --seconds S --shapes
# all|square|model). BENCH_MARCH=x86-64-v3 builds the runtime for AVX2
# instead of -march=native (use another BUILD_DIR for it).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build-bench-gemm}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
cpu=${BENCH_CPU:-1}

cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCOREAI_BENCH_CPU="$cpu" \
    -DCOREAI_BENCH_MARCH="${BENCH_MARCH:-native}" > /dev/null
cmake --build "$build" --target bench_gemm > /dev/null
echo "== $(date -u +%FT%TZ)  $(uptime | sed 's/.*load/load/')"
echo "== cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), pinned to CPU $cpu"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
exec taskset -c "$cpu" "$build/bench_gemm" "$@"
