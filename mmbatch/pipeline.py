"""``mmbatch run``: prepare, infer, extract and score in one process, into one run folder.

The run's options are the stages' own options, declared again from what each stage's parser declared, so ``run``
accepts exactly what the stage commands accept (and each also reads ``MMBATCH_<OPTION>``) without a second list to
keep in step. An option that
several stages share (``--concurrency``, ``--timeout``, ``--max-retries``, ``--seed``, ``--force``,
``--max-pixels``, ``--media-root``, ``--benchmark``) goes to each of them; one that is not given keeps each stage's own
default. Each stage's command then builds its options object from those arguments and calls the stage function, in
this process, exactly as when it is run alone, so a rerun of ``mmbatch run`` resumes ``infer`` and ``extract`` where
they stopped.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mmbatch.commands import extract as extract_command
from mmbatch.commands import infer as infer_command
from mmbatch.commands import prepare as prepare_command
from mmbatch.commands import score as score_command
from mmbatch.errors import EXIT_OK, EXIT_ROWS_FAILED, BadInputError
from mmbatch.options import DeclaredOption, DeclaringParser, apply_environment_defaults, declare_again
from mmbatch.shards import shard_from_environment
from mmbatch.stage_files import StageFiles

RUN_STAGES = ("prepare", "infer", "extract", "score")
"""The stages ``run`` chains, in order; each reads the file the previous one wrote."""



class StageCommand(Protocol):
    """What ``run`` uses of a stage's command module (``mmbatch/commands/<stage>.py``)."""

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        """Declare the command and its options."""

    def options(self, args: argparse.Namespace) -> Any:
        """The stage's options object from parsed arguments (a frozen dataclass with the stage's fields)."""

    def execute(self, options: Any) -> int:
        """Run the stage function on ``options``, print what the command prints, return its exit status."""


STAGE_COMMANDS: dict[str, StageCommand] = {"prepare": prepare_command, "infer": infer_command,
                                           "extract": extract_command, "score": score_command}
"""Each stage's command module, in :data:`RUN_STAGES` order."""

REDONE_WHEN_INPUT_CHANGES = ("extract",)
"""Stages whose earlier progress ``run`` discards (``--force``) when this run's previous stage rewrote their input:
after a rerun of ``infer`` retried failed rows, the old extraction describes predictions that no longer exist, and
redoing it is cheap (the judge's replies are cached). ``infer`` is never forced that way: a changed prepared file is
refused, as by ``mmbatch infer`` itself, because its progress is the expensive part."""

NOT_FOR_RUN = {"help", "output", "shard"}
"""Stage options ``run`` does not offer: it names every file itself and always processes the whole file (shards are
for ``infer`` alone, joined by ``merge``)."""


@dataclass(frozen=True)
class RunFiles(StageFiles):
    """The files of one run, all in the run folder (``--output-dir``), named after their stage."""

    @property
    def prepared(self) -> Path:
        """``prepare``'s output, ``infer``'s input."""
        return self.folder / "prepared.parquet"

    def paths(self, stage: str, benchmark_input: Path | None) -> tuple[Path | None, Path]:
        """(input, output) of ``stage``; ``benchmark_input`` is what ``prepare`` reads (None: its official file,
        fetched)."""
        outputs = [self.prepared, self.predictions, self.extracted, self.metrics]
        position = RUN_STAGES.index(stage)
        return (benchmark_input if position == 0 else outputs[position - 1]), outputs[position]


def stage_parsers(*, with_environment: bool) -> dict[str, DeclaringParser]:
    """Each stage command's own parser, built by its module's ``register``, remembering its options.

    Args:
        with_environment: apply the ``MMBATCH_<OPTION>`` defaults, as the stage command itself would.
    """
    parsers: dict[str, DeclaringParser] = {}
    subparsers = argparse.ArgumentParser(add_help=False).add_subparsers(parser_class=DeclaringParser)
    for stage, command in STAGE_COMMANDS.items():
        parser = command.register(subparsers)
        assert isinstance(parser, DeclaringParser)
        if with_environment:
            apply_environment_defaults(parser)
        parsers[stage] = parser
    return parsers


def offered_options(parsers: dict[str, DeclaringParser]) -> list[tuple[DeclaredOption, list[str]]]:
    """The stage options ``run`` offers, each with the stages it goes to; the first stage to declare a name owns it.

    Only ``prepare``'s ``--input`` is kept (the benchmark source); later stages read the previous stage's file.
    """
    owners: dict[str, DeclaredOption] = {}
    stages_of: dict[str, list[str]] = {}
    for stage, parser in parsers.items():
        for option in parser.declared:
            dest = option.action.dest
            if dest in NOT_FOR_RUN or (dest == "input" and stage != "prepare"):
                continue
            name = option.names[-1]
            if name in owners and owners[name].action.dest != dest:
                continue  # another option under the same name (extract's --model names the model column)
            owners.setdefault(name, option)
            stages_of.setdefault(name, []).append(stage)
    return [(option, stages_of[name]) for name, option in owners.items()]


def add_stage_options(run_parser: argparse.ArgumentParser, *, repeatable: tuple[str, ...] = ()) -> None:
    """Give ``run_parser`` every stage option, none with a default of its own, its help saying which stages take it.

    Defaults are suppressed so that :func:`stage_arguments` can tell an option the user gave from one to leave at
    each stage's own default. Options whose ``dest`` is in ``repeatable`` may be given several times (``--model``
    once per model of a one-line plan) and hold a list.
    """
    for option, stages in offered_options(stage_parsers(with_environment=False)):
        if option.action.dest in repeatable:
            option = DeclaredOption(option.names, {**option.settings, "action": "append"}, option.action)
        declare_again(run_parser, option, help_prefix=f"({', '.join(stages)}) ")


def stage_arguments(parser: DeclaringParser, given: argparse.Namespace, input_path: Path | None,
                    output_path: Path) -> argparse.Namespace:
    """The arguments a stage command gets: its own defaults, then what the user gave ``run``, then the run's files."""
    values = {dest: getattr(given, dest, default) for dest, default in parser.declared_defaults().items()}
    values["input"] = input_path
    values["output"] = output_path
    return argparse.Namespace(**values)


def run_pipeline(given: argparse.Namespace) -> int:
    """Run every stage in order into ``given.output_dir``.

    Returns:
        0 when every row of every stage is done; 3 when some stage finished with failed rows (the later stages
        still run, and count those rows as failed).

    Raises:
        BadInputError: a stage's bad input or options (exit 2), or a shard set in the environment.
    """
    from mmbatch.console import error_console
    from mmbatch.errors import ProgressRefusedError

    shard = shard_from_environment()
    if not shard.is_whole:
        raise BadInputError(f"the environment sets shard {shard}, but `mmbatch run` processes the whole file: run "
                            "`mmbatch infer` per shard, then `mmbatch merge`, `extract` and `score` (docs/scale.md)")
    files = RunFiles(Path(given.output_dir))
    if files.folder.exists() and not files.folder.is_dir():
        raise BadInputError("--output-dir names a file, not a folder; give a folder for the run's files",
                            path=files.folder)
    parsers = stage_parsers(with_environment=True)
    status = EXIT_OK
    rewritten: set[Path] = set()
    for stage in RUN_STAGES:
        error_console.print(f"== {stage}", markup=False, highlight=False, soft_wrap=True)
        given_input = getattr(given, "input", None)
        input_path, output_path = files.paths(stage, None if given_input is None else Path(given_input))
        command = STAGE_COMMANDS[stage]
        options = command.options(stage_arguments(parsers[stage], given, input_path, output_path))
        if stage in REDONE_WHEN_INPUT_CHANGES and input_path in rewritten:
            options = dataclasses.replace(options, force=True)
        before = file_digest(output_path)
        try:
            stage_status = command.execute(options)
        except ProgressRefusedError as exc:  # run names its files from --output-dir, not --output
            raise exc.naming("--output-dir") from None
        if file_digest(output_path) != before:
            rewritten.add(output_path)
        if stage_status == EXIT_ROWS_FAILED:
            status = EXIT_ROWS_FAILED
        elif stage_status != EXIT_OK:
            return stage_status
    error_console.print(f"run: {files.folder}: {files.prepared.name}, {files.predictions.name}, "
                        f"{files.extracted.name}, {files.metrics.name}", markup=False, highlight=False, soft_wrap=True)
    return status


def file_digest(path: Path) -> str | None:
    """SHA-256 of a file's bytes, or None when there is no such file."""
    from mmbatch.row_facts import file_sha256

    return file_sha256(path) if path.is_file() else None
