"""A damaged progress folder is detected, set aside and its rows redone, never a traceback; concurrent shards
sharing one progress folder all finish.

Replays of the campaign: a truncated or empty part, garbage in a segment, an unreadable settings file each made every
rerun (and ``--force``) crash; shards compacting the shared folder while others read it crashed with
``FileNotFoundError`` in 3 of 7 trials.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.journal import SETTINGS_FILE, RowJournal, partial_dir
from mmbatch.journal_segments import HEADER, MAGIC
from mmbatch.tableio import read_table
from tests.conftest import REPO_ROOT
from tests.support.prepared_files import prepared_frame, write_prepared


def _killed_run(tmp_path: Path, rows: int = 6) -> tuple[Path, Path]:
    """A prepared file, and the progress an interrupted infer run left for it (all rows committed, no output)."""
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(rows // 2))
    out = tmp_path / "preds.parquet"
    assert main(["infer", "--input", str(prepared), "--output", str(out), "--backend", "echo", "--model",
                 "answer", "--shard", "0/1"]) == 0
    return prepared, out


def _rerun(prepared: Path, out: Path) -> int:
    return main(["infer", "--input", str(prepared), "--output", str(out), "--backend", "echo", "--model", "answer"])


def _progress_of_a_killed_process(prepared: Path, out: Path, indices: list[int]) -> RowJournal:
    """Commit ``indices`` with the settings infer records, through the real journal, and leave them (no seal)."""
    recorded = read_table(out).metadata["infer"]["resume"]
    out.unlink()
    journal = RowJournal(out, recorded, settings_key="infer.resume")
    frame = read_table(prepared).frame.filter(pl.col("index").is_in(indices))
    journal.commit(frame.select("index").with_columns(pl.lit("X").alias("prediction"), pl.lit("answer").alias(
        "model"), pl.lit(None, dtype=pl.String).alias("error")))
    return journal


def test_damaged_parts_and_segments_are_quarantined_and_redone(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    prepared, out = _killed_run(tmp_path)
    straight = read_table(out).frame
    journal = _progress_of_a_killed_process(prepared, out, straight["index"].to_list()[:3])
    journal.seal()  # a part with 3 rows
    folder = partial_dir(out)
    (part,) = folder.glob("part-*.parquet")  # the journal's own part, with the 3 rows
    part.write_bytes(part.read_bytes()[:40])  # a truncated part
    (folder / "part-00000000000000000001-0badf00d.parquet").write_bytes(b"")  # an empty part
    payload = b"not an arrow stream"
    (folder / "seg-00000000000000000002-1-deadbeef.arrows").write_bytes(
        HEADER.pack(MAGIC, len(payload), 12345) + payload)  # a complete frame with a wrong checksum
    capsys.readouterr()

    assert _rerun(prepared, out) == 0
    said = capsys.readouterr().err
    assert said.count("is damaged") == 3 and "will be run again" in said
    assert "0 already done" in said
    assert read_table(out).frame.drop("latency_ms").equals(straight.drop("latency_ms"))


def test_an_unreadable_settings_file_sets_the_progress_aside(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    prepared, out = _killed_run(tmp_path)
    _progress_of_a_killed_process(prepared, out, [1]).seal()
    (partial_dir(out) / SETTINGS_FILE).write_text("{truncated", encoding="utf-8")
    assert _rerun(prepared, out) == 0
    said = capsys.readouterr().err
    assert "unreadable" in said and "moved to" in said
    assert set(read_table(out).frame["prediction"].to_list()) != {"X"}


SHARD_SCRIPT = """
import sys
import mmbatch.journal
mmbatch.journal.ROTATE_COMMITS = 3  # compact very often, so shards compact while the others read
from mmbatch.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_concurrent_shards_sharing_one_progress_folder_all_finish(tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(60))
    out = tmp_path / "preds.parquet"
    env = {**os.environ, "MMBATCH_ECHO_DELAY_S": "0.002", "PYTHONPATH": str(REPO_ROOT)}
    shards = [subprocess.Popen([sys.executable, "-c", SHARD_SCRIPT, "infer", "--input", str(prepared), "--output",
                                str(out), "--backend", "echo", "--model", "answer", "--shard", f"{k}/4"],
                               cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
              for k in range(4)]
    for shard in shards:
        output, _ = shard.communicate(timeout=300)
        assert shard.returncode == 0, output.decode(errors="replace")
    assert main(["merge", "--output", str(out)]) == 0
    merged = read_table(out).frame
    assert merged.height == 120 and merged["error"].null_count() == 120
