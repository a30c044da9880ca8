"""An Airflow DAG that evaluates one model on one benchmark with mmbatch, inference fanned out over N shards.

    plan ──> prepare ──> infer (N mapped shards, --shard K/N) ──> merge ──> extract ──> score
                 plan_shards ──┘

Every stage is the ``mmbatch`` container (``mmbatch:light``, or ``mmbatch:full`` for ``infer``) run by
``DockerOperator`` with the host data folder mounted at ``/data``. ``plan`` decides every file path of the run once
and hands each task its command through XCom, so the tasks pass file paths, never data. A retried shard resumes its
finished rows, and the run folder is keyed by the DAG run, so reruns of a task are safe.

Copy this file into your ``dags/`` folder and set, in the scheduler's environment:

- ``MMBATCH_HOST_DATA``: the host folder mounted at ``/data`` (benchmark files under ``inputs/``, runs under ``runs/``);
- ``MMBATCH_IMAGE_LIGHT`` / ``MMBATCH_IMAGE_FULL``: the image tags (default ``mmbatch:light`` / ``mmbatch:full``);
- ``MMBATCH_GPUS``: GPUs per Docker host; shard K runs on GPU ``K % MMBATCH_GPUS`` through ``CUDA_VISIBLE_DEVICES``
  (``0``: no GPU is requested, for workers that only call a vLLM server with ``backend=openai``).

and create one Airflow pool of one slot per GPU, so that two shards never share a GPU (shard K takes a slot of
``mmbatch_gpu_<K % MMBATCH_GPUS>``; the others wait for it): ``airflow pools set mmbatch_gpu_0 1 "mmbatch GPU 0"``,
and so on up to ``mmbatch_gpu_<MMBATCH_GPUS - 1>``.

Exit status 3 (finished, some rows failed: they are in the file with an ``error``) leaves an infer shard or extract
*skipped*, not failed, and the next stage still runs, as ``examples/pipeline.sh`` goes on; clear the skipped task to
retry only its failed rows, then clear what follows. The judge's key, when a judge model is chosen, comes from the
Airflow Variable ``mmbatch_judge_api_key``, read when the extract task runs and handed to the container through
``private_environment``: it never enters a templated field (rendered and stored by Airflow). On Kubernetes, swap
``DockerOperator`` for ``KubernetesPodOperator`` with the same image and ``arguments=`` instead of ``command=``.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pendulum
from airflow.providers.docker.operators.docker import DockerOperator
from airflow.sdk import Param, Variable, dag, task
from docker.types import DeviceRequest, Mount

HOST_DATA = os.environ.get("MMBATCH_HOST_DATA", "/srv/mmbatch")
IMAGE_LIGHT = os.environ.get("MMBATCH_IMAGE_LIGHT", "mmbatch:light")
IMAGE_FULL = os.environ.get("MMBATCH_IMAGE_FULL", "mmbatch:full")
GPUS_PER_HOST = int(os.environ.get("MMBATCH_GPUS", "1"))

MOUNTS = [
    Mount(source=HOST_DATA, target="/data", type="bind"),
    Mount(source="mmbatch-hf-cache", target="/hf-cache", type="volume"),
]
COMMON: dict[str, Any] = {
    "mounts": MOUNTS,
    "mount_tmp_dir": False,
    "auto_remove": "success",
    "retries": 2,
}
ROWS_FAILED = 3
"""mmbatch's exit status for "finished, some rows failed": the stage's file is complete, the next stage may run."""
JUDGE_KEY_VARIABLE = "mmbatch_judge_api_key"


class JudgeDockerOperator(DockerOperator):
    """A ``DockerOperator`` that gives the container the judge's key through ``private_environment``, read from the
    Airflow Variable when the task runs, so the key is in no templated field, rendered view or serialized DAG."""

    def judge_environment(self) -> dict[str, str]:
        """``OPENAI_API_KEY`` from the Variable, or nothing when it is not set (the rules-only runs need none)."""
        key = Variable.get(JUDGE_KEY_VARIABLE, default="")
        return {"OPENAI_API_KEY": key} if key else {}

    def execute(self, context: Any) -> Any:
        self.private_environment = {**(self.private_environment or {}), **self.judge_environment()}
        return super().execute(context)


def stage_commands(run_dir: str, params: dict[str, Any]) -> dict[str, Any]:
    """Every task's mmbatch command for one run, with the file each stage hands to the next.

    Args:
        run_dir: the run's folder inside the container (under ``/data``).
        params: the DAG run's params (benchmark, input, backend, model, base_url, num_shards, judge_model).

    Returns:
        ``prepare``, ``merge``, ``extract`` and ``score`` commands (argument lists), ``infer_shards`` (one
        ``{"command": [...], "environment": {...}, "pool": ...}`` per shard, for ``expand_kwargs``) and ``metrics``
        (the final file's path).
    """
    n = int(params["num_shards"])
    prepared = f"{run_dir}/prepared.parquet"
    predictions, extracted = f"{run_dir}/predictions.parquet", f"{run_dir}/extracted.parquet"
    # Every shard names the same --output; shard K writes predictions.shard-K-of-N.parquet beside it.
    shard_files = [f"{run_dir}/predictions.shard-{k}-of-{n}.parquet" for k in range(n)]
    model = ["--backend", params["backend"], "--model", params["model"]]
    if params.get("base_url"):
        model += ["--base-url", params["base_url"], "--concurrency", str(params["concurrency"])]
    judge = ["--judge-model", params["judge_model"]] if params.get("judge_model") else ["--no-judge"]
    return {
        "prepare": ["prepare", "--benchmark", params["benchmark"], "--input", f"/data/inputs/{params['input']}",
                    "--output", prepared],
        "infer_shards": [
            {"command": ["infer", "--input", prepared, "--output", predictions, *model, "--shard", f"{k}/{n}"],
             "environment": shard_environment(k, offline=bool(params.get("hf_hub_offline", True))),
             "pool": shard_pool(k)}
            for k in range(n)
        ],
        "merge": ["merge", "--output", predictions, *shard_files],
        "extract": ["extract", "--input", predictions, "--output", extracted, *judge],
        "score": ["score", "--input", extracted, "--output", f"{run_dir}/metrics.json"],
        "metrics": f"{run_dir}/metrics.json",
    }


def shard_environment(k: int, *, offline: bool) -> dict[str, str]:
    """Shard ``k``'s container environment: its GPU on a multi-GPU host, and whether the Hub may be reached."""
    environment = {"HF_HUB_OFFLINE": "1" if offline else "0"}
    if GPUS_PER_HOST > 0:
        environment["CUDA_VISIBLE_DEVICES"] = str(k % GPUS_PER_HOST)
    return environment


def shard_pool(k: int) -> str:
    """The pool of shard ``k``'s GPU: one slot per GPU, so a shard waits until no other shard holds its GPU."""
    return f"mmbatch_gpu_{k % GPUS_PER_HOST}" if GPUS_PER_HOST > 0 else "default_pool"


def run_folder(run_id: str) -> str:
    """The run's folder inside the container: one per DAG run, so concurrent runs never share files."""
    return "/data/runs/" + re.sub(r"[^A-Za-z0-9_.-]", "_", run_id)


@dag(
    dag_id="mmbatch_eval",
    schedule=None,
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    catchup=False,
    tags=["mmbatch", "evaluation"],
    params={
        "benchmark": Param("mmbench", enum=["mmbench", "mme", "seedbench", "seedbench2"]),
        "input": Param("MMBench_DEV_EN.tsv", type="string", description="benchmark file under <data>/inputs/"),
        "backend": Param("hf", enum=["hf", "openai", "echo"]),
        "model": Param("llava-hf/llava-1.5-7b-hf", type="string"),
        "base_url": Param("", type="string", description="an OpenAI-compatible server (vLLM); empty for hf"),
        "concurrency": Param(64, type="integer", minimum=1),
        "num_shards": Param(4, type="integer", minimum=1, description="one infer task (and GPU) per shard"),
        "judge_model": Param("", type="string", description="empty: official rules only (--no-judge)"),
        "hf_hub_offline": Param(True, type="boolean",
                                description="load the model from the hf-cache volume only (fill it first)"),
    },
)
def mmbatch_eval() -> None:
    """Prepare once, infer over ``num_shards`` mapped shards, merge, extract and score."""

    @task(multiple_outputs=True)
    def plan(params: dict[str, Any] | None = None, run_id: str | None = None) -> dict[str, Any]:
        """Fix the run folder and every stage's command (each one is an XCom of its own)."""
        assert params is not None and run_id is not None
        return stage_commands(run_folder(run_id), params)

    @task
    def plan_shards(params: dict[str, Any] | None = None, run_id: str | None = None) -> list[dict[str, Any]]:
        """The per-shard infer arguments; a task of its own because Airflow maps only over a return value."""
        assert params is not None and run_id is not None
        return stage_commands(run_folder(run_id), params)["infer_shards"]

    commands = plan()
    prepare = DockerOperator(task_id="prepare", image=IMAGE_LIGHT, command=commands["prepare"], **COMMON)
    infer = DockerOperator.partial(
        task_id="infer",
        image=IMAGE_FULL,
        # Every GPU is handed to the container and CUDA_VISIBLE_DEVICES picks the shard's; none when MMBATCH_GPUS=0.
        device_requests=[DeviceRequest(count=-1, capabilities=[["gpu"]])] if GPUS_PER_HOST > 0 else None,
        shm_size=8 << 30,
        skip_on_exit_code=ROWS_FAILED,
        **COMMON,
    ).expand_kwargs(plan_shards())
    # none_failed: a shard skipped for exit 3 wrote its whole file (failed rows carry an `error`), so merge goes on.
    merge = DockerOperator(task_id="merge", image=IMAGE_LIGHT, command=commands["merge"], trigger_rule="none_failed",
                           **COMMON)
    extract = JudgeDockerOperator(task_id="extract", image=IMAGE_LIGHT, command=commands["extract"],
                                  skip_on_exit_code=ROWS_FAILED, **COMMON)
    score = DockerOperator(task_id="score", image=IMAGE_LIGHT, command=commands["score"], trigger_rule="none_failed",
                           **COMMON)
    commands >> prepare >> infer >> merge >> extract >> score


mmbatch_eval()
