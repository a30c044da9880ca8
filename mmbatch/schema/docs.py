"""The column tables of docs/contract.md, generated from the column declaration like ``schemas/*.json``.

Each table sits between ``<!-- columns:STAGE -->`` and ``<!-- /columns -->`` in the document and lists the columns
that stage adds to the previous one (the metrics table: all its columns). ``python -m mmbatch.schema.docs
docs/contract.md`` rewrites them (``make schemas`` does it); a test fails when the document drifts.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from mmbatch.schema.columns import STAGES, Column, Stage

PIPELINE = ("prepared", "predictions", "extracted", "hits")
"""The row files, each extending the one before it."""
_BLOCK = re.compile(r"(<!-- columns:(?P<stage>[a-z]+) -->\n)(?P<body>.*?)(<!-- /columns -->)", re.DOTALL)


def added_columns(stage: Stage) -> tuple[Column, ...]:
    """The columns ``stage`` adds to the row file before it (all of them for the first file and for the metrics)."""
    if stage.name not in PIPELINE or stage.name == PIPELINE[0]:
        return stage.columns
    previous = STAGES[PIPELINE[PIPELINE.index(stage.name) - 1]]
    known = {column.name for column in previous.columns}
    return tuple(column for column in stage.columns if column.name not in known)


def column_table(stage: Stage) -> str:
    """A Markdown table of the columns ``stage`` adds: name, type, whether required and non-empty, what it holds."""
    lines = ["| column | type | required | what it holds |", "|---|---|---|---|"]
    for column in added_columns(stage):
        required = "yes, never empty" if column.required and not column.nullable else "yes" if column.required \
            else "no"
        values = f" One of: {', '.join(f'`{v}`' for v in column.enum)}." if column.enum else ""
        lines.append(f"| `{column.name}` | {column.dtype} | {required} | {_cell(column.doc)}{values} |")
    if stage.option_columns and stage.name == PIPELINE[0]:
        lines.append("| `A`, `B`, ... | string | no | An option's text under its letter (any uppercase letter); empty "
                     "when the row has no such option. |")
    if stage.dropped:
        lines.append(f"| ~~{', '.join(f'`{name}`' for name in stage.dropped)}~~ | | | Not carried: the image payload "
                     "stays in the prepared file. |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """``text`` safe in a Markdown table cell: no column break, and ``<think>`` shown, not taken for HTML."""
    return text.replace("|", "/").replace("<", "&lt;").replace(">", "&gt;")


def render_document(text: str) -> str:
    """``text`` with every generated block rewritten from the declaration.

    Raises:
        KeyError: a block names a stage that is not declared.
    """
    return _BLOCK.sub(lambda found: found.group(1) + column_table(STAGES[found.group("stage")]) + found.group(4),
                      text)


def main(argv: list[str] | None = None) -> int:
    """Rewrite the generated blocks of the document given (default ``docs/contract.md``)."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0] if args else "docs/contract.md")
    path.write_text(render_document(path.read_text(encoding="utf-8")), encoding="utf-8")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
