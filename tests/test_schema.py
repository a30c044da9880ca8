"""The stage-file declaration, the generated schemas and `mmbatch validate`."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import polars as pl
import pytest

from mmbatch.schema.columns import STAGES
from mmbatch.schema.export import render_schemas, stage_schema
from mmbatch.schema.validate import detect_stage, validate_frame
from mmbatch.tableio import write_table

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"


def test_checked_in_schemas_match_the_declaration() -> None:
    rendered = render_schemas()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in SCHEMAS.glob("*.json")}
    assert on_disk == rendered, "schemas/ drifted from mmbatch/schema/columns.py: run `make schemas`"


def test_each_stage_extends_the_previous_one() -> None:
    order = ["prepared", "predictions", "extracted", "hits"]
    for earlier, later in itertools.pairwise(order):
        earlier_names = {c.name for c in STAGES[earlier].columns}
        later_names = {c.name for c in STAGES[later].columns}
        assert earlier_names <= later_names, f"{later} drops columns of {earlier}"


def test_contract_columns_are_declared() -> None:
    names = {c.name for c in STAGES["hits"].columns}
    for column in ("index", "g_index", "benchmark", "question", "hint", "answer", "category", "l2-category",
                   "split", "image", "image_path", "video_path", "prompt", "prompt_template", "mode",
                   "question_id", "question_type_id", "data_type", "segment", "prediction", "choice_logprobs",
                   "choice_ntokens", "model", "error", "output_tokens", "latency_ms", "extracted",
                   "extract_method", "judge_model", "judge_raw", "hit"):
        assert column in names
    metric_names = [c.name for c in STAGES["scores"].columns]
    assert metric_names == ["benchmark", "model", "split", "level", "group", "metric", "value", "n", "ci_low",
                            "ci_high"]


def test_schema_marks_required_and_option_columns() -> None:
    schema = stage_schema(STAGES["prepared"])
    assert "index" in schema["required"] and "prompt" in schema["required"]
    assert "^[A-Z]$" in schema["patternProperties"]
    assert schema["properties"]["mode"]["enum"] == ["generate", "likelihood", "generate-image"]
    json.dumps(schema)


def _prepared(**overrides: object) -> pl.DataFrame:
    data = {
        "index": [1, 2, 1_000_001],
        "g_index": [1, 2, 1],
        "benchmark": ["mmbench"] * 3,
        "question": ["What colour?", "How many?", "What colour?"],
        "A": ["red", "1", "blue"],
        "B": ["blue", "2", "red"],
        "answer": ["A", "B", "B"],
        "prompt": ["p1", "p2", "p3"],
        "prompt_template": ["vlmevalkit"] * 3,
        "mode": ["generate"] * 3,
    }
    data.update(overrides)  # type: ignore[arg-type]
    return pl.DataFrame(data)


def test_valid_prepared_frame_has_no_violations() -> None:
    frame, violations = validate_frame(_prepared(), STAGES["prepared"])
    assert violations == []
    assert detect_stage(frame).name == "prepared"


def test_every_violation_is_reported_with_row_indices() -> None:
    bad = _prepared(index=[1, 1, 3], answer=["A", "C", "B"], mode=["generate", "guess", "generate"])
    bad = bad.drop("prompt")
    _, violations = validate_frame(bad, STAGES["prepared"])
    text = "\n".join(str(v) for v in violations)
    assert "column 'prompt': required column is missing" in text
    assert "duplicate index (rows index=1, 1)" in text
    assert "answer is not one of the row's option letters (rows index=1)" in text
    assert "column 'mode': value not one of generate, likelihood, generate-image (rows index=1)" in text


def test_validate_command_reports_type_errors_of_tsv_files(tmp_path: Path, cli) -> None:
    path = tmp_path / "prepared.tsv"
    frame = _prepared().with_columns(pl.col("index").cast(pl.String), pl.col("g_index").cast(pl.String))
    frame = frame.with_columns(pl.Series("g_index", ["1", "two", "x"]))
    write_table(frame, path)
    result = cli("validate", str(path))
    assert result.returncode == 2
    assert "column 'g_index': not a valid int64 value (rows index=2, 1000001)" in result.stderr
    assert "Traceback" not in result.stderr


def test_validate_command_accepts_a_good_file(tmp_path: Path, cli) -> None:
    path = tmp_path / "prepared.parquet"
    write_table(_prepared(), path, {"stage": "prepared"})
    result = cli("validate", str(path))
    assert result.returncode == 0, result.stderr
    assert "valid prepared file, 3 rows, 2 groups" in result.stdout


@pytest.mark.parametrize("stage", ["predictions", "extracted"])
def test_list_columns_need_one_value_per_option(stage: str) -> None:
    frame = _prepared().with_columns(
        pl.lit("m").alias("model"),
        pl.Series("choice_logprobs", [[-1.0, -2.0], [-1.0], None], dtype=pl.List(pl.Float64)),
    )
    if stage == "extracted":
        frame = frame.with_columns(pl.lit("rule").alias("extract_method"))
    _, violations = validate_frame(frame, STAGES[stage])
    assert [str(v) for v in violations] == [
        "column 'choice_logprobs': needs one value per present option (rows index=2)"
    ]
