"""Every output file gets the permissions of a normally created file (0666 less the umask), not mkstemp's 0600:
files are handed between teams, read by other uids on shared volumes and served by web servers."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.tableio import write_table
from tests.conftest import EXAMPLES


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_stage_output_is_0644_under_umask_022(tmp_path: Path, umask_022: None) -> None:
    prepared, predictions = tmp_path / "prepared.parquet", tmp_path / "predictions.tsv"
    extracted, metrics = tmp_path / "extracted.parquet", tmp_path / "metrics.json"
    steps = [
        ["prepare", "--benchmark", "mme", "--input", str(EXAMPLES / "mme"), "--output", str(prepared)],
        ["infer", "--input", str(prepared), "--output", str(predictions), "--backend", "echo", "--model", "answer"],
        ["extract", "--input", str(predictions), "--output", str(extracted), "--no-judge"],
        ["score", "--input", str(extracted), "--output", str(metrics)],
        ["report", str(metrics), "--output", str(tmp_path / "report.html")],
        ["report", str(metrics), "--output", str(tmp_path / "report.md")],
    ]
    for argv in steps:
        assert main(argv) == 0, argv
    files = sorted(path for path in tmp_path.rglob("*") if path.is_file())
    names = {path.name for path in files}
    assert {"prepared.parquet", "predictions.tsv", "predictions.tsv.meta.json", "metrics.json", "report.md",
            "report.html"} <= names, names
    assert {path.name: oct(_mode(path)) for path in files} == {path.name: "0o644" for path in files}


@pytest.mark.parametrize("umask, expected", [(0o002, 0o664), (0o077, 0o600)])
def test_written_table_follows_the_umask(tmp_path: Path, umask: int, expected: int) -> None:
    previous = os.umask(umask)
    try:
        path = write_table(pl.DataFrame({"index": [1]}), tmp_path / "t.tsv")
    finally:
        os.umask(previous)
    assert _mode(path) == expected
    assert _mode(path.with_name("t.tsv.meta.json")) == expected
