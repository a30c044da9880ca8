"""OCRVQA_TESTCORE: VLMEvalKit's table with its text index (``<ISBN>_<n>``), exact match, accuracy per genre."""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl
import pytest

from mmbatch.benchmarks.ocrvqa import OCRVQA
from mmbatch.benchmarks.source_ids import key_digest
from mmbatch.cli import main
from mmbatch.tableio import read_metadata, read_table
from tests.support.vqa_tables import extract_and_score, write_table

# (index, genre, answer, prediction, right)
ROWS = [
    ("415718988_2", "Arts & Photography", "Arts & Photography", " arts & photography ", 1),
    ("184215012X_1", "Arts & Photography", "Mosaic (Inspirations)", "Mosaic", 0),
    ("9055947180_2", "History", "Yes", "yes", 1),
    ("9055947180_3", "History", "1984", "1984.", 0),   # no punctuation rules: the period stays
]


def table(folder: Path, name: str, *, predictions: bool, keys: list[str] | None = None) -> Path:
    columns = {"index": keys or [row[0] for row in ROWS], "question": ["What is it?"] * len(ROWS),
               "answer": [row[2] for row in ROWS], "category": [row[1] for row in ROWS]}
    return write_table(folder / name, columns, predictions=[row[3] for row in ROWS] if predictions else None)


def test_prepare_gives_each_row_its_keys_integer_and_keeps_the_key(tmp_path: Path) -> None:
    prepared = tmp_path / "prepared.parquet"
    assert main(["prepare", "--benchmark", "ocrvqa", "--input", str(table(tmp_path, "OCRVQA_TESTCORE.tsv",
                                                                          predictions=False)),
                 "--output", str(prepared)]) == 0
    frame = read_table(prepared).frame
    assert frame["question_id"].to_list() == [row[0] for row in ROWS]
    # the first 49 bits of the key's SHA-256, worked out here with hashlib (not mmbatch's code)
    assert frame["index"].to_list() == [int(hashlib.sha256(row[0].encode()).hexdigest()[:16], 16) >> 15
                                        for row in ROWS]
    assert frame["g_index"].to_list() == frame["index"].to_list()
    assert OCRVQA.source_ids == "mmbatch.benchmarks.source_ids:key_digest"
    assert key_digest(pl.DataFrame({"index": ["184215012X_1"]}), Path("x"))["index"][0] == frame["index"][1]


def test_a_repeated_text_key_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = [ROWS[0][0], ROWS[1][0], ROWS[1][0], ROWS[3][0]]
    source = table(tmp_path, "bad.tsv", predictions=False, keys=keys)
    assert main(["prepare", "--benchmark", "ocrvqa", "--input", str(source), "--output",
                 str(tmp_path / "p.parquet")]) == 2
    assert "bad.tsv: row index=184215012X_1: column 'index': index '184215012X_1' occurs more than once" in \
        capsys.readouterr().err


def test_exact_match_per_genre_after_import(tmp_path: Path) -> None:
    imported = tmp_path / "imported.parquet"
    assert main(["import", "--format", "vlmevalkit", "--input", str(table(tmp_path, "m_OCRVQA_TESTCORE.tsv",
                                                                          predictions=True)),
                 "--output", str(imported)]) == 0
    assert read_metadata(imported)["import"]["source_ids"] == ("index from each row's own key (question_id) by "
                                                               "mmbatch.benchmarks.source_ids:key_digest")
    values, hits = extract_and_score(imported, tmp_path)
    assert hits["hit"].to_list() == [row[4] for row in ROWS]
    assert hits["question_id"].to_list() == [row[0] for row in ROWS]
    assert values[("overall", "Overall", "acc")] == 50.0
    assert values[("category", "Arts & Photography", "acc")] == 50.0
    assert values[("category", "History", "acc")] == 50.0
