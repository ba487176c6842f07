#!/usr/bin/env bash
# Issue 48 on a GPU machine: a warm `grader all --reference` with two graders
# (A before a change, B after), three times each, alternating, with the
# buckets of each run (CUDA_LAB_PROFILE=1) and the scores; counters off so
# that only the grading is timed. Packs the logs and JSONs into $OUT/ab.tgz.
#
#   OUT=/some/dir scripts/gpu-48-steady.sh GRADER_A GRADER_B [ROUNDS]
set -uo pipefail
cd "$(dirname "$0")/.."
a=${1:?grader A}; b=${2:?grader B}; rounds=${3:-3}
out=${OUT:?set OUT}/ab
mkdir -p "$out"
export CUDA_LAB_COUNTERS=off
"$b" all --reference --backend cuda --seed 1 --no-report > "$out/warm-up.log" 2>&1
for r in $(seq 1 "$rounds"); do
    for who in a b; do
        exe=$a; [ "$who" = b ] && exe=$b
        s=$(date +%s%N)
        CUDA_LAB_PROFILE=1 "$exe" all --reference --backend cuda --seed "$r" --no-report --json "$out/$who-$r.json" > "$out/$who-$r.log" 2>&1
        rc=$?
        echo "$who round $r: $(( ($(date +%s%N) - s) / 1000000 )) ms rc=$rc" | tee -a "$out/times.txt"
    done
done
scripts/grades-summary.py "$out"/[ab]-*.json | tee "$out/summary.txt"
tar -C "$(dirname "$out")" -czf "$OUT/ab.tgz" "$(basename "$out")"
