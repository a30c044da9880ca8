"""What a run plan holds once read and checked: models, benchmarks, and the stage options of every pair.

Every setting is kept as the stage's own option (``dest -> value``, as ``argparse`` would have parsed it), so a plan
pair runs the very options objects ``mmbatch prepare/infer/extract/score`` would build from a command line; the
stages' defaults (and ``MMBATCH_<OPTION>`` variables) fill in what the plan leaves out.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

REPORT_FORMATS = ("html", "md", "csv", "tsv")
"""The report files a plan can write at its output root (``report.<format>``)."""
DEFAULT_REPORTS = ("html", "md", "csv")


@dataclass(frozen=True)
class ModelEntry:
    """One model of a plan: loaded once, run on every benchmark."""

    name: str
    """Its folder under the output root (``models/<name>/``), unique in the plan."""
    key: str
    """Where it is in the plan file (``models[1]``), for messages."""
    infer: Mapping[str, Any]
    """``infer`` options by ``dest`` (``backend``, ``model``, ``dtype``, ``backend_arg``, ``gen_arg``...)."""


@dataclass(frozen=True)
class BenchmarkEntry:
    """One benchmark of a plan, with the options of each of its stages."""

    name: str
    """Its folder name (``benchmarks/<name>/``, ``models/<model>/<name>/``), unique in the plan."""
    key: str
    """Where it is in the plan file (``benchmarks[0]``)."""
    benchmark: str
    """The registered benchmark name."""
    prepare: Mapping[str, Any]
    """``prepare`` options by ``dest`` (``benchmark``, ``input`` or ``split``, ``prompt_template``, ``limit``...)."""
    infer: Mapping[str, Any]
    """``infer`` options the benchmark sets for every model: its ``media_root`` (the folder the plan chose is one
    ``infer`` may read media from); never a backend option, so every benchmark of a model shares its backend."""
    extract: Mapping[str, Any]
    """``extract`` options by ``dest`` (the plan's, then the benchmark's own)."""
    score: Mapping[str, Any]
    """``score`` options by ``dest``."""
    shards: int
    """Row shards of each (model, benchmark) pair: the units ``--shard K/N`` deals out."""


@dataclass(frozen=True)
class Plan:
    """A checked plan: every model on every benchmark, into one output root."""

    output: Path
    """The output root."""
    models: tuple[ModelEntry, ...]
    """The models, in plan order."""
    benchmarks: tuple[BenchmarkEntry, ...]
    """The benchmarks, in plan order."""
    reports: tuple[str, ...]
    """Report files written at the root when the plan finishes (``report.html``...)."""
    source: Path | None
    """The plan file, or None for a plan built from ``run``'s flags."""


EXCLUDED: dict[str, frozenset[str]] = {
    "prepare": frozenset({"output", "help"}),
    "infer": frozenset({"input", "output", "shard", "force", "help"}),
    "extract": frozenset({"input", "output", "benchmark", "model_name", "force", "help"}),
    "score": frozenset({"input", "output", "benchmark", "help"}),
}
"""Options a plan does not set per stage: it names every file itself, deals out shards by unit, and ``force`` is the
plan command's own flag."""


@cache
def stage_actions(stage: str) -> dict[str, argparse.Action]:
    """The options of ``stage`` a plan may set, by ``dest``, as the stage command declares them."""
    from mmbatch.pipeline import stage_parsers

    parser = stage_parsers(with_environment=False)[stage]
    return {option.action.dest: option.action for option in parser.declared
            if option.action.dest not in EXCLUDED[stage]}


def stage_options(stage: str, values: Mapping[str, Any], input_path: Path | None, output_path: Path,
                  *, force: bool = False) -> Any:
    """The options object of ``stage``: its defaults (with ``MMBATCH_*`` variables), then ``values``, then the files.

    Raises:
        BadInputError: the stage refuses the combination (as its command would).
    """
    from mmbatch.pipeline import STAGE_COMMANDS, stage_parsers

    parser = stage_parsers(with_environment=True)[stage]
    arguments = {**parser.declared_defaults(), **values, "input": input_path, "output": output_path}
    if "force" in arguments:
        arguments["force"] = force or bool(values.get("force"))
    return STAGE_COMMANDS[stage].options(argparse.Namespace(**arguments))
