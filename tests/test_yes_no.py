"""MME yes/no rules (docs/rules.md §6): the official tool's prefix rule and VLMEvalKit's word rule.

The golden tests score the real LaVIN and LLaVA-1.5-13B outputs in ../shared/data with each rule and compare with the
published numbers (the scoring arithmetic is spelled out here, independent of ``mmbatch score``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mmbatch.answers.vqa_text import strip_vqa_punctuation
from mmbatch.answers.yes_no import vlmevalkit_yes_no
from mmbatch.benchmarks.mme.yes_no import ANSWERS, official_yes_no

PERCEPTION = ["existence", "count", "position", "color", "posters", "celebrity", "scene", "landmark", "artwork", "OCR"]
COGNITION = ["commonsense_reasoning", "numerical_calculation", "text_translation", "code_reasoning"]


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        # The examples of docs/rules.md §6.
        ("know", "No"),
        ("eyes are visible", "Yes"),
        ("The answer is yes.", None),
        # More.
        ("Yes", "Yes"),
        ("yes.", "Yes"),
        ("YES, there is", "Yes"),
        ("No", "No"),
        ("no\n", "No"),
        ("Not really", "No"),
        ("None of them", "No"),
        ("Nope", "No"),
        (" yes", "Yes"),  # unstripped: " yes" is still within four characters
        ("  yes", None),  # two spaces push "yes" past the fourth character
        ("\nNo", "No"),
        ("Noyes", "No"),  # "noye": no "yes" in it, but "no"
        ("yesno", "Yes"),  # yes is checked first
        ("I think yes", None),
        ("", None),
        ("Y", None),
        ("There is no dog", None),
        ("anon", "No"),  # "anon"[:4] holds "no"
    ],
)
def test_official_rule(prediction: str, expected: str | None) -> None:
    assert official_yes_no(prediction) == expected


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        ("Yes", "Yes"),
        ("The answer is yes.", "Yes"),
        ("No, there is no dog.", "No"),
        ("know", None),  # a word rule: "know" is not "no"
        ("Yes and no", None),
        ("yes/no", None),  # "/" with no space around it becomes a space: both words present
        ("I'm not sure", None),
        ("YES!", "Yes"),
        ("(no)", "No"),
        ("eyes", None),
        ("", None),
        ("Yes.No", None),  # the period between letters goes, leaving the word "yesno"
    ],
)
def test_vlmevalkit_word_rule(prediction: str, expected: str | None) -> None:
    assert vlmevalkit_yes_no(prediction) == expected


def test_vqa_punctuation_quirks() -> None:
    assert strip_vqa_punctuation("a,b") == "a b"
    assert strip_vqa_punctuation("a, b") == "a b"  # ", " present: commas are removed, not spaced
    assert strip_vqa_punctuation("1,000 yes-no") == "1000 yesno"  # a digit comma: every mark is removed
    assert strip_vqa_punctuation("end. 3.5") == "end 3.5"  # periods between digits stay
    # re.UNICODE lands in sub's count argument in VLMEvalKit: only the first 32 periods are removed.
    assert strip_vqa_punctuation("." * 40) == "." * 8


def test_mme_kind_applies_the_rule_named_by_yes_no_rule() -> None:
    assert ANSWERS.rule("official")("know") == "No"
    assert ANSWERS.rule("vlmevalkit")("know") is None
    with pytest.raises(ValueError, match="unknown yes/no rule"):
        ANSWERS.rule("strict")


def _mme_score(folder: Path, subtasks: list[str], rule: Callable[[str], str | None]) -> float:
    """Official MME arithmetic: per subtask acc + acc+ (images with both answers right), summed."""
    total = 0.0
    for subtask in subtasks:
        text = (folder / f"{subtask}.txt").read_text(encoding="utf-8")
        rows = [line.split("\t") for line in text.split("\n") if line.strip()]
        by_image: dict[str, list[bool]] = {}
        for fields in rows:
            image, truth, prediction = fields[0], fields[2], fields[3] if len(fields) > 3 else ""
            by_image.setdefault(image, []).append(rule(prediction) == truth.strip().capitalize())
        acc = 100 * sum(sum(v) for v in by_image.values()) / len(rows)
        acc_plus = 100 * sum(all(v) for v in by_image.values()) / len(by_image)
        total += acc + acc_plus
    return total


def test_lavin_golden_both_rules(shared_data: Path) -> None:
    folder = shared_data / "mme" / "LaVIN"
    assert _mme_score(folder, PERCEPTION, official_yes_no) == pytest.approx(963.6114, abs=1e-4)
    assert _mme_score(folder, COGNITION, official_yes_no) == pytest.approx(249.6429, abs=1e-4)
    # docs/rules.md §6: VLMEvalKit's word rule gives LaVIN cognition 248.9286.
    assert _mme_score(folder, COGNITION, vlmevalkit_yes_no) == pytest.approx(248.9286, abs=1e-4)


def test_llava_13b_golden_official_rule(shared_data: Path) -> None:
    folder = shared_data / "llava15_13b" / "mme" / "mme_results_txt"
    assert _mme_score(folder, PERCEPTION, official_yes_no) == pytest.approx(1531.3187, abs=1e-4)
    assert _mme_score(folder, COGNITION, official_yes_no) == pytest.approx(295.3571, abs=1e-4)
