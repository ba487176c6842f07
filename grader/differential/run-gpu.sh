#!/usr/bin/env bash
# Runs the differential corpus on this machine's GPU and on the simulator, and
# compares the output digests bit for bit (docs/grading-accuracy.md).
#
#   grader/differential/run-gpu.sh [OUT_DIR]     (GRADER=path/to/grader to skip the build)
#
# Leaves OUT_DIR/gpu.txt, OUT_DIR/sim.txt (digests; the runs' printf output in
# *.log) and OUT_DIR/compare.txt; exits 1 when a case did not run or a digest differs.
# Takes well under a minute on an H100.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-$(mktemp -d /tmp/cuda-lab-differential.XXXXXX)}
mkdir -p "$out"
if [ -z "${GRADER:-}" ]; then
    cargo build --release -p grader || exit 2
    GRADER=target/release/grader
fi
status=0
"$GRADER" differential --backend cuda --seed 1 --out "$out/gpu.txt" > "$out/gpu.log" 2>&1 || status=1
"$GRADER" differential --backend sim --seed 1 --out "$out/sim.txt" > "$out/sim.log" 2>&1 || status=1
grep -E "ran on|NOT RUN" "$out/gpu.log" "$out/sim.log"
"$GRADER" compare-digests "$out/gpu.txt" "$out/sim.txt" | tee "$out/compare.txt" || status=1
exit $status
