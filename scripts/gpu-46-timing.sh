#!/usr/bin/env bash
# Issue 46, the timing half, on one GPU (an H200; under 8 minutes). Builds
# nothing: GRADER (default ./.device/grader) is the release binary of this
# branch. Results go to $OUT/gpu-46-timing/ and a summary is printed.
#
#   GRADER=.device/grader OUT=/tmp/x scripts/gpu-46-timing.sh
#   STEPS=cheats,load scripts/gpu-46-timing.sh     # skip the class with a kill
#
# 1. cheats: the jitter family (ex11, ex01, ex05, ex12: expected `too-slow`,
#    "the spread is the kernel's own") and wrong-when-timed (ex10 coarse with
#    16-bit bins: expected `wrong-when-timed`, "fails this part's correctness",
#    the part below 7.5 / 10), each graded alone on the GPU.
# 2. load: the references with `grader gpu-load` streaming memory beside them
#    (expected: full marks, a few checks `not graded here` at most), and the
#    ex11 jitter cheat beside the same load (expected: its performance points
#    lost, `too-slow`, not `not graded here`).
# 3. class: a class of CLASS_STUDENTS students who all hand in the reference,
#    graded by `grader batch` with one worker of each slot made to hang on
#    ex10/coarse for every student (CUDA_LAB_WORKER_HANG_ON: the batch kills
#    it at --part-timeout, regrades the part alone, starts a replacement):
#    prints batch.json's `figures`, each reference figure's spread across the
#    class (expected: every spread <= 3 %), and checks that every worker of a
#    slot was started alike (`batch worker started with:` lines of its log).
set -uo pipefail
cd "$(dirname "$0")/.."
GRADER=$(realpath "${GRADER:-.device/grader}")
OUT=${OUT:-$(mktemp -d)}
STEPS=${STEPS:-cheats,load,class}
CLASS_STUDENTS=${CLASS_STUDENTS:-6}
res=$OUT/gpu-46-timing
mkdir -p "$res"
[ -x "$GRADER" ] || { echo "no grader binary at $GRADER"; exit 2; }
step() { [[ ",$STEPS," == *",$1,"* ]]; }
log() { echo "== $(date -u +%T) $*" | tee -a "$res/steps.txt"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>/dev/null; nproc; date -u; "$GRADER" --version; } > "$res/setup.txt" 2>&1

# A part's verdicts from a grades JSON: score, then each test's status, verdict, first line.
show() {
    python3 - "$@" <<'PY'
import json, sys
path, label = sys.argv[1], sys.argv[2]
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{label}: no result ({e})"); sys.exit(0)
for ex in r["exercises"]:
    for p in ex["parts"]:
        if not p["tests"]:
            continue
        print(f"{label}: {ex['id']}/{p['name']} {p['score']:.2f} / {p['max_score']:.2f}")
        for t in p["tests"]:
            msg = (t.get("message") or "").splitlines()
            first = " | ".join(m for m in msg[:3])[:400]
            if t["kind"] != "correctness" or t["status"] != "pass":
                print(f"    {t['name']}: {t['status']} {t.get('verdict') or ''} {first}")
PY
}

# Grades one cheat case (its files over nothing else: the grader takes every
# other part's file from where it is, and the case's part is the one asked).
cheat() { # case exercise part
    local case=$1 ex=$2 part=$3 root=$res/cases/$1
    rm -rf "$root"
    python3 grader/tests/corpus/corpus.py case cheats "$case" "$root"
    timeout 150 "$GRADER" "$ex" --part "$part" --root "$root" --seed 1 --no-report --json "$res/$case.json" \
        > "$res/$case.txt" 2>&1
    show "$res/$case.json" "$case" | tee -a "$res/summary.txt"
}

if step cheats; then
    log "cheats"
    cheat ex11-brent-kung-serial-random-spin ex11 brent-kung
    cheat ex01-shared-twice-alternating ex01 shared
    cheat ex05-stencil-one-warp-jitter ex05 stencil
    cheat ex12-tiled-double-jitter ex12 tiled
    cheat ex10-coarse-16-bit-bins ex10 coarse
fi

if step load; then
    log "references beside gpu-load"
    "$GRADER" gpu-load --seconds 160 > "$res/gpu-load.txt" 2>&1 &
    load=$!
    sleep 3
    timeout 150 "$GRADER" all --reference --seed 1 --no-report --json "$res/reference-beside-load.json" \
        > "$res/reference-beside-load.txt" 2>&1
    python3 - "$res/reference-beside-load.json" <<'PY' | tee -a "$res/summary.txt"
import json, sys
r = json.load(open(sys.argv[1]))
tests = [t for e in r["exercises"] for p in e["parts"] for t in p["tests"]]
score, top = sum(t["score"] for t in tests), sum(t["max_score"] for t in tests)
off = [t["name"] for t in tests if t["status"] == "not_graded_here"]
bad = [t["name"] for t in tests if t["status"] == "fail"]
print(f"references beside gpu-load: {score:.2f} / {top:.2f}; not graded here: {len(off)} {off}; failed: {bad}")
PY
    log "the ex11 jitter cheat beside gpu-load"
    root=$res/cases/jitter-beside-load
    rm -rf "$root"
    python3 grader/tests/corpus/corpus.py case cheats ex11-brent-kung-serial-random-spin "$root"
    timeout 60 "$GRADER" ex11 --part brent-kung --root "$root" --seed 1 --no-report --json "$res/jitter-beside-load.json" \
        > "$res/jitter-beside-load.txt" 2>&1
    show "$res/jitter-beside-load.json" "jitter beside gpu-load" | tee -a "$res/summary.txt"
    kill "$load" 2>/dev/null; wait "$load" 2>/dev/null
fi

if step class; then
    log "a class of the reference, one worker per slot hanging on ex10/coarse"
    class=$res/class
    rm -rf "$class" "$res/batch"
    for i in $(seq -w 1 "$CLASS_STUDENTS"); do
        for folder in reference/ex*; do
            mkdir -p "$class/s$i/exercises/$(basename "$folder")"
            cp -r "$folder/kernels" "$class/s$i/exercises/$(basename "$folder")/"
        done
    done
    CUDA_LAB_WORKER_HANG_ON=ex10/coarse timeout 240 "$GRADER" batch "$class" --out "$res/batch" --seed 1 \
        --part-timeout 20 --timeout 10 > "$res/batch.txt" 2>&1
    echo "batch: rc $?" | tee -a "$res/summary.txt"
    python3 - "$res/batch/batch.json" <<'PY' | tee -a "$res/summary.txt"
import json, sys
b = json.load(open(sys.argv[1]))
t = b.get("time") or {}
print(f"workers started {t.get('workers_started')}, regraded alone {t.get('parts_regraded_alone')}, retimed {t.get('parts_retimed', 0)}")
worst = 0.0
for f in b.get("figures", []):
    if f["reference"]:
        worst = max(worst, f["spread"])
        print(f"  {f['check']:<60} {f['students']:>3} students  {f['min']:.3f} .. {f['max']:.3f}  spread {100 * f['spread']:.1f}%")
print(f"widest reference spread: {100 * worst:.1f}% ({'ok' if worst <= 0.03 else 'OVER 3 %'})")
PY
    # Each timed figure by the worker that measured it (slot, and how many
    # workers that slot had started before): a restart that measures apart shows here.
    python3 - "$res/batch" <<'PY' | tee -a "$res/summary.txt"
import json, sys, statistics
from collections import defaultdict
out = sys.argv[1]
events = [json.loads(l) for l in open(f"{out}/workers/timeline.jsonl")]
starts = defaultdict(list)
for e in events:
    if e["what"] == "worker-start":
        starts[e["slot"]].append(e["end_s"])
by = defaultdict(lambda: defaultdict(list))
for e in events:
    if e["what"] != "worker-part" or not e.get("part"):
        continue
    worker = f"slot {e['slot']} worker {sum(1 for s in starts[e['slot']] if s <= e['start_s'])}"
    try:
        r = json.load(open(f"{out}/results/{e['part']}.json"))
    except Exception:
        continue
    for ex in r["exercises"]:
        for p in ex["parts"]:
            for t in p["tests"]:
                if t.get("perf"):
                    f = t["perf"]
                    by[t["name"]][worker].append((f["value"], f["student"], f["baseline"]))
# The figure, and the student's and the yardstick's own numbers (ms or GB/s):
# which of the two moved tells a per-process yardstick from a per-process kernel.
for check, workers in sorted(by.items()):
    meds = {w: [statistics.median(x[i] for x in v) for i in range(3)] for w, v in workers.items()}
    lo, hi = min(m[0] for m in meds.values()), max(m[0] for m in meds.values())
    flag = "" if hi <= 1.03 * lo else "   <-- workers apart"
    cells = ", ".join(f"{w}: {m[0]:.3f} (student {m[1]:.3f}, yardstick {m[2]:.3f}; {len(workers[w])})" for w, m in sorted(meds.items()))
    print(f"  {check}: {cells}{flag}")
PY
    for logf in "$res"/batch/workers/worker-*.log; do
        n=$(grep -c '^batch worker started with:' "$logf")
        d=$(grep '^batch worker started with:' "$logf" | sort -u | wc -l)
        echo "$(basename "$logf"): $n workers started, $d distinct settings (expected 1)" | tee -a "$res/summary.txt"
    done
fi

log "done"
echo "---- summary ($res/summary.txt)"
cat "$res/summary.txt"
