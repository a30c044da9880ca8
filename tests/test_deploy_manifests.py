"""The Kubernetes and Slurm examples call the real CLI with real options, and wire the shard variables right.

Every mmbatch invocation they contain is parsed by ``mmbatch.cli.build_parser()`` with the environment the pod or
task would have, so a renamed or misspelt option, a bad choice or a missing required option fails here.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mmbatch.cli import build_parser
from mmbatch.errors import BadInputError
from mmbatch.infer.outputs import shard_output_path, shard_outputs_beside
from mmbatch.shards import Shard, shard_from_environment
from tests.support.deploy import REPO_ROOT, SLURM, Call, containers, expand, jobs, kubernetes_documents, run_recorded

REGISTRY = "${MMBATCH_REGISTRY}"
"""The one place a user sets where the images come from (examples/kubernetes/apply.sh)."""
SHARD_KEYS = ("JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN")


def parse_with_env(argv: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> object:
    """``build_parser().parse_args(argv)`` as mmbatch would see it with ``env`` set; fails the test on a usage error."""
    for key in [key for key in os.environ if key.startswith("MMBATCH_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        if key.startswith("MMBATCH_") and isinstance(value, str):
            monkeypatch.setenv(key, value)
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            return build_parser().parse_args(argv)
    except SystemExit:
        pytest.fail(f"mmbatch rejects {argv}: {stderr.getvalue().strip()}")


def literal_env(env: dict[str, object]) -> dict[str, str]:
    return {key: value for key, value in env.items() if isinstance(value, str)}


def test_every_manifest_is_valid_yaml_with_the_expected_kinds() -> None:
    kinds = sorted(doc["kind"] for doc in kubernetes_documents())
    assert kinds == ["Job", "Job", "Job", "PersistentVolumeClaim", "PersistentVolumeClaim", "RayJob"]
    assert set(jobs()) == {"mmbatch-prepare", "mmbatch-infer", "mmbatch-merge-score"}


@pytest.mark.parametrize("job_name", ["mmbatch-prepare", "mmbatch-infer", "mmbatch-merge-score"])
def test_kubernetes_containers_use_real_cli_options(job_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    job = jobs()[job_name]
    assert job["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True
    for container in containers(job):
        argv = expand(container.args, {"JOB_COMPLETION_INDEX": "0"})
        args = parse_with_env(argv, literal_env(container.env), monkeypatch)
        assert args.command == container.args[0]  # type: ignore[attr-defined]
        wanted_image = f"{REGISTRY}/mmbatch:{'full' if args.command == 'infer' else 'light'}"  # type: ignore[attr-defined]
        assert container.image == wanted_image, f"{container.name} runs {args.command} on {container.image}"
        for path in (arg for arg in argv if arg.startswith("/")):
            assert any(path.startswith(mount + "/") for mount in container.mounts), f"{path} is on no volume"
        assert "--shard" not in argv, "the shard comes from the Indexed Job's environment"


def test_indexed_job_wires_the_completion_index_to_the_shard(tmp_path: Path) -> None:
    job = jobs()["mmbatch-infer"]
    spec = job["spec"]
    (container,) = containers(job)
    assert spec["completionMode"] == "Indexed"
    assert spec["parallelism"] == spec["completions"]
    index_source = container.env["JOB_COMPLETION_INDEX"]["fieldRef"]["fieldPath"]  # type: ignore[index]
    assert index_source == "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    n = spec["completions"]
    assert container.env["MMBATCH_NUM_SHARDS"] == str(n)
    outputs = set()
    for k in range(n):
        env = {"JOB_COMPLETION_INDEX": str(k), "MMBATCH_NUM_SHARDS": container.env["MMBATCH_NUM_SHARDS"]}
        assert shard_from_environment(env) == Shard(k, n)
        argv = expand(container.args, env)
        outputs.add(str(shard_output_path(Path(argv[argv.index("--output") + 1]), Shard(k, n))))
    assert len(outputs) == n, "each shard must write its own file"
    merge = containers(jobs()["mmbatch-merge-score"])[0]
    assert merge.args == ["merge", "--output", "/data/run/predictions.parquet"], \
        "merge names no shard file: it finds them beside --output, whatever the shard count"
    # Those it finds are exactly the infer pods' files, here laid out under a stand-in for the volume.
    volume = tmp_path / "data"
    for output in outputs:
        target = volume / Path(output).relative_to("/data")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()
    (volume / "run" / "predictions.shard-0-of-4.parquet.meta.json").touch()  # beside, but not a shard file
    found = shard_outputs_beside(volume / "run" / "predictions.parquet")
    assert [f"/data/{path.relative_to(volume)}" for path in found] == sorted(outputs)


def test_merge_refuses_leftover_shards_of_another_count(tmp_path: Path) -> None:
    for name in ("p.shard-0-of-2.parquet", "p.shard-1-of-2.parquet", "p.shard-0-of-3.parquet"):
        (tmp_path / name).touch()
    with pytest.raises(BadInputError, match=r"shard files of 2 different shard counts \(2, 3\)"):
        shard_outputs_beside(tmp_path / "p.parquet")
    with pytest.raises(BadInputError, match="no shard files"):
        shard_outputs_beside(tmp_path / "q.parquet")


@pytest.mark.parametrize("job_name", ["mmbatch-prepare", "mmbatch-infer", "mmbatch-merge-score"])
def test_every_container_requests_cpu_and_memory(job_name: str) -> None:
    pod = jobs()[job_name]["spec"]["template"]["spec"]
    for spec in [*pod.get("initContainers", []), *pod["containers"]]:
        requests = spec.get("resources", {}).get("requests", {})
        assert {"cpu", "memory"} <= set(requests), f"{job_name}/{spec['name']} requests no CPU or memory"
        assert "memory" in spec["resources"].get("limits", {}), f"{job_name}/{spec['name']} has no memory limit"


def test_kubernetes_files_chain_from_stage_to_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    chain = [*containers(jobs()["mmbatch-prepare"]), *containers(jobs()["mmbatch-merge-score"])]
    parsed = {c.name: parse_with_env(expand(c.args, {}), literal_env(c.env), monkeypatch) for c in chain}
    infer = parse_with_env(expand(containers(jobs()["mmbatch-infer"])[0].args, {}), {}, monkeypatch)
    assert infer.input == parsed["prepare"].output  # type: ignore[attr-defined]
    assert parsed["extract"].input == parsed["merge"].output  # type: ignore[attr-defined]
    assert parsed["score"].input == parsed["extract"].output  # type: ignore[attr-defined]


def mmbatch_calls(calls: list[Call]) -> list[list[str]]:
    return [call.argv for call in calls if call.tool == "mmbatch-recorder"]


def test_slurm_array_task_reads_its_shard_from_the_environment(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    script = SLURM / "infer-array.sbatch"
    directives = [line for line in script.read_text().splitlines() if line.startswith("#SBATCH")]
    assert "#SBATCH --array=0-3" in directives and "#SBATCH --gres=gpu:1" in directives
    outputs = set()
    for k in range(4):
        slurm_env = {"SLURM_ARRAY_TASK_ID": str(k), "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0",
                     "RUN_DIR": "/scratch/run"}
        calls = run_recorded(script, slurm_env, tmp_path / f"task{k}.log")
        (argv,) = mmbatch_calls(calls)
        args = parse_with_env(argv, calls[0].env, monkeypatch)
        assert args.command == "infer" and "--shard" not in argv  # type: ignore[attr-defined]
        assert shard_from_environment({key: calls[0].env[key] for key in SHARD_KEYS if key in calls[0].env}) \
            == Shard(k, 4)
        assert calls[0].env["HF_HUB_OFFLINE"] == "1"
        outputs.add(str(shard_output_path(args.output, Shard(k, 4))))  # type: ignore[attr-defined]
    assert len(outputs) == 4

    merge_calls = mmbatch_calls(run_recorded(SLURM / "merge-score.sbatch", {"NUM_SHARDS": "4",
                                                                            "RUN_DIR": "/scratch/run"},
                                             tmp_path / "merge.log"))
    assert [argv[0] for argv in merge_calls] == ["merge", "extract", "score"]
    parsed = [parse_with_env(argv, {}, monkeypatch) for argv in merge_calls]
    assert {str(path) for path in parsed[0].inputs} == outputs  # type: ignore[attr-defined]
    assert parsed[1].input == parsed[0].output and parsed[2].input == parsed[1].output  # type: ignore[attr-defined]
    assert parsed[1].no_judge is True  # type: ignore[attr-defined]


def test_slurm_submit_chains_prepare_array_and_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = run_recorded(SLURM / "submit.sh", {"RUN_DIR": str(tmp_path / "run")}, tmp_path / "submit.log",
                         "MMBench_DEV_EN.tsv", "8", job_id="777")
    (prepare,) = mmbatch_calls(calls)
    assert parse_with_env(prepare, {}, monkeypatch).command == "prepare"  # type: ignore[attr-defined]
    array, merge = [call.argv for call in calls if call.tool == "sbatch"]
    assert "--array=0-7" in array and array[-1].endswith("infer-array.sbatch")
    assert "--dependency=afterok:777" in merge and "--export=ALL,NUM_SHARDS=8" in merge
    assert merge[-1].endswith("merge-score.sbatch")


DOCS = REPO_ROOT / "docs" / "scale.md"
DOC_VARIABLES = {"k": "0", "N": "8", "PWD": "/work", "HOME": "/home/me"}


def documented_mmbatch_commands(markdown: str) -> list[list[str]]:
    """The argument lists of every ``mmbatch`` call in the document's bash blocks (direct or via ``docker run``)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", markdown, flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\$\{?(\w+)\}?", lambda m: DOC_VARIABLES.get(m.group(1), "X"), line)
            words = shlex.split(line, comments=True)
            starts = [i for i, word in enumerate(words) if word == "mmbatch" or word.startswith("mmbatch:")]
            if starts:
                args = words[starts[0] + 1:]
                commands.append(args[:-1] if args and args[-1] == "&" else args)
    return commands


def test_scale_docs_commands_use_real_cli_options(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/scale.md promises commands a user can copy: each one must parse with the real CLI."""
    commands = documented_mmbatch_commands(DOCS.read_text())
    assert {argv[0] for argv in commands} >= {"prepare", "infer", "merge", "extract", "score", "run", "validate"}
    for argv in commands:
        parse_with_env(argv, {}, monkeypatch)


def test_slurm_runs_the_container_from_a_sif_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`apptainer exec docker://mmbatch:full` cannot resolve (no such image on Docker Hub): a SIF file is used."""
    sif, run = "/images/mmbatch-full.sif", "/scratch/run"
    slurm_env = {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0",
                 "RUN_DIR": run, "SIF": sif}
    (infer,) = run_recorded(SLURM / "infer-array.sbatch", slurm_env, tmp_path / "infer.log", local=False)
    assert infer.tool == "apptainer" and infer.argv[:6] == ["exec", "--nv", "--bind", run, sif, "mmbatch"]
    assert parse_with_env(infer.argv[6:], {}, monkeypatch).command == "infer"  # type: ignore[attr-defined]
    merge_calls = run_recorded(SLURM / "merge-score.sbatch", {"NUM_SHARDS": "4", "RUN_DIR": run, "SIF": sif},
                               tmp_path / "merge.log", local=False)
    assert [call.argv[:5] for call in merge_calls] == [["exec", "--bind", run, sif, "mmbatch"]] * 3
    submitted = run_recorded(SLURM / "submit.sh", {"RUN_DIR": str(tmp_path / "run"), "SIF": sif},
                             tmp_path / "submit.log", "MMBench_DEV_EN.tsv", "2", local=False)
    prepare = next(call for call in submitted if call.tool == "apptainer")
    assert prepare.argv[3:6] == [sif, "mmbatch", "prepare"]
    assert all("MMBATCH" not in call.env for call in submitted if call.tool == "sbatch"), \
        "the tasks choose their command from SIF themselves"
    for path in [*SLURM.iterdir(), DOCS]:
        for line in path.read_text().splitlines():
            assert not ("apptainer exec" in line and "docker://mmbatch" in line), f"{path.name}: {line}"


def fake_tool(folder: Path, name: str, log: Path, *, exit_status: int = 0, output: str = "",
              answers_after_steps: int = 0) -> None:
    """A stand-in for ``name`` in ``folder`` (``run_recorded`` puts it on PATH) that records its call like the
    recorder, prints ``output`` and exits with ``exit_status``. With ``answers_after_steps``, it answers only once that
    many ``srun`` steps have recorded their start (at most 30 s): a cluster's ``ray status`` is ready when its nodes
    have started, and the steps, started in the background, must not be ended before they record."""
    folder.mkdir(exist_ok=True)
    tool = folder / name
    tool.write_text(f"""#!{sys.executable}
import json, os, pathlib, sys, time
deadline = time.monotonic() + 30
while time.monotonic() < deadline and {answers_after_steps} and sys.argv[1:2] == ["status"]:
    found = pathlib.Path({str(log)!r}).read_text() if pathlib.Path({str(log)!r}).exists() else ""
    if found.count('"tool": "srun"') >= {answers_after_steps}:
        break
    time.sleep(0.05)
with open({str(log)!r}, "a") as log:
    log.write(json.dumps({{"tool": {name!r}, "argv": sys.argv[1:], "env": dict(os.environ)}}) + "\\n")
print({output!r})
sys.exit({exit_status})
""")
    tool.chmod(0o755)


def rayjob() -> dict:
    (job,) = [doc for doc in kubernetes_documents() if doc["kind"] == "RayJob"]
    return job


def rayjob_pods(job: dict) -> list[dict]:
    cluster = job["spec"]["rayClusterSpec"]
    return [cluster["headGroupSpec"]["template"]["spec"],
            *(group["template"]["spec"] for group in cluster["workerGroupSpecs"])]


def test_rayjob_runs_infer_on_ray_then_extract_and_score(monkeypatch: pytest.MonkeyPatch) -> None:
    job = rayjob()
    commands = [shlex.split(part.strip())[1:] for part in re.split(r";|&&|\|\|", job["spec"]["entrypoint"])
                if part.strip().startswith("mmbatch ")]
    parsed = [parse_with_env(argv, {}, monkeypatch) for argv in commands]
    assert [args.command for args in parsed] == ["infer", "extract", "score"]  # type: ignore[attr-defined]
    infer, extract, score = parsed
    assert infer.executor == "ray" and infer.ray_address is None  # type: ignore[attr-defined]
    assert extract.input == infer.output and score.input == extract.output  # type: ignore[attr-defined]
    prepare = parse_with_env(expand(containers(jobs()["mmbatch-prepare"])[-1].args, {}), {}, monkeypatch)
    assert infer.input == prepare.output  # type: ignore[attr-defined]
    # The cluster runs the Ray version mmbatch pins, and has a GPU for each actor.
    pins = dict(line.split("==") for line in (REPO_ROOT / "constraints.txt").read_text().splitlines()
                if "==" in line)
    assert job["spec"]["rayClusterSpec"]["rayVersion"] == pins["ray"]
    (workers,) = job["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    (worker,) = workers["template"]["spec"]["containers"]
    gpus = workers["replicas"] * worker["resources"]["limits"]["nvidia.com/gpu"]
    assert infer.ray_actors * infer.ray_gpus_per_actor <= gpus  # type: ignore[attr-defined]
    # Head (the driver, the journal) and workers (media files) see the same /data; every path lies on it.
    for pod in rayjob_pods(job):
        assert pod["securityContext"]["runAsNonRoot"] is True
        (container,) = pod["containers"]
        assert container["image"] == f"{REGISTRY}/mmbatch:full"
        assert {"cpu", "memory"} <= set(container["resources"]["requests"])
        assert "/data" in [mount["mountPath"] for mount in container["volumeMounts"]]
    for argv in commands:
        assert all(arg.startswith("/data/") for arg in argv if arg.startswith("/"))


@pytest.mark.parametrize(("infer_status", "job_status", "scored"), [(0, 0, True), (3, 3, True), (2, 2, False)])
def test_rayjob_entrypoint_scores_after_failed_rows(tmp_path: Path, infer_status: int, job_status: int,
                                                    scored: bool) -> None:
    """infer's exit 3 (finished, some rows failed) still extracts and scores, and the job ends with 3."""
    log = tmp_path / "calls.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "mmbatch"
    fake.write_text(f"""#!{sys.executable}
import sys
open({str(log)!r}, "a").write(sys.argv[1] + "\\n")
sys.exit({infer_status} if sys.argv[1] == "infer" else 0)
""")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    result = subprocess.run(["sh", "-c", rayjob()["spec"]["entrypoint"]], env=env, timeout=60)
    assert result.returncode == job_status
    assert log.read_text().split() == (["infer", "extract", "score"] if scored else ["infer"])


def test_slurm_ray_recipe_starts_a_cluster_over_the_nodes_and_infers_on_it(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "calls.log"
    fake_tool(tmp_path / "bin", "srun", log)
    fake_tool(tmp_path / "bin", "ray", log, answers_after_steps=3)
    fake_tool(tmp_path / "bin", "scontrol", log, output="gpu-node-1\ngpu-node-2\ngpu-node-3")
    env = {"RUN_DIR": "/scratch/run", "HEAD_IP": "10.1.2.3", "SLURM_JOB_NODELIST": "gpu-node-[1-3]",
           "SLURM_JOB_NUM_NODES": "3", "SLURM_CPUS_PER_TASK": "32"}
    calls = run_recorded(SLURM / "infer-ray.sbatch", env, log)
    starts = [call.argv for call in calls if call.tool == "srun"]  # started in the background: in any order
    (head,) = [argv for argv in starts if "--head" in argv]
    workers = [argv for argv in starts if "--head" not in argv]
    assert head[head.index("-w") + 1] == "gpu-node-1"  # the node running the script, where the driver runs
    assert sorted(argv[argv.index("-w") + 1] for argv in workers) == ["gpu-node-2", "gpu-node-3"]
    assert all(argv[argv.index("start") - 1].endswith("ray") and "--block" in argv for argv in starts)
    assert "--node-ip-address=10.1.2.3" in head and "--port=6379" in head
    assert all("--address=10.1.2.3:6379" in argv and "--num-gpus=4" in argv for argv in workers)
    (infer,) = mmbatch_calls(calls)
    args = parse_with_env(infer, {}, monkeypatch)
    assert args.command == "infer" and args.executor == "ray"  # type: ignore[attr-defined]
    assert args.ray_address == "10.1.2.3:6379" and args.ray_actors == 12  # type: ignore[attr-defined]
    assert "--shard" not in infer
    # The driver starts only once the head answers.
    order = [call.tool for call in calls]
    assert order.index("ray") < order.index("mmbatch-recorder")


@pytest.mark.parametrize("script", ["infer-array.sbatch", "infer-ray.sbatch"])
def test_slurm_infer_jobs_succeed_when_rows_failed(script: str, tmp_path: Path) -> None:
    """infer's exit 3 (finished with failed rows) ends the job with 0, so afterok still starts merge-score (which
    counts the failed rows); another status is the job's."""
    log = tmp_path / "calls.log"
    for name in ("srun", "ray"):
        fake_tool(tmp_path / "bin", name, log)
    fake_tool(tmp_path / "bin", "scontrol", log, output="gpu-node-1")
    env = {"RUN_DIR": "/scratch/run", "HEAD_IP": "10.1.2.3", "SLURM_JOB_NODELIST": "gpu-node-1",
           "SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_ARRAY_TASK_MIN": "0"}
    for status, job_status in ((3, 0), (2, 2), (0, 0)):
        fake_tool(tmp_path / "bin", f"mmbatch-exit-{status}", log, exit_status=status)
        full_env = {**os.environ, **env, "MMBATCH": str(tmp_path / "bin" / f"mmbatch-exit-{status}"),
                    "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
        result = subprocess.run(["bash", str(SLURM / script)], env=full_env, cwd=tmp_path, timeout=60,
                                capture_output=True, text=True)
        assert result.returncode == job_status, result.stderr
        assert ("finished with failed rows" in result.stderr) == (status == 3)


def test_slurm_submit_with_the_ray_executor_scores_without_merging(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    calls = run_recorded(SLURM / "submit.sh", {"RUN_DIR": str(tmp_path / "run"), "EXECUTOR": "ray"},
                         tmp_path / "submit.log", "MMBench_DEV_EN.tsv", job_id="555")
    infer, merge = [call.argv for call in calls if call.tool == "sbatch"]
    assert infer[-1].endswith("infer-ray.sbatch") and not any(arg.startswith("--array") for arg in infer)
    assert "--dependency=afterok:555" in merge and "--export=ALL,NUM_SHARDS=0" in merge
    merge_calls = mmbatch_calls(run_recorded(SLURM / "merge-score.sbatch", {"NUM_SHARDS": "0",
                                                                            "RUN_DIR": "/scratch/run"},
                                             tmp_path / "merge.log"))
    assert [argv[0] for argv in merge_calls] == ["extract", "score"]
    extract = parse_with_env(merge_calls[0], {}, monkeypatch)
    assert extract.input == Path("/scratch/run/predictions.parquet")  # type: ignore[attr-defined]


def test_manifests_take_the_registry_from_one_variable(tmp_path: Path) -> None:
    """Every image is ${MMBATCH_REGISTRY}/mmbatch:TARGET (a bare mmbatch:full pulls Docker Hub's library/mmbatch);
    apply.sh replaces that variable alone and refuses to apply without it."""
    images = [image for doc in kubernetes_documents() for image in yaml_images(doc)]
    assert len(images) == 7 and all(image in (f"{REGISTRY}/mmbatch:full", f"{REGISTRY}/mmbatch:light")
                                    for image in images), images
    log = tmp_path / "kubectl.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path / 'kubectl.args'}\ncat > {log}\n")
    kubectl.chmod(0o755)
    script = REPO_ROOT / "examples" / "kubernetes" / "apply.sh"
    manifest = REPO_ROOT / "examples" / "kubernetes" / "infer-rayjob.yaml"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "MMBATCH_REGISTRY": "registry.example.com/evals/"}
    result = subprocess.run(["bash", str(script), str(manifest)], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    applied = log.read_text()
    assert applied == manifest.read_text().replace(REGISTRY, "registry.example.com/evals")
    assert "registry.example.com/evals/mmbatch:full" in applied and '"$status"' in applied
    assert (tmp_path / "kubectl.args").read_text().split() == ["apply", "-f", "-"]
    env.pop("MMBATCH_REGISTRY")
    refused = subprocess.run(["bash", str(script), str(manifest)], env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "set MMBATCH_REGISTRY" in refused.stderr


def yaml_images(node: object) -> list[str]:
    """Every ``image`` value under ``node``."""
    if isinstance(node, dict):
        return [value for key, value in node.items() if key == "image" and isinstance(value, str)] + [
            image for value in node.values() for image in yaml_images(value)]
    if isinstance(node, list):
        return [image for item in node for image in yaml_images(item)]
    return []


@pytest.mark.parametrize(("job_name", "container_name"), [("mmbatch-infer", "infer"),
                                                          ("mmbatch-merge-score", "extract")])
@pytest.mark.parametrize(("status", "container_status"), [(0, 0), (3, 0), (2, 2), (1, 1)])
def test_kubernetes_stages_complete_when_rows_failed(job_name: str, container_name: str, status: int,
                                                     container_status: int, tmp_path: Path) -> None:
    """infer's and extract's exit 3 (finished with failed rows) completes the pod, so the Job completes and the next
    step runs; the container's args reach mmbatch unchanged; any other status is the pod's."""
    pod = jobs()[job_name]["spec"]["template"]["spec"]
    (spec,) = [c for c in [*pod.get("initContainers", []), *pod["containers"]] if c["name"] == container_name]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "mmbatch"
    fake.write_text(f"#!{sys.executable}\nimport sys\nopen({str(tmp_path / 'args')!r}, 'w').write(repr(sys.argv[1:]))"
                    f"\nsys.exit({status})\n")
    fake.chmod(0o755)
    args = expand(spec["args"], {"JOB_COMPLETION_INDEX": "0"})
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    result = subprocess.run([*spec["command"], *args], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == container_status
    assert (tmp_path / "args").read_text() == repr(args)
