"""The Airflow example DAG runs every benchmark kind it offers (issue 25 item 1), for real: Airflow's ``dag.test()``
in the separate Airflow venv schedules every task (params, XCom, two mapped infer shards, trigger rules, the judge's
key through ``private_environment``), and each container's command runs as mmbatch would in the image, with only
what the task gives it (``tests/support/airflow_run.py``; the Docker engine is the one part that cannot exist here).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT
from tests.support.openai_server import OpenAIServer
from tests.support.recipe_cases import CASE_IDS, CASES, JUDGE_MODEL, assert_expected_metrics, case, judge_server

__all__ = ["judge_server"]  # a fixture, used by name

pytestmark = pytest.mark.slow  # one Airflow run per benchmark kind: ~1 min in all on 2 cores

AIRFLOW_PYTHON = REPO_ROOT / ".cache" / "airflow-venv" / "bin" / "python"
INSTALLED_MARKER = REPO_ROOT / ".cache" / "airflow-venv" / "installed"
RUNNER = REPO_ROOT / "tests" / "support" / "airflow_run.py"
DAG_FOLDER = REPO_ROOT / "examples" / "airflow"
SECRET = "sk-test-judge-key-for-the-dag-run"


def run_conf(kind: str, server: OpenAIServer) -> dict[str, Any]:
    """The params a user triggers the DAG with for the case (inputs under <data>/inputs/, two shards)."""
    recipe_case = case(kind)
    conf: dict[str, Any] = {"benchmark": recipe_case.benchmark, "input": recipe_case.input, "backend": "echo",
                            "model": recipe_case.model, "num_shards": 2}
    if recipe_case.media_root:
        conf["media_root"] = recipe_case.media_root
    if recipe_case.judged:
        conf.update(judge_model=JUDGE_MODEL, judge_base_url=server.base_url)
    return conf


@pytest.fixture(scope="module")
def host_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder Docker would mount at /data, its inputs/ holding every case's example (and media folder)."""
    folder = tmp_path_factory.mktemp("host-data")
    for recipe_case in CASES:
        for relative in filter(None, (recipe_case.input, recipe_case.media_root)):
            source, target = REPO_ROOT / relative, folder / "inputs" / relative
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
    return folder


@pytest.fixture(scope="module")
def runs(host_data: Path, judge_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One DAG run per case, in one Airflow process (its database is set up once)."""
    if not INSTALLED_MARKER.exists():
        pytest.skip("the Airflow venv is missing: `make airflow-env` (which `make test` runs) creates it")
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("AIRFLOW", "PYTHON", "MMBATCH_"))}
    env.update(AIRFLOW_HOME=str(tmp_path_factory.mktemp("airflow-home")), AIRFLOW__CORE__LOAD_EXAMPLES="False",
               AIRFLOW__CORE__UNIT_TEST_MODE="True", AIRFLOW__CORE__DAGS_FOLDER=str(DAG_FOLDER),
               AIRFLOW_VAR_MMBATCH_JUDGE_API_KEY=SECRET, MMBATCH_HOST_DATA=str(host_data), MMBATCH_GPUS="0",
               # A stage setting of the workers' environment: every container must get it.
               MMBATCH_TIMEOUT="30",
               RECIPE_PYTHON=sys.executable, RECIPE_PYTHONPATH=str(REPO_ROOT))
    confs = {kind: run_conf(kind, judge_server) for kind in CASE_IDS}
    judge_server.reset()
    result = subprocess.run([str(AIRFLOW_PYTHON), str(RUNNER), str(DAG_FOLDER), json.dumps(confs)],
                            capture_output=True, text=True, env=env, timeout=600)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RUN ")]
    assert result.returncode == 0 and lines, (result.stdout + result.stderr)[-4000:]
    report = json.loads(lines[-1].removeprefix("RUN "))
    report["judge_headers"] = [request.headers for request in judge_server.chat_requests]
    return report


def run_folder(host_data: Path, run_id: str) -> Path:
    return host_data / "runs" / re.sub(r"[^A-Za-z0-9_.-]", "_", run_id)


@pytest.mark.parametrize("kind", CASE_IDS)
def test_dag_runs_each_benchmark_kind(kind: str, runs: dict[str, Any], host_data: Path) -> None:
    run = runs[kind]
    failed = [c["output"] for c in run["containers"] if c["status"] != 0]
    assert run["state"] == "success", (run["tasks"], failed)
    assert set(run["tasks"].values()) == {"success"}
    assert sorted(run["tasks"]) == ["extract", "infer[0]", "infer[1]", "merge", "plan", "plan_shards", "prepare",
                                    "score"]
    assert_expected_metrics(case(kind), run_folder(host_data, run["run_id"]) / "metrics.json")
    for container in run["containers"]:
        assert container["environment"]["MMBATCH_TIMEOUT"] == "30", "every stage gets the workers' MMBATCH_*"


def test_dag_gives_seed_its_media_folder(runs: dict[str, Any]) -> None:
    commands = {c["command"][0]: c["command"] for c in runs["seed-media"]["containers"]}
    for stage in ("prepare", "infer", "extract"):
        argv = commands[stage]
        assert argv[argv.index("--media-root") + 1] == "/data/inputs/examples/seed/media", stage


def test_dag_judge_gets_its_server_and_the_key_from_the_variable(runs: dict[str, Any]) -> None:
    """The judged run asked the local judge with the key of the Airflow Variable (before the fix, the extract task
    failed with an AttributeError whatever the params: the key never reached a container)."""
    (extract,) = [c for c in runs["judge-graded"]["containers"] if c["command"][0] == "extract"]
    assert extract["command"][extract["command"].index("--judge-model") + 1] == JUDGE_MODEL
    assert runs["judge_headers"], "the judge was asked"
    assert {headers.get("authorization") for headers in runs["judge_headers"]} == {f"Bearer {SECRET}"}
    others = [c for kind in CASE_IDS for c in runs[kind]["containers"] if c["command"][0] != "extract"]
    assert others and all(SECRET not in json.dumps(c["environment"]) for c in others), "only extract gets the key"
