"""SEED-Bench leaderboard upload: one ``{"question_id": ..., "prediction": ...}`` JSON object per line.

The leaderboard compares ``prediction`` with the answer letter, so the letter chosen by ``mmbatch extract``
(``extracted``) is written when the file has it; a predictions file is written with its raw ``prediction``, which
must then already be a letter (as in imported result files). Lines follow ``index`` order, which keeps the order of
an imported file, so import then export reproduces LLaVA's upload file byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.interop.rows import ExportResult
from mmbatch.tableio import atomic_path


def check_output(output: Path) -> None:
    """Refuse a folder as output: the upload is one file."""
    if output.is_dir():
        raise BadInputError("the SEED-Bench upload is one .jsonl file; give a file path", path=output)


def upload_column(frame: pl.DataFrame) -> str:
    """``extracted`` when the file went through ``extract``, else ``prediction``.

    Raises:
        BadInputError: neither column exists, or the file holds likelihood rows that were never extracted.
    """
    if "extracted" in frame.columns:
        return "extracted"
    if "mode" in frame.columns and (frame["mode"] == "likelihood").any():
        raise BadInputError("likelihood-mode rows have no text prediction; run `mmbatch extract` first and export "
                            "the extracted file", column="mode")
    if "prediction" not in frame.columns:
        raise BadInputError("the file has neither `extracted` nor `prediction`", column="prediction")
    return "prediction"


def export_rows(frame: pl.DataFrame, output: Path) -> ExportResult:
    """Write the upload file atomically; unmatched rows get an empty prediction (they count as wrong).

    Raises:
        BadInputError: a row has no ``question_id``.
    """
    if "question_id" not in frame.columns:
        raise BadInputError("SEED-Bench uploads need the `question_id` column", column="question_id")
    column = upload_column(frame)
    rows = frame.sort("index").select("index", "question_id", pl.col(column).alias("prediction"))
    no_id = rows.filter(pl.col("question_id").is_null())
    if no_id.height:
        raise BadInputError("the row has no question_id", index=no_id["index"][0], column="question_id")
    lines = [json.dumps({"question_id": qid, "prediction": prediction if prediction is not None else ""})
             for qid, prediction in rows.select("question_id", "prediction").iter_rows()]
    with atomic_path(output) as tmp:
        tmp.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    empty = int(rows["prediction"].is_null().sum())
    notes = (f"{empty} row(s) without a {column} were written with an empty prediction",) if empty else ()
    return ExportResult((output,), rows.height, notes)
