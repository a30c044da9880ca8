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

from mmbatch.benchmarks.mme.tool_files import SUBTASK_PART, read_tool_lines, subtask_files
from mmbatch.errors import BadInputError
from mmbatch.interop.atomic_folder import atomic_folder
from mmbatch.interop.rows import (
    PROMPT_FROM_QUESTION,
    ExportResult,
    ImportOptions,
    ImportResult,
    default_model,
    finish_rows,
    submitted_answers,
)
from mmbatch.row_facts import group_index


def import_rows(options: ImportOptions) -> ImportResult:
    """Read the official tool's folder into predictions rows.

    ``index`` numbers the lines in the tool's subtask order, ``g_index`` pairs the questions of an image by MME's
    rule (:func:`mmbatch.row_facts.group_index`), ``category`` is the subtask and ``l2-category`` its part.
    """
    if options.benchmark not in (None, "mme"):
        raise BadInputError(f"the MME tool's files are MME results; --benchmark {options.benchmark!r} does not apply")
    columns: dict[str, list[object]] = {name: [] for name in
                                        ("index", "question", "answer", "category", "l2-category", "image_name",
                                         "prediction")}
    counts = {}
    for path in subtask_files(options.input):
        subtask = path.stem
        lines = read_tool_lines(path)
        counts[subtask] = len(lines)
        for line in lines:
            image, question, truth, prediction = line.fields
            for name, value in (("index", len(columns["index"])), ("question", question), ("answer", truth),
                                ("category", subtask), ("l2-category", SUBTASK_PART[subtask]), ("image_name", image),
                                ("prediction", prediction)):
                columns[name].append(value)
    frame = pl.DataFrame(columns, schema={"index": pl.Int64, **{name: pl.String for name in columns
                                                                 if name != "index"}})
    frame = frame.with_columns(group_index(frame.columns, "image-pair"))
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
    answers, answer_notes = submitted_answers(frame)
    lines = frame.with_columns(answers.alias("prediction")).sort("g_index", "index").select(
        "index", "category", image.alias("image"), "question", "answer",
        pl.col("prediction").fill_null("").alias("prediction"),
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
    notes = answer_notes
    if broken.any():
        notes += (f"{int(broken.sum())} prediction(s) held line breaks or tabs, replaced by spaces "
                  "(the tool reads one line per question)",)
    return ExportResult(tuple(written), lines.height, notes)
