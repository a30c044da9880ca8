"""Benchmark rules of the scorers on small hand-made frames: MMBench, MME and SEED-Bench."""

from __future__ import annotations

import polars as pl
import pytest

from mmbatch.errors import BadInputError
from mmbatch.score.stage import ScoreOptions, score_frame

OFFSET = 1_000_000


def metric(result, level: str, group: str, name: str) -> tuple[float, int]:
    found = result.metrics.filter((pl.col("level") == level) & (pl.col("group") == group)
                                  & (pl.col("metric") == name))
    assert found.height == 1, (level, group, name, found)
    return float(found["value"][0]), int(found["n"][0])


def mmbench_rows() -> pl.DataFrame:
    """Three questions: q0 right in all 4 copies; q1 wrong in copy 2; q2's circ-0 row is missing."""
    index = [0, OFFSET, 2 * OFFSET, 3 * OFFSET, 1, 1 + OFFSET, 1 + 2 * OFFSET, 2 + OFFSET, 2 + 2 * OFFSET]
    answer = ["A", "B", "C", "D", "B", "C", "D", "A", "B"]
    extracted = ["A", "B", "C", "D", "B", "C", "A", "A", "B"]
    category = ["image_emotion"] * 4 + ["ocr", "ocr", "wrong label", "ocr", "ocr"]
    return pl.DataFrame({
        "index": index, "benchmark": ["mmbench"] * 9, "answer": answer, "extracted": extracted,
        "category": category,
        "l2-category": ["coarse_perception"] * 4 + ["finegrained_perception (instance-level)"] * 5,
        "split": ["dev"] * 9, "model": ["m"] * 9,
    })


def test_mmbench_circular_vanilla_and_circ0():
    result = score_frame(mmbench_rows(), ScoreOptions())
    assert metric(result, "overall", "Overall", "circular_acc") == (50.0, 2)  # q2 has no circ-0 row: ignored
    assert metric(result, "overall", "Overall", "vanilla_acc") == (pytest.approx(800 / 9), 9)
    assert metric(result, "overall", "Overall", "circ0_acc") == (100.0, 2)
    # q1's category comes from its circ-0 row, not from the odd label of copy 2.
    assert metric(result, "category", "ocr", "circular_acc") == (0.0, 1)
    assert "wrong label" not in result.metrics["group"].to_list()
    assert metric(result, "l2-category", "CP", "circular_acc") == (100.0, 1)
    assert metric(result, "l2-category", "FP-S", "vanilla_acc") == (80.0, 5)


def test_mmbench_without_g_index_groups_by_index_modulo_a_million():
    result = score_frame(mmbench_rows(), ScoreOptions())
    assert "g_index" in result.hits.columns
    assert sorted(result.hits["g_index"].unique().to_list()) == [0, 1, 2]


def test_unmatched_and_failed_rows_are_wrong_and_counted():
    rows = mmbench_rows().with_columns(
        pl.when(pl.col("index") == 0).then(None).otherwise(pl.col("extracted")).alias("extracted"),
        pl.when(pl.col("index") == OFFSET).then(pl.lit("timeout")).otherwise(None).alias("error"),
    )
    result = score_frame(rows, ScoreOptions())
    assert result.hits.filter(pl.col("index").is_in([0, OFFSET]))["hit"].to_list() == [0, 0]
    assert metric(result, "overall", "Overall", "unmatched") == (1.0, 9)
    assert metric(result, "overall", "Overall", "failed") == (1.0, 9)
    assert metric(result, "overall", "Overall", "circular_acc") == (0.0, 2)
    assert any("failed upstream" in w for w in result.warnings)


def test_each_split_is_scored_on_its_own():
    rows = pl.concat([mmbench_rows(), mmbench_rows().with_columns(
        pl.col("index") + 10, pl.lit("dev2").alias("split"), pl.col("answer").alias("extracted"))])
    result = score_frame(rows, ScoreOptions())
    by_split = result.metrics.filter((pl.col("metric") == "circular_acc") & (pl.col("level") == "overall"))
    assert dict(zip(by_split["split"], by_split["value"], strict=True)) == {"dev": 50.0, "dev2": 100.0}


def mme_rows(subtask: str = "count", questions_per_image: tuple[int, ...] = (2, 2)) -> pl.DataFrame:
    image, answer, extracted = [], [], []
    for i, n in enumerate(questions_per_image):
        for q in range(n):
            image.append(f"img{i}.jpg")
            answer.append("Yes" if q % 2 == 0 else "No")
            extracted.append("yes" if q % 2 == 0 else ("No" if i == 0 else "Yes"))
    return pl.DataFrame({"benchmark": "mme", "category": subtask, "image_name": image, "answer": answer,
                         "extracted": extracted})


def numbered(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_row_index("index").with_columns(pl.col("index").cast(pl.Int64))


def test_mme_yes_no_ignore_case_and_acc_plus_needs_both_answers():
    result = score_frame(numbered(mme_rows()), ScoreOptions())
    assert metric(result, "subtask", "count", "acc") == (75.0, 4)
    assert metric(result, "subtask", "count", "acc_plus") == (50.0, 2)
    assert metric(result, "subtask", "count", "score") == (125.0, 4)
    assert metric(result, "total", "perception", "score") == (125.0, 1)  # part from the official subtask list


def test_mme_image_without_two_questions_is_reported_not_a_crash():
    frame = numbered(pl.concat([mme_rows("count", (2, 3)), mme_rows("code_reasoning", (2,)),
                                mme_rows("OCR", (2,))]))
    result = score_frame(frame, ScoreOptions(bootstrap=50))
    names = result.metrics.filter(pl.col("group") == "count")["metric"].to_list()
    assert names == ["acc", "bad_images"]
    assert metric(result, "subtask", "count", "bad_images") == (1.0, 2)
    assert metric(result, "total", "perception", "score") == (200.0, 1)  # OCR only; n says 1 subtask
    assert metric(result, "total", "cognition", "score") == (200.0, 1)
    assert len(result.warnings) == 1
    assert "'count'" in result.warnings[0] and "img1.jpg (3 questions)" in result.warnings[0]


def test_mme_totals_hold_only_mme_subtasks_in_their_official_part():
    # Campaign replay: a subtask MME does not have, whose rows were labelled perception for one image and cognition
    # for the other, was counted in both totals; a known subtask labelled cognition moved to the cognition total.
    frame = numbered(pl.concat([mme_rows("count"), mme_rows("weird"), mme_rows("code_reasoning")]))
    labels = (pl.when(pl.col("category") == "weird").then(
        pl.when(pl.col("image_name") == "img0.jpg").then(pl.lit("perception")).otherwise(pl.lit("cognition")))
        .when(pl.col("category") == "count").then(pl.lit("cognition")).otherwise(pl.lit("cognition")))
    result = score_frame(frame.with_columns(labels.alias("l2-category")), ScoreOptions(bootstrap=0))
    assert metric(result, "total", "perception", "score") == (125.0, 1)  # count alone
    assert metric(result, "total", "cognition", "score") == (125.0, 1)  # code_reasoning alone
    assert metric(result, "subtask", "weird", "score") == (125.0, 4)  # still shown on its own
    assert any("'weird' is not an MME subtask" in warning for warning in result.warnings)


def test_mme_rows_need_a_subtask():
    frame = numbered(mme_rows()).with_columns(pl.lit(None, dtype=pl.String).alias("category"))
    with pytest.raises(BadInputError, match="category"):
        score_frame(frame, ScoreOptions())


def seed1_rows() -> pl.DataFrame:
    dims = [1, 1, 1, 1, 9, 9, 10, 10]
    hits = [1, 1, 1, 0, 1, 0, 0, 0]
    return pl.DataFrame({
        "index": list(range(8)), "benchmark": "seedbench", "question_type_id": dims,
        "question_id": [f"{'v' if d >= 10 else ''}{i}" for i, d in enumerate(dims)],
        "answer": ["A"] * 8, "extracted": [" A " if h else "B" for h in hits],
    })


def test_seed1_dimensions_data_types_overall_and_macro():
    result = score_frame(seed1_rows(), ScoreOptions())
    assert metric(result, "dimension", "Scene Understanding", "acc") == (75.0, 4)
    assert metric(result, "dimension", "Text Understanding", "acc") == (50.0, 2)
    assert metric(result, "dimension", "Action Recognition", "acc") == (0.0, 2)
    assert metric(result, "data_type", "image", "acc") == (pytest.approx(400 / 6), 6)
    assert metric(result, "data_type", "video", "acc") == (0.0, 2)
    assert metric(result, "overall", "Overall", "acc") == (50.0, 8)
    assert metric(result, "overall", "Overall", "acc_macro") == (pytest.approx(125 / 3), 3)
    dims = result.metrics.filter(pl.col("level") == "dimension")["group"].to_list()
    assert dims == ["Scene Understanding", "Text Understanding", "Action Recognition"]


def test_seed2_levels_are_cumulative_and_parts_follow_the_dimensions():
    ids = ["1_0", "1_1", "17_0", "23_0", "23_1", "25_0"]
    frame = pl.DataFrame({"index": list(range(6)), "question_id": ids, "answer": ["A"] * 6,
                          "extracted": ["A", "B", "A", "A", "A", "B"]})
    result = score_frame(frame, ScoreOptions(benchmark="seedbench2"))
    assert metric(result, "level", "L1", "acc") == (pytest.approx(200 / 3), 3)
    assert metric(result, "level", "L2", "acc") == (80.0, 5)
    assert metric(result, "level", "L3", "acc") == (pytest.approx(400 / 6), 6)
    assert metric(result, "level", "L1", "acc_macro") == (75.0, 2)
    assert metric(result, "part", "Interleaved Image & Text Comprehension", "acc") == (100.0, 2)
    assert metric(result, "part", "Image Generation", "acc") == (0.0, 1)
    assert metric(result, "dimension", "In-Context Captioning", "acc") == (100.0, 2)


def test_mixed_benchmarks_in_one_file_are_scored_each_by_its_own_rules():
    frame = pl.concat([mmbench_rows().select("index", "benchmark", "answer", "extracted"),
                       numbered(mme_rows()).with_columns(pl.col("index") + 100).select(
                           "index", "benchmark", "answer", "extracted", "category", "image_name")],
                      how="diagonal")
    result = score_frame(frame, ScoreOptions())
    assert sorted(result.metrics["benchmark"].unique().to_list()) == ["mmbench", "mme"]
    assert metric(result, "subtask", "count", "acc") == (75.0, 4)  # "yes" == "Yes" only for MME
    only = score_frame(frame, ScoreOptions(benchmark="mme"))
    assert only.metrics["benchmark"].unique().to_list() == ["mme"]


def test_a_negative_bootstrap_is_refused():
    with pytest.raises(BadInputError, match="--bootstrap"):
        score_frame(mmbench_rows(), ScoreOptions(bootstrap=-1))


def test_reading_a_json_file_that_is_not_a_list_of_rows_fails_clearly(tmp_path):
    from mmbatch.score.metrics_table import read_metrics

    path = tmp_path / "m.json"
    path.write_text('{"rows": []}')
    with pytest.raises(BadInputError, match="list of rows"):
        read_metrics(path)


def test_mmbench_values_match_a_direct_computation_on_random_groups():
    """Random groups of 1-4 rows in 50 categories, some circ-0 rows dropped: every cell equals plain arithmetic."""
    import numpy as np

    rng = np.random.default_rng(5)
    questions = 3000
    sizes = rng.integers(1, 5, size=questions)
    question = np.repeat(np.arange(questions), sizes)
    copy = np.concatenate([np.arange(n) for n in sizes])
    rows = pl.DataFrame({
        "index": question + copy * OFFSET, "g_index": question, "benchmark": "mmbench",
        "category": (question % 50).astype(str), "l2-category": ((question % 50) % 6).astype(str),
        "answer": "A", "extracted": np.where(rng.random(question.size) < 0.7, "A", "B"),
    }).filter(~((pl.col("index") == pl.col("g_index")) & (pl.col("g_index") % 17 == 0)))
    result = score_frame(rows, ScoreOptions(bootstrap=100))
    hit = (pl.col("extracted") == pl.col("answer")).cast(pl.Int64)
    vanilla = rows.group_by("category").agg((100 * hit.mean()).alias("expected"))
    groups = rows.group_by("g_index").agg(
        pl.col("category").first(), hit.min().alias("right"), (pl.col("index") == pl.col("g_index")).any().alias("c0"))
    circular = groups.filter("c0").group_by("category").agg((100 * pl.col("right").mean()).alias("expected"))
    for name, expected in (("vanilla_acc", vanilla), ("circular_acc", circular)):
        got = result.metrics.filter((pl.col("level") == "category") & (pl.col("metric") == name))
        joined = got.join(expected, left_on="group", right_on="category")
        assert joined.height == 50
        assert (joined["value"] - joined["expected"]).abs().max() < 1e-9
        assert (joined["ci_low"] <= joined["value"]).all() and (joined["value"] <= joined["ci_high"]).all()
