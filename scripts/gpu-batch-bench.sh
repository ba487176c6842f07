#!/usr/bin/env bash
# Batch grading, measured (issue 11): the fast mode (persistent workers) in
# one or more configurations, `--isolate` (one process per part) on the first
# students, the hostile corpus in the fast mode, and `grader all --reference`
# cold then warm. Builds nothing: it runs ./target/release/grader (or $GRADER)
# on the working tree. The steps fit in two device calls of 10 minutes:
#
#   STEPS=fast,isolate scripts/gpu-batch-bench.sh   # the class (about 9 minutes at most)
#   STEPS=hostile,all scripts/gpu-batch-bench.sh    # the rest (under 3 minutes)
#   BACKEND=sim STUDENTS=3 ISOLATE_STUDENTS=3 EXERCISES=ex01 FAST="10/1" scripts/gpu-batch-bench.sh
#                                                   # a dry run on a machine without a GPU
#
# FAST lists the fast-mode runs as KERNEL_TIMEOUT/WORKERS_PER_GPU (default
# "10/2 2/1 2/2"): the class has 8 kernels that never end (endless loops and
# printf floods), each holding the GPU for the whole --timeout, so the kernel
# time limit decides much of the wall time. The first run is compared with
# --isolate (same --timeout). Writes everything to $OUT/batch-<steps>.tgz (OUT
# defaults to a fresh temporary folder) and prints a summary at the end; each
# step has its own time limit, so the archive is packed even when one runs long.
set -uo pipefail
cd "$(dirname "$0")/.."
GRADER=${GRADER:-./target/release/grader}
BACKEND=${BACKEND:-cuda}
STUDENTS=${STUDENTS:-50}
ISOLATE_STUDENTS=${ISOLATE_STUDENTS:-8}
EXERCISES=${EXERCISES:-all}
SEED=${SEED:-1}
FAST=${FAST:-10/2 2/1 2/2}
STEPS=${STEPS:-fast,isolate,hostile,all}
OUT=${OUT:-$(mktemp -d /tmp/cuda-lab-bench.XXXXXX)}
work=$(mktemp -d /tmp/cuda-lab-bench-work.XXXXXX)
res="$work/results"
mkdir -p "$res" "$OUT"
[ -x "$GRADER" ] || { echo "no grader binary at $GRADER (cargo build --release -p grader first)"; exit 2; }
GRADER=$(realpath "$GRADER")
first_timeout=${FAST%%/*}
step() { [[ ",$STEPS," == *",$1,"* ]]; }
echo "grader $("$GRADER" --version), backend $BACKEND, $STUDENTS students (distinct: ${DISTINCT:-0}), exercises $EXERCISES, seed $SEED, fast runs $FAST, steps $STEPS" | tee "$res/setup.txt"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>/dev/null || echo "no nvidia-smi"; nproc; date -u; } >> "$res/setup.txt"

# Runs "$@" under a limit of $2 seconds, timing it into $res/<name>.time.
timed() {
    local name=$1 limit=$2
    shift 2
    local start status
    start=$(date +%s.%N)
    timeout "$limit" "$@" > "$res/$name.txt" 2>&1
    status=$?
    python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f} {sys.argv[3]}')" \
        "$start" "$(date +%s.%N)" "$status" > "$res/$name.time"
    [ "$status" = 124 ] && echo "$name: stopped after $limit s" | tee -a "$res/$name.txt"
    return 0
}

# 1. The class, and its first ISOLATE_STUDENTS (make-class is deterministic:
#    the first k students of a class of n are a class of k).
#    DISTINCT=1 gives every student's kernels a PTX of their own, so that no
#    cache (compiled PTX, sanitizer replays) shares work between students.
distinct=()
[ "${DISTINCT:-0}" = 1 ] && distinct=(--distinct)
"$GRADER" make-class "$work/class" --students "$STUDENTS" --exercises "$EXERCISES" "${distinct[@]}" > /dev/null
"$GRADER" make-class "$work/class-iso" --students "$ISOLATE_STUDENTS" --exercises "$EXERCISES" "${distinct[@]}" > /dev/null

# 2. Fast mode (workers), the whole class, once per configuration.
if step fast; then
    for config in $FAST; do
        t=${config%/*} w=${config#*/}
        timed "fast-t$t-w$w" "${FAST_LIMIT:-200}" "$GRADER" batch "$work/class" --out "$work/fast-t$t-w$w" \
            --exercises "$EXERCISES" --backend "$BACKEND" --seed "$SEED" --timeout "$t" --workers-per-gpu "$w"
    done
fi
# 3. One process per part, on the first ISOLATE_STUDENTS, compared with the first fast run.
if step isolate; then
    timed isolate "${ISOLATE_LIMIT:-120}" "$GRADER" batch "$work/class-iso" --out "$work/isolate" \
        --exercises "$EXERCISES" --backend "$BACKEND" --seed "$SEED" --timeout "$first_timeout" --isolate
    first=${FAST%% *}
    python3 scripts/compare-gradebooks.py "$work/fast-t${first%/*}-w${first#*/}" "$work/isolate" > "$res/compare.txt" 2>&1
    echo "compare exit $?" >> "$res/compare.txt"
fi
# 4. The hostile corpus in the fast mode (GPU only: its expectations are the GPU's).
if step hostile; then
    if [ "$BACKEND" = cuda ]; then
        GRADER="$GRADER" HOSTILE_BATCH_LIMIT=${HOSTILE_LIMIT:-125} timed hostile 135 grader/tests/hostile/run-gpu.sh "$work/hostile"
    else
        echo "skipped: the hostile corpus's expected verdicts are for a GPU" > "$res/hostile.txt"
        echo "0 0" > "$res/hostile.time"
    fi
fi
# 5. `grader all --reference`: once cold, then twice warm, same seed.
if step all; then
    sel=$EXERCISES
    [ "$sel" = all ] || sel=${sel//,/ }
    for run in cold warm1 warm2; do
        # shellcheck disable=SC2086
        timed "all-$run" 15 "$GRADER" $sel --reference --backend "$BACKEND" --seed "$SEED" --json "$res/all-$run.json"
    done
fi

# 6. Summary and archive.
python3 scripts/batch-bench-summary.py "$work" "$STUDENTS" "$ISOLATE_STUDENTS" > "$res/summary.txt" 2>&1
cat "$res/summary.txt"
for out in "$work"/fast-* "$work/isolate"; do
    [ -d "$out" ] || continue
    name=$(basename "$out")
    mkdir -p "$res/$name"
    cp "$out"/{batch.json,gradebook.json,gradebook.csv} "$res/$name/" 2>/dev/null
    # results/ too: a run stopped by its limit has no gradebook, only its parts.
    cp -r "$out/submissions" "$out/workers" "$out/results" "$res/$name/" 2>/dev/null
done
cp "$work/class/.class.json" "$res/class.json" 2>/dev/null
[ -d "$work/hostile/grades" ] && cp "$work/hostile/check.txt" "$work/hostile/summary.txt" "$res/" 2>/dev/null
archive="$OUT/batch-${STEPS//,/-}.tgz"
tar -czf "$archive" -C "$work" results
echo "archive: $archive ($(du -h "$archive" | cut -f1)); work folder $work"
