"""`prepare` records the media root it used, so `infer` finds the media from anywhere the person allows."""

from __future__ import annotations

from pathlib import Path

from mmbatch.tableio import read_metadata, read_table
from tests.conftest import EXAMPLES


def test_infer_finds_media_from_another_folder(tmp_path: Path, cli) -> None:
    prepared = tmp_path / "elsewhere" / "seed.parquet"
    result = cli("prepare", "--benchmark", "seedbench", "--input", "examples/seed/seed_example.json",
                 "--media-root", "examples/seed/media", "--output", str(prepared), "--limit", "4")
    assert result.returncode == 0, result.stderr
    recorded = Path(read_metadata(prepared)["prepare"]["media_root"])
    assert recorded.is_absolute() and recorded == (EXAMPLES / "seed" / "media").resolve()

    predictions = tmp_path / "preds.parquet"
    args = ("infer", "--input", str(prepared), "--output", str(predictions), "--backend", "echo", "--model", "answer")
    # The recorded root lies outside the prepared file's folder: used only once the person allows a folder holding it.
    refused = cli(*args, cwd=tmp_path)
    assert refused.returncode == 2 and "--media-root" in refused.stderr
    result = cli(*args, cwd=tmp_path, env={"MMBATCH_MEDIA_ROOT": str(EXAMPLES)})
    assert result.returncode == 0, result.stderr
    assert read_table(predictions).frame["error"].null_count() == read_table(predictions).frame.height
