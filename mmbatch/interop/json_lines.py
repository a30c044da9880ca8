"""Reading the JSON-lines files other tools write: LLaVA's question and answer files, SEED-Bench result files.

Both importers and the question readers they use read these, so the readers live here, below all of them (no
importer imports another importer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mmbatch.errors import BadInputError
from mmbatch.json_text import parse_json


def read_jsonl(path: Path, required: tuple[str, ...]) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file, each checked for the ``required`` keys.

    Raises:
        BadInputError: a missing file, a line that is not JSON, or a record without a required key (line named).
    """
    if not path.is_file():
        raise BadInputError("no such file", path=path)
    records = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = parse_json(line)
            except ValueError as exc:
                raise BadInputError(f"line {number} is not JSON ({exc})", path=path) from exc
            missing = [key for key in required if not isinstance(record, dict) or key not in record]
            if missing:
                raise BadInputError(f"line {number} has no '{missing[0]}'", path=path, column=missing[0])
            records.append(record)
    if not records:
        raise BadInputError("the file has no lines", path=path)
    return records


def read_result_lines(path: Path) -> list[dict[str, Any]]:
    """The records of a result file, one per line, tolerating trailing commas, blank lines and ``[``/``]`` lines.

    A file holding one JSON array is read as that array.

    Raises:
        BadInputError: a line is not a JSON object with ``question_id`` and ``prediction``, naming the line.
    """
    if not path.is_file():
        raise BadInputError("no such file", path=path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError("the file is not UTF-8", path=path) from exc
    records: list[tuple[int, Any]] = []
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]") and "\n" not in stripped:
        records = list(enumerate(_loads(stripped, path, 1), start=1))
    else:
        items = [(number, line.strip().removesuffix(",").strip())
                 for number, line in enumerate(text.splitlines(), start=1)]
        items = [(number, item) for number, item in items if item not in ("", "[", "]")]
        try:  # one parse for the whole file is several times faster than one per line
            records = list(zip([n for n, _ in items], parse_json("[" + ",".join(i for _, i in items) + "]"),
                               strict=True))
        except ValueError:
            records = [(number, _loads(item, path, number)) for number, item in items]
    if not records:
        raise BadInputError("the file has no result lines", path=path)
    rows = []
    for number, record in records:
        if not isinstance(record, dict) or "question_id" not in record or "prediction" not in record:
            raise BadInputError(f"line {number} is not a {{\"question_id\", \"prediction\"}} object", path=path)
        rows.append(record)
    return rows


def _loads(text: str, path: Path, number: int) -> Any:
    try:
        return parse_json(text)
    except ValueError as exc:
        raise BadInputError(f"line {number} is not JSON ({exc})", path=path) from exc
