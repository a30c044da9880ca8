"""The 14 MME subtasks and the part (perception or cognition) each belongs to (docs/rules.md §6)."""

from __future__ import annotations

PERCEPTION = "perception"
COGNITION = "cognition"

PERCEPTION_SUBTASKS: tuple[str, ...] = (
    "existence", "count", "position", "color", "posters", "celebrity", "scene", "landmark", "artwork", "OCR",
)
"""Perception subtasks, in the official tool's order (total score at most 2000)."""

COGNITION_SUBTASKS: tuple[str, ...] = (
    "commonsense_reasoning", "numerical_calculation", "text_translation", "code_reasoning",
)
"""Cognition subtasks, in the official tool's order (total score at most 800)."""

SUBTASKS: tuple[str, ...] = PERCEPTION_SUBTASKS + COGNITION_SUBTASKS
"""All subtasks; prepared rows come in this order."""

_PART = {name: PERCEPTION for name in PERCEPTION_SUBTASKS} | {name: COGNITION for name in COGNITION_SUBTASKS}
_BY_LOWER = {name.lower(): name for name in SUBTASKS}


def canonical_subtask(name: str) -> str:
    """The official spelling of a subtask name (``ocr`` -> ``OCR``); unknown names are returned unchanged."""
    return _BY_LOWER.get(name.lower(), name)


def part_of(subtask: str) -> str | None:
    """``perception`` or ``cognition`` for an MME subtask, None for a name MME does not have."""
    return _PART.get(canonical_subtask(subtask))


def subtask_order(subtask: str) -> int:
    """Sort key: the official order, unknown subtasks after the known ones."""
    canonical = canonical_subtask(subtask)
    return SUBTASKS.index(canonical) if canonical in _PART else len(SUBTASKS)
