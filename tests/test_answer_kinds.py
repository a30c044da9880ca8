"""The answer-kind interface: columnar decisions equal to the row rules, per-row scores, graded kinds, trust."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pytest

from mmbatch.answers.choice import CHOICE
from mmbatch.answers.frames import UNCLOSED_NOTE, columns_as_they_lie, decide_distinct, distinct_rows
from mmbatch.answers.kind import JudgeSpec, KindSettings
from mmbatch.answers.letters import CHOICE_RULES, match_choice
from mmbatch.answers.scores import ROW_SCORES, SCORE, row_scores, scores_digest, trusted_scores
from mmbatch.answers.yes_no import YesNoKind
from mmbatch.benchmarks.mme.yes_no import ANSWERS as MME
from mmbatch.benchmarks.pope.yes_no import ANSWERS as POPE
from mmbatch.score.hits import add_hits

OPTIONS = {"A": ["red", "red", "red", "red", "red", "red"], "B": ["blue", "blue", "blue", "blue", "blue", "blue"],
           "C": ["green", None, "green", "nan", "green", "green"]}


def choice_rows() -> pl.DataFrame:
    return pl.DataFrame({
        "index": [1, 2, 3, 4, 5, 6], "question": ["Which colour?"] * 6, "answer": ["A", "B", "C", "A", None, "B"],
        "answer_text": ["B", "B", "the sky", "the sky", "the sky", "I think so"],
        "reasoning": [None, None, None, None, "unclosed", None], **OPTIONS,
    })


def test_choice_decisions_equal_the_row_rules_spread_over_repeated_inputs() -> None:
    rows = choice_rows()
    decided = CHOICE.decide(rows, KindSettings())
    assert decided.columns == ["extracted", "extract_method", "extract_note", "judge_prompt"]
    for row, (extracted, method, note, prompt) in zip(rows.iter_rows(named=True), decided.iter_rows(), strict=True):
        choices = {letter: row[letter] for letter in "ABC" if row[letter] not in (None, "nan")}
        letter = match_choice(row["answer_text"], choices, CHOICE_RULES["vlmevalkit"])
        assert extracted == letter
        assert method == ("rule" if letter else "unmatched")
        if letter is None and row["reasoning"] != "unclosed":  # asked: the prompt holds this row's options only
            assert prompt is not None and note is None and ("C. green" in prompt) == (choices.get("C") == "green")
        else:
            assert prompt is None
    assert decided["extract_note"][4] == UNCLOSED_NOTE


def test_without_the_judge_nothing_asks_and_each_open_row_says_why() -> None:
    decided = CHOICE.decide(choice_rows(), KindSettings(use_judge=False))
    assert decided["judge_prompt"].null_count() == decided.height
    assert decided["extract_note"].to_list() == [None, None, "no rule matched (--no-judge)",
                                                 "no rule matched (--no-judge)", UNCLOSED_NOTE,
                                                 "no rule matched (--no-judge)"]


def test_decide_distinct_runs_the_rule_once_per_distinct_input_nulls_included() -> None:
    calls: list[tuple[object, ...]] = []

    def rule(text: str | None, other: str | None) -> tuple[str | None, str, str | None, bool]:
        calls.append((text, other))
        return text, "rule", other, False

    rows = pl.DataFrame({"t": ["a", None, "a", "b", None], "o": [None, None, None, "x", None]})
    decided = decide_distinct(rows, ["t", "o"], rule)
    assert calls == [("a", None), (None, None), ("b", "x")]
    assert decided["extracted"].to_list() == ["a", None, "a", "b", None]
    assert decided["extract_note"].to_list() == [None, None, None, "x", None]


@pytest.mark.parametrize(("kind", "rule", "text", "expected"), [
    (MME, "official", "Yes, there is.", ("Yes", "yes-no", None)),
    (MME, "official", "The answer is yes.", (None, "unmatched",
                                            "official yes/no rule: neither yes nor no in the first 4 characters")),
    (POPE, "official", "Not visible", ("Yes", "yes-no", None)),  # POPE's rule never leaves a row open
    (MME, "vlmevalkit", "The answer is yes.", ("Yes", "yes-no", None)),
])
def test_yes_no_kinds_apply_the_rule_each_benchmark_hands_in(kind: YesNoKind, rule: str, text: str,
                                                            expected: tuple[object, ...]) -> None:
    rows = pl.DataFrame({"index": [1], "question": ["Is it?"], "answer": ["Yes"], "answer_text": [text],
                         "reasoning": [None]}, schema_overrides={"reasoning": pl.String})
    assert kind.decide(rows, KindSettings(yes_no_rule=rule)).row(0)[:3] == expected


def test_the_word_rule_asks_the_judge_with_vlmevalkits_prompt_for_unknown() -> None:
    rows = pl.DataFrame({"index": [1], "question": ["Is there a dog"], "answer": ["Yes"],
                         "answer_text": ["Maybe."], "reasoning": [None]}, schema_overrides={"reasoning": pl.String})
    prompt = MME.decide(rows, KindSettings(yes_no_rule="vlmevalkit"))["judge_prompt"][0]
    assert prompt.endswith("Question: Is there a dog?\nAnswer: Maybe.\nYour output: ")


@dataclass(frozen=True)
class WordRecall:
    """A graded kind written as a lab would: the share of the answer's words the prediction contains."""

    name: str = "word-recall"
    version: str = "1"
    binary: bool = False
    judge: JudgeSpec | None = None
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    score_columns: tuple[str, ...] = ()

    def check_answers(self, rows: pl.DataFrame, path: Path | None) -> None:
        """Any text is a fine answer."""

    def decide(self, rows: pl.DataFrame, settings: KindSettings) -> pl.DataFrame:
        empty = pl.col("answer_text").str.strip_chars() == ""
        return rows.select(
            pl.when(empty).then(None).otherwise(pl.col("answer_text")).alias("extracted"),
            pl.when(empty).then(pl.lit("unmatched")).otherwise(pl.lit("text")).alias("extract_method"),
            pl.when(empty).then(pl.lit("empty answer")).otherwise(None).alias("extract_note"),
            pl.lit(None, dtype=pl.String).alias("judge_prompt"))

    def score(self, rows: pl.DataFrame) -> pl.Series:
        said = pl.col("extracted").fill_null("").str.to_lowercase().str.split(" ")
        truth = pl.col("answer").str.to_lowercase().str.split(" ")
        recall = said.list.set_intersection(truth).list.len() / truth.list.len()
        return rows.select(pl.when(pl.col("answer").is_null()).then(None).otherwise(recall)
                           .cast(pl.Float64).alias(SCORE)).to_series()


def test_a_graded_kind_scores_in_between_and_has_no_hit() -> None:
    kind = WordRecall()
    rows = pl.DataFrame({"index": [1, 2, 3, 4], "benchmark": ["lab"] * 4, "question": ["q"] * 4,
                         "answer": ["a red car", "blue", "two dogs", None],
                         "answer_text": ["a car", "", "two dogs", "x"], "reasoning": [None] * 4},
                        schema_overrides={"reasoning": pl.String})
    decided = kind.decide(rows, KindSettings())
    extracted = rows.select("index", "benchmark", "answer").hstack(decided)
    scores = row_scores(extracted, {"lab": kind})
    assert scores[:3].to_list() == pytest.approx([2 / 3, 0.0, 1.0]) and scores[3] is None
    hits = add_hits(extracted, {"lab": kind})
    assert hits["hit"].null_count() == 4 and hits["unmatched"].to_list() == [0, 1, 0, 0]


def test_likelihood_rows_score_as_letters_whatever_the_benchmarks_kind() -> None:
    frame = pl.DataFrame({"index": [1, 2, 3], "benchmark": ["lab", "lab", "mme"], "mode": ["generate", "likelihood",
                                                                                          "generate"],
                          "extracted": ["a red car", "B", "yes"], "answer": ["a red car", "B", "Yes"],
                          "extract_method": ["text", "likelihood", "yes-no"]})
    scores = row_scores(frame, {"lab": WordRecall(), "mme": MME})
    assert scores.to_list() == [1.0, 1.0, 1.0]  # MME compares ignoring case


def test_a_kind_returning_scores_out_of_range_is_stopped() -> None:
    @dataclass(frozen=True)
    class Broken(WordRecall):
        def score(self, rows: pl.DataFrame) -> pl.Series:
            return pl.Series(SCORE, [2.0] * rows.height)

    frame = pl.DataFrame({"index": [1], "benchmark": ["lab"], "extracted": ["x"], "answer": ["x"]})
    with pytest.raises(RuntimeError, match="outside"):
        row_scores(frame, {"lab": Broken()})


def test_stored_scores_are_trusted_only_for_the_cells_they_were_computed_from() -> None:
    frame = pl.DataFrame({"index": [1, 2], "benchmark": ["mmbench"] * 2, "extracted": ["A", "B"],
                          "answer": ["A", "A"]})
    scored = frame.with_columns(row_scores(frame, {"mmbench": CHOICE}))
    metadata = {ROW_SCORES: scores_digest(scored, {"mmbench": CHOICE})}
    assert SCORE in trusted_scores(scored, metadata, {"mmbench": CHOICE}).columns
    edited = scored.with_columns(pl.Series("extracted", ["A", "A"]))
    assert SCORE not in trusted_scores(edited, metadata, {"mmbench": CHOICE}).columns
    assert add_hits(trusted_scores(edited, metadata, {"mmbench": CHOICE}))["hit"].to_list() == [1, 1]
    assert SCORE not in trusted_scores(scored, {}, {"mmbench": CHOICE}).columns  # another tool wrote it


def test_rows_that_share_a_hash_are_still_told_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two different inputs with one 64-bit hash cannot be made on purpose: every hash is made equal instead, and
    each row must still get its own input's decision (the cell-by-cell check falls back to exact grouping)."""
    rows = pl.DataFrame({"t": ["a", "b", "a", None, "b"]})
    monkeypatch.setattr(pl.DataFrame, "hash_rows", lambda self, *a, **k: pl.Series([7] * self.height, dtype=pl.UInt64))
    decided = decide_distinct(rows, ["t"], lambda text: (text, "rule", None, False))
    assert decided["extracted"].to_list() == ["a", "b", "a", None, "b"]
    distinct, of_row = distinct_rows(rows)
    assert distinct["t"].to_list() == ["a", "b", None] and of_row.to_list() == [0, 1, 0, 2, 1]


def test_key_columns_are_read_where_they_lie_beside_new_columns() -> None:
    """An input column in two chunks (two Parquet row groups) beside a new one-chunk column: the keys are hashed and
    spread back column by column, without first copying the input column into one chunk (at a million MMBench rows
    that copy was 200 MiB of option texts), and every row still gets its own input's decision."""
    read = pl.concat([pl.DataFrame({"A": ["x", "y"]}), pl.DataFrame({"A": ["x", None]})], rechunk=False)
    rows = read.with_columns(pl.Series("t", ["1", "2", "1", "1"]))
    assert columns_as_they_lie(rows, ["t", "A"])["A"].n_chunks() == 2
    decided = decide_distinct(rows, ["t", "A"], lambda text, option: (f"{text}{option}", "rule", None, False))
    assert decided["extracted"].to_list() == ["1x", "2y", "1x", "1None"]


def test_kind_options_are_read_by_the_kind_that_declares_them_and_refused_otherwise() -> None:
    from mmbatch.errors import BadInputError
    from mmbatch.extract.rule_pass import check_kind_options

    @dataclass(frozen=True)
    class Relaxed(WordRecall):
        options: Mapping[str, tuple[str, ...]] = field(
            default_factory=lambda: {"tolerance_of": ("prediction", "answer")})

    kind = Relaxed()
    assert KindSettings().option(kind, "tolerance_of") == "prediction"  # the first value is the default
    given = KindSettings(options=(("tolerance_of", "answer"),))
    assert given.option(kind, "tolerance_of") == "answer"
    check_kind_options({"chart": kind}, given)
    with pytest.raises(BadInputError, match="--kind-option tolerance_of=both: choose one of prediction, answer"):
        check_kind_options({"chart": kind}, KindSettings(options=(("tolerance_of", "both"),)))
    with pytest.raises(BadInputError, match="--kind-option relaxed: no answer kind of this file reads it"):
        check_kind_options({"mmbench": CHOICE}, KindSettings(options=(("relaxed", "yes"),)))
