"""The journal under infer's use: shared progress folder for shards, compaction, success beating failure."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import mmbatch.journal as journal_module
from mmbatch.journal import RowJournal
from mmbatch.tableio import write_table


def rows(indices: list[int], error: str | None = None) -> pl.DataFrame:
    return pl.DataFrame({"index": indices, "prediction": [f"p{i}" for i in indices],
                         "error": pl.Series([error] * len(indices), dtype=pl.String)})


def test_own_segments_are_compacted_and_others_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal_module, "ROTATE_COMMITS", 50)
    shared = tmp_path / "preds.parquet.partial"
    other = RowJournal(tmp_path / "preds.shard-1-of-2.parquet", {"m": 1}, progress_dir=shared)
    other.commit(rows([-1]))
    journal = RowJournal(tmp_path / "preds.shard-0-of-2.parquet", {"m": 1}, progress_dir=shared)
    for i in range(2 * 50 + 5):
        journal.commit(rows([i]))
    assert len(list(shared.glob("part-*.parquet"))) == 2  # one per rotation of this process's segment
    assert len(list(shared.glob("seg-*.arrows"))) == 2  # the other (live) process's and this one's current
    reread = RowJournal(tmp_path / "preds.parquet", {"m": 1}, progress_dir=shared).rows()
    assert reread is not None and sorted(reread["index"].to_list()) == list(range(-1, 2 * 50 + 5))


def test_a_success_beats_a_later_failure_and_dotted_settings_keys(tmp_path: Path) -> None:
    out = tmp_path / "preds.parquet"
    write_table(rows([1, 2]), out, {"infer": {"resume": {"m": 1}}})
    journal = RowJournal(out, {"m": 1}, settings_key="infer.resume")
    journal.commit(rows([1], error="timeout"))
    journal.commit(rows([2], error="timeout"))
    journal.commit(rows([2]))
    assert journal.done_indices() == {1, 2}
    assert journal.rows()["error"].null_count() == 2  # type: ignore[index]


def test_finished_files_with_other_settings_are_ignored(tmp_path: Path) -> None:
    whole = tmp_path / "preds.parquet"
    write_table(rows([1, 2, 3]), whole, {"infer": {"resume": {"m": 1}}})
    same = RowJournal(tmp_path / "s0.parquet", {"m": 1}, settings_key="infer.resume", finished=(whole,),
                      progress_dir=tmp_path / "p")
    assert same.done_indices() == {1, 2, 3}
    other = RowJournal(tmp_path / "s1.parquet", {"m": 2}, settings_key="infer.resume", finished=(whole,),
                       progress_dir=tmp_path / "q")
    assert other.done_indices() == set()


def test_force_discards_only_what_has_other_settings(tmp_path: Path) -> None:
    shared = tmp_path / "preds.parquet.partial"
    old_output = tmp_path / "preds.shard-1-of-2.parquet"
    write_table(rows([2]), old_output, {"infer": {"resume": {"m": "old"}}})
    RowJournal(tmp_path / "preds.shard-0-of-2.parquet", {"m": "old"}, settings_key="infer.resume",
               progress_dir=shared).commit(rows([9]))
    # Shard 0 is forced to new settings: the old shared progress goes, and it commits new rows.
    shard0 = RowJournal(tmp_path / "preds.shard-0-of-2.parquet", {"m": "new"}, settings_key="infer.resume",
                        progress_dir=shared, force=True)
    assert shard0.done_indices() == set()
    shard0.commit(rows([1]))
    # Shard 1, forced later: only its own old output goes; shard 0's new progress stays.
    shard1 = RowJournal(old_output, {"m": "new"}, settings_key="infer.resume", progress_dir=shared, force=True)
    assert not old_output.exists() and shard1.done_indices() == {1}
