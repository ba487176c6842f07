#!/usr/bin/env bash
# On a GPU machine: the measured structure checks (kit::measure) next to the
# real GPU's verdicts. Runs the references (three seeds), the slow variants and
# the stubs with `--backend cuda`, and the references with `--backend sim`, and
# packs the JSONs and logs into $OUT/measured-gpu.tgz. Takes about 3 minutes.
#
#   OUT=/some/dir scripts/gpu-measured.sh [path/to/release/grader]
#
# Look for: references full marks on every seed (170/170 with ex09), every structure test `pass`; the
# slow run's structure failures only where CALIBRATION.md ("Measured structure")
# says (ex01 few-global-atomics-per-block, ex06 dynamic-shared, ex07 coalesced coalesced-reads-and-writes,
# ex07 padded padded-tile, ex08 sequential shared-tree, ex09 picture coalesced; ex01 global, ex04 v1 and
# ex08 interleaved have no slow file and show as not compiled); the stubs fail
# every structure test; and in
# structure-durations.txt the seconds the measured checks add per run.
set -euo pipefail
cd "$(dirname "$0")/.."
grader=${1:-target/release/grader}
out=${OUT:?set OUT to a folder for the results}/measured-gpu
mkdir -p "$out"
for seed in 1 2 3; do
    "$grader" all --reference --backend cuda --seed "$seed" --json "$out/reference-seed$seed.json" >"$out/reference-seed$seed.log" 2>&1 || true
done
"$grader" all --sources reference/slow --backend cuda --seed 1 --json "$out/slow.json" >"$out/slow.log" 2>&1 || true
"$grader" all --backend cuda --seed 1 --json "$out/stubs.json" >"$out/stubs.log" 2>&1 || true
"$grader" all --reference --backend sim --seed 1 --json "$out/reference-sim.json" >"$out/reference-sim.log" 2>&1 || true
python3 - "$out" <<'PY' | tee "$out/structure-durations.txt"
import json, sys, glob
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    r = json.load(open(f))
    tests = [t for e in r["exercises"] for p in e["parts"] for t in p["tests"]]
    st = [t for t in tests if t["kind"] == "structure"]
    bad = [t["name"] for t in st if t["status"] != "pass"]
    print(f'{f.split("/")[-1]:24} score {r["score"]:.2f}/{r["max_score"]:.2f}  structure {len(st) - len(bad)}/{len(st)} pass, '
          f'{sum(t["duration_ms"] for t in st) / 1e3:.2f} s  not passing: {bad}')
PY
tar -C "$(dirname "$out")" -czf "$OUT/measured-gpu.tgz" "$(basename "$out")"
echo "results: $OUT/measured-gpu.tgz"
