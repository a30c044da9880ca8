"""A full disk, a file-size limit or a failing disk: one line and exit 2, never a traceback; finished work is kept.

Campaign replay: a full disk showed as an ``OSError`` traceback (pyarrow, polars), SQLite's "database or disk is full"
from the judge cache, and "Invalid thrift" when a damaged Parquet file was read back. The writes here fail for real:
the command runs in a subprocess whose file-size limit (``RLIMIT_FSIZE``, SIGXFSZ ignored) makes the kernel refuse
any write past it (EFBIG), as a full disk refuses it (ENOSPC), and SQLite's own page limit makes it "full".
"""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from support.openai_server import OpenAIServer, ServerScript

from mmbatch.cli import main
from mmbatch.journal import committed_rows, partial_dir
from mmbatch.tableio import read_table
from tests.conftest import EXAMPLES, REPO_ROOT

MMBENCH = EXAMPLES / "mmbench" / "mmbench_example.tsv"


def mmbatch_limited(limit_bytes: int, *args: str) -> subprocess.CompletedProcess[str]:
    """``mmbatch ARGS`` in a subprocess that cannot write any file past ``limit_bytes``."""
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    # No bytecode written: the limit would cut a .pyc short, and Python would load it broken next time.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT), "PYTHONDONTWRITEBYTECODE": "1",
           "HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": ""}
    return subprocess.run([sys.executable, "-m", "mmbatch", *args], preexec_fn=limit, capture_output=True, text=True,
                          cwd=REPO_ROOT, env=env, timeout=300)


def assert_one_line(result: subprocess.CompletedProcess[str], *, keeps_rows: bool = False) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "the file system refused" in result.stderr and "File too large" in result.stderr, result.stderr
    # only the stages that keep progress say so (prepare, score, export... keep nothing)
    assert ("finished rows are kept" in result.stderr) == keeps_rows, result.stderr


@pytest.mark.parametrize("suffix", [".parquet", ".tsv"])  # pyarrow's OSError has errno; polars' names it in text
def test_a_write_the_disk_refuses_ends_prepare_in_one_line(tmp_path: Path, suffix: str) -> None:
    output = tmp_path / f"prepared{suffix}"
    assert_one_line(mmbatch_limited(10_000, "prepare", "--benchmark", "mmbench", "--input", str(MMBENCH),
                                    "--output", str(output)))
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # no output, no temporary file left


def test_infer_stopped_by_the_disk_keeps_its_rows_for_the_rerun(tmp_path: Path) -> None:
    prepared = tmp_path / "prepared.parquet"
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(MMBENCH), "--output", str(prepared)]) == 0
    output = tmp_path / "preds.parquet"
    args = ["infer", "--input", str(prepared), "--output", str(output), "--backend", "echo", "--model", "answer"]
    # a commit is ~250 bytes: the progress passes 8 KB mid-run
    assert_one_line(mmbatch_limited(8_000, *args), keeps_rows=True)
    kept = committed_rows(partial_dir(output))  # where the limit struck depends on timing: mid-run or at the end
    assert not output.exists() and kept is not None and kept.height > 0
    assert main(args) == 0
    assert read_table(output).frame.height == read_table(prepared).frame.height


def test_a_judge_cache_on_a_full_disk_ends_extract_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    import mmbatch.extract.judge_cache as judge_cache

    predictions = tmp_path / "pred.tsv"
    lines = ["index\tquestion\tA\tB\tanswer\tprediction"] + [f"{i}\tWhich {i}?\tcat\tdog\tA\tI would say the feline"
                                                             for i in range(1, 30)]
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    opened = judge_cache.JudgeCache.__init__

    def small(self: judge_cache.JudgeCache, path: str | Path) -> None:
        opened(self, path)
        self._db.execute("PRAGMA max_page_count = 3")  # SQLite says "database or disk is full" past 3 pages

    monkeypatch.setattr(judge_cache.JudgeCache, "__init__", small)
    with OpenAIServer(ServerScript(reply="A")) as server:
        code = main(["extract", "--input", str(predictions), "--output", str(tmp_path / "out.parquet"),
                     "--benchmark", "mmbench", "--judge-base-url", server.base_url, "--judge-model", "gpt-4o-mini"])
    error = capsys.readouterr().err
    assert code == 2 and "database or disk is full" in error and "mmbatch-judge-cache.sqlite" in error, error


def test_a_damaged_prepared_file_given_to_merge_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prepared = tmp_path / "prepared.parquet"
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(MMBENCH), "--output", str(prepared)]) == 0
    output = tmp_path / "preds.parquet"
    assert main(["infer", "--input", str(prepared), "--output", str(output), "--backend", "echo", "--model",
                 "answer"]) == 0
    data = bytearray(prepared.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    data[-8 - footer:-8 - footer + 40] = b"\xff" * 40  # the footer's thrift metadata, magic bytes intact
    prepared.write_bytes(bytes(data))
    assert main(["merge", str(output), "--prepared", str(prepared), "--output", str(tmp_path / "m.parquet")]) == 2
    assert "not a readable Parquet file" in capsys.readouterr().err
    assert pl.read_parquet(output).height > 0


def test_an_mmbench_submission_the_disk_refuses_is_one_line(tmp_path: Path) -> None:
    """xlsxwriter wraps the refusal in its own FileCreateError: it was a traceback."""
    prepared, predictions = tmp_path / "prepared.parquet", tmp_path / "preds.parquet"
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(MMBENCH), "--output", str(prepared)]) == 0
    assert main(["infer", "--input", str(prepared), "--output", str(predictions), "--backend", "echo", "--model",
                 "answer"]) == 0
    output = tmp_path / "out" / "submission.xlsx"
    assert_one_line(mmbatch_limited(3_000, "export", "--format", "mmbench-submission", "--input", str(predictions),
                                    "--output", str(output)))
    assert not output.parent.exists() or list(output.parent.iterdir()) == []
