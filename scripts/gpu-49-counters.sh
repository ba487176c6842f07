#!/usr/bin/env bash
# On a GPU machine: the structure checks witnessed by the GPU's own counters
# (grader/src/counters.rs, kit::counters) beside the simulator's figures.
# References (three seeds) and the slow variants with counters read by
# Nsight Compute; the references again with counters off (the grades must be
# equal); the time of each. Packs JSONs, logs and a per-check table of the
# GPU's and the simulator's figures into $OUT/counters.tgz. About 4 minutes.
#
#   OUT=/some/dir scripts/gpu-49-counters.sh [path/to/release/grader]
#
# Look for: `hardware counters: read …` in every log but the `off` one, which
# says `not read (CUDA_LAB_COUNTERS=off)`; references full marks on every seed
# with and without counters; the slow variants' structure failures as in
# CALIBRATION.md; figures.tsv (one line per measured kernel: the GPU's sectors
# per request and shared passes against the simulator's) and ref-seed1-table.md,
# slow-table.md (per check, scripts/counters-table.py) for docs/grading-accuracy.md.
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
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, sys, glob
d = sys.argv[1]
def per(a, b): return a / b if b else 0.0
rows = []
for f in sorted(glob.glob(d + "/*.json")):
    r = json.load(open(f))
    name = f.split("/")[-1][:-5]
    tests = [t for e in r["exercises"] for p in e["parts"] for t in p["tests"]]
    st = [t for t in tests if t["kind"] == "structure"]
    bad = [t["name"] for t in st if t["status"] != "pass"]
    print(f'{name:14} score {r["score"]:.2f}/{r["max_score"]:.2f} structure {len(st)-len(bad)}/{len(st)} pass; not passing: {bad}')
    for t in tests:
        for m in t.get("measured") or []:
            g = m.get("gpu")
            if not g: continue
            rows.append((name, t["name"], m["kernel"],
                per(g["global_load_sectors"], g["global_load_requests"]), per(m["global_load_sectors"], m["global_load_requests"]),
                per(g["global_store_sectors"], g["global_store_requests"]), per(m["global_store_sectors"], m["global_store_requests"]),
                per(g["shared_load_wavefronts"] + g["shared_store_wavefronts"], g["shared_load_requests"] + g["shared_store_requests"]),
                per(m["shared_wavefronts"], m["shared_requests"])))
a = json.load(open(d + "/ref-seed1.json")); b = json.load(open(d + "/ref-off.json"))
print("references seed 1 with counters", a["score"], "without", b["score"])
with open(d + "/figures.tsv", "w") as f:
    f.write("run\tcheck\tkernel\tgpu_ld\tsim_ld\tgpu_st\tsim_st\tgpu_shared\tsim_shared\n")
    for r in rows:
        f.write("\t".join([r[0], r[1], r[2]] + [f"{x:.2f}" for x in r[3:]]) + "\n")
print(len(rows), "measured kernels with GPU counters; figures.tsv")
PY
for run in ref-seed1 slow; do scripts/counters-table.py "$out/$run.json" > "$out/$run-table.md"; done
tar -C "$(dirname "$out")" -czf "$OUT/counters.tgz" "$(basename "$out")"
echo "results: $OUT/counters.tgz"
