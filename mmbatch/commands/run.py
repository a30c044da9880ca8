"""``mmbatch run``: prepare, infer, extract and score in one go, with the stages' own options; or a run plan (many
models on many benchmarks, ``--plan`` or several ``--benchmark``/``--model``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mmbatch.commands import summary


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``run`` command: a run folder plus every option of the four stages."""
    from mmbatch.pipeline import add_stage_options

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "run",
        help=summary("run"),
        description="Run the four stages in order into one folder: prepared.parquet, predictions.parquet, "
        "extracted.parquet, metrics.json (+ metrics.hits.parquet). Options are the stages' own (the stage each "
        "comes from is in brackets); one that several stages share (--concurrency, --timeout, --max-retries, "
        "--seed, --force, --max-pixels, --media-root) applies to each of them, and one not given keeps each "
        "stage's default. Rerunning the same command resumes infer and extract. Many models on many benchmarks: "
        "--plan PLAN.yaml, or --benchmark a,b,c with --model given once per model (each model loaded once; "
        "layout and sharding in docs/plans.md).",
    )
    parser.add_argument("--output-dir", type=Path, metavar="DIR",
                        help="the run folder for the four stage files (required without --plan; with a plan, "
                        "its output root, replacing the plan's own)")
    parser.add_argument("--plan", type=Path, metavar="PLAN.yaml",
                        help="run a plan file: models x benchmarks x judge/rules into one output root, each model "
                        "loaded once, finished pairs skipped on a rerun (docs/plans.md)")
    parser.add_argument("--shard", metavar="K/N",
                        help="plans only: run every N-th (model, benchmark, row shard) unit from K (default: from "
                        "SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX with MMBATCH_NUM_SHARDS); a last run "
                        "without --shard finishes the pairs and writes the report")
    parser.add_argument("--merge", action="store_true",
                        help="plans only: infer nothing; merge the row shards, extract, score and report what the "
                        "sharded runs left (exit 2 naming a unit not inferred yet)")
    add_stage_options(parser, repeatable=("model",))
    parser.set_defaults(_run_parser=parser)  # to tell flags given beside --plan from MMBATCH_* defaults
    return parser


def run(args: argparse.Namespace) -> int:
    """Run the stages (or the plan); exit 0, 2 on bad input, or 3 when some rows failed."""
    from mmbatch.errors import BadInputError
    from mmbatch.plans.oneline import is_plan_form

    if getattr(args, "plan", None) is not None or is_plan_form(args):
        from mmbatch.plans.command import run_plan_command

        return run_plan_command(args)
    for flag in ("shard", "merge"):
        if getattr(args, flag, None):
            raise BadInputError(f"--{flag} applies to plans (--plan, or several --benchmark/--model); one benchmark "
                                "with one model runs the whole file: shard `mmbatch infer` instead (docs/scale.md)")
    if getattr(args, "output_dir", None) is None:
        raise BadInputError("run needs --output-dir DIR (or --plan PLAN.yaml)")
    models = getattr(args, "model", None)
    if isinstance(models, list):  # --model is repeatable for plans; one model is the plain run's
        args.model = models[0] if models else None
    from mmbatch.pipeline import run_pipeline

    return run_pipeline(args)
