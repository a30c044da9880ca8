"""Shards from the scheduler's environment alone: 4 concurrent ``mmbatch infer`` processes, merged, equal one run.

The processes are started the way the examples start them: the Kubernetes Indexed Job's own container args and env
(``JOB_COMPLETION_INDEX`` + ``MMBATCH_NUM_SHARDS``), and the Slurm scripts run by bash with the variables Slurm sets
for ``--array=1-4`` (``SLURM_ARRAY_TASK_ID``/``_COUNT``/``_MIN``). None of them passes ``--shard``. The echo backend
stands in for the model, so the comparison is exact.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from mmbatch.tableio import read_table
from tests.conftest import EXAMPLES, run_cli
from tests.support.deploy import SLURM, containers, expand, jobs

SHARDS = 4
TIMING_COLUMNS = ["latency_ms"]
"""Wall-clock measurements, the only columns allowed to differ between a sharded and a single run."""
ECHO = ["--backend", "echo", "--model", "answer"]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any shard or mmbatch setting, plus ``extra``."""
    scheduler = ("MMBATCH_", "SLURM_", "JOB_COMPLETION_INDEX")
    return {**{k: v for k, v in os.environ.items() if not k.startswith(scheduler)}, **extra}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("prepared") / "prepared.parquet"
    result = run_cli("prepare", "--benchmark", "mme", "--input", str(EXAMPLES / "mme"), "--output", str(path))
    assert result.returncode == 0, result.stderr
    return path


@pytest.fixture(scope="module")
def single_run(prepared: Path) -> pl.DataFrame:
    output = prepared.parent / "single" / "predictions.parquet"
    result = run_cli("infer", "--input", str(prepared), "--output", str(output), *ECHO, env=clean_env())
    assert result.returncode == 0, result.stderr
    return read_table(output).frame


def run_concurrently(commands: list[list[str]], envs: list[dict[str, str]]) -> list[subprocess.CompletedProcess[str]]:
    """Start every command at once, then wait for all of them."""
    processes = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for command, env in zip(commands, envs, strict=True)]
    results = []
    for command, process in zip(commands, processes, strict=True):
        stdout, stderr = process.communicate(timeout=600)
        results.append(subprocess.CompletedProcess(command, process.returncode, stdout, stderr))
    return results


def assert_same_predictions(merged: Path, single: pl.DataFrame) -> None:
    frame = read_table(merged).frame
    assert frame.height == single.height
    assert_frame_equal(frame.drop(TIMING_COLUMNS), single.drop(TIMING_COLUMNS))


def test_indexed_job_pods_shard_from_job_completion_index(prepared: Path, single_run: pl.DataFrame,
                                                          tmp_path: Path) -> None:
    """The Indexed Job's container, as 4 pods at once, with /data on a temporary folder and the echo model."""
    data = tmp_path / "data"
    (data / "run").mkdir(parents=True)
    (data / "run" / "prepared.parquet").write_bytes(prepared.read_bytes())
    (infer,) = containers(jobs()["mmbatch-infer"])
    args = [arg.replace("/data", str(data)) for arg in infer.args]
    model_at = args.index("--backend")
    args[model_at:model_at + 4] = ECHO  # the manifest's model, swapped for the echo backend
    assert "--shard" not in args
    commands, envs = [], []
    for k in range(SHARDS):
        pod_env = {name: value for name, value in infer.env.items() if isinstance(value, str)}
        pod_env["JOB_COMPLETION_INDEX"] = str(k)  # what the downward API puts in the pod
        commands.append([sys.executable, "-m", "mmbatch", *expand(args, pod_env)])
        envs.append(clean_env(**pod_env))
    assert all(env["MMBATCH_NUM_SHARDS"] == str(SHARDS) for env in envs)
    for k, result in enumerate(run_concurrently(commands, envs)):
        assert result.returncode == 0, result.stderr
        assert f"shard {k}/{SHARDS}" in result.stderr

    merge = containers(jobs()["mmbatch-merge-score"])[0]
    merge_args = [arg.replace("/data", str(data)) for arg in merge.args]
    result = run_cli(*merge_args, env=clean_env())
    assert result.returncode == 0, result.stderr
    assert_same_predictions(data / "run" / "predictions.parquet", single_run)


def test_slurm_array_tasks_shard_from_the_array_variables(prepared: Path, single_run: pl.DataFrame,
                                                          tmp_path: Path) -> None:
    """infer-array.sbatch as 4 array tasks of `--array=1-4` at once, then merge-score.sbatch, all for real."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "prepared.parquet").write_bytes(prepared.read_bytes())
    common = {"RUN_DIR": str(run_dir), "MMBATCH": f"{sys.executable} -m mmbatch", "BACKEND": "echo",
              "MODEL": "answer", "COLUMNS": "200"}
    envs = [clean_env(**common, SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_COUNT=str(SHARDS),
                      SLURM_ARRAY_TASK_MIN="1") for task in range(1, SHARDS + 1)]
    commands = [["bash", str(SLURM / "infer-array.sbatch")]] * SHARDS
    for task, result in enumerate(run_concurrently(commands, envs)):
        assert result.returncode == 0, result.stderr
        assert f"shard {task}/{SHARDS}" in result.stderr

    result = subprocess.run(["bash", str(SLURM / "merge-score.sbatch")], env=clean_env(**common, NUM_SHARDS="4"),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert_same_predictions(run_dir / "predictions.parquet", single_run)
    assert (run_dir / "metrics.json").is_file()


def test_a_shard_index_without_a_count_is_refused(prepared: Path, tmp_path: Path) -> None:
    result = run_cli("infer", "--input", str(prepared), "--output", str(tmp_path / "p.parquet"), *ECHO,
                     env=clean_env(JOB_COMPLETION_INDEX="1"))
    assert result.returncode == 2
    assert "MMBATCH_NUM_SHARDS" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "p.parquet").exists()
