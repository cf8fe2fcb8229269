#!/bin/bash
# bench/weights_build.sh [COREAI_GEN] - how long a ~100 M-parameter model
# takes to generate and compile with its weights as C initializers
# (--weights-format c) and as a linked binary blob (--weights-format
# incbin, the default). A benchmark to read, not a timed test.
#
# Writes a chain of 6 f32 linears 4096 x 4096 (bench/make_linear_chain.py,
# 100.7 M parameters, 403 MB) to $WORK (default: a temporary directory,
# removed afterwards), generates its C three ways (the default incbin blob in
# chunks of at most 64 MiB; incbin in one chunk; C initializers), compiles
# each NAME_weights*.c with $CC (default cc) -O2 -c, one process each as a
# build does, and prints, per format: the bytes of the weights sources and
# of the blob files, their number, the generate seconds and peak RSS, the
# compile seconds (summed) and the largest compiler peak RSS
# (/usr/bin/time -v). The C-initializer form may stop
# at the generator's 256 MiB text limit; that is printed as such.
#
# COREAI_GEN: default build/generator/coreai-gen. LAYERS, DIM: the chain's
# size. PYTHON: an interpreter with numpy (default: .venv/bin/python).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gen=${1:-$root/build/generator/coreai-gen}
cc=${CC:-cc}
py=${PYTHON:-$root/.venv/bin/python}
[ -x "$py" ] || py=python3
[ -x "$gen" ] || { echo "weights_build: no coreai-gen at $gen (give its path)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "weights_build: needs GNU time (/usr/bin/time; Debian package time)" >&2; exit 2; }
if [ -n "${WORK:-}" ]; then
    work=$WORK
    mkdir -p "$work"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/coreai-weights-bench.XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi

"$py" "$root/bench/make_linear_chain.py" "$work/model" --layers "${LAYERS:-6}" --dim "${DIM:-4096}"

# timed LOG CMD...: runs CMD under /usr/bin/time -v into LOG; returns its status
timed() {
    local log=$1
    shift
    /usr/bin/time -v -o "$log.time" "$@" >"$log" 2>&1
}
seconds() { awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; printf "%.2f", s }' "$1.time"; }
rss_mb() { awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$1.time"; }
size_of() { if [ -e "$1" ]; then stat -c %s "$1"; else echo -; fi; }

# incbin: the default, the blob split into chunks of at most 64 MiB, each
# source assembled by its own process; incbin1: --weights-chunks 1, the whole
# blob in one source (the form before the split); c: C initializers.
printf '%-8s %14s %14s %7s %10s %10s %10s %12s %s\n' format weights.c blob files gen_s gen_MB compile_s compile_MB note
for fmt in incbin incbin1 c; do
    out=$work/out-$fmt
    rm -rf "$out"
    note=
    gen_fmt=(--weights-format "${fmt%1}")
    [ "$fmt" = incbin1 ] && gen_fmt+=(--weights-chunks 1)
    if ! timed "$work/gen-$fmt.log" "$gen" generate "$work/model/chain.xml" -o "$out" "${gen_fmt[@]}"; then
        note="generate failed: $(grep -m1 error "$work/gen-$fmt.log" || tail -1 "$work/gen-$fmt.log")"
        printf '%-8s %14s %14s %7s %10s %10s %10s %12s %s\n' "$fmt" - - - "$(seconds "$work/gen-$fmt.log")" \
            "$(rss_mb "$work/gen-$fmt.log")" - - "$note"
        continue
    fi
    flags=(-O2 -c -I"$root/runtime-stubs/include")
    [ "$fmt" != c ] && flags+=("-Wa,-I,$out")
    # each weights source on its own, as a build compiles them: the seconds
    # add up, the peak RSS is the largest one
    total_s=0 max_mb=0 n=0 c_bytes=0 bin_bytes=0
    for src in "$out"/chain_weights*.c; do
        n=$((n + 1))
        c_bytes=$((c_bytes + $(stat -c %s "$src")))
        bin=${src%.c}.bin
        [ -e "$bin" ] && bin_bytes=$((bin_bytes + $(stat -c %s "$bin")))
        log=$work/cc-$fmt-$n.log
        if ! timed "$log" "$cc" "${flags[@]}" "$src" -o "${src%.c}.o"; then
            note="compile failed: $(grep -m1 -i error "$log" || tail -1 "$log")"
        fi
        total_s=$(awk -v a="$total_s" -v b="$(seconds "$log")" 'BEGIN { printf "%.2f", a + b }')
        mb=$(rss_mb "$log")
        [ "$mb" -gt "$max_mb" ] && max_mb=$mb
    done
    [ "$fmt" = c ] && bin_bytes=-
    printf '%-8s %14s %14s %7s %10s %10s %10s %12s %s\n' "$fmt" "$c_bytes" "$bin_bytes" "$n" \
        "$(seconds "$work/gen-$fmt.log")" "$(rss_mb "$work/gen-$fmt.log")" "$total_s" "$max_mb" "$note"
done
