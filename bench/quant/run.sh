#!/usr/bin/env bash
# bench/quant/run.sh [--build DIR] [DIM [LAYERS [PREFILL [ROUNDS [FEW]]]]]: builds
# the runtime (Release, the portable dispatching build users get) and
# bench_linear_q.c and bench_conv_q.c against it, then times f32 vs int8 vs
# int4 weights, linears then convolutions, each in one run (the sources say
# what), pinned to BENCH_CPU (default 1). BENCH_QUANT_CONV=0 skips the
# convolutions. Then, where the project's .venv has torch (scripts/demo sets
# it up) and BENCH_QUANT_MODELS is not 0, the llama1024 block's generated C
# with f32 / int8 / int4 weights, decode step and prefill
# (bench_model_q.py; the build gains COREAI_BUILD_BENCH and its
# bench-quant-models target).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$root/build-bench-quant
if [ "${1:-}" = --build ]; then
    build=$2
    shift 2
fi
mkdir -p "$build"
log=$build/bench-build.log
python=$root/.venv/bin/python
models=0
if [ "${BENCH_QUANT_MODELS:-1}" != 0 ] && "$python" -c "import torch" 2>/dev/null; then
    models=1
fi
bench_opts=()
[ $models = 1 ] && bench_opts=(-DCOREAI_BUILD_BENCH=ON -DCOREAI_PYTHON_EXECUTABLE="$python")
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOREAI_BUILD_TESTS=OFF \
    -DCOREAI_BUILD_EXAMPLES=OFF "${bench_opts[@]}" >"$log" 2>&1 || { cat "$log"; exit 1; }
cmake --build "$build" --target coreai_runtime >>"$log" 2>&1 || { cat "$log"; exit 1; }
lib=$(find "$build" -name libcoreai_runtime.a | head -1)
${CC:-cc} -std=c11 -O2 -I "$root/runtime-stubs/include" "$root/bench/quant/bench_linear_q.c" "$lib" -lm \
    -o "$build/bench_linear_q"
${CC:-cc} -std=c11 -O2 -I "$root/runtime-stubs/include" "$root/bench/quant/bench_conv_q.c" "$lib" -lm \
    -o "$build/bench_conv_q"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
pin=()
if command -v taskset >/dev/null; then
    pin=(taskset -c "${BENCH_CPU:-1}")
fi
"${pin[@]}" "$build/bench_linear_q" "$@"
if [ "${BENCH_QUANT_CONV:-1}" != 0 ]; then
    "${pin[@]}" "$build/bench_conv_q" ${4:+"$4"}
fi
if [ $models = 1 ]; then
    cmake --build "$build" --target bench-quant-models >>"$log" 2>&1 || { tail -n 40 "$log"; exit 1; }
    PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1 \
        "${pin[@]}" "$python" "$root/bench/quant/bench_model_q.py" --build "$build"
else
    echo "bench_model_q.py skipped (BENCH_QUANT_MODELS=0, or no torch in $python: run scripts/demo)"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
