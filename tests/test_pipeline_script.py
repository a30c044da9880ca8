"""examples/pipeline.sh end to end on the bundled MME example with the echo backend: without Docker (what CI runs),
and as the `docker run` commands it would issue, replayed by a stand-in ``docker`` (no engine here)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from mmbatch.tableio import read_table
from tests.conftest import REPO_ROOT, run_cli

PIPELINE = REPO_ROOT / "examples" / "pipeline.sh"
FAKE_DOCKER = REPO_ROOT / "tests" / "support" / "fake_docker.py"
SECRET = "sk-test-never-in-a-command-line"


@pytest.fixture
def out_dir() -> Iterator[str]:
    """A run folder inside the repository (pipeline.sh mounts the current folder as /data), removed afterwards."""
    relative = f"out/pytest-pipeline-{uuid.uuid4().hex[:8]}"
    yield relative
    shutil.rmtree(REPO_ROOT / relative, ignore_errors=True)


def _executable(path: Path, target: str) -> None:
    path.write_text(f"#!/bin/sh\nexec {sys.executable} {target} \"$@\"\n")
    path.chmod(0o755)


def run_pipeline(out: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``examples/pipeline.sh OUT`` as the README says, with an ``mmbatch`` command on PATH (no ``MMBATCH``)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    _executable(bin_dir / "docker", str(FAKE_DOCKER))
    # The installed console script, as `pip install` puts it on PATH (this checkout's package: cwd is the repo).
    _executable(bin_dir / "mmbatch", "-m mmbatch")
    settings = {"BENCHMARK", "INPUT", "BACKEND", "MODEL", "NUM_SHARDS", "BASE_URL", "JUDGE_MODEL", "IMAGE", "MMBATCH"}
    inherited = {key: value for key, value in os.environ.items() if key not in settings}
    full_env = {**inherited, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HF_HOME": str(tmp_path / "hf"),
                "FAKE_DOCKER_LOG": str(tmp_path / "docker.log"), "OPENAI_API_KEY": SECRET, "COLUMNS": "200", **env}
    # Run from the repository root, as a user would: paths are relative to it and it is what Docker mounts.
    return subprocess.run([str(PIPELINE.relative_to(REPO_ROOT)), out], capture_output=True, text=True,
                          env=full_env, cwd=REPO_ROOT, timeout=600)


def metric_values(path: Path) -> dict[tuple[str, str, str], float]:
    rows = json.loads(path.read_text())
    return {(row["level"], row["group"], row["metric"]): row["value"] for row in rows}


def docker_calls(tmp_path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (tmp_path / "docker.log").read_text().splitlines()]


@pytest.mark.slow
def test_pipeline_without_docker_runs_every_stage_with_shards(out_dir: str, tmp_path: Path) -> None:
    result = run_pipeline(out_dir, {"MMBATCH_NO_DOCKER": "1", "NUM_SHARDS": "2"}, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert not (tmp_path / "docker.log").exists(), "MMBATCH_NO_DOCKER=1 must not call docker"
    run = REPO_ROOT / out_dir
    # pipeline.sh validated the merged predictions itself; check a shard's file and the last stage file too.
    for name in ("predictions.shard-1-of-2.parquet", "extracted.parquet"):
        checked = run_cli("validate", str(run / name))
        assert checked.returncode == 0, checked.stderr
    prepared, predictions = read_table(run / "prepared.parquet").frame, read_table(run / "predictions.parquet").frame
    assert predictions["index"].to_list() == sorted(prepared["index"].to_list())
    metrics = metric_values(run / "metrics.json")
    # The echo backend's `answer` mode repeats the right answer: every MME subtask must be perfect.
    accuracies = [value for (level, _, metric), value in metrics.items() if level == "subtask" and metric == "acc"]
    assert accuracies and all(value == 100.0 for value in accuracies)
    assert metrics[("total", "perception", "score")] > 0


def test_pipeline_docker_commands_mount_data_and_replay_to_the_same_metrics(out_dir: str, tmp_path: Path) -> None:
    result = run_pipeline(out_dir, {"FAKE_DOCKER_EXECUTE": "1"}, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    calls = docker_calls(tmp_path)
    commands = [call["args"][0] for call in calls]  # type: ignore[index]
    assert commands == ["prepare", "infer", "validate", "extract", "score"]
    for call in calls:
        options = call["options"]
        image = "mmbatch:full" if call["args"][0] == "infer" else "mmbatch:light"  # type: ignore[index]
        assert call["image"] == image
        pairs = [tuple(option) for option in options]  # type: ignore[union-attr]
        assert ("-v", f"{REPO_ROOT}:/data") in pairs
        assert not any(pair[0] == "--gpus" for pair in pairs), "the echo backend needs no GPU"
        assert ("-e", "OPENAI_API_KEY") in pairs
        assert SECRET not in json.dumps(call), "keys pass by name, never by value"
        paths = [arg for arg in call["args"] if "/" in arg]  # type: ignore[union-attr]
        assert all(not arg.startswith("/") for arg in paths), "paths must be relative to the /data mount"
    metrics = metric_values(REPO_ROOT / out_dir / "metrics.json")
    accuracies = [value for (level, _, metric), value in metrics.items() if level == "subtask" and metric == "acc"]
    assert accuracies and all(value == 100.0 for value in accuracies)


def test_pipeline_gives_each_shard_its_own_gpu_for_local_models(out_dir: str, tmp_path: Path) -> None:
    """Recorded only (no model here): with BACKEND=hf, shard K runs on GPU K and the merge waits for all."""
    result = run_pipeline(out_dir, {"BACKEND": "hf", "MODEL": "llava-hf/llava-1.5-7b-hf", "NUM_SHARDS": "3"},
                          tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    calls = docker_calls(tmp_path)
    infers = [call for call in calls if call["args"][0] == "infer"]  # type: ignore[index]
    gpus = sorted(dict(map(tuple, call["options"])).get("--gpus") for call in infers)  # type: ignore[arg-type]
    assert gpus == ["device=0", "device=1", "device=2"]
    shards = sorted(call["args"][call["args"].index("--shard") + 1]  # type: ignore[index, union-attr]
                    for call in infers)
    assert shards == ["0/3", "1/3", "2/3"]
    merge = calls[[call["args"][0] for call in calls].index("merge")]  # type: ignore[index]
    assert calls.index(merge) > max(calls.index(call) for call in infers)
    assert merge["args"][3:] == [f"{out_dir}/predictions.shard-{k}-of-3.parquet" for k in range(3)]  # type: ignore[index]
