#!/usr/bin/env bash
# Batch grading, measured in one run (issue 11): the fast mode (persistent
# workers) against `--isolate` (one process per part), the hostile corpus in
# the fast mode, and `grader all --reference` warm. Builds nothing: it runs
# ./target/release/grader (or $GRADER) on the working tree.
#
#   scripts/gpu-batch-bench.sh                      # the H100: 50 students, all of ex01-ex08
#   BACKEND=sim STUDENTS=3 ISOLATE_STUDENTS=3 EXERCISES=ex01 scripts/gpu-batch-bench.sh
#                                                   # a dry run on a machine without a GPU
#
# Writes everything to $OUT/batch.tgz (OUT defaults to a fresh temporary
# folder) and prints a summary at the end. Each step has its own time limit
# (190 s fast mode, 150 s --isolate, 135 s hostile corpus, 3 x 12 s `grader
# all`: under 9 minutes in the worst case), so the archive is packed even when
# a step runs long; on an H100 the whole run should take 5 to 6 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
GRADER=${GRADER:-./target/release/grader}
BACKEND=${BACKEND:-cuda}
STUDENTS=${STUDENTS:-50}
ISOLATE_STUDENTS=${ISOLATE_STUDENTS:-12}
EXERCISES=${EXERCISES:-all}
SEED=${SEED:-1}
# --timeout for every batch (the grader's default is 10 s): the class has 8
# stuck kernels (endless loops, printf floods), each holding the GPU that long.
KERNEL_TIMEOUT=${KERNEL_TIMEOUT:-10}
OUT=${OUT:-$(mktemp -d /tmp/cuda-lab-bench.XXXXXX)}
work=$(mktemp -d /tmp/cuda-lab-bench-work.XXXXXX)
res="$work/results"
mkdir -p "$res" "$OUT"
[ -x "$GRADER" ] || { echo "no grader binary at $GRADER (cargo build --release -p grader first)"; exit 2; }
GRADER=$(realpath "$GRADER")
echo "grader $("$GRADER" --version), backend $BACKEND, $STUDENTS students, exercises $EXERCISES, seed $SEED, --timeout $KERNEL_TIMEOUT" | tee "$res/setup.txt"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>/dev/null || echo "no nvidia-smi"; nproc; } >> "$res/setup.txt"

# Runs "$@" under a limit of $1 seconds, timing it into $res/<name>.time.
timed() {
    local name=$1 limit=$2
    shift 2
    local start end status
    start=$(date +%s.%N)
    timeout "$limit" "$@" > "$res/$name.txt" 2>&1
    status=$?
    end=$(date +%s.%N)
    echo "$(echo "$end - $start" | bc) $status" > "$res/$name.time"
    [ "$status" = 124 ] && echo "$name: stopped after $limit s" | tee -a "$res/$name.txt"
    return 0
}

# 1. The class, and its first ISOLATE_STUDENTS (make-class is deterministic:
#    the first k students of a class of n are a class of k).
"$GRADER" make-class "$work/class" --students "$STUDENTS" --exercises "$EXERCISES" > /dev/null
"$GRADER" make-class "$work/class-iso" --students "$ISOLATE_STUDENTS" --exercises "$EXERCISES" > /dev/null

# 2. Fast mode (workers), the whole class.
timed fast "${FAST_LIMIT:-190}" "$GRADER" batch "$work/class" --out "$work/fast" --exercises "$EXERCISES" \
    --backend "$BACKEND" --seed "$SEED" --timeout "$KERNEL_TIMEOUT"
# 3. One process per part, on the first ISOLATE_STUDENTS.
timed isolate "${ISOLATE_LIMIT:-150}" "$GRADER" batch "$work/class-iso" --out "$work/isolate" --exercises "$EXERCISES" \
    --backend "$BACKEND" --seed "$SEED" --timeout "$KERNEL_TIMEOUT" --isolate
# 4. The same gradebook, but for performance ratios within 3%.
python3 scripts/compare-gradebooks.py "$work/fast" "$work/isolate" > "$res/compare.txt" 2>&1
echo "compare exit $?" >> "$res/compare.txt"

# 5. The hostile corpus in the fast mode (GPU only: its expectations are the GPU's).
if [ "$BACKEND" = cuda ]; then
    GRADER="$GRADER" HOSTILE_BATCH_LIMIT=${HOSTILE_LIMIT:-125} timed hostile 135 grader/tests/hostile/run-gpu.sh "$work/hostile"
else
    echo "skipped: the hostile corpus's expected verdicts are for a GPU" > "$res/hostile.txt"
    echo "0 0" > "$res/hostile.time"
fi

# 6. `grader all --reference`: once cold, then twice warm, same seed.
sel=$EXERCISES
[ "$sel" = all ] || sel=${sel//,/ }
for run in cold warm1 warm2; do
    # shellcheck disable=SC2086
    timed "all-$run" 12 "$GRADER" $sel --reference --backend "$BACKEND" --seed "$SEED" --json "$res/all-$run.json"
done

# 7. Summary and archive.
python3 - "$work" "$STUDENTS" "$ISOLATE_STUDENTS" > "$res/summary.txt" <<'PY'
import json, sys, pathlib
work = pathlib.Path(sys.argv[1]); res = work / "results"
students, iso_students = int(sys.argv[2]), int(sys.argv[3])
def took(name):
    try:
        secs, status = (res / f"{name}.time").read_text().split()
        return float(secs), int(status)
    except Exception:
        return float("nan"), -1
def batch_time(out):
    try:
        return json.loads((work / out / "batch.json").read_text()).get("time") or {}
    except Exception:
        return {}
fast, fs = took("fast"); iso, is_ = took("isolate")
print(f"fast mode:  {students} submissions in {fast:.1f} s = {students / fast * 60:.1f} per minute (exit {fs}; goal >= 30)")
print(f"--isolate:  {iso_students} submissions in {iso:.1f} s = {iso_students / iso * 60:.1f} per minute (exit {is_})")
t = batch_time("fast")
if t:
    keys = ["wall_s", "compile_ahead_s", "compile_s", "cpu_reference_s", "gpu_correctness_s", "gpu_timing_s",
            "sanitizer_s", "process_overhead_s", "lock_wait_s", "stuck_kernels_s"]
    print("fast mode time (s, summed over workers): " + ", ".join(f"{k[:-2]} {t.get(k, 0):.1f}" for k in keys))
    print(f"  idle GPU {t.get('idle_gpu_s')}; parts in workers {t.get('parts_in_workers')}, regraded alone "
          f"{t.get('parts_regraded_alone')}, workers started {t.get('workers_started')}")
    stuck = t.get("stuck_kernels_s", 0)
    if stuck and fast == fast:
        print(f"  stuck kernels held the GPU {stuck:.0f} s; without them: {students / max(fast - stuck, 1) * 60:.1f} per minute (an upper bound)")
    drift = t.get("drift") or []
    if drift:
        worst = max(drift, key=lambda d: abs(d["change"]))
        print(f"  yardstick re-timings: {len(drift)}, largest drift {worst['change']*100:+.1f}% ({worst['yardstick']})")
cmp = [l for l in (res / "compare.txt").read_text().splitlines() if l.startswith(("RESULT", "DIFF", "PERF"))]
summary = [l for l in (res / "compare.txt").read_text().splitlines() if "tests compared" in l]
print("gradebook comparison (first students, fast vs --isolate): " + " ".join(summary + cmp[-1:]))
h = res / "hostile.txt"
lines = [l for l in h.read_text().splitlines() if l.strip()] if h.exists() else []
print("hostile corpus: " + (lines[-1] if lines else "no output") + f" ({took('hostile')[0]:.0f} s)")
scores = []
for run in ["cold", "warm1", "warm2"]:
    secs, st = took(f"all-{run}")
    try:
        j = json.loads((res / f"all-{run}.json").read_text()); score = f"{j['score']:.2f}/{j['max_score']:.2f}"
        scores.append(j["score"])
    except Exception:
        score = "no JSON"
    print(f"grader all --reference {run}: {secs:.2f} s, score {score}")
print("  same score every run: " + str(len(set(scores)) == 1 and len(scores) == 3))
try:
    j = json.loads((res / "all-warm2.json").read_text())
    tests = sorted(((t["duration_ms"], t["name"]) for e in j["exercises"] for p in e["parts"] for t in p["tests"]), reverse=True)
    print("  slowest checks (warm): " + ", ".join(f"{n} {ms:.0f} ms" for ms, n in tests[:8]))
    print(f"  all checks together: {sum(ms for ms, _ in tests) / 1e3:.2f} s")
except Exception as e:
    print(f"  no per-check times: {e}")
PY
cat "$res/summary.txt"
for out in fast isolate; do
    mkdir -p "$res/$out"
    cp "$work/$out"/{batch.json,gradebook.json,gradebook.csv} "$res/$out/" 2>/dev/null
    cp -r "$work/$out/submissions" "$res/$out/" 2>/dev/null
    cp -r "$work/$out/workers" "$res/$out/" 2>/dev/null
done
cp "$work/class/.class.json" "$res/class.json" 2>/dev/null
[ -d "$work/hostile/grades" ] && cp "$work/hostile/check.txt" "$work/hostile/summary.txt" "$res/" 2>/dev/null
tar -czf "$OUT/batch.tgz" -C "$work" results
echo "archive: $OUT/batch.tgz ($(du -h "$OUT/batch.tgz" | cut -f1)); work folder $work"
