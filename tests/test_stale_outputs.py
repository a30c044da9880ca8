"""Only progress mmbatch recorded for the same input and settings is resumed; anything else is refused.

Replays of the campaign: an output whose metadata was lost (a TSV copied without its sidecar), a file written by
another tool, and a progress folder without settings were all taken as finished work, keeping old predictions under
a new model's name. Now each is refused with exit 2 naming ``--force``, and ``--force`` starts afresh.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.journal import partial_dir
from mmbatch.tableio import metadata_sidecar, read_table, write_table
from tests.support.prepared_files import prepared_frame, write_prepared


def _infer(prepared: Path, out: Path, model: str, *extra: str) -> int:
    return main(["infer", "--input", str(prepared), "--output", str(out), "--backend", "echo", "--model", model,
                 *extra])


def test_an_output_without_recorded_settings_is_refused_not_resumed(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(4))
    out = tmp_path / "preds.tsv"
    assert _infer(prepared, out, "letter:A") == 0
    metadata_sidecar(out).unlink()  # copied without its sidecar
    capsys.readouterr()

    assert _infer(prepared, out, "letter:C") == 2
    message = capsys.readouterr().err
    assert "holds no settings recorded" in message and "--force" in message
    assert set(read_table(out).frame["prediction"].to_list()) == {"A"}  # refused: nothing was overwritten

    assert _infer(prepared, out, "letter:C", "--force") == 0
    assert "0 already done" in capsys.readouterr().err
    assert set(read_table(out).frame["prediction"].to_list()) == {"C"}


def test_a_file_from_another_tool_at_the_output_path_is_refused(tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(3))
    out = tmp_path / "preds.parquet"
    stale = prepared_frame(3).drop("image").with_columns(pl.lit("B").alias("prediction"), pl.lit("old").alias("model"))
    write_table(stale, out, {"stage": "predictions", "import": {"format": "vlmevalkit"}})
    assert _infer(prepared, out, "letter:C") == 2
    assert _infer(prepared, out, "letter:C", "--force") == 0
    assert set(read_table(out).frame["model"].to_list()) == {"letter:C"}


def test_a_progress_folder_without_settings_is_refused(tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(3))
    out = tmp_path / "preds.parquet"
    folder = partial_dir(out)
    folder.mkdir()
    pl.DataFrame({"index": [1], "prediction": ["B"], "model": ["other"], "error": [None]}).write_parquet(
        folder / "part-00000000000000000001-deadbeef.parquet")
    assert _infer(prepared, out, "letter:C") == 2
    assert _infer(prepared, out, "letter:C", "--force") == 0
    assert set(read_table(out).frame["prediction"].to_list()) == {"C"}


def test_extract_refuses_a_stale_output_from_another_input(tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(3))
    first, second = tmp_path / "first.parquet", tmp_path / "second.parquet"
    assert _infer(prepared, first, "letter:A") == 0
    assert _infer(prepared, second, "letter:B") == 0
    extracted = tmp_path / "extracted.tsv"
    assert main(["extract", "--input", str(first), "--output", str(extracted), "--no-judge"]) == 0
    metadata_sidecar(extracted).unlink()
    assert main(["extract", "--input", str(second), "--output", str(extracted), "--no-judge"]) == 2
    assert main(["extract", "--input", str(second), "--output", str(extracted), "--no-judge", "--force"]) == 0
    assert set(read_table(extracted).frame["extracted"].to_list()) == {"B"}


def test_a_refused_model_leaves_no_progress_folder(tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(2))
    out = tmp_path / "preds.parquet"
    assert _infer(prepared, out, "no-such-echo-mode") == 2
    assert not partial_dir(out).exists()
