"""The SEED-Bench question JSON: records, dimension names, the four choices and the answer letter.

SEED-Bench-1 and -2 ship ``{"questions": [...], "question_type": {name: id}}``; SEED-Bench-2-Plus and some mirrors
ship the list of questions alone, so both are accepted. Dimension names are read from ``question_type``; the
built-in tables of :mod:`~mmbatch.benchmarks.seedbench.dimensions` serve files that have none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mmbatch.errors import BadInputError
from mmbatch.json_text import parse_json

LETTERS = ("A", "B", "C", "D")


def load_questions(path: Path) -> tuple[list[dict[str, Any]], dict[int, str] | None]:
    """The question records of a SEED JSON file and its ``question_type`` table (id -> name), if it has one.

    Raises:
        BadInputError: the file is missing, not JSON, or not a list of question objects; a number that is not a
            finite float (``1e400`` would become an id of ``inf`` or a segment that aborts infer), nesting too deep.
    """
    if not path.is_file():
        raise BadInputError("no such file", path=path)
    try:
        data = parse_json(path.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise BadInputError(f"the file is not UTF-8 ({exc.reason} at byte {exc.start})", path=path) from exc
    except json.JSONDecodeError as exc:
        raise BadInputError(f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})", path=path) from exc
    except ValueError as exc:
        raise BadInputError(f"not a readable question file: {exc}", path=path) from exc
    names = None
    if isinstance(data, dict):
        names = _question_types(data.get("question_type"), path)
        data = data.get("questions")
    if not isinstance(data, list) or not data:
        raise BadInputError("expected a non-empty list of questions (or {\"questions\": [...]})", path=path)
    for position, record in enumerate(data):
        if not isinstance(record, dict):
            raise BadInputError("a question must be a JSON object", path=path, index=position)
    return data, names


def _question_types(table: object, path: Path) -> dict[int, str] | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise BadInputError("'question_type' must map dimension names to ids", path=path, column="question_type_id")
    try:
        return {int(ident): str(name) for name, ident in table.items()}
    except (TypeError, ValueError) as exc:
        raise BadInputError(f"'question_type' holds a non-integer id ({exc})", path=path,
                            column="question_type_id") from exc


def text_field(record: dict[str, Any], key: str, *, index: int, path: Path, column: str | None = None) -> str:
    """A required text field (numbers are written as text).

    Raises:
        BadInputError: the field is absent, null or empty.
    """
    value = record.get(key)
    if value is None or (isinstance(value, str) and not value.strip()) or isinstance(value, list | dict):
        raise BadInputError(f"missing or empty '{key}'", path=path, index=index, column=column or key)
    return str(value)


def dimension_id(record: dict[str, Any], *, index: int, path: Path) -> int | None:
    """``question_type_id`` as an integer, None when the record has none.

    Raises:
        BadInputError: a value that is not an integer.
    """
    value = record.get("question_type_id")
    if value is None:
        return None
    try:
        if isinstance(value, bool) or float(value) != int(value):
            raise ValueError
        return int(value)
    except (TypeError, ValueError):
        raise BadInputError(f"not an integer: {value!r}", path=path, index=index, column="question_type_id") from None


def choices(record: dict[str, Any], *, index: int, path: Path) -> dict[str, str | None]:
    """Options ``A``..``D`` from ``choice_a``..``choice_d`` (SEED-1/2) or ``choice_A``..``choice_D`` (SEED-2-Plus).

    Raises:
        BadInputError: the record has no choice at all.
    """
    options: dict[str, str | None] = {}
    for letter in LETTERS:
        value = record.get(f"choice_{letter.lower()}", record.get(f"choice_{letter}"))
        options[letter] = None if value is None else str(value)
    if all(value is None for value in options.values()):
        raise BadInputError("no choices (expected choice_a..choice_d or choice_A..choice_D)", path=path,
                            index=index, column="A")
    return options


def answer_letter(record: dict[str, Any], options: dict[str, str | None], *, index: int, path: Path) -> str:
    """The ground-truth letter, whitespace stripped (some official files carry a stray space).

    Raises:
        BadInputError: no answer, or a letter that is not one of the row's choices.
    """
    answer = text_field(record, "answer", index=index, path=path).strip().upper()
    if options.get(answer) is None:
        present = ", ".join(letter for letter, text in options.items() if text is not None)
        raise BadInputError(f"answer {record['answer']!r} is not one of the choices ({present})", path=path,
                            index=index, column="answer")
    return answer


def segment(record: dict[str, Any], *, index: int, path: Path) -> list[float] | None:
    """The ``[start, end]`` video segment (seconds in SEED-1 dimension 11, frames in 12), or None.

    Raises:
        BadInputError: anything but two numbers.
    """
    value = record.get("segment")
    if value is None:
        return None
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)):
        raise BadInputError(f"expected [start, end] numbers, not {value!r}", path=path, index=index, column="segment")
    return [float(v) for v in value]


def extra_text(value: object) -> str | None:
    """An extra source field as text: strings as they are, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
