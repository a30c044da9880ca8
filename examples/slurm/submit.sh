#!/usr/bin/env bash
# Prepare once, infer as an array of NUM_SHARDS GPU tasks, then merge + extract + score when all of them succeeded.
# Usage: examples/slurm/submit.sh BENCHMARK_FILE [NUM_SHARDS]   (e.g. MMBench_DEV_EN.tsv 8)
#        EXECUTOR=ray examples/slurm/submit.sh BENCHMARK_FILE      (infer on a Ray cluster over the nodes of one job,
#        infer-ray.sbatch, instead of the array; no shards, so nothing to merge)
# Both infer scripts exit 0 when infer finished with failed rows (its exit 3), so merge + extract + score run and
# count them (afterok); rerun the infer job to retry only the failed rows.
# MMBATCH: the mmbatch command (default: the local install), or SIF: a SIF file of the image (see infer-array.sbatch).
# BENCHMARK (mmbench); MEDIA_ROOT: the folder of the benchmark's media files (SEED-Bench's images and videos), which
# prepare, infer and extract read (an absolute path, seen by every node); JUDGE_MODEL, JUDGE_BASE_URL: the judge
# (merge-score.sbatch). Every MMBATCH_* variable of your environment reaches every job and stage (--export=ALL).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
input=${1:?usage: submit.sh BENCHMARK_FILE [NUM_SHARDS]}
num_shards=${2:-4}
export RUN_DIR=${RUN_DIR:-$PWD/run} BENCHMARK=${BENCHMARK:-mmbench}
mkdir -p "$RUN_DIR" logs

# The tasks choose their own command from MMBATCH or SIF (they pass with --export=ALL); prepare runs here.
media=()
if [[ -n "${MEDIA_ROOT:-}" ]]; then media=(--media-root "$MEDIA_ROOT"); fi
prepare=${MMBATCH:-mmbatch}
if [[ -z "${MMBATCH:-}" && -n "${SIF:-}" ]]; then
    prepare="apptainer exec --bind $RUN_DIR${MEDIA_ROOT:+ --bind $MEDIA_ROOT} $SIF mmbatch"
fi
# shellcheck disable=SC2086  # prepare may be a command with arguments (apptainer exec ...)
$prepare prepare --benchmark "$BENCHMARK" --input "$input" "${media[@]}" --output "$RUN_DIR/prepared.parquet"
if [[ "${EXECUTOR:-local}" == ray ]]; then
    infer=$(sbatch --parsable --export=ALL "$here/infer-ray.sbatch")
    num_shards=0
else
    infer=$(sbatch --parsable --export=ALL --array="0-$((num_shards - 1))" "$here/infer-array.sbatch")
fi
sbatch --parsable --export=ALL,NUM_SHARDS="$num_shards" --dependency="afterok:${infer%%;*}" "$here/merge-score.sbatch"
