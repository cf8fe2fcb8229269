# shellcheck shell=bash
# case_args CASE_DIR [ENTRYPOINT]: fills the array `args` with the runner
# arguments that feed a case's in_*.npy and state_*.npy (sourced by
# run_case.sh and same_bits.sh)
case_args() {
    local case_dir=$1 entry=${2:-} f n
    args=()
    [ -n "$entry" ] && args+=(--entrypoint "$entry")
    for f in "$case_dir"/in_*.npy; do
        [ -e "$f" ] || continue
        n=$(basename "$f" .npy); args+=(--in "${n#in_}=$f")
    done
    for f in "$case_dir"/state_*.npy; do
        [ -e "$f" ] || continue
        n=$(basename "$f" .npy); args+=(--state "${n#state_}=$f")
    done
}
