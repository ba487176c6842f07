#!/usr/bin/env bash
# On a GPU machine: the structure checks witnessed by the GPU's own counters
# (grader/src/counters.rs, kit::counters) beside the simulator's figures.
# References (three seeds) and the slow variants with counters read by
# Nsight Compute; the references again with counters off (the grades must be
# equal); the time of each. Packs JSONs, logs and a per-check table of the
# GPU's and the simulator's figures into $OUT/counters.tgz. About 4.5 minutes (the counters-only calibration: about 30 s).
#
#   OUT=/some/dir scripts/gpu-49-counters.sh [path/to/release/grader]
#
# Look for: `hardware counters: read …` in every log but the `off` one, which
# says `not read (CUDA_LAB_COUNTERS=off)`; references full marks on every seed
# with and without counters; the slow variants' structure failures as in
# CALIBRATION.md; tables.md (`grader calibrate --markdown` after `--counters-only`:
# per check, the reference's and the slow variant's sectors per request and
# shared passes on the GPU beside the simulator's) and this model's
# calibration file with them, to commit (then `grader calibrate --update-docs`).
set -uo pipefail
cd "$(dirname "$0")/.."
grader=${1:-${GRADER:-.device/grader}}
out=${OUT:?set OUT to a folder for the results}/counters
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
# The GPU machines have no `bc`: milliseconds in shell arithmetic.
t() {
    local name=$1 s rc; shift; s=$(date +%s%N)
    "$@" >"$out/$name.log" 2>&1; rc=$?
    echo "$name $(( ($(date +%s%N) - s) / 1000000 )) ms rc=$rc" | tee -a "$out/times.txt"
}
for seed in 1 2 3; do
    t ref-seed$seed "$grader" all --reference --backend cuda --seed $seed --no-report --json "$out/ref-seed$seed.json"
done
t ref-off env CUDA_LAB_COUNTERS=off "$grader" all --reference --backend cuda --seed 1 --no-report --json "$out/ref-off.json"
t slow "$grader" all --sources reference/slow --backend cuda --seed 1 --no-report --json "$out/slow.json"
t stubs "$grader" all --backend cuda --seed 1 --no-report --json "$out/stubs.json"
grep -h "hardware counters" "$out"/*.log | sort | uniq -c | tee "$out/headers.txt"
scripts/grades-summary.py "$out"/*.json | tee "$out/summary.txt"
# The figures per request, reference and slow variant, GPU beside simulator:
# recorded into this model's calibration file and shown as each exercise's
# CALIBRATION.md shows them (one computation: grader/src/calibrate/counters.rs).
t counters-only "$grader" calibrate --counters-only
cp calibration/*.toml "$out/"
"$grader" calibrate --markdown > "$out/tables.md"
tar -C "$(dirname "$out")" -czf "$OUT/counters.tgz" "$(basename "$out")"
echo "results: $OUT/counters.tgz"
