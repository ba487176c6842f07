#!/usr/bin/env bash
# On a GPU machine (issue 51, part 1): kernels using CUB and cooperative groups
# graded under a course's `[headers]`, compiled with the toolkit's headers
# (/usr/local/cuda/include, CCCL's include/cccl) and nothing downloaded
# (CUDA_LAB_OFFLINE=1). Grades the six variants cases of issue 51, each with its
# own cuda-lab.toml as the course's (grader/tests/variants/<case>/), on the GPU
# and on the simulator, with `grader <ex> --part <part> --root <case>`. About a minute.
#
#   OUT=/some/dir scripts/gpu-51-headers.sh          # grader from $GRADER or ./.device/grader
#
# Look for, in the summary: the three default/forbidden cases `compile-error`
# with the message naming the setting (`[headers] allow`, `[headers.exercises]
# ex08`); the CUB cases allowed by their course and the cooperative-groups case
# graded on the GPU with the same verdict as on the simulator (expected.json's
# `sim`), and "device headers: toolkit /usr/local/cuda/include" in each log.
set -uo pipefail
cd "$(dirname "$0")/.."
grader=${GRADER:-./.device/grader}
out=${OUT:?set OUT to a folder for the results}/gpu-51-headers
mkdir -p "$out/roots"
export CUDA_LAB_OFFLINE=1
cases="ex08-sequential-cub-block-reduce:ex08:sequential ex08-sequential-cub-block-reduce-allowed:ex08:sequential
ex08-sequential-cg-reduce:ex08:sequential ex08-sequential-cg-reduce-forbidden:ex08:sequential
ex11-brent-kung-cub-block-scan:ex11:brent-kung ex11-brent-kung-cub-block-scan-allowed:ex11:brent-kung"
for entry in $cases; do
    IFS=: read -r case ex part <<<"$entry"
    root="$out/roots/$case"
    # The case's files: its course file, its kernels (edits applied) or the kernel it points at (`files`).
    rm -rf "$root" && python3 grader/tests/corpus/corpus.py case variants "$case" "$root"
    folder=$(ls -d reference/"$ex"-*/ | head -1)
    mkdir -p "$root/exercises/$(basename "$folder")/kernels"
    cp -n "$folder"kernels/*.cu "$root/exercises/$(basename "$folder")/kernels/"
    for backend in cuda sim; do
        "$grader" "$ex" --part "$part" --root "$root" --backend "$backend" --seed 1 --no-report \
            --json "$out/$case-$backend.json" >"$out/$case-$backend.log" 2>&1
        echo "exit $?" >>"$out/$case-$backend.log"
    done
done
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    r = json.load(open(f))
    tests = [t for e in r["exercises"] for p in e["parts"] for t in p["tests"]]
    bad = [t for t in tests if t["status"] == "fail"]
    verdict = (bad[0].get("verdict") or "fail") + " " + bad[0]["name"] if bad else "pass"
    msg = (bad[0].get("message") or "").splitlines()[0][:200] if bad else ""
    headers = (r.get("environment") or {}).get("device_headers")
    print(f'{os.path.basename(f):55} {verdict}  [{msg}]  device headers: {headers}')
PY
tar -C "$(dirname "$out")" -czf "$OUT/gpu-51-headers.tgz" "$(basename "$out")"
echo "results: $OUT/gpu-51-headers.tgz"
