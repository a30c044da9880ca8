"""Golden: VLMEvalKit's own VILA-13B/8B result files (../shared/data/vlmevalkit_vila, MANIFEST.md there).

Their CCBench and SEEDBench_IMG numbers were printed in July 2024 by VLMEvalKit's ``can_infer`` of the day: with
``--choice-rules vlmevalkit-2024`` every one of them must come out to the last digit VLMEvalKit printed, while today's
rules give the (different) numbers the MANIFEST lists for them. All six MME, CCBench and SEEDBench_IMG files import.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.tableio import read_metadata, read_table

MODELS = ("vila_13b", "vila_8b")
MCQ_FILES = {"CCBench": ("mmbench", "circular_acc"), "SEEDBench_IMG": ("seedbench", "acc")}
"""VLMEvalKit dataset -> (mmbatch benchmark, the metric VLMEvalKit's ``_acc.csv`` holds as a fraction)."""


def _published(folder: Path, stem: str) -> dict[str, str]:
    with (folder / f"{stem}_acc.csv").open(newline="", encoding="utf-8") as handle:
        row = next(csv.DictReader(handle))
    return {group: value for group, value in row.items() if group != "split"}


def _score(predictions: Path, out: Path, benchmark: str, rules: str | None) -> dict[str, dict]:
    extracted, metrics = out / "extracted.parquet", out / "metrics.json"
    argv = ["extract", "--input", str(predictions), "--output", str(extracted), "--benchmark", benchmark,
            "--no-judge", "--force"]
    assert main(argv + (["--choice-rules", rules] if rules else [])) == 0
    assert main(["score", "--input", str(extracted), "--output", str(metrics)]) == 0
    return {f"{row['metric']}:{row['group']}": row for row in json.loads(metrics.read_text())
            if row["level"] in ("overall", "category", "dimension")}


def _assert_printed(row: dict, printed: str) -> None:
    """``row``'s percentage is the fraction VLMEvalKit printed, to its last digit."""
    hits = round(row["value"] * row["n"] / 100)
    # VLMEvalKit printed hits / n as a Python float: the same float, digit for digit.
    assert repr(hits / row["n"]) == printed, row
    assert row["value"] == pytest.approx(100 * hits / row["n"], abs=1e-9)


@pytest.mark.parametrize("dataset", list(MCQ_FILES))
@pytest.mark.parametrize("model", MODELS)
def test_2024_rules_reproduce_every_published_number(shared_data: Path, tmp_path: Path, model: str,
                                                     dataset: str) -> None:
    folder = shared_data / "vlmevalkit_vila" / model
    benchmark, metric = MCQ_FILES[dataset]
    rows = _score(folder / f"{model}_{dataset}.xlsx", tmp_path, benchmark, "vlmevalkit-2024")
    published = _published(folder, f"{model}_{dataset}")
    assert len(published) == {"CCBench": 8, "SEEDBench_IMG": 10}[dataset]
    for group, printed in published.items():
        _assert_printed(rows[f"{metric}:{group}"], printed)
    recorded = read_metadata(tmp_path / "extracted.parquet")["extract"]["choice_rules"]
    assert recorded["name"] == "vlmevalkit-2024" and "c3371551" in recorded["source"]


@pytest.mark.parametrize(("model", "dataset", "group", "today"), [
    ("vila_13b", "CCBench", "Overall", 21.7647),
    ("vila_13b", "CCBench", "sketch_reasoning", 26.6667),
    ("vila_8b", "SEEDBench_IMG", "Overall", 67.7558),
])
def test_default_rules_are_todays(shared_data: Path, tmp_path: Path, model: str, dataset: str, group: str,
                                  today: float) -> None:
    folder = shared_data / "vlmevalkit_vila" / model
    benchmark, metric = MCQ_FILES[dataset]
    rows = _score(folder / f"{model}_{dataset}.xlsx", tmp_path, benchmark, None)
    assert round(rows[f"{metric}:{group}"]["value"], 4) == today
    assert read_metadata(tmp_path / "extracted.parquet")["extract"]["choice_rules"]["name"] == "vlmevalkit"


@pytest.mark.parametrize("model", MODELS)
def test_all_six_files_import_and_seed_scores_the_same_after_import(shared_data: Path, tmp_path: Path,
                                                                    model: str) -> None:
    folder = shared_data / "vlmevalkit_vila" / model
    for dataset, benchmark in (("MME", None), ("CCBench", "mmbench"), ("SEEDBench_IMG", "seedbench")):
        output = tmp_path / f"{dataset}.parquet"
        argv = ["import", "--format", "vlmevalkit", "--input", str(folder / f"{model}_{dataset}.xlsx"),
                "--output", str(output)]
        assert main(argv + (["--benchmark", benchmark] if benchmark else [])) == 0, dataset
        assert main(["validate", str(output)]) == 0, dataset
    # 33 questions whose correct option VLMEvalKit's table left empty: imported, counted, scored wrong.
    assert read_metadata(tmp_path / "SEEDBench_IMG.parquet")["import"]["answers_naming_empty_option"] == 33
    rows = _score(tmp_path / "SEEDBench_IMG.parquet", tmp_path, "seedbench", "vlmevalkit-2024")
    _assert_printed(rows["acc:Overall"], _published(folder, f"{model}_SEEDBench_IMG")["Overall"])
    assert read_metadata(tmp_path / "extracted.parquet")["extract"]["counts"]["answers_naming_empty_option"] == 33


@pytest.mark.parametrize(("model", "row_by_row"), [("vila_13b", 63.12), ("vila_8b", 57.36)])
def test_seedbench2_with_repeated_indices_is_refused_unless_renumbered(shared_data: Path, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str],
                                                                       model: str, row_by_row: float) -> None:
    source = shared_data / "vlmevalkit_vila" / model / f"{model}_SEEDBench2.xlsx"
    predictions = tmp_path / "predictions.parquet"
    argv = ["import", "--format", "vlmevalkit", "--benchmark", "seedbench2", "--input", str(source),
            "--output", str(predictions)]
    assert main(argv) == 2
    assert "3099 rows repeat an earlier row's index (210, 211," in capsys.readouterr().err
    assert not predictions.exists()
    assert main([*argv, "--duplicate-index", "renumber"]) == 0
    assert "3099 rows repeated an earlier row's index and were renumbered: 210 -> " in capsys.readouterr().err
    frame = read_table(predictions).frame
    assert frame["index"].n_unique() == frame.height == 24371
    renumbered = frame.filter(pl.col("source_index").is_not_null())
    assert renumbered.height == 3099 and renumbered["index"].min() > frame["source_index"].max()
    assert read_metadata(predictions)["import"]["renumbered_duplicate_indices"] == 3099
    # Each row scored on its own answer (MANIFEST.md: 63.12 % and 57.36 % with the July-2024 rules).
    rows = _score(predictions, tmp_path, "seedbench2", "vlmevalkit-2024")
    assert round(rows["acc:Overall"]["value"], 2) == row_by_row
