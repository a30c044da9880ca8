"""VLMEvalKit's ``can_infer`` rules (docs/rules.md §3): every example of the spec, and the corner cases."""

from __future__ import annotations

import pytest

from mmbatch.answers.letters import (
    CHOICE_RULES,
    ChoiceRules,
    match_answer_is,
    match_choice,
    match_letter_token,
    match_option_text,
)

CARS = {"A": "red car", "B": "blue car", "C": "green bus", "D": "yellow truck"}


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        # The examples of docs/rules.md §3.
        ("B", "B"),
        ("B.", "B"),
        ("(C)", "C"),
        ("Answer: D", "D"),
        ("The answer is B because the cat is black and small", "B"),
        ("I think it is the blue car.", "B"),
        ("B or C", None),
        ("Z", "Z"),
        ("Cannot determine the answer", "Z"),
        # More letter forms.
        ("[A]", "A"),
        ("{D}", "D"),
        ("**C**", "C"),
        ("#B#", "B"),
        ("Option: C;", "C"),
        ("C!", "C"),
        ("  D  ", "D"),
        ("A\n", "A"),
        ("The correct option is C.", "C"),
        ("My choice: (B) blue car", "B"),
        # A lowercase letter is not a letter token (only step 5 lower-cases).
        ("b", None),
        ("c.", None),
        # Letters fused with other text are not tokens.
        ("AB", None),
        ("B2", None),
        ("A-B", None),
    ],
)
def test_spec_examples_and_letter_forms(prediction: str, expected: str | None) -> None:
    assert match_choice(prediction, CARS) == expected


def test_single_letter_must_first_occur_in_the_last_four_tokens() -> None:
    # 5 tokens: the letter at position 0 is not among the last four (0 > 5 - 5 is false), so the rules fall through.
    assert match_letter_token("B is my final answer", CARS) is None
    # 4 tokens: position 0 > 4 - 5, the letter wins.
    assert match_letter_token("B is my answer", CARS) == "B"
    # The FIRST occurrence counts, even when the letter is repeated at the end.
    assert match_letter_token("B one two three four B", CARS) is None
    assert match_letter_token("one two three four five B", CARS) == "B"


def test_fall_through_reaches_text_matching() -> None:
    # The lone letter is too early, but the option text names C.
    assert match_choice("C is the green bus, I believe that strongly", CARS) == "C"


def test_two_letters_are_ambiguous_but_answer_is_can_still_decide() -> None:
    assert match_letter_token("A or B", CARS) is None
    assert match_choice("Not A; the answer is B", CARS) == "B"


def test_answer_is_regex_quirks() -> None:
    assert match_choice("The answer is a dog", CARS) == "A"  # the known false positive, reproduced
    assert match_answer_is("the correct answer is **d**", CARS) == "D"
    assert match_answer_is("ANSWER IS C", CARS) == "C"
    assert match_answer_is("answer   is\n B", CARS) == "B"
    assert match_answer_is("The answer is E", {**CARS, "E": "bike"}) is None  # only A-D are captured
    assert match_answer_is("The answer is D", {"A": "x", "B": "y"}) is None  # not a present option


def test_z_only_when_no_option_letter() -> None:
    assert match_letter_token("Z", CARS) == "Z"
    assert match_letter_token("A Z", CARS) == "A"  # one option letter: it wins over Z
    assert match_letter_token("none: Z.", CARS) == "Z"


@pytest.mark.parametrize(
    "refusal",
    [
        "Sorry, I can't help with images of people yet.",
        "I can't process this file.",
        "I'm sorry, but without the image provided, I cannot say. A",
        "Cannot determine the answer",
    ],
)
def test_refusals_give_z(refusal: str) -> None:
    assert match_choice(refusal, CARS) == "Z"


def test_api_failure_never_matches_a_letter() -> None:
    assert match_choice("Failed to obtain answer via API. A", CARS) is None
    assert match_choice("Failed to obtain answer via API, the answer is B", CARS) is None


def test_api_failure_still_goes_through_option_texts_in_every_era() -> None:
    # VLMEvalKit's can_infer_option returns False on the marker, and can_infer then tries can_infer_text anyway.
    for rules in CHOICE_RULES.values():
        assert match_choice("Failed to obtain answer via API blue car", CARS, rules) == "B"


def test_option_text_matching() -> None:
    assert match_option_text("a blue car, clearly", CARS) == "B"
    assert match_option_text("IT IS THE GREEN BUS", CARS) == "C"
    assert match_option_text("a red car next to a blue car", CARS) is None  # two options named
    assert match_option_text("a bicycle", CARS) is None


def test_option_text_matching_refuses_long_predictions() -> None:
    total = sum(len(text) for text in CARS.values())  # 7 + 8 + 9 + 12 = 36
    at_limit = "blue car " + "x" * (2 * total - len("blue car "))
    assert len(at_limit) == 2 * total
    assert match_option_text(at_limit, CARS) == "B"
    assert match_option_text(at_limit + "x", CARS) is None


def test_missing_options_keep_their_letters() -> None:
    choices = {"A": "cat", "B": "dog", "D": "bird"}
    assert match_choice("D", choices) == "D"
    assert match_choice("C", choices) is None
    assert match_choice("(C) dog", choices) == "B"  # C is not an option, so its token does not count


def test_more_than_four_options() -> None:
    choices = {letter: f"option {letter.lower()}" for letter in "ABCDEFGH"}
    assert match_choice("H", choices) == "H"
    assert match_choice("The answer is F", choices) == "F"  # a lone letter token near the end
    # Too early for the token rule, and the answer-is regex only knows A-D: no match.
    assert match_choice("The answer is F because of many reasons", choices) is None


def test_option_texts_that_are_numbers() -> None:
    choices = {"A": "1", "B": "2", "C": "3", "D": "12"}
    assert match_choice("12", choices) is None  # "1", "2" and "12" are all substrings
    assert match_choice("3", choices) == "C"


def test_empty_prediction_matches_nothing() -> None:
    assert match_choice("", CARS) is None
    assert match_choice("   ", CARS) is None


def test_chinese_predictions() -> None:
    choices = {"A": "泰迪熊", "B": "兔子", "C": "猫", "D": "狗"}
    assert match_choice("答案是 B", choices) == "B"
    assert match_choice("图中是一只兔子", choices) == "B"
    assert match_choice("选项：C。", choices) is None  # "C。" is one token: the full-width stop is not a separator


# ----------------------------------------------------------------------------- VLMEvalKit's rules of each era

Y2024, Y2025, TODAY = CHOICE_RULES["vlmevalkit-2024"], CHOICE_RULES["vlmevalkit-2025"], CHOICE_RULES["vlmevalkit"]
GIRAFFE = {"A": "Giraffe is next to the sunset", "B": "Giraffe and sunset have no overlap",
           "C": "Giraffe is in front of the sunset", "D": "Giraffe and sunset are overlapping"}
"""SEEDBench_IMG index 25022 (VILA-13B's answer in VLMEvalKit's published file)."""
TOKENS = {"A": "牙牌", "B": "腰排", "C": "虎符", "D": "鱼符"}
"""CCBench index 2000122 (VILA-13B)."""
TOKEN_ANSWER = ("牙牌是一种传统的中国文物，由象牙、木材或骨头制成，上面雕刻有文字、图案和装饰物。"
                "它通常用于书写文章、留言或者纪念重要事件。")


def test_2024_letter_counts_anywhere_later_eras_only_among_the_last_four_tokens() -> None:
    assert match_choice("C. Giraffe and sunset are overlapping", GIRAFFE, Y2024) == "C"
    # Since pull request 1175 the leading C is too far from the end; the text of D matches instead.
    assert match_choice("C. Giraffe and sunset are overlapping", GIRAFFE, Y2025) == "D"
    assert match_choice("C. Giraffe and sunset are overlapping", GIRAFFE, TODAY) == "D"


def test_2024_matches_option_text_in_an_answer_of_any_length() -> None:
    assert match_choice(TOKEN_ANSWER, TOKENS, Y2024) == "A"
    assert match_choice(TOKEN_ANSWER, TOKENS, Y2025) is None  # longer than twice the option texts (16 characters)
    assert match_choice(TOKEN_ANSWER, TOKENS, TODAY) is None


def test_answer_is_only_since_2026() -> None:
    long_reason = "The answer is B because the cat is black and small"
    assert match_choice(long_reason, CARS, TODAY) == "B"
    assert match_choice(long_reason, CARS, Y2025) is None  # B is the 4th of 11 tokens, the text is too long
    assert match_choice(long_reason, CARS, Y2024) == "B"  # a lone letter anywhere
    assert match_choice("the answer is c, a bus that is green and very long indeed yes", CARS, TODAY) == "C"
    assert match_choice("the answer is c, a bus that is green and very long indeed yes", CARS, Y2024) is None


@pytest.mark.parametrize("rules", list(CHOICE_RULES.values()), ids=list(CHOICE_RULES))
def test_steps_every_era_shares(rules: ChoiceRules) -> None:
    assert match_choice("B or C", CARS, rules) is None
    assert match_choice("Z", CARS, rules) == "Z"
    assert match_choice("Cannot determine the answer", CARS, rules) == "Z"
    assert match_choice("a red car next to a blue car", CARS, rules) is None
