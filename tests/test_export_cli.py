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
