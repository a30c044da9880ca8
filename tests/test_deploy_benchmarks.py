"""The Kubernetes and Slurm recipes run SEED-Bench (its media folder) and a judge-graded benchmark (its judge server)
end to end (issue 25 item 1). No cluster here: each recipe's commands run locally, with the environment and
arguments the recipe gives them and nothing else, so a setting a container or job does not pass fails the chain.

- Kubernetes: every container of the prepare Job, the Indexed Job's 4 pods and the merge-score Job runs its own
  command (the exit-3 wrapper included) with its literal env, the ``mmbatch-settings`` ConfigMap where it reads it
  (``envFrom``) and the judge's Secret, ``/data`` being a local folder. What a user edits in the example (the
  benchmark and input of prepare, the model of infer) is replaced in the args; the media root and the judge come
  only from the ConfigMap.
- Slurm: ``submit.sh`` runs as documented, with ``sbatch`` running each job at once (``tests/support/fake_sbatch.py``)
  and ``MMBATCH`` the real command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT
from tests.support.deploy import SLURM, Container, containers, expand, jobs
from tests.support.openai_server import OpenAIServer
from tests.support.recipe_cases import JUDGE_MODEL, RecipeCase, assert_expected_metrics, case, judge_server

__all__ = ["judge_server"]  # a fixture, used by name

KINDS = ["seed-media", "judge-graded"]
SECRET = "sk-test-judge-key-from-a-secret"
FAKE_SBATCH = REPO_ROOT / "tests" / "support" / "fake_sbatch.py"


def local_bin(folder: Path) -> Path:
    """A folder with ``mmbatch`` (this checkout, as the image installs it) and ``sbatch`` (the stand-in)."""
    folder.mkdir(exist_ok=True)
    for name, target in (("mmbatch", "-m mmbatch"), ("sbatch", str(FAKE_SBATCH))):
        (folder / name).write_text(f"#!/bin/sh\nexec {sys.executable} {target} \"$@\"\n")
        (folder / name).chmod(0o755)
    return folder


def clean_environment(bin_dir: Path) -> dict[str, str]:
    """This process's environment without any MMBATCH_* setting, the local tools first on PATH."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("MMBATCH") and key != "SIF"}
    return {**env, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(REPO_ROOT),
            "COLUMNS": "200"}


def with_value(argv: list[str], option: str, value: str) -> list[str]:
    """``argv`` with ``option``'s value replaced (what a user edits in the example manifest)."""
    at = argv.index(option) + 1
    return [*argv[:at], value, *argv[at + 1:]]


def settings_for(recipe_case: RecipeCase, server: OpenAIServer) -> dict[str, str]:
    """The ``mmbatch-settings`` ConfigMap a user creates for the case (docs/scale.md, Kubernetes)."""
    settings = {}
    if recipe_case.media_root:
        settings["MMBATCH_MEDIA_ROOT"] = f"/data/inputs/{recipe_case.media_root}"
    if recipe_case.judged:
        settings["MMBATCH_JUDGE_BASE_URL"] = server.base_url
    return settings


def run_container(container: Container, argv: list[str], extra_env: dict[str, str], settings: dict[str, str],
                  volume: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    """The container's command as the kubelet starts it, ``/data`` being ``volume``."""
    env = {key: value for key, value in container.env.items() if isinstance(value, str)}
    if "OPENAI_API_KEY" in container.env:  # from the mmbatch-judge Secret
        env["OPENAI_API_KEY"] = SECRET
    if "mmbatch-settings" in container.settings:
        env.update(settings)
    env.update(extra_env)

    def on_volume(value: str) -> str:
        return str(volume) + value[len("/data"):] if value == "/data" or value.startswith("/data/") else value

    argv = [on_volume(arg) for arg in expand(argv, env)]
    command = [*(container.command or ["mmbatch"]), *argv]
    full_env = {**clean_environment(bin_dir), **{key: on_volume(value) for key, value in env.items()}}
    return subprocess.run(command, env=full_env, cwd=volume, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("kind", KINDS)
def test_kubernetes_jobs_run_the_chain(kind: str, tmp_path: Path, judge_server: OpenAIServer) -> None:
    recipe_case = case(kind)
    judge_server.reset()
    volume, bin_dir = tmp_path / "data", local_bin(tmp_path / "bin")
    (volume / "inputs").mkdir(parents=True)
    for relative in filter(None, (recipe_case.input, recipe_case.media_root)):
        (volume / "inputs" / relative).parent.mkdir(parents=True, exist_ok=True)
        (volume / "inputs" / relative).symlink_to(REPO_ROOT / relative)
    settings = settings_for(recipe_case, judge_server)
    infer_job = jobs()["mmbatch-infer"]
    steps: list[tuple[Container, list[str], dict[str, str]]] = []
    (prepare,) = containers(jobs()["mmbatch-prepare"])
    prepare_argv = with_value(prepare.args, "--benchmark", recipe_case.benchmark)
    steps.append((prepare, with_value(prepare_argv, "--input", f"/data/inputs/{recipe_case.input}"), {}))
    (infer,) = containers(infer_job)
    infer_argv = with_value(with_value(infer.args, "--backend", "echo"), "--model", recipe_case.model)
    steps += [(infer, infer_argv, {"JOB_COMPLETION_INDEX": str(k)}) for k in range(infer_job["spec"]["completions"])]
    steps += [(container, container.args, {}) for container in containers(jobs()["mmbatch-merge-score"])]
    for container, argv, extra_env in steps:
        result = run_container(container, argv, extra_env, settings, volume, bin_dir)
        assert result.returncode == 0, f"{container.job}/{container.name}: {result.stderr[-3000:]}"
    assert_expected_metrics(recipe_case, volume / "run" / "metrics.json")
    assert bool(judge_server.chat_requests) == recipe_case.judged
    if recipe_case.judged:
        assert {r.headers.get("authorization") for r in judge_server.chat_requests} == {f"Bearer {SECRET}"}


def test_every_kubernetes_container_reads_the_settings() -> None:
    """A stage the ConfigMap does not reach would miss the media root or the judge, RayJob pods included."""
    documents = [doc for name in ("prepare-job.yaml", "infer-indexed-job.yaml", "merge-score-job.yaml",
                                  "infer-rayjob.yaml") for doc in _documents(name)]
    specs = [spec for doc in documents for spec in _container_specs(doc)]
    assert len(specs) == 7
    for spec in specs:
        assert {"configMapRef": {"name": "mmbatch-settings", "optional": True}} in spec.get("envFrom", []), \
            spec["name"]


def _documents(name: str) -> list[dict[str, Any]]:
    import yaml

    return [doc for doc in yaml.safe_load_all((REPO_ROOT / "examples" / "kubernetes" / name).read_text()) if doc]


def _container_specs(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        found = [node] if "image" in node and "name" in node else []
        return found + [spec for value in node.values() for spec in _container_specs(value)]
    if isinstance(node, list):
        return [spec for item in node for spec in _container_specs(item)]
    return []


@pytest.mark.parametrize("kind", KINDS)
def test_slurm_submit_runs_the_chain(kind: str, tmp_path: Path, judge_server: OpenAIServer) -> None:
    recipe_case = case(kind)
    judge_server.reset()
    bin_dir = local_bin(tmp_path / "bin")
    env = {**clean_environment(bin_dir), "MMBATCH": str(bin_dir / "mmbatch"), "RUN_DIR": str(tmp_path / "run"),
           "BENCHMARK": recipe_case.benchmark, "BACKEND": "echo", "MODEL": recipe_case.model,
           "FAKE_SBATCH_STATE": str(tmp_path / "jobs.jsonl"), "OPENAI_API_KEY": SECRET}
    if recipe_case.media_root:
        env["MEDIA_ROOT"] = str(REPO_ROOT / recipe_case.media_root)
    if recipe_case.judged:
        env.update(JUDGE_MODEL=JUDGE_MODEL, JUDGE_BASE_URL=judge_server.base_url)
    result = subprocess.run(["bash", str(SLURM / "submit.sh"), str(REPO_ROOT / recipe_case.input), "2"], env=env,
                            cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    submitted = [json.loads(line) for line in (tmp_path / "jobs.jsonl").read_text().splitlines()]
    assert [(job["script"], job["status"]) for job in submitted] == [("infer-array.sbatch", 0),
                                                                     ("merge-score.sbatch", 0)], submitted
    assert_expected_metrics(recipe_case, tmp_path / "run" / "metrics.json")
    assert bool(judge_server.chat_requests) == recipe_case.judged


def test_slurm_refuses_a_judge_server_without_a_judge_model(tmp_path: Path) -> None:
    bin_dir = local_bin(tmp_path / "bin")
    env = {**clean_environment(bin_dir), "MMBATCH": str(bin_dir / "mmbatch"), "RUN_DIR": str(tmp_path / "run"),
           "JUDGE_BASE_URL": "http://judge:8000/v1"}
    result = subprocess.run(["bash", str(SLURM / "merge-score.sbatch")], env=env, cwd=tmp_path, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2 and "JUDGE_MODEL is not" in result.stderr
