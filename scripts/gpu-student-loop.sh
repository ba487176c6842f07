#!/usr/bin/env bash
# The student's loop on a GPU, for the lead's H100 batch (no build here: it
# takes the release grader built beside this tree). Writes under $OUT and
# packs everything in $OUT/student-loop.tgz; about a minute on an H100.
#
#   OUT=/some/dir scripts/gpu-student-loop.sh
#
# 1. `grader lab coalescing`: the notes' offset (0-32) and stride (1-32)
#    experiment timed with CUDA events (median of 15 after 3 warm-ups) on 64 MiB,
#    and sectors per request on the simulator: lab-coalescing.csv, report.html.
# 2. The reference graded on the GPU, so the report shows timing bars (perf)
#    and registers per thread from the driver: report-reference.html.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the folder for the results}"
grader=${GRADER:-target/release/grader}
dir="$OUT/student-loop"
mkdir -p "$dir"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$dir/gpu.txt" 2>&1 || true
"$grader" lab coalescing --out "$dir" --timeout 10 2>&1 | tee "$dir/lab.txt"
"$grader" all --reference --backend cuda --seed 1 --json "$dir/all-reference.json" > "$dir/grade-reference.txt" 2>&1 || true
cp target/grades/report.html "$dir/report-reference.html" || true
tail -5 "$dir/grade-reference.txt"
grep -c 'data-chart="timing"' "$dir/report-reference.html" | sed 's/^/timing charts in report-reference.html: /'
grep -o 'the driver' "$dir/report-reference.html" | wc -l | sed 's/^/kernels with registers from the driver: /'
tar czf "$OUT/student-loop.tgz" -C "$OUT" student-loop
echo "packed $OUT/student-loop.tgz"
