#!/usr/bin/env bash
# Prepare once, infer as an array of NUM_SHARDS GPU tasks, then merge + extract + score when all of them succeeded.
# Usage: examples/slurm/submit.sh BENCHMARK_FILE [NUM_SHARDS]   (e.g. MMBench_DEV_EN.tsv 8)
#        EXECUTOR=ray examples/slurm/submit.sh BENCHMARK_FILE      (infer on a Ray cluster over the nodes of one job,
#        infer-ray.sbatch, instead of the array; no shards, so nothing to merge)
# Both infer scripts exit 0 when infer finished with failed rows (its exit 3), so merge + extract + score run and
# count them (afterok); rerun the infer job to retry only the failed rows.
# MMBATCH: the mmbatch command (default: the local install), or SIF: a SIF file of the image (see infer-array.sbatch).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
input=${1:?usage: submit.sh BENCHMARK_FILE [NUM_SHARDS]}
num_shards=${2:-4}
export RUN_DIR=${RUN_DIR:-$PWD/run} BENCHMARK=${BENCHMARK:-mmbench}
mkdir -p "$RUN_DIR" logs

# The tasks choose their own command from MMBATCH or SIF (they pass with --export=ALL); prepare runs here.
prepare=${MMBATCH:-mmbatch}
if [[ -z "${MMBATCH:-}" && -n "${SIF:-}" ]]; then prepare="apptainer exec --bind $RUN_DIR $SIF mmbatch"; fi
$prepare prepare --benchmark "$BENCHMARK" --input "$input" --output "$RUN_DIR/prepared.parquet"
if [[ "${EXECUTOR:-local}" == ray ]]; then
    infer=$(sbatch --parsable --export=ALL "$here/infer-ray.sbatch")
    num_shards=0
else
    infer=$(sbatch --parsable --export=ALL --array="0-$((num_shards - 1))" "$here/infer-array.sbatch")
fi
sbatch --parsable --export=ALL,NUM_SHARDS="$num_shards" --dependency="afterok:${infer%%;*}" "$here/merge-score.sbatch"
