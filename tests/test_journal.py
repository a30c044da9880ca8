"""Resumable progress: atomic parts keyed by index, settings checks."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mmbatch.errors import BadInputError
from mmbatch.journal import RowJournal, partial_dir
from mmbatch.tableio import write_table


def _rows(indices: list[int], error: str | None = None) -> pl.DataFrame:
    return pl.DataFrame({"index": indices, "prediction": [f"p{i}" for i in indices],
                         "error": pl.Series([error] * len(indices), dtype=pl.String)})


def test_committed_rows_survive_and_failed_rows_are_not_done(tmp_path: Path) -> None:
    out = tmp_path / "preds.parquet"
    journal = RowJournal(out, {"model": "m"})
    journal.commit(_rows([1, 2]))
    journal.commit(_rows([3], error="timeout"))
    again = RowJournal(out, {"model": "m"})
    assert again.done_indices() == {1, 2}
    again.commit(_rows([3]))
    rows = again.rows()
    assert rows is not None and rows.sort("index")["prediction"].to_list() == ["p1", "p2", "p3"]
    assert RowJournal(out, {"model": "m"}).done_indices() == {1, 2, 3}


def test_other_settings_are_refused_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "preds.parquet"
    RowJournal(out, {"model": "m", "dtype": "float32"}).commit(_rows([1]))
    with pytest.raises(BadInputError, match="dtype differ"):
        RowJournal(out, {"model": "m", "dtype": "bfloat16"})
    forced = RowJournal(out, {"model": "m", "dtype": "bfloat16"}, force=True)
    assert forced.done_indices() == set()


def test_finished_output_counts_as_progress(tmp_path: Path) -> None:
    out = tmp_path / "preds.parquet"
    write_table(_rows([1, 2]).vstack(_rows([3], error="boom")), out, {"resume": {"model": "m"}})
    journal = RowJournal(out, {"model": "m"})
    assert journal.done_indices() == {1, 2}
    journal.close()
    assert not partial_dir(out).exists()
