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
  (``0``: no GPU is requested, for workers that only call a vLLM server with ``backend=openai``);
- any other ``MMBATCH_*`` variable (``MMBATCH_BATCH_SIZE``...): every container gets it, as every stage reads it;
  ``MMBATCH_JUDGE_MODEL`` and ``MMBATCH_JUDGE_BASE_URL`` are the defaults of the ``judge_model`` and
  ``judge_base_url`` params; ``MMBATCH_DATA`` (a host folder: ``mmbatch fetch``'s files, read when ``input`` is
  empty) is mounted at ``/mmbatch-data``. The judge's key is never one of them (see below).

and create one Airflow pool of one slot per GPU, so that two shards never share a GPU (shard K takes a slot of
``mmbatch_gpu_<K % MMBATCH_GPUS>``; the others wait for it): ``airflow pools set mmbatch_gpu_0 1 "mmbatch GPU 0"``,
and so on up to ``mmbatch_gpu_<MMBATCH_GPUS - 1>``.

The benchmark's media files (SEED-Bench's images and videos) lie under ``<MMBATCH_HOST_DATA>/inputs/`` too:
the ``media_root`` param names their folder there, and prepare, infer and extract read them from it. SEED-Bench-2's
extract runs in the full image, which holds the CLIP model its image-generation rows are decided by.

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
FETCHED_DATA = os.environ.get("MMBATCH_DATA", "")
FETCHED_DATA_TARGET = "/mmbatch-data"

DAG_VARIABLES = {"MMBATCH_HOST_DATA", "MMBATCH_IMAGE_LIGHT", "MMBATCH_IMAGE_FULL", "MMBATCH_GPUS", "MMBATCH_DATA"}
"""The ``MMBATCH_*`` variables that configure this DAG itself, not a stage."""
SECRET_VARIABLES = {"MMBATCH_JUDGE_API_KEY"}
"""Never in a container's ``environment``: Airflow renders and stores it (the key goes through
``private_environment``)."""
BENCHMARKS = ["mmbench", "ccbench", "mme", "seedbench", "seedbench2", "pope", "mmstar", "hallusionbench", "ai2d",
              "realworldqa", "scienceqa", "aokvqa", "mmtbench", "blink", "textvqa", "chartqa", "ocrvqa", "ocrbench",
              "docvqa", "infovqa", "gqa", "mathvista", "mathvision", "mmvet", "llavabench", "mmmu"]
"""Every benchmark of ``mmbatch list`` (this file cannot import mmbatch: it runs in Airflow's environment)."""
CLIP_BENCHMARKS = {"seedbench2"}
"""Benchmarks whose extract may decide rows with a CLIP model (SEED-Bench-2's image generation): the full image."""

MOUNTS = [
    Mount(source=HOST_DATA, target="/data", type="bind"),
    Mount(source="mmbatch-hf-cache", target="/hf-cache", type="volume"),
    *([Mount(source=FETCHED_DATA, target=FETCHED_DATA_TARGET, type="bind")] if FETCHED_DATA else []),
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
        # DockerOperator keeps its private_environment argument as `_private_environment` (provider 4.6.1, pinned).
        self._private_environment = {**self._private_environment, **self.judge_environment()}
        return super().execute(context)


def stage_environment() -> dict[str, str]:
    """The ``MMBATCH_*`` variables of this worker that every stage reads (neither the DAG's own nor a secret), and
    ``MMBATCH_DATA`` as the containers see the fetched data folder."""
    environment = {key: value for key, value in sorted(os.environ.items())
                   if key.startswith("MMBATCH_") and key not in DAG_VARIABLES | SECRET_VARIABLES}
    if FETCHED_DATA:
        environment["MMBATCH_DATA"] = FETCHED_DATA_TARGET
    return environment


def stage_commands(run_dir: str, params: dict[str, Any]) -> dict[str, Any]:
    """Every task's mmbatch command for one run, with the file each stage hands to the next.

    Args:
        run_dir: the run's folder inside the container (under ``/data``).
        params: the DAG run's params (benchmark, input, media_root, backend, model, base_url, num_shards,
            judge_model, judge_base_url).

    Returns:
        ``prepare``, ``merge``, ``extract`` and ``score`` commands (argument lists), ``infer_shards`` (one
        ``{"command": [...], "environment": {...}, "pool": ...}`` per shard, for ``expand_kwargs``), ``environment``
        (every other stage's), ``extract_image`` and ``metrics`` (the final file's path).

    Raises:
        ValueError: ``judge_base_url`` without ``judge_model``.
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
    if params.get("judge_base_url"):
        if not params.get("judge_model"):
            raise ValueError("judge_base_url is set but judge_model is not: name the model the judge server serves")
        judge += ["--judge-base-url", params["judge_base_url"]]
    # Media files (SEED-Bench's image_path/video_path rows, SEED-Bench-2's option pictures): prepare checks them,
    # infer and extract read them, each only under the folder named here.
    media = ["--media-root", f"/data/inputs/{params['media_root']}"] if params.get("media_root") else []
    source = ["--input", f"/data/inputs/{params['input']}"] if params.get("input") else []
    return {
        "prepare": ["prepare", "--benchmark", params["benchmark"], *source, *media, "--output", prepared],
        "infer_shards": [
            {"command": ["infer", "--input", prepared, "--output", predictions, *model, *media, "--shard", f"{k}/{n}"],
             "environment": shard_environment(k, offline=bool(params.get("hf_hub_offline", True))),
             "pool": shard_pool(k)}
            for k in range(n)
        ],
        "merge": ["merge", "--output", predictions, *shard_files],
        "extract": ["extract", "--input", predictions, "--output", extracted, *judge, *media],
        "extract_image": IMAGE_FULL if params["benchmark"] in CLIP_BENCHMARKS else IMAGE_LIGHT,
        "score": ["score", "--input", extracted, "--output", f"{run_dir}/metrics.json"],
        "environment": stage_environment(),
        "metrics": f"{run_dir}/metrics.json",
    }


def shard_environment(k: int, *, offline: bool) -> dict[str, str]:
    """Shard ``k``'s container environment: its GPU on a multi-GPU host, and whether the Hub may be reached."""
    environment = {**stage_environment(), "HF_HUB_OFFLINE": "1" if offline else "0"}
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
        "benchmark": Param("mmbench", enum=BENCHMARKS),
        "input": Param("MMBench_DEV_EN.tsv", type="string",
                       description="benchmark file under <data>/inputs/; empty: the file `mmbatch fetch` put in "
                                   "MMBATCH_DATA"),
        "media_root": Param("", type="string",
                            description="the folder of the benchmark's media files under <data>/inputs/ "
                                        "(SEED-Bench's images and videos); empty: none"),
        "backend": Param("hf", enum=["hf", "openai", "echo"]),
        "model": Param("llava-hf/llava-1.5-7b-hf", type="string"),
        "base_url": Param("", type="string", description="an OpenAI-compatible server (vLLM); empty for hf"),
        "concurrency": Param(64, type="integer", minimum=1),
        "num_shards": Param(4, type="integer", minimum=1, description="one infer task (and GPU) per shard"),
        "judge_model": Param(os.environ.get("MMBATCH_JUDGE_MODEL", ""), type="string",
                             description="empty: official rules only (--no-judge)"),
        "judge_base_url": Param(os.environ.get("MMBATCH_JUDGE_BASE_URL", ""), type="string",
                                description="the judge's OpenAI-compatible server; empty: the official API"),
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
    environment = commands["environment"]
    prepare = DockerOperator(task_id="prepare", image=IMAGE_LIGHT, command=commands["prepare"],
                             environment=environment, **COMMON)
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
                           environment=environment, **COMMON)
    extract = JudgeDockerOperator(task_id="extract", image=commands["extract_image"], command=commands["extract"],
                                  environment=environment, skip_on_exit_code=ROWS_FAILED, **COMMON)
    score = DockerOperator(task_id="score", image=IMAGE_LIGHT, command=commands["score"], trigger_rule="none_failed",
                           environment=environment, **COMMON)
    commands >> prepare >> infer >> merge >> extract >> score


mmbatch_eval()
