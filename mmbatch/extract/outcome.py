"""What ``extract`` decides for a row, and what it still has to ask the judge."""

from __future__ import annotations

from dataclasses import dataclass, field

OUTCOME_COLUMNS = ("extracted", "extract_method", "judge_model", "judge_raw", "extract_note")
"""Columns ``extract`` adds to every row (``error`` is also set for rows whose judge calls failed)."""


@dataclass(frozen=True)
class Outcome:
    """The decision for one row."""

    extracted: str | None
    """The chosen letter, ``Yes``/``No``, or None."""
    method: str
    """``rule``, ``judge``, ``likelihood``, ``yes-no``, ``clip``, ``unmatched`` or ``error``."""
    judge_model: str | None = None
    """The judge asked about the row, if any."""
    judge_raw: str | None = None
    """The judge's last reply, if any."""
    note: str | None = None
    """Why the row is unmatched or failed, in words."""
    error: str | None = None
    """Why the row failed (method ``error``); goes to the ``error`` column so a rerun retries it."""
    similarities: tuple[float, ...] | None = None
    """``clip`` rows: similarity of the generated picture to each option picture, in letter order."""


@dataclass(frozen=True)
class JudgeTask:
    """A row the rules could not decide, with its judge prompt ready."""

    index: int
    """The row's ``index``."""
    group: object
    """Rows sharing a group are judged one after another (CircularEval); others are their own group."""
    kind: str
    """``mcq`` (reply parsed with ``can_infer``) or ``yes-no`` (reply parsed with the word rule)."""
    prompt: str
    """The exact judge prompt."""
    answer: str | None = None
    """Ground truth, to know when a group has failed."""
    choices: dict[str, str] = field(default_factory=dict)
    """Present options (``mcq``)."""
