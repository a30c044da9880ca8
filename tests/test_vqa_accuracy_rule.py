"""The VQA accuracy kind (TextVQA), each expected score worked out here from the metric's definition.

The VQA metric: for each of the n human answers, min(1, (other annotators who gave the prediction) / 3), averaged.
With ten answers of which c equal the prediction, each of those c sees c - 1 matching others and each of the other
10 - c sees c: score = (c * min(1, (c-1)/3) + (10-c) * min(1, c/3)) / 10.
"""

from __future__ import annotations

import ast
import itertools
import math
import random
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mmbatch.answers import vqa_text
from mmbatch.answers.vqa_accuracy import VQA_ACCURACY, vlmevalkit_mean
from mmbatch.answers.vqa_text import digits_without_articles, evalai_normalise, vqa_normalise
from mmbatch.errors import BadInputError
from mmbatch.tableio import read_raw
from tests.support.kind_rows import decide_and_score, kind_settings


def by_hand(same: int, total: int = 10) -> float:
    """The metric for ``same`` of ``total`` answers equal to the prediction, straight from its definition."""
    return (same * min(1, (same - 1) / 3) + (total - same) * min(1, same / 3)) / total


def scored(predictions: list[str | None], answers: list[str | None], rules: str | None = None) -> pl.DataFrame:
    return decide_and_score(VQA_ACCURACY, predictions, answers, rules)


def answers(*texts: str) -> str:
    return repr(list(texts))


@pytest.mark.parametrize("same", range(11))
def test_score_of_c_matching_answers(same: int) -> None:
    row = answers(*(["stop"] * same + ["go"] * (10 - same)))
    result = scored(["stop"], [row])
    assert result["score"][0] == pytest.approx(by_hand(same), abs=1e-15)
    assert result["score"][0] == pytest.approx([0, 0.3, 0.6, 0.9, 1, 1, 1, 1, 1, 1, 1][same])
    assert result["extract_note"][0] == f"{same} of 10 human answers match 'stop'"


@pytest.mark.parametrize(("prediction", "expected"), [
    ("Stop.", "stop"),                      # case, final period
    ("The cafe", "cafe"),                   # articles go
    ("Two", "2"),                           # number words are digits
    ("none", "0"),                          # ... none too
    ("dont", "don't"),                      # contractions get their apostrophe
    ("1,000", "1000"),                      # a comma between digits: every punctuation mark is removed, not spaced
    ("x,y", "x y"),                         # otherwise a mark without a space next to it becomes a space
    ("x, y", "x y"),                        # and one with a space next to it disappears
    ("3.5", "3.5"),                         # a period before a digit stays
    ("Citroën", "citroën"),                 # unicode is lower-cased, not folded
    ("line\nbreak\ttab", "line break tab"),
])
def test_normalisation_examples(prediction: str, expected: str) -> None:
    assert vqa_normalise(prediction, "vlmevalkit-2024") == expected


def test_periods_after_digits_depend_on_the_era() -> None:
    """VLMEvalKit fixed the period pattern's look-behind on 2025-05-13: since then "1998." keeps its period."""
    assert vqa_normalise("1998.", "vlmevalkit-2024") == "1998"
    assert vqa_normalise("1998.", "vlmevalkit") == "1998."
    assert vqa_normalise("Stop.", "vlmevalkit") == "stop"
    result = {era: scored(["1998."], [answers(*["1998"] * 10)], era)["score"][0]
              for era in ("vlmevalkit-2024", "vlmevalkit", "official")}
    assert result == {"vlmevalkit-2024": 1.0, "vlmevalkit": 0.0, "official": 1.0}


def test_only_the_first_32_periods_are_stripped() -> None:
    """``re.UNICODE`` (32) lands in ``sub``'s count argument: periods 33 and on stay."""
    assert vqa_normalise("yes" + "." * 32, "vlmevalkit-2024") == "yes"
    assert vqa_normalise("yes" + "." * 40, "vlmevalkit-2024") == "yes" + "." * 8
    assert vqa_normalise("y.e.s" + "." * 40, "vlmevalkit") == "yes" + "." * 10


def test_digits_and_articles_step() -> None:
    assert digits_without_articles("A Two THE cat an Isnt") == "2 cat isn't"
    assert digits_without_articles("Im") == "im"  # the table's capitalised keys never match lower-cased words


def test_evalai_normaliser_of_the_official_evaluator() -> None:
    assert evalai_normalise("Dakota's, camera?") == "dakota 's camera"
    assert vqa_normalise("Dakota's, camera?", "vlmevalkit-2024") == "dakota's camera"
    assert evalai_normalise("x,y") == "xy"


def test_predictions_vlmevalkit_reads_as_missing_score_zero() -> None:
    """pandas reads None, N/A, nan, NULL and an empty cell as NaN, which VLMEvalKit scores as the text nan."""
    row = answers(*["none"] * 6 + ["n/a"] * 4)
    result = scored(["None", "N/A", "", None, "none"], [row] * 5)
    assert result["score"].to_list() == [0.0, 0.0, 0.0, 0.0, 1.0]  # "none" (lower case) is a word: "0" x 6
    assert result["extract_method"].to_list() == ["unmatched"] * 4 + ["text"]
    assert result["extracted"].to_list() == [None] * 4 + ["1.0"]
    assert result["extract_note"][4] == "6 of 10 human answers match '0'"
    # The TextVQA authors' evaluator reads its JSON as written: None is the word none.
    official = scored(["None", ""], [row] * 2, "official")
    assert official["score"].to_list() == [1.0, 0.0]


def test_rows_without_ground_truth_score_null() -> None:
    result = scored(["stop", "stop"], [None, ""])
    assert result["score"].to_list() == [None, None]
    assert result["extract_note"].to_list() == ["no ground truth to compare with"] * 2


def test_an_answer_that_is_not_a_list_is_refused(tmp_path: Path) -> None:
    rows = pl.DataFrame({"index": [7, 8, 9], "answer": [answers("a"), "stop", "['a'] * 10"]})
    with pytest.raises(BadInputError) as raised:
        VQA_ACCURACY.check_answers(rows, tmp_path / "file.tsv")
    message = str(raised.value)
    assert "file.tsv" in message and "row index=8" in message and "column 'answer'" in message
    assert "not a list of reference answers" in message
    with pytest.raises(BadInputError, match=r"row index=9.*runs no code"):
        VQA_ACCURACY.check_answers(rows.filter(pl.col("index") != 8), None)


def test_references_must_be_text_and_present() -> None:
    for cell, reason in [("[1998, 1999]", "not text"), ("[]", "no reference")]:
        with pytest.raises(BadInputError, match=reason):
            VQA_ACCURACY.check_answers(pl.DataFrame({"index": [1], "answer": [cell]}), None)


def test_the_official_evaluator_needs_ten_answers() -> None:
    rows = pl.DataFrame({"index": [1], "question": ["q"], "answer": [answers("a", "b")], "answer_text": ["a"],
                         "reasoning": [None]}, schema_overrides={"reasoning": pl.String})
    VQA_ACCURACY.check_answers(rows, None)  # VLMEvalKit takes any list
    with pytest.raises(BadInputError, match="needs 10 human answers, this row has 2"):
        VQA_ACCURACY.decide(rows, kind_settings("official"))


def test_failed_rows_and_cut_off_reasoning_score_zero() -> None:
    rows = pl.DataFrame({"index": [1, 2], "question": ["q", "q"], "answer": [answers(*["a"] * 10)] * 2,
                         "answer_text": ["a", "a"], "reasoning": [None, "unclosed"]})
    decided = VQA_ACCURACY.decide(rows, kind_settings())
    assert decided["extract_method"].to_list() == ["text", "unmatched"]
    # The first row failed in infer after all (extract never hands such rows to the kind, but score reads the file).
    extracted = pl.concat([rows, decided.drop("judge_prompt")], how="horizontal").with_columns(
        pl.Series("error", ["CUDA out of memory", None]))
    assert VQA_ACCURACY.score(extracted).to_list() == [0.0, 0.0]


def test_the_score_is_read_back_from_extracted() -> None:
    """``extracted`` holds the score as repr text: it reads back as the very float, whatever the era was."""
    result = scored(["stop"], [answers(*["stop"] * 2 + ["go"] * 8)])
    assert result["extracted"][0] == repr(by_hand(2)) and result["score"][0] == float(repr(by_hand(2)))
    edited = pl.DataFrame({"index": [5], "answer": ["['a']"], "extracted": ["stop"], "extract_method": ["text"]})
    with pytest.raises(BadInputError, match=r"row index=5.*extracted 'stop' is not a score"):
        VQA_ACCURACY.score(edited)


def test_vlmevalkits_mean_is_numpys_float_for_every_pattern_of_matches() -> None:
    """Averaged in plain Python in numpy's order of addition: the float ``numpy.mean`` gives (VLMEvalKit's), bit for
    bit, for every way up to 12 human answers can equal the prediction and for longer lists of answers."""
    patterns = [matches for total in range(1, 13) for matches in itertools.product((False, True), repeat=total)]
    rng = random.Random(7)
    patterns += [tuple(rng.random() < rng.random() for _ in range(total)) for total in (17, 31, 129, 300)
                 for _ in range(50)]
    patterns.append(())  # no human answers at all: NaN, as numpy's mean of nothing
    for matches in patterns:
        same = sum(matches)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = float(np.mean([min(1, (same - 1 if match else same) / 3) for match in matches]))
        got = vlmevalkit_mean(matches)
        assert got == expected or (math.isnan(got) and math.isnan(expected)), matches


def test_digits_and_articles_in_one_pass_equal_the_evaluations_two_passes(shared_data: Path) -> None:
    """``processDigitArticle`` as the VQA evaluation writes it (number words, then articles, then a second pass for
    contractions), against the one-pass version, on every prediction and reference of the 18 real TextVQA files."""
    def two_passes(text: str) -> str:
        kept = []
        for word in text.lower().split():
            word = vqa_text._NUMBER_WORDS.get(word, word)
            if word not in ("a", "an", "the"):
                kept.append(word)
        for position, word in enumerate(kept):
            if word in vqa_text._CONTRACTIONS:
                kept[position] = vqa_text._CONTRACTIONS[word]
        return " ".join(kept)

    texts = {"A Two THE cat an Isnt", "none of the ten", "Im ive", "the", "", "  dont\tstop  ", "ten thats a one"}
    for path in sorted((shared_data / "real_results").glob("*/*_TextVQA_VAL.xlsx")):
        frame = read_raw(path).frame
        texts.update(frame["prediction"].drop_nulls().to_list())
        for cell in frame["answer"].drop_nulls().unique().to_list():
            texts.update(ast.literal_eval(cell))
    assert len(texts) > 20_000
    for text in texts:
        for cleaned in (text, vqa_text.strip_vqa_punctuation(text)):
            assert vqa_text.digits_without_articles(cleaned) == two_passes(cleaned), cleaned
