"""The SEED-Bench-1 reader: the bundled example, the documented record layouts, duplicates and bad records."""

from __future__ import annotations

import io
import json
import shutil
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

READER = get_reader("seedbench")
SEED = EXAMPLES / "seed"


def tiny_png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (200, 10, 10)).save(buffer, format="PNG")
    return buffer.getvalue()


def image_record(**changes: Any) -> dict[str, Any]:
    """One SEED-Bench-1 image question whose image ``pic`` (``pic.png`` on disk) exists in the test's root."""
    record = {"answer": "B", "choice_a": "one", "choice_b": "two", "choice_c": "three", "choice_d": "four",
              "data_id": "pic", "data_type": "image", "question": "How many?", "question_id": "1",
              "question_type_id": 5}
    return {**record, **changes}


def write_seed(tmp_path: Path, records: list[dict[str, Any]], question_type: dict[str, int] | None = None) -> Path:
    """A SEED JSON in ``tmp_path`` (media root = ``tmp_path``) with ``pic.png`` beside it."""
    (tmp_path / "pic.png").write_bytes(tiny_png())
    data: dict[str, Any] = {"questions": records}
    if question_type is not None:
        data["question_type"] = question_type
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_example_through_the_cli(cli, tmp_path: Path) -> None:
    output = tmp_path / "seed.parquet"
    result = cli("prepare", "--benchmark", "seedbench", "--input", str(SEED / "seed_example.json"),
                 "--media-root", str(SEED / "media"), "--output", str(output))
    assert result.returncode == 0, result.stderr
    assert "23 rows in 23 groups" in result.stdout
    table = read_table(output)
    frame = table.frame
    assert table.metadata["prepare"]["template"] == "seed-likelihood"
    assert table.metadata["prepare"]["mode"] == "likelihood"
    assert frame["index"].to_list() == frame["g_index"].to_list() == list(range(23))
    assert frame["prompt"][0] == f"Question: {frame['question'][0]}\nAnswer:"
    images = frame.filter(pl.col("data_type") == "image")
    assert images.height == 20 and (images["l2-category"] == "image").all()
    assert images["image_path"][0] == "seed_img_00.png"  # the id has no extension, as in the real file
    assert images["video_path"].is_null().all() and images["segment"].is_null().all()
    videos = frame.filter(pl.col("data_type") == "video").sort("question_type_id")
    assert videos["category"].to_list() == ["Action Recognition", "Action Prediction", "Procedure Understanding"]
    assert videos["video_path"].to_list() == ["square_right.mp4", "square_right_down.mp4",
                                              "square_right_down_left.mp4"]
    assert videos["segment"].to_list() == [None, [0.0, 3.0], [0.0, 48.0]]
    assert videos["question_id"].to_list() == ["v100", "v101", "v102"]
    assert frame.schema["question_type_id"] == pl.Int64 and frame.schema["question_id"] == pl.String


def test_example_tsv_round_trip_keeps_segments(cli, tmp_path: Path) -> None:
    output = tmp_path / "seed.tsv"
    result = cli("prepare", "--benchmark", "seedbench", "--input", str(SEED / "seed_example.json"),
                 "--media-root", str(SEED / "media"), "--output", str(output))
    assert result.returncode == 0, result.stderr
    from_tsv = read_table(output).frame
    direct = READER.read(SEED / "seed_example.json", ReadOptions(media_root=SEED / "media"))
    assert from_tsv.select(direct.columns).equals(direct)


def test_example_answers_are_right() -> None:
    frame = READER.read(SEED / "seed_example.json", ReadOptions(media_root=SEED / "media"))
    chosen = {row["question"] + " " + row["image_path"]: row[row["answer"]]
              for row in frame.filter(pl.col("data_type") == "image").iter_rows(named=True)}
    assert chosen["How many squares are in the image? seed_img_10.png"] == "Three"
    assert chosen["What word is written in the image? seed_img_17.png"] == "SEED"
    assert chosen["Where is the red circle? seed_img_05.png"] == "in the top right"
    prediction = frame.filter(pl.col("question_type_id") == 11).row(0, named=True)
    assert prediction[prediction["answer"]] == "moving the square down"


def test_documented_records_with_their_media(tmp_path: Path, shared_data: Path) -> None:
    source = shared_data / "seed" / "seedbench1_doc_examples.json"
    for record in json.loads(source.read_text())["questions"]:
        file = tmp_path / (record["data_id"] + (".jpg" if record["data_type"] == "image" else ""))
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(tiny_png() if record["data_type"] == "image" else b"video bytes are not decoded here")
    frame = READER.read(source, ReadOptions(media_root=tmp_path))
    assert frame["question_id"].to_list() == ["101669", "v1738", "v1962", "v4397"]
    assert frame["image_path"].to_list()[0] == "1454426_2591111986.jpg"
    assert frame["video_path"].to_list()[1:] == ["94328.webm", "P03/P03_24.MP4", "P06/cam01/P06_cereals.avi"]
    assert frame["segment"].to_list() == [None, None, [648.0, 658.0], [18.0, 166.0]]
    assert frame["category"].to_list() == ["Instances Counting", "Action Recognition", "Action Prediction",
                                           "Procedure Understanding"]


def test_duplicate_question_id_keeps_both_rows_with_unique_index(tmp_path: Path) -> None:
    path = write_seed(tmp_path, [image_record(question_id="49914"), image_record(question_id="49914")])
    frame = READER.read(path, ReadOptions(media_root=tmp_path))
    assert frame["index"].to_list() == [0, 1]
    assert frame["question_id"].to_list() == ["49914", "49914"]


def test_dimension_names_come_from_the_file(tmp_path: Path) -> None:
    # The 2023 DATASET.md numbered Instance Location 3 and Instance Attributes 4: the file's own table wins.
    path = write_seed(tmp_path, [image_record(question_type_id=3)], {"Instance Location": 3,
                                                                     "Instance Attributes": 4})
    assert READER.read(path, ReadOptions(media_root=tmp_path))["category"].to_list() == ["Instance Location"]


def test_built_in_names_without_a_question_type_table(tmp_path: Path) -> None:
    path = write_seed(tmp_path, [image_record(question_type_id=3)])
    assert READER.read(path, ReadOptions(media_root=tmp_path))["category"].to_list() == ["Instance Attributes"]


def test_answer_with_a_stray_space_and_numeric_id(tmp_path: Path) -> None:
    path = write_seed(tmp_path, [image_record(answer=" C ", question_id=77)])
    frame = READER.read(path, ReadOptions(media_root=tmp_path))
    assert frame["answer"].to_list() == ["C"] and frame["question_id"].to_list() == ["77"]


def test_media_root_defaults_to_the_json_folder(tmp_path: Path) -> None:
    path = write_seed(tmp_path, [image_record()])
    assert READER.read(path, ReadOptions())["image_path"].to_list() == ["pic.png"]


def test_limit_reads_the_first_questions(tmp_path: Path) -> None:
    path = write_seed(tmp_path, [image_record(question_id=str(i)) for i in range(5)])
    assert READER.read(path, ReadOptions(limit=2))["question_id"].to_list() == ["0", "1"]


@pytest.mark.parametrize(("change", "column", "message"), [
    ({"answer": "E"}, "answer", "is not one of the choices"),
    ({"choice_d": None, "answer": "D"}, "answer", "is not one of the choices (A, B, C)"),
    ({"question_type_id": None}, "question_type_id", "missing 'question_type_id'"),
    ({"question_type_id": 42}, "question_type_id", "dimension 42 is not in the file's question_type table"),
    ({"question_type_id": "five"}, "question_type_id", "not an integer"),
    ({"question": ""}, "question", "missing or empty 'question'"),
    ({"data_type": "audio"}, "data_type", "must be 'image' or 'video'"),
    ({"data_type": "video", "segment": [1.0]}, "segment", "expected [start, end]"),
    ({"data_id": None}, "image_path", "missing or empty 'data_id'"),
    ({"data_id": "pi\x00c.png"}, "image_path", "holds a NUL byte"),  # campaign replay: a NUL byte in a path
], ids=["answer", "answer-missing-option", "no-dimension", "unknown-dimension", "bad-dimension", "question",
        "data-type", "segment", "data-id", "nul-byte"])
def test_bad_record_names_row_and_column(tmp_path: Path, change: dict[str, Any], column: str,
                                         message: str) -> None:
    (tmp_path / "clip.mp4").write_bytes(b"not decoded at prepare time")
    record = image_record(**change)
    if record["data_type"] == "video":
        record["data_id"] = "clip.mp4"
    path = write_seed(tmp_path, [image_record(), record], {"Instances Counting": 5, "Action Prediction": 11})
    with pytest.raises(BadInputError) as error:
        READER.read(path, ReadOptions(media_root=tmp_path))
    assert error.value.index == 1 and error.value.column == column
    assert message in str(error.value) and str(path) in str(error.value)


def test_bad_record_through_the_cli_leaves_no_output(cli, tmp_path: Path) -> None:
    path = write_seed(tmp_path, [image_record(), image_record(answer="F")])
    output = tmp_path / "out" / "prepared.parquet"
    result = cli("prepare", "--benchmark", "seedbench", "--input", str(path), "--media-root", str(tmp_path),
                 "--output", str(output))
    assert result.returncode == 2
    assert "row index=1" in result.stderr and "column 'answer'" in result.stderr
    assert "Traceback" not in result.stderr and not output.exists()


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "not valid JSON (line 1"),
    ('{"questions": []}', "non-empty list of questions"),
    ('{"questions": [1, 2]}', "must be a JSON object"),
    ('{"questions": [], "question_type": [1]}', "must map dimension names to ids"),
    # Campaign replays: 1e400 became the id "inf" (or an OverflowError for a dimension, an infer abort for a
    # segment); an array nested 100,000 deep raised RecursionError, a traceback.
    ('{"questions": [{"question_id": 1e400}]}', "the number 1e400 is out of range"),
    ('{"questions": [{"question_type_id": -1e400}]}', "the number -1e400 is out of range"),
    ('{"questions": [{"segment": [0, NaN]}]}', "NaN is not a number"),
    ('{"questions": [{"extra": ' + "[" * 100_000 + "]" * 100_000 + "}]}", "nested too deeply"),
])
def test_bad_json_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "seed.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadInputError, match=message.replace("(", r"\(").replace("[", r"\[")):
        READER.read(path, ReadOptions(media_root=tmp_path))


def test_media_root_that_is_not_a_folder(tmp_path: Path) -> None:
    path = write_seed(tmp_path, [image_record()])
    with pytest.raises(BadInputError, match="is not a folder"):
        READER.read(path, ReadOptions(media_root=tmp_path / "missing"))


def test_example_copy_with_jpg_and_exact_ids(tmp_path: Path) -> None:
    """An id with an extension is used as it is; an id without one finds ``.jpg`` before ``.png``."""
    shutil.copy(SEED / "media" / "seed_img_00.png", tmp_path / "pic.jpg")
    path = write_seed(tmp_path, [image_record(), image_record(data_id="pic.png")])
    assert READER.read(path, ReadOptions())["image_path"].to_list() == ["pic.jpg", "pic.png"]


def test_circular_is_refused_and_no_circular_is_a_no_op(cli, tmp_path: Path) -> None:
    output = tmp_path / "seed.parquet"
    result = cli("prepare", "--benchmark", "seedbench", "--input", str(SEED / "seed_example.json"),
                 "--media-root", str(SEED / "media"), "--output", str(output), "--circular")
    assert result.returncode == 2 and "--circular" in result.stderr and not output.exists()
    assert READER.read(SEED / "seed_example.json", ReadOptions(circular=False, media_root=SEED / "media")).height == 23
    with pytest.raises(BadInputError, match="--circular"):
        get_reader("seedbench2").read(SEED / "seed2_example.json", ReadOptions(circular=True))
