#!/usr/bin/env bash
# The four stages chained as containers: prepare -> infer -> extract -> score, each `docker run`ning the mmbatch image
# with the current folder mounted at /data (so every path below is relative to it). infer runs in mmbatch:full on
# the GPUs, the other stages in mmbatch:light. With NUM_SHARDS=N, infer runs N shard processes at once, one per GPU
# (shard K on GPU K), and `mmbatch merge` joins them.
#
#   examples/pipeline.sh [OUT_DIR]                                  # default: out/pipeline
#   BENCHMARK=mmbench INPUT=MMBench_DEV_EN.tsv BACKEND=hf MODEL=llava-hf/llava-1.5-7b-hf NUM_SHARDS=8 \
#       examples/pipeline.sh out/llava-mmbench
#   MMBATCH_NO_DOCKER=1 examples/pipeline.sh                        # the same chain with the local install (CI)
#
#   BENCHMARK=seedbench INPUT=SEED-Bench.json MEDIA_ROOT=SEED-Bench-image examples/pipeline.sh out/seed
#
# Settings (environment): BENCHMARK (mme), INPUT (examples/mme; empty: the official file `mmbatch fetch` put in
# MMBATCH_DATA), MEDIA_ROOT (the folder of the benchmark's media files, SEED-Bench's images and videos: prepare,
# infer and extract read them there; default MMBATCH_MEDIA_ROOT, else none), BACKEND (echo), MODEL (answer: the echo
# backend repeats the right answer, a dry run that must score 100), NUM_SHARDS (1), BASE_URL (an OpenAI-compatible
# server for BACKEND=openai), JUDGE_MODEL (default MMBATCH_JUDGE_MODEL; empty: official rules only), JUDGE_BASE_URL
# (the judge's OpenAI-compatible server; default MMBATCH_JUDGE_BASE_URL, else the official API), IMAGE (mmbatch; the
# tags are IMAGE:light and IMAGE:full), MMBATCH (the local command when MMBATCH_NO_DOCKER=1; default `mmbatch`, else
# `python3 -m mmbatch`). Every other MMBATCH_* variable you set (MMBATCH_BATCH_SIZE...) reaches every container by
# name; MMBATCH_DATA, a host folder, is mounted at /mmbatch-data. A server the containers call (BASE_URL,
# JUDGE_BASE_URL) must be reachable from them: a host name or address, not 127.0.0.1 (the container's own).
# Secrets are never written here: OPENAI_API_KEY / MMBATCH_JUDGE_API_KEY / HF_TOKEN pass from your environment.
# Exit status: 0, or 3 when some rows failed (they are in the files with an `error`; rerun to retry only them).
set -euo pipefail
# Paths are relative to the folder you run this from; with Docker that folder is what gets mounted at /data, so
# the input and the output folder must lie inside it.
here=$(dirname "$0")

out=${1:-out/pipeline}
BENCHMARK=${BENCHMARK:-mme}
INPUT=${INPUT-$here/mme}
MEDIA_ROOT=${MEDIA_ROOT:-${MMBATCH_MEDIA_ROOT:-}}
BACKEND=${BACKEND:-echo}
MODEL=${MODEL:-answer}
NUM_SHARDS=${NUM_SHARDS:-1}
BASE_URL=${BASE_URL:-}
JUDGE_MODEL=${JUDGE_MODEL:-${MMBATCH_JUDGE_MODEL:-}}
JUDGE_BASE_URL=${JUDGE_BASE_URL:-${MMBATCH_JUDGE_BASE_URL:-}}
IMAGE=${IMAGE:-mmbatch}
if [[ -z "${MMBATCH:-}" ]]; then
    if command -v mmbatch >/dev/null; then MMBATCH=mmbatch; else MMBATCH="python3 -m mmbatch"; fi
fi
rows_failed=0

# in_image TARGET GPU ARGS...: one mmbatch command in IMAGE:TARGET, or locally. GPU: a device number (that GPU
# alone), "all", or "" (none: the light stages, and servers or echo, which need no local GPU). Not named `mmbatch`:
# a shell function of that name would shadow the installed command that MMBATCH names and call itself.
in_image() {
    local target=$1 gpu=$2
    shift 2
    if [[ "${MMBATCH_NO_DOCKER:-0}" == 1 ]]; then
        if [[ "$gpu" =~ ^[0-9]+$ ]]; then
            # shellcheck disable=SC2086  # MMBATCH may be a command with arguments ("python3 -m mmbatch")
            CUDA_VISIBLE_DEVICES=$gpu $MMBATCH "$@"
        else
            # shellcheck disable=SC2086
            $MMBATCH "$@"
        fi
        return
    fi
    local gpus=()
    if [[ "$gpu" =~ ^[0-9]+$ ]]; then gpus=(--gpus "device=$gpu"); elif [[ "$gpu" == all ]]; then gpus=(--gpus all); fi
    docker run --rm "${gpus[@]}" \
        --user "$(id -u):$(id -g)" \
        -v "$PWD:/data" -v "${HF_HOME:-$HOME/.cache/huggingface}:/hf-cache" "${data_folder[@]}" \
        -e HF_HUB_OFFLINE -e HF_TOKEN -e OPENAI_API_KEY "${mmbatch_variables[@]}" \
        "$IMAGE:$target" "$@"
}

# The MMBATCH_* variables the stages read pass to every container by name (`-e NAME`: docker copies the value from
# this environment, so no value, a key included, is ever on a command line). MMBATCH_NO_DOCKER is this script's own;
# MMBATCH_DATA names a host folder, so the folder is mounted and the containers get its path inside.
mmbatch_variables=()
data_folder=()
while IFS= read -r name; do
    case $name in
        MMBATCH_NO_DOCKER) ;;
        MMBATCH_DATA) data_folder=(-v "$MMBATCH_DATA:/mmbatch-data" -e MMBATCH_DATA=/mmbatch-data) ;;
        *) mmbatch_variables+=(-e "$name") ;;
    esac
done < <(compgen -e | grep '^MMBATCH_' || true)

# stage NAME COMMAND...: run a step; exit 3 (finished, some rows failed) lets the chain go on and is reported at the end.
stage() {
    local name=$1 status=0
    shift
    printf '\n== %s\n' "$name"
    "$@" || status=$?
    if [[ $status == 3 ]]; then
        rows_failed=1
    elif [[ $status != 0 ]]; then
        echo "pipeline: $name failed (exit $status)" >&2
        exit "$status"
    fi
}

# infer_shards: NUM_SHARDS shard processes at once (shard K on GPU K), then the merge of their files.
infer_shards() {
    local pids=() status=0 k pid
    for ((k = 0; k < NUM_SHARDS; k++)); do
        local device=""
        [[ -n "$infer_gpu" ]] && device=$k
        in_image full "$device" infer "${infer_args[@]}" --shard "$k/$NUM_SHARDS" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do
        local rc=0
        wait "$pid" || rc=$?
        if [[ $rc == 3 ]]; then rows_failed=1; elif [[ $rc != 0 ]]; then status=$rc; fi
    done
    [[ $status == 0 ]] || return "$status"
    local shards=()
    for ((k = 0; k < NUM_SHARDS; k++)); do shards+=("$out/predictions.shard-$k-of-$NUM_SHARDS.parquet"); done
    in_image light "" merge --output "$out/predictions.parquet" "${shards[@]}"
}

infer_args=(--input "$out/prepared.parquet" --output "$out/predictions.parquet" --backend "$BACKEND" --model "$MODEL")
[[ -n "$BASE_URL" ]] && infer_args+=(--base-url "$BASE_URL" --concurrency 64)
# Local models get GPUs; a server (openai) or the echo backend needs none.
infer_gpu=""
[[ "$BACKEND" == hf ]] && infer_gpu=all
judge_args=(--no-judge)
[[ -n "$JUDGE_MODEL" ]] && judge_args=(--judge-model "$JUDGE_MODEL")
if [[ -n "$JUDGE_BASE_URL" ]]; then
    if [[ -z "$JUDGE_MODEL" ]]; then
        echo "pipeline: JUDGE_BASE_URL is set but JUDGE_MODEL is not: name the judge model the server serves" >&2
        exit 2
    fi
    judge_args+=(--judge-base-url "$JUDGE_BASE_URL")
fi
# The benchmark's media files (SEED-Bench's image_path/video_path rows): prepare checks them, infer reads them, and
# extract reads SEED-Bench-2's option pictures there. infer and extract read media only under a folder named here.
media_args=()
[[ -n "$MEDIA_ROOT" ]] && media_args=(--media-root "$MEDIA_ROOT")
infer_args+=("${media_args[@]}")
input_args=()
[[ -n "$INPUT" ]] && input_args=(--input "$INPUT")
mkdir -p "$out"

stage prepare in_image light "" prepare --benchmark "$BENCHMARK" "${input_args[@]}" "${media_args[@]}" \
    --output "$out/prepared.parquet"
if ((NUM_SHARDS > 1)); then
    stage "infer ($NUM_SHARDS shards)" infer_shards
else
    stage infer in_image full "$infer_gpu" infer "${infer_args[@]}"
fi
# The predictions file is what a GPU team hands to an evaluation team: check it before going on.
stage validate in_image light "" validate "$out/predictions.parquet"
# SEED-Bench-2's image-generation rows are decided by a CLIP model, which only the full image holds.
extract_image=light
[[ "$BENCHMARK" == seedbench2 ]] && extract_image=full
stage extract in_image "$extract_image" "" extract --input "$out/predictions.parquet" --output "$out/extracted.parquet" \
    "${judge_args[@]}" "${media_args[@]}"
stage score in_image light "" score --input "$out/extracted.parquet" --output "$out/metrics.json"

printf '\npipeline: metrics in %s/metrics.json\n' "$out"
if ((rows_failed)); then
    echo "pipeline: some rows failed; rerun the same command to retry only them" >&2
    exit 3
fi
