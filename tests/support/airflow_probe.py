"""Load the example DAG with Airflow's own DagBag and print what the DAG test checks, as JSON.

Runs in the separate Airflow virtualenv (``make airflow-env``), never in mmbatch's: ``tests/test_airflow_dag.py``
starts it with that venv's Python. Usage: ``python airflow_probe.py DAG_FOLDER NUM_SHARDS...`` (one planned run
per shard count).
"""

from __future__ import annotations

import json
import sys
from typing import Any


def main(dag_folder: str, shard_counts: list[int]) -> dict[str, Any]:
    """Load the DAG folder and describe the ``mmbatch_eval`` DAG and a planned run of it per shard count."""
    from airflow.dag_processing.dagbag import DagBag
    from airflow.providers.docker.operators.docker import DockerOperator

    bag = DagBag(dag_folder=dag_folder)
    report: dict[str, Any] = {"import_errors": {k: str(v) for k, v in bag.import_errors.items()},
                              "dag_ids": sorted(bag.dags)}
    if "mmbatch_eval" not in bag.dags:
        return report
    dag = bag.dags["mmbatch_eval"]
    report["tasks"] = {}
    for task in dag.tasks:
        mapped = bool(getattr(task, "is_mapped", False))
        operator = task.operator_class if mapped else type(task)
        report["tasks"][task.task_id] = {
            "upstream": sorted(task.upstream_task_ids),
            "mapped": mapped,
            "operator": operator.__name__,
            "docker": isinstance(operator, type) and issubclass(operator, DockerOperator),
            "image": _planned(task.partial_kwargs.get("image") if mapped else getattr(task, "image", None)),
            "trigger_rule": getattr(rule := task.partial_kwargs.get("trigger_rule", "all_success"), "value", rule)
            if mapped else getattr(task.trigger_rule, "value", task.trigger_rule),
            "skip_on_exit_code": task.partial_kwargs.get("skip_on_exit_code") if mapped
            else list(getattr(task, "skip_on_exit_code", None) or []),
        }
    infer = dag.get_task("infer")
    report["infer_expands_over"] = infer.expand_input.value.operator.task_id
    report["infer_requests_gpus"] = bool(infer.partial_kwargs.get("device_requests"))
    extract = dag.get_task("extract")
    report["extract_environment"] = _planned(extract.environment)
    report["extract_judge_environment"] = extract.judge_environment()  # the Variable comes from AIRFLOW_VAR_*

    report["runs"] = {}
    for num_shards in shard_counts:
        params = {**{key: dag.params[key] for key in dag.params}, "num_shards": num_shards}
        run_id = "manual__2026-01-01T00:00:00+00:00"
        plan = dag.get_task("plan").python_callable(params=params, run_id=run_id)
        shards = dag.get_task("plan_shards").python_callable(params=params, run_id=run_id)
        # What mapping does at run time: one operator per element, from the partial arguments plus the element.
        operators = [DockerOperator(task_id=f"infer_{k}", image=infer.partial_kwargs["image"], **element)
                     for k, element in enumerate(shards)]
        report["runs"][num_shards] = {
            "plan": plan,
            "shard_commands": [{"command": op.command, "environment": op.environment, "pool": op.pool}
                               for op in operators],
        }
    report["params"] = {key: dag.params[key] for key in dag.params}
    report["benchmark_choices"] = dag.params.get_param("benchmark").schema.get("enum")
    return report


def _planned(value: Any) -> Any:
    """A task argument as JSON: the value itself, or ``{"planned": KEY}`` for one that ``plan`` decides per run."""
    from airflow.sdk.definitions.xcom_arg import XComArg

    if isinstance(value, XComArg):
        return {"planned": getattr(value, "key", None)}
    return value


if __name__ == "__main__":
    print("PROBE " + json.dumps(main(sys.argv[1], [int(n) for n in sys.argv[2:]])))
