"""VLMEvalKit's ``can_infer``: the rules that turn a free-form answer into an option letter (protocols.md §3).

Reproduced step by step, quirks included (``"The answer is a dog"`` gives ``A``), because MMBench numbers are only
comparable when every evaluator matches answers the same way. The same rules parse the judge's replies.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

API_FAILURE = "Failed to obtain answer via API"
"""VLMEvalKit's marker of a failed API call: never a match."""

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
_LAST_TOKENS = 4
"""A single letter counts only when its first occurrence is among the last four tokens."""


def match_choice(prediction: str, choices: Mapping[str, str]) -> str | None:
    """The option letter ``prediction`` names, ``Z`` for a refusal, or None when nothing matches.

    Args:
        prediction: the model's (or the judge's) answer text, as written.
        choices: each present option letter mapped to its option text, in letter order.

    Returns:
        A letter of ``choices``, ``"Z"``, or None.
    """
    letter = match_letter_token(prediction, choices)
    if letter is not None:
        return letter
    if API_FAILURE in prediction:
        return None
    letter = match_answer_is(prediction, choices)
    if letter is not None:
        return letter
    return match_option_text(prediction, choices)


def match_letter_token(prediction: str, choices: Mapping[str, str]) -> str | None:
    """Steps 1-4: API failure, refusals, then a lone option letter written as a word near the end."""
    if API_FAILURE in prediction:
        return None
    if any(refusal in prediction for refusal in REFUSALS):
        return NONE_OF_THE_OPTIONS
    tokens = prediction.translate(_SEPARATORS).split()
    named = [letter for letter in choices if letter in tokens]
    if len(named) == 1:
        letter = named[0]
        if tokens.index(letter) > len(tokens) - 1 - _LAST_TOKENS:
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


def match_option_text(prediction: str, choices: Mapping[str, str]) -> str | None:
    """Step 6: exactly one option's text occurs in the (not too long) lower-cased prediction."""
    lowered = prediction.lower()
    if len(lowered) > 2 * sum(len(str(text)) for text in choices.values()):
        return None
    found = [letter for letter, text in choices.items() if str(text).lower() in lowered]
    return found[0] if len(found) == 1 else None
