#!/usr/bin/env bash
# `make demo`: every stage end to end on the bundled examples. Usage: examples/demo.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/demo}
# Every run starts from an empty folder: a second `make demo` must not meet the first one's outputs as files of
# another run (infer and extract refuse those, as they should, unless --force).
if [[ -d $out && ! -f $out/.mmbatch-demo && -n "$(ls -A "$out")" ]]; then
    echo "$out is not empty and was not made by the demo: choose another folder" >&2
    exit 2
fi
rm -rf "$out"
mkdir -p "$out"
touch "$out/.mmbatch-demo"
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# Stages append their steps below, in pipeline order.

# --- the judge: MMBench answers the rules cannot match, and MM-Vet's grades, go to an LLM judge; a stand-in judge on
# 127.0.0.1 plays it here (examples/stand_in_judge.sh says which and why), stopped when this script exits.
say "judge: a stand-in OpenAI-compatible judge on 127.0.0.1 (for a real one: docs/extract.md)"
source examples/stand_in_judge.sh
start_judge_server "$out"
echo "  $judge_url"

# --- run plan: prepare, infer, extract and score every bundled example with two models, each loaded once
# (examples/demo-plan.yaml): a tiny random-weight LLaVA (built once into .cache/, offline; its answers are random
# text: this shows the pipeline, not a score) and the echo backend answering with the ground truth as a reference.
# Seven benchmarks, four answer kinds: multiple choice (MMBench, SEED-Bench, SEED-Bench-2), yes/no (MME, POPE), VQA
# accuracy (TextVQA) and judge-graded (MM-Vet). MMBench runs as two row shards per model, merged. For a
# real model change one line of the plan: model: llava-hf/llava-1.5-7b-hf (or backend: openai with
# backend_args: {base_url: http://localhost:8000/v1}).
say "run plan: 2 models x 7 benchmarks (prepare, infer, extract with the judge, score) -> $out/plan (docs/plans.md)"
python3 examples/tiny_model.py >/dev/null
# SEED-Bench-2's level-3 row asks for a picture: the reference draws the right one and extract compares pictures with
# a CLIP model, here a tiny random one. An option's MMBATCH_<OPTION> variable fills in what a plan leaves out: the CLIP
# model, and the judge's URL (given to this command only: the --no-judge steps below would refuse it).
tiny_clip=$(python3 examples/tiny_image_models.py clip)
plan_rc=0
MMBATCH_CLIP_MODEL="$tiny_clip" MMBATCH_JUDGE_BASE_URL="$judge_url" \
    python3 -m mmbatch run --plan examples/demo-plan.yaml --output-dir "$out/plan" || {
    plan_rc=$?; [[ $plan_rc -eq 3 ]] || exit "$plan_rc"; }
[[ $plan_rc -eq 0 ]] || echo "run plan: some rows failed (see their 'error' column); a rerun retries only them"
plan="$out/plan"
tiny="$plan/models/tiny-llava"
reference="$plan/models/reference"

# --- prepare alone: the plain MCQ example with generated circular copies (TSV, not inferred). Regenerate inputs:
# examples/make_examples.py
say "prepare: a plain MCQ file -> CircularEval copies"
[[ -f examples/mmbench/mcq_plain_example.tsv ]] && python3 -m mmbatch prepare --benchmark mmbench --circular \
    --input examples/mmbench/mcq_plain_example.tsv --output "$out/mcq_circular.tsv"

# --- extract alone, with the judge: the tiny model's MMBench answers once more, into a TSV, with the plan's judge
# cache: every reply the judge gave in the plan is read back from it (0 calls). For the real judge: export
# OPENAI_API_KEY and drop --judge-base-url; --judge-model gpt-3.5-turbo-0125 reproduces the leaderboard.
say "extract alone: the MMBench answers again, every judge reply from the plan's cache"
if [[ -f "$tiny/mmbench/predictions.parquet" ]]; then
    python3 -m mmbatch extract --input "$tiny/mmbench/predictions.parquet" --output "$out/mmbench.judged.tsv" \
        --judge-base-url "$judge_url" --judge-model gpt-4o-mini \
        --judge-cache "$tiny/mmbench/mmbatch-judge-cache.sqlite" || [[ $? -eq 3 ]]
fi
stop_judge_server

# --- TextVQA alone (examples/textvqa_demo.sh): a model's VLMEvalKit prediction file imported, scored under today's
# and VLMEvalKit's 2024 VQA rules, and compared; its metrics join the report below, beside the plan's TextVQA pairs
say "TextVQA: import a VLMEvalKit prediction file, score it under two eras of the VQA rules -> $out/textvqa"
bash examples/textvqa_demo.sh "$out"

# --- SEED-Bench-2 level 3 (dimensions 25-27): the model draws a picture and CLIP picks the option most like it.
# Two "models": the echo backend returning the right option's picture (100 % through any CLIP, by construction) and
# a tiny random Stable Diffusion pipeline (--backend diffusers); a tiny random CLIP compares. In their own folder,
# so the loops above do not pick them up; their metrics join the report.
# Real models: docs/seedbench2-image-generation.md
say "SEED-Bench-2 level 3: generate-image infer (echo, diffusers) -> CLIP extraction -> score"
level3="$out/level3"
mkdir -p "$level3"
python3 -m mmbatch prepare --benchmark seedbench2 --input examples/seed/seed2_level3_example.json \
    --media-root examples/seed/media --output "$level3/seedbench2-l3.prepared.parquet"
tiny_diffusion=$(python3 examples/tiny_image_models.py diffusion)
python3 -m mmbatch infer --input "$level3/seedbench2-l3.prepared.parquet" --backend echo --model answer \
    --media-root examples --output "$level3/echo.predictions.parquet" --force
python3 -m mmbatch infer --input "$level3/seedbench2-l3.prepared.parquet" --backend diffusers \
    --model "$tiny_diffusion" --image-steps 2 --image-size 64x64 --device cpu --media-root examples \
    --output "$level3/diffusers.predictions.parquet" --force
# Metrics named level3-*: beside the plan's seedbench2 pairs in the report.
for generator in echo diffusers; do
    python3 -m mmbatch extract --input "$level3/$generator.predictions.parquet" --no-judge \
        --clip-model "$tiny_clip" --media-root examples --output "$level3/$generator.extracted.parquet" --force
    python3 -m mmbatch score --input "$level3/$generator.extracted.parquet" --bootstrap 200 --seed 0 \
        --output "$out/level3-$generator.metrics.json"
done

# --- report: every metrics table above side by side -> report.html (charts inline) and report.md (+ SVG charts):
# the plan's pairs and the level-3 runs (the plan wrote its own report too, in $out/plan)
say "report: a summary table, then a leaderboard per benchmark with its chart (HTML, Markdown with SVG files beside it)"
shopt -s nullglob
# (the level-3 files first: the reference's label names its model "answer" in the comparison below)
metrics_files=("$out"/*metrics.json "$plan"/models/*/*/metrics.json "$out"/textvqa/*.metrics.json)
shopt -u nullglob
if [[ ${#metrics_files[@]} -eq 0 ]]; then
    echo "no metrics tables in $out: the score step must run before report" >&2
    exit 1
fi
# --- compare: the tiny model against the reference on the same MMBench rows (paired bootstrap, McNemar's test)
say "compare: the tiny model against the reference, on the rows both answered"
compare_args=()
if [[ -f "$reference/mmbench/metrics.hits.parquet" && -f "$tiny/mmbench/metrics.hits.parquet" ]]; then
    python3 -m mmbatch compare "$reference/mmbench/metrics.hits.parquet" "$tiny/mmbench/metrics.hits.parquet" \
        --output "$out/mmbench.compare.json" --bootstrap 1000 --seed 0
    compare_args=(--compare "$out/mmbench.compare.json")
fi
labels=(--label "$out/textvqa/example-2024.metrics.json=example-model (2024 rules)")
for metrics in "$reference"/*/metrics.json; do
    [[ -f $metrics ]] && labels+=(--label "$metrics=reference (ground truth)")
done
python3 -m mmbatch report "${metrics_files[@]}" --output "$out/report.html" "${compare_args[@]}" "${labels[@]}"
python3 -m mmbatch report "${metrics_files[@]}" --output "$out/report.md" "${compare_args[@]}" "${labels[@]}"

# --- view: every row with its pictures, prompt, answers, extraction and verdict; MMBench with both models and the
# judged run side by side, each other benchmark on its own page
say "view: a per-row viewer of every benchmark (static HTML, open it from disk)"
mkdir -p "$out/viewer"
mmbench_views=()
for candidate in "$reference/mmbench/metrics.hits.parquet" "$tiny/mmbench/metrics.hits.parquet" \
        "$out/mmbench.judged.tsv"; do
    [[ -f $candidate ]] && mmbench_views+=("$candidate")
done
[[ ${#mmbench_views[@]} -gt 0 ]] && python3 -m mmbatch view "${mmbench_views[@]}" \
    --images "$plan/benchmarks/mmbench/prepared.parquet" --output "$out/viewer/mmbench.html" \
    --label "$reference/mmbench/metrics.hits.parquet=reference (ground truth)"
for name in mme seedbench seedbench2 pope textvqa mmvet; do
    hits="$tiny/$name/metrics.hits.parquet"
    [[ -f $hits ]] || continue
    python3 -m mmbatch view "$hits" --images "$plan/benchmarks/$name/prepared.parquet" \
        --media-root examples/seed/media --output "$out/viewer/$name.html"
done

# --- screenshots: the report and the viewer as a person sees them, in headless chromium; a console message fails
say "screenshots: report and viewer in headless chromium -> $out/*.png"
shoot() {   # shoot URL PNG WIDTH,HEIGHT
    local log
    log=$(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$out/.chromium" \
        --enable-logging=stderr --v=0 --virtual-time-budget=8000 --window-size="$3" --screenshot="$2" "$1" 2>&1)
    if grep -q ":CONSOLE" <<<"$log"; then echo "console messages on $1:" >&2; grep ":CONSOLE" <<<"$log" >&2; exit 1; fi
    echo "  $2"
}
if command -v chromium >/dev/null; then
    root_uri="file://$(cd "$out" && pwd)"
    shoot "$root_uri/report.html" "$out/report.png" 1280,2400
    if [[ -f "$out/viewer/mmbench.html" ]]; then
        shoot "$root_uri/viewer/mmbench.html" "$out/viewer-list.png" 1280,1000
        first_judged=$(python3 - "$out/mmbench.judged.tsv" <<'PY'
import sys

import polars as pl

from mmbatch.tableio import read_table

rows = read_table(sys.argv[1]).frame.filter(pl.col("extract_method") == "judge")
print(f"mmbench|{rows['split'][0] or ''}|{rows['index'][0]}" if rows.height else "")
PY
)
        [[ -n $first_judged ]] && shoot "$root_uri/viewer/mmbench.html#mi=2&em=judge&row=$first_judged" \
            "$out/viewer-row.png" 1280,1400
    fi
    rm -rf "$out/.chromium"
else
    echo "no chromium: 'make browser' installs it (screenshots skipped)"
fi
