"""Every bundled example prepared to TSV and to Parquet: the same rows, types and metadata, lossless both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmbatch.prepare import PrepareOptions, prepare
from mmbatch.tableio import read_table, write_table
from tests.conftest import EXAMPLES

EXAMPLE_RUNS = [
    ("mmbench", "mmbench/mmbench_example.tsv", None, None),
    ("mmbench", "mmbench/mmbench_legacy_example.tsv", None, None),
    ("mmbench", "mmbench/mcq_plain_example.tsv", None, True),
    ("mme", "mme", None, None),
    ("seedbench", "seed/seed_example.json", "seed/media", None),
    ("seedbench2", "seed/seed2_example.json", "seed/media", None),
]
"""(benchmark, input, media root, circular) of every bundled example, relative to ``examples/``."""


@pytest.mark.parametrize(("name", "source", "media_root", "circular"), EXAMPLE_RUNS,
                         ids=[run[1] for run in EXAMPLE_RUNS])
def test_example_round_trips_through_tsv_and_parquet(tmp_path: Path, name: str, source: str,
                                                     media_root: str | None, circular: bool | None) -> None:
    def run(output: Path) -> None:
        prepare(PrepareOptions(benchmark=name, input=EXAMPLES / source, output=output, circular=circular,
                               media_root=None if media_root is None else EXAMPLES / media_root))

    as_tsv, as_parquet = tmp_path / "prepared.tsv", tmp_path / "prepared.parquet"
    run(as_tsv)
    run(as_parquet)
    tsv, parquet = read_table(as_tsv), read_table(as_parquet)
    assert tsv.frame.schema == parquet.frame.schema
    assert tsv.frame.equals(parquet.frame)
    assert tsv.metadata == parquet.metadata and tsv.metadata["stage"] == "prepared"

    # Convert each into the other format and back: nothing changes.
    write_table(parquet.frame, tmp_path / "again.tsv", parquet.metadata)
    write_table(tsv.frame, tmp_path / "again.parquet", tsv.metadata)
    for path in (tmp_path / "again.tsv", tmp_path / "again.parquet"):
        again = read_table(path)
        assert again.frame.equals(parquet.frame) and again.metadata == parquet.metadata


@pytest.mark.parametrize("suffix", [".tsv", ".parquet"])
def test_a_prepared_file_prepares_to_itself(tmp_path: Path, suffix: str) -> None:
    first, second = tmp_path / f"first{suffix}", tmp_path / f"second{suffix}"
    prepare(PrepareOptions(benchmark="mmbench", input=EXAMPLES / "mmbench/mmbench_example.tsv", output=first))
    prepare(PrepareOptions(benchmark="mmbench", input=first, output=second))
    assert read_table(first).frame.equals(read_table(second).frame)
