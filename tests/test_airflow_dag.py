"""The Airflow example DAG, loaded by Airflow's own DagBag in the separate venv that ``make airflow-env`` builds.

Airflow never enters mmbatch's environment: ``tests/support/airflow_probe.py`` runs with the venv's Python and prints
the DAG's tasks and one planned run as JSON; this side checks the graph and parses every planned command with the
real mmbatch parser.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mmbatch.benchmarks.registry import benchmark_names
from mmbatch.cli import build_parser
from mmbatch.infer.outputs import shard_output_path
from mmbatch.shards import Shard
from tests.conftest import REPO_ROOT

AIRFLOW_PYTHON = REPO_ROOT / ".cache" / "airflow-venv" / "bin" / "python"
INSTALLED_MARKER = REPO_ROOT / ".cache" / "airflow-venv" / "installed"
PROBE = REPO_ROOT / "tests" / "support" / "airflow_probe.py"
DAG_FOLDER = REPO_ROOT / "examples" / "airflow"
SECRET = "sk-test-judge-key-0123456789"


def probe(shard_counts: list[int], tmp_path: Path) -> dict[str, Any]:
    if not INSTALLED_MARKER.exists():
        pytest.skip("the Airflow venv is missing: `make airflow-env` (which `make test` runs) creates it")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AIRFLOW", "PYTHON"))}
    env.update(AIRFLOW_HOME=str(tmp_path / "airflow-home"), AIRFLOW__CORE__LOAD_EXAMPLES="False",
               AIRFLOW__CORE__UNIT_TEST_MODE="True", MMBATCH_GPUS="2",
               AIRFLOW_VAR_MMBATCH_JUDGE_API_KEY=SECRET)
    result = subprocess.run([str(AIRFLOW_PYTHON), str(PROBE), str(DAG_FOLDER), *map(str, shard_counts)],
                            capture_output=True, text=True, env=env, timeout=300)
    lines = [line for line in result.stdout.splitlines() if line.startswith("PROBE ")]
    assert result.returncode == 0 and lines, result.stderr[-3000:]
    return json.loads(lines[-1].removeprefix("PROBE "))


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return probe([4, 3], tmp_path_factory.mktemp("airflow"))


def parse(argv: list[str]) -> Any:
    return build_parser().parse_args(argv)


def test_dagbag_loads_the_dag_without_errors(report: dict[str, Any]) -> None:
    assert report["import_errors"] == {}
    assert report["dag_ids"] == ["mmbatch_eval"]


def test_task_graph(report: dict[str, Any]) -> None:
    tasks = report["tasks"]
    assert set(tasks) == {"plan", "plan_shards", "prepare", "infer", "merge", "extract", "score"}
    assert tasks["prepare"]["upstream"] == ["plan"]
    assert tasks["infer"]["upstream"] == ["plan_shards", "prepare"]
    assert tasks["merge"]["upstream"] == ["infer", "plan"]
    assert tasks["extract"]["upstream"] == ["merge", "plan"]
    assert tasks["score"]["upstream"] == ["extract", "plan"]
    assert [name for name, task in tasks.items() if task["mapped"]] == ["infer"]
    assert report["infer_expands_over"] == "plan_shards"
    assert report["infer_requests_gpus"] is True  # MMBATCH_GPUS=2 in the probe's environment
    for name in ("prepare", "infer", "merge", "extract", "score"):
        assert tasks[name]["docker"] is True
    for name in ("prepare", "infer", "merge", "score"):
        assert tasks[name]["image"] == ("mmbatch:full" if name == "infer" else "mmbatch:light")
    # extract's image is planned per run: the full one (CLIP) for SEED-Bench-2's image-generation rows.
    assert tasks["extract"]["image"] == {"planned": "extract_image"}
    assert report["runs"]["4"]["plan"]["extract_image"] == "mmbatch:light"


def test_the_dag_offers_every_benchmark_mmbatch_has(report: dict[str, Any]) -> None:
    """The DAG cannot import mmbatch (Airflow's own environment): its list must follow the registry's."""
    assert report["benchmark_choices"] == list(benchmark_names())


def test_exit_3_skips_and_the_next_stage_still_runs(report: dict[str, Any]) -> None:
    """Exit 3 (finished, some rows failed) must not fail a shard and block merge, as pipeline.sh goes on too."""
    tasks = report["tasks"]
    assert tasks["infer"]["skip_on_exit_code"] == 3 and tasks["extract"]["skip_on_exit_code"] == [3]
    assert tasks["merge"]["trigger_rule"] == "none_failed" and tasks["score"]["trigger_rule"] == "none_failed"
    assert tasks["prepare"]["skip_on_exit_code"] == [] and tasks["prepare"]["trigger_rule"] == "all_success"


def test_judge_key_goes_through_private_environment_only(report: dict[str, Any]) -> None:
    assert report["extract_environment"] == {"planned": "environment"}
    for planned in report["runs"].values():
        assert "OPENAI_API_KEY" not in planned["plan"]["environment"], "templated fields are rendered and stored"
    assert report["extract_judge_environment"] == {"OPENAI_API_KEY": SECRET}
    assert SECRET not in json.dumps(report["runs"]), "no key in any planned command or environment"


@pytest.mark.parametrize("num_shards", [4, 3])
def test_mapped_shards_receive_shard_k_of_n(num_shards: int, report: dict[str, Any]) -> None:
    planned = report["runs"][str(num_shards)]
    shards = planned["shard_commands"]
    assert len(shards) == num_shards
    outputs = []
    for k, shard in enumerate(shards):
        args = parse(shard["command"])
        assert args.command == "infer"
        assert args.shard == f"{k}/{num_shards}"
        assert args.input == parse(planned["plan"]["prepare"]).output
        assert shard["environment"] == {"CUDA_VISIBLE_DEVICES": str(k % 2), "HF_HUB_OFFLINE": "1"}
        # Shards on one GPU share a one-slot pool, so they never run at the same time.
        assert shard["pool"] == f"mmbatch_gpu_{k % 2}"
        outputs.append(str(shard_output_path(args.output, Shard(k, num_shards))))
    assert len(set(outputs)) == num_shards
    merge = parse(planned["plan"]["merge"])
    assert merge.command == "merge"
    assert [str(path) for path in merge.inputs] == outputs, "merge must take exactly the shards' files"


def test_files_chain_from_task_to_task(report: dict[str, Any]) -> None:
    plan = report["runs"]["4"]["plan"]
    prepare, merge, extract, score = (parse(plan[name]) for name in ("prepare", "merge", "extract", "score"))
    assert prepare.benchmark == report["params"]["benchmark"]
    assert str(prepare.input) == f"/data/inputs/{report['params']['input']}"
    assert extract.input == merge.output and score.input == extract.output
    assert extract.no_judge is True, "the default params choose no judge"
    assert plan["metrics"] == str(score.output)
    run_folder = Path(prepare.output).parent
    assert run_folder.parent == Path("/data/runs") and ":" not in run_folder.name
    assert all(Path(path).is_relative_to(run_folder) for path in (merge.output, extract.output, score.output))
