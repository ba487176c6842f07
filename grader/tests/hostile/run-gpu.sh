#!/usr/bin/env bash
# Grades the hostile corpus on this machine's GPU (docs/hostile.md) with the
# runner every corpus shares: grader/tests/corpus/run-gpu.sh.
#
#   grader/tests/hostile/run-gpu.sh [WORK_DIR]      (GRADER=path/to/grader to skip the build)
#
# --timeout 5 and --part-timeout 120 (expected.json's gpu_batch_args): the stuck
# kernels end sooner, and the macro bomb ends as a compile error (60 s compile
# limit), not a timeout. About 2 minutes on an H100; HOSTILE_BATCH_LIMIT seconds
# (default 900) stop a stuck batch, and the per-part results are read anyway.
export BATCH_LIMIT=${HOSTILE_BATCH_LIMIT:-900}
exec "$(dirname "$0")/../corpus/run-gpu.sh" hostile "$@"
