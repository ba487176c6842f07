#!/usr/bin/env bash
# Refuses to grade on a runner that was not set up as docs/classroom.md says:
# one job per runner, in a fresh container (scripts/runner/). On a runner that
# keeps its disk between jobs, one student's edited workflow can leave behind
# a program that grades every later student.
#
# The signal: the container recipe bakes the marker file
# /etc/cuda-lab/ephemeral-runner (root-owned, read-only) into the image and
# runs the runner as an unprivileged user, so a job can neither create nor
# change it; start.sh registers the runner with --ephemeral (one job, then the
# container is removed). The marker says the job runs in such a container; the
# checks below make sure a job could not have forged it.
#
# CUDA_LAB_ALLOW_PERSISTENT_RUNNER=true (an organization variable) lets the
# job run anyway, with a warning saying why that is unsafe.
set -euo pipefail

marker=${CUDA_LAB_RUNNER_MARKER:-/etc/cuda-lab/ephemeral-runner}
allow=$(printf '%s' "${CUDA_LAB_ALLOW_PERSISTENT_RUNNER:-}" | tr '[:upper:]' '[:lower:]')

why=""
if [ ! -f "$marker" ]; then
    why="this runner has no $marker: it was not started from the course's ephemeral runner recipe (scripts/runner/)"
elif [ "$(id -u)" = 0 ]; then
    why="the job runs as root, so it could have written $marker itself"
elif [ "$(stat -c %u "$marker")" != 0 ]; then
    why="$marker is not owned by root, so a job could have written it"
elif [ -w "$marker" ] || [ -w "$(dirname "$marker")" ]; then
    why="$marker (or its folder) is writable by the job"
elif ! grep -qx 'ephemeral=true' "$marker"; then
    why="$marker does not say ephemeral=true"
fi

if [ -z "$why" ]; then
    echo "runner: ephemeral (one job in a fresh container; $marker)"
    exit 0
fi
explain="A runner that keeps its disk between jobs lets one student's edited workflow leave a program behind that grades every later student (docs/classroom.md)."
if [ "$allow" = true ]; then
    echo "::warning title=Persistent runner::Grading on a runner that is not ephemeral because CUDA_LAB_ALLOW_PERSISTENT_RUNNER=true: $why. $explain"
    exit 0
fi
echo "::error title=Runner is not ephemeral::$why. $explain Set up the runner with scripts/runner/ (docs/classroom.md), or set the organization variable CUDA_LAB_ALLOW_PERSISTENT_RUNNER=true to accept the risk."
echo "error: $why" >&2
exit 1
