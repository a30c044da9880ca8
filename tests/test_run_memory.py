"""What a rule gave for the inputs of earlier batches is taken back, never wrongly (mmbatch/answers/run_memory.py)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pytest

import mmbatch.answers.run_memory as run_memory
import mmbatch.table_batches
from mmbatch.answers.run_memory import function_identity, once_per_input, remembered_across_batches
from mmbatch.cli import main
from mmbatch.tableio import read_table, write_table

REAL = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _lengths(rows: pl.DataFrame, calls: list[int]) -> pl.DataFrame:
    calls.append(rows.height)
    return rows.select(pl.col("text").str.len_chars().alias("length"), pl.col("text").str.to_uppercase().alias("up"))


def test_a_batch_computes_only_what_no_earlier_batch_computed() -> None:
    calls: list[int] = []
    first = pl.DataFrame({"text": ["a", "bb", None]})
    second = pl.DataFrame({"text": ["ccc", "bb", None, "a", "dddd"]})
    with remembered_across_batches() as memory:
        once_per_input(first, lambda rows: _lengths(rows, calls), "lengths")
        found = once_per_input(second, lambda rows: _lengths(rows, calls), "lengths")
    assert calls == [3, 2]  # the second batch: "ccc" and "dddd" only
    assert found.equals(_lengths(second, []))
    assert (memory.computed, memory.reused) == (5, 3)
    outside = once_per_input(second, lambda rows: _lengths(rows, calls), "lengths")  # nothing remembered outside
    assert calls[-1] == 5 and outside.equals(found)


def test_results_are_kept_apart_by_what_the_rule_depends_on() -> None:
    def rule_for(suffix: str) -> Callable[[pl.DataFrame], pl.DataFrame]:  # its captured suffix is part of its identity
        return lambda rows: rows.select((pl.col("text") + suffix).alias("out"))

    rows = pl.DataFrame({"text": ["x", "y"]})
    with remembered_across_batches():
        first = once_per_input(rows, rule_for("1"), function_identity(rule_for("1")))
        second = once_per_input(rows, rule_for("2"), function_identity(rule_for("2")))
        again = once_per_input(rows, rule_for("1"), function_identity(rule_for("1")))
    assert first["out"].to_list() == ["x1", "y1"] == again["out"].to_list()
    assert second["out"].to_list() == ["x2", "y2"]


def test_identity_counts_values_by_value_and_other_objects_by_identity() -> None:
    def closing_over(value: object) -> Callable[[], object]:
        return lambda: value

    assert function_identity(closing_over(["A", "B"])) == function_identity(closing_over(["A", "B"]))
    assert function_identity(closing_over(["A", "B"])) != function_identity(closing_over(["A", "C"]))

    class Opaque:
        __hash__ = None  # type: ignore[assignment]  # unhashable, like a frozen dataclass holding a dict

    one, other = Opaque(), Opaque()
    assert function_identity(closing_over(one)) == function_identity(closing_over(one))
    assert function_identity(closing_over(one)) != function_identity(closing_over(other))


def test_inputs_sharing_a_hash_are_each_decided(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every row hashed alike: a hash is never taken for the input, each distinct input gets its own result."""
    monkeypatch.setattr(run_memory, "row_hashes", lambda rows: pl.Series([7] * rows.height, dtype=pl.UInt64))
    calls: list[int] = []
    with remembered_across_batches():
        first = once_per_input(pl.DataFrame({"text": ["a", "bb"]}), lambda rows: _lengths(rows, calls), "k")
        second = once_per_input(pl.DataFrame({"text": ["bb", "a", "ccc"]}), lambda rows: _lengths(rows, calls), "k")
    assert first["length"].to_list() == [1, 2]
    assert second["length"].to_list() == [2, 1, 3] and second["up"].to_list() == ["BB", "A", "CCC"]


def test_a_full_memory_takes_no_more_and_still_answers_right(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its bound the memory keeps what it has: a batch computes what it has not seen, results unchanged."""
    monkeypatch.setattr(run_memory, "MEMORY_BYTES", 1)
    calls: list[int] = []
    with remembered_across_batches() as memory:
        once_per_input(pl.DataFrame({"text": ["a", "bb"]}), lambda rows: _lengths(rows, calls), "k")
        second = once_per_input(pl.DataFrame({"text": ["bb", "ccc"]}), lambda rows: _lengths(rows, calls), "k")
        third = once_per_input(pl.DataFrame({"text": ["ccc", "a"]}), lambda rows: _lengths(rows, calls), "k")
    assert calls == [2, 1, 1]  # "ccc" was not remembered: computed again; "a" and "bb" were
    assert second["length"].to_list() == [2, 3] and third["length"].to_list() == [3, 1]
    assert (memory.computed, memory.reused) == (4, 2)


@pytest.mark.parametrize("source, args", [
    ("llava15_13b/mmbench/mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx", ["--benchmark", "mmbench"]),
    ("real_results/vila_13b_vlmevalkit-pr320/vila_13b_TextVQA_VAL.xlsx",
     ["--benchmark", "textvqa", "--kind-option", "rules=vlmevalkit-2024"]),
    ("real_results/vila_13b_vlmevalkit-pr320/vila_13b_POPE.xlsx", ["--benchmark", "pope"]),
    ("real_results/vila_13b_vlmevalkit-pr320/vila_13b_ScienceQA_VAL.xlsx", ["--benchmark", "scienceqa"]),
])
def test_a_file_twice_over_is_decided_once(source: str, args: list[str], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows twice (new indices), one copy per batch: the second copy is decided from memory alone, so every
    kind's rules, checks and trace stripping are remembered across batches."""
    frame = read_table(REAL / source).frame
    twice = pl.concat([frame, frame.with_columns(pl.col("index").cast(pl.Int64) + 10_000_000)], how="vertical_relaxed")
    path = write_table(twice, tmp_path / "twice.tsv")
    monkeypatch.setattr(mmbatch.table_batches, "BATCH_CELLS", frame.height * twice.width)
    memories: list[run_memory.RunMemory] = []

    @contextmanager
    def recorded() -> Iterator[run_memory.RunMemory]:
        with remembered_across_batches() as memory:
            memories.append(memory)
            yield memory

    monkeypatch.setattr(importlib.import_module("mmbatch.extract.stage"), "remembered_across_batches", recorded)
    assert main(["extract", "--input", str(path), "--output", str(tmp_path / "x.parquet"), "--no-judge",
                 *args]) == 0
    memory = memories[0]
    assert memory.computed and memory.reused == memory.computed  # everything of the second copy was remembered


def test_the_writers_batches_take_from_the_first_passs_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """A reasoning model's traces are stripped once per distinct prediction in the whole run: the second pass, made
    in polars' writer threads, takes them from the first pass's memory."""
    from support.extract_rows import mcq_row, write_predictions

    import mmbatch.extract.reasoning as reasoning

    rows = [mcq_row(i, f"<think>option {i % 5} or so</think> {'ABCD'[i % 4]}") for i in range(40)]
    path = write_predictions(tmp_path / "pred.parquet", rows)
    monkeypatch.setattr(mmbatch.table_batches, "BATCH_CELLS", 10 * len(rows[0]))
    stripped: list[str] = []
    strip = reasoning.strip_reasoning

    def counted(text: str, tags: reasoning.TagPairs) -> tuple[str, str | None]:
        stripped.append(text)
        return strip(text, tags)

    monkeypatch.setattr(reasoning, "strip_reasoning", counted)
    assert main(["extract", "--input", str(path), "--output", str(tmp_path / "x.parquet"), "--no-judge"]) == 0
    assert mmbatch.table_batches.read_batched(path).count == 4
    assert sorted(stripped) == sorted({row["prediction"] for row in rows})  # 20 distinct, each stripped once
    assert read_table(tmp_path / "x.parquet").frame["extracted"].to_list() == ["ABCD"[i % 4] for i in range(40)]
