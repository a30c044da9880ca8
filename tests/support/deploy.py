"""Read the Kubernetes and Slurm examples as the commands they would run, for the deploy and shard tests.

Kubernetes manifests are parsed with PyYAML; ``$(VAR)`` in container args is expanded from the container's env the way
the kubelet does it. Slurm scripts are run by bash with ``MMBATCH`` (and ``sbatch``) pointed at a recorder, so the
recorded arguments are exactly what bash would hand to mmbatch.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
KUBERNETES = REPO_ROOT / "examples" / "kubernetes"
SLURM = REPO_ROOT / "examples" / "slurm"

RECORDER = """#!{python}
import json, os, sys
with open({log!r}, "a") as log:
    log.write(json.dumps({{"tool": os.path.basename(sys.argv[0]), "argv": sys.argv[1:],
                          "env": dict(os.environ)}}) + "\\n")
print("{job_id}")
"""


@dataclass(frozen=True)
class Container:
    """One container of a Kubernetes manifest."""

    job: str
    """The Job's ``metadata.name``."""
    name: str
    image: str
    args: list[str]
    env: dict[str, Any]
    """Env name -> its literal value, or the ``valueFrom`` mapping."""
    mounts: list[str]
    """The container's ``mountPath``s."""
    command: list[str] | None = None
    """The container's ``command`` (None: the image's entrypoint, ``mmbatch``)."""
    settings: tuple[str, ...] = ()
    """The ConfigMaps whose keys become the container's environment (``envFrom``)."""


def kubernetes_documents() -> list[dict[str, Any]]:
    """Every YAML document of every manifest in ``examples/kubernetes``."""
    documents: list[dict[str, Any]] = []
    for path in sorted(KUBERNETES.glob("*.yaml")):
        documents.extend(doc for doc in yaml.safe_load_all(path.read_text()) if doc)
    return documents


def jobs() -> dict[str, dict[str, Any]]:
    """The Jobs by name."""
    return {doc["metadata"]["name"]: doc for doc in kubernetes_documents() if doc["kind"] == "Job"}


def containers(job: dict[str, Any]) -> list[Container]:
    """A Job's init containers, then its containers, in the order Kubernetes runs them."""
    pod = job["spec"]["template"]["spec"]
    found = []
    for spec in [*pod.get("initContainers", []), *pod["containers"]]:
        env = {item["name"]: item.get("value", item.get("valueFrom")) for item in spec.get("env", [])}
        mounts = [mount["mountPath"] for mount in spec.get("volumeMounts", [])]
        settings = tuple(source["configMapRef"]["name"] for source in spec.get("envFrom", [])
                         if "configMapRef" in source)
        found.append(Container(job["metadata"]["name"], spec["name"], spec["image"], list(spec["args"]), env, mounts,
                               spec.get("command"), settings))
    return found


def expand(args: list[str], values: dict[str, str]) -> list[str]:
    """Kubernetes' ``$(VAR)`` expansion in command/args."""
    return [re.sub(r"\$\((\w+)\)", lambda m: values.get(m.group(1), m.group(0)), arg) for arg in args]


@dataclass(frozen=True)
class Call:
    """One recorded call of the fake ``mmbatch`` or ``sbatch``."""

    tool: str
    """``mmbatch-recorder``, ``sbatch`` or ``apptainer``."""
    argv: list[str]
    env: dict[str, str]


def run_recorded(script: Path, env: dict[str, str], log: Path, *args: str, job_id: str = "4242",
                 local: bool = True) -> list[Call]:
    """Run a shell script with ``MMBATCH``, ``sbatch`` and ``apptainer`` recording their arguments instead of running.

    ``local=False`` leaves ``MMBATCH`` unset, for the scripts' container path (``SIF`` in ``env``).
    """
    bin_dir = log.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("mmbatch-recorder", "sbatch", "apptainer"):
        tool = bin_dir / name
        tool.write_text(RECORDER.format(python=sys.executable, log=str(log), job_id=job_id))
        tool.chmod(0o755)
    inherited = {key: value for key, value in os.environ.items() if key not in ("MMBATCH", "SIF")}
    full_env = {**inherited, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", **env}
    if local:
        full_env.setdefault("MMBATCH", str(bin_dir / "mmbatch-recorder"))
    subprocess.run(["bash", str(script), *args], env=full_env, cwd=log.parent, check=True, timeout=60,
                   capture_output=True, text=True)
    return [Call(**json.loads(line)) for line in log.read_text().splitlines()] if log.exists() else []
