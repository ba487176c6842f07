#!/usr/bin/env bash
# The GPU runs that docs/gpu-runs.md ("Waiting for a GPU") lists, in two
# device calls of under 10 minutes each (a machine lent for a while: call
# stage 2 right after stage 1, before it goes back). Builds nothing:
# A is the grader before the changes waiting (for the A/B), B the current one.
#
#   OUT=$OUT STAGE=1 scripts/gpu-pending.sh .device/graderA .device/grader
#   OUT=$OUT STAGE=2 scripts/gpu-pending.sh .device/graderA .device/grader
#   OUT=$OUT STAGE=3 BUDGET=400 scripts/gpu-pending.sh .device/graderA .device/grader
#   OUT=$OUT STAGE=4 BUDGET=520 scripts/gpu-pending.sh .device/graderA .device/grader
#   OUT=$OUT STAGE=5 BUDGET=540 scripts/gpu-pending.sh .device/graderA .device/grader
#   OUT=$OUT STAGE=6 BUDGET=540 scripts/gpu-pending.sh .device/graderA .device/grader
#   OUT=$OUT STAGE=7 BUDGET=560 scripts/gpu-pending.sh .device/graderA .device/grader
#   OUT=$OUT STAGE=8 BUDGET=560 scripts/gpu-pending.sh .device/graderA .device/grader
#
# Stage 1 (about 8 min): issue 48's A/B of a warm `grader all` (gpu-48-steady.sh),
# each exercise warm with B (seeds 1 and 2), the variants corpus, the cheat
# corpus without and with counters. Stage 2 (about 7 min): the class of 80
# without counters (gpu-49-class.sh, LIMIT=1) and the counters' figures per
# model (gpu-49-counters.sh, which rewrites this model's calibration file:
# commit it and run `grader calibrate --update-docs`). Everything lands in
# one file, $OUT/stage-N.tgz (the device tool returns at most 8 files), packed
# again at every step so that a run stopped at its limit still returns the
# steps it finished; progress.txt and each.txt also come back loose.
set -u
cd "$(dirname "$0")/.."
a=$(realpath "${1:?grader A}") b=$(realpath "${2:?grader B}")
stage=${STAGE:?set STAGE to 1, 2, 3 or 4}
OUT=${OUT:?set OUT}
R=/tmp/gpu-pending/stage-$stage
rm -rf "$R" && mkdir -p "$R"
export PATH="$PATH:/usr/local/cuda/bin"
start=$SECONDS
pack() { tar -C "${R%/*}" -czf "$OUT/stage-$stage.tgz" "stage-$stage"; cp "$R"/progress.txt "$R"/each.txt "$OUT/" 2>/dev/null || true; }
# Seconds the last corpus may take: what BUDGET (560 s) leaves of the call, 30 at least.
left() { local l=$((${BUDGET:-560} - SECONDS + start)); echo $((l > 30 ? l : 30)); }
mark() { echo "$1 done at $((SECONDS - start)) s" | tee -a "$R/progress.txt"; pack; }
# The class without counters graded by B; WORKERS (per GPU) where given, else the
# batch's default; with a second argument `a`, graded by A.
class() {
    local w=${1:-} who=${2:-b} args= tag=
    [ -n "$w" ] && args="--workers-per-gpu $w" tag=-w$w
    [ "$who" = a ] && tag=$tag-a
    GRADER=$([ "$who" = a ] && echo "$a" || echo "$b") OUT=$R LIMIT=1 STATE=/tmp/gpu-49-class$tag \
        OFF_ARGS="$args" TAG="$tag" scripts/gpu-49-class.sh >"$R/class$tag.out" 2>&1
    mark "class $w $who"
}
# Each exercise warm with B, seeds 1 and 2 (issue 48's one exercise ≤ 1 s).
each() {
    for ex in ex01 ex02 ex03 ex04 ex05 ex06 ex07 ex08 ex09 ex10 ex11 ex12; do
        for seed in 1 2; do
            s=$(date +%s%N)
            CUDA_LAB_COUNTERS=off CUDA_LAB_PROFILE=1 "$b" $ex --reference --no-report --seed $seed >"$R/$ex-$seed.log" 2>&1
            rc=$?
            echo "$ex seed $seed: $(( ($(date +%s%N) - s) / 1000000 )) ms rc=$rc" >>"$R/each.txt"
        done
    done
    mark each
}
corpus() { # NAME COUNTERS LIMIT
    local work=/tmp/gpu-pending-$1-$2
    CUDA_LAB_COUNTERS=$2 GRADER=$b SEEDS=1 BATCH_LIMIT=$3 grader/tests/corpus/run-gpu.sh "$1" "$work" >"$R/$1-$2.out" 2>&1
    cp "$work/seed-1/check.txt" "$R/$1-$2-check.txt" 2>/dev/null
    cp "$work/perf.md" "$R/$1-$2-perf.md" 2>/dev/null
    mark "$1 counters $2"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$R/gpu.txt" 2>&1
if [ "$stage" = 1 ]; then
    OUT=$R scripts/gpu-48-steady.sh "$a" "$b" 3 >"$R/steady.out" 2>&1
    mark steady
    each
    corpus variants auto 200
    corpus cheats off 100
    corpus cheats on "$(left)"
    tar -C /tmp -czf "$R/corpora.tgz" gpu-pending-variants-auto gpu-pending-cheats-off gpu-pending-cheats-on 2>/dev/null
    pack
elif [ "$stage" = 3 ]; then
    # What stages 1 and 2 left on 2026-12-06 (an H100): that file's ex10 thresholds, older
    # than 2026-12-02's buffer placement, judged every ex10-private-all-bins of the class
    # too slow; the variants corpus past ex03; ex02's shared loads in words (e98ae9d) on
    # the GPU's counters; the cheat corpus, for ex03's measurement at the timed size
    # (2026-12-07). About 9 minutes; BUDGET caps it.
    case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
    *H100*)
        "$b" calibrate --exercises ex10 >"$R/calibrate-ex10.out" 2>&1
        cp calibration/*.toml "$R/"
        mark "calibrate ex10" ;;
    esac
    # What a kernel reads from %envreg and %pm there (the simulator shows 0): seconds.
    { nvcc -O3 -arch=sm_90 -o /tmp/envreg scripts/gpu-49-envreg.cu && /tmp/envreg; } >"$R/envreg.txt" 2>&1
    mark envreg
    # Shortest first, so that a call stopped at its limit returns the most.
    corpus cheats off 90
    EXERCISE_SETS=ex02 corpus variants on 60
    class
    corpus variants off "$(left)"
    tar -C /tmp -czf "$R/corpora.tgz" gpu-pending-variants-off gpu-pending-variants-on gpu-pending-cheats-off 2>/dev/null
    pack
elif [ "$stage" = 4 ]; then
    # What stage 3 (an H100, 2026-12-07) left: the cheats with counters (ex07's small-grid and
    # %envreg cases, the ex07 index-valued input now wrong-when-timed on both witnesses), the
    # variants from ex10 on and ex03's two block-order cases, the class with generated inputs,
    # and, on an H200, issue 48's A/B and its %envreg values; where a warm `all` spends its
    # wall, check by check, and what the sanitizer's pass takes from it (gpu-48-where.sh).
    { nvcc -O3 -arch=sm_90 -o /tmp/envreg scripts/gpu-49-envreg.cu && /tmp/envreg; } >"$R/envreg.txt" 2>&1
    mark envreg
    OUT=$R scripts/gpu-48-where.sh "$b" >"$R/where.out" 2>&1
    mark where
    OUT=$R scripts/gpu-48-steady.sh "$a" "$b" 2 >"$R/steady.out" 2>&1
    mark steady
    EXERCISE_SETS="ex03 ex04 ex05 ex06 ex07 ex09 ex12" corpus cheats on 170
    EXERCISE_SETS="ex03 ex10 ex11 ex12" corpus variants off "$(( $(left) < 120 ? $(left) : 120 ))"
    # The class only where a call has room for it (about 160 s).
    [ "$(left)" -ge 160 ] && class
    tar -C /tmp -czf "$R/corpora.tgz" gpu-pending-variants-off gpu-pending-cheats-on 2>/dev/null
    pack
elif [ "$stage" = 5 ]; then
    # What stage 4 (an H100, 2026-12-07) left: 95306d8's references drawn ahead of the GPU on
    # a warm `all` (A/B, and the traced run: what the GPU's thread still waits for), each
    # exercise warm, ex12's cheats with counters, the variants of ex11 and ex12, the class;
    # on an H200, issue 48's targets and its %envreg values.
    { nvcc -O3 -arch=sm_90 -o /tmp/envreg scripts/gpu-49-envreg.cu && /tmp/envreg; } >"$R/envreg.txt" 2>&1
    mark envreg
    OUT=$R scripts/gpu-48-steady.sh "$a" "$b" 2 >"$R/steady.out" 2>&1
    mark steady
    OUT=$R ROUNDS=0 scripts/gpu-48-where.sh "$b" >"$R/where.out" 2>&1
    mark where
    each
    EXERCISE_SETS=ex12 corpus cheats on 60
    EXERCISE_SETS="ex11 ex12" corpus variants off 60
    [ "$(left)" -ge 150 ] && class
    tar -C /tmp -czf "$R/corpora.tgz" gpu-pending-variants-off gpu-pending-cheats-on 2>/dev/null
    pack
elif [ "$stage" = 6 ]; then
    # The timed-size measurements of ex01, ex02, ex08, ex10 and ex11 (2026-12-07, thirteenth
    # session) and the yardstick's three steady samples, most needed first: those exercises'
    # cheats with counters, each exercise warm, A/B of a warm `all`, their variants without
    # counters, where a warm `all` waits, the class.
    EXERCISE_SETS="ex01 ex02 ex08 ex10 ex11" corpus cheats on 150
    each
    OUT=$R scripts/gpu-48-steady.sh "$a" "$b" 2 >"$R/steady.out" 2>&1
    mark steady
    EXERCISE_SETS="ex01 ex02 ex08 ex10 ex11" corpus variants off "$(( $(left) < 100 ? $(left) : 100 ))"
    OUT=$R ROUNDS=0 scripts/gpu-48-where.sh "$b" >"$R/where.out" 2>&1
    mark where
    [ "$(left)" -ge 150 ] && class
    tar -C /tmp -czf "$R/corpora.tgz" gpu-pending-variants-off gpu-pending-cheats-on 2>/dev/null
    pack
elif [ "$stage" = 7 ]; then
    # What stage 6 (an H100, 2026-12-07) left: the cheats with counters after the counters'
    # scaling to a sample (GpuCounters::scaled), ex11's first; the references with and
    # without counters (issue 49's cost, and the references passing on both witnesses);
    # each exercise warm; the class with four workers a GPU beside the default three.
    EXERCISE_SETS="ex11 ex01 ex02 ex08 ex10" corpus cheats on 170
    for c in on off; do
        s=$(date +%s%N)
        CUDA_LAB_COUNTERS=$c "$b" all --reference --no-report --seed 1 >"$R/all-$c.log" 2>&1
        rc=$?
        echo "all counters $c: $(( ($(date +%s%N) - s) / 1000000 )) ms rc=$rc" >>"$R/each.txt"
    done
    mark "all on and off"
    each
    [ "$(left)" -ge 150 ] && class 4
    [ "$(left)" -ge 150 ] && class
    EXERCISE_SETS="ex11" corpus variants off "$(( $(left) < 60 ? $(left) : 60 ))"
    tar -C /tmp -czf "$R/corpora.tgz" gpu-pending-variants-off gpu-pending-cheats-on 2>/dev/null
    pack
elif [ "$stage" = 8 ]; then
    # What stage 7 (an H100, 2026-12-08) left: the class with A and B (B: a cached yardstick
    # timing reused without a launch, which held the GPU alone for ex10 private's 111 ms a
    # part) and with four workers a GPU (the default three gave 809.6 parts per minute, its
    # GPU timed 74 of its 151 s); issue 48's A/B of a warm `all`.
    class "" a
    class
    class 4
    OUT=$R scripts/gpu-48-steady.sh "$a" "$b" 2 >"$R/steady.out" 2>&1
    mark steady
    pack
else
    class
    OUT=$R scripts/gpu-49-counters.sh "$b" >"$R/counters.out" 2>&1
    cp calibration/*.toml "$R/" 2>/dev/null
    mark counters
fi
