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


@pytest.mark.parametrize("suffix", [".parquet", ".tsv"])
def test_rows_of_some_indices_are_the_rows_of_all_filtered(tmp_path: Path, suffix: str) -> None:
    """``rows(only=...)`` reads a finished output and the progress for some indices alone; which copy of an index
    wins (the last, but one without an error over one with) is the same as when every row is read."""
    out = tmp_path / f"preds{suffix}"
    write_table(_rows([1, 2, 3, 4]).vstack(_rows([5], error="boom")), out, {"resume": {"model": "m"}})
    journal = RowJournal(out, {"model": "m"}, columns=("index", "prediction", "error"))
    journal.commit(_rows([2]).with_columns(pl.lit("p2 again").alias("prediction")))
    journal.commit(_rows([3], error="timeout"))
    journal.commit(_rows([5]))
    every = journal.rows()
    assert every is not None
    for only in ([2, 3], [5], [1, 4, 5], [], [9]):
        some = journal.rows(only=pl.Series(only, dtype=pl.Int64))
        assert some is not None
        assert some.equals(every.filter(pl.col("index").is_in(only))), only
    assert every.filter(pl.col("index") == 2)["prediction"].to_list() == ["p2 again"]  # the later copy
    assert every.filter(pl.col("index") == 3)["error"].to_list() == [None]  # the copy without an error
    narrow = journal.rows(columns=("index", "error"))
    assert narrow is not None and narrow.equals(every.select("index", "error"))
