#!/usr/bin/env bash
# Set-up of a dev container or Codespace (.devcontainer/devcontainer.json):
# what the README's two commands need and a bare Rust image lacks. CI runs
# this script too (grader/tests/devcontainer.rs checks the wiring), so a
# Classroom assignment that opens in a Codespace starts from a tested recipe.
# Idempotent: what is already there is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v python3 >/dev/null || need+=(python3)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
command -v tmux >/dev/null || need+=(tmux)   # `grader watch` in a second terminal
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true

# Build once now so the first `cargo run -p grader -- ex01` starts at once.
cargo build -p grader --locked
echo "cuda-lab: ready. Try: cargo run -p grader -- ex01"
