"""``--shard K/N`` (and the scheduler's environment) plus ``mmbatch merge``: N shards merged equal one run."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.infer.outputs import shard_output_path
from mmbatch.shards import Shard
from mmbatch.tableio import read_metadata, read_table
from tests.conftest import run_cli
from tests.support.prepared_files import prepared_frame, write_prepared

VOLATILE = ["latency_ms"]


def infer(prepared: Path, output: Path, *extra: str, env: dict | None = None):
    return run_cli("infer", "--input", str(prepared), "--output", str(output), "--backend", "echo",
                   "--model", "answer", *extra, env=env)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A prepared file, its unsharded predictions and its three shard outputs."""
    folder = tmp_path_factory.mktemp("sharded")
    prepared = write_prepared(folder / "prep.parquet", prepared_frame(7, copies=3))
    assert infer(prepared, folder / "single.parquet").returncode == 0
    for k in range(3):
        result = infer(prepared, folder / "preds.parquet", "--shard", f"{k}/3")
        assert result.returncode == 0, result.stderr
    return folder


def shard_files(folder: Path) -> list[Path]:
    return [shard_output_path(folder / "preds.parquet", Shard(k, 3)) for k in range(3)]


def test_shard_outputs_partition_the_rows(sharded: Path) -> None:
    files = shard_files(sharded)
    assert [f.name for f in files] == [f"preds.shard-{k}-of-3.parquet" for k in range(3)]
    indices = [set(read_table(f).frame["index"].to_list()) for f in files]
    assert sum(map(len, indices)) == 21 and set().union(*indices) == set(
        read_table(sharded / "single.parquet").frame["index"].to_list())
    meta = read_metadata(files[1])["infer"]
    assert meta["shard"] == "1/3" and meta["shard_rows"] == 7 and meta["input_rows"] == 21
    # Shards keep the shared progress folder for later runs with another count.
    assert (sharded / "preds.parquet.partial").is_dir()


def test_merged_shards_equal_a_single_run(sharded: Path, tmp_path: Path) -> None:
    merged = tmp_path / "merged.tsv"
    result = run_cli("merge", "--output", str(merged), *map(str, reversed(shard_files(sharded))))
    assert result.returncode == 0, result.stderr
    assert "21 rows from 3 files" in result.stdout and "prepared file" in result.stdout
    assert "preds.parquet.partial is no longer needed" in result.stdout
    single = read_table(sharded / "single.parquet").frame.drop(VOLATILE)
    assert read_table(merged).frame.drop(VOLATILE).equals(single)
    assert read_metadata(merged)["infer"]["shard"] == "0/1"
    assert run_cli("validate", str(merged)).returncode == 0


def test_merge_names_missing_rows_and_shards(sharded: Path, tmp_path: Path) -> None:
    files = shard_files(sharded)
    missing = run_cli("merge", "--output", str(tmp_path / "m.parquet"), str(files[0]), str(files[2]))
    assert missing.returncode == 2 and "in no input: index" in missing.stderr
    expected = read_table(files[1]).frame["index"].sort().to_list()
    assert ", ".join(map(str, expected[:3])) in missing.stderr
    # Without the prepared file at hand, the shard records still show what is missing.
    moved = tmp_path / "moved"
    moved.mkdir()
    for f in files:
        shutil.copy(f, moved / f.name)
    (sharded / "prep.parquet").rename(sharded / "prep.hidden.parquet")
    try:
        copies = [moved / f.name for f in files]
        gap = run_cli("merge", "--output", str(tmp_path / "m.parquet"), str(copies[0]), str(copies[2]))
        assert gap.returncode == 2 and "shard(s) 1/3 missing" in gap.stderr
        named = run_cli("merge", "--output", str(tmp_path / "m.parquet"), "--prepared",
                        str(sharded / "prep.hidden.parquet"), str(copies[0]), str(copies[2]))
        assert named.returncode == 2 and ", ".join(map(str, expected[:3])) in named.stderr
        ok = run_cli("merge", "--output", str(tmp_path / "m.parquet"), *map(str, copies))
        assert ok.returncode == 0 and "shard records" in ok.stdout
    finally:
        (sharded / "prep.hidden.parquet").rename(sharded / "prep.parquet")
    assert not (tmp_path / "m.parquet").exists() or read_table(tmp_path / "m.parquet").frame.height == 21


def test_merge_names_duplicates_and_refuses_other_runs(sharded: Path, tmp_path: Path) -> None:
    files = shard_files(sharded)
    dup = run_cli("merge", "--output", str(tmp_path / "m.parquet"), *map(str, files), str(files[0]))
    assert dup.returncode == 2 and "duplicate index" in dup.stderr and files[0].name in dup.stderr
    other = tmp_path / "other.parquet"
    assert run_cli("infer", "--input", str(sharded / "prep.parquet"), "--output", str(other), "--backend", "echo",
                   "--model", "fixed:x", "--shard", "1/3").returncode == 0
    mixed = run_cli("merge", "--output", str(tmp_path / "m.parquet"), str(files[0]),
                    str(shard_output_path(other, Shard(1, 3))), str(files[2]))
    assert mixed.returncode == 2 and "model differ" in mixed.stderr
    assert not (tmp_path / "m.parquet").exists()


def test_shard_from_the_scheduler_environment(sharded: Path, tmp_path: Path) -> None:
    env = {"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3"}
    result = infer(sharded / "prep.parquet", tmp_path / "env.parquet", env=env)
    assert result.returncode == 0, result.stderr
    got = read_table(tmp_path / "env.shard-2-of-3.parquet").frame.drop(VOLATILE)
    assert got.equals(read_table(shard_files(sharded)[2]).frame.drop(VOLATILE))
    via_option_env = infer(sharded / "prep.parquet", tmp_path / "env2.parquet", env={"MMBATCH_SHARD": "0/3"})
    assert via_option_env.returncode == 0 and (tmp_path / "env2.shard-0-of-3.parquet").is_file()


def test_a_merged_file_at_the_output_path_counts_as_finished(sharded: Path, tmp_path: Path) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(sharded, folder)
    files = shard_files(folder)
    assert run_cli("merge", "--output", str(folder / "preds.parquet"), *map(str, files)).returncode == 0
    shutil.rmtree(folder / "preds.parquet.partial")
    again = infer(folder / "prep.parquet", folder / "preds.parquet")
    assert again.returncode == 0 and "21 already done, 0 to run" in again.stderr
    half = infer(folder / "prep.parquet", folder / "preds.parquet", "--shard", "1/2")
    assert half.returncode == 0 and "10 already done, 0 to run" in half.stderr
    assert read_table(folder / "preds.shard-1-of-2.parquet").frame["error"].null_count() == 10
    assert pl.read_parquet(folder / "preds.parquet").height == 21


def test_more_shards_than_rows(tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prep.parquet", prepared_frame(2, copies=1))
    for k in range(3):
        assert infer(prepared, tmp_path / "p.parquet", "--shard", f"{k}/3").returncode == 0
    empty = read_table(tmp_path / "p.shard-2-of-3.parquet").frame
    assert empty.height == 0 and "prediction" in empty.columns and "g_index" in empty.columns
    files = [str(tmp_path / f"p.shard-{k}-of-3.parquet") for k in range(3)]
    merged = run_cli("merge", "--output", str(tmp_path / "m.parquet"), *files)
    assert merged.returncode == 0, merged.stderr
    assert read_table(tmp_path / "m.parquet").frame["prediction"].to_list() == ["B", "C"]


def test_merge_without_inputs_takes_the_shards_beside_the_output(sharded: Path, tmp_path: Path) -> None:
    """What the Kubernetes merge Job runs: no shard count to keep in step with the infer Job."""
    folder = tmp_path / "run"
    shutil.copytree(sharded, folder)
    assert main(["merge", "--output", str(folder / "preds.parquet")]) == 0
    single = read_table(sharded / "single.parquet").frame.drop(VOLATILE)
    assert read_table(folder / "preds.parquet").frame.drop(VOLATILE).equals(single)
    (folder / "preds.shard-1-of-3.parquet").unlink()
    assert main(["merge", "--output", str(folder / "again.parquet")]) == 2  # none beside again.parquet
    for name in ("preds.shard-0-of-3.parquet", "preds.shard-2-of-3.parquet"):
        shutil.move(folder / name, folder / name.replace("preds", "again"))
    assert main(["merge", "--output", str(folder / "again.parquet")]) == 2  # shard 1/3 is missing: refused
