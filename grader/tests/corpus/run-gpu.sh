#!/usr/bin/env bash
# Grades a corpus (grader/tests/hostile, grader/tests/variants) on this machine's
# GPU with `grader batch`, one batch per exercise set and seed, and compares every
# verdict with the corpus's expected.json (corpus.py; docs/grading-accuracy.md).
#
#   grader/tests/corpus/run-gpu.sh CORPUS [WORK_DIR]
#
# Environment: GRADER=path/to/grader (default: build it), SEEDS="1 2 3" (default 1),
# BATCH_LIMIT=seconds for all batches together (default 900; a batch still running
# then is stopped and corpus.py reads the parts it finished), EXERCISE_SETS="ex01 ex03" (default:
# every exercise set of the corpus), BACKEND (default cuda; `sim` tries the plumbing),
# BATCH_ARGS="..." (more `grader batch` arguments, e.g. --timeout-from-reference 1000).
#
# Leaves WORK_DIR/class/<set>/<case> (the submissions), WORK_DIR/seed-N/<set>/ (each
# batch's output), WORK_DIR/seed-N/check.txt (the comparison) and WORK_DIR/perf.md
# (every timed check's figures, per calibration family); exits 1 on any mismatch.
set -euo pipefail
cd "$(dirname "$0")/../../.."
corpus=${1:?usage: run-gpu.sh CORPUS [WORK_DIR]}
work=${2:-$(mktemp -d "/tmp/cuda-lab-$corpus.XXXXXX")}
runner=grader/tests/corpus/corpus.py
if [ -z "${GRADER:-}" ]; then
    cargo build --release -p grader
    GRADER=target/release/grader
fi
python3 "$runner" prepare "$corpus" "$work/class"
read -r -a extra < <(python3 -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1])).get("gpu_batch_args", [])))' \
    "grader/tests/$corpus/expected.json")
deadline=$((SECONDS + ${BATCH_LIMIT:-900}))
status=0
for seed in ${SEEDS:-1}; do
    mkdir -p "$work/seed-$seed"
    for group in ${EXERCISE_SETS:-$(python3 "$runner" groups "$corpus")}; do
        left=$((deadline - SECONDS))
        if [ "$left" -le 5 ]; then
            echo "out of time: seed $seed, $group not graded" | tee -a "$work/seed-$seed/summary.txt"
            continue
        fi
        rc=0
        timeout "$left" "$GRADER" batch "$work/class/$group" --out "$work/seed-$seed/$group" --exercises "$group" \
            --backend "${BACKEND:-cuda}" --seed "$seed" "${extra[@]}" ${BATCH_ARGS:-} >> "$work/seed-$seed/summary.txt" 2>&1 || rc=$?
        [ "$rc" = 124 ] && echo "seed $seed, $group: stopped at the time limit" | tee -a "$work/seed-$seed/summary.txt"
    done
    python3 "$runner" check "$corpus" "$work/seed-$seed" --backend gpu > "$work/seed-$seed/check.txt" || status=1
    tail -n 3 "$work/seed-$seed/check.txt"
done
python3 "$runner" perf "$corpus" "$work"/seed-* > "$work/perf.md" || status=1
echo "results in $work (check.txt per seed, perf.md)"
exit $status
