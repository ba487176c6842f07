#!/usr/bin/env bash
# One device call per GPU model for issues 37 and 38 (timed inputs no kernel
# can predict; thresholds a slow kernel cannot pass, partial credit): the new
# rule's calibration of this GPU, the references on three seeds, the stubs and
# slow variants, the cheat corpus, and the cost of the fresh inputs against the
# binary before them (`grader all --reference` warm and a realistic class's
# batch throughput, both binaries on this machine), then the class again with
# scaled credit. Builds nothing: GRADER (new) and BEFORE (old) are carried.
#
#   GRADER=.device/grader BEFORE=.device/grader-before OUT=/tmp/x scripts/gpu-fresh-inputs.sh
#   STEPS=calibrate,references,cheats,scaled ...   # a second GPU model: no cost comparison
#   STEPS=variants ...                              # the variants corpus's verdicts (run-gpu.sh)
#
# Everything goes into $OUT/fresh-<gpu>.tgz; each step has its own time limit,
# so the archive is packed even when one runs long.
set -uo pipefail
cd "$(dirname "$0")/.."
GRADER=$(realpath "${GRADER:-.device/grader}")
BEFORE=$(realpath "${BEFORE:-.device/grader-before}")
OUT=${OUT:-$(mktemp -d)}
STUDENTS=${STUDENTS:-24}
STEPS=${STEPS:-calibrate,references,cheats,cost,class,scaled}
step() { [[ ",$STEPS," == *",$1,"* ]]; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-' | tr -cd 'A-Za-z0-9-')
res=$(mktemp -d)/fresh-${gpu:-nogpu}
mkdir -p "$res" "$OUT"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$res/cache}
pack() { tar --exclude cache --exclude class --exclude '*.ptx' -czf "$OUT/fresh-${gpu:-nogpu}.tgz" -C "$(dirname "$res")" "$(basename "$res")"; }
trap pack EXIT
# Stopped from outside (a device call's limit): still pack what is there.
trap 'exit 143' TERM INT
log() { echo "== $(date -u +%T) $*" | tee -a "$res/steps.txt"; }
timed() { # name limit command...: wall seconds into steps.txt, output into name.txt
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS rc=0
    timeout "$limit" "$@" > "$res/$name.txt" 2>&1 || rc=$?
    echo "$name: rc $rc, $((SECONDS - t0)) s" | tee -a "$res/steps.txt"
    pack
}
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; date -u; git log -1 --format=%h 2>/dev/null; } > "$res/setup.txt" 2>&1

if step calibrate; then
log "calibrate (the new rule and the new slow families)"
# One exercise at a time (a calibration in pieces keeps what it did not
# measure), packed after each, so a call's limit loses at most one.
for ex in ${CALIBRATE:-ex01 ex02 ex03 ex04 ex05 ex06 ex07 ex08 ex09 ex10 ex11 ex12}; do
    timed "calibrate-$ex" "${CALIBRATE_LIMIT:-150}" "$GRADER" calibrate --exercises "$ex"
    cp calibration/*.toml "$res/" 2>/dev/null; pack
done
fi
cp calibration/*.toml "$res/" 2>/dev/null

if step references; then
log "references: three seeds; stubs; slow variants"
for s in 1 2 3; do timed "reference-seed$s" 120 "$GRADER" all --reference --seed "$s" --no-report --json "$res/reference-seed$s.json"; done
timed stubs 120 "$GRADER" all --seed 1 --no-report --json "$res/stubs.json"
timed slow 180 "$GRADER" all --sources reference/slow --seed 1 --no-report --json "$res/slow.json"
fi

if step cheats; then
log "cheat corpus"
GRADER="$GRADER" SEEDS=1 BATCH_LIMIT=200 timeout 230 grader/tests/corpus/run-gpu.sh cheats "$res/cheats" > "$res/cheats.txt" 2>&1
rm -rf "$res/cheats/class"
fi

# The binary before reads the course file of its day (it refuses sections it does not know).
course_as() { if [ "$1" = before ]; then cp .device/cuda-lab-before.toml cuda-lab.toml; else cp "$res/cuda-lab.toml.orig" cuda-lab.toml; fi; }
cp cuda-lab.toml "$res/cuda-lab.toml.orig"

if step cost; then
log "cost: all --reference warm, before and after (the same machine)"
for b in before after; do
    bin=$GRADER; [ $b = before ] && bin=$BEFORE
    course_as $b
    "$bin" all --reference --seed 1 --no-report > /dev/null 2>&1   # cold: the compile cache
    for i in 1 2 3; do timed "all-$b-$i" 120 "$bin" all --reference --seed 1 --no-report; done
done
fi

python3 grader/tests/corpus/realistic_class.py make "$res/class" --students "$STUDENTS" --seed 1 > "$res/class-make.txt" 2>&1
if step class; then
log "cost: a realistic class of $STUDENTS, before and after"
for b in before after; do
    bin=$GRADER; [ $b = before ] && bin=$BEFORE
    course_as $b
    timed "class-$b" 200 "$bin" batch "$res/class" --seed 1 --out "$res/class-$b"
done
python3 grader/tests/corpus/realistic_class.py check "$res/class" "$res/class-after" > "$res/class-check.txt" 2>&1
fi

if step scaled; then
log "the class with scaled credit"
course_as after
sed -i 's/^credit = "threshold"/credit = "scaled"/' cuda-lab.toml
timed class-scaled 300 "$GRADER" batch "$res/class" --seed 1 --out "$res/class-scaled"
python3 grader/tests/corpus/realistic_class.py check "$res/class" "$res/class-scaled" > "$res/class-scaled-check.txt" 2>&1
cp "$res/cuda-lab.toml.orig" cuda-lab.toml
fi
if step variants; then
log "the variants corpus (every correct variant keeps its points, every slow one loses them)"
GRADER="$GRADER" SEEDS=1 BATCH_LIMIT=${VARIANTS_LIMIT:-420} timeout $((${VARIANTS_LIMIT:-420} + 60)) \
    grader/tests/corpus/run-gpu.sh variants "$res/variants" > "$res/variants.txt" 2>&1
rm -rf "$res/variants/class"
fi
for d in class-before class-after class-scaled; do rm -rf "$res/$d/workers" "$res/$d"/*/ 2>/dev/null; done
log done
