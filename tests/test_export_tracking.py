"""``mmbatch export --to mlflow|wandb``: a plan's finished pairs into a real MLflow file store and a real offline W&B
run folder, each read back with the library's own reader and compared with the metrics files; without the extras,
exit 2 with the install command.

MLflow and W&B live in their own virtualenv (``make tracking-env`` builds ``.cache/tracking-venv``; ``make test``
builds it), so mmbatch's own environment stays an install without them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmbatch.cli import main
from mmbatch.tracking.runs import metric_name
from tests.conftest import EXAMPLES, REPO_ROOT

VENV = REPO_ROOT / ".cache" / "tracking-venv"
PYTHON = VENV / "bin" / "python"
PLAN = f"""output: out
models:
  - {{name: truth, backend: echo, model: answer}}
  - {{name: always-a, backend: echo, model: "letter:A"}}
benchmarks:
  - {{benchmark: mme, input: {EXAMPLES / "mme"}}}
  - {{benchmark: pope, input: {EXAMPLES / "pope" / "pope_example.tsv"}}}
extract: {{no_judge: true}}
score: {{bootstrap: 20}}
"""
PAIRS = ("truth/mme", "truth/pope", "always-a/mme", "always-a/pope")


def run(argv: list[str]) -> tuple[int, str]:
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
        status = main(argv)
    return status, stream.getvalue()


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished plan (2 echo models x MME, POPE) with a viewer page; returns the plan file."""
    folder = tmp_path_factory.mktemp("tracked")
    plan = folder / "plan.yaml"
    plan.write_text(PLAN)
    status, log = run(["run", "--plan", str(plan)])
    assert status == 0, log
    pair = folder / "out" / "models" / "truth" / "mme"
    status, log = run(["view", str(pair / "metrics.hits.parquet"), "--images",
                       str(folder / "out" / "benchmarks" / "mme" / "prepared.parquet"),
                       "--output", str(folder / "viewer" / "mme.html")])
    assert status == 0, log
    return plan


def expected(plan: Path) -> dict[str, dict[str, float]]:
    """Pair -> tracked metric name -> value, straight from each pair's metrics.json."""
    found = {}
    for pair in PAIRS:
        model, benchmark = pair.split("/")
        rows = json.loads((plan.parent / "out" / "models" / model / benchmark / "metrics.json").read_text())
        metrics = {}
        for row in rows:
            key = metric_name(row["benchmark"], row["split"], row["level"], row["group"], row["metric"])
            metrics[key] = row["value"]
            metrics |= {f"{key}.{bound}": row[bound] for bound in ("ci_low", "ci_high") if row[bound] is not None}
        found[pair] = metrics
    return found


def tracking_python() -> Path:
    if not (VENV / "installed").is_file():
        pytest.skip("the tracking venv is missing: `make tracking-env` (which `make test` runs) creates it")
    return PYTHON


def in_venv(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command with the tracking environment's Python, importing this checkout."""
    full = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200", **(env or {})}
    return subprocess.run([str(tracking_python()), *argv], capture_output=True, text=True, env=full, cwd=REPO_ROOT,
                          timeout=600)


@pytest.mark.parametrize("tracker", ["mlflow", "wandb"])
def test_without_the_extra_export_exits_2_with_the_install_command(finished: Path, tracker: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, tracker, None)  # this environment without the library, whatever is installed
    metrics = finished.parent / "out" / "models" / "truth" / "mme" / "metrics.json"
    status, log = run(["export", "--to", tracker, str(metrics)])
    assert status == 2 and f"pip install 'mmbatch[{tracker}]'" in log and "Traceback" not in log


READ_MLFLOW = """
import json, os, sys
os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # MLflow 3 reads its file store only when allowed
from mlflow.tracking import MlflowClient
client = MlflowClient(sys.argv[1])
experiment = client.get_experiment_by_name("labs")
def files(run_id, path=None):
    for item in client.list_artifacts(run_id, path):
        yield from files(run_id, item.path) if item.is_dir else [item.path]
runs = {run.info.run_name: {"metrics": run.data.metrics, "params": run.data.params, "status": run.info.status,
                            "artifacts": sorted(files(run.info.run_id))}
        for run in client.search_runs([experiment.experiment_id])}
print(json.dumps(runs))
"""


def test_mlflow_file_store_reads_back_equal_to_the_metrics_files(finished: Path, tmp_path: Path) -> None:
    store = tmp_path / "mlruns"
    exported = in_venv("-m", "mmbatch", "export", "--to", "mlflow", "--plan", str(finished), "--tracking-uri",
                       str(store), "--experiment", "labs", "--artifact", str(finished.parent / "viewer"))
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.count("mlflow: run ") == 4
    read = in_venv("-c", READ_MLFLOW, store.as_uri())
    assert read.returncode == 0, read.stderr
    runs = json.loads(read.stdout)
    assert sorted(runs) == sorted(PAIRS)
    for pair, metrics in expected(finished).items():
        assert runs[pair]["metrics"] == metrics, pair
        assert runs[pair]["status"] == "FINISHED"
        model = "answer" if pair.startswith("truth") else "letter:A"
        assert runs[pair]["params"]["model"] == model and runs[pair]["params"]["backend"] == "echo"
        assert runs[pair]["params"]["judge"] == "none (rules only)"
        assert runs[pair]["artifacts"] == ["metrics/metrics.json", "metrics/metrics.json.meta.json", "report.csv",
                                           "report.html", "report.md", "viewer/mme.html"]


def test_wandb_offline_run_reads_back_equal_to_the_metrics_files(finished: Path, tmp_path: Path) -> None:
    # Nothing listens at the base URL: an offline export that touched the network would fail.
    exported = in_venv("-m", "mmbatch", "export", "--to", "wandb", "--plan", str(finished), "--wandb-dir",
                       str(tmp_path), "--project", "labs", "--artifact", str(finished.parent / "viewer"),
                       env={"WANDB_BASE_URL": "http://127.0.0.1:9", "WANDB_API_KEY": ""})
    assert exported.returncode == 0, exported.stderr
    folders = sorted((tmp_path / "wandb").glob("offline-run-*"))
    assert len(folders) == 4 and "upload later with: wandb sync " in exported.stdout
    read = in_venv(str(REPO_ROOT / "tests" / "support" / "wandb_records.py"), *map(str, folders))
    assert read.returncode == 0, read.stderr
    runs = {run["name"]: run for run in json.loads(read.stdout).values()}
    assert sorted(runs) == sorted(PAIRS)
    for pair, metrics in expected(finished).items():
        summary = {key: value for key, value in runs[pair]["summary"].items() if not key.startswith("_")}
        assert summary == metrics, pair
        config = runs[pair]["config"]
        assert config["backend"] == "echo" and config["metrics_file"].endswith(f"{pair}/metrics.json")
        assert runs[pair]["artifacts"] == [["metrics/metrics.json", "metrics/metrics.json.meta.json", "report.csv",
                                            "report.html", "report.md", "viewer/mme.html"]]
