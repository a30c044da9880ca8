"""Golden scores: the real model outputs in ../shared/data must give the numbers their official tools publish.

The extracted frames are built here with small loaders (the official MME yes/no rule, the SEED result lines as
they are), so these tests pin the scoring itself; the CLI chains (import/extract/score) have their own tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from mmbatch.benchmarks.mme.yes_no import official_yes_no
from mmbatch.score.stage import ScoreOptions, ScoreResult, score_frame
from mmbatch.tableio import read_table

LAVIN_SUBTASKS = {
    "existence": 185.00, "count": 88.33, "position": 63.33, "color": 75.00, "posters": 79.59,
    "celebrity": 47.35, "scene": 136.75, "landmark": 93.50, "artwork": 87.25, "OCR": 107.50,
    "commonsense_reasoning": 87.14, "numerical_calculation": 65.00, "text_translation": 47.50,
    "code_reasoning": 50.00,
}


def mme_tool_rows(folder: Path) -> pl.DataFrame:
    """The official MME tool's input folder as extracted rows: the tool's own reading and yes/no rule.

    Like the tool, lines are split on tabs without stripping the prediction, and images pair the two questions.
    """
    rows = []
    for path in sorted(folder.glob("*.txt")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            image, question, truth, prediction = line.split("\t")
            rows.append({"category": path.stem, "image_name": image, "question": question, "answer": truth,
                         "prediction": prediction, "extracted": official_yes_no(prediction)})
    frame = pl.DataFrame(rows).with_row_index("index").with_columns(pl.col("index").cast(pl.Int64))
    g_index = pl.struct("category", "image_name").rank("dense").cast(pl.Int64)
    return frame.with_columns(g_index.alias("g_index"), pl.lit("mme").alias("benchmark"))


def seed_result_rows(path: Path) -> pl.DataFrame:
    """A SEED result file (lines ending with a comma, some ids repeated) as extracted rows, every line kept."""
    records = [json.loads(line.rstrip().rstrip(",")) for line in path.read_text().splitlines() if line.strip()]
    frame = pl.DataFrame(records).with_row_index("index").with_columns(pl.col("index").cast(pl.Int64))
    return frame.rename({"prediction": "extracted", "gt_answer": "answer"})


def value(result: ScoreResult, level: str, group: str, metric: str) -> float:
    """The one metric value at (level, group, metric)."""
    found = result.metrics.filter((pl.col("level") == level) & (pl.col("group") == group)
                                  & (pl.col("metric") == metric))
    assert found.height == 1, f"expected one {level}/{group}/{metric} row, found {found.height}"
    return float(found["value"][0])


def test_mme_lavin_reproduces_official_scores(shared_data):
    result = score_frame(mme_tool_rows(shared_data / "mme" / "LaVIN"), ScoreOptions())
    assert round(value(result, "total", "perception", "score"), 4) == 963.6114
    assert round(value(result, "total", "cognition", "score"), 4) == 249.6429
    for subtask, score in LAVIN_SUBTASKS.items():
        assert round(value(result, "subtask", subtask, "score"), 2) == score, subtask
    assert not result.warnings


def test_mme_llava_13b_reproduces_official_totals(shared_data):
    result = score_frame(mme_tool_rows(shared_data / "llava15_13b" / "mme" / "mme_results_txt"), ScoreOptions())
    assert round(value(result, "total", "perception", "score"), 4) == 1531.3187
    assert round(value(result, "total", "cognition", "score"), 4) == 295.3571


def test_mme_prefix_rule_quirks_are_what_the_totals_rest_on(shared_data):
    """The tool reads "know" as no and "The answer is yes." as other: the totals above depend on it."""
    assert official_yes_no("know") == "No"
    assert official_yes_no(" yes") == "Yes"
    assert official_yes_no("The answer is yes.") is None


def test_mmbench_llava_13b_circular_eval_straight_from_the_xlsx(shared_data):
    path = next((shared_data / "llava15_13b" / "mmbench").glob("*_upload.xlsx"))
    frame = read_table(path).frame.with_columns(pl.col("prediction").alias("extracted"))
    result = score_frame(frame, ScoreOptions(benchmark="mmbench"))
    circular = result.metrics.filter((pl.col("level") == "overall") & (pl.col("metric") == "circular_acc"))
    assert circular["n"].to_list() == [1176]
    assert round(float(circular["value"][0]), 2) == 67.69
    assert round(float(circular["value"][0]) * 1176 / 100) == 796
    assert value(result, "overall", "Overall", "unmatched") == 0


def test_seed1_gpt4v_all_lines_as_the_file_is(shared_data):
    frame = seed_result_rows(shared_data / "seed" / "seedbench1_GPT-4V_results.jsonl")
    result = score_frame(frame, ScoreOptions(benchmark="seedbench"))
    assert round(value(result, "overall", "Overall", "acc"), 2) == 67.28
    assert round(value(result, "data_type", "image", "acc"), 2) == 69.07
    assert round(value(result, "data_type", "video", "acc"), 2) == 60.50


def test_seed1_llava_13b_image_accuracy_against_gpt4v_ground_truth(shared_data):
    truth = seed_result_rows(shared_data / "seed" / "seedbench1_GPT-4V_results.jsonl").unique(
        "question_id", keep="first").select("question_id", "answer")
    answers = pl.DataFrame([json.loads(line) for line in (next(
        (shared_data / "llava15_13b" / "seed_bench").glob("*_upload.jsonl"))).read_text().splitlines()])
    frame = answers.join(truth, on="question_id", how="inner").rename({"prediction": "extracted"})
    frame = frame.with_row_index("index").with_columns(pl.col("index").cast(pl.Int64))
    result = score_frame(frame, ScoreOptions(benchmark="seedbench"))
    image = result.metrics.filter((pl.col("level") == "data_type") & (pl.col("group") == "image"))
    assert round(float(image["value"][0]), 2) == 68.21


def test_seed2_gpt4v_stray_spaces_in_answers_do_not_count_as_wrong(shared_data):
    frame = seed_result_rows(shared_data / "seed" / "seedbench2_GPT-4V_results.jsonl")
    spaced = frame.filter(pl.col("answer") != pl.col("answer").str.strip_chars())
    assert spaced.height == 19
    result = score_frame(frame, ScoreOptions(benchmark="seedbench2"))
    hits = result.hits.filter(pl.col("index").is_in(spaced["index"].to_list()))
    expected = (hits["extracted"].str.strip_chars() == hits["answer"].str.strip_chars()).cast(pl.Int64)
    assert hits["hit"].to_list() == expected.to_list()
    assert expected.sum() > 0
    # Dimensions come from the `<dim>_<n>` ids: 24 of them, and levels L1 (dims 1-22) and L2 (1-24) only.
    assert result.metrics.filter(pl.col("level") == "dimension").height == 24
    assert sorted(result.metrics.filter(pl.col("level") == "level")["group"].unique().to_list()) == ["L1", "L2"]


def test_golden_values_do_not_move_with_bootstrap(shared_data):
    frame = mme_tool_rows(shared_data / "mme" / "LaVIN")
    plain = score_frame(frame, ScoreOptions()).metrics
    boot = score_frame(frame, ScoreOptions(bootstrap=200, seed=3)).metrics
    assert plain["value"].to_list() == boot["value"].to_list()
    perception = boot.filter((pl.col("level") == "total") & (pl.col("group") == "perception"))
    low, high = float(perception["ci_low"][0]), float(perception["ci_high"][0])
    assert low < 963.6114 < high
