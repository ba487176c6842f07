#!/usr/bin/env bash
# Puts the grader a Classroom job runs at DEST, from nothing a previous job
# could have changed (docs/classroom.md, "Runners that start clean"):
#
# - If a prebuilt grader is offered (CUDA_LAB_PREBUILT_GRADER, default
#   /opt/cuda-lab/grader/grader: the read-only cache the runner recipe mounts),
#   it is copied to DEST and the copy's SHA-256 must equal
#   CUDA_LAB_GRADER_SHA256 (an organization variable). Anything else fails the
#   job loudly, and DEST is not left behind.
# - Otherwise the grader is built from the course's checkout (the current
#   folder) into CARGO_TARGET_DIR, which must lie under RUNNER_TEMP or the
#   job's workspace: never a folder shared between jobs.
#
# Usage: scripts/verify-grader.sh DEST   (run in the course's trusted checkout)
set -euo pipefail

dest=${1:?usage: verify-grader.sh DEST}
prebuilt=${CUDA_LAB_PREBUILT_GRADER:-/opt/cuda-lab/grader/grader}
pinned=$(printf '%s' "${CUDA_LAB_GRADER_SHA256:-}" | tr -d '[:space:]' | tr '[:upper:]' '[:lower:]')

fail() {
    # An annotation on the run's page, and the same words in the log.
    echo "::error title=Grader refused::$1"
    echo "error: $1" >&2
    rm -f "$dest"
    exit 1
}

under() { # is $1 inside folder $2?
    [ -n "$2" ] || return 1
    local a b
    a=$(realpath -m "$1") b=$(realpath -m "$2")
    [ "$a" = "$b" ] || [ "${a#"$b"/}" != "$a" ]
}

if [ -e "$prebuilt" ] || [ -L "$prebuilt" ]; then
    [ -n "$pinned" ] || fail "a prebuilt grader is offered at $prebuilt but no SHA-256 pins it: set the organization variable CUDA_LAB_GRADER_SHA256 to the SHA-256 of the grader you built (sha256sum grader), or remove the cache."
    [[ "$pinned" =~ ^[0-9a-f]{64}$ ]] || fail "CUDA_LAB_GRADER_SHA256 is not a SHA-256 (64 hex digits): '$pinned'."
    [ -f "$prebuilt" ] && [ ! -L "$prebuilt" ] || fail "the prebuilt grader $prebuilt is not a regular file (a link or a folder): refused."
    # Hash the copy that will run, not the original: nothing can swap it in between.
    mkdir -p "$(dirname "$dest")"
    cp "$prebuilt" "$dest"
    actual=$(sha256sum "$dest" | cut -d' ' -f1)
    if [ "$actual" != "$pinned" ]; then
        fail "the prebuilt grader $prebuilt has SHA-256 $actual, but CUDA_LAB_GRADER_SHA256 pins $pinned. It was changed (or the pin is out of date): the job stops rather than grade with it. Rebuild the cache from the course's repository and update the pin."
    fi
    chmod 0555 "$dest"
    echo "grader: the prebuilt grader matches the pinned SHA-256 $pinned"
    exit 0
fi

target=${CARGO_TARGET_DIR:-}
[ -n "$target" ] || fail "CARGO_TARGET_DIR is not set: the grader must be built into a folder of this job (under \$RUNNER_TEMP)."
if ! under "$target" "${RUNNER_TEMP:-}" && ! under "$target" "${GITHUB_WORKSPACE:-}"; then
    fail "CARGO_TARGET_DIR=$target is outside this job's folders (RUNNER_TEMP=${RUNNER_TEMP:-unset}, GITHUB_WORKSPACE=${GITHUB_WORKSPACE:-unset}): a build folder another job can write is never trusted."
fi
if [ -n "$(ls -A "$target" 2>/dev/null)" ]; then
    # A fresh job's temp folder is empty; anything in it was left by someone else.
    fail "CARGO_TARGET_DIR=$target is not empty at the start of the job: refusing to reuse a build another job may have left."
fi
cargo build --release --locked -p grader
mkdir -p "$(dirname "$dest")"
cp "$target/release/grader" "$dest"
chmod 0555 "$dest"
echo "grader: built from the course's checkout into $target (SHA-256 $(sha256sum "$dest" | cut -d' ' -f1))"
