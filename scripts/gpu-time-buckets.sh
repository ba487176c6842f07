#!/usr/bin/env bash
# Every second of a part accounted for (issue 48): a realistic class graded on
# the GPU, then each part's buckets in workers/timeline.jsonl summed against
# its wall, and the batch's totals (batch.json's `time`); `grader all
# --reference` warm, and each exercise warm with CUDA_LAB_PROFILE=1 (where one
# run's time went, the same buckets). Builds nothing: runs $GRADER (default
# ./.device/grader, else ./target/release/grader) on the working tree. Under 8
# minutes on an H200 with STUDENTS=80 (the class took 205 s before issue 48).
#
#   scripts/gpu-time-buckets.sh                     # on the H200
#   BACKEND=sim STUDENTS=2 EXERCISES=ex01 scripts/gpu-time-buckets.sh   # a dry run without a GPU
#
# Writes $OUT/time-buckets/ (OUT defaults to a fresh temporary folder) and
# prints a summary: the worst part's unaccounted share must be under 5 %.
set -uo pipefail
cd "$(dirname "$0")/.."
GRADER=${GRADER:-./.device/grader}
[ -x "$GRADER" ] || GRADER=./target/release/grader
[ -x "$GRADER" ] || { echo "no grader binary at $GRADER (cargo build --release -p grader first)"; exit 2; }
GRADER=$(realpath "$GRADER")
BACKEND=${BACKEND:-cuda}
STUDENTS=${STUDENTS:-80}
EXERCISES=${EXERCISES:-all}
SEED=${SEED:-1}
OUT=${OUT:-$(mktemp -d /tmp/cuda-lab-buckets.XXXXXX)}
res="$OUT/time-buckets"
work=$(mktemp -d /tmp/cuda-lab-buckets-work.XXXXXX)
mkdir -p "$res"
echo "grader $("$GRADER" --version), backend $BACKEND, $STUDENTS students, exercises $EXERCISES, seed $SEED" | tee "$res/setup.txt"
{ nvidia-smi --query-gpu=name,driver_version --format=csv 2>/dev/null || echo "no nvidia-smi"; nproc; date -u; } >> "$res/setup.txt"

backend=()
[ "$BACKEND" = cuda ] || backend=(--backend "$BACKEND")

# 1. grader all --reference: once cold, three times warm; each exercise warm, profiled.
for i in 0 1 2 3; do
  s=$(date +%s.%N)
  timeout 120 "$GRADER" "$EXERCISES" --reference --no-report --seed "$SEED" "${backend[@]}" > "$res/all-$i.txt" 2>&1
  echo "all-$i $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$s" "$(date +%s.%N)") s" | tee -a "$res/all.times"
done
exercises=$("$GRADER" list 2>/dev/null | grep -oE '^ex[0-9]+' | sort -u)
[ "$EXERCISES" = all ] || exercises=$(echo "$EXERCISES" | tr ',' ' ')
for ex in $exercises; do
  s=$(date +%s.%N)
  CUDA_LAB_PROFILE=1 timeout 60 "$GRADER" "$ex" --reference --no-report --seed "$SEED" "${backend[@]}" > "$res/$ex.txt" 2> "$res/$ex.profile"
  echo "$ex $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$s" "$(date +%s.%N)") s" | tee -a "$res/exercises.times"
done

# 2. The class, graded with the default settings; its timeline summed.
python3 grader/tests/corpus/realistic_class.py make "$work/class" --students "$STUDENTS" --seed "$SEED" > "$res/make.txt" 2>&1
ex_args=()
[ "$EXERCISES" = all ] || ex_args=(--exercises "$EXERCISES")
s=$(date +%s.%N)
timeout 420 "$GRADER" batch "$work/class" --out "$work/out" --seed "$SEED" "${backend[@]}" "${ex_args[@]}" > "$res/batch.txt" 2>&1
rc=$?
echo "batch $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$s" "$(date +%s.%N)") s (exit $rc)" | tee "$res/batch.time"
cp "$work/out/batch.json" "$work/out/gradebook.json" "$work/out/workers/timeline.jsonl" "$res/" 2>/dev/null
python3 - "$res" "$STUDENTS" <<'EOF' | tee "$res/summary.txt"
import json, sys
res, students = sys.argv[1], int(sys.argv[2])
named = ["compile", "setup", "sim_measure", "cpu_reference", "gpu_correctness", "gpu_timing", "lock_wait", "queued", "sanitizer"]
parts, totals, worst = 0, {k: 0.0 for k in named + ["other", "wall"]}, (0.0, "")
try:
    lines = open(f"{res}/timeline.jsonl").read().splitlines()
except OSError:
    lines = []
for line in lines:
    e = json.loads(line)
    t = e.get("time")
    if e.get("what") != "worker-part" or not t:
        continue
    parts += 1
    for k in totals:
        totals[k] += t.get(k, 0.0)
    unaccounted = t["wall"] - sum(t.get(k, 0.0) for k in named)
    share = unaccounted / t["wall"] if t["wall"] > 0 else 0.0
    if abs(share) > abs(worst[0]):
        worst = (share, e.get("part", "?"))
print(f"{parts} parts graded in workers; per submission of {students} (worker-seconds):")
for k, v in totals.items():
    print(f"  {k:<16} {v / max(students, 1):8.3f} s")
named_sum = sum(totals[k] for k in named)
print(f"named buckets {named_sum:.1f} s of {totals['wall']:.1f} s of parts' wall "
      f"({100 * named_sum / max(totals['wall'], 1e-9):.1f} %); worst part {worst[1]}: {100 * worst[0]:.1f} % unaccounted")
try:
    b = json.load(open(f"{res}/batch.json"))["time"]
    print(f"batch.json: wall {b['wall_s']:.1f} s, parts' wall {b.get('parts_wall_s', 0):.1f} s, other {b.get('other_s', 0):.1f} s")
except (OSError, KeyError, TypeError):
    print("batch.json: no time breakdown")
EOF
echo "exercises warm (s):"; cat "$res/exercises.times"
echo "grader all --reference (s):"; cat "$res/all.times"
rm -rf "$work"
