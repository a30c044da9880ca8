"""TSV/Parquet/xlsx reading and writing: lossless round trips, typed columns, atomic writes, clear errors."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from mmbatch.errors import BadInputError
from mmbatch.tableio import atomic_path, canonical, metadata_sidecar, read_metadata, read_table, write_table


def _frame() -> pl.DataFrame:
    return pl.DataFrame({
        "index": [1, 2, 3],
        "question": ["multi\nline", 'a "quoted" word', "图中有几只猫？"],
        "A": ["None", "NA", "nan text"],
        "B": ["x", None, "\ttab"],
        "choice_logprobs": [[-1.25, -0.5], None, [-3.0, -0.125]],
        "choice_ntokens": [[2, 3], None, [1, 1]],
        "segment": [None, [1.5, 3.0], None],
        "latency_ms": [1.5, None, 2.0],
        "source": ["", "kept", None],
    })


@pytest.mark.parametrize("first, second", [(".tsv", ".parquet"), (".parquet", ".tsv")])
def test_round_trip_between_formats_is_lossless(tmp_path: Path, first: str, second: str) -> None:
    a, b, c = tmp_path / f"a{first}", tmp_path / f"b{second}", tmp_path / f"c{first}"
    write_table(_frame(), a, {"stage": "prepared", "prepare": {"benchmark": "mmbench"}})
    write_table(read_table(a).frame, b, read_table(a).metadata)
    write_table(read_table(b).frame, c, read_table(b).metadata)
    expected = read_table(a)
    assert read_table(c).frame.equals(expected.frame)
    assert read_table(c).metadata == expected.metadata
    assert read_table(b).frame.equals(expected.frame)


def test_text_that_looks_like_missing_stays_text(tmp_path: Path) -> None:
    path = tmp_path / "t.tsv"
    write_table(_frame(), path)
    frame = read_table(path).frame
    assert frame["A"].to_list() == ["None", "NA", "nan text"]
    assert frame["source"].to_list() == [None, "kept", None], "an empty cell is null"
    assert frame.schema["choice_logprobs"] == pl.List(pl.Float64)
    assert frame.schema["index"] == pl.Int64


@pytest.mark.parametrize("suffix", [".tsv", ".parquet"])
def test_an_empty_answer_stays_an_empty_string_and_no_answer_stays_null(tmp_path: Path, suffix: str) -> None:
    """A model that answered nothing gave an answer, "" (its tokens are counted); null is a row without answer text
    (likelihood, generate-image and failed rows). Every other text column still stores empty text as null."""
    frame = pl.DataFrame({"index": [1, 2, 3], "prediction": ["", None, "B"], "error": ["", None, "x"]})
    first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    write_table(frame, first)
    write_table(read_table(first).frame, second)
    for path in (first, second):
        read = read_table(path).frame
        assert read["prediction"].to_list() == ["", None, "B"]
        assert read["error"].to_list() == [None, None, "x"]


def test_metadata_lives_in_parquet_or_a_sidecar(tmp_path: Path) -> None:
    write_table(_frame(), tmp_path / "x.parquet", {"stage": "prepared"})
    write_table(_frame(), tmp_path / "x.tsv", {"stage": "prepared"})
    assert read_metadata(tmp_path / "x.parquet")["stage"] == "prepared"
    assert metadata_sidecar(tmp_path / "x.tsv").is_file()
    assert read_metadata(tmp_path / "x.tsv")["mmbatch_version"]


def test_bad_integer_names_row_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text("index\tquestion_type_id\n7\t3\n8\tthree\n", encoding="utf-8")
    with pytest.raises(BadInputError) as err:
        read_table(path)
    assert str(err.value) == f"{path}: row index=8: column 'question_type_id': 'three' is not a valid int64 value"


def test_integers_written_as_floats_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "f.tsv"
    path.write_text("index\tg_index\n1000001.0\t1.0\n", encoding="utf-8")
    assert read_table(path).frame.row(0) == (1000001, 1)


@pytest.mark.parametrize("content, message", [
    (b"", "the file is empty"),
    (b"index\tquestion\n1\tcaf\xe9\n", "the file is not UTF-8 (byte 0xe9 on line 2)"),
])
def test_unreadable_files_are_clear_errors(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "f.tsv"
    path.write_bytes(content)
    with pytest.raises(BadInputError, match=re.escape(message)):
        read_table(path)


def test_unknown_extension_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match=r"cannot write '\.csv' files"):
        write_table(_frame(), tmp_path / "x.csv")


def test_stray_quote_at_field_start_is_read_without_quoting(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    path.write_text('index\tquestion\n1\t"Hello" she said, and left\n2\tplain\n', encoding="utf-8")
    assert read_table(path).frame["question"].to_list() == ['"Hello" she said, and left', "plain"]


def test_xlsx_is_read_as_text(tmp_path: Path) -> None:
    path = tmp_path / "p.xlsx"
    pl.DataFrame({"index": [1, 2], "A": ["None", "3"], "prediction": ["A", "B"]}).write_excel(path)
    frame = read_table(path).frame
    assert frame["index"].to_list() == [1, 2]
    assert frame["A"].to_list() == ["None", "3"]


def test_failed_write_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "out.parquet"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("crash mid-write")
    assert list(tmp_path.iterdir()) == []


def test_canonical_rewrites_only_the_text_columns_that_hold_an_empty_text() -> None:
    """A column without "" is kept as it lies (rewriting every text column copied a million-row file's texts, +250
    MiB); one with "" gets null there, and `prediction` keeps its empty answer."""
    parts = [pl.DataFrame({"question": ["q1", "q2"], "hint": ["", "h"], "prediction": ["", "A"]}),
             pl.DataFrame({"question": ["q3"], "hint": [None], "prediction": [None]})]
    frame = pl.concat(parts, rechunk=False)
    written = canonical(frame)
    assert written["question"].n_chunks() == 2  # untouched
    assert written["hint"].to_list() == [None, "h", None]
    assert written["prediction"].to_list() == ["", "A", None]
