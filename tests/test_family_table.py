"""docs/models.md lists every family of the architecture matrix, and no family the matrix does not test."""

from __future__ import annotations

from pathlib import Path

from tests.support.families import FAMILIES

DOC = Path(__file__).resolve().parents[1] / "docs" / "models.md"


def family_rows() -> dict[str, str]:
    """The rows of the "Families tested" table, by family name (first cell) -> transformers class (second)."""
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("## Families tested"):].split("\n## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] not in ("family", "") and not set(cells[0]) <= {"-"}:
            rows[cells[0]] = cells[1].strip("`")
    return rows


def test_every_family_of_the_matrix_has_a_row_and_every_row_a_family() -> None:
    assert sorted(family_rows()) == sorted(FAMILIES)


def test_each_row_names_a_transformers_class() -> None:
    import transformers

    missing = {name: cls for name, cls in family_rows().items() if not hasattr(transformers, cls)}
    assert not missing
