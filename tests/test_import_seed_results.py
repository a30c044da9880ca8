"""`import --format seed-results` and `export --format seed-upload` on the official SEED-Bench result files."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from mmbatch.errors import BadInputError
from mmbatch.interop.rows import ImportOptions
from mmbatch.interop.seed_results import UNKNOWN_QUESTION, import_rows, unknown_option
from mmbatch.interop.seed_upload import export_rows
from tests.conftest import run_cli


def accuracy(rows: pl.DataFrame) -> float:
    """Letters compared after stripping whitespace (docs/rules.md §7)."""
    return round(100 * (rows["prediction"].str.strip_chars() == rows["answer"].str.strip_chars()).mean(), 2)


@pytest.fixture(scope="module")
def gpt4v_seed1(shared_data: Path) -> pl.DataFrame:
    return import_rows(ImportOptions(input=shared_data / "seed" / "seedbench1_GPT-4V_results.jsonl")).frame


def test_every_line_is_a_row_and_the_official_numbers_follow(gpt4v_seed1: pl.DataFrame) -> None:
    rows = gpt4v_seed1
    assert rows.height == 17997 and rows["index"].is_unique().all()
    assert rows["question_id"].n_unique() == 17989  # 8 ids repeat; all lines count, as officially
    assert set(rows["benchmark"]) == {"seedbench"}
    video = rows.filter(pl.col("data_type") == "video")
    assert video["question_id"].str.starts_with("v").all() and video.height == 3757
    assert rows.filter(pl.col("data_type") == "image").height == 14240
    assert (rows["l2-category"] == rows["data_type"]).all()
    assert accuracy(rows) == 67.28
    assert accuracy(rows.filter(pl.col("data_type") == "image")) == 69.07
    assert accuracy(video) == 60.50
    assert set(rows["question"]) == {UNKNOWN_QUESTION}
    # The four choices exist (extract needs them present) but their texts are not in the file, and say so.
    assert set(rows["C"]) == {unknown_option("C")} and "not in the results file" in unknown_option("C")


def test_seed2_ids_give_the_dimension(shared_data: Path) -> None:
    rows = import_rows(ImportOptions(input=shared_data / "seed" / "seedbench2_GPT-4V_results.jsonl")).frame
    doc = json.loads((shared_data / "seed" / "seedbench2_doc_examples.json").read_text())
    expected = doc["gpt4v_rows_per_dim_dims_1_24 (with 8 duplicate lines)"]
    counts = dict(rows.group_by("question_type_id").len().iter_rows())
    assert {str(k): v for k, v in counts.items()} == expected
    names = {v: k for k, v in doc["question_type"].items()}
    assert all(names[d] == c for d, c in rows.select("question_type_id", "category").unique().iter_rows())
    assert set(rows["benchmark"]) == {"seedbench2"}
    assert rows.filter(pl.col("question_type_id") == 19)["data_type"].unique().to_list() == ["Video"]
    assert rows.filter(pl.col("question_type_id") == 23)["level"].unique().to_list() == ["L2"]
    # 19 ground truths carry a stray space: kept as read, the scorer strips.
    assert int((rows["answer"] != rows["answer"].str.strip_chars()).sum()) == 19


def test_llava_upload_scored_with_gpt4v_ground_truth(shared_data: Path, tmp_path: Path) -> None:
    upload = shared_data / "llava15_13b" / "seed_bench" / "seed_bench_llava-v1.5-13b_upload.jsonl"
    imported = tmp_path / "llava.parquet"
    done = run_cli("import", "--format", "seed-results", "--input", str(upload), "--output", str(imported),
                   "--questions", str(shared_data / "seed" / "seedbench1_GPT-4V_results.jsonl"),
                   "--model", "llava-v1.5-13b")
    assert done.returncode == 0, done.stderr
    rows = pl.read_parquet(imported)
    image = rows.filter((pl.col("data_type") == "image") & pl.col("answer").is_not_null())
    assert image["question_id"].n_unique() == 14232 and accuracy(image) == 68.21
    assert set(rows["model"]) == {"llava-v1.5-13b"}
    out = tmp_path / "upload.jsonl"
    done = run_cli("export", "--format", "seed-upload", "--input", str(imported), "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == upload.read_bytes()


def test_round_trip_through_upload_keeps_rows(gpt4v_seed1: pl.DataFrame, tmp_path: Path) -> None:
    export_rows(gpt4v_seed1, tmp_path / "up.jsonl")
    again = import_rows(ImportOptions(input=tmp_path / "up.jsonl", model=gpt4v_seed1["model"][0])).frame
    kept = ["index", "g_index", "benchmark", "question_id", "prediction", "data_type", "model"]
    assert again.select(kept).equals(gpt4v_seed1.select(kept))


def test_upload_prefers_extracted_letters(tmp_path: Path) -> None:
    frame = pl.DataFrame({"index": [0, 1], "question_id": ["1", "v2"], "prediction": ["It is B", "?"],
                          "extracted": ["B", None]})
    result = export_rows(frame, tmp_path / "up.jsonl")
    assert (tmp_path / "up.jsonl").read_text().splitlines() == [
        '{"question_id": "1", "prediction": "B"}', '{"question_id": "v2", "prediction": ""}']
    assert "1 row(s)" in result.notes[0]
    with pytest.raises(BadInputError, match="run `mmbatch extract` first"):
        export_rows(frame.drop("extracted").with_columns(pl.lit("likelihood").alias("mode")), tmp_path / "x.jsonl")


def test_questions_json_fills_texts_and_options(shared_data: Path, tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    results.write_text('[{"question_id": "101669", "prediction": "A"}, {"question_id": "v1738", "prediction": "C"}]')
    rows = import_rows(ImportOptions(input=results, questions=(shared_data / "seed" / "seedbench1_doc_examples.json",)))
    first = rows.frame.row(0, named=True)
    assert first["question"] == "How many towels are in the image?" and first["A"] == "One" and first["D"] == "Four"
    assert first["answer"] == "A" and first["question_type_id"] == 5 and first["category"] == "Instances Counting"
    assert rows.frame["data_type"].to_list() == ["image", "video"]
    assert rows.frame["prompt"].to_list() == rows.frame["question"].to_list()


def test_bad_lines_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": "1", "prediction": "A"},\n{"question_id": "2", "predicted": "B"},\n')
    out = tmp_path / "out.tsv"
    done = run_cli("import", "--format", "seed-results", "--input", str(bad), "--output", str(out))
    assert done.returncode == 2 and "bad.jsonl" in done.stderr and "line 2" in done.stderr
    assert not out.exists()
    bad.write_text('{"question_id": "1", "prediction": "A"\n')
    with pytest.raises(BadInputError, match="line 1 is not JSON"):
        import_rows(ImportOptions(input=bad))
    good = tmp_path / "good.jsonl"
    good.write_text('{"question_id": "1", "prediction": "A"}\n')
    with pytest.raises(BadInputError, match="must be seedbench or seedbench2"):
        import_rows(ImportOptions(input=good, benchmark="mme"))
