"""MMStar: VLMEvalKit's TSV through the MMBench reader and rules, scored per category, l2-category and overall
against numbers worked out by hand."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import polars as pl
import pytest
from PIL import Image

from mmbatch.cli import main
from mmbatch.tableio import read_metadata, read_table

# (index, category, l2-category, answer, prediction)
ROWS = [
    (1, "coarse perception", "image scene and topic", "A", "A"),
    (2, "coarse perception", "image style & quality", "B", "The answer is C"),
    (3, "fine-grained perception", "attribute & celebrity recognition", "C", "C. bird"),
    (4, "fine-grained perception", "attribute & celebrity recognition", "D", "I don't know"),
    (5, "math", "numeric commonsense & calculation", "A", "A"),
    (6, "math", "geometry", "B", "B"),
]
# Rows 1, 3, 5 and 6 are right, row 2 is wrong, row 4 matches no option (unmatched, wrong).
EXPECTED = {
    ("overall", "Overall"): 66.6667,
    ("category", "coarse perception"): 50.0,
    ("category", "fine-grained perception"): 50.0,
    ("category", "math"): 100.0,
    ("l2-category", "image scene and topic"): 100.0,
    ("l2-category", "image style & quality"): 0.0,
    ("l2-category", "attribute & celebrity recognition"): 50.0,
    ("l2-category", "numeric commonsense & calculation"): 100.0,
    ("l2-category", "geometry"): 100.0,
}


def _table(tmp_path: Path, name: str, *, predictions: bool) -> Path:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (10, 200, 10)).save(buffer, format="PNG")
    frame = pl.DataFrame({
        "index": [r[0] for r in ROWS],
        "question": [f"Which animal is number {r[0]}?" for r in ROWS],
        "A": "cat", "B": "dog", "C": "bird", "D": "fish",
        "answer": [r[3] for r in ROWS],
        "category": [r[1] for r in ROWS],
        "l2-category": [r[2] for r in ROWS],
        "image": base64.b64encode(buffer.getvalue()).decode("ascii"),
    })
    if predictions:
        frame = frame.drop("image").with_columns(pl.Series("prediction", [r[4] for r in ROWS]))
    path = tmp_path / name
    frame.write_csv(path, separator="\t")
    return path


def test_prepare_reads_the_tsv_as_mmstar_rows_and_refuses_circular_copies(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]
                                                                           ) -> None:
    source, output = _table(tmp_path, "MMStar.tsv", predictions=False), tmp_path / "prepared.parquet"
    assert main(["prepare", "--benchmark", "mmstar", "--input", str(source), "--output", str(output)]) == 0
    frame = read_table(output).frame
    assert set(frame["benchmark"]) == {"mmstar"} and frame["g_index"].to_list() == list(range(1, 7))
    assert frame["prompt"][0].startswith("Question: Which animal is number 1?\nOptions:\nA. cat\n")
    assert read_metadata(output)["prepare"]["benchmark"] == "mmstar"
    assert main(["prepare", "--benchmark", "mmstar", "--input", str(source), "--output", str(tmp_path / "c.tsv"),
                 "--circular"]) == 2
    assert "--circular applies to CircularEval benchmarks" in capsys.readouterr().err


def test_rules_and_scores_give_the_hand_computed_accuracies(tmp_path: Path) -> None:
    extracted, metrics = tmp_path / "extracted.parquet", tmp_path / "metrics.json"
    assert main(["extract", "--input", str(_table(tmp_path, "tiny_MMStar.tsv", predictions=True)), "--output",
                 str(extracted), "--benchmark", "mmstar", "--no-judge"]) == 0
    assert read_table(extracted).frame["extracted"].to_list() == ["A", "C", "C", None, "A", "B"]
    assert main(["score", "--input", str(extracted), "--output", str(metrics)]) == 0
    rows = json.loads(metrics.read_text())
    accuracies = {(row["level"], row["group"]): round(row["value"], 4) for row in rows if row["metric"] == "acc"}
    assert accuracies == EXPECTED
    counts = {row["metric"]: row["value"] for row in rows if row["metric"] in ("unmatched", "failed")}
    assert counts == {"unmatched": 1, "failed": 0}


def test_a_vlmevalkit_mmstar_file_is_recognised_by_its_name(tmp_path: Path) -> None:
    output = tmp_path / "imported.parquet"
    assert main(["import", "--format", "vlmevalkit", "--input",
                 str(_table(tmp_path, "llava_MMStar.tsv", predictions=True)), "--output", str(output)]) == 0
    frame = read_table(output).frame
    assert set(frame["benchmark"]) == {"mmstar"} and frame["g_index"].to_list() == list(range(1, 7))
