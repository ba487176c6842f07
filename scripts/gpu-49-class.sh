#!/usr/bin/env bash
# Issue 49's last figure on one GPU: a realistic class of 80 graded with and
# without the GPU's counters. With counters it takes about 20 minutes on an
# H200, more than one device call: run this script again in the next call of
# the same lease (state lives in STATE, /tmp by default) and the batch resumes
# where the last call stopped it. Builds nothing: GRADER is the release binary.
#
#   GRADER=.device/grader OUT=$OUT LIMIT=540 scripts/gpu-49-class.sh
#   ... DEADLINE=$(( $(date +%s) + 500 )) ...   # or: stop the run with counters by then
#   ... BATCH_ARGS="--workers-per-gpu 3" ...        # more arguments for the run with counters
#   ... OFF_ARGS="--workers-per-gpu 4" TAG=-w4 ...  # the run without counters; class49-w4.tgz
#
# Each call: makes the class (once), grades it without counters (once), then
# grades it with CUDA_LAB_COUNTERS=on for at most LIMIT seconds, and packs
# into $OUT/class49.tgz the gradebooks, batch.json, the timelines, the check
# of every verdict against the class's .realistic.json, the seconds each call
# spent, and the workers' logs (they say where each thread of a part that ran
# into its timeout waited). Done when `class with counters: finished` prints.
set -uo pipefail
cd "$(dirname "$0")/.."
GRADER=$(realpath "${GRADER:-.device/grader}")
OUT=${OUT:?set OUT to a folder for the results}
STATE=${STATE:-/tmp/gpu-49-class}
LIMIT=${LIMIT:-540}
STUDENTS=${STUDENTS:-80}
export PATH="$PATH:/usr/local/cuda/bin"
class=$STATE/class res=$STATE/results
mkdir -p "$res"
now() { date +%s; }
if [ ! -d "$class" ]; then
    python3 grader/tests/corpus/realistic_class.py make "$class" --students "$STUDENTS" --seed 1 >"$res/make.log" 2>&1
fi
if [ ! -f "$STATE/off/gradebook.csv" ]; then
    s=$(now)
    CUDA_LAB_COUNTERS=off "$GRADER" batch "$class" --seed 1 --credit scaled --out "$STATE/off" \
        ${OFF_ARGS:-} >"$res/off.log" 2>&1
    echo "off rc=$? $(( $(now) - s )) s" | tee -a "$res/times.txt"
fi
if [ ! -f "$STATE/on/gradebook.csv" ]; then
    s=$(now)
    # DEADLINE (epoch seconds) caps the run with counters where this call began with other work.
    [ -n "${DEADLINE:-}" ] && [ $((DEADLINE - s)) -lt "$LIMIT" ] && LIMIT=$((DEADLINE - s))
    timeout "$LIMIT" env CUDA_LAB_COUNTERS=on "$GRADER" batch "$class" --seed 1 --credit scaled --out "$STATE/on" \
        ${BATCH_ARGS:-} >>"$res/on.log" 2>&1
    echo "on rc=$? $(( $(now) - s )) s" | tee -a "$res/times.txt"
fi
done_parts=$(find "$STATE/on/submissions" -name '*.json' 2>/dev/null | wc -l)
echo "submissions graded with counters so far: $done_parts of $STUDENTS" | tee -a "$res/times.txt"
for run in off on; do
    [ -f "$STATE/$run/gradebook.csv" ] || continue
    python3 grader/tests/corpus/realistic_class.py check "$class" "$STATE/$run" >"$res/check-$run.txt" 2>&1
    echo "check $run rc=$?: $(tail -1 "$res/check-$run.txt")" | tee -a "$res/times.txt"
    cp "$STATE/$run/gradebook.csv" "$res/gradebook-$run.csv"
    cp "$STATE/$run/batch.json" "$res/batch-$run.json" 2>/dev/null
    grep -h "throughput\|took" "$res/$run.log" | tail -2 | sed "s/^/$run: /" | tee -a "$res/times.txt"
done
if [ -f "$STATE/on/gradebook.csv" ]; then
    echo "class with counters: finished; on calls: $(grep -c '^on rc' "$res/times.txt")"
    cmp -s "$res/gradebook-off.csv" "$res/gradebook-on.csv" && echo "gradebooks identical" || echo "gradebooks differ"
fi
mkdir -p "$res/logs"
for run in off on; do
    cp "$STATE/$run/workers/timeline.jsonl" "$res/logs/timeline-$run.jsonl" 2>/dev/null
    for log in "$STATE/$run"/workers/*.log; do
        [ -f "$log" ] && tail -c 200000 "$log" >"$res/logs/$run-$(basename "$log")"
    done
done
tar -C "$STATE" -czf "$OUT/class49${TAG:-}.tgz" results
echo "results: $OUT/class49${TAG:-}.tgz"
