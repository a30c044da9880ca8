"""Run the example DAG for real with Airflow's ``dag.test()``, each container played by a stand-in Docker engine.

Runs in the separate Airflow virtualenv (``make airflow-env``), never in mmbatch's: ``tests/test_airflow_benchmarks.py``
starts it with that venv's Python. Airflow schedules the run as it would (params, XCom, the mapped shards, trigger
rules, ``skip_on_exit_code``, ``private_environment``); only the Docker engine, which cannot run here, is replaced:
:class:`StandInEngine` answers the Docker API calls ``DockerOperator`` makes and runs each container's command as
``python -m mmbatch`` with the container's environment alone, its bind mounts in place of their targets (``/data``
-> the host folder) and its image's settings (``HF_HOME=/hf-cache``).

Usage: ``python airflow_run.py DAG_FOLDER RUNS_JSON`` where RUNS_JSON is ``{"name": conf, ...}``; the environment
gives ``MMBATCH_HOST_DATA`` (read by the DAG), ``RECIPE_PYTHON`` (mmbatch's interpreter) and ``RECIPE_PYTHONPATH``
(where the image would have mmbatch installed). Prints ``RUN <json>`` with every run's task states and containers.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

IMAGE_ENVIRONMENT = {"HF_HOME": "/hf-cache"}
"""What the Dockerfile's images set for every container."""


class StandInEngine:
    """The Docker API calls ``DockerOperator`` makes, answered by running the container's command locally."""

    def __init__(self, log: list[dict[str, Any]]) -> None:
        self.log = log
        self.containers: dict[str, dict[str, Any]] = {}
        self.ids = itertools.count()
        self.volumes = tempfile.mkdtemp(prefix="volumes-")

    def images(self, name: str) -> list[dict[str, str]]:
        """Every image is present (none is pulled)."""
        return [{"Id": name}]

    def create_host_config(self, **settings: Any) -> dict[str, Any]:
        """The host settings, kept for :meth:`start`."""
        return settings

    def create_container(self, *, command: list[str], environment: dict[str, str], host_config: dict[str, Any],
                         image: str, **_: Any) -> dict[str, str]:
        """Record the container; it runs when started."""
        container_id = f"c{next(self.ids)}"
        targets = {}
        for mount in host_config["mounts"]:
            source = mount["Source"]
            if mount["Type"] == "volume":  # a named volume: a folder of its own
                source = os.path.join(self.volumes, source)
                os.makedirs(source, exist_ok=True)
            targets[mount["Target"]] = source
        self.containers[container_id] = {"command": list(command), "environment": dict(environment),
                                         "image": image, "targets": targets}
        return {"Id": container_id}

    def attach(self, container: str, **_: Any) -> Iterator[bytes]:
        """The container's output, read once it has run."""
        yield from (line.encode() + b"\n" for line in self.containers[container].get("output", "").splitlines())

    def start(self, container: str) -> None:
        """Run ``mmbatch COMMAND`` as the container would: its environment only, its mounts in place."""
        spec = self.containers[container]
        targets = spec["targets"]

        def host(value: str) -> str:
            for target, source in targets.items():
                if value == target or value.startswith(target + "/"):
                    return source + value[len(target):]
            return value

        env = {"PATH": os.environ["PATH"], "PYTHONPATH": os.environ["RECIPE_PYTHONPATH"], "COLUMNS": "200"}
        env.update({key: host(value) for key, value in {**IMAGE_ENVIRONMENT, **spec["environment"]}.items()})
        argv = [host(arg) for arg in spec["command"]]
        result = subprocess.run([os.environ["RECIPE_PYTHON"], "-m", "mmbatch", *argv], env=env, cwd=targets["/data"],
                                capture_output=True, text=True, timeout=300)
        spec.update(output=result.stdout + result.stderr, status=result.returncode)
        self.log.append({"image": spec["image"], "command": spec["command"], "environment": spec["environment"],
                         "status": result.returncode, "output": spec["output"][-2000:]})

    def wait(self, container: str) -> dict[str, int]:
        """The container's exit status."""
        return {"StatusCode": self.containers[container]["status"]}

    def remove_container(self, container: str, **_: Any) -> None:
        """Nothing to remove."""


def main(dag_folder: str, runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Run the ``mmbatch_eval`` DAG once per conf in ``runs``; each run's task states and containers."""
    from airflow.dag_processing.dagbag import DagBag
    from airflow.providers.docker.operators.docker import DockerOperator
    from airflow.utils import db

    db.initdb()
    bag = DagBag(dag_folder=dag_folder)
    if "mmbatch_eval" not in bag.dags:
        return {"import_errors": {k: str(v) for k, v in bag.import_errors.items()}}
    dag = bag.dags["mmbatch_eval"]
    for task in dag.tasks:  # a failed task fails the run at once, instead of waiting for its retries
        if getattr(task, "is_mapped", False):
            task.partial_kwargs["retries"] = 0
        else:
            task.retries = 0
    report: dict[str, Any] = {}
    for name, conf in runs.items():
        log: list[dict[str, Any]] = []
        engine = StandInEngine(log)
        DockerOperator.cli = property(lambda self, engine=engine: engine)  # type: ignore[method-assign, assignment]
        run = dag.test(run_conf=conf)
        states = {f"{ti.task_id}[{ti.map_index}]" if ti.map_index >= 0 else ti.task_id: str(ti.state)
                  for ti in run.get_task_instances()}
        report[name] = {"state": str(run.state), "run_id": run.run_id, "tasks": states, "containers": log}
    return report


if __name__ == "__main__":
    print("RUN " + json.dumps(main(sys.argv[1], json.loads(sys.argv[2]))), flush=True)
