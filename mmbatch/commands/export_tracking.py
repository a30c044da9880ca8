"""``mmbatch export --to mlflow|wandb``: metrics files (or a plan's finished pairs) into an experiment tracker."""

from __future__ import annotations

import argparse
from pathlib import Path

from mmbatch.errors import EXIT_OK, BadInputError

TRACKERS = ("mlflow", "wandb")


def add_tracking_options(parser: argparse.ArgumentParser) -> None:
    """The ``--to`` options of ``export``."""
    parser.add_argument("--to", choices=TRACKERS,
                        help="send metrics files to an experiment tracker instead of writing a --format file: "
                        "mlflow (pip install 'mmbatch[mlflow]') or wandb (pip install 'mmbatch[wandb]'); one run "
                        "per metrics file (docs/tracking.md)")
    parser.add_argument("metrics", nargs="*", type=Path, metavar="METRICS_FILE",
                        help="--to: metrics tables written by `mmbatch score`")
    parser.add_argument("--plan", type=Path, metavar="PLAN.yaml",
                        help="--to: every pair the plan has finished (runs named model/benchmark), with the plan's "
                        "report files as artifacts")
    parser.add_argument("--artifact", action="append", default=[], type=Path, metavar="PATH",
                        help="--to: a file or folder logged with every run (the report, the viewer); repeatable")
    parser.add_argument("--tracking-uri", metavar="URI",
                        help="mlflow: a folder (a file store, e.g. mlruns), sqlite:///mlflow.db or a server's URL "
                        "(default: MLFLOW_TRACKING_URI, else ./mlruns)")
    parser.add_argument("--experiment", default="mmbatch", help="mlflow: the experiment (default mmbatch)")
    parser.add_argument("--project", default="mmbatch", help="wandb: the project (default mmbatch)")
    parser.add_argument("--entity", help="wandb: the team or user (default: W&B's own)")
    parser.add_argument("--wandb-dir", type=Path, default=Path("."), metavar="DIR",
                        help="wandb: where the run folders go (DIR/wandb/...; default .)")
    parser.add_argument("--wandb-mode", choices=("offline", "online"), default="offline",
                        help="wandb: offline (default: no network; upload later with `wandb sync`) or online")


def tracked_inputs(args: argparse.Namespace) -> tuple[list[tuple[Path, str | None]], list[Path]]:
    """(metrics file, run name) pairs and the artifacts, from the files given and ``--plan``.

    Raises:
        BadInputError: no metrics at all, a plan with no finished pair, or a missing artifact.
    """
    inputs: list[tuple[Path, str | None]] = [(path, None) for path in args.metrics]
    artifacts = list(args.artifact)
    if args.plan is not None:
        from mmbatch.plans.layout import PlanLayout
        from mmbatch.plans.read import read_plan
        from mmbatch.plans.reports import finished_pairs

        plan = read_plan(args.plan)
        layout = PlanLayout(plan.output)
        pairs = finished_pairs(plan, layout)
        if not pairs:
            raise BadInputError(f"the plan has no finished pair in {plan.output} yet: run it first", path=args.plan)
        inputs += [(path, name) for path, name in pairs.items()]
        artifacts += [layout.report(fmt) for fmt in plan.reports if layout.report(fmt).is_file()]
    if not inputs:
        raise BadInputError("--to needs metrics files (METRICS_FILE...) or --plan PLAN.yaml")
    for artifact in artifacts:
        if not artifact.exists():
            raise BadInputError("no such file or folder", path=artifact, column="artifact")
    return inputs, artifacts


def run_tracking(args: argparse.Namespace) -> int:
    """Export to the tracker; print where the runs are."""
    import os

    from mmbatch.console import console
    from mmbatch.tracking.runs import tracked_run

    for flag in ("format", "input", "output"):
        if getattr(args, flag, None) is not None:
            raise BadInputError(f"--{flag} writes a submission file; --to {args.to} sends metrics to a tracker: "
                                "give one or the other")
    inputs, artifacts = tracked_inputs(args)
    runs = [tracked_run(path, name) for path, name in inputs]

    def say(line: str) -> None:
        console.print(line, soft_wrap=True, markup=False, highlight=False)

    if args.to == "mlflow":
        from mmbatch.tracking.mlflow_export import export_mlflow, tracking_uri

        uri = tracking_uri(args.tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or "mlruns")
        ids = export_mlflow(runs, uri=uri, experiment=args.experiment, artifacts=artifacts)
        for run, run_id in zip(runs, ids, strict=True):
            say(f"mlflow: run {run_id} ({run.name}): {len(run.metrics)} metrics, {len(run.params)} params")
        say(f"exported {len(ids)} run(s) to {uri}, experiment {args.experiment}")
    else:
        from mmbatch.tracking.wandb_export import export_wandb

        folders = export_wandb(runs, project=args.project, entity=args.entity, directory=args.wandb_dir,
                               mode=args.wandb_mode, artifacts=artifacts)
        for run, folder in zip(runs, folders, strict=True):
            say(f"wandb: {folder} ({run.name}): {len(run.metrics)} metrics, {len(run.params)} params")
        if args.wandb_mode == "offline":
            say(f"upload later with: wandb sync {' '.join(str(folder) for folder in folders)}")
    return EXIT_OK
