"""Shard selection from --shard and from scheduler environment variables."""

from __future__ import annotations

import polars as pl
import pytest

from mmbatch.errors import BadInputError
from mmbatch.shards import Shard, parse_shard, resolve_shard, shard_from_environment


def test_shards_partition_the_rows_in_index_order() -> None:
    frame = pl.DataFrame({"index": [5, 3, 1, 4, 2, 1_000_001, 6]})
    parts = [Shard(k, 3).select(frame)["index"].to_list() for k in range(3)]
    assert parts == [[1, 4, 1_000_001], [2, 5], [3, 6]]
    assert sorted(i for part in parts for i in part) == sorted(frame["index"].to_list())


@pytest.mark.parametrize("text", ["4/4", "-1/2", "1", "a/b", "0/0"])
def test_bad_shard_text_is_a_usage_error(text: str) -> None:
    with pytest.raises(BadInputError):
        parse_shard(text)


def test_environment_shards() -> None:
    assert shard_from_environment({}) == Shard(0, 1)
    assert shard_from_environment({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4"}) == Shard(2, 4)
    assert shard_from_environment(
        {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1"}) == Shard(2, 4)
    assert shard_from_environment({"JOB_COMPLETION_INDEX": "1", "MMBATCH_NUM_SHARDS": "8"}) == Shard(1, 8)
    with pytest.raises(BadInputError, match="MMBATCH_NUM_SHARDS"):
        shard_from_environment({"JOB_COMPLETION_INDEX": "1"})


def test_explicit_option_wins_over_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "1")
    monkeypatch.setenv("MMBATCH_NUM_SHARDS", "2")
    assert resolve_shard("0/3") == Shard(0, 3)
    assert resolve_shard(None) == Shard(1, 2)
