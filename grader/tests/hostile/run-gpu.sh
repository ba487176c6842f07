#!/usr/bin/env bash
# Grades the hostile corpus on this machine's GPU with `grader batch` and
# compares every verdict with expected.json (docs/hostile.md).
#
#   grader/tests/hostile/run-gpu.sh [WORK_DIR]      (GRADER=path/to/grader to skip the build)
#
# Leaves WORK_DIR/class (the submissions), WORK_DIR/grades (the batch's output)
# and WORK_DIR/check.txt (the comparison); exits 1 on any mismatch.
set -euo pipefail
cd "$(dirname "$0")/../../.."
work=${1:-$(mktemp -d /tmp/cuda-lab-hostile.XXXXXX)}
if [ -z "${GRADER:-}" ]; then
    cargo build --release -p grader
    GRADER=target/release/grader
fi
python3 grader/tests/hostile/check.py prepare "$work/class"
# --timeout 5: the stuck kernels end sooner; --part-timeout 120: above the
# 60 s compile limit, so the macro bomb ends as a compile error, not a timeout.
# The whole batch takes about 2 minutes on an H100; a stuck batch is stopped
# after HOSTILE_BATCH_LIMIT seconds, and check.py then reads the per-part results.
status=0
timeout "${HOSTILE_BATCH_LIMIT:-900}" "$GRADER" batch "$work/class" --out "$work/grades" --exercises ex01,ex06 \
    --backend cuda --seed 1 --timeout 5 --part-timeout 120 | tee "$work/summary.txt" || status=$?
[ "$status" = 124 ] && echo "the batch did not finish within ${HOSTILE_BATCH_LIMIT:-900} s and was stopped"
python3 grader/tests/hostile/check.py check "$work/grades" --backend gpu | tee "$work/check.txt"
