"""``mmbatch run --benchmark a,b,c --model X --model Y ...``: the one-line form of a plan.

Every model gets the same ``infer`` options, every benchmark the same ``prepare`` options, and the ``extract`` and
``score`` options apply to every pair, exactly as ``run`` hands an option to each stage that declares it; the
result is the :class:`~mmbatch.plans.spec.Plan` a plan file with those settings would give (checked the same way).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mmbatch.errors import BadInputError
from mmbatch.plans.read import check_stage_options, default_model_name, folder_name
from mmbatch.plans.spec import DEFAULT_REPORTS, BenchmarkEntry, ModelEntry, Plan, stage_actions

PLAN_STAGES = ("prepare", "infer", "extract", "score")


def split_names(text: str) -> list[str]:
    """``a,b, c`` -> ``[a, b, c]`` (empty parts dropped)."""
    return [name.strip() for name in text.split(",") if name.strip()]


def is_plan_form(given: argparse.Namespace) -> bool:
    """Whether ``run``'s flags ask for several benchmarks or several models (the one-line plan form)."""
    models = getattr(given, "model", None) or []
    benchmark = getattr(given, "benchmark", None) or ""
    return len(models) > 1 or len(split_names(benchmark)) > 1


def stage_values(given: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Each stage's options among those given to ``run`` (an option shared by stages goes to each of them)."""
    values: dict[str, dict[str, Any]] = {stage: {} for stage in PLAN_STAGES}
    for stage in PLAN_STAGES:
        for dest in stage_actions(stage):
            if hasattr(given, dest) and dest not in ("model", "benchmark", "input"):
                values[stage][dest] = getattr(given, dest)
    return values


def plan_from_flags(given: argparse.Namespace) -> Plan:
    """The plan ``run --benchmark a,b --model X --model Y --output-dir DIR ...`` describes.

    Raises:
        BadInputError: no output folder, no model or benchmark, ``--input`` with several benchmarks, or options a
            stage refuses (naming the model or benchmark).
    """
    if getattr(given, "output_dir", None) is None:
        raise BadInputError("run needs --output-dir DIR (or --plan PLAN.yaml)")
    models = getattr(given, "model", None) or []
    benchmarks = split_names(getattr(given, "benchmark", None) or "")
    if not models or not benchmarks:
        raise BadInputError("run needs --benchmark NAME[,NAME...] and --model (repeatable), or --plan PLAN.yaml")
    given_input = getattr(given, "input", None)
    if given_input is not None and len(benchmarks) > 1:
        raise BadInputError(f"--input names one benchmark's file, but --benchmark names {len(benchmarks)}: write a "
                            "plan file with an input per benchmark (docs/plans.md)")
    if getattr(given, "backend", None) is None:
        raise BadInputError("run needs --backend (the backend of every --model)")
    values = stage_values(given)
    model_entries = tuple(
        ModelEntry(folder_name(default_model_name(model), f"--model {model}"), f"--model {model}",
                   {**values["infer"], "model": model}) for model in models)
    benchmark_entries = []
    for name in benchmarks:
        from mmbatch.benchmarks.registry import get_benchmark

        registered = get_benchmark(name).name
        prepare = {**values["prepare"], "benchmark": registered,
                   **({"input": Path(given_input)} if given_input is not None else {})}
        media = {"media_root": prepare["media_root"]} if "media_root" in prepare else {}
        benchmark_entries.append(BenchmarkEntry(registered, f"--benchmark {registered}", registered, prepare, media,
                                                values["extract"], values["score"], 1))
    _refuse_twice(model_entries, benchmark_entries)
    plan = Plan(Path(given.output_dir), model_entries, tuple(benchmark_entries), DEFAULT_REPORTS, None)
    check_stage_options(plan)
    return plan


def _refuse_twice(models: tuple[ModelEntry, ...], benchmarks: list[BenchmarkEntry]) -> None:
    for entries in (models, benchmarks):
        names = [entry.name.lower() for entry in entries]
        for position, name in enumerate(names):
            if name in names[:position]:
                raise BadInputError(f"{entries[position].key} is given twice (its folder {name!r} would be shared); "
                                    "write a plan file to give each its own name")
