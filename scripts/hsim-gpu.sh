#!/bin/bash
# Issues 46.2 and 52.1 on a GPU (the hsim branch): the structure replays on
# ptx-sim show the grading GPU's SM count, so kernels that take the lesson's
# path only where %nsmid is 1 lose their structure points on the GPU too; a
# return before __syncthreads() fails the structure check that asks for the
# barrier (correctness passes), and the sanitizer pass notes it.
#
#   GRADER=./.device/grader OUT=/tmp/out scripts/hsim-gpu.sh
#
# Writes each run's log and JSON under $OUT/hsim/ and prints one line per run:
# ok when the first failing test is the expected structure check (or, for a
# reference, when nothing fails). About 2-4 minutes on an H200.
set -u
GRADER=${GRADER:-./.device/grader}
DIR=${OUT:-/tmp}/hsim
mkdir -p "$DIR"
fails=0

# run NAME EXPECTED_FIRST_FAILURE GRADER_ARGS...: EXPECTED "" means no failure at all.
run() {
    local name=$1 expect=$2
    shift 2
    local start=$SECONDS
    "$GRADER" "$@" --backend cuda --seed 1 --no-report --json "$DIR/$name.json" > "$DIR/$name.log" 2>&1
    local first
    first=$(grep -m1 "first failure:" "$DIR/$name.log" | sed 's/^ *first failure: //')
    local verdict=ok
    if [ -z "$expect" ]; then
        [ -n "$first" ] && verdict=MISMATCH
    else
        case "$first" in *"$expect"*) ;; *) verdict=MISMATCH ;; esac
    fi
    [ "$verdict" = ok ] || fails=$((fails + 1))
    printf '%-8s %-52s %4ss  %s\n' "$verdict" "$name" $((SECONDS - start)) "${first:0:150}"
}

# Each case's own files (a kernel kept as an edit applied), graded as the root.
V=$DIR/cases/variants
C=$DIR/cases/cheats
for c in variants/ex04-v2-returns-before-barrier variants/ex07-coalesced-returns-before-barrier \
    cheats/ex06-load-staged-only-on-the-simulator cheats/ex07-coalesced-naive-unless-simulated \
    cheats/ex12-constant-broadcast-only-on-the-simulator; do
    rm -rf "$DIR/cases/$c" && python3 grader/tests/corpus/corpus.py case "${c%%/*}" "${c#*/}" "$DIR/cases/$c"
done
run variant-ex04-v2-returns-before-barrier "ex04::v2::structure::barrier" \
    ex04 --part v2 --root $V/ex04-v2-returns-before-barrier
run variant-ex07-coalesced-returns-before-barrier "ex07::coalesced::structure::coalesced-reads-and-writes" \
    ex07 --part coalesced --root $V/ex07-coalesced-returns-before-barrier
run cheat-ex06-load-staged-only-on-the-simulator "ex06::load::structure::dynamic-shared" \
    ex06 --root $C/ex06-load-staged-only-on-the-simulator
run cheat-ex07-coalesced-naive-unless-simulated "ex07::coalesced::structure::coalesced-reads-and-writes" \
    ex07 --part coalesced --root $C/ex07-coalesced-naive-unless-simulated
run cheat-ex12-constant-broadcast-only-on-the-simulator "ex12::constant::structure::mask-in-constant" \
    ex12 --part constant --root $C/ex12-constant-broadcast-only-on-the-simulator
for ex in ex04 ex06 ex07 ex12; do
    run "reference-$ex" "" "$ex" --reference
done

# The sanitizer pass replays the variants' correctness cases: it notes the barrier.
for name in variant-ex04-v2-returns-before-barrier variant-ex07-coalesced-returns-before-barrier; do
    if grep -q "found a barrier that some threads skip" "$DIR/$name.json"; then
        echo "ok       $name: the sanitizer pass notes the barrier on its correctness tests"
    else
        echo "MISSING  $name: no sanitizer note"
        fails=$((fails + 1))
    fi
done
echo "hsim-gpu: $fails mismatch(es); logs and JSON in $DIR"
[ "$fails" = 0 ]
