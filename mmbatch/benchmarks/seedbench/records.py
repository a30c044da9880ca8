"""One SEED question record -> the prepared fields SEED-Bench-1 and -2 share.

``index`` is the record's position in the file (0-based) and ``g_index`` equals it (every SEED row is its own
group). The source's ``question_id`` is kept as text next to it: it is not a usable key, since ``49914`` occurs
twice in the SEED-Bench-1 JSON.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mmbatch.benchmarks.seedbench.questions import (
    answer_letter,
    choices,
    dimension_id,
    extra_text,
    segment,
    text_field,
)
from mmbatch.errors import BadInputError

SHARED_FIELDS = frozenset({
    "question", "question_id", "question_type_id", "answer", "segment", "data_id", "data_type",
    "choice_a", "choice_b", "choice_c", "choice_d", "choice_A", "choice_B", "choice_C", "choice_D",
})
"""Source fields turned into prepared columns; every other field is carried through as text."""


def shared_fields(record: dict[str, Any], *, index: int, path: Path, benchmark: str,
                  dimension_names: dict[int, str], category_field: str | None = None) -> dict[str, Any]:
    """The prepared columns every SEED row has: ids, question, options, answer, dimension and segment.

    Args:
        record: one question of the JSON.
        index: its position in the file.
        path: the JSON file (for error messages).
        benchmark: the ``benchmark`` column value.
        dimension_names: ``question_type_id`` -> dimension name, the ``category``.
        category_field: a record field giving the category when the record has no ``question_type_id``
            (SEED-Bench-2-Plus: ``question_image_type``).

    Raises:
        BadInputError: a missing field, an unknown dimension, an answer that is not a choice, a bad segment.
    """
    options = choices(record, index=index, path=path)
    dimension = dimension_id(record, index=index, path=path)
    if dimension is not None:
        category = dimension_names.get(dimension)
        if category is None:
            raise BadInputError(f"dimension {dimension} is not in the file's question_type table", path=path,
                                index=index, column="question_type_id")
    elif category_field is not None and record.get(category_field) is not None:
        category = str(record[category_field])
    else:
        raise BadInputError("missing 'question_type_id'", path=path, index=index, column="question_type_id")
    return {
        "index": index,
        "g_index": index,
        "benchmark": benchmark,
        "question": text_field(record, "question", index=index, path=path),
        **options,
        "answer": answer_letter(record, options, index=index, path=path),
        "category": category,
        "question_id": text_field(record, "question_id", index=index, path=path),
        "question_type_id": dimension,
        "data_type": text_field(record, "data_type", index=index, path=path),
        "segment": segment(record, index=index, path=path),
    }


def extra_fields(record: dict[str, Any], taken: frozenset[str] = SHARED_FIELDS) -> dict[str, str | None]:
    """The record's other fields (``level``, ``subpart``, ``data_source``, ``version``...) as text columns."""
    return {key: extra_text(value) for key, value in record.items() if key not in taken}
