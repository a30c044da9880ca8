"""`import --format mme-eval-tool` and `export --format mme-eval-tool` on the official tool's real folders."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mmbatch.errors import BadInputError
from mmbatch.interop.mme_eval_tool import SUBTASK_PART, export_rows, import_rows
from mmbatch.interop.rows import ImportOptions
from mmbatch.tableio import read_table
from tests.conftest import run_cli

LAVIN_SUBTASK_SCORES = {
    "existence": 185.00, "count": 88.33, "position": 63.33, "color": 75.00, "posters": 79.59, "celebrity": 47.35,
    "scene": 136.75, "landmark": 93.50, "artwork": 87.25, "OCR": 107.50, "commonsense_reasoning": 87.14,
    "numerical_calculation": 65.00, "text_translation": 47.50, "code_reasoning": 50.00,
}


def official_label(prediction: str) -> str:
    """The official calculation.py's parse_pred_ans, verbatim in behaviour (oracle for these tests)."""
    prediction = prediction.lower()
    if prediction in ("yes", "no"):
        return prediction
    prefix = prediction[:4]
    return "yes" if "yes" in prefix else "no" if "no" in prefix else "other"


def official_scores(rows: pl.DataFrame) -> dict[str, float]:
    """acc + acc+ per subtask from imported rows, grouping by g_index (the tool pairs lines by position)."""
    hits = rows.with_columns(
        (pl.col("prediction").map_elements(official_label, return_dtype=pl.String)
         == pl.col("answer").str.to_lowercase()).alias("hit"))
    scores = {}
    for subtask, part in hits.group_by("category"):
        acc = part["hit"].mean() * 100
        acc_plus = part.group_by("g_index").agg(pl.col("hit").all())["hit"].mean() * 100
        scores[str(subtask[0])] = acc + acc_plus
    return scores


@pytest.fixture(scope="module")
def lavin(shared_data: Path) -> pl.DataFrame:
    return import_rows(ImportOptions(input=shared_data / "mme" / "LaVIN")).frame


def test_lavin_rows_groups_and_parts(lavin: pl.DataFrame) -> None:
    assert lavin.height == 2374
    assert lavin["index"].to_list() == list(range(2374))
    assert lavin.group_by("g_index").len()["len"].unique().to_list() == [2]
    assert set(lavin["category"]) == set(SUBTASK_PART)
    assert lavin.filter(pl.col("category") == "OCR")["l2-category"].unique().to_list() == ["perception"]
    assert lavin.filter(pl.col("category") == "code_reasoning")["l2-category"].unique().to_list() == ["cognition"]
    assert set(lavin["prompt_template"]) == {"imported"} and set(lavin["mode"]) == {"generate"}
    assert (lavin["prompt"] == lavin["question"]).all()
    assert set(lavin["model"]) == {"LaVIN"} and lavin["error"].is_null().all()


def test_predictions_are_kept_exactly_as_the_tool_reads_them(lavin: pl.DataFrame, shared_data: Path) -> None:
    raw = []
    for subtask in SUBTASK_PART:
        with (shared_data / "mme" / "LaVIN" / f"{subtask}.txt").open(encoding="utf-8") as handle:
            raw += [line.split("\t")[3] for line in handle.readlines()]
    # The tool sees the prediction with its newline; the imported one is that text minus the terminator...
    assert lavin["prediction"].to_list() == [p.removesuffix("\n") for p in raw]
    # ...which can never change the tool's verdict.
    assert [official_label(p) for p in raw] == [official_label(p) for p in lavin["prediction"]]


def test_official_numbers_from_imported_rows(lavin: pl.DataFrame) -> None:
    scores = official_scores(lavin)
    for subtask, expected in LAVIN_SUBTASK_SCORES.items():
        assert round(scores[subtask], 2) == expected, subtask
    perception = sum(v for k, v in scores.items() if SUBTASK_PART[k] == "perception")
    cognition = sum(v for k, v in scores.items() if SUBTASK_PART[k] == "cognition")
    assert round(perception, 4) == 963.6114 and round(cognition, 4) == 249.6429


def test_spaces_kept_crlf_and_blank_lines(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "count.txt").write_bytes(b"a.jpg\tIs there one? Please answer yes or no.\tYes\t  Yes \r\n"
                                       b"a.jpg\tAre there two? Please answer yes or no.\tNo\tknow\r\n\r\n")
    rows = import_rows(ImportOptions(input=folder, model="m")).frame
    assert rows["prediction"].to_list() == ["  Yes ", "know"]
    assert rows["g_index"].to_list() == [0, 0] and rows["image_name"].to_list() == ["a.jpg", "a.jpg"]


def test_bad_folders_are_named(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "count.txt").write_text("a.jpg\tq\tYes\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"count\.txt: line 1 has 3 tab-separated fields"):
        import_rows(ImportOptions(input=folder))
    (folder / "count.txt").write_text("a.jpg\tq\tYes\tyes\n", encoding="utf-8")
    (folder / "notes.txt").write_text("hello\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"'notes\.txt' is not an MME subtask"):
        import_rows(ImportOptions(input=folder))
    with pytest.raises(BadInputError, match="not a folder"):
        import_rows(ImportOptions(input=tmp_path / "missing"))


def test_cli_round_trip_is_byte_identical(shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "mme" / "LaVIN"
    imported = tmp_path / "lavin.tsv"
    done = run_cli("import", "--format", "mme-eval-tool", "--input", str(source), "--output", str(imported))
    assert done.returncode == 0, done.stderr
    meta = read_table(imported).metadata
    assert meta["stage"] == "predictions" and meta["import"]["format"] == "mme-eval-tool"
    assert meta["import"]["source"] == str(source)
    out = tmp_path / "out"
    done = run_cli("export", "--format", "mme-eval-tool", "--input", str(imported), "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in source.iterdir())
    for path in source.iterdir():
        assert (out / path.name).read_bytes() == path.read_bytes(), path.name
    assert run_cli("validate", str(imported)).returncode == 0


def test_round_trip_of_llava_results_is_byte_identical(shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "llava15_13b" / "mme" / "mme_results_txt"
    export_rows(import_rows(ImportOptions(input=source)).frame, tmp_path / "out")
    for path in source.iterdir():
        assert (tmp_path / "out" / path.name).read_bytes() == path.read_bytes(), path.name


def test_cli_bad_input_exits_2_without_output(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "color.txt").write_text("a.jpg\tq\tYes\ty\tes\n", encoding="utf-8")
    out = tmp_path / "out.parquet"
    done = run_cli("import", "--format", "mme-eval-tool", "--input", str(folder), "--output", str(out))
    assert done.returncode == 2
    assert "color.txt" in done.stderr and "line 1" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()
    done = run_cli("import", "--format", "mme-eval-tool", "--input", str(folder), "--output", str(out),
                   "--questions", str(folder))
    assert done.returncode == 2 and "--questions applies to llava-jsonl and seed-results" in done.stderr


def test_export_one_line_per_question(tmp_path: Path) -> None:
    frame = pl.DataFrame({
        "index": [1, 0], "g_index": [0, 0], "category": ["count", "count"], "image_name": ["a.jpg", "a.jpg"],
        "question": ["q2", "q1"], "answer": ["No", "Yes"], "prediction": ["no\nreally", None],
    })
    result = export_rows(frame, tmp_path / "out")
    assert (tmp_path / "out" / "count.txt").read_text() == "a.jpg\tq1\tYes\t\na.jpg\tq2\tNo\tno really\n"
    assert result.rows == 2 and "line breaks" in result.notes[0]
    with pytest.raises(BadInputError, match="not an MME subtask"):
        export_rows(frame.with_columns(pl.lit("counting").alias("category")), tmp_path / "bad")


def test_prepare_import_and_llava_ground_truth_read_tool_files_with_one_reader(tmp_path: Path) -> None:
    """A template with a byte order mark, CRLF ends and a double-spaced question: prepare's questions, the ground
    truth LLaVA answers are joined with, and the lines import reads agree field for field."""
    from mmbatch.benchmarks.mme.release_folder import read_eval_tool_templates
    from mmbatch.benchmarks.mme.tool_files import read_ground_truth, read_tool_lines

    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "color.txt").write_bytes(
        "\ufeffa.jpg\tIs it red?  Please answer yes or no.\tYes\r\na.jpg\tIs it blue? Please answer yes or no.\tNo\r\n"
        .encode())
    questions = read_eval_tool_templates(folder, media_root=tmp_path)
    truth = read_ground_truth(folder)
    lines = read_tool_lines(folder / "color.txt", fields=(3,))
    assert [(q.image_name, q.question, q.answer, q.line) for q in questions] == [
        (line.fields[0], line.fields[1], line.fields[2], line.number) for line in lines]
    assert truth == {("color", "a.jpg", "Is it red?  Please answer yes or no."): "Yes",
                     ("color", "a.jpg", "Is it blue? Please answer yes or no."): "No"}
