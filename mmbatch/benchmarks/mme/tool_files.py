"""The MME official evaluation tool's files: a folder with one ``<subtask>.txt`` per subtask.

Each line is ``image_name<TAB>question<TAB>ground_truth`` in the tool's question templates
(``eval_tool/Your_Results/``), with a fourth ``<TAB>prediction`` field once a model's answers are filled in; the two
questions of an image are consecutive (the tool pairs lines by position). The tool reads lines with ``readlines()``
and never strips them, so every field is kept exactly as read: leading and trailing spaces stay. Only the line
terminator is removed; the tool's rule (``yes``/``no`` among the first four lower-cased characters, or an exact
``yes``/``no``) gives the same verdict with or without it, because a trailing newline can neither form nor break
those words. A UTF-8 byte order mark is dropped: it can only sit before the first image name, which no verdict reads.

This one reader serves ``prepare`` (the templates as a benchmark's questions), ``import --format mme-eval-tool``
(filled files as predictions) and LLaVA's MME answers (the templates as ground truth).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mmbatch.benchmarks.mme.subtasks import SUBTASKS, part_of
from mmbatch.errors import BadInputError

SUBTASK_PART: dict[str, str] = {task: str(part_of(task)) for task in SUBTASKS}
"""Subtask -> ``perception`` or ``cognition`` (the ``l2-category`` of MME rows), in the official tool's order."""

MAX_TOOL_FILE_BYTES = 64 << 20
"""Largest MME tool file read (the official ones are under 1 MB; a link to /dev/zero is refused, not read)."""

GroundTruth = dict[tuple[str, str, str], str]
"""(subtask, image name, question) -> the ground truth as written (``Yes``/``No``)."""


@dataclass(frozen=True)
class ToolLine:
    """One non-blank line of a subtask file."""

    number: int
    """1-based line number in the file (blank lines counted)."""
    fields: list[str]
    """Its tab-separated fields, as read."""


def subtask_files(folder: Path) -> list[Path]:
    """The folder's ``<subtask>.txt`` files in the official order.

    Raises:
        BadInputError: the folder is missing, has no subtask file, or has a ``.txt`` file that is not a subtask.
    """
    if not folder.is_dir():
        raise BadInputError("not a folder of MME <subtask>.txt files", path=folder)
    found = {p.stem: p for p in folder.glob("*.txt")}
    unknown = sorted(set(found) - set(SUBTASK_PART))
    if unknown:
        raise BadInputError(f"'{unknown[0]}.txt' is not an MME subtask; expected files named after "
                            f"{', '.join(SUBTASK_PART)}", path=folder)
    if not found:
        raise BadInputError("the folder has no MME <subtask>.txt file", path=folder)
    return [found[task] for task in SUBTASK_PART if task in found]


def read_tool_lines(path: Path, fields: tuple[int, ...] = (4,)) -> list[ToolLine]:
    """The tab-separated fields of each non-blank line of one subtask file, as the official tool sees them.

    Lines are read like the tool's ``open(path).readlines()`` (universal newlines); only the final ``\\n`` is removed.
    ``fields`` are the allowed field counts: 4 for filled result files, 3 for the question templates.

    Raises:
        BadInputError: the file is too large or not UTF-8, or a line does not have ``fields`` fields (the tool would
            crash on it), naming the line.
    """
    if not path.is_file() or path.stat().st_size > MAX_TOOL_FILE_BYTES:
        raise BadInputError(f"not a regular file of at most {MAX_TOOL_FILE_BYTES:,} bytes (MAX_TOOL_FILE_BYTES); "
                            "an MME subtask file is a few hundred KB", path=path)
    try:
        with path.open(encoding="utf-8-sig") as handle:
            lines = handle.readlines()
    except UnicodeDecodeError as exc:
        raise BadInputError(f"the file is not UTF-8 ({exc.reason} at byte {exc.start})", path=path) from exc
    read = []
    for number, line in enumerate(lines, start=1):
        text = line[:-1] if line.endswith("\n") else line
        if not text.strip():
            continue
        parts = text.split("\t")
        if len(parts) not in fields:
            expected = " or ".join(str(f) for f in fields)
            raise BadInputError(f"line {number} has {len(parts)} tab-separated fields, expected {expected} "
                                "(image_name, question, ground_truth[, prediction]); a prediction must be one line "
                                "without tabs", path=path)
        read.append(ToolLine(number, parts))
    return read


def read_ground_truth(folder: Path) -> GroundTruth:
    """The ground truth of every question in a folder of subtask files (templates or filled files)."""
    truth: GroundTruth = {}
    for path in subtask_files(folder):
        for line in read_tool_lines(path, fields=(3, 4)):
            truth[(path.stem, line.fields[0], line.fields[1])] = line.fields[2]
    return truth
