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

# --- prepare: every bundled example -> one prepared file per benchmark (NAME.prepared.parquet, inferred below), plus
# the plain MCQ example with generated circular copies (TSV, not inferred). Regenerate inputs: examples/make_examples.py
say "prepare: each example benchmark -> prepared rows with rendered prompts"
prepare() { python3 -m mmbatch prepare "$@"; }
[[ -f examples/mmbench/mmbench_example.tsv ]] && prepare --benchmark mmbench \
    --input examples/mmbench/mmbench_example.tsv --output "$out/mmbench.prepared.parquet"
[[ -f examples/mmbench/mcq_plain_example.tsv ]] && prepare --benchmark mmbench --circular \
    --input examples/mmbench/mcq_plain_example.tsv --output "$out/mcq_circular.tsv"
[[ -d examples/mme ]] && prepare --benchmark mme --input examples/mme --output "$out/mme.prepared.parquet"
[[ -f examples/seed/seed_example.json ]] && prepare --benchmark seedbench --input examples/seed/seed_example.json \
    --media-root examples/seed/media --output "$out/seedbench.prepared.parquet"
[[ -f examples/seed/seed2_example.json ]] && prepare --benchmark seedbench2 --input examples/seed/seed2_example.json \
    --media-root examples/seed/media --output "$out/seedbench2.prepared.parquet"

# --- infer: every prepared file of the steps above -> predictions, with a tiny random-weight LLaVA (built once into
# .cache/, offline). Its answers are random text: this shows the pipeline, not a score. For a real model change one
# flag: --model llava-hf/llava-1.5-7b-hf (or --backend openai --base-url http://localhost:8000/v1 --model NAME).
say "infer: a tiny random-weight LLaVA answers every prepared file (the first one in 2 shards, then merged)"
tiny_model=$(python3 examples/tiny_model.py)
shopt -s nullglob
prepared_files=("$out"/*prepared*.parquet)
shopt -u nullglob
if [[ ${#prepared_files[@]} -eq 0 ]]; then
    echo "no prepared files in $out: the prepare steps must run before infer" >&2
    exit 1
fi
infer_rc=0
for position in "${!prepared_files[@]}"; do
    prepared=${prepared_files[$position]}
    predictions="$(dirname "$prepared")/$(basename "$prepared" | sed 's/prepared/predictions/')"
    # --force: when a rerun of the demo rewrote the prepared file, start afresh instead of refusing the old progress
    # (with an unchanged file it still resumes).
    infer=(python3 -m mmbatch infer --input "$prepared" --output "$predictions" --backend hf --model "$tiny_model"
           --device cpu --dtype float32 --batch-size 8 --max-new-tokens 8 --num-frames 4 --force
           --media-root examples)  # media are read only inside a folder chosen here, not where a file points
    if [[ $position -eq 0 ]]; then
        # Two shards (as two machines would run them), then merge; status 3 means rows failed, and they are kept.
        "${infer[@]}" --shard 0/2 || [[ $? -eq 3 ]] || exit 1
        "${infer[@]}" --shard 1/2 || [[ $? -eq 3 ]] || exit 1
        python3 -m mmbatch merge --output "$predictions" "${predictions%.parquet}".shard-{0,1}-of-2.parquet
        rm -rf "$predictions.partial"
    else
        "${infer[@]}" || { rc=$?; [[ $rc -eq 3 ]] || exit "$rc"; infer_rc=3; }
    fi
done
[[ $infer_rc -eq 0 ]] || echo "infer: some rows failed (see their 'error' column); a rerun retries only them"

# A reference "model" for the report: the echo backend answers every MMBench row with its ground truth, so its
# CircularEval is 100 % and the report shows two models side by side.
say "infer (reference): the echo backend answers the MMBench rows with their ground truth"
python3 -m mmbatch infer --input "$out/mmbench.prepared.parquet" --output "$out/mmbench-echo.predictions.parquet" \
    --backend echo --model answer

# --- extract: every predictions file -> extracted choices with the official rules only (--no-judge), then the MMBench
# predictions once more with an LLM judge: a local OpenAI-compatible test server stands in for it here (for the real
# one: export OPENAI_API_KEY and drop --judge-base-url; --judge-model gpt-3.5-turbo-0125 reproduces the leaderboard).
say "extract: predictions -> choices (rules only), then the MMBench rows again with a judge on a local test server"
shopt -s nullglob
prediction_files=("$out"/*predictions*.parquet)
shopt -u nullglob
extract_rc=0
for predictions in "${prediction_files[@]}"; do
    [[ $predictions == *.shard-* ]] && continue   # shard parts of a merged file
    extracted="$(dirname "$predictions")/$(basename "$predictions" | sed 's/predictions/extracted/')"
    python3 -m mmbatch extract --input "$predictions" --output "$extracted" --no-judge \
        || { rc=$?; [[ $rc -eq 3 ]] || exit "$rc"; extract_rc=3; }
done
[[ $extract_rc -eq 0 ]] || echo "extract: rows that failed in infer stay failed (extract_method 'error')"
if [[ -f "$out/mmbench.predictions.parquet" ]]; then
    python3 tests/support/openai_server.py --port 0 --reply judge > "$out/judge-server.port" &
    judge_pid=$!
    for _ in $(seq 100); do grep -q PORT "$out/judge-server.port" 2>/dev/null && break; sleep 0.1; done
    judge_url="http://127.0.0.1:$(awk '/PORT/ {print $2}' "$out/judge-server.port")/v1"
    python3 -m mmbatch extract --input "$out/mmbench.predictions.parquet" --output "$out/mmbench.judged.tsv" \
        --judge-base-url "$judge_url" --judge-model gpt-4o-mini --concurrency 8 || [[ $? -eq 3 ]] || {
        kill "$judge_pid"; exit 1; }
    # The same again: every judge reply now comes from the cache (0 calls).
    python3 -m mmbatch extract --input "$out/mmbench.predictions.parquet" --output "$out/mmbench.judged-again.tsv" \
        --judge-base-url "$judge_url" --judge-model gpt-4o-mini || [[ $? -eq 3 ]] || { kill "$judge_pid"; exit 1; }
    kill "$judge_pid"
    rm -f "$out/judge-server.port"
fi

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
tiny_clip=$(python3 examples/tiny_image_models.py clip)
tiny_diffusion=$(python3 examples/tiny_image_models.py diffusion)
python3 -m mmbatch infer --input "$level3/seedbench2-l3.prepared.parquet" --backend echo --model answer \
    --media-root examples --output "$level3/echo.predictions.parquet" --force
python3 -m mmbatch infer --input "$level3/seedbench2-l3.prepared.parquet" --backend diffusers \
    --model "$tiny_diffusion" --image-steps 2 --image-size 64x64 --device cpu --media-root examples \
    --output "$level3/diffusers.predictions.parquet" --force
# Metrics named level3-*, not seedbench*: the viewer loop below pairs seedbench* hits with a prepared file of that name.
for generator in echo diffusers; do
    python3 -m mmbatch extract --input "$level3/$generator.predictions.parquet" --no-judge \
        --clip-model "$tiny_clip" --media-root examples --output "$level3/$generator.extracted.parquet" --force
    python3 -m mmbatch score --input "$level3/$generator.extracted.parquet" --bootstrap 200 --seed 0 \
        --output "$out/level3-$generator.metrics.json"
done

# --- report: every metrics table above side by side -> report.html (charts inline) and report.md (+ SVG charts)
say "report: a leaderboard per benchmark with its chart (HTML with inline SVG; Markdown with SVG files beside it)"
shopt -s nullglob
metrics_files=("$out"/*metrics.json)
shopt -u nullglob
if [[ ${#metrics_files[@]} -eq 0 ]]; then
    echo "no metrics tables in $out: the score step must run before report" >&2
    exit 1
fi
# --- compare: the tiny model against the reference on the same MMBench rows (paired bootstrap, McNemar's test)
say "compare: the tiny model against the reference, on the rows both answered"
compare_args=()
if [[ -f "$out/mmbench-echo.metrics.hits.parquet" && -f "$out/mmbench.metrics.hits.parquet" ]]; then
    python3 -m mmbatch compare "$out/mmbench-echo.metrics.hits.parquet" "$out/mmbench.metrics.hits.parquet" \
        --output "$out/mmbench.compare.json" --bootstrap 1000 --seed 0
    compare_args=(--compare "$out/mmbench.compare.json")
fi
labels=()
[[ -f "$out/mmbench-echo.metrics.json" ]] && labels=(--label "$out/mmbench-echo.metrics.json=reference (ground truth)")
python3 -m mmbatch report "${metrics_files[@]}" --output "$out/report.html" "${compare_args[@]}" "${labels[@]}"
python3 -m mmbatch report "${metrics_files[@]}" --output "$out/report.md" "${compare_args[@]}" "${labels[@]}"

# --- view: every row with its pictures, prompt, answers, extraction and verdict; MMBench with both models and the
# judged run side by side, each other benchmark on its own page
say "view: a per-row viewer of every benchmark (static HTML, open it from disk)"
mkdir -p "$out/viewer"
mmbench_views=()
for candidate in mmbench-echo.metrics.hits.parquet mmbench.metrics.hits.parquet mmbench.judged.tsv; do
    [[ -f "$out/$candidate" ]] && mmbench_views+=("$out/$candidate")
done
[[ ${#mmbench_views[@]} -gt 0 ]] && python3 -m mmbatch view "${mmbench_views[@]}" \
    --images "$out/mmbench.prepared.parquet" --output "$out/viewer/mmbench.html" \
    --label "$out/mmbench-echo.metrics.hits.parquet=reference (ground truth)"
for hits in "$out"/mme.metrics.hits.parquet "$out"/seedbench*.metrics.hits.parquet; do
    [[ -f $hits ]] || continue
    name=$(basename "$hits" .metrics.hits.parquet)
    python3 -m mmbatch view "$hits" --images "$out/$name.prepared.parquet" --media-root examples/seed/media \
        --output "$out/viewer/$name.html"
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
