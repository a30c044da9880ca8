"""CircularEval groups and generated copies (docs/rules.md §1)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mmbatch.benchmarks.mmbench.circular import (
    add_circular_copies,
    circular_labels,
    copy_offset,
    group_keys,
    has_copies,
    rotation,
)
from mmbatch.tableio import read_table
from tests.conftest import EXAMPLES, run_cli

PAYLOAD = "iVBORw0KGgo" + "A" * 100  # only its length matters here: longer than a reference


def test_rotation_matches_the_protocol() -> None:
    assert rotation(list("ABCD"), 1) == {"A": "D", "B": "A", "C": "B", "D": "C"}  # ABCD -> DABC
    assert "".join(rotation(list("ABCD"), 2).values()) == "CDAB"
    assert "".join(rotation(list("ABCD"), 3).values()) == "BCDA"
    assert rotation(list("AB"), 1) == {"A": "B", "B": "A"}
    assert "".join(rotation(list("ABC"), 1).values()) == "CAB"


@pytest.mark.parametrize(("options", "answer", "expected"), [
    ({"A": "cat", "B": "dog", "C": "cow", "D": "pig"}, "B", list("ABCD")),
    ({"A": "yes", "B": "no"}, "A", list("AB")),
    ({"A": "cat", "B": None, "C": None, "D": None}, "A", None),  # one option
    ({"A": "cat", "B": "dog", "C": None, "D": "pig"}, "D", None),  # a gap: A, B, D
    ({"A": "cat", "B": "dog"}, "C", None),  # answer not an option
    ({"A": "cat", "B": "dog"}, None, None),  # no answer (test split)
    ({"A": "B", "B": "dog"}, "A", None),  # an option text is a single uppercase letter
    ({"A": "cat", "B": "both A and B", "C": "cow"}, "A", None),  # names two option letters
    ({"A": "cat", "B": "A,B", "C": "cow"}, "A", None),  # non-letters are spaces: "A B"
    ({"A": "cat", "B": "option A only", "C": "cow"}, "A", list("ABC")),  # one letter is fine
    ({"A": "A dog", "B": "cat", "C": "cow"}, "C", list("ABC")),  # the article "A" alone is fine
    ({"A": "Vitamin D and C", "B": "cat", "C": "cow"}, "B", list("ABC")),  # D is not an option letter here
    ({"A": "E and F", "B": "cat"}, "B", list("AB")),
    ({"A": "cat", "B": "nan"}, "A", None),  # "nan" counts as a missing option
])
def test_which_questions_get_copies(options: dict[str, str | None], answer: str | None,
                                    expected: list[str] | None) -> None:
    assert circular_labels(options, answer) == expected


def test_offset_grows_while_the_largest_index_reaches_it() -> None:
    assert copy_offset(0) == 1_000_000
    assert copy_offset(999_999) == 1_000_000
    assert copy_offset(1_000_000) == 10_000_000
    assert copy_offset(123_456_789) == 1_000_000_000


def frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"index": pl.Int64, "question": pl.String, "A": pl.String, "B": pl.String,
                                      "C": pl.String, "answer": pl.String, "image": pl.String,
                                      "extra": pl.String}).with_columns(g_index=pl.col("index"))


def test_copies_rotate_options_and_answers_and_reference_the_original() -> None:
    result = add_circular_copies(frame([
        {"index": 7, "question": "q", "A": "x", "B": "y", "C": "z", "answer": "A", "image": PAYLOAD, "extra": "e"},
        {"index": 8, "question": "r", "A": "u", "B": "v", "C": None, "answer": "B", "image": "7", "extra": None},
        {"index": 9, "question": "s", "A": "one", "B": "A and B", "C": "n", "answer": "A", "image": PAYLOAD,
         "extra": None},
    ]))
    rows = {row["index"]: row for row in result.frame.iter_rows(named=True)}
    assert sorted(rows) == [7, 8, 9, 1_000_007, 1_000_008, 2_000_007]
    assert (rows[1_000_007]["A"], rows[1_000_007]["B"], rows[1_000_007]["C"]) == ("y", "z", "x")
    assert rows[1_000_007]["answer"] == "C"
    assert (rows[2_000_007]["A"], rows[2_000_007]["B"], rows[2_000_007]["C"]) == ("z", "x", "y")
    assert rows[2_000_007]["answer"] == "B"
    assert (rows[1_000_008]["A"], rows[1_000_008]["B"], rows[1_000_008]["answer"]) == ("v", "u", "A")
    assert rows[1_000_007]["image"] == "7" and rows[1_000_007]["extra"] == "e" and rows[1_000_007]["g_index"] == 7
    assert rows[1_000_008]["image"] == "7"  # the original held a reference: passed on, never a reference chain
    assert result.copies == 3 and result.left_alone == 1 and result.offset == 1_000_000
    assert result.frame.columns == frame([]).columns


def test_copies_of_a_file_with_large_indices_use_a_larger_offset() -> None:
    result = add_circular_copies(frame([
        {"index": 5_000_001, "question": "q", "A": "x", "B": "y", "C": None, "answer": "A", "image": PAYLOAD,
         "extra": None}]))
    assert result.frame["index"].to_list() == [5_000_001, 15_000_001]
    assert result.frame["g_index"].to_list() == [5_000_001, 5_000_001]


def test_group_keys_own_column_wins_else_index_modulo() -> None:
    plain = pl.DataFrame({"index": [1, 1_000_001, 2_000_002, 3]})
    assert group_keys(plain).to_list() == [1, 1, 2, 3]
    own = plain.with_columns(g_index=pl.Series([10, 10, None, 3]))
    assert group_keys(own).to_list() == [10, 10, 2, 3]
    assert has_copies(group_keys(plain)) and not has_copies(pl.Series([1, 2, 3]))


def test_real_mmbench_dev_groups(shared_data: Path) -> None:
    """The real LLaVA MMBench-dev file: 1,176 questions in 938 groups of 4, 149 of 3 and 89 of 2."""
    table = read_table(shared_data / "llava15_13b/mmbench/mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx")
    real = table.frame.with_columns(g_index=group_keys(table.frame))
    sizes = real["g_index"].value_counts(name="size").group_by("size").len().sort("size")
    assert dict(sizes.iter_rows()) == {2: 89, 3: 149, 4: 938}

    # Regenerated copies hold the same arrangements of options as the real file's copies. (The real file numbers
    # its copies the other way round, copy 1 there is copy 3 here, so arrangements are compared as sets.)
    columns = ["A", "B", "C", "D", "answer"]
    originals = real.filter(pl.col("index") == pl.col("g_index")).select("index", "g_index", *columns)
    regenerated = add_circular_copies(originals).frame

    def arrangements(rows: pl.DataFrame) -> dict[int, set[tuple[str | None, ...]]]:
        grouped = rows.group_by("g_index").agg(pl.concat_list(columns).alias("rows"))
        return {g: {tuple(r) for r in arrangement} for g, arrangement in grouped.iter_rows()}

    mine, theirs = arrangements(regenerated), arrangements(real)
    copied = {g for g, rows in mine.items() if len(rows) > 1}
    assert len(copied) == 1176 - 32
    differing = {g for g in copied if mine[g] != theirs[g]}
    # The real file also kept option D in place in 25 more groups of 3 (e.g. "All of these options are
    # correct."), a hand choice of its authors; the protocol's rule rotates every option. The rest is the same.
    assert len(differing) == 25
    assert all(len(theirs[g]) == 3 and len({row[3] for row in theirs[g]}) == 1 for g in differing)
    # The 32 left alone have an option naming letters ("both A,B, and C", "Team A and Team D.") or a single letter
    # as its text (docs/rules.md §1); the real file rotated some of their options anyway.
    alone = originals.filter(~pl.col("g_index").is_in(list(copied)))
    assert "both A,B, and C" in set(alone["D"].to_list())


def test_circular_on_the_plain_example_gives_the_vlmevalkit_example(tmp_path: Path) -> None:
    plain = EXAMPLES / "mmbench" / "mcq_plain_example.tsv"
    vlmevalkit = EXAMPLES / "mmbench" / "mmbench_example.tsv"
    generated, reference = tmp_path / "generated.parquet", tmp_path / "reference.parquet"
    for source, output, extra in [(plain, generated, ["--circular"]), (vlmevalkit, reference, [])]:
        result = run_cli("prepare", "--benchmark", "mmbench", "--input", str(source), "--output", str(output), *extra)
        assert result.returncode == 0, result.stderr
    assert read_table(generated).frame.equals(read_table(reference).frame)
    assert read_table(generated).metadata["prepare"]["circular"] is True
