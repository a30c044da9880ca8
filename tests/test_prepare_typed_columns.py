"""Typed Parquet columns in ``prepare``: images as bytes (how Hugging Face datasets store them), booleans, lists.

Campaign replay: a Binary ``image`` column, a datasets ``Image`` struct or a list of images crashed prepare with a
polars ``SchemaError``; a list where the question text belongs crashed with ``InvalidOperationError``.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import polars as pl
import pytest
from PIL import Image

from mmbatch.cli import main
from mmbatch.tableio import read_table


def png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (10, 200, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def mcq(**columns: object) -> pl.DataFrame:
    base = {"index": [1, 2], "question": ["What is it?", "And this?"], "A": ["cat", "dog"], "B": ["car", "cup"],
            "answer": ["A", "B"]}
    return pl.DataFrame({**base, **columns})


def prepare_then_show(tmp_path: Path, frame: pl.DataFrame) -> list[str]:
    """Prepare ``frame`` (as Parquet) and run the echo backend's ``media`` model on it: what each row's model saw."""
    source = tmp_path / "source.parquet"
    frame.write_parquet(source)
    prepared = tmp_path / "prepared.tsv"
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(source), "--output", str(prepared)]) == 0
    output = tmp_path / "preds.parquet"
    assert main(["infer", "--input", str(prepared), "--output", str(output), "--backend", "echo", "--model",
                 "media"]) == 0
    return read_table(output).frame.sort("index")["prediction"].to_list()


@pytest.mark.parametrize("images", [
    pl.Series([png(8, 6), png(9, 5)], dtype=pl.Binary),
    pl.Series([{"bytes": png(8, 6), "path": "a.png"}, {"bytes": png(9, 5), "path": None}]),
], ids=["binary", "datasets-image-struct"])
def test_an_image_column_of_bytes_is_accepted(tmp_path: Path, images: pl.Series) -> None:
    assert prepare_then_show(tmp_path, mcq(image=images)) == ["1 image 8x6", "1 image 9x5"]


def test_a_list_of_images_per_row_is_accepted(tmp_path: Path) -> None:
    images = pl.Series([[png(8, 6), png(4, 4)], [png(9, 5)]], dtype=pl.List(pl.Binary))
    assert prepare_then_show(tmp_path, mcq(image=images)) == ["2 images 8x6 4x4", "1 image 9x5"]


def test_boolean_and_list_columns_are_carried(tmp_path: Path) -> None:
    text = base64.b64encode(png(8, 6)).decode()
    frame = mcq(image=[text, text], A=[True, False], flag=[True, None], tags=[["a"], ["b", "c"]])
    source = tmp_path / "source.parquet"
    frame.write_parquet(source)
    prepared = tmp_path / "prepared.parquet"
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(source), "--output", str(prepared)]) == 0
    rows = read_table(prepared).frame.sort("index")
    assert rows["A"].to_list() == ["true", "false"] and rows["flag"].to_list() == [True, None]
    assert rows["tags"].to_list() == [["a"], ["b", "c"]]


@pytest.mark.parametrize(("column", "values", "message"), [
    ("question", [["a"], ["b"]], "holds List(String) values where string is declared"),
    ("index", [True, False], "holds Boolean values where int64 is declared"),
    ("index", [1.0, 2.5], "2.5 is not a valid int64 value"),
    ("image", [1.5, 2.5], "the image column holds Float64 values"),
])
def test_a_declared_column_of_the_wrong_type_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         column: str, values: list[object], message: str) -> None:
    text = base64.b64encode(png(8, 6)).decode()
    source = tmp_path / "source.parquet"
    mcq(image=[text, text]).with_columns(pl.Series(column, values)).write_parquet(source)
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(source), "--output",
                 str(tmp_path / "p.parquet")]) == 2
    error = capsys.readouterr().err
    assert message in error and f"column '{column}'" in error
