"""`score --subset answered`: docs/scoring.md's LLaVA-1.5-13B SEED-1 image figure (68.21 %) from the command line, with
the coverage printed and recorded; without it, a partly answered file is refused with a message that says what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmbatch.cli import main


@pytest.fixture(scope="module")
def extracted(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """LLaVA-1.5-13B's SEED-1 answers (all 19,242 questions) with the ground truth the GPT-4V file carries."""
    out = tmp_path_factory.mktemp("subset")
    answers = next((shared_data / "llava15_13b" / "seed_bench").glob("*_upload.jsonl"))
    truth = shared_data / "seed" / "seedbench1_GPT-4V_results.jsonl"
    assert main(["import", "--format", "seed-results", "--input", str(answers), "--questions", str(truth),
                 "--output", str(out / "predictions.parquet")]) == 0
    assert main(["extract", "--input", str(out / "predictions.parquet"), "--output", str(out / "extracted.parquet"),
                 "--no-judge"]) == 0
    return out / "extracted.parquet"


def test_partly_answered_file_is_refused_with_the_way_out(extracted: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--input", str(extracted), "--output", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert "1252 of 19242 rows of seedbench have no answer" in err and "--subset answered" in err
    assert "None" not in err


def test_subset_answered_scores_the_image_questions_as_published(extracted: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    metrics = tmp_path / "m.json"
    assert main(["score", "--input", str(extracted), "--output", str(metrics), "--subset", "answered"]) == 0
    captured = capsys.readouterr()
    assert "scored 17990 of 19242 rows (93.49 %); 1252 rows without an answer left out (video 1252)" in captured.err
    assert "seedbench · llava-v1.5-13b" in [line.rstrip() for line in captured.out.splitlines()]  # never wrapped
    image = next(row for row in json.loads(metrics.read_text()) if (row["level"], row["group"]) == ("data_type",
                                                                                                     "image"))
    assert round(image["value"], 2) == 68.21
    recorded = json.loads(metrics.with_name("m.json.meta.json").read_text())["score"]
    assert recorded["subset"] == "answered"
    assert recorded["coverage"] == {"rows": 19242, "scored": 17990, "left_out": 1252,
                                    "left_out_by_data_type": {"video": 1252}}
