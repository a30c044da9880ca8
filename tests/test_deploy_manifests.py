"""The Kubernetes and Slurm examples call the real CLI with real options, and wire the shard variables right.

Every mmbatch invocation they contain is parsed by ``mmbatch.cli.build_parser()`` with the environment the pod or
task would have, so a renamed or misspelt option, a bad choice or a missing required option fails here.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from mmbatch.cli import build_parser
from mmbatch.errors import BadInputError
from mmbatch.infer.outputs import shard_output_path, shard_outputs_beside
from mmbatch.shards import Shard, shard_from_environment
from tests.support.deploy import REPO_ROOT, SLURM, Call, containers, expand, jobs, kubernetes_documents, run_recorded

SHARD_KEYS = ("JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN")


def parse_with_env(argv: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> object:
    """``build_parser().parse_args(argv)`` as mmbatch would see it with ``env`` set; fails the test on a usage error."""
    for key in [key for key in __import__("os").environ if key.startswith("MMBATCH_")]:
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
        wanted_image = "mmbatch:full" if args.command == "infer" else "mmbatch:light"  # type: ignore[attr-defined]
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
