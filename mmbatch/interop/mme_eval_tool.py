"""The MME official evaluation tool's input: a folder with one ``<subtask>.txt`` per subtask.

Each line is ``image_name\\tquestion\\tground_truth\\tprediction``; the two questions of an image are consecutive
(the tool pairs lines by position). The tool reads lines with ``readlines()`` and never strips them, so a prediction
is kept exactly as read: leading and trailing spaces stay. Only the line terminator is removed; the tool's rule
(``yes``/``no`` among the first four lower-cased characters, or an exact ``yes``/``no``) gives the same verdict with
or without it, because a trailing newline can neither form nor break those words.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mmbatch.benchmarks.mme.subtasks import SUBTASKS, part_of
from mmbatch.errors import BadInputError
from mmbatch.interop.atomic_folder import atomic_folder
from mmbatch.interop.rows import (
    PROMPT_FROM_QUESTION,
    ExportResult,
    ImportOptions,
    ImportResult,
    default_model,
    finish_rows,
)

SUBTASK_PART: dict[str, str] = {task: str(part_of(task)) for task in SUBTASKS}
"""Subtask -> ``perception`` or ``cognition`` (the ``l2-category`` of MME rows), in the official tool's order."""


MAX_TOOL_FILE_BYTES = 64 << 20
"""Largest MME tool file read (the official ones are under 1 MB; a link to /dev/zero is refused, not read)."""


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


def read_tool_lines(path: Path, fields: tuple[int, ...] = (4,)) -> list[list[str]]:
    """The tab-separated fields of each line of one subtask file, as the official tool sees them.

    Lines are read like the tool's ``open(path).readlines()`` (universal newlines); only the final ``\\n`` is removed.
    Blank lines are skipped. ``fields`` are the allowed field counts: 4 for result files, 3 for the question files
    (``questions_template``).

    Raises:
        BadInputError: a line does not have ``fields`` fields (the tool would crash on it), naming the line.
    """
    if not path.is_file() or path.stat().st_size > MAX_TOOL_FILE_BYTES:
        raise BadInputError(f"not a regular file of at most {MAX_TOOL_FILE_BYTES:,} bytes (MAX_TOOL_FILE_BYTES); "
                            "an MME subtask file is a few hundred KB", path=path)
    try:
        with path.open(encoding="utf-8") as handle:
            lines = handle.readlines()
    except UnicodeDecodeError as exc:
        raise BadInputError("the file is not UTF-8", path=path) from exc
    rows = []
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
        rows.append(parts)
    return rows


def import_rows(options: ImportOptions) -> ImportResult:
    """Read the official tool's folder into predictions rows.

    ``index`` numbers the lines in the tool's subtask order, ``g_index`` is the index of the first question of the
    same image in the same subtask, ``category`` is the subtask and ``l2-category`` its part.
    """
    if options.benchmark not in (None, "mme"):
        raise BadInputError(f"the MME tool's files are MME results; --benchmark {options.benchmark!r} does not apply")
    columns: dict[str, list[object]] = {name: [] for name in
                                        ("index", "g_index", "question", "answer", "category", "l2-category",
                                         "image_name", "prediction")}
    counts = {}
    for path in subtask_files(options.input):
        subtask = path.stem
        rows = read_tool_lines(path)
        counts[subtask] = len(rows)
        first_of_image: dict[str, int] = {}
        for image, question, truth, prediction in rows:
            index = len(columns["index"])
            first_of_image.setdefault(image, index)
            for name, value in (("index", index), ("g_index", first_of_image[image]), ("question", question),
                                ("answer", truth), ("category", subtask), ("l2-category", SUBTASK_PART[subtask]),
                                ("image_name", image), ("prediction", prediction)):
                columns[name].append(value)
    frame = pl.DataFrame(columns, schema={"index": pl.Int64, "g_index": pl.Int64, **{
        name: pl.String for name in columns if name not in ("index", "g_index")}})
    frame = frame.with_columns(pl.lit("mme").alias("benchmark"))
    model = default_model(options)
    finished = finish_rows(frame, model=model, path=options.input)
    return ImportResult(finished, {
        "format": "mme-eval-tool", "benchmark": "mme", "model": model, "rows": finished.height,
        "subtasks": counts, "prompt_source": PROMPT_FROM_QUESTION,
        "prediction": "as read, unstripped; only the line terminator removed",
    })


def check_output(output: Path) -> None:
    """Refuse an output that is an existing file: the tool's input is a folder."""
    if output.exists() and not output.is_dir():
        raise BadInputError("the MME tool's input is a folder of <subtask>.txt files; give a folder path",
                            path=output)


def export_rows(frame: pl.DataFrame, output: Path) -> ExportResult:
    """Write one ``<subtask>.txt`` per subtask into the folder ``output``, ready for ``calculation.py``.

    The two questions of an image are written consecutively (rows ordered by ``g_index``, then ``index``). A line
    break or tab inside a prediction would break the tool's one-line format, so each is replaced by a space and
    counted in the notes.

    Raises:
        BadInputError: a row lacks its subtask, image name, question or ground truth.
    """
    needed = ("index", "g_index", "category", "question", "answer")
    missing = [name for name in needed if name not in frame.columns]
    if missing or not ({"image_name", "image_path"} & set(frame.columns)):
        lacking = missing or ["image_name or image_path"]
        raise BadInputError(f"cannot write MME tool files: missing column(s) {', '.join(lacking)}")
    image = pl.col("image_name") if "image_name" in frame.columns else \
        pl.col("image_path").str.split("/").list.last()
    prediction = pl.col("prediction") if "prediction" in frame.columns else pl.lit(None, dtype=pl.String)
    lines = frame.sort("g_index", "index").select(
        "index", "category", image.alias("image"), "question", "answer",
        prediction.fill_null("").alias("prediction"),
    )
    for name in ("category", "image", "question", "answer"):
        bad = lines.filter(pl.col(name).is_null())
        if bad.height:
            raise BadInputError("an MME tool line needs a value here", index=bad["index"][0], column=name)
    unknown = lines.filter(~pl.col("category").is_in(list(SUBTASK_PART)))
    if unknown.height:
        raise BadInputError(f"'{unknown['category'][0]}' is not an MME subtask", index=unknown["index"][0],
                            column="category")
    broken = lines["prediction"].str.contains(r"[\t\r\n]")
    lines = lines.with_columns(pl.col("prediction").str.replace_all(r"\r\n|[\t\r\n]", " "))
    written = []
    with atomic_folder(output, replaceable=tuple(f"{subtask}.txt" for subtask in SUBTASK_PART)) as staging:
        for subtask in SUBTASK_PART:
            part = lines.filter(pl.col("category") == subtask)
            if part.height == 0:
                continue
            text = "".join("\t".join(row) + "\n" for row in
                           part.select("image", "question", "answer", "prediction").iter_rows())
            (staging / f"{subtask}.txt").write_bytes(text.encode("utf-8"))
            written.append(output / f"{subtask}.txt")
    notes: tuple[str, ...] = ()
    if broken.any():
        notes = (f"{int(broken.sum())} prediction(s) held line breaks or tabs, replaced by spaces "
                 "(the tool reads one line per question)",)
    return ExportResult(tuple(written), lines.height, notes)
