"""MathVision's answer kind: VLMEvalKit's ``post_check`` prefetch, its judge extraction and its ``post_check``
comparison (``vlmeval/dataset/utils/mathv.py``, e8e78f05) in the judge-extracted kind.

- **Prefetch** (no judge): an option row (a non-empty ``choices`` list) is decided by the letter ``can_infer``
  reads in the prediction, right or wrong; a free-form row only when ``is_equal(prediction, answer)`` holds
  (:mod:`.equality`), the prediction then being the stored answer.
- **The judge** (``build_judge(max_tokens=128)``, tries at temperatures 0, 0.5, 1, 1.5 and 2 while the reply holds
  VLMEvalKit's API-failure message) extracts an answer; any other reply is kept. VLMEvalKit stores the replies in an
  xlsx file and reads them back before comparing, so an empty reply comes back as NaN and is compared as the text
  ``nan``; mmbatch reads an empty reply as ``nan`` too.
- **The comparison**: an option row is right when ``is_equal`` holds between the letter ``can_infer`` reads in the
  extracted answer (``False`` when it reads none) and the ``answer`` cell; a free-form row when ``is_equal`` holds
  between the extracted answer and ``answer``.

A comparison the safe evaluator cannot follow fails the row at prefetch, and stops ``extract`` with exit 2 naming
the row after the judge: never a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

import polars as pl

from mmbatch.answers.judge_extracted import JudgeExtractedKind, RuleFailure
from mmbatch.answers.kind import JudgeSpec, JudgeVerdict, KindSettings
from mmbatch.answers.letters import API_FAILURE, CHOICE_RULES, NONE_OF_THE_OPTIONS, match_choice
from mmbatch.benchmarks.mathvision.equality import REFUSED, Verdict
from mmbatch.benchmarks.mathvision.prompt import INSTRUCTION, MATHVISION_EXAMPLES, mathvision_prompt

MAX_TOKENS = 128
"""VLMEvalKit's ``max_tokens`` for the MathVision judge."""
NO_LETTER = str(False)
"""What VLMEvalKit compares when ``can_infer`` reads no option (``str(False)``)."""
EMPTY_REPLY = "nan"
"""An empty judge reply as VLMEvalKit compares it, after its xlsx round trip."""


def parse_choices(cell: object) -> dict[str, str]:
    """The ``choices`` cell (a Python list literal, ``[]`` for a free-form question) as letters A, B, ...

    Raises:
        ValueError: the cell is missing or not a list literal (VLMEvalKit's ``eval`` of it would fail too).
    """
    if cell is None:
        raise ValueError("a MathVision row needs its choices (a Python list, [] for a free-form question)")
    try:
        values = ast.literal_eval(str(cell))
    except (SyntaxError, ValueError) as exc:
        raise ValueError(f"choices {str(cell)[:60]!r} is not a Python list") from exc
    if not isinstance(values, list | tuple):
        raise ValueError(f"choices {str(cell)[:60]!r} is not a Python list")
    return {chr(ord("A") + position): str(value) for position, value in enumerate(values)}


def _compare(answer: str, truth: str) -> Verdict:
    from mmbatch.benchmarks.mathvision.equality_worker import compare

    verdict = compare(answer, truth)
    if verdict.outcome == REFUSED:
        raise RuleFailure(f"VLMEvalKit's is_equal({answer[:80]!r}, {truth[:80]!r}) cannot be reproduced without "
                          f"running the text: {verdict.reason}")
    return verdict


class MathVisionRules:
    """MathVision's rules, read from a row's cells (``answer``, ``choices``)."""

    columns: tuple[str, ...] = ("choices",)
    """The column the rules read besides ``answer``."""

    def problem(self, row: Mapping[str, Any]) -> tuple[str, str] | None:
        """A row whose ``choices`` is missing or not a list."""
        try:
            parse_choices(row.get("choices"))
        except ValueError as exc:
            return str(exc), "choices"
        return None

    def prefetch(self, prediction: str, row: Mapping[str, Any], settings: KindSettings) -> str | None:
        """The letter ``can_infer`` reads (option rows), or the prediction when it equals the answer."""
        choices = parse_choices(row.get("choices"))
        if choices:
            return match_choice(prediction, choices, CHOICE_RULES[settings.choice_rules])
        # VLMEvalKit keeps the prefetched text only when it is truthy: an empty prediction goes to the judge.
        return prediction if prediction and _compare(prediction, str(row.get("answer"))).equal else None

    def is_right(self, extracted: str | None, row: Mapping[str, Any]) -> bool:
        """VLMEvalKit's ``post_check`` of the decided row (an option row's ``extracted`` is the letter its judge
        parser or prefetch read, else the reply that names none)."""
        if extracted is None:
            return False
        choices = parse_choices(row.get("choices"))
        if choices:
            named = extracted in choices or extracted == NONE_OF_THE_OPTIONS
            extracted = extracted if named else NO_LETTER
        return _compare(extracted, str(row.get("answer"))).equal


def judge_prompts(rows: pl.DataFrame) -> pl.Series:
    """VLMEvalKit's MathVision judge prompt of each row (its question as the TSV holds it, and ``answer_text``)."""
    return pl.Series("judge_prompt", [mathvision_prompt(str(question), text) for question, text in
                                      rows.select("question", "answer_text").iter_rows()], dtype=pl.String)


def row_choices(rows: pl.DataFrame) -> list[dict[str, str]]:
    """Each row's options from its ``choices`` list (empty for a free-form row), for the reply parser."""
    if "choices" not in rows.columns:
        return [{} for _ in range(rows.height)]
    return [parse_choices(cell) for cell in rows["choices"].cast(pl.String).to_list()]


def parse_reply(reply: str, choices: Mapping[str, str], settings: KindSettings) -> JudgeVerdict | None:
    """The reply as VLMEvalKit keeps it: None (ask again) only for its API-failure message. An option row's
    verdict is the letter ``can_infer`` reads, else the reply itself (wrong when compared)."""
    if API_FAILURE in reply:
        return None
    text = reply if reply else EMPTY_REPLY
    note = "an empty judge reply, compared as 'nan' as VLMEvalKit reads it back" if not reply else None
    if not choices:
        return JudgeVerdict(text, note)
    letter = match_choice(text, choices, CHOICE_RULES[settings.choice_rules])
    if letter is None:
        return JudgeVerdict(text, note or "the judge's answer names no option (VLMEvalKit compares False: wrong)")
    return JudgeVerdict(letter, note)


MATHVISION_JUDGE = JudgeSpec(
    label="math-extract", temperatures=(0.0, 0.5, 1.0, 1.5, 2.0),
    templates=(INSTRUCTION, *(example.text() for example in MATHVISION_EXAMPLES)), prompts=judge_prompts,
    parse=parse_reply, max_tokens=MAX_TOKENS, choices=row_choices)
"""VLMEvalKit's MathVision judge: its extraction prompt, five tries at rising temperatures, 128 tokens."""

ANSWERS = JudgeExtractedKind(rules=MathVisionRules(), judge=MATHVISION_JUDGE,
                             libraries=("latex2sympy2_extended", "antlr4-python3-runtime", "sympy"))
"""The kind ``mathvision`` declares."""
