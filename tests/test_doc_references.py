"""The project stands on its own: every Markdown document a module, doc, script or the README cites is in the
repository, every section (``§N``) it names is a heading of that document, and the generated column tables of
docs/contract.md match the column declaration. In the documents a user reads (the README and docs/*.md), every link
leads to a file of the repository (and to a heading of it, for ``#anchor``), every repository path they name exists,
and docs/README.md lists every document."""

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


DOCUMENTS = (REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md")))
"""The documents a user reads: the README and every page under docs/."""
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
REPOSITORY_PATH = re.compile(r"(?<![\w./$<{-])((?:examples|mmbatch|tests|tools|bench|schemas|docs)/[\w./*<>{}-]*)")
"""A path from the repository root written in a document (``examples/kubernetes/``, ``schemas/*.json``)."""
FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)


def anchors(document: Path) -> set[str]:
    """The ``#anchor`` names a link may use in ``document``: its headings as GitHub makes them, and ``<a id>``."""
    text = FENCE.sub("", document.read_text(encoding="utf-8"))
    slugs = {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
             for heading in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}
    return slugs | set(re.findall(r'<a id="([^"]+)"', text))


def lines(document: Path) -> list[tuple[int, str]]:
    return list(enumerate(document.read_text(encoding="utf-8").splitlines(), start=1))


def test_every_link_of_the_documents_resolves() -> None:
    broken = []
    for document in DOCUMENTS:
        for number, line in lines(document):
            for target in LINK.findall(line):
                if "://" in target or target.startswith("mailto:"):
                    continue
                path, _, anchor = target.partition("#")
                linked = (document.parent / path).resolve() if path else document
                where = f"{document.relative_to(REPO_ROOT)}:{number}: {target}"
                if not linked.exists() or not linked.is_relative_to(REPO_ROOT):
                    broken.append(f"{where} (no such file in the repository)")
                elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked)):
                    broken.append(f"{where} (no such heading)")
    assert not broken, "links that lead nowhere:\n" + "\n".join(broken)


def test_every_repository_path_the_documents_name_exists() -> None:
    missing = []
    for document in DOCUMENTS:
        for number, line in lines(document):
            for path in (match.rstrip(".") for match in REPOSITORY_PATH.findall(line)):
                if any(mark in path for mark in "<>{}"):
                    continue  # a pattern (mmbatch/benchmarks/<name>/), not a file
                found = any(REPO_ROOT.glob(path)) if "*" in path else (REPO_ROOT / path).exists()
                if not found:
                    missing.append(f"{document.relative_to(REPO_ROOT)}:{number}: {path}")
    assert not missing, "files the documents name that are not in the repository:\n" + "\n".join(missing)


def test_the_docs_index_names_every_document() -> None:
    index = (REPO_ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    linked = {target.partition("#")[0] for target in LINK.findall(index)}
    pages = {page.name for page in (REPO_ROOT / "docs").glob("*.md")} - {"README.md"}
    assert pages <= linked, f"docs/README.md does not list {sorted(pages - linked)}"
    assert "docs/README.md" in (REPO_ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("line", "found"), [
    ("see [the plan](plans.md#the-plan-file)", ["plans.md#the-plan-file"]),
    ("[x](https://example.org/a.md) and [y](../README.md)", ["https://example.org/a.md", "../README.md"]),
])
def test_the_checker_sees_a_link(line: str, found: list[str]) -> None:
    assert LINK.findall(line) == found


def test_the_checker_sees_a_repository_path() -> None:
    line = "run `examples/slurm/submit.sh FILE 8`, read mmbatch/schema/columns.py. Not ../shared/data/x or a/tests/b"
    assert REPOSITORY_PATH.findall(line) == ["examples/slurm/submit.sh", "mmbatch/schema/columns.py."]
