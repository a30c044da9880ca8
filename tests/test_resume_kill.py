"""Resume after ``kill -9`` at random moments: real subprocesses, real SIGKILL, compared with an uninterrupted run.

The echo backend is slowed down with its test aid ``MMBATCH_ECHO_DELAY_S`` so a run lasts long enough to be killed
in the middle. After every kill the committed progress is read back, and the next run must report exactly those
rows as already done: only the rows in flight at the kill are computed again.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

from mmbatch.journal import committed_rows
from mmbatch.tableio import read_table
from tests.conftest import REPO_ROOT, run_cli
from tests.support.prepared_files import prepared_frame, write_prepared

DELAY_ENV = {"MMBATCH_ECHO_DELAY_S": "0.04"}
VOLATILE = ["latency_ms"]
"""Wall-clock columns: the only ones allowed to differ between an interrupted and an uninterrupted run."""


def start(*args: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as handle:
        return subprocess.Popen([sys.executable, "-m", "mmbatch", *args], cwd=REPO_ROOT, stdout=handle,
                                stderr=subprocess.STDOUT, env={**os.environ, **DELAY_ENV})


def infer_args(prepared: Path, output: Path, *extra: str) -> list[str]:
    return ["infer", "--input", str(prepared), "--output", str(output), "--backend", "echo", "--model", "answer",
            "--batch-size", "4", *extra]


def committed_done(progress: Path, output: Path | None = None) -> set[int]:
    """Indices committed without error: in the progress folder, and in a finished output."""
    frames = []
    committed = committed_rows(progress)
    if committed is not None:
        frames.append(committed)
    if output is not None and output.is_file():
        frames.append(read_table(output).frame)
    if not frames:
        return set()
    rows = pl.concat(frames, how="diagonal_relaxed")
    return set(rows.filter(pl.col("error").is_null())["index"].to_list())


def kill_at(process: subprocess.Popen[bytes], moment: str, rng: random.Random, progress: Path, done: int,
            total: int) -> bool:
    """SIGKILL ``process`` at a random point of the given kind; False when it finished first.

    ``startup``: while Python imports and reads the input; ``mid``: once a random number of new rows is committed;
    ``end``: once every row is committed, i.e. while the output is being written or the progress removed.
    """
    if moment == "startup":
        deadline = time.monotonic() + rng.uniform(0.05, 0.8)
    else:
        target = total if moment == "end" else done + rng.randint(1, max(1, (total - done) // 2))
        deadline = time.monotonic() + 120
        while process.poll() is None and len(committed_done(progress)) < target and time.monotonic() < deadline:
            time.sleep(0.005)
        deadline = time.monotonic() + rng.uniform(0.0, 0.05)
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    if process.poll() is not None:
        return False
    process.send_signal(signal.SIGKILL)
    process.wait()
    return True


def already_done(log: Path) -> int | None:
    match = re.search(r"(\d+) already done", log.read_text(errors="replace"))
    return int(match.group(1)) if match else None


def assert_same_predictions(got: Path, expected: Path) -> None:
    a, b = read_table(got).frame.drop(VOLATILE), read_table(expected).frame.drop(VOLATILE)
    assert a["index"].is_unique().all() and a.height == b.height
    assert a.equals(b), "interrupted run differs from the uninterrupted one"


def test_kill_9_at_random_moments_then_resume(tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prep.parquet", prepared_frame(30, copies=2))
    reference = tmp_path / "reference.parquet"
    assert run_cli(*infer_args(prepared, reference)).returncode == 0
    output = tmp_path / "preds.parquet"
    progress = tmp_path / "preds.parquet.partial"
    rng = random.Random(20261122)
    done_before, killed = 0, []
    for attempt, moment in enumerate(["startup", "mid", "mid", "startup", "mid", "end"]):
        log = tmp_path / f"run{attempt}.log"
        process = start(*infer_args(prepared, output), log=log)
        if kill_at(process, moment, rng, progress, done_before, total=60):
            killed.append(moment)
        reported = already_done(log)
        if reported is not None:  # the run got far enough to read the progress
            assert reported == done_before, log.read_text()
        if process.returncode == 0:
            done_before = 60
            break
        assert process.returncode == -signal.SIGKILL, log.read_text()
        done_before = len(committed_done(progress, output))
    final = run_cli(*infer_args(prepared, output), env=DELAY_ENV)
    assert final.returncode == 0, final.stderr
    assert f"{done_before} already done" in final.stderr
    assert killed.count("mid") >= 2, killed
    assert_same_predictions(output, reference)
    assert not progress.exists()


def test_killed_shards_resume_under_another_shard_count(tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prep.parquet", prepared_frame(24, copies=2))
    reference = tmp_path / "reference.parquet"
    assert run_cli(*infer_args(prepared, reference)).returncode == 0
    output = tmp_path / "preds.parquet"
    progress = tmp_path / "preds.parquet.partial"
    # Three shards run concurrently into one progress folder and are all killed part way.
    processes = [start(*infer_args(prepared, output, "--shard", f"{k}/3"), log=tmp_path / f"s{k}.log")
                 for k in range(3)]
    deadline = time.monotonic() + 60
    while len(committed_done(progress)) < 12 and time.monotonic() < deadline:
        time.sleep(0.05)
    for process in processes:
        process.send_signal(signal.SIGKILL)
        process.wait()
    done = committed_done(progress)
    assert 12 <= len(done) < 48
    # Two shards now: each reuses whatever any of the three finished.
    reused = 0
    for k in range(2):
        result = run_cli(*infer_args(prepared, output, "--shard", f"{k}/2"))
        assert result.returncode == 0, result.stderr
        reused += int(re.search(r"(\d+) already done", result.stderr).group(1))  # type: ignore[union-attr]
    assert reused == len(done)
    shards = sorted(tmp_path.glob("preds.shard-*-of-2.parquet"))
    merged = run_cli("merge", "--output", str(tmp_path / "merged.parquet"), *map(str, shards))
    assert merged.returncode == 0, merged.stderr
    assert_same_predictions(tmp_path / "merged.parquet", reference)


def test_kill_9_with_the_openai_backend_recomputes_only_requests_in_flight(tmp_path: Path) -> None:
    from tests.support.openai_server import OpenAIServer, ServerScript

    prepared = write_prepared(tmp_path / "prep.parquet", prepared_frame(20, copies=2))
    script = ServerScript(reply=lambda prompt, body: "answer to " + prompt.splitlines()[0], delay_s=0.1)
    with OpenAIServer(script) as server:
        args = ["infer", "--input", str(prepared), "--backend", "openai", "--model", "local-model",
                "--base-url", server.base_url, "--concurrency", "4"]
        env = {**os.environ, "OPENAI_API_KEY": ""}
        assert run_cli(*args, "--output", str(tmp_path / "reference.parquet"), env=env).returncode == 0
        server.reset()
        output = tmp_path / "preds.parquet"
        progress = tmp_path / "preds.parquet.partial"
        with (tmp_path / "killed.log").open("wb") as log:
            process = subprocess.Popen([sys.executable, "-m", "mmbatch", *args, "--output", str(output)],
                                       cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 60
        while len(committed_done(progress)) < 10 and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        committed = len(committed_done(progress))
        sent_before_kill = len(server.chat_requests)
        assert 10 <= committed < 40
        assert sent_before_kill - committed <= 4 + 4, "more requests than the concurrency window were lost"
        server.reset()
        rerun = run_cli(*args, "--output", str(output), env=env)
        assert rerun.returncode == 0, rerun.stderr
        assert f"{committed} already done, {40 - committed} to run" in rerun.stderr
        assert len(server.chat_requests) == 40 - committed
    assert_same_predictions(output, tmp_path / "reference.parquet")
