"""``compare`` picks a paired test that fits the answer kind, on real files of ../shared/data/real_results:

- graded scores (TextVQA's VQA accuracy, MM-Vet's judge grades; ``hit`` null): the exact sign test on the rows where
  one model scored higher, never McNemar's (a pair 0.3 / 0.6 is no right-or-wrong pair);
- 0/1 verdicts (MMMU's answers): McNemar's exact test on ``acc``, and no test at all on ``matched_acc``, a ratio over
  the rows each model's answer could be read, which differ between the two models.

Every count and p-value is worked out here from the hits files with exact binomial sums (not mmbatch's code)."""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.tableio import read_table

REAL = "real_results"


def sign_test_p(a_better: int, b_better: int) -> float:
    """2 * P(X <= min) for X ~ Binomial(a + b, 1/2), capped at 1, in exact fractions."""
    n = a_better + b_better
    tail = sum(Fraction(comb(n, i), 2 ** n) for i in range(min(a_better, b_better) + 1))
    return float(min(Fraction(1), 2 * tail))


def scored(folder: Path, name: str, import_args: list[str], extract_args: list[str]) -> Path:
    """import, extract, score in-process; the hits file."""
    imported, extracted, metrics = (folder / f"{name}.{part}" for part in ("p.parquet", "x.parquet", "m.json"))
    assert main(["import", *import_args, "--output", str(imported), "--model", name]) == 0
    assert main(["extract", "--input", str(imported), "--output", str(extracted), *extract_args]) == 0
    assert main(["score", "--input", str(extracted), "--output", str(metrics)]) == 0
    return folder / f"{name}.m.hits.parquet"


def compared(hits_a: Path, hits_b: Path, output: Path) -> dict[tuple[str, str, str], dict]:
    assert main(["compare", str(hits_a), str(hits_b), "--bootstrap", "0", "--output", str(output)]) == 0
    return {(row["level"], row["group"], row["metric"]): row for row in json.loads(output.read_text())["comparisons"]}


def by_index(path: Path) -> pl.DataFrame:
    return read_table(path).frame.sort("index")


def test_graded_vqa_scores_get_the_sign_test(shared_data: Path, tmp_path: Path) -> None:
    folder = shared_data / REAL
    hits = {model: scored(tmp_path, model, ["--format", "vlmevalkit", "--input",
                                            str(folder / f"{model}_vlmevalkit-pr320" / f"{model}_TextVQA_VAL.xlsx")],
                          ["--no-judge", "--kind-option", "rules=vlmevalkit-2024"])
            for model in ("vila_13b", "vila_8b")}
    rows = compared(hits["vila_13b"], hits["vila_8b"], tmp_path / "c.json")
    a, b = by_index(hits["vila_13b"]), by_index(hits["vila_8b"])
    assert a["hit"].null_count() == a.height and a["index"].equals(b["index"])  # graded: no 0/1 hit
    a_better = int((a["score"] > b["score"]).sum())
    b_better = int((a["score"] < b["score"]).sum())
    overall = rows[("overall", "Overall", "acc")]
    assert (overall["test"], overall["a_only"], overall["b_only"]) == ("sign-exact", a_better, b_better)
    assert overall["p_value"] == pytest.approx(sign_test_p(a_better, b_better), rel=1e-9)
    assert round(overall["value_a"], 3) == 61.028 and round(overall["value_b"], 3) == 60.162  # MANIFEST A
    assert all(row["test"] in (None, "sign-exact") for row in rows.values())


def test_judge_grades_get_the_sign_test(shared_data: Path, tmp_path: Path) -> None:
    questions = shared_data / REAL / "_benchmark_keys" / "mm-vet" / "mm-vet.json"
    hits = {}
    for model in ("llava-v1.5-13b", "llava-v1.5-7b"):
        grades = shared_data / REAL / f"{model}_llava-official-pr1199" / "mm-vet" / "results" / \
            f"{model}_gpt-4-grade-1runs.json"
        hits[model] = scored(tmp_path, model, ["--format", "mmvet-grades", "--input", str(grades), "--questions",
                                               str(questions)], ["--stored-verdicts"])
    rows = compared(hits["llava-v1.5-13b"], hits["llava-v1.5-7b"], tmp_path / "c.json")
    a, b = by_index(hits["llava-v1.5-13b"]), by_index(hits["llava-v1.5-7b"])
    a_better, b_better = int((a["score"] > b["score"]).sum()), int((a["score"] < b["score"]).sum())
    overall = rows[("overall", "Overall", "acc")]
    assert (overall["test"], overall["a_only"], overall["b_only"]) == ("sign-exact", a_better, b_better)
    assert overall["p_value"] == pytest.approx(sign_test_p(a_better, b_better), rel=1e-9)
    assert "mcnemar-exact" not in {row["test"] for row in rows.values()}


def test_mmmu_matched_accuracy_gets_no_test(shared_data: Path, tmp_path: Path) -> None:
    folder = shared_data / REAL
    sources = {"qwen_chat": folder / "qwen_chat_vlmevalkit-pr18" / "qwen_chat_MMMU_DEV_VAL.xlsx",
               "idefics": folder / "idefics_9b_instruct_vlmevalkit-pr18" / "idefics_9b_instruct_MMMU_DEV_VAL.xlsx"}
    hits = {model: scored(tmp_path, model, ["--format", "vlmevalkit", "--input", str(source)], ["--no-judge"])
            for model, source in sources.items()}
    rows = compared(hits["qwen_chat"], hits["idefics"], tmp_path / "c.json")
    a, b = by_index(hits["qwen_chat"]), by_index(hits["idefics"])
    matched_a, matched_b = a["extracted"].is_not_null(), b["extracted"].is_not_null()
    assert not matched_a.equals(matched_b)  # each model's own rows: matched_acc divides by different sets
    for (_, _, metric), row in rows.items():
        if metric == "matched_acc":
            assert (row["test"], row["a_only"], row["b_only"], row["p_value"]) == (None, None, None, None), row
    dev = [row for key, row in rows.items() if key == ("overall", "Overall", "acc")]
    assert dev and all(row["test"] == "mcnemar-exact" for row in dev)
    validation = json.loads((tmp_path / "c.json").read_text())["comparisons"]
    for row in validation:
        if (row["level"], row["group"], row["metric"]) != ("overall", "Overall", "acc"):
            continue
        part_a, part_b = (frame.filter(pl.col("split").eq_missing(row["split"])) for frame in (a, b))
        a_only = int(((part_a["hit"] == 1) & (part_b["hit"] == 0)).sum())
        b_only = int(((part_a["hit"] == 0) & (part_b["hit"] == 1)).sum())
        assert (row["a_only"], row["b_only"]) == (a_only, b_only)
        assert row["p_value"] == pytest.approx(sign_test_p(a_only, b_only), rel=1e-9)
