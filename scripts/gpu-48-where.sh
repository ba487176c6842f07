#!/usr/bin/env bash
# Issue 48 on a GPU machine: where a warm `grader all --reference` spends its
# wall, check by check. One run traced (CUDA_LAB_TRACE=1: each check's device
# calls and its shared inputs and CPU references), then the buckets
# (CUDA_LAB_PROFILE=1) with the sanitizer's pass on every core but one (the
# default), on 4 threads, and off, and with 8 and 2 threads working ahead of
# the GPU (4 by default), twice each, alternating: how much of the wall the
# pass takes from the threads working ahead, and what more of them buy.
# Counters off.
# Writes into $OUT/where. ROUNDS=0 runs the traced run alone.
#
#   OUT=/some/dir [ROUNDS=2] scripts/gpu-48-where.sh GRADER
set -uo pipefail
cd "$(dirname "$0")/.."
g=${1:?grader}
out=${OUT:?set OUT}/where
mkdir -p "$out"
export CUDA_LAB_COUNTERS=off
run() { # LABEL, then the grader's extra flags
    local label=$1; shift
    local s
    s=$(date +%s%N)
    CUDA_LAB_PROFILE=1 "$g" all --reference --backend cuda --seed 1 --no-report "$@" >"$out/$label.log" 2>&1
    echo "$label: $(( ($(date +%s%N) - s) / 1000000 )) ms rc=$?" | tee -a "$out/times.txt"
}
"$g" all --reference --backend cuda --seed 1 --no-report >"$out/warm-up.log" 2>&1
CUDA_LAB_TRACE=1 run traced
for r in $(seq 1 "${ROUNDS:-2}"); do
    run "default-$r"
    CUDA_LAB_SANITIZE_THREADS=4 run "sanitize-4-threads-$r"
    run "sanitize-off-$r" --sanitize off
    CUDA_LAB_AHEAD_THREADS=8 run "ahead-8-threads-$r"
    CUDA_LAB_AHEAD_THREADS=2 run "ahead-2-threads-$r"
done
