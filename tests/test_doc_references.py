"""The project stands on its own: every Markdown document a module, doc, script or the README cites is in the
repository, every section (``§N``) it names is a heading of that document, and the generated column tables of
docs/contract.md match the column declaration."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mmbatch.schema.docs import render_document
from tests.conftest import REPO_ROOT

CITING = ("mmbatch", "docs", "examples", "bench", "tools")
"""Folders whose files cite documents (plus the README and the Makefile); tests name the files they write too
(``board.md``), so they are only checked for the documents that left the repository."""
SUFFIXES = (".py", ".md", ".sh", ".sbatch", ".yaml", ".j2", ".toml")
NOT_PROJECT_DOCUMENTS = frozenset({
    "DATASET.md",  # SEED-Bench's own dataset card, cited with its repository (AILab-CVC/SEED-Bench)
    "report.md", "out/report.md", "FILE.md",  # files the commands write, in examples and help texts
})
"""Names ending in ``.md`` that are not this project's documents."""
CITATION = re.compile(r"(?<![\w./-])((?:\.\./)*(?:[\w-]+/)*[\w.-]*[\w-]\.md)\b(?:\)|`|\])*"
                      r"(?P<sections>(?:\s*(?:§\s*\d+|-\s*§?\s*\d+|,\s*§\s*\d+|and\s+§\s*\d+))*)")
SECTION = re.compile(r"\d+")


def citing_files(folders: tuple[str, ...] = CITING) -> list[Path]:
    files = [REPO_ROOT / "README.md", REPO_ROOT / "Makefile"]
    for folder in folders:
        files += [p for p in sorted((REPO_ROOT / folder).rglob("*")) if p.suffix in SUFFIXES and p.is_file()
                  and ".cache" not in p.parts and "__pycache__" not in p.parts]
    return [p for p in files if p.resolve() != Path(__file__).resolve()]


def citations() -> list[tuple[Path, int, str, list[int]]]:
    """(citing file, line, cited name, sections named) for every citation in the repository."""
    found = []
    for path in citing_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for match in CITATION.finditer(line):
                if "://" in line[line.rfind(" ", 0, match.start()) + 1:match.end()]:
                    continue  # part of a URL
                name = match.group(1)
                sections = [int(n) for n in SECTION.findall(match.group("sections") or "")]
                if "-" in (match.group("sections") or "") and len(sections) == 2:
                    sections = list(range(sections[0], sections[1] + 1))
                found.append((path, number, name, sections))
    return found


def resolve(citing: Path, name: str) -> Path | None:
    """The document ``name`` stands for: relative to the citing file's folder, the repository root or docs/ (a
    bare name in code, such as ``REPO_ROOT / "docs" / "scale.md"``)."""
    for base in (citing.parent, REPO_ROOT, REPO_ROOT / "docs"):
        candidate = (base / name).resolve()
        if candidate.is_file() and candidate.is_relative_to(REPO_ROOT):
            return candidate
    return None


def test_every_cited_document_is_in_the_repository() -> None:
    missing = [f"{path.relative_to(REPO_ROOT)}:{line}: {name}" for path, line, name, _ in citations()
               if name not in NOT_PROJECT_DOCUMENTS and resolve(path, name) is None]
    assert not missing, "cited documents that are not in the repository:\n" + "\n".join(missing)


def test_every_cited_section_is_a_heading_of_its_document() -> None:
    wrong = []
    for path, line, name, sections in citations():
        target = resolve(path, name)
        if target is None or not sections:
            continue
        headings = set(re.findall(r"^#+ (\d+)\.", target.read_text(encoding="utf-8"), flags=re.MULTILINE))
        wrong += [f"{path.relative_to(REPO_ROOT)}:{line}: {name} §{n}" for n in sections if str(n) not in headings]
    assert not wrong, "cited sections that are not headings of their document:\n" + "\n".join(wrong)


def test_the_rules_and_the_contract_are_cited_by_the_code() -> None:
    cited = {name for _, _, name, _ in citations()}
    assert {"docs/rules.md", "docs/contract.md"} <= cited
    text = "\n".join(p.read_text(encoding="utf-8") for p in citing_files((*CITING, "tests")))
    assert "shared/spec" not in text and "protocols.md" not in text  # the old documents outside the repository


@pytest.mark.parametrize("line", ["see protocols.md §7 for the rule", "(contract.md)", "docs/nothere.md §2"])
def test_the_checker_sees_a_citation(line: str) -> None:
    assert CITATION.search(line) is not None


def test_the_column_tables_of_the_contract_match_the_declaration() -> None:
    contract = REPO_ROOT / "docs" / "contract.md"
    text = contract.read_text(encoding="utf-8")
    assert text.count("<!-- columns:") == 5
    assert render_document(text) == text, "docs/contract.md drifted from mmbatch/schema/columns.py: run `make schemas`"
