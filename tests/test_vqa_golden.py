"""Golden: every VQA-kind pair of ../shared/data/real_results (MANIFEST.md there, sections A, B, C and G).

Each VLMEvalKit prediction file goes through ``import --format vlmevalkit -> extract -> score`` (in-process) and every
number of the ``_acc.csv`` / ``_score.json`` VLMEvalKit printed beside it must come out to its last digit. They were
made with VLMEvalKit's rules of 2024 to April 2025 (``--kind-option rules=vlmevalkit-2024``).

"To the last digit": VLMEvalKit printed ``numpy.mean`` of its per-row scores times 100 as a Python float
(``61.02799999999999``). The per-row scores mmbatch writes are VLMEvalKit's floats bit for bit, so ``numpy.mean`` of
them, in file order and per group, gives exactly the printed text; the score stage's own value (a ratio of sums over
unit types, summed in another order) equals it within 1e-9, far below the 2e-4 % one row can move it.
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.tableio import read_metadata, read_table

REAL = "real_results"


@dataclass(frozen=True)
class Dataset:
    """What the MANIFEST says of one VLMEvalKit dataset's files."""

    files: int
    """Prediction files with their published numbers."""
    groups: int
    """Columns of its ``_acc.csv`` besides Overall (ChartQA's halves, OCRVQA's genres)."""
    eras: bool
    """Whether its kind has eras (``--kind-option rules=``; the files take ``vlmevalkit-2024``)."""


DATASETS = {
    "TextVQA_VAL": Dataset(files=18, groups=0, eras=True),
    "ChartQA_TEST": Dataset(files=13, groups=2, eras=True),
    "OCRVQA_TESTCORE": Dataset(files=13, groups=32, eras=False),
    "OCRBench": Dataset(files=2, groups=5, eras=False),
}


def prediction_files(root: Path) -> list[Path]:
    """Every VQA-kind prediction file of the real results, by dataset then folder."""
    order = list(DATASETS)
    return sorted((path for dataset in DATASETS for path in root.glob(f"*/*_{dataset}.xlsx")),
                  key=lambda path: (order.index(dataset_of(path)), path.parent.name))


def dataset_of(path: Path) -> str:
    return next(dataset for dataset in DATASETS if path.stem.endswith(f"_{dataset}"))


FILES = prediction_files(Path(__file__).resolve().parents[1].parent / "shared" / "data" / REAL)


def run_chain(source: Path, out: Path, rules: str | None, *extra: str) -> tuple[dict[tuple[str, str, str], dict],
                                                                                  pl.DataFrame]:
    """import -> extract -> score; the metrics by (level, group, metric) and the scored rows in file order."""
    predictions, extracted, metrics = out / "predictions.parquet", out / "extracted.parquet", out / "metrics.json"
    assert main(["import", "--format", "vlmevalkit", "--input", str(source), "--output", str(predictions),
                 *extra]) == 0
    options = ["--kind-option", f"rules={rules}"] if rules else []
    assert main(["extract", "--input", str(predictions), "--output", str(extracted), "--no-judge", "--force",
                 *options]) == 0
    assert main(["score", "--input", str(extracted), "--output", str(metrics)]) == 0
    rows = {(row["level"], row["group"], row["metric"]): row for row in json.loads(metrics.read_text())}
    return rows, read_table(metrics.with_suffix(".hits.parquet")).frame


def published_acc(path: Path) -> dict[str, str]:
    """The ``_acc.csv`` beside ``path``: group -> the number as printed."""
    with path.with_name(f"{path.stem}_acc.csv").open(newline="", encoding="utf-8") as handle:
        return dict(next(csv.DictReader(handle)))


def assert_printed(printed: str, scores: pl.Series, row: dict) -> None:
    """VLMEvalKit's ``numpy.mean(hit) * 100`` of these per-row scores is ``printed``, digit for digit, and the score
    stage's value is that number (within 1e-9) over as many rows."""
    assert repr(float(np.mean(scores.to_numpy()) * 100)) == printed
    assert row["n"] == scores.len()
    assert row["value"] == pytest.approx(float(printed), abs=1e-9)


@pytest.mark.parametrize("source", FILES, ids=[f"{p.parent.name}/{dataset_of(p)}" for p in FILES])
def test_every_published_number(tmp_path: Path, source: Path) -> None:
    dataset = dataset_of(source)
    rows, hits = run_chain(source, tmp_path, "vlmevalkit-2024" if DATASETS[dataset].eras else None)
    if dataset == "OCRBench":
        published = json.loads(source.with_name(f"{source.stem}_score.json").read_text())
        assert rows[("overall", "Overall", "score")]["value"] == published.pop("Final Score")
        assert rows[("overall", "Overall", "score_norm")]["value"] == pytest.approx(published.pop("Final Score Norm"),
                                                                                   abs=1e-12)
        assert len(published) == DATASETS[dataset].groups
        for part, points in published.items():
            assert rows[("part", part, "score")]["value"] == points, part
        categories = [value["value"] for (level, _, metric), value in rows.items() if (level, metric) == (
            "category", "score")]
        assert len(categories) == 10 and sum(categories) == rows[("overall", "Overall", "score")]["value"]
        return
    metric = "acc"
    published = published_acc(source)
    assert_printed(published.pop("Overall"), hits["score"], rows[("overall", "Overall", metric)])
    # The per-split (ChartQA) and per-genre (OCRVQA) columns, all of them.
    assert len(published) == DATASETS[dataset].groups
    for group, printed in published.items():
        assert_printed(printed, hits.filter(pl.col("category") == group)["score"], rows[("category", group, metric)])


def test_manifest_counts(shared_data: Path) -> None:
    """Every pair of these datasets the MANIFEST lists is here (TextVQA: VILA x 2, syuan03 x 11, chengyuehuang511 x
    5; ChartQA and OCRVQA: syuan03 x 11 and VILA x 2; OCRBench: VILA x 2)."""
    counts = {dataset: sum(dataset_of(path) == dataset for path in FILES) for dataset in DATASETS}
    assert counts == {dataset: spec.files for dataset, spec in DATASETS.items()}
    assert all(path.is_relative_to(shared_data / REAL) for path in FILES)


def test_ocrvqa_text_index_is_kept_in_question_id(tmp_path: Path, shared_data: Path) -> None:
    source = shared_data / REAL / "vila_13b_vlmevalkit-pr320" / "vila_13b_OCRVQA_TESTCORE.xlsx"
    _, hits = run_chain(source, tmp_path, None)
    assert hits["question_id"].head(3).to_list() == ["415718988_2", "9055947180_2", "184215012X_1"]
    assert hits["index"].head(3).to_list() == [int(hashlib.sha256(key.encode()).hexdigest()[:16], 16) >> 15
                                               for key in ["415718988_2", "9055947180_2", "184215012X_1"]]
    assert hits["index"].n_unique() == 3072


@pytest.mark.parametrize(("source", "rules", "expected"), [
    # Today's period rule keeps "2010." whole: chatty answers that end a number with a period no longer match.
    ("llama-3.2-11b-vision-instruct_chengyuehuang511/Llama-3.2-11B-Vision-Instruct_TextVQA_VAL", "vlmevalkit",
     {("overall", "Overall"): 45.052}),
    # The TextVQA authors' evaluator (EvalAI's answer processor) differs from VLMEvalKit on Qwen2.5-VL-7B's file.
    ("qwen2.5-vl-7b-instruct_chengyuehuang511/Qwen2.5-VL-7B-Instruct_TextVQA_VAL", "official",
     {("overall", "Overall"): 85.384}),
    # ChartQA: the paper's rule (5 % of the answer, list answers taken as written) gives the 42.56 MANIFEST.md
    # names; today's VLMEvalKit (5 % of the answer, lists split) keeps 42.88 on this file.
    ("vila_13b_vlmevalkit-pr320/vila_13b_ChartQA_TEST", "official",
     {("category", "test_human"): 42.56, ("overall", "Overall"): 58.56}),
    ("vila_13b_vlmevalkit-pr320/vila_13b_ChartQA_TEST", "vlmevalkit",
     {("category", "test_human"): 42.88, ("overall", "Overall"): 58.72}),
])
def test_other_eras_on_real_files(tmp_path: Path, shared_data: Path, source: str, rules: str,
                                  expected: dict[tuple[str, str], float]) -> None:
    rows, _ = run_chain(shared_data / REAL / f"{source}.xlsx", tmp_path, rules)
    for (level, group), value in expected.items():
        assert round(rows[(level, group, "acc")]["value"], 3) == value
    assert read_metadata(tmp_path / "extracted.parquet")["extract"]["kind_options"] == {"rules": rules}


def llava_textvqa_table(shared_data: Path, out: Path) -> Path:
    """LLaVA-1.5-13B's official TextVQA answers with the ground truth of VLMEvalKit's TextVQA_VAL, joined by row
    order (LLaVA's ``question_id`` is the image id): a VLMEvalKit-style table, after checking that all 5,000
    questions agree."""
    folder = shared_data / REAL / "llava-v1.5-13b_llava-official-pr1199" / "textvqa"
    answers = pl.read_ndjson(folder / "answers" / "llava-v1.5-13b.jsonl")
    truth = read_table(shared_data / REAL / "vila_13b_vlmevalkit-pr320" / "vila_13b_TextVQA_VAL.xlsx").frame
    asked = answers["prompt"].str.split("\n").list.first().str.to_lowercase()
    assert answers.height == truth.height == 5000
    assert (asked == truth["question"].str.to_lowercase()).all()
    table = truth.select("index", "question", "answer").with_columns(answers["text"].alias("prediction"))
    path = out / "llava-v1.5-13b_TextVQA_VAL.parquet"
    table.write_parquet(path)
    return path


@pytest.mark.parametrize("rules", ["vlmevalkit-2024", "official"])
def test_llava_official_textvqa_answers(tmp_path: Path, shared_data: Path, rules: str) -> None:
    """61.254 with VLMEvalKit's 2024 rule and with the TextVQA authors' evaluator LLaVA used (published 61.3)."""
    table = llava_textvqa_table(shared_data, tmp_path)
    rows, hits = run_chain(table, tmp_path, rules, "--model", "llava-v1.5-13b")
    assert round(rows[("overall", "Overall", "acc")]["value"], 6) == 61.254
    if rules == "vlmevalkit-2024":
        assert repr(float(np.mean(hits["score"].to_numpy()) * 100)) == "61.254"
