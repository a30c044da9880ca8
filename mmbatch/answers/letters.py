"""VLMEvalKit's ``can_infer``: the rules that turn a free-form answer into an option letter (docs/rules.md §3).

Reproduced step by step, quirks included (``"The answer is a dog"`` gives ``A``), because MMBench numbers are only
comparable when every evaluator matches answers the same way. The same rules parse the judge's replies.

VLMEvalKit changed the rules twice, and numbers published over the years were made with the rules of their day, so
each era is offered by name (:data:`CHOICE_RULES`); each behaves as ``vlmeval/utils/matching_util.py`` did then.
One branch of every era is left out on purpose: with the ``VERBOSE`` environment variable set, VLMEvalKit refuses a
lone ``A`` among more than three tokens ("A might be a quantifier"), a debugging switch that is off unless that
variable is set.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

API_FAILURE = "Failed to obtain answer via API"
"""VLMEvalKit's marker of a failed API call: the letter steps never match it (option texts still may)."""

REFUSALS: tuple[str, ...] = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)
"""Refusals that count as the answer ``Z`` ("none of the options")."""

NONE_OF_THE_OPTIONS = "Z"
"""The letter VLMEvalKit uses for "no option fits"; it is never a correct answer."""

_SEPARATORS = str.maketrans({char: " " for char in ".()[],:;!*#{}"})
_ANSWER_IS = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")


@dataclass(frozen=True)
class ChoiceRules:
    """One era of VLMEvalKit's ``can_infer``; the steps each era added are switched on here."""

    name: str
    """The ``--choice-rules`` value, recorded in the extracted file's metadata."""
    source: str
    """The VLMEvalKit commits whose ``can_infer`` this reproduces."""
    last_tokens: int | None
    """A lone option letter counts only when its first occurrence is among the last this many tokens; None:
    anywhere (before VLMEvalKit's pull request 1175)."""
    answer_is: bool
    """Try ``answer is X`` when no lone letter decided (since pull request 1552)."""
    text_length_cap: bool
    """Skip option-text matching when the answer is longer than twice all option texts (since pull request 1175)."""


CHOICE_RULES: dict[str, ChoiceRules] = {
    rules.name: rules
    for rules in (
        ChoiceRules("vlmevalkit", "VLMEvalKit since a67ace50 (pull request 1552, 2026-06-17)",
                    last_tokens=4, answer_is=True, text_length_cap=True),
        ChoiceRules("vlmevalkit-2025", "VLMEvalKit c3371551 (pull request 1175, 2025-08-04) to before a67ace50",
                    last_tokens=4, answer_is=False, text_length_cap=True),
        ChoiceRules("vlmevalkit-2024", "VLMEvalKit 98e3733f (2024-02-04) to before c3371551: the rules "
                    "of the numbers VLMEvalKit published from 2024 to mid-2025", last_tokens=None, answer_is=False,
                    text_length_cap=False),
    )
}
"""Every era by name, newest first."""

DEFAULT_CHOICE_RULES = "vlmevalkit"
"""The newest rules: what VLMEvalKit runs today."""

CURRENT = CHOICE_RULES[DEFAULT_CHOICE_RULES]


def match_choice(prediction: str, choices: Mapping[str, str], rules: ChoiceRules = CURRENT) -> str | None:
    """The option letter ``prediction`` names, ``Z`` for a refusal, or None when nothing matches.

    Args:
        prediction: the model's (or the judge's) answer text, as written.
        choices: each present option letter mapped to its option text, in letter order.
        rules: the era of VLMEvalKit's rules to apply (default: today's).

    Returns:
        A letter of ``choices``, ``"Z"``, or None.
    """
    letter = match_letter_token(prediction, choices, rules)
    if letter is not None:
        return letter
    # VLMEvalKit's can_infer_option gives up on the API-failure marker before its `answer is` step, but can_infer
    # still tries the option texts on it: every era does, so this does too.
    if rules.answer_is and API_FAILURE not in prediction:
        letter = match_answer_is(prediction, choices)
        if letter is not None:
            return letter
    return match_option_text(prediction, choices, rules)


def match_letter_token(prediction: str, choices: Mapping[str, str], rules: ChoiceRules = CURRENT) -> str | None:
    """Steps 1-4: API failure, refusals, then a lone option letter written as a word (near the end, since 2025)."""
    if API_FAILURE in prediction:
        return None
    if any(refusal in prediction for refusal in REFUSALS):
        return NONE_OF_THE_OPTIONS
    tokens = prediction.translate(_SEPARATORS).split()
    named = [letter for letter in choices if letter in tokens]
    if len(named) == 1:
        letter = named[0]
        if rules.last_tokens is None or tokens.index(letter) > len(tokens) - 1 - rules.last_tokens:
            return letter
    elif not named and NONE_OF_THE_OPTIONS in tokens:
        return NONE_OF_THE_OPTIONS
    return None


def match_answer_is(prediction: str, choices: Mapping[str, str]) -> str | None:
    """Step 5: ``answer is X`` anywhere in the raw text, X one of A-D in either case and a present option."""
    found = _ANSWER_IS.search(prediction)
    if found is None:
        return None
    letter = found.group(1).upper()
    return letter if letter in choices else None


def match_option_text(prediction: str, choices: Mapping[str, str], rules: ChoiceRules = CURRENT) -> str | None:
    """Step 6: exactly one option's text occurs in the lower-cased prediction (not too long, since 2025)."""
    lowered = prediction.lower()
    if rules.text_length_cap and len(lowered) > 2 * sum(len(str(text)) for text in choices.values()):
        return None
    found = [letter for letter, text in choices.items() if str(text).lower() in lowered]
    return found[0] if len(found) == 1 else None
