"""`mmbatch export`: usage errors exit 2 with one line naming the file, and leave nothing behind."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mmbatch.tableio import write_table
from tests.conftest import run_cli


@pytest.fixture
def predictions(tmp_path: Path) -> Path:
    return write_table(pl.DataFrame({
        "index": [0, 1], "g_index": [0, 0], "benchmark": ["mme", "mme"], "question": ["q1", "q2"],
        "answer": ["Yes", "No"], "category": ["count", "count"], "image_name": ["a.jpg", "a.jpg"],
        "prompt": ["q1", "q2"], "prompt_template": ["mme", "mme"], "mode": ["generate", "generate"],
        "prediction": ["Yes", "No"], "model": ["m", "m"],
    }), tmp_path / "mme.predictions.tsv")


def test_wrong_output_kind_for_each_format(predictions: Path, tmp_path: Path) -> None:
    done = run_cli("export", "--format", "mmbench-submission", "--input", str(predictions),
                   "--output", str(tmp_path / "sub.csv"))
    assert done.returncode == 2 and "sub.csv" in done.stderr and ".xlsx" in done.stderr
    (tmp_path / "file.txt").write_text("x")
    done = run_cli("export", "--format", "mme-eval-tool", "--input", str(predictions),
                   "--output", str(tmp_path / "file.txt"))
    assert done.returncode == 2 and "folder" in done.stderr
    done = run_cli("export", "--format", "seed-upload", "--input", str(predictions), "--output", str(tmp_path))
    assert done.returncode == 2 and "one .jsonl file" in done.stderr


def test_missing_columns_name_the_input(predictions: Path, tmp_path: Path) -> None:
    out = tmp_path / "upload.jsonl"
    done = run_cli("export", "--format", "seed-upload", "--input", str(predictions), "--output", str(out))
    assert done.returncode == 2 and "mme.predictions.tsv" in done.stderr and "question_id" in done.stderr
    assert "Traceback" not in done.stderr and not out.exists()
    done = run_cli("export", "--format", "mmbench-submission", "--input", str(predictions),
                   "--output", str(tmp_path / "s.xlsx"))
    assert done.returncode == 2 and "option columns" in done.stderr and not (tmp_path / "s.xlsx").exists()


def test_mme_folder_export_from_a_tsv(predictions: Path, tmp_path: Path) -> None:
    out = tmp_path / "Your_Results"
    done = run_cli("export", "--format", "mme-eval-tool", "--input", str(predictions), "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert (out / "count.txt").read_text() == "a.jpg\tq1\tYes\tYes\na.jpg\tq2\tNo\tNo\n"


def test_exports_of_an_extracted_file_hand_over_the_answers_without_reasoning_traces(tmp_path: Path) -> None:
    """A reasoning model's predictions, extracted: the MME tool (which reads the first four characters) and the
    MMBench server get what mmbatch matched, not the trace; a predictions file is still written as generated."""
    from mmbatch.cli import main
    from mmbatch.tableio import read_table

    predictions = write_table(pl.DataFrame({
        "index": [0, 1, 2], "g_index": [0, 0, 2], "benchmark": ["mme"] * 3, "question": ["q1", "q2", "q3"],
        "answer": ["Yes", "No", "Yes"], "category": ["count"] * 3, "image_name": ["a.jpg", "a.jpg", "b.jpg"],
        "prompt": ["q1", "q2", "q3"], "prompt_template": ["mme"] * 3, "mode": ["generate"] * 3,
        "prediction": ["<think>No, wait: it says yes.</think> Yes", "No", "<think>hmm</think>No"], "model": ["m"] * 3,
    }), tmp_path / "mme.predictions.tsv")
    extracted = tmp_path / "mme.extracted.parquet"
    assert main(["extract", "--input", str(predictions), "--output", str(extracted), "--no-judge"]) == 0
    out = tmp_path / "Your_Results"
    done = run_cli("export", "--format", "mme-eval-tool", "--input", str(extracted), "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert (out / "count.txt").read_text() == "a.jpg\tq1\tYes\tYes\na.jpg\tq2\tNo\tNo\nb.jpg\tq3\tYes\tNo\n"
    assert "2 prediction(s) written without their reasoning traces" in done.stderr + done.stdout
    raw = tmp_path / "raw"
    assert run_cli("export", "--format", "mme-eval-tool", "--input", str(predictions), "--output",
                   str(raw)).returncode == 0
    assert (raw / "count.txt").read_text().splitlines()[0].endswith("\t<think>No, wait: it says yes.</think> Yes")

    mcq = write_table(pl.DataFrame({
        "index": [0], "g_index": [0], "benchmark": ["mmbench"], "question": ["Which?"], "A": ["x"], "B": ["y"],
        "answer": ["B"], "prompt": ["Which?"], "prompt_template": ["vlmevalkit"], "mode": ["generate"],
        "prediction": ["<think>A looks right... no.</think>B"], "model": ["m"], "split": ["dev"],
    }), tmp_path / "mmbench.predictions.tsv")
    mcq_extracted, sheet = tmp_path / "mmbench.extracted.parquet", tmp_path / "submission.xlsx"
    assert main(["extract", "--input", str(mcq), "--output", str(mcq_extracted), "--no-judge"]) == 0
    assert run_cli("export", "--format", "mmbench-submission", "--input", str(mcq_extracted), "--output",
                   str(sheet)).returncode == 0
    assert read_table(sheet).frame["prediction"].to_list() == ["B"]
