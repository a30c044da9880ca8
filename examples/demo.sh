#!/usr/bin/env bash
# `make demo`: every stage end to end on the bundled examples. Usage: examples/demo.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/demo}
mkdir -p "$out"
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# Stages append their steps below, in pipeline order.
