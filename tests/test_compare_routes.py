"""``compare`` pairs the same MME question however each file came in: the MME tool's folder, LLaVA's answers and a
VLMEvalKit table number their rows differently (the real files of ../shared/data)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.compare.identity import align_rows

ROUTES = {
    "tool": (["--format", "mme-eval-tool"], "mme/LaVIN", []),
    "partial": (["--format", "mme-eval-tool"], "mme/llava-v1.5-7b_partial_Haoming2000/results_txt", []),
    "llava": (["--format", "llava-jsonl"], "llava15_13b/mme/llava-v1.5-13b_answers.jsonl",
              ["llava15_13b/mme/llava_mme_questions.jsonl", "mme/questions_template"]),
    "vlmevalkit": (["--format", "vlmevalkit"], "vlmevalkit_vila/vila_13b/vila_13b_MME.xlsx", []),
}


@pytest.fixture(scope="module")
def hits(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each route imported, extracted with the MME tool's rule and scored."""
    folder = tmp_path_factory.mktemp("routes")
    files = {}
    for name, (route, source, questions) in ROUTES.items():
        imported, extracted = folder / f"{name}.parquet", folder / f"{name}.extracted.parquet"
        extra = [arg for q in questions for arg in ("--questions", str(shared_data / q))]
        assert main(["import", *route, "--input", str(shared_data / source), *extra, "--output", str(imported)]) == 0
        assert main(["extract", "--input", str(imported), "--output", str(extracted), "--no-judge"]) == 0
        assert main(["score", "--input", str(extracted), "--output", str(folder / f"{name}.metrics.json")]) == 0
        files[name] = folder / f"{name}.metrics.hits.parquet"
    return files


def compared(hits: dict[str, Path], a: str, b: str, out: Path) -> dict:
    assert main(["compare", str(hits[a]), str(hits[b]), "--output", str(out), "--bootstrap", "0"]) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize(("a", "b"), [("tool", "llava"), ("vlmevalkit", "tool"), ("llava", "vlmevalkit")])
def test_the_same_questions_pair_across_import_routes(hits: dict[str, Path], tmp_path: Path, a: str, b: str) -> None:
    result = compared(hits, a, b, tmp_path / "c.json")
    assert result["coverage"] == [{"benchmark": "mme", "split": None, "model_a": result["coverage"][0]["model_a"],
                                   "model_b": result["coverage"][0]["model_b"], "rows_both": 2374, "rows_only_a": 0,
                                   "rows_only_b": 0}]
    totals = {row["group"]: (row["value_a"], row["value_b"]) for row in result["comparisons"]
              if row["level"] == "total"}
    published = {"tool": (963.6114, 249.6429), "llava": (1531.3187, 295.3571)}  # LaVIN, LLaVA-1.5-13B
    for side, name in enumerate((a, b)):
        if name in published:
            assert [round(totals[part][side], 4) for part in ("perception", "cognition")] == list(published[name])


def test_a_partial_run_pairs_its_questions_and_counts_the_rest(hits: dict[str, Path], tmp_path: Path) -> None:
    result = compared(hits, "vlmevalkit", "partial", tmp_path / "c.json")
    coverage = result["coverage"][0]
    assert (coverage["rows_both"], coverage["rows_only_a"], coverage["rows_only_b"]) == (2350, 24, 0)


def test_a_row_without_an_identity_never_pairs_by_its_index() -> None:
    def rows(categories: list[str | None], images: list[str], questions: list[str]) -> pl.DataFrame:
        return pl.DataFrame({"index": list(range(len(images))), "g_index": [0] * len(images),
                             "benchmark": ["mme"] * len(images), "split": [None] * len(images),
                             "category": categories, "image_name": images, "question": questions},
                            schema_overrides={"split": pl.String})

    a = rows(["color", "color"], ["1.jpg", "1.jpg"], ["Is it red?", "Is it  blue?"])
    b = rows([None, "color"], ["1.png", "1.txt"], ["Is it red?", "Is it blue?"])  # another route's names
    aligned = align_rows(a, b)
    assert aligned["index"][1] == 1 and aligned["g_index"][1] == 0  # same subtask, image stem, question
    assert aligned["index"][0] not in a["index"].to_list()  # no subtask: not the question a numbers 0
