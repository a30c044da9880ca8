"""Edge arguments that ended in a traceback where exit 2 is promised (issue 23 item 17)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mmbatch.cli import main
from tests.conftest import EXAMPLES
from tests.support.memory_limit import run_mmbatch_bounded
from tests.support.prepared_files import prepared_frame, write_prepared

MMBENCH = EXAMPLES / "mmbench" / "mmbench_example.tsv"


def _exit_2(args: list[str], capsys: pytest.CaptureFixture[str], *words: str) -> str:
    capsys.readouterr()
    assert main(args) == 2
    error = capsys.readouterr().err
    assert "Traceback" not in error
    for word in words:
        assert word in error, error
    return error


@pytest.fixture
def prepared(tmp_path: Path) -> Path:
    return write_prepared(tmp_path / "prepared.parquet", prepared_frame(1, copies=1))


def test_a_stop_string_nested_three_thousand_deep(prepared: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _exit_2(["infer", "--input", str(prepared), "--output", str(tmp_path / "o.parquet"), "--backend", "echo",
             "--model", "answer", "--gen-arg", "stop=" + "[" * 3000], capsys, "--gen-arg stop", "nested too deeply")


@pytest.mark.parametrize("output", ["", "/"])
def test_an_output_with_no_name(prepared: Path, capsys: pytest.CaptureFixture[str], output: str) -> None:
    _exit_2(["infer", "--input", str(prepared), "--output", output, "--backend", "echo", "--model", "answer"],
            capsys, "cannot write")


def test_a_limit_larger_than_any_integer_the_libraries_take(tmp_path: Path) -> None:
    result = run_mmbatch_bounded("prepare", "--benchmark", "mmbench", "--input", str(MMBENCH), "--output",
                                 str(tmp_path / "p.parquet"), "--limit", "1" + "0" * 26)
    assert result.returncode == 2 and "Traceback" not in result.stderr and "too large" in result.stderr, \
        result.stderr[-1000:]


def test_view_to_a_device(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hits = write_prepared(tmp_path / "h.parquet", prepared_frame(1, copies=1))
    _exit_2(["view", str(hits), "--output", os.devnull], capsys, "neither")


def test_run_with_an_output_dir_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    taken = tmp_path / "taken"
    taken.write_text("mine", "utf-8")
    _exit_2(["run", "--benchmark", "mmbench", "--input", str(MMBENCH), "--output-dir", str(taken), "--backend",
             "echo", "--model", "answer", "--no-judge"], capsys, "names a file, not a folder")
    assert taken.read_text("utf-8") == "mine"


def test_a_big_tsv_under_a_memory_limit_is_one_line(tmp_path: Path) -> None:
    """Under ``ulimit -v`` polars fails with 'Cannot allocate memory (os error 12)' when some of its allocations are
    refused (a traceback) and aborts the process for others (one run in four): the file is refused before it is
    read, in one line."""
    source = tmp_path / "big.tsv"
    row = "\t".join(["{}", "What is shown here?", "a red square", "a blue circle", "A", "cat", "x" * 300]) + "\n"
    with source.open("w", encoding="utf-8") as handle:
        handle.write("index\tquestion\tA\tB\tanswer\tcategory\timage\n")
        handle.writelines(row.format(index) for index in range(200_000))
    result = run_mmbatch_bounded("prepare", "--benchmark", "mmbench", "--input", str(source), "--output",
                                 str(tmp_path / "p.parquet"), limit_mb=600)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-1500:]
    assert "not enough memory" in result.stderr
