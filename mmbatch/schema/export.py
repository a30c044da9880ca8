"""Generate ``schemas/<stage>.json`` (JSON Schema of one row) from the column declaration.

Run ``python -m mmbatch.schema.export [DIR]`` after changing :mod:`mmbatch.schema.columns`; a test fails when the
checked-in files drift from the declaration.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mmbatch.schema.columns import OPTION_COLUMN, STAGES, Column, Stage

_JSON_TYPES: dict[str, dict[str, Any]] = {
    "int64": {"type": "integer"},
    "float64": {"type": "number"},
    "string": {"type": "string"},
    "list[float64]": {"type": "array", "items": {"type": "number"}},
    "list[int64]": {"type": "array", "items": {"type": "integer"}},
}


def _property(col: Column) -> dict[str, Any]:
    prop: dict[str, Any] = {"description": col.doc, "x-mmbatch-dtype": col.dtype}
    base = dict(_JSON_TYPES[col.dtype])
    if col.enum is not None:
        base["enum"] = list(col.enum)
    if col.nullable:
        prop["anyOf"] = [base, {"type": "null"}]
    else:
        prop.update(base)
    return prop


def stage_schema(stage: Stage) -> dict[str, Any]:
    """The JSON Schema of one row of ``stage``."""
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://mmbatch.dev/schemas/{stage.name}.json",
        "title": f"mmbatch {stage.name} row",
        "description": stage.doc,
        "type": "object",
        "x-mmbatch-stage": stage.name,
        "properties": {col.name: _property(col) for col in stage.columns},
        "required": list(stage.required),
        "additionalProperties": True,
    }
    if stage.option_columns:
        schema["patternProperties"] = {"^[A-Z]$": _property(OPTION_COLUMN)}
    if stage.dropped:
        schema["x-mmbatch-dropped"] = list(stage.dropped)
    return schema


def render_schemas() -> dict[str, str]:
    """File name -> JSON text of every stage schema."""
    return {
        f"{name}.json": json.dumps(stage_schema(stage), indent=2, ensure_ascii=False) + "\n"
        for name, stage in STAGES.items()
    }


def main(argv: list[str] | None = None) -> int:
    """Write the schemas into the folder given (default ``schemas/``)."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "schemas")
    out.mkdir(parents=True, exist_ok=True)
    for name, text in render_schemas().items():
        (out / name).write_text(text, encoding="utf-8")
        print(out / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
