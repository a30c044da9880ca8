"""The VLMEvalKit open-answer table reader (mmbatch/formats/vlmevalkit_vqa.py) and text keys given their integer
``index`` by the benchmark's rule (mmbatch/benchmarks/source_ids.py): the key kept, image references followed."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mmbatch.benchmarks.base import ReadOptions
from mmbatch.benchmarks.ocrvqa import OCRVQA
from mmbatch.benchmarks.source_ids import key_digest, with_source_ids
from mmbatch.benchmarks.textvqa import TEXTVQA
from mmbatch.errors import BadInputError
from mmbatch.formats.vlmevalkit_vqa import VqaTableReader
from tests.support.vqa_tables import png_base64

READER = VqaTableReader("ocrvqa", "mmbatch.answers.exact_match:EXACT_MATCH")


def digest(*keys: str) -> list[int]:
    return key_digest(pl.DataFrame({"index": list(keys)}), Path("x.tsv"))["index"].to_list()


def test_a_benchmark_without_a_rule_is_left_alone() -> None:
    frame = pl.DataFrame({"index": ["a_1", "b_2"]})
    assert with_source_ids(frame, TEXTVQA, Path("x.tsv")) is frame
    assert with_source_ids(frame, None, Path("x.tsv")) is frame


def test_text_keys_get_their_own_integer_and_references_follow() -> None:
    payload = png_base64()
    frame = pl.DataFrame({"index": ["b_1", "a_2", "c_3"], "image": [payload, "b_1", payload]})
    numbered = with_source_ids(frame, OCRVQA, Path("x.tsv"))
    assert numbered["index"].to_list() == digest("b_1", "a_2", "c_3")
    assert numbered["question_id"].to_list() == ["b_1", "a_2", "c_3"]
    assert numbered["image"].to_list() == [payload, str(digest("b_1")[0]), payload]
    # the row's integer is its key's, not its position's: another order or a subset gives each key the same one
    again = with_source_ids(frame.reverse().tail(2), OCRVQA, Path("y.tsv"))
    assert dict(zip(again["question_id"], again["index"], strict=True)) == {"b_1": digest("b_1")[0],
                                                                           "a_2": digest("a_2")[0]}


def test_a_numbered_file_is_checked_against_its_keys() -> None:
    numbered = with_source_ids(pl.DataFrame({"index": ["k_1", "k_2"]}), OCRVQA, Path("x.tsv"))
    assert with_source_ids(numbered, OCRVQA, Path("x.tsv")) is numbered
    in_file_order = numbered.with_columns(pl.Series("index", [0, 1]))  # as mmbatch before ocrvqa 1.1 numbered it
    with pytest.raises(BadInputError, match=r"index 0 is not the one ocrvqa 1\.1 gives question_id 'k_1'"):
        with_source_ids(in_file_order, OCRVQA, Path("old.parquet"))


@pytest.mark.parametrize(("frame", "message"), [
    (pl.DataFrame({"index": ["a_1", None]}), "empty index on data row 2"),
    (pl.DataFrame({"index": ["a_1", "a_1"]}), "index 'a_1' occurs more than once"),
    (pl.DataFrame({"index": ["a_1"], "question_id": ["q"]}), "has that column already"),
])
def test_bad_text_indices_are_refused(frame: pl.DataFrame, message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        with_source_ids(frame, OCRVQA, Path("x.tsv"))


def test_two_keys_given_one_integer_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("mmbatch.benchmarks.source_ids.DIGEST_BITS", 1)  # two integers only: keys must clash
    with pytest.raises(BadInputError, match=r"keys '.+' and '.+' are both given index"):
        with_source_ids(pl.DataFrame({"index": [f"k_{i}" for i in range(3)]}), OCRVQA, Path("x.tsv"))


def write(path: Path, **columns: list[object]) -> Path:
    pl.DataFrame(columns).write_csv(path, separator="\t")
    return path


def test_reader_checks_limits_and_keeps_every_column(tmp_path: Path) -> None:
    payload = png_base64()
    source = write(tmp_path / "OCRVQA.tsv", index=["k_1", "k_2", "k_3"], question=["q1", "q2", "q3"],
                   answer=["a", "b", "c"], image=[payload, "k_1", payload], genre_note=["x", "y", "z"])
    frame = READER.read(source, ReadOptions(limit=2))
    assert frame["index"].to_list() == digest("k_1", "k_2") and frame["question_id"].to_list() == ["k_1", "k_2"]
    assert frame["image"][1] == str(digest("k_1")[0]) and frame["genre_note"].to_list() == ["x", "y"]
    assert set(frame["benchmark"]) == {"ocrvqa"} and frame["split"].null_count() == 2
    with pytest.raises(BadInputError, match="--circular does not apply"):
        READER.read(source, ReadOptions(circular=True))


def test_reader_refuses_a_row_without_an_image(tmp_path: Path) -> None:
    source = write(tmp_path / "t.tsv", index=[1, 2], question=["q", "q"], answer=["a", "b"],
                   image=[png_base64(), None])
    # OCRVQA's rule takes every source key as text, "2" too: a subset of digit-only keys is numbered alike
    with pytest.raises(BadInputError, match=rf"row index={digest('2')[0]}.*no image"):
        READER.read(source, ReadOptions())
