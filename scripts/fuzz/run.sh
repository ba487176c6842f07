#!/usr/bin/env bash
# Runs one cargo-fuzz target for a fixed time (docs/hostile.md).
#
#   scripts/fuzz/run.sh TARGET SECONDS [WORKDIR]
#
# TARGET: ptx_load, ptx_exec, include_scan, diagnostics or intake. New inputs
# go to WORKDIR/TARGET/corpus (default: a scratch folder; keep it between runs
# to keep what earlier runs found), seeded read-only from fuzz/corpus/ (the
# named seeds in git) and from the inputs scripts/fuzz/seed-text.py generates
# into WORKDIR/generated (the references, stubs and hostile sources, and
# NVRTC's logs for broken ones; needs libnvrtc.so.12 on the library path, else
# the named seeds alone); crashes go to WORKDIR/TARGET/artifacts. Memory is capped
# (-rss_limit_mb, -malloc_limit_mb) and one input may take at most 10 s
# (-timeout): beyond either, libFuzzer reports a crash. The summary line
# (executions, corpus size, crashes) is appended to WORKDIR/summary.txt.
#
# cargo-fuzz needs nightly flags; on a stable toolchain RUSTC_BOOTSTRAP=1 lets
# it build (cargo install cargo-fuzz --locked, once).
set -euo pipefail
target=${1:?usage: run.sh TARGET SECONDS [WORKDIR]}
seconds=${2:?usage: run.sh TARGET SECONDS [WORKDIR]}
work=${3:-${TMPDIR:-/tmp}/cuda-lab-fuzz}
root=$(cd "$(dirname "$0")/../.." && pwd)

case "$target" in
    ptx_load) seeds=(corpus/ptx_load); dict=dicts/ptx.dict ;;
    ptx_exec) seeds=(corpus/ptx_exec corpus/ptx_load); dict=dicts/ptx.dict ;;
    include_scan) seeds=(corpus/include_scan); dict=dicts/cuda.dict ;;
    diagnostics) seeds=(corpus/diagnostics); dict=dicts/diagnostics.dict ;;
    intake) seeds=(corpus/intake); dict="" ;;
    *) echo "unknown target $target" >&2; exit 2 ;;
esac

mkdir -p "$work/$target/corpus" "$work/$target/artifacts"
case "$target" in
    include_scan|diagnostics)
        python3 "$root/scripts/fuzz/seed-text.py" "$work/generated" \
            || echo "seed-text.py failed (no NVRTC?): fuzzing from the named seeds only" >&2 ;;
esac
cd "$root/fuzz"
existing=()
for s in "${seeds[@]}"; do [ -d "$s" ] && existing+=("$root/fuzz/$s"); done
for s in "${seeds[@]}"; do
    g="$work/generated/${s#corpus/}"
    [ -d "$g" ] && existing+=("$g")
done
args=(-max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10
      -print_final_stats=1 -artifact_prefix="$work/$target/artifacts/")
[ -n "$dict" ] && args+=(-dict="$root/fuzz/$dict")
export RUSTC_BOOTSTRAP=1
start=$(date -u +%FT%TZ)
set +e
cargo fuzz run -O -a -s none "$target" "$work/$target/corpus" "${existing[@]}" -- "${args[@]}" \
    > "$work/$target/log.txt" 2>&1
rc=$?
set -e
stats=$(grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$work/$target/log.txt" | tr '\n' ' ')
crashes=$(find "$work/$target/artifacts" -type f | wc -l)
echo "$target start=$start seconds=$seconds exit=$rc $stats corpus=$(ls "$work/$target/corpus" | wc -l) artifacts=$crashes" \
    | tee -a "$work/summary.txt"
exit $rc
