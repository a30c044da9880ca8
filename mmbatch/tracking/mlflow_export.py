"""Tracked runs into MLflow: a local folder (a file store) or a tracking server's URI.

Each run gets the provenance as parameters, the metrics at step 0, tags naming mmbatch and the file, and as
artifacts the metrics file (with its metadata) under ``metrics/`` and every ``--artifact`` (the report, the viewer
folder). MLflow 3 keeps its file store in maintenance mode and refuses it unless ``MLFLOW_ALLOW_FILE_STORE`` is set:
a folder given here is a file store the user chose, so the variable is set for this process (MLflow's UI reads the
folder as before); give ``sqlite:///mlflow.db`` (the full ``mlflow`` package) or a server URI for a database.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from mmbatch import __version__
from mmbatch.errors import BadInputError
from mmbatch.tracking.extras import import_extra
from mmbatch.tracking.runs import TrackedRun

BATCH = 100
"""Parameters or metrics per ``log_batch`` call (MLflow takes at most 100 parameters and 1000 metrics)."""


def tracking_uri(given: str) -> str:
    """A URI as given (``http://...``, ``sqlite:///...``, ``file:///...``), or a folder path as a ``file:`` URI."""
    if "://" in given or given.startswith(("file:", "sqlite:", "databricks")):
        return given
    return Path(given).expanduser().resolve().as_uri()


def export_mlflow(runs: Sequence[TrackedRun], *, uri: str, experiment: str, artifacts: Sequence[Path]) -> list[str]:
    """Create one MLflow run per tracked run; returns their run ids.

    Raises:
        BadInputError: MLflow is not installed, or the tracking store refuses (unreachable server, bad URI).
    """
    import_extra("mlflow", "mlflow")
    from mlflow.entities import Metric, Param
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    uri = tracking_uri(uri)
    if uri.startswith("file:"):
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    try:
        client = MlflowClient(uri)
        found = client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found is not None else client.create_experiment(experiment)
        ids = []
        for run in runs:
            created = client.create_run(experiment_id, run_name=run.name, tags={
                "mmbatch.version": __version__, "mmbatch.metrics_file": str(run.source)})
            run_id = created.info.run_id
            stamp = int(time.time() * 1000)
            params = [Param(key, value) for key, value in run.params.items()]
            metrics = [Metric(key, value, stamp, 0) for key, value in run.metrics.items()]
            for start in range(0, max(len(params), len(metrics)), BATCH):
                client.log_batch(run_id, metrics=metrics[start:start + BATCH], params=params[start:start + BATCH])
            for file in run.files:
                client.log_artifact(run_id, str(file), artifact_path="metrics")
            for artifact in artifacts:
                if artifact.is_dir():
                    client.log_artifacts(run_id, str(artifact), artifact_path=artifact.name)
                else:
                    client.log_artifact(run_id, str(artifact))
            client.set_terminated(run_id)
            ids.append(run_id)
        return ids
    except (MlflowException, OSError) as exc:
        raise BadInputError(f"MLflow at {uri} refused the export: {str(exc).splitlines()[0]}") from None
