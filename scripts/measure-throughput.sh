#!/usr/bin/env bash
# Batch-grading throughput on this machine's GPU: generates a class of N
# submissions (default 50; reference copies, stubs and broken variants, see
# `grader make-class`) and grades every exercise with `grader batch`.
#
#   scripts/measure-throughput.sh [N] [WORK_DIR]
#
# Prints the batch summary (submissions per minute), then each student's
# variant next to the status the gradebook gave it.
set -euo pipefail
cd "$(dirname "$0")/.."
students=${1:-50}
work=${2:-$(mktemp -d /tmp/cuda-lab-throughput.XXXXXX)}

cargo build --release -p grader
grader=target/release/grader
"$grader" make-class "$work/class" --students "$students"
"$grader" batch "$work/class" --out "$work/grades" --exercises all --backend cuda --seed 1 | tee "$work/summary.txt"

echo
echo "variant -> status (from $work/class/.class.json and $work/grades/gradebook.csv)"
python3 - "$work" <<'EOF'
import csv, json, sys
work = sys.argv[1]
variants = {s["key"]: s["variant"] for s in json.load(open(f"{work}/class/.class.json"))}
for row in csv.DictReader(open(f"{work}/grades/gradebook.csv")):
    print(f'{variants.get(row["key"], "?"):16} {row["status"]:14} {row["total"]:>7}/{row["max"]}  {row["key"]}')
EOF
