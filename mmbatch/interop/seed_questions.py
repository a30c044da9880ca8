"""Question sources for SEED-Bench result files: the SEED-Bench JSON, or another result file with ``gt_answer``.

The SEED-Bench JSON (``{"questions": [...], "question_type": {name: id}}``) gives question texts, options
(``choice_a``..``choice_d``, or ``choice_A``.. in SEED-Bench-2-Plus), ground truth, dimension and media kind. A result
file with ``gt_answer`` (e.g. the official GPT-4V file) gives only the ground truth, which is how LLaVA's upload file
(predictions only) can be scored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.benchmarks.seedbench.questions import load_questions
from mmbatch.errors import BadInputError
from mmbatch.interop.json_lines import read_result_lines
from mmbatch.json_text import parse_json

QUESTION_COLUMNS: dict[str, pl.DataType] = {
    "question_id": pl.String(), "question": pl.String(), "A": pl.String(), "B": pl.String(), "C": pl.String(),
    "D": pl.String(), "answer": pl.String(), "question_type_id": pl.Int64(), "category": pl.String(),
    "l2-category": pl.String(), "data_type": pl.String(), "level": pl.String(),
}
"""Columns a question source can fill, with their types."""


@dataclass
class SeedQuestions:
    """Known facts per ``question_id``, merged from every ``--questions`` source."""

    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)
    """question_id -> {column: value}; the first source to know a value wins."""

    def add(self, question_id: str, values: dict[str, Any]) -> None:
        """Record what one source says of one question, keeping values already known."""
        known = self.by_id.setdefault(question_id, {})
        for name, value in values.items():
            if value is not None and known.get(name) is None:
                known[name] = value

    def frame(self) -> pl.DataFrame:
        """One row per question id, with the columns some source filled."""
        present = {name for values in self.by_id.values() for name in values} | {"question_id"}
        schema = {name: dtype for name, dtype in QUESTION_COLUMNS.items() if name in present}
        rows = [{"question_id": qid, **{n: v for n, v in values.items() if n in schema}}
                for qid, values in self.by_id.items()]
        return pl.DataFrame(rows, schema=schema)


def read_seed_questions(paths: tuple[Path, ...]) -> SeedQuestions:
    """Merge the question sources in the order given."""
    questions = SeedQuestions()
    for path in paths:
        if not path.is_file():
            raise BadInputError("no such file", path=path)
        if _is_benchmark_json(path):
            _add_benchmark_json(questions, path)
        else:
            _add_result_answers(questions, path)
    return questions


def _is_benchmark_json(path: Path) -> bool:
    """Whether ``path`` is one JSON object with ``questions`` (a result file is JSON lines, or a JSON array)."""
    try:
        data = parse_json(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and "questions" in data


def _add_benchmark_json(questions: SeedQuestions, path: Path) -> None:
    """The questions of a SEED-Bench JSON, parsed as the benchmark reader parses it (seedbench/questions.py)."""
    records, names = load_questions(path)
    for position, item in enumerate(records):
        try:
            qid = str(item["question_id"])
            dim = item.get("question_type_id")
            dim = None if dim is None else int(dim)
        except (KeyError, TypeError, ValueError) as exc:
            raise BadInputError(f"a question has no usable question_id/question_type_id ({exc})", path=path,
                                index=position) from exc
        options = {letter: item.get(f"choice_{letter.lower()}", item.get(f"choice_{letter}"))
                   for letter in "ABCD"}
        questions.add(qid, {
            "question": item.get("question"), **options, "answer": item.get("answer"), "question_type_id": dim,
            "category": (names or {}).get(dim) if dim is not None else None,
            "l2-category": item.get("subpart") or item.get("data_type"),
            "data_type": item.get("data_type"), "level": item.get("level"),
        })


def _add_result_answers(questions: SeedQuestions, path: Path) -> None:
    for record in read_result_lines(path):
        if record.get("gt_answer") is not None:
            questions.add(str(record["question_id"]), {"answer": str(record["gt_answer"])})
