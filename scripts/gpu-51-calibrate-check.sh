#!/usr/bin/env bash
# On an H200 (issue 51, part 2): does this machine make the same decision
# "graded by the clock" as the committed calibration of its model?
# `grader calibrate --check` times every performance check's family (seeds
# 1,2,3, as the committed file was made; a few minutes: 2.3 min for 282 gradings in docs/gpu-runs.md) and
# compares it with calibration/nvidia-h200.toml without writing it.
#
#   OUT=/some/dir scripts/gpu-51-calibrate-check.sh          # grader from $GRADER or ./.device/grader
#
# Look for, in $OUT/gpu-51-calibrate-check/check.log: one line per check with its
# threshold's move in %, and the last line "no decision moves ..." (exit 0).
# A decision the rule alone would move but the hysteresis keeps is marked
# `kept` with its margins (ex03 rect faster-than-naive is the known one:
# slowest correct about 1.05x naive). A line with `MOVES` (exit 1) is a
# decision that moves beyond the band 1.000..1.103: this machine grades that
# check differently. check.toml is what this machine would have written.
set -uo pipefail
cd "$(dirname "$0")/.."
grader=${GRADER:-./.device/grader}
out=${OUT:?set OUT to a folder for the results}/gpu-51-calibrate-check
mkdir -p "$out"
start=$(date +%s)
"$grader" calibrate --check --seeds 1,2,3 >"$out/check.log" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1 || true
cp target/calibrate/*/check.toml "$out/" 2>/dev/null || true
echo "exit $rc after ${took}s" >>"$out/check.log"
echo "== grader calibrate --check: exit $rc (0: no decision moves beyond the band; 1: one does; 2: no GPU) after ${took}s"
grep -E "MOVES|kept|decision" "$out/check.log" || tail -5 "$out/check.log"
exit $rc
