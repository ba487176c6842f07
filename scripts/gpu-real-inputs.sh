#!/usr/bin/env bash
# One device call for issues 46.4/46.5 and 52.2 (timed inputs drawn like real
# data, edge values in the correctness inputs): the references of the
# exercises whose timed check changed, on three seeds (every timed launch of
# ex01, ex02, ex03 and ex12 now checked against a rounding bound, not bits);
# the new cheats (quantized timed inputs) and the new variants with the
# neighbours of their exercise sets, through the corpus runner.
#
#   GRADER=.device/grader OUT=/tmp/x scripts/gpu-real-inputs.sh
#   STEPS=references ...      # only the references
#
# Expected: the references 100 % on every seed (ex01 ex02 ex03 ex12: every
# perf check passes, none `wrong-when-timed`); cheats: ex01-shared-grid-when-large,
# ex02-dot-sixteenths-when-large, ex03-rect-dp4a-when-large `wrong-when-timed`,
# every other case of ex01-ex03 its old verdict; variants: ex02-dot-sixteenths-int,
# ex03-rect-dp4a-bytes, ex09-picture-exponent-plus-one, ex10-coarse-16-bit-bins
# `wrong`. Results in $OUT/real-inputs/ (summary.txt first); under 8 minutes
# on an H200.
set -uo pipefail
cd "$(dirname "$0")/.."
GRADER=$(realpath "${GRADER:-.device/grader}")
OUT=${OUT:-$(mktemp -d)}
STEPS=${STEPS:-references,cheats,variants}
step() { [[ ",$STEPS," == *",$1,"* ]]; }
res=$OUT/real-inputs
mkdir -p "$res"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$(mktemp -d)}
summary() { echo "$*" | tee -a "$res/summary.txt"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv; date -u; git log -1 --format=%h 2>/dev/null; } > "$res/setup.txt" 2>&1

if step references; then
    for s in 1 2 3; do
        rc=0
        timeout 150 "$GRADER" all --reference --seed "$s" --no-report --json "$res/reference-seed$s.json" \
            > "$res/reference-seed$s.txt" 2>&1 || rc=$?
        summary "references, seed $s: rc $rc, $(grep -Eo '[0-9.]+ */ *[0-9.]+' "$res/reference-seed$s.txt" | tail -1)"
        grep -E "wrong|fail|FAIL" "$res/reference-seed$s.txt" | head -5 >> "$res/summary.txt"
    done
fi
if step cheats; then
    rc=0
    EXERCISE_SETS="${CHEAT_SETS:-ex01 ex02 ex03}" GRADER="$GRADER" BATCH_LIMIT=150 \
        timeout 170 grader/tests/corpus/run-gpu.sh cheats "$res/cheats" > "$res/cheats.txt" 2>&1 || rc=$?
    summary "cheats (${CHEAT_SETS:-ex01 ex02 ex03}): rc $rc (0: every verdict as expected.json)"
    tail -15 "$res/cheats.txt" >> "$res/summary.txt"
fi
if step variants; then
    rc=0
    EXERCISE_SETS="${VARIANT_SETS:-ex02 ex03 ex09 ex10}" GRADER="$GRADER" BATCH_LIMIT=200 \
        timeout 220 grader/tests/corpus/run-gpu.sh variants "$res/variants" > "$res/variants.txt" 2>&1 || rc=$?
    summary "variants (${VARIANT_SETS:-ex02 ex03 ex09 ex10}): rc $rc (0: every verdict as expected.json)"
    tail -15 "$res/variants.txt" >> "$res/summary.txt"
fi
rm -rf "$res"/cheats/class "$res"/variants/class
cat "$res/summary.txt"
