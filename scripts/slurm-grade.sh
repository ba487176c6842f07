#!/usr/bin/env bash
# Grades a class on a Slurm cluster: a job array with one shard of the class
# per task (one GPU each), then a job that merges the shard gradebooks.
#
#   scripts/slurm-grade.sh CLASS_DIR OUT_DIR [SHARDS]
#
# CLASS_DIR holds one folder per submission (GitHub Classroom's download).
# Run it again after a failure: every shard resumes where it stopped.
#
# Environment (all optional):
#   GRADER     the grader binary (default: target/release/grader of this checkout)
#   SEED       the seed of every student's inputs (default: the one OUT_DIR was
#              started with, else a new one); all shards must share it
#   EXERCISES  e.g. ex01,ex02 (default: all)
#   SBATCH_ARGS  extra sbatch options for the grading tasks, e.g. "--partition=gpu --account=cs475"
set -euo pipefail

if [[ $# -lt 2 ]]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
class=$(realpath "$1")
out=$(realpath -m "$2")
shards=${3:-8}
grader=$(realpath "${GRADER:-$(dirname "$0")/../target/release/grader}")
exercises=${EXERCISES:-all}
[[ -x $grader ]] || { echo "no grader at $grader: cargo build --release -p grader" >&2; exit 2; }

# One seed for the whole class, kept with the output so a rerun reuses it.
mkdir -p "$out/logs"
if [[ -n ${SEED:-} ]]; then
    echo "$SEED" > "$out/seed"
elif [[ ! -s $out/seed ]]; then
    od -An -N4 -tu4 /dev/urandom | tr -d ' ' > "$out/seed"
fi
seed=$(cat "$out/seed")

# shellcheck disable=SC2086 # SBATCH_ARGS is a list of options
array=$(sbatch --parsable ${SBATCH_ARGS:-} \
    --job-name=cuda-lab-grade --array="0-$((shards - 1))" \
    --gres=gpu:1 --cpus-per-task=4 --time=04:00:00 \
    --output="$out/logs/shard-%a.log" \
    --wrap "'$grader' batch '$class' --out '$out'/shard-\$SLURM_ARRAY_TASK_ID \
            --shard \$SLURM_ARRAY_TASK_ID/$shards --seed $seed --exercises $exercises --backend cuda")

merge=$(sbatch --parsable --job-name=cuda-lab-merge --dependency="afterok:$array" \
    --time=00:10:00 --output="$out/logs/merge.log" \
    --wrap "'$grader' merge '$out'/shard-*/gradebook.json --out '$out'")

echo "grading: job array $array ($shards shards, seed $seed); merge: job $merge"
echo "gradebook when done: $out/gradebook.csv"
