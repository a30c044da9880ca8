"""HallusionBench: its text ids as integer indices, VLMEvalKit's TSV read, and aAcc/fAcc/qAcc worked out by hand."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import polars as pl
import pytest
from PIL import Image

from mmbatch.benchmarks.hallusionbench import HALLUSIONBENCH
from mmbatch.benchmarks.source_ids import with_source_ids
from mmbatch.cli import main
from mmbatch.errors import BadInputError
from mmbatch.tableio import read_table

# (id, answer, prediction). VLMEvalKit's word rule: rows 1, 2, 4, 6, 7 right; row 3 says Yes to a No; row 5 is
# Unknown (neither word), so wrong.
ROWS = [
    ("VD_illusion_1_0_0_0", "Yes", "Yes"),
    ("VD_illusion_1_0_0_1", "No", "No"),
    ("VD_illusion_2_0_1_0", "No", "Yes"),
    ("VD_illusion_2_0_1_1", "Yes", "Yes, it is."),
    ("VD_illusion_1_1_0_0", "Yes", "I am not sure"),
    ("VS_map_1_0_0_0", "No", "no."),
    ("VS_map_2_0_1_0", "Yes", "Yes"),
]
# Figures are (subcategory, set, figure): VD_illusion 0/0 {1,2} all right; 0/1 {3,4} not; 1/0 {5} not;
# VS_map 0/0 {6} right; 0/1 {7} right -> 3 of 5. Question groups are (subcategory, set, question number):
# VD_illusion 0/q0 {1,3} not; 0/q1 {2,4} right; 1/q0 {5} not; VS_map 0/q0 {6,7} right -> 2 of 4.
EXPECTED = {
    ("overall", "Overall"): {"aAcc": 71.4286, "fAcc": 60.0, "qAcc": 50.0},
    ("category", "VD"): {"aAcc": 60.0, "fAcc": 33.3333, "qAcc": 33.3333},
    ("category", "VS"): {"aAcc": 100.0, "fAcc": 100.0, "qAcc": 100.0},
    ("l2-category", "VD_illusion"): {"aAcc": 60.0, "fAcc": 33.3333, "qAcc": 33.3333},
    ("l2-category", "VS_map"): {"aAcc": 100.0, "fAcc": 100.0, "qAcc": 100.0},
}


def _png() -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (10, 200, 10)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def with_integer_ids(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    return with_source_ids(frame, HALLUSIONBENCH, path)


def _frame(*, predictions: bool) -> pl.DataFrame:
    frame = pl.DataFrame({
        "index": [r[0] for r in ROWS],
        "category": [r[0].split("_")[0] for r in ROWS],
        "l2-category": ["_".join(r[0].split("_")[:2]) for r in ROWS],
        "question": [f"Is statement {i} true?" for i in range(len(ROWS))],
        "answer": [r[1] for r in ROWS],
        # Rows after the first refer to its image by id, as VLMEvalKit's TSV does.
        "image": [_png()] + [ROWS[0][0]] * (len(ROWS) - 1),
        "gt_answer_details": ["details"] * len(ROWS),
    })
    return frame.drop("image").with_columns(pl.Series("prediction", [r[2] for r in ROWS])) if predictions else frame


def test_ids_are_packed_digit_by_digit_the_same_in_any_order() -> None:
    ids = pl.DataFrame({"index": ["VS_map_2_0_2_3", "VD_illusion_1_0_0_0", "VD_video_1_30_3_7"]})
    packed = with_integer_ids(ids, Path("t.tsv"))
    # code * 1e8 + visual input * 1e7 + set * 1e4 + figure * 100 + question; VS_map is code 6, VD_video 5.
    assert packed["index"].to_list() == [620000203, 110000000, 510300307]
    assert packed["g_index"].to_list() == [600000000, 100000000, 500300000]
    assert packed["question_id"].to_list() == ids["index"].to_list()
    reversed_ids = with_integer_ids(ids.reverse(), Path("t.tsv"))
    assert reversed_ids["index"].to_list() == packed["index"].reverse().to_list()


@pytest.mark.parametrize(("bad_id", "message"), [
    ("VD_unknown_1_0_0_0", "not a HallusionBench id"),
    ("VD_illusion_1_0_0", "not a HallusionBench id"),
    ("VD_illusion_1_0_x_0", "not a HallusionBench id"),
    ("VD_illusion_1_1000_0_0", "not a HallusionBench id"),
    ("VD_illusion_1_0_0_-1", "not a HallusionBench id"),
    ("VD_illusion_1_0_0_0", "index 'VD_illusion_1_0_0_0' occurs more than once"),
])
def test_bad_ids_are_refused_naming_the_id(bad_id: str, message: str) -> None:
    frame = pl.DataFrame({"index": ["VD_illusion_1_0_0_0", bad_id]})
    with pytest.raises(BadInputError, match=message) as raised:
        with_integer_ids(frame, Path("HallusionBench.tsv"))
    assert raised.value.index == bad_id and raised.value.column == "index"


def test_labels_that_contradict_the_id_are_refused() -> None:
    frame = pl.DataFrame({"index": ["VD_illusion_1_0_0_0"], "l2-category": ["VD_math"]})
    with pytest.raises(BadInputError, match="l2-category 'VD_math' is not the one the id names") as raised:
        with_integer_ids(frame, Path("t.tsv"))
    assert raised.value.column == "l2-category"


def test_prepare_reads_the_tsv_with_its_image_references(tmp_path: Path) -> None:
    source = tmp_path / "HallusionBench.tsv"
    _frame(predictions=False).write_csv(source, separator="\t")
    output = tmp_path / "prepared.parquet"
    assert main(["prepare", "--benchmark", "hallusionbench", "--input", str(source), "--output", str(output)]) == 0
    frame = read_table(output).frame
    assert frame["question_id"].to_list() == [r[0] for r in ROWS]
    assert frame["index"][0] == 110000000 and frame["g_index"].n_unique() == 3
    assert frame["image"][1:].to_list() == ["110000000"] * (len(ROWS) - 1)  # references follow the new index
    assert frame["prompt"][0] == "Is statement 0 true?" and frame["prompt_template"][0] == "mme"


def test_prepare_refuses_an_answer_that_is_not_yes_or_no(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "HallusionBench.tsv"
    _frame(predictions=False).with_columns(pl.when(pl.col("index") == "VS_map_1_0_0_0").then(pl.lit("yes"))
                                           .otherwise(pl.col("answer")).alias("answer")).write_csv(source,
                                                                                                   separator="\t")
    assert main(["prepare", "--benchmark", "hallusionbench", "--input", str(source), "--output",
                 str(tmp_path / "o.parquet")]) == 2
    err = capsys.readouterr().err
    assert "row index=VS_map_1_0_0_0" in err and "column 'answer'" in err and "Yes or No" in err


def test_vlmevalkit_rule_gives_the_hand_computed_metrics(tmp_path: Path) -> None:
    predictions = tmp_path / "model_HallusionBench.tsv"
    _frame(predictions=True).write_csv(predictions, separator="\t")
    imported, extracted, metrics = (tmp_path / n for n in ("p.parquet", "x.parquet", "m.json"))
    assert main(["import", "--format", "vlmevalkit", "--input", str(predictions), "--output", str(imported)]) == 0
    assert main(["extract", "--input", str(imported), "--output", str(extracted), "--no-judge"]) == 0
    assert main(["score", "--input", str(extracted), "--output", str(metrics)]) == 0
    table: dict[tuple[str, str], dict[str, float]] = {}
    for row in json.loads(metrics.read_text()):
        table.setdefault((row["level"], row["group"]), {})[row["metric"]] = round(row["value"], 4)
    for cell, expected in EXPECTED.items():
        assert {name: table[cell][name] for name in expected} == expected, cell
    assert table[("overall", "Overall")]["unmatched"] == 1.0
