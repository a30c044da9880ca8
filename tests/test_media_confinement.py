"""The media root is chosen by the person running the stage, never by the prepared file.

Replay of the campaign: a prepared file from another team recording ``media_root: /`` made ``infer`` read (and with
``--backend openai`` upload) any file of the machine. A recorded root is used only inside the folder the person
chose (``--media-root``), or the prepared file's own folder when none is chosen.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from PIL import Image

from mmbatch.cli import main
from mmbatch.tableio import read_table
from tests.support.prepared_files import prepared_frame, write_prepared


def _prepared_pointing_at(tmp_path: Path, recorded_root: str) -> Path:
    (tmp_path / "private").mkdir()
    Image.new("RGB", (12, 7)).save(tmp_path / "private" / "secret.png")
    frame = prepared_frame(1, copies=1).drop("image").with_columns(pl.lit("private/secret.png").alias("image_path"))
    return write_prepared(tmp_path / "team" / "prepared.parquet", frame, {"prepare": {"media_root": recorded_root}})


def _infer(prepared: Path, out: Path, *extra: str) -> int:
    return main(["infer", "--input", str(prepared), "--output", str(out), "--backend", "echo", "--model", "media",
                 *extra])


def test_a_recorded_root_outside_the_files_folder_is_refused(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    prepared = _prepared_pointing_at(tmp_path, "/")
    assert _infer(prepared, tmp_path / "preds.parquet") == 2
    message = capsys.readouterr().err
    assert "outside its own folder" in message and "--media-root" in message
    assert not (tmp_path / "preds.parquet.partial").exists()


def test_a_chosen_root_confines_a_recorded_one(tmp_path: Path) -> None:
    prepared = _prepared_pointing_at(tmp_path, str(tmp_path))
    # The person chose the team folder: the recorded root (its parent) is not used, so the private file is not read.
    assert _infer(prepared, tmp_path / "a.parquet", "--media-root", str(tmp_path / "team")) == 3
    assert "not found under" in read_table(tmp_path / "a.parquet").frame["error"][0]
    # The person chose a folder holding the recorded root: it is used.
    assert _infer(prepared, tmp_path / "b.parquet", "--media-root", str(tmp_path)) == 0
    assert read_table(tmp_path / "b.parquet").frame["prediction"][0] == "1 image 12x7"


def test_an_unwritable_output_is_refused_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(1))
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    assert _infer(prepared, blocker / "preds.parquet") == 2
    assert "cannot write in" in capsys.readouterr().err
    assert _infer(prepared, tmp_path / "preds.parquet") == 0
    # extract too refuses before its judge is asked anything (the judge URL here would be unreachable).
    assert main(["extract", "--input", str(tmp_path / "preds.parquet"), "--output", str(blocker / "x.parquet"),
                 "--judge-base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "cannot write in" in capsys.readouterr().err


def test_an_empty_path_list_and_a_nul_byte_fail_their_row(tmp_path: Path) -> None:
    frame = prepared_frame(2, copies=1).drop("image").with_columns(
        pl.Series("image_path", ["[]", "a\x00b.png"]))
    prepared = write_prepared(tmp_path / "prepared.parquet", frame)
    assert _infer(prepared, tmp_path / "preds.parquet") == 3
    errors = read_table(tmp_path / "preds.parquet").frame.sort("index")["error"].to_list()
    assert "names no file" in errors[0] and "NUL byte" in errors[1]
