"""Running a plan: each model loaded once, each of its pairs through the four stages, a pair at a time.

Per pair: ``prepare`` (once per benchmark, skipped when its record matches), ``infer`` of the pair's row shards
(the model's shared backend), ``merge`` of several row shards, ``extract``, ``score``, then ``pair.json``. A rerun
skips a pair whose ``pair.json`` records the same settings and exit status 0, and resumes the stages of the others,
so a plan killed at any moment loses at most the rows in flight. A pair that fails (bad input, a model that cannot
load) is reported and the plan goes on; its exit status is the worst of its pairs (2, then 3, then 0).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmbatch.errors import EXIT_BAD_INPUT, EXIT_OK, EXIT_ROWS_FAILED, BadInputError
from mmbatch.plans.layout import PairFiles, PlanLayout
from mmbatch.plans.pair_record import finished_status, pair_settings, write_pair_record
from mmbatch.plans.reports import write_plan_reports
from mmbatch.plans.session import ModelSession
from mmbatch.plans.spec import BenchmarkEntry, Plan, stage_options
from mmbatch.plans.units import Unit, assigned_units
from mmbatch.shards import WHOLE, Shard
from mmbatch.tableio import atomic_path

SEVERITY = (EXIT_OK, EXIT_ROWS_FAILED, EXIT_BAD_INPUT)
"""Exit statuses from best to worst: a plan exits with the worst of its pairs."""


@dataclass(frozen=True)
class PairResult:
    """What became of one (model, benchmark) pair in this run."""

    model: str
    """The model's name in the plan."""
    benchmark: str
    """The benchmark's name in the plan."""
    status: int
    """0 finished, 3 finished with failed rows, 2 refused (bad input, or a model that cannot load)."""
    state: str
    """``finished``, ``finished earlier``, ``rows K/N inferred`` (a sharded run), ``refused``."""
    message: str | None = None
    """Why it was refused."""


@dataclass
class PlanResult:
    """What a plan run did."""

    pairs: list[PairResult] = field(default_factory=list)
    """Every pair this run touched, in plan order."""
    loads: dict[str, int] = field(default_factory=dict)
    """Model name -> how many times this run loaded it (0 when all its pairs were finished)."""
    reports: list[Path] = field(default_factory=list)
    """The report files written."""

    @property
    def exit_status(self) -> int:
        """The worst status of the pairs."""
        return max((pair.status for pair in self.pairs), key=SEVERITY.index, default=EXIT_OK)


@dataclass(frozen=True)
class RunSettings:
    """How to run a plan."""

    machine: Shard = WHOLE
    """The share of the plan's units this machine runs (``--shard K/N``)."""
    merge_only: bool = False
    """Run nothing that infers: merge, extract, score and report what the machines left (``--merge``)."""
    force: bool = False
    """Discard stage progress made with other settings instead of refusing (``--force``)."""


def run_plan(plan: Plan, settings: RunSettings | None = None) -> PlanResult:
    """Run (or resume) ``plan`` and write its reports.

    A sharded run (``settings.machine`` not whole) runs its units only and writes no report: a last run without a
    shard (or with ``merge_only``) finishes the pairs the machines could not, and writes the reports.
    """
    settings = settings or RunSettings()
    layout = PlanLayout(plan.output)
    units = assigned_units(plan, settings.machine)
    result = PlanResult()
    prepared: dict[str, Path] = {}
    for model in plan.models:
        mine = [unit for unit in units if unit.model is model]
        if not mine:
            continue
        session = ModelSession(model)
        try:
            for benchmark in plan.benchmarks:
                pair_units = [unit for unit in mine if unit.benchmark is benchmark]
                if pair_units:
                    result.pairs.append(_run_pair(layout, pair_units, session, prepared, settings))
        finally:
            session.close()
        result.loads[model.name] = session.loads
    if settings.machine.is_whole:
        result.reports = write_plan_reports(plan, layout)
    return result


def _run_pair(layout: PlanLayout, units: list[Unit], session: ModelSession, prepared: dict[str, Path],
              settings: RunSettings) -> PairResult:
    model, benchmark = units[0].model, units[0].benchmark
    files = layout.pair(model, benchmark)
    digest = pair_settings(model, benchmark)
    owns_pair = len(units) == benchmark.shards
    recorded = finished_status(files, digest)
    if owns_pair and recorded == EXIT_OK and not settings.force:
        _say(f"== {units[0].label}: finished earlier, skipped")
        return PairResult(model.name, benchmark.name, EXIT_OK, "finished earlier")
    try:
        if benchmark.name not in prepared:
            prepared[benchmark.name] = _prepare(layout, benchmark)
        status = EXIT_OK
        before = _digest(files.predictions)
        for unit in units:
            status = _worst(status, _infer(unit, prepared[benchmark.name], files, session, settings))
        if not owns_pair:
            shards = ", ".join(str(unit.rows) for unit in units)
            return PairResult(model.name, benchmark.name, status, f"rows {shards} inferred")
        if benchmark.shards > 1:
            _merge(files, benchmark, prepared[benchmark.name], units[0].label)
        status = _worst(status, _extract_and_score(files, benchmark, units[0].label, settings,
                                                   redo=_digest(files.predictions) != before))
    except BadInputError as exc:
        _say_error(f"{units[0].label}: {exc}")
        return PairResult(model.name, benchmark.name, EXIT_BAD_INPUT, "refused", str(exc))
    write_pair_record(files, model, benchmark, status, digest)
    return PairResult(model.name, benchmark.name, status, "finished" if status == EXIT_OK else "rows failed")


def _prepare(layout: PlanLayout, benchmark: BenchmarkEntry) -> Path:
    """The benchmark's prepared file, prepared now unless its record matches the settings and the input."""
    from mmbatch.commands import prepare as prepare_command

    output = layout.prepared(benchmark)
    options = stage_options("prepare", benchmark.prepare, benchmark.prepare.get("input"), output)
    record = {"settings": json.loads(json.dumps(benchmark.prepare, sort_keys=True, default=str)),
              "input": _input_stamp(options.input)}
    record_path = layout.prepare_record(benchmark)
    if output.is_file() and record_path.is_file() and _read_json(record_path) == record:
        return output
    _say(f"== {benchmark.name}: prepare")
    output.parent.mkdir(parents=True, exist_ok=True)
    prepare_command.execute(options)
    with atomic_path(record_path) as tmp:
        tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return output


def _infer(unit: Unit, prepared: Path, files: PairFiles, session: ModelSession, settings: RunSettings) -> int:
    from mmbatch.commands import infer as infer_command

    if settings.merge_only:
        if not files.shard_predictions(unit.rows).is_file():
            raise BadInputError(f"not inferred yet ({files.shard_predictions(unit.rows)} is missing): run the plan "
                                "on the machine that has this unit (--shard K/N), or without --merge")
        return EXIT_OK
    _say(f"== {unit.label}: infer")
    files.folder.mkdir(parents=True, exist_ok=True)
    options = stage_options("infer", {**unit.model.infer, **unit.benchmark.infer, "shard": str(unit.rows)},
                            prepared, files.predictions, force=settings.force)
    return infer_command.execute(options, backends=session)


def _merge(files: PairFiles, benchmark: BenchmarkEntry, prepared: Path, label: str) -> None:
    from mmbatch.merge import merge_predictions
    from mmbatch.shards import Shard

    shards = [files.shard_predictions(Shard(k, benchmark.shards)) for k in range(benchmark.shards)]
    newest = max(path.stat().st_mtime_ns for path in shards)
    if files.predictions.is_file() and files.predictions.stat().st_mtime_ns >= newest:
        return
    _say(f"== {label}: merge {len(shards)} row shards")
    merge_predictions(shards, files.predictions, prepared=prepared)


def _extract_and_score(files: PairFiles, benchmark: BenchmarkEntry, label: str, settings: RunSettings,
                       *, redo: bool) -> int:
    from mmbatch.commands import extract as extract_command
    from mmbatch.commands import score as score_command

    _say(f"== {label}: extract")
    # New predictions (failed rows retried) make the earlier extraction stale; redoing it is cheap (cached judge).
    extract = stage_options("extract", benchmark.extract, files.predictions, files.extracted,
                            force=settings.force or redo)
    status = extract_command.execute(extract)
    _say(f"== {label}: score")
    score_command.execute(stage_options("score", benchmark.score, files.extracted, files.metrics))
    return status


def _input_stamp(path: Path | None) -> list[Any]:
    """Name, size and modification time of the input file (or of every file of an input folder)."""
    if path is None or not path.exists():
        return []
    found = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    return [[str(p.relative_to(path)) if path.is_dir() else str(p), p.stat().st_size, p.stat().st_mtime_ns]
            for p in found]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _digest(path: Path) -> str | None:
    from mmbatch.row_facts import file_sha256

    return file_sha256(path) if path.is_file() else None


def _worst(first: int, second: int) -> int:
    return max(first, second, key=SEVERITY.index)


def _say(line: str) -> None:
    from mmbatch.console import error_console

    error_console.print(line, markup=False, highlight=False, soft_wrap=True)


def _say_error(message: str) -> None:
    from rich.text import Text

    from mmbatch.console import error_console

    error_console.print(Text("error: ", style="bold red") + Text(message), highlight=False, soft_wrap=True)
