#!/usr/bin/env bash
# `make demo`: every stage end to end on the bundled examples. Usage: examples/demo.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/demo}
mkdir -p "$out"
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# Stages append their steps below, in pipeline order.

# --- score: every extracted file of the steps above -> metrics table (95 % bootstrap intervals) + per-row hits
say "score: metrics tables with 95 % bootstrap intervals; per-row hits beside them"
shopt -s nullglob
extracted_files=("$out"/*extracted*.parquet)
shopt -u nullglob
if [[ ${#extracted_files[@]} -eq 0 ]]; then
    echo "no extracted files in $out: the extract steps must run before score" >&2
    exit 1
fi
for extracted in "${extracted_files[@]}"; do
    name=$(basename "$extracted" .parquet)
    metrics="$(dirname "$extracted")/${name/extracted/metrics}.json"   # mme.extracted.parquet -> mme.metrics.json
    python3 -m mmbatch score --input "$extracted" --output "$metrics" --bootstrap 200 --seed 0
done
