#!/usr/bin/env bash
# The container's entrypoint: register an ephemeral runner, run exactly one
# job, exit. Needs RUNNER_URL (https://github.com/<org>) and RUNNER_TOKEN (a
# registration token: run-ephemeral.sh fetches a new one for each container).
set -euo pipefail

: "${RUNNER_URL:?set RUNNER_URL, e.g. https://github.com/my-course}"
: "${RUNNER_TOKEN:?set RUNNER_TOKEN to a runner registration token}"
labels=${RUNNER_LABELS:-self-hosted,gpu}
name=${RUNNER_NAME:-cuda-lab-$(hostname)}

if [ "$(id -u)" = 0 ]; then
    echo "start.sh: refusing to run the runner as root (a job could then change what later jobs trust)" >&2
    exit 1
fi

# --ephemeral: GitHub gives this runner one job and then unregisters it.
./config.sh --unattended --ephemeral --disableupdate \
    --url "$RUNNER_URL" --token "$RUNNER_TOKEN" --name "$name" --labels "$labels" --work _work
unset RUNNER_TOKEN
exec ./run.sh
