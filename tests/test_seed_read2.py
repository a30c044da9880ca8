"""The SEED-Bench-2 reader: the bundled example, the documented record layouts, SEED-Bench-2-Plus, bad records."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from PIL import Image

from mmbatch.benchmarks import get_reader
from mmbatch.benchmarks.base import ReadOptions
from mmbatch.errors import BadInputError
from mmbatch.tableio import read_table
from tests.conftest import EXAMPLES

READER = get_reader("seedbench2")
SEED = EXAMPLES / "seed"


def tiny_png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (10, 200, 10)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_example_through_the_cli(cli, tmp_path: Path) -> None:
    output = tmp_path / "seed2.tsv"
    result = cli("prepare", "--benchmark", "seedbench2", "--input", str(SEED / "seed2_example.json"),
                 "--media-root", str(SEED / "media"), "--output", str(output))
    assert result.returncode == 0, result.stderr
    table = read_table(output)
    frame = table.frame
    assert table.metadata["prepare"]["mode"] == "likelihood"
    assert frame["question_id"].to_list() == ["5_0", "17_0", "19_0", "23_0", "25_0"]
    assert frame["level"].to_list() == ["L1", "L1", "L1", "L2", "L3"]
    assert frame["version"].to_list() == ["v1", "v2", "v2", "v2", "v2"]
    assert (frame["l2-category"] == frame["subpart"]).all()
    assert frame["data_source"][0] == "cc3m" and (frame["benchmark"] == "seedbench2").all()
    assert frame["image_path"][0] == "seed_img_08.png"  # a cc3m id without extension, found with .png
    assert json.loads(frame["image_path"][1]) == ["seed_img_08.png", "seed_img_00.png"]
    assert frame["image_path"][2] is None
    assert json.loads(frame["video_path"][2]) == [f"frames/square_right/{i}.png" for i in range(1, 9)]
    interleaved = frame.row(3, named=True)
    assert interleaved["question"].count("<img>") == len(json.loads(interleaved["image_path"])) == 3
    assert frame["category"].to_list() == ["Instances Counting", "Difference Spotting",
                                           "Global Video Understanding", "In-Context Captioning",
                                           "Text-to-Image Generation"]


def test_documented_records_with_their_media(tmp_path: Path, shared_data: Path) -> None:
    source = shared_data / "seed" / "seedbench2_doc_examples.json"
    records = json.loads(source.read_text())["questions"]
    for record in records:
        ids = record["data_id"] if isinstance(record["data_id"], list) else [record["data_id"] + ".jpg"]
        for data_id in ids:
            (tmp_path / data_id).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / data_id).write_bytes(tiny_png())
    frame = READER.read(source, ReadOptions(media_root=tmp_path))
    assert frame["question_type_id"].to_list() == [5, 17, 19, 23, 25, 26, 27]
    assert frame["category"].to_list()[-3:] == ["Text-to-Image Generation", "Next Image Prediction",
                                                "Text-Image Creation"]
    assert frame["data_type"].to_list() == ["Single Image", "Multiple Images", "Video", "Interleaved Image",
                                            "Image Generation", "Image Generation", "Image & Text Generation"]
    for record, row in zip(records[1:], frame.slice(1).iter_rows(named=True), strict=True):
        if record["level"] == "L3":  # the question's images, then the four option images (generation_rows.py)
            inputs = json.loads(row["image_path"]) if row["image_path"] else []
            assert inputs + json.loads(row["option_image_paths"]) == record["data_id"]
            continue
        cell = row["video_path"] if record["data_type"] == "Video" else row["image_path"]
        assert json.loads(cell) == record["data_id"]  # order kept: <img> placeholders map in order
    assert frame["image_path"][0] == "1454426_2591111986.jpg"


def plus_records() -> list[dict[str, Any]]:
    """Two SEED-Bench-2-Plus style records: upper-case choice keys, no dimension id, a plain list file."""
    base = {"choice_A": "80", "choice_B": "950", "choice_C": "20", "choice_D": "8,950", "data_id": "text_rich/1.png",
            "data_source": "SEED-Bench v2 plus", "data_type": "Single Image", "level": "L1",
            "question": "According to the tree diagram, how many women received a negative mammogram?",
            "question_image_subtype": "tree diagram", "question_image_type": "chart",
            "subpart": "Single-Image & Text Comprehension", "version": "v2+"}
    return [{**base, "answer": "D", "question_id": "0"},
            {**base, "answer": "A", "question_id": "1", "question_image_type": "map"}]


def test_seed2_plus_layout(tmp_path: Path) -> None:
    (tmp_path / "text_rich").mkdir()
    (tmp_path / "text_rich" / "1.png").write_bytes(tiny_png())
    path = tmp_path / "plus.json"
    path.write_text(json.dumps(plus_records()), encoding="utf-8")
    frame = READER.read(path, ReadOptions(media_root=tmp_path))
    assert frame["category"].to_list() == ["chart", "map"]
    assert frame.select("A", "B", "C", "D").row(0) == ("80", "950", "20", "8,950")
    assert frame["answer"].to_list() == ["D", "A"]
    assert frame["question_image_subtype"].to_list() == ["tree diagram"] * 2
    assert "question_type_id" not in frame.columns or frame["question_type_id"].is_null().all()
    assert frame["image_path"].to_list() == ["text_rich/1.png"] * 2


def example_records() -> list[dict[str, Any]]:
    return json.loads((SEED / "seed2_example.json").read_text())["questions"]


@pytest.mark.parametrize(("row", "data_id", "column", "message"), [
    (2, ["frames/square_right/1.png", "frames/square_right/99.png"], "video_path", "'frames/square_right/99.png' "
     "not found"),
    (1, {"left": "seed_img_00.png"}, "image_path", "must be a path or a list of paths"),
    (1, [], "image_path", "must be a path or a list of paths"),
    (3, ["seed_img_00.png", "../seed_example.json"], "image_path", "escapes --media-root"),
], ids=["missing-frame", "object", "empty-list", "escape-in-list"])
def test_bad_data_id_names_row_and_column(tmp_path: Path, row: int, data_id: object, column: str,
                                          message: str) -> None:
    records = example_records()
    records[row]["data_id"] = data_id
    path = tmp_path / "seed2.json"
    path.write_text(json.dumps({"questions": records}), encoding="utf-8")
    with pytest.raises(BadInputError) as error:
        READER.read(path, ReadOptions(media_root=SEED / "media"))
    assert error.value.index == row and error.value.column == column and message in str(error.value)


def test_extra_fields_are_text(tmp_path: Path) -> None:
    records = example_records()[:1]
    records[0]["tags"] = ["a", "b"]
    records[0]["difficulty"] = 3
    path = tmp_path / "seed2.json"
    path.write_text(json.dumps({"questions": records}), encoding="utf-8")
    frame = READER.read(path, ReadOptions(media_root=SEED / "media"))
    assert frame.schema["tags"] == pl.String and frame["tags"][0] == '["a", "b"]'
    assert frame["difficulty"][0] == "3"
