"""Row facts have one definition; their Python (row by row) and polars (whole frame) forms agree."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import polars as pl

from mmbatch.row_facts import file_sha256, is_missing, missing, present_letters, present_options
from tests.conftest import REPO_ROOT

CELLS = [None, "", "nan", "NaN", "NAN", " ", "None", "NA", "0", "x", "nan ", "banana"]


def test_missing_cells_agree_row_by_row_and_on_a_frame() -> None:
    frame = pl.DataFrame({"A": CELLS}, schema={"A": pl.String})
    assert frame.select(missing("A"))["A"].to_list() == [is_missing(cell) for cell in CELLS]
    floats = pl.DataFrame({"A": [1.0, math.nan, None]})
    assert floats.select(missing("A"))["A"].to_list() == [False, True, True] == [is_missing(v) for v in
                                                                                  (1.0, math.nan, None)]
    # text that only looks empty is an option: a space, "None", "NA" (option texts such as "None of these")
    assert [is_missing(cell) for cell in CELLS] == [True, True, True, True, True] + [False] * 7


def test_present_options_agree_row_by_row_and_on_a_frame() -> None:
    rows = [{"A": "cat", "B": "nan", "C": None, "D": "dog"}, {"A": "", "B": "None", "C": "x", "D": None},
            {"A": None, "B": None, "C": None, "D": None}]
    frame = pl.DataFrame(rows, schema={letter: pl.String for letter in "ABCD"})
    by_frame = frame.select(present_letters(frame.columns).alias("letters"))["letters"].to_list()
    assert by_frame == [list(present_options(row)) for row in rows] == [["A", "D"], ["B", "C"], []]
    assert present_options(rows[0]) == {"A": "cat", "D": "dog"}


def test_file_digest_is_the_sha256_of_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    assert file_sha256(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_mmbatch_has_no_import_cycles() -> None:
    """Every ``import`` between mmbatch modules, lazy ones included, forms no cycle (interop and tableio included)."""
    graph: dict[str, set[str]] = {}
    for path in (REPO_ROOT / "mmbatch").rglob("*.py"):
        name = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__")
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mmbatch"):
                targets |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
            elif isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names if alias.name.startswith("mmbatch")}
        graph[name] = targets
    graph = {name: {t for t in targets if t in graph and t != name} for name, targets in graph.items()}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append([*trail[trail.index(target):], target])
            elif target not in state:
                visit(target, [*trail, target])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_validate_counts_the_options_extract_scores() -> None:
    """A likelihood row whose option C reads ``nan`` has three options for validate, as for infer and extract."""
    from mmbatch.benchmarks.registry import answer_kinds
    from mmbatch.extract.options import ExtractOptions
    from mmbatch.extract.reasoning import answer_texts
    from mmbatch.extract.rule_pass import first_pass
    from mmbatch.schema.columns import PREDICTIONS
    from mmbatch.schema.validate import validate_frame

    row = {"index": 1, "g_index": 1, "benchmark": "seedbench", "model": "m", "mode": "likelihood", "question": "q",
           "A": "x", "B": "y", "C": "nan", "D": "z", "answer": "D", "prompt": "p", "prompt_hash": "0" * 16,
           "prompt_template": "seed-likelihood", "prediction": None, "choice_logprobs": [-3.0, -2.0, -1.0],
           "choice_ntokens": [1, 1, 1], "error": None}
    frame = pl.DataFrame([row], schema_overrides={"prediction": pl.String, "error": pl.String})
    _, violations = validate_frame(frame, PREDICTIONS)
    assert not [v for v in violations if "present option" in str(v)], violations
    texts, _ = answer_texts(frame["prediction"], ())
    decided = first_pass(frame, texts, ExtractOptions(input=Path("p"), output=Path("e.parquet")),
                         letter_scoring=False, kinds=answer_kinds(["seedbench"])).decisions
    assert decided.row(0, named=True)["extracted"] == "D"
