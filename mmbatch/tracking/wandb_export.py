"""Tracked runs into Weights & Biases: offline by default (a run folder ``wandb sync`` uploads later), or online.

Each run gets the provenance as its config, the metrics as its summary, and one artifact holding the metrics file
(with its metadata) and every ``--artifact`` (the report, the viewer folder). Offline, nothing touches the network.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from mmbatch.errors import BadInputError
from mmbatch.tracking.extras import import_extra
from mmbatch.tracking.runs import TrackedRun


def export_wandb(runs: Sequence[TrackedRun], *, project: str, entity: str | None, directory: Path, mode: str,
                 artifacts: Sequence[Path]) -> list[Path]:
    """Write one W&B run per tracked run; returns their run folders (what ``wandb sync`` takes).

    Raises:
        BadInputError: wandb is not installed, or it refuses (online without a login, an unreachable server).
    """
    wandb = import_extra("wandb", "wandb")
    directory.mkdir(parents=True, exist_ok=True)
    folders = []
    for run in runs:
        try:
            started = wandb.init(project=project, entity=entity, name=run.name, dir=str(directory), mode=mode,
                                 config=run.params, reinit="create_new",
                                 settings=wandb.Settings(silent=True, console="off", x_disable_stats=True,
                                                         disable_git=True, save_code=False))
        except Exception as exc:  # wandb raises its own errors (UsageError, CommError...) for a refused login
            raise BadInputError(f"W&B refused the run ({mode}): {type(exc).__name__}: {exc}") from None
        try:
            started.summary.update(run.metrics)
            artifact = wandb.Artifact(artifact_name(run.name), type="mmbatch-results")
            for file in run.files:
                artifact.add_file(str(file), name=f"metrics/{file.name}")
            for extra in artifacts:
                if extra.is_dir():
                    artifact.add_dir(str(extra), name=extra.name)
                else:
                    artifact.add_file(str(extra), name=extra.name)
            started.log_artifact(artifact)
            folders.append(Path(started.dir).parent)
        finally:
            started.finish()
    return folders


def artifact_name(run_name: str) -> str:
    """A W&B artifact name for a run (letters, digits, ``_ - .`` only)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", run_name).strip("-.") or "mmbatch"
