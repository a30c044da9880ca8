"""``extract`` killed with SIGKILL in the middle of judging resumes: nothing lost, nothing asked twice."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from conftest import REPO_ROOT, run_cli
from support.extract_rows import judged_rows, mcq_row, mmvet_rows, write_predictions
from support.openai_server import OpenAIServer, ServerScript

from mmbatch.extract.options import ExtractOptions
from mmbatch.extract.stage import run_extract
from mmbatch.journal import committed_rows, partial_dir
from mmbatch.tableio import read_table

ROWS = 40
NO_KEYS = {"OPENAI_API_KEY": "", "MMBATCH_JUDGE_API_KEY": "", "OPENAI_BASE_URL": ""}


def numbered_judge(prompt: str, body: dict) -> str:
    """The right letter for ``judged_rows``: row i's answer is 'ABCD'[i % 4]."""
    number = int(re.findall(r"number (\d+)", prompt)[-1])
    return "ABCD"[number % 4]


def numbered_grade(prompt: str, body: dict) -> str:
    """A grade for ``mmvet_rows``: row i's is i % 10 tenths."""
    number = int(re.findall(r"number (\d+)", prompt)[-1])
    return f"0.{number % 10}"


KINDS = {"choice": (judged_rows, numbered_judge), "judge-graded": (mmvet_rows, numbered_grade)}
"""Answer kinds whose judge path is killed and resumed: MCQ letters, and MM-Vet grades (another kind's prompts,
tries and parser through the same session)."""


@pytest.mark.parametrize("kind", list(KINDS))
def test_kill_9_while_judging_then_resume(tmp_path: Path, kind: str) -> None:
    rows, reply = KINDS[kind]
    inp = write_predictions(tmp_path / "pred.tsv", rows(ROWS))
    out = tmp_path / "out.parquet"
    with OpenAIServer(ServerScript(reply=reply, delay_s=0.15)) as server:
        args = ["extract", "--input", str(inp), "--output", str(out), "--judge-base-url", server.base_url,
                "--concurrency", "2", "--retry-backoff", "0.01"]
        process = subprocess.Popen([sys.executable, "-m", "mmbatch", *args], cwd=REPO_ROOT,
                                   env={**os.environ, **NO_KEYS}, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while committed_rows(partial_dir(out)) is None:  # the first commit of judged rows
            assert process.poll() is None, "extract ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        asked_before = len(server.chat_requests)
        assert 0 < asked_before < ROWS, "the kill must land in the middle of the run"
        assert not out.exists()

        resumed = run_cli(*args, env=NO_KEYS)
        assert resumed.returncode == 0, resumed.stderr
        asked_after = len(server.chat_requests) - asked_before
    # Each row is asked once; only requests in flight at the kill (at most --concurrency) may be asked again.
    assert ROWS <= asked_before + asked_after <= ROWS + 2
    assert not partial_dir(out).exists()

    with OpenAIServer(ServerScript(reply=reply)) as server:
        run_extract(ExtractOptions(input=inp, output=tmp_path / "straight.parquet", judge_base_url=server.base_url,
                                   judge_cache=tmp_path / "other-cache.sqlite"))
    resumed_frame = read_table(out).frame
    straight = read_table(tmp_path / "straight.parquet").frame
    assert resumed_frame["index"].to_list() == straight["index"].to_list()  # input order, no duplicates
    assert resumed_frame.equals(straight)
    assert resumed_frame["extract_method"].unique().to_list() == ["judge"]


def test_a_finished_output_is_not_redone(tmp_path: Path) -> None:
    inp = write_predictions(tmp_path / "pred.tsv", judged_rows(4))
    with OpenAIServer(ServerScript(reply=numbered_judge)) as server:
        options = ExtractOptions(input=inp, output=tmp_path / "out.tsv", judge_base_url=server.base_url)
        run_extract(options)
        server.reset()
        again = run_extract(options)
        assert server.received == []
    assert again.summary["by_method"]["judge"] == 4


@pytest.mark.parametrize("suffix", [".parquet", ".tsv"])
def test_a_rerun_over_a_finished_output_takes_back_the_judges_rows_and_decides_the_others_again(
        tmp_path: Path, suffix: str) -> None:
    """Only the rows the rules leave open are read back from a finished output; the rules decide the rest again as
    they were: the same file, nothing asked, every row reported as reused."""
    rows = [mcq_row(100 + i, "ABCD"[i % 4], answer="ABCD"[(i // 2) % 4]) for i in range(6)] + judged_rows(4)
    inp = write_predictions(tmp_path / "pred.tsv", rows)
    out = tmp_path / f"out{suffix}"
    with OpenAIServer(ServerScript(reply=numbered_judge)) as server:
        options = ExtractOptions(input=inp, output=out, judge_base_url=server.base_url)
        first = run_extract(options)
        assert len(server.chat_requests) == 4  # the judge's rows only
        written = read_table(out)
        server.reset()
        again = run_extract(options)
        assert server.received == []
    assert first.summary["by_method"] == again.summary["by_method"]
    assert again.summary["by_method"]["rule"] == 6 and again.summary["by_method"]["judge"] == 4
    assert again.summary["reused"] == len(rows)
    assert again.summary["judge"]["cache_hits"] == 0  # the judge's rows were taken back, not looked up again
    rewritten = read_table(out)
    assert rewritten.frame.equals(written.frame)
    assert rewritten.frame.filter(pl.col("extract_method") == "judge")["extracted"].to_list() == ["B", "C", "D", "A"]
