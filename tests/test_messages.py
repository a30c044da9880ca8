"""What the commands say: no "shard 0/1" for unsharded runs, rows reused on resume, SIGTERM said aloud like Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.journal import PART_GLOB
from mmbatch.journal_segments import SEGMENT_GLOB
from tests.conftest import EXAMPLES, REPO_ROOT


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("messages") / "prepared.parquet"
    assert main(["prepare", "--benchmark", "mme", "--input", str(EXAMPLES / "mme"), "--output", str(path)]) == 0
    return path


def _infer(prepared: Path, output: Path, *extra: str) -> list[str]:
    return ["infer", "--input", str(prepared), "--output", str(output), "--backend", "echo", "--model", "answer",
            *extra]


def test_shard_is_named_only_when_there_are_shards(prepared: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_infer(prepared, tmp_path / "whole.parquet")) == 0
    said = "".join(capsys.readouterr())
    assert "shard 0/1" not in said and "infer: shard" not in said and "(shard" not in said
    assert main(_infer(prepared, tmp_path / "part.parquet", "--shard", "1/2")) == 0
    said = "".join(capsys.readouterr())
    assert "infer: shard 1/2: " in said and "(shard 1/2)" in said


def test_extract_rerun_says_how_many_rows_it_reused(prepared: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    predictions, extracted = tmp_path / "predictions.parquet", tmp_path / "extracted.parquet"
    assert main(_infer(prepared, predictions)) == 0
    capsys.readouterr()
    argv = ["extract", "--input", str(predictions), "--output", str(extracted), "--no-judge"]
    assert main(argv) == 0
    assert "reused" not in "".join(capsys.readouterr())
    assert main(argv) == 0
    rows = len(pl.read_parquet(predictions))
    assert f"{rows} reused from earlier progress" in "".join(capsys.readouterr())


def test_sigterm_is_reported_and_the_run_resumes(prepared: Path, tmp_path: Path) -> None:
    output = tmp_path / "predictions.parquet"
    env = {**os.environ, "MMBATCH_ECHO_DELAY_S": "0.05"}  # slow enough to be stopped midway
    process = subprocess.Popen([sys.executable, "-m", "mmbatch", *_infer(prepared, output, "--batch-size", "2")],
                               cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    progress = output.with_name(output.name + ".partial")
    deadline = time.monotonic() + 60
    # The journal's first write is a segment (parts come at rotation or at the end): wait for either.
    while process.poll() is None and not any(progress.glob(PART_GLOB)) and not any(progress.glob(SEGMENT_GLOB)) \
            and time.monotonic() < deadline:
        time.sleep(0.01)
    assert process.poll() is None, "finished before it could be stopped"
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM
    assert "terminated (SIGTERM); infer and extract keep their finished rows: rerun to resume" in err
    assert "Traceback" not in err
    assert main(_infer(prepared, output)) == 0  # resumes from what the stopped run committed
