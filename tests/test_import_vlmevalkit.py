"""`import --format vlmevalkit` and `export --format mmbench-submission` on LLaVA-1.5-13B's real MMBench upload."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mmbatch.errors import BadInputError
from mmbatch.interop.mmbench_submission import submission_frame
from mmbatch.interop.rows import ImportOptions
from mmbatch.interop.vlmevalkit import import_rows
from mmbatch.tableio import write_table
from tests.conftest import run_cli

UPLOAD = Path("llava15_13b") / "mmbench" / "mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx"


@pytest.fixture(scope="module")
def upload(shared_data: Path) -> Path:
    return shared_data / UPLOAD


def test_mmbench_xlsx_rows_and_circular_groups(upload: Path) -> None:
    rows = import_rows(ImportOptions(input=upload)).frame
    assert rows.height == 4377 and set(rows["benchmark"]) == {"mmbench"}
    sizes = rows.group_by("g_index").len()["len"].value_counts(name="groups").sort("len")
    assert sizes.rows() == [(2, 89), (3, 149), (4, 938)]
    assert (rows["g_index"] == rows["index"] % 1_000_000).all()
    assert set(rows["model"]) == {"llava-v1.5-13b"} and (rows["prompt"] == rows["question"]).all()
    assert rows.columns[:4] == ["index", "g_index", "benchmark", "question"]


def test_export_reproduces_the_upload_and_reimports_the_same_rows(upload: Path, tmp_path: Path) -> None:
    imported = tmp_path / "imported.parquet"
    assert run_cli("import", "--format", "vlmevalkit", "--input", str(upload), "--output", str(imported),
                   "--model", "llava-v1.5-13b").returncode == 0
    submission = tmp_path / "submission.xlsx"
    done = run_cli("export", "--format", "mmbench-submission", "--input", str(imported), "--output", str(submission))
    assert done.returncode == 0, done.stderr
    original = pl.read_excel(upload, infer_schema_length=0)
    written = pl.read_excel(submission, infer_schema_length=0)
    assert written.columns == ["index", "question", "A", "B", "C", "D", "prediction", "answer", "split"]
    assert written.equals(original)
    again = import_rows(ImportOptions(input=submission, model="llava-v1.5-13b")).frame
    assert again.equals(pl.read_parquet(imported))


def test_mme_table_pairs_questions_by_image(tmp_path: Path) -> None:
    table = tmp_path / "MME_model.tsv"
    write_table(pl.DataFrame({
        "index": ["0", "1", "2", "3"], "category": ["OCR", "OCR", "artwork", "artwork"],
        "image_path": ["a.jpg", "a.jpg", "a.jpg", "a.jpg"], "question": ["q1", "q2", "q3", "q4"],
        "answer": ["Yes", "No", "Yes", "No"], "prediction": ["Yes", "No", "No", "No"],
    }), table)
    rows = import_rows(ImportOptions(input=table)).frame
    assert set(rows["benchmark"]) == {"mme"}
    assert rows["g_index"].to_list() == [0, 0, 2, 2]
    assert rows["l2-category"].to_list() == ["perception"] * 4
    unpaired = write_table(pl.DataFrame({"index": ["0"], "question": ["q"], "answer": ["Yes"], "prediction": ["y"]}),
                           tmp_path / "unpaired.tsv")
    with pytest.raises(BadInputError, match="image_path"):
        import_rows(ImportOptions(input=unpaired))


def test_missing_prediction_column_exits_2(upload: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.tsv"
    write_table(pl.read_excel(upload, infer_schema_length=0).drop("prediction"), bare)
    done = run_cli("import", "--format", "vlmevalkit", "--input", str(bare), "--output", str(tmp_path / "o.tsv"))
    assert done.returncode == 2 and "prediction" in done.stderr and "bare.tsv" in done.stderr
    assert not (tmp_path / "o.tsv").exists()


def test_submission_from_likelihood_rows_uses_extracted_letters() -> None:
    frame = pl.DataFrame({"index": [1, 2], "question": ["q", "q"], "A": ["x", "x"], "B": ["y", "y"],
                          "prediction": [None, "B"], "mode": ["likelihood", "generate"], "extracted": ["A", "B"],
                          "split": ["test", "test"], "answer": [None, None]})
    assert submission_frame(frame)[0]["prediction"].to_list() == ["A", "B"]
    with pytest.raises(BadInputError, match="export the file written by `mmbatch extract`"):
        submission_frame(frame.drop("extracted"))
    with pytest.raises(BadInputError, match="option columns"):
        submission_frame(frame.drop("A", "B"))
