"""``mmbatch score`` in real subprocesses: output formats, hits file, metadata, bad input (exit 2), the chain."""

from __future__ import annotations

import json

import polars as pl
import pytest

from mmbatch.score.metrics_table import METRICS_COLUMNS, read_metrics
from mmbatch.score.stage import ScoreOptions, score_frame
from mmbatch.tableio import read_table, write_table

OFFSET = 1_000_000


def extracted_rows(n_questions: int = 6) -> pl.DataFrame:
    """MMBench-style extracted rows: 4 circular copies per question, question q wrong in copy 3 when q is odd."""
    rows = []
    for q in range(n_questions):
        for k in range(4):
            right = not (q % 2 and k == 3)
            rows.append({"index": q + k * OFFSET, "g_index": q, "benchmark": "mmbench", "question": f"q{q}",
                         "answer": "ABCD"[k], "extracted": "ABCD"[k] if right else "ABCD"[(k + 1) % 4],
                         "extract_method": "rule", "category": "ocr" if q < 3 else "image_emotion",
                         "l2-category": "coarse_perception", "split": "dev", "model": "tiny", "prompt": "p",
                         "prompt_template": "vlmevalkit", "mode": "generate"})
    return pl.DataFrame(rows)


@pytest.fixture
def extracted(tmp_path):
    path = tmp_path / "extracted.parquet"
    write_table(extracted_rows(), path, {"stage": "extracted", "extract": {"judge": None}})
    return path


@pytest.mark.parametrize("suffix", [".parquet", ".tsv", ".json"])
def test_writes_the_metrics_table_and_a_hits_file_beside_it(cli, extracted, tmp_path, suffix):
    output = tmp_path / f"metrics{suffix}"
    done = cli("score", "--input", str(extracted), "--output", str(output))
    assert done.returncode == 0, done.stderr
    metrics = read_metrics(output)
    assert tuple(metrics.frame.columns) == METRICS_COLUMNS
    overall = metrics.frame.filter((pl.col("level") == "overall") & (pl.col("metric") == "circular_acc"))
    assert overall.select("value", "n").row(0) == (50.0, 6)
    assert metrics.metadata["stage"] == "scores"
    assert metrics.metadata["extract"] == {"judge": None}  # the input's metadata is carried
    assert metrics.metadata["score"]["bootstrap"] == 0
    hits_file = tmp_path / ("metrics.hits.tsv" if suffix == ".tsv" else "metrics.hits.parquet")
    hits = read_table(hits_file)
    assert hits.metadata["stage"] == "hits"
    assert hits.frame.height == 24 and hits.frame["hit"].sum() == 21
    assert cli("validate", str(hits_file)).returncode == 0
    assert "circular_acc" in done.stdout and "image_emotion" in done.stdout


def test_json_output_is_a_plain_list_of_rows_with_a_metadata_sidecar(cli, extracted, tmp_path):
    output = tmp_path / "metrics.json"
    assert cli("score", "--input", str(extracted), "--output", str(output), "--bootstrap", "50").returncode == 0
    rows = json.loads(output.read_text())
    assert isinstance(rows, list) and set(rows[0]) == set(METRICS_COLUMNS)
    assert all(r["ci_low"] is None for r in rows if r["metric"] in ("unmatched", "failed"))
    assert all(r["ci_low"] is not None for r in rows if r["metric"] == "vanilla_acc")
    sidecar = json.loads((tmp_path / "metrics.json.meta.json").read_text())
    assert sidecar["score"]["bootstrap"] == 50 and sidecar["score"]["seed"] == 0


def test_bootstrap_intervals_are_reproducible_and_change_with_the_seed(cli, tmp_path):
    """One real run against two in-process runs: same seed, same intervals; another seed, others."""
    extracted = tmp_path / "extracted.parquet"
    write_table(extracted_rows(60), extracted)
    output = tmp_path / "a.parquet"
    done = cli("score", "--input", str(extracted), "--output", str(output), "--bootstrap", "200", "--seed", "1")
    assert done.returncode == 0, done.stderr
    from_cli = pl.read_parquet(output)
    assert from_cli.filter(pl.col("metric") == "circular_acc")["ci_low"].null_count() == 0
    frame = read_table(extracted).frame
    same = score_frame(frame, ScoreOptions(bootstrap=200, seed=1)).metrics
    other = score_frame(frame, ScoreOptions(bootstrap=200, seed=2)).metrics
    assert from_cli.equals(same)
    assert not from_cli.equals(other)


def test_bootstrap_reads_its_environment_variable(cli, extracted, tmp_path):
    output = tmp_path / "m.parquet"
    done = cli("score", "--input", str(extracted), "--output", str(output), env={"MMBATCH_BOOTSTRAP": "20"})
    assert done.returncode == 0, done.stderr
    assert read_metrics(output).metadata["score"]["bootstrap"] == 20


def bad_input(cli, tmp_path, frame: pl.DataFrame, *extra: str):
    path = tmp_path / "bad.parquet"
    write_table(frame, path)
    output = tmp_path / "out.parquet"
    done = cli("score", "--input", str(path), "--output", str(output), *extra)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert not output.exists() and not (tmp_path / "out.hits.parquet").exists()
    return done.stderr


def test_duplicate_indices_are_named(cli, tmp_path):
    frame = extracted_rows()
    frame = pl.concat([frame, frame.filter(pl.col("index").is_in([2, 5]))])
    message = bad_input(cli, tmp_path, frame)
    assert "duplicate index values 2, 5" in message and "bad.parquet" in message


def test_a_test_split_without_answers_points_to_export(cli, tmp_path):
    message = bad_input(cli, tmp_path, extracted_rows().with_columns(pl.lit(None, dtype=pl.String).alias("answer")))
    assert "no ground truth" in message
    assert "mmbatch export --format mmbench-submission" in message


def test_a_split_without_answers_beside_one_with_them_is_skipped_with_a_warning(cli, tmp_path):
    test_split = extracted_rows().with_columns(pl.col("index") + 100, pl.col("g_index") + 100,
                                               pl.lit("test").alias("split"),
                                               pl.lit(None, dtype=pl.String).alias("answer"))
    path = tmp_path / "both.parquet"
    write_table(pl.concat([extracted_rows(), test_split]), path)
    done = cli("score", "--input", str(path), "--output", str(tmp_path / "m.parquet"))
    assert done.returncode == 0, done.stderr
    assert "split 'test': 24 rows without answers are not scored" in done.stderr
    assert pl.read_parquet(tmp_path / "m.parquet")["split"].unique().to_list() == ["dev"]


def test_missing_extracted_column_says_to_run_extract(cli, tmp_path):
    assert "mmbatch extract" in bad_input(cli, tmp_path, extracted_rows().drop("extracted"))


def test_unknown_benchmark_and_missing_benchmark(cli, tmp_path):
    message = bad_input(cli, tmp_path, extracted_rows().with_columns(pl.lit("nosuchbench").alias("benchmark")))
    assert "no scorer for benchmark 'nosuchbench'" in message and "--benchmark mmbench" in message
    assert "--benchmark" in bad_input(cli, tmp_path, extracted_rows().drop("benchmark"))
    assert "no rows of benchmark 'mme'" in bad_input(cli, tmp_path, extracted_rows(), "--benchmark", "mme")


def test_unwritable_output_format_is_refused_before_reading(cli, extracted, tmp_path):
    done = cli("score", "--input", str(extracted), "--output", str(tmp_path / "m.xlsx"))
    assert done.returncode == 2 and "use one of .json, .csv, .tsv, .parquet" in done.stderr


def test_extract_then_score_reproduces_mmbench_circular_eval(cli, shared_data, tmp_path):
    xlsx = next((shared_data / "llava15_13b" / "mmbench").glob("*_upload.xlsx"))
    extracted = tmp_path / "x.parquet"
    done = cli("extract", "--no-judge", "--benchmark", "mmbench", "--input", str(xlsx), "--output", str(extracted))
    assert done.returncode == 0, done.stderr
    done = cli("score", "--input", str(extracted), "--output", str(tmp_path / "m.tsv"))
    assert done.returncode == 0, done.stderr
    metrics = read_metrics(tmp_path / "m.tsv").frame
    circular = metrics.filter((pl.col("level") == "overall") & (pl.col("metric") == "circular_acc"))
    assert circular.select(pl.col("value").round(2), "n").row(0) == (67.69, 1176)
    assert "67.69" in done.stdout


def test_an_mme_image_without_two_questions_is_a_warning_not_a_crash(cli, tmp_path):
    answers = ["Yes", "No", "Yes", "No", "Yes"]  # img0 has two questions, img1 three
    frame = pl.DataFrame({
        "index": list(range(5)), "g_index": [0, 0, 2, 2, 2], "benchmark": "mme", "category": "count",
        "image_name": ["img0.jpg", "img0.jpg", "img1.jpg", "img1.jpg", "img1.jpg"], "answer": answers,
        "extracted": ["yes", "no", "Yes", "No", None], "extract_method": "yes-no",
    })
    path = tmp_path / "mme.parquet"
    write_table(frame, path)
    done = cli("score", "--input", str(path), "--output", str(tmp_path / "m.tsv"))
    assert done.returncode == 0, done.stderr
    assert "MME subtask 'count': 1 image(s) do not have exactly two questions: img1.jpg (3 questions)" in done.stderr
    metrics = read_metrics(tmp_path / "m.tsv")
    assert metrics.frame.filter(pl.col("group") == "count")["metric"].to_list() == ["acc", "bad_images"]
    assert metrics.metadata["score"]["warnings"] and "img1.jpg" in metrics.metadata["score"]["warnings"][0]
