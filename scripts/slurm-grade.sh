#!/usr/bin/env bash
# Grades a class on a Slurm cluster: a job array with one shard of the class
# per task (one GPU each), then a job that merges the shard gradebooks.
#
#   scripts/slurm-grade.sh [--partial] CLASS_DIR OUT_DIR [SHARDS]
#
# CLASS_DIR holds one folder per submission (GitHub Classroom's download).
# Run it again after a failure: every shard resumes where it stopped.
# --partial: merge whatever shards finished (missing shards' students are left out).
#
# Environment (all optional):
#   GRADER     the grader binary (default: target/release/grader of this checkout);
#              it, CLASS_DIR and OUT_DIR must be on a file system the compute nodes share
#   SEED       the seed of every student's inputs (default: the one OUT_DIR was
#              started with, else a new one); all shards must share it
#   EXERCISES  e.g. ex01,ex02 (default: all)
#   BACKEND    cuda (default), sim (the CPU simulator: no GPU needed) or none
#   GRES       the generic resource of one task (default gpu:1; empty: none)
#   CPUS_PER_TASK  CPUs of one grading task (default 4)
#   BATCH_ARGS more `grader batch` options for every shard, e.g. "--timeout 5 --part-timeout 120"
#   SBATCH_ARGS  extra sbatch options for the grading tasks, e.g. "--partition=gpu --account=cs475"
#   SLURM_LOCAL_OK=1  accept paths under /tmp and the like (a one-node cluster)
set -euo pipefail

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
fail() { echo "slurm-grade: $*" >&2; exit 2; }

partial=
if [[ ${1:-} == --partial ]]; then
    partial=--partial
    shift
fi
[[ $# -ge 2 ]] || usage
command -v sbatch >/dev/null ||
    fail "no \`sbatch\` on PATH: run this on a Slurm login node (or \`module load slurm\` first)"

class=$(realpath "$1")
out=$(realpath -m "$2")
shards=${3:-8}
[[ $shards =~ ^[1-9][0-9]*$ ]] || fail "SHARDS must be a positive number, not \`$shards\`"
[[ -d $class ]] || fail "no class folder at $class"
grader=$(realpath -m "${GRADER:-$(dirname "$0")/../target/release/grader}")
exercises=${EXERCISES:-all}
backend=${BACKEND:-cuda}
gres=${GRES-gpu:1}
[[ -x $grader ]] || fail "no grader at $grader: \`cargo build --release -p grader\`, or set GRADER"

# The tasks run on compute nodes: what they read and write must be on a file
# system those nodes mount too, never a node-local one.
node_local() {
    case $1 in /tmp/* | /var/tmp/* | /dev/shm/* | /run/*) return 0 ;; esac
    case $(stat -f -c %T "$(dirname "$1")" 2>/dev/null) in tmpfs | ramfs) return 0 ;; esac
    return 1
}
if [[ ${SLURM_LOCAL_OK:-} != 1 ]]; then
    for what in "grader:$grader" "class:$class" "output:$out"; do
        if node_local "${what#*:}"; then
            fail "the ${what%%:*} ${what#*:} is on a node-local file system that compute nodes cannot see: \
put it on a shared one (your home or project folder), or set SLURM_LOCAL_OK=1 on a one-node cluster"
        fi
    done
fi

# One seed for the whole class, kept with the output so a rerun reuses it.
mkdir -p "$out/logs"
if [[ -n ${SEED:-} ]]; then
    if [[ -s $out/seed && $(cat "$out/seed") != "$SEED" ]]; then
        fail "$out was started with seed $(cat "$out/seed"), not SEED=$SEED: shards of one class must share \
one seed. Unset SEED to resume, or use a new OUT_DIR"
    fi
    echo "$SEED" > "$out/seed"
elif [[ ! -s $out/seed ]]; then
    od -An -N4 -tu4 /dev/urandom | tr -d ' ' > "$out/seed"
fi
seed=$(cat "$out/seed")

# Every task checks that it can see the grader before grading (a clear line in
# its log instead of "command not found").
task="[ -x '$grader' ] || { echo \"slurm-grade: \$(hostname) cannot see the grader at $grader: \
put it on a shared file system\" >&2; exit 3; }; \
'$grader' batch '$class' --out '$out'/shard-\$SLURM_ARRAY_TASK_ID \
--shard \$SLURM_ARRAY_TASK_ID/$shards --seed $seed --exercises $exercises --backend $backend ${BATCH_ARGS:-}"

gres_arg=()
[[ -n $gres ]] && gres_arg=(--gres="$gres")
# shellcheck disable=SC2086 # SBATCH_ARGS is a list of options
array=$(sbatch --parsable ${SBATCH_ARGS:-} \
    --job-name=cuda-lab-grade --array="0-$((shards - 1))" \
    "${gres_arg[@]}" --cpus-per-task="${CPUS_PER_TASK:-4}" --time=04:00:00 \
    --output="$out/logs/shard-%a.log" \
    --wrap "$task")

# Every shard's gradebook by name, so a missing one is an error of the merge;
# with --partial, those that exist, once every task has ended however it did.
if [[ -n $partial ]]; then
    shard_books="'$out'/shard-*/gradebook.json"
    after=afterany
else
    shard_books=$(for ((i = 0; i < shards; i++)); do printf "'%s/shard-%d/gradebook.json' " "$out" "$i"; done)
    after=afterok
fi
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_ARGS:-} --job-name=cuda-lab-merge --dependency="$after:$array" \
    --kill-on-invalid-dep=yes --time=00:10:00 --output="$out/logs/merge.log" \
    --wrap "'$grader' merge $partial $shard_books --out '$out'")

echo "grading: job array $array ($shards shards, seed $seed); merge: job $merge"
echo "gradebook when done: $out/gradebook.csv"
