"""One module per command: ``register(subparsers)`` adds its options, ``run(args)`` returns its exit status.

:data:`COMMANDS` names each command's module and its one-line summary. The summary lives here, not in the module, so
that ``mmbatch --help`` (which lists only the commands and their summaries) is built without importing any command
module: that import is most of a command's start-up.
"""

from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    """A command of the ``mmbatch`` line: the module providing ``register`` and ``run``, and the summary that
    ``mmbatch --help`` prints for it."""

    module: str
    summary: str


COMMANDS: dict[str, Command] = {
    "prepare": Command("mmbatch.commands.prepare",
                       "read a benchmark into a prepared stage file (rows + rendered prompts)"),
    "infer": Command("mmbatch.commands.infer", "run a model over a prepared file"),
    "merge": Command("mmbatch.commands.merge", "join shard outputs of infer into one file"),
    "extract": Command("mmbatch.commands.extract", "turn predictions into choices (rules, then an LLM judge)"),
    "score": Command("mmbatch.commands.score", "score extracted answers: hits per row and the metrics table"),
    "report": Command("mmbatch.commands.report",
                      "compare models: leaderboard tables and a chart per benchmark, as Markdown or HTML"),
    "compare": Command("mmbatch.commands.compare", "paired comparison of two models: differences with paired "
                       "bootstrap intervals and a paired test"),
    "view": Command("mmbatch.commands.view",
                    "a self-contained HTML viewer of every row: pictures, prompt, answer, extraction, verdict"),
    "import": Command("mmbatch.commands.import_", "read predictions made by VLMEvalKit, LLaVA, the MME tool or "
                      "SEED-Bench into a predictions file"),
    "export": Command("mmbatch.commands.export", "write predictions for the MMBench server, the MME tool or the "
                      "SEED-Bench leaderboard, or send metrics to MLflow or W&B (--to)"),
    "validate": Command("mmbatch.commands.validate", "check a stage file against its schema"),
    "run": Command("mmbatch.commands.run", "prepare, infer, extract and score in one go"),
    "list": Command("mmbatch.commands.list_",
                    "what this install knows: benchmarks, backends, rule versions, model families tested"),
}
"""Command name -> its module and summary, in the order ``mmbatch --help`` lists them. A module that is not installed
yet is left out of the parser."""


def summary(name: str) -> str:
    """The one-line summary of command ``name`` (its ``help=`` in ``mmbatch --help``)."""
    return COMMANDS[name].summary
