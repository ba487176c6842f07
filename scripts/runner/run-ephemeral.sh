#!/usr/bin/env bash
# On the GPU host: keeps one ephemeral runner container waiting for a job, and
# starts a fresh one after each job (each container takes one job and is
# removed). Run it as a service (systemd unit in docs/classroom.md).
#
#   GITHUB_ORG=my-course GITHUB_ADMIN_TOKEN=... scripts/runner/run-ephemeral.sh
#
# GITHUB_ADMIN_TOKEN needs the organization's "Self-hosted runners" write
# permission; it stays on the host and never enters a container: each
# container gets a one-use registration token instead.
# Optional: CUDA_LAB_GRADER_CACHE, a host folder holding a prebuilt `grader`,
# mounted read-only (the workflow checks it against CUDA_LAB_GRADER_SHA256).
set -euo pipefail

: "${GITHUB_ORG:?set GITHUB_ORG to the course's organization}"
: "${GITHUB_ADMIN_TOKEN:?set GITHUB_ADMIN_TOKEN (organization self-hosted runners: write)}"
image=${CUDA_LAB_RUNNER_IMAGE:-cuda-lab-runner}
api=${GITHUB_API_URL:-https://api.github.com}
gpus=${CUDA_LAB_RUNNER_GPUS:-all}

registration_token() {
    curl -sSf -X POST -H "Authorization: Bearer $GITHUB_ADMIN_TOKEN" -H "Accept: application/vnd.github+json" \
        "$api/orgs/$GITHUB_ORG/actions/runners/registration-token" | jq -r .token
}

while true; do
    mounts=()
    if [ -n "${CUDA_LAB_GRADER_CACHE:-}" ]; then
        mounts=(--volume "$CUDA_LAB_GRADER_CACHE:/opt/cuda-lab/grader:ro")
    fi
    # --rm: the container and everything the job wrote are gone afterwards.
    # No docker socket, no writable host folder, no extra privileges.
    docker run --rm --gpus "$gpus" \
        --security-opt no-new-privileges --cap-drop ALL \
        --pids-limit 4096 --memory "${CUDA_LAB_RUNNER_MEMORY:-32g}" \
        -e RUNNER_URL="https://github.com/$GITHUB_ORG" \
        -e RUNNER_TOKEN="$(registration_token)" \
        "${mounts[@]}" "$image" || sleep 10
done
