#!/usr/bin/env bash
# Runs scripts/slurm-grade.sh on a real, one-node Slurm started here, and checks
# that sharded grading gives the gradebook of one unsharded `grader batch`.
#
#   scripts/test-slurm.sh            (GRADER=path/to/grader to choose the binary)
#
# Installs slurm-wlm and munge from Debian's packages when absent (needs root
# and apt), starts munged, slurmctld and slurmd on 127.0.0.1 only, with every
# file in a private folder and ports of their own, and stops them at the end
# whatever happens. Checks:
#   1. a class of 24 (`grader make-class`) graded as 4 shards on the simulator,
#      one seed for every task, with a running shard cancelled (scancel) midway: the
#      merge is not run; the script run again resumes and the merged gradebook
#      is byte-identical to one unsharded `grader batch` with the same seed
#      (timing fields removed; the gradebook itself has none);
#   2. slurm-grade.sh's refusals: no sbatch, a grader on a node-local path,
#      a seed that differs from the one the output was started with;
#   3. `grader merge` refuses a partial set of shards unless --partial.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
grader=$(realpath "${GRADER:-$root/target/debug/grader}")
# Small enough for a 2-core CI machine: one exercise, and the make-class
# variants that never finish stopped after 2 s per kernel, 60 s per part.
exercises=${EXERCISES:-ex01}
batch_args=${BATCH_ARGS:---timeout 2 --part-timeout 60}
students=24
shards=4
seed=4242
started=$(date +%s)
say() { echo "== [$(($(date +%s) - started)) s] $*"; }
die() { echo "test-slurm: FAILED: $*" >&2; exit 1; }
[[ -x $grader ]] || die "no grader at $grader (cargo build -p grader, or set GRADER)"

# --- Slurm and munge from Debian's packages --------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    [[ $(id -u) == 0 ]] || die "slurm-wlm and munge are not installed and installing them needs root"
    say "installing slurm-wlm and munge (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

# --- A private one-node cluster ----------------------------------------------
# The class and the output live under target/ (not /tmp): slurm-grade.sh
# refuses node-local paths, as it must on a real cluster.
work=$root/target/slurm-test
state=$(mktemp -d /tmp/cuda-lab-slurm.XXXXXX)
pids=()
# Processes of this cluster: the daemons, and what slurmd started (slurmstepd,
# the jobs), all of which inherit SLURM_CONF=$state/slurm.conf.
ours() {
    local p
    for p in /proc/[0-9]*; do
        grep -qzx "SLURM_CONF=$state/slurm.conf" "$p/environ" 2>/dev/null && echo "${p#/proc/}"
    done
    return 0
}
stop() {
    local rc=$?
    # Jobs first, so that no slurmstepd is left waiting for a slurmd that is gone.
    if [[ -n ${SLURM_CONF:-} ]] && scancel --user="$(id -un)" 2>/dev/null; then
        for _ in $(seq 30); do [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break; sleep 0.5; done
    fi
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    local left
    left=$(ours)
    # shellcheck disable=SC2086 # a list of pids
    [[ -z $left ]] || kill -9 $left 2>/dev/null || true
    sleep 0.2
    left=$(ours)
    if [[ -n $left ]]; then
        echo "test-slurm: processes of the test cluster still running: $left" >&2
        rc=1
    else
        echo "== stopped munged, slurmctld, slurmd and every job process"
    fi
    if [[ $rc != 0 ]]; then
        for log in "$state"/*.log "$state"/munge/*.log; do
            [[ -f $log ]] && { echo "--- $log (last lines)"; tail -n 15 "$log"; }
        done
    fi
    rm -rf "$state"
    exit "$rc"
}
trap stop EXIT INT TERM

mkdir -p "$state/munge" "$state/ctld" "$state/d" "$state/empty"
chmod 700 "$state" "$state/munge"
dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$state/munge/munge.key"
munged --foreground --force --key-file="$state/munge/munge.key" --socket="$state/munge/munge.sock" \
    --pid-file="$state/munge/munged.pid" --log-file="$state/munge/munged.log" \
    --seed-file="$state/munge/munged.seed" 2>>"$state/munge/munged.log" &
pids+=($!)
for _ in $(seq 50); do [[ -S $state/munge/munge.sock ]] && break; sleep 0.1; done
munge -S "$state/munge/munge.sock" -n | unmunge -S "$state/munge/munge.sock" >/dev/null ||
    die "munged does not answer"

node=$(hostname -s)
port=$((20000 + RANDOM % 20000))
export SLURM_CONF=$state/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=cudalabtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmctldParameters=enable_configless
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SchedulerParameters=kill_invalid_depend
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
say "starting slurmctld and slurmd on 127.0.0.1:$port (state in $state)"
slurmctld -D -i -f "$SLURM_CONF" >>"$state/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -N "$node" -f "$SLURM_CONF" >>"$state/slurmd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && break
    sleep 0.3
done
sinfo -h -o %T | grep -qE '^(idle|mixed|allocated)' || die "the node did not come up: $(sinfo 2>&1)"

# Waits until none of the given jobs is in the queue.
wait_jobs() {
    for _ in $(seq 1200); do
        [[ -z $(squeue -h -j "$1" -o %i 2>/dev/null) ]] && return 0
        sleep 0.5
    done
    die "jobs $1 still queued after 10 minutes"
}

# --- The class, and the unsharded reference -----------------------------------
rm -rf "$work"
mkdir -p "$work"
"$grader" make-class "$work/class" --students $students --exercises "$exercises" --root "$root" >/dev/null
say "unsharded: grader batch (seed $seed, $exercises, simulator)"
# shellcheck disable=SC2086 # batch_args is a list of options
"$grader" batch "$work/class" --out "$work/whole" --seed $seed --exercises "$exercises" --backend sim $batch_args \
    >"$work/whole.log" 2>&1 || die "the unsharded batch failed: $(tail -5 "$work/whole.log")"
grep -E "took|students:" "$work/whole.log" | sed 's/^ */   /'

# --- Refusals of slurm-grade.sh ---------------------------------------------
expect_refusal() {
    local what=$1 pattern=$2
    shift 2
    local msg
    if msg=$("$@" 2>&1); then die "$what: slurm-grade.sh accepted it"; fi
    grep -q -- "$pattern" <<<"$msg" || die "$what: expected \"$pattern\", got: $msg"
    echo "   refused ($what): $msg"
}
say "slurm-grade.sh refusals"
expect_refusal "no sbatch" "no \`sbatch\` on PATH" \
    env PATH="$state/empty" "$(command -v bash)" "$root/scripts/slurm-grade.sh" "$work/class" "$work/x" 2
mkdir -p "$state/bin" && cp "$grader" "$state/bin/grader"
expect_refusal "grader on /tmp" "node-local file system" \
    env GRADER="$state/bin/grader" "$root/scripts/slurm-grade.sh" "$work/class" "$work/x" 2
# Every node of this cluster is this machine: from here on a checkout or a
# target folder under /tmp is as good as a shared one.
export SLURM_LOCAL_OK=1
mkdir -p "$work/seeded" && echo 7 >"$work/seeded/seed"
expect_refusal "seed mismatch" "must share one seed" \
    env SEED=8 GRADER="$grader" "$root/scripts/slurm-grade.sh" "$work/class" "$work/seeded" 2

# --- Sharded on Slurm, with a shard cancelled midway ----------------------------
run_sharded() {
    env GRADER="$grader" EXERCISES="$exercises" BACKEND=sim GRES= CPUS_PER_TASK=1 BATCH_ARGS="$batch_args" "$@" \
        "$root/scripts/slurm-grade.sh" "$work/class" "$work/sharded" $shards
}
say "sharded: slurm-grade.sh, $shards shards"
submitted=$(SEED=$seed run_sharded)
echo "$submitted"
array=$(sed -n 's/^grading: job array \([0-9]*\).*/\1/p' <<<"$submitted")
merge=$(sed -n 's/.*merge: job \([0-9]*\).*/\1/p' <<<"$submitted")
[[ -n $array && -n $merge ]] || die "no job ids in: $submitted"
# Cancel a shard midway: the first running task that has graded a student but
# not finished (the class's never-ending kernel keeps one busy for a while).
cancelled=
for _ in $(seq 600); do
    running=$(squeue -h -r -j "$array" -o '%i %T' 2>/dev/null | awk '$2 == "RUNNING" { sub(/.*_/, "", $1); print $1 }')
    for i in $running; do
        if [[ ! -e $work/sharded/shard-$i/gradebook.json ]] &&
            grep -q "parts graded" "$work/sharded/logs/shard-$i.log" 2>/dev/null; then
            cancelled=$i
            break 2
        fi
    done
    [[ -z $(squeue -h -j "$array" -o %i 2>/dev/null) ]] && die "every shard finished before one could be cancelled"
    sleep 0.5
done
[[ -n $cancelled ]] || die "no shard could be cancelled midway"
scancel "${array}_$cancelled"
say "cancelled shard $cancelled (job ${array}_$cancelled) midway: $(grep -c "parts graded" "$work/sharded/logs/shard-$cancelled.log") student(s) graded"
wait_jobs "$array,$merge"
[[ ! -e $work/sharded/gradebook.json ]] || die "the merge ran although shard $cancelled was cancelled"
[[ ! -e $work/sharded/shard-$cancelled/gradebook.json ]] || die "shard $cancelled wrote a gradebook although cancelled"

say "rerun: slurm-grade.sh again (resumes; the seed comes from the output folder)"
submitted=$(run_sharded)
echo "$submitted"
grep -q "seed $seed" <<<"$submitted" || die "the rerun did not reuse seed $seed: $submitted"
array=$(sed -n 's/^grading: job array \([0-9]*\).*/\1/p' <<<"$submitted")
merge=$(sed -n 's/.*merge: job \([0-9]*\).*/\1/p' <<<"$submitted")
wait_jobs "$array,$merge"
[[ -s $work/sharded/gradebook.json ]] || die "no merged gradebook: $(cat "$work/sharded/logs/merge.log" 2>&1)"
grep -qE "[1-9][0-9]* kept from an earlier run" "$work/sharded/logs/shard-$cancelled.log" ||
    die "shard $cancelled did not resume: $(tail -n 5 "$work/sharded/logs/shard-$cancelled.log")"
grep -E "kept from an earlier run" "$work/sharded/logs/shard-$cancelled.log" | sed "s/^ */   shard $cancelled: /"

# --- Checks -----------------------------------------------------------------------
say "checking"
for i in $(seq 0 $((shards - 1))); do
    book=$work/sharded/shard-$i/gradebook.json
    python3 -c 'import json,sys; b=json.load(open(sys.argv[1])); sys.exit(0 if b["seed"]==int(sys.argv[2]) and b["shard"]==sys.argv[3] else 1)' \
        "$book" $seed "$i/$shards" || die "$book: not seed $seed, shard $i/$shards"
done
# Timing fields (none in a gradebook today) are dropped before comparing bytes.
strip() {
    python3 -c 'import json,sys
def s(v):
    if isinstance(v, dict): return {k: s(x) for k, x in v.items() if not any(t in k for t in ("duration", "elapsed", "seconds", "_at", "time"))}
    if isinstance(v, list): return [s(x) for x in v]
    return v
print(json.dumps(s(json.load(open(sys.argv[1]))), indent=1, sort_keys=True))' "$1"
}
diff <(strip "$work/whole/gradebook.json") <(strip "$work/sharded/gradebook.json") ||
    die "the merged gradebook differs from the unsharded one"
cmp "$work/whole/gradebook.csv" "$work/sharded/gradebook.csv" || die "the gradebook CSVs differ"
cmp "$work/whole/gradebook.json" "$work/sharded/gradebook.json" &&
    echo "   gradebook.json byte-identical (no timing fields to remove)"
python3 -c 'import json,sys; b=json.load(open(sys.argv[1])); sys.exit(0 if len(b["students"])==int(sys.argv[2]) else 1)' \
    "$work/sharded/gradebook.json" $students || die "the merged gradebook does not have $students students"

say "grader merge refuses a partial set of shards"
if msg=$("$grader" merge "$work"/sharded/shard-{0,1,3}/gradebook.json --out "$work/partial" 2>&1); then
    die "merge of 3 of 4 shards was accepted"
fi
grep -q "shard(s) 2/4 missing" <<<"$msg" || die "unexpected refusal: $msg"
echo "   refused: $msg"
"$grader" merge --partial "$work"/sharded/shard-{0,1,3}/gradebook.json --out "$work/partial" >/dev/null ||
    die "merge --partial failed"

say "passed in $(($(date +%s) - started)) s"
