"""mmbatch compare: paired differences, McNemar's exact test checked against an independent binomial computation,
reproducible bootstrap intervals, and rows only one model answered counted — on the real LLaVA-1.5-13B MMBench file."""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.compare.mcnemar import mcnemar_exact_p
from mmbatch.compare.paired import compare_partition
from mmbatch.compare.stage import CompareOptions, compare_frames
from mmbatch.errors import BadInputError
from mmbatch.scoring.plan import STRATUM, CellLevel, ScorePlan, accuracy, collapse_units

LLAVA_XLSX = "llava15_13b/mmbench/mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx"


def binomial_two_sided(b: int, c: int) -> float:
    """Exact McNemar p from first principles: 2 * P(X <= min(b, c)), X ~ Binomial(b + c, 1/2), in exact fractions."""
    n = b + c
    tail = sum(Fraction(comb(n, k), 2 ** n) for k in range(min(b, c) + 1))
    return float(min(Fraction(1), 2 * tail))


@pytest.mark.parametrize(("b", "c"), [(0, 0), (3, 0), (5, 5), (12, 4), (1, 40), (308, 2), (900, 1000)])
def test_mcnemar_equals_exact_binomial(b: int, c: int) -> None:
    assert mcnemar_exact_p(b, c) == pytest.approx(binomial_two_sided(b, c), rel=1e-9, abs=1e-300)


@pytest.fixture(scope="module")
def two_models(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """LLaVA-1.5-13B's real MMBench-dev answers (A) and a worse model B: every 7th row answered D, every 50th row
    (from index 1) never answered — both scored by the real extract and score commands."""
    folder = tmp_path_factory.mktemp("compare")
    extracted = folder / "a.extracted.parquet"
    assert main(["extract", "--input", str(shared_data / LLAVA_XLSX), "--output", str(extracted),
                 "--benchmark", "mmbench", "--no-judge"]) == 0
    assert main(["score", "--input", str(extracted), "--output", str(folder / "a.json")]) == 0
    rows = pl.read_parquet(extracted)
    worse = rows.filter(pl.col("index") % 50 != 1).with_columns(
        pl.when(pl.col("index") % 7 == 0).then(pl.lit("D")).otherwise(pl.col("extracted")).alias("extracted"),
        pl.lit("model-b").alias("model"))
    worse.write_parquet(folder / "b.extracted.parquet")
    assert main(["score", "--input", str(folder / "b.extracted.parquet"), "--output", str(folder / "b.json")]) == 0
    return {"a": folder / "a.hits.parquet", "b": folder / "b.hits.parquet", "folder": folder}


def compare_json(two_models: dict[str, Path], *extra: str, name: str = "cmp.json") -> dict:
    output = two_models["folder"] / name
    assert main(["compare", str(two_models["a"]), str(two_models["b"]), "--output", str(output), *extra]) == 0
    return json.loads(output.read_text())


def circular_verdicts(hits: pl.DataFrame) -> dict[int, int]:
    """Per circular group: 1 when every row is right and the group's first (circ-0) row is there, as VLMEvalKit."""
    groups = hits.group_by("g_index").agg(pl.col("hit").min().alias("all_right"),
                                          (pl.col("index") == pl.col("g_index")).any().alias("has_circ0"))
    return {g: int(right) for g, right, circ0 in groups.iter_rows() if circ0}


def test_circular_accuracy_paired_against_an_independent_count(two_models: dict[str, Path]) -> None:
    document = compare_json(two_models, "--bootstrap", "200", "--seed", "1")
    a, b = pl.read_parquet(two_models["a"]), pl.read_parquet(two_models["b"])
    shared = a.join(b.select("index"), on="index", how="semi")
    verdict_a = circular_verdicts(shared)
    verdict_b = circular_verdicts(b.join(a.select("index"), on="index", how="semi"))
    assert verdict_a.keys() == verdict_b.keys()
    a_only = sum(1 for g in verdict_a if verdict_a[g] == 1 and verdict_b[g] == 0)
    b_only = sum(1 for g in verdict_a if verdict_a[g] == 0 and verdict_b[g] == 1)
    row = next(r for r in document["comparisons"] if (r["level"], r["metric"]) == ("overall", "circular_acc"))
    assert (row["a_only"], row["b_only"]) == (a_only, b_only)
    assert a_only > b_only > 0
    assert row["p_value"] == pytest.approx(binomial_two_sided(a_only, b_only), rel=1e-9)
    assert row["n"] == len(verdict_a)
    assert row["value_a"] == pytest.approx(100 * sum(verdict_a.values()) / len(verdict_a))
    assert row["value_b"] == pytest.approx(100 * sum(verdict_b.values()) / len(verdict_b))
    assert row["diff"] == pytest.approx(row["value_b"] - row["value_a"])
    assert row["ci_low"] < row["diff"] < row["ci_high"] < 0
    vanilla = next(r for r in document["comparisons"] if (r["level"], r["metric"]) == ("overall", "vanilla_acc"))
    assert vanilla["p_value"] is None  # four rows per unit: no right-or-wrong verdict per unit


def test_rows_only_one_model_answered_are_counted(two_models: dict[str, Path]) -> None:
    document = compare_json(two_models, "--bootstrap", "0")
    (coverage,) = document["coverage"]
    dropped = pl.read_parquet(two_models["a"]).filter(pl.col("index") % 50 == 1).height
    assert (coverage["rows_only_a"], coverage["rows_only_b"]) == (dropped, 0)
    assert coverage["rows_both"] == 4377 - dropped
    assert coverage["model_b"] == "model-b"
    assert all(r["ci_low"] is None for r in document["comparisons"])


def test_bootstrap_intervals_are_reproducible_with_seed(two_models: dict[str, Path]) -> None:
    first = compare_json(two_models, "--bootstrap", "300", "--seed", "5", name="s5a.json")
    again = compare_json(two_models, "--bootstrap", "300", "--seed", "5", name="s5b.json")
    other = compare_json(two_models, "--bootstrap", "300", "--seed", "6", name="s6.json")
    intervals = [[(r["ci_low"], r["ci_high"]) for r in d["comparisons"]] for d in (first, again, other)]
    assert intervals[0] == intervals[1]
    assert intervals[0] != intervals[2]


def test_parquet_output_and_terminal_table(two_models: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    output = two_models["folder"] / "cmp.parquet"
    assert main(["compare", str(two_models["a"]), str(two_models["b"]), "--output", str(output),
                 "--bootstrap", "50"]) == 0
    printed = capsys.readouterr().out
    assert "circular_acc" in printed and "paired p" in printed and "only in A" in printed
    frame = pl.read_parquet(output)
    assert {"value_a", "value_b", "diff", "ci_low", "ci_high", "a_only", "b_only", "p_value"} <= set(frame.columns)


def test_refuses_what_is_not_a_pair_of_hits_files(two_models: dict[str, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(two_models["a"]), str(two_models["folder"] / "a.json")]) == 2
    mixed = pl.concat([pl.read_parquet(two_models["a"]).head(8),
                       pl.read_parquet(two_models["b"]).head(8).with_columns(pl.col("index") + 100000)],
                      how="diagonal_relaxed")
    mixed.write_parquet(tmp_path / "mixed.parquet")
    assert main(["compare", str(tmp_path / "mixed.parquet"), str(two_models["b"])]) == 2
    assert "2 models" in capsys.readouterr().err


def seed_rows(model: str, hits: list[int]) -> pl.DataFrame:
    answers = ["A"] * len(hits)
    return pl.DataFrame({
        "index": list(range(len(hits))), "g_index": list(range(len(hits))), "benchmark": "seedbench",
        "model": model, "question_type_id": [1 + i % 3 for i in range(len(hits))], "data_type": "image",
        "answer": answers, "extracted": ["A" if h else "B" for h in hits], "hit": hits,
    })


def test_seed_dimensions_each_get_their_own_mcnemar() -> None:
    hits_a = [1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0]
    hits_b = [0, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1, 1]
    result = compare_frames(seed_rows("a", hits_a), seed_rows("b", hits_b), CompareOptions(bootstrap=0))
    by_cell = {(r["level"], r["group"], r["metric"]): r for r in result.comparisons.iter_rows(named=True)}
    for dim in (1, 2, 3):
        members = [i for i in range(12) if 1 + i % 3 == dim]
        b = sum(1 for i in members if hits_a[i] and not hits_b[i])
        c = sum(1 for i in members if hits_b[i] and not hits_a[i])
        row = next(r for k, r in by_cell.items() if k[0] == "dimension" and k[2] == "acc" and r["n"] == 4
                   and (r["a_only"], r["b_only"]) == (b, c))
        assert row["p_value"] == pytest.approx(binomial_two_sided(b, c))
    overall = by_cell[("overall", "Overall", "acc")]
    assert (overall["a_only"], overall["b_only"]) == (4, 2)


def test_files_that_share_no_rows_are_refused() -> None:
    a = seed_rows("a", [1, 0, 1])
    b = seed_rows("b", [1, 1, 1]).with_columns(pl.col("index") + 10, pl.col("g_index") + 10)
    with pytest.raises(BadInputError, match="share no rows"):
        compare_frames(a, b, CompareOptions(bootstrap=0))


class _MeanScore:
    """A graded benchmark's scorer: the mean of a per-row float score (as the VQA-accuracy and ANLS kinds give)."""

    def plan(self, rows: pl.DataFrame) -> ScorePlan:
        units = rows.with_columns(pl.lit("Overall").alias("overall"), pl.lit("").alias(STRATUM),
                                  pl.lit(1, dtype=pl.Int64).alias("questions"), pl.col("score").alias("points"))
        types = collapse_units(units, [STRATUM, "overall", "questions", "points"])
        return ScorePlan(types, (CellLevel("overall", "overall"),), ("questions", "points"),
                         (accuracy("overall", "Overall", "acc", "points", "questions"),))


@pytest.mark.parametrize(("scores_a", "scores_b", "tested"), [
    ([1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0], True),  # float statistics that are all 0 or 1: McNemar applies
    ([0.9, 0.3, 1.0, 0.0], [1.0, 0.6, 0.0, 0.0], False),  # graded: no right-or-wrong pairs, no test
])
def test_float_scores_are_compared_and_tested_only_when_they_are_0_or_1(scores_a: list[float],
                                                                        scores_b: list[float], tested: bool) -> None:
    def rows(scores: list[float]) -> pl.DataFrame:
        return pl.DataFrame({"g_index": [1, 2, 3, 4], "score": scores})

    result = compare_partition(_MeanScore(), rows(scores_a), rows(scores_b), replicates=0, rng=None)
    row = result.row(0, named=True)
    assert row["diff"] == pytest.approx(25 * (sum(scores_b) - sum(scores_a)))
    if tested:
        assert (row["a_only"], row["b_only"]) == (2, 0) and row["p_value"] == pytest.approx(binomial_two_sided(2, 0))
    else:
        assert (row["a_only"], row["b_only"], row["p_value"]) == (None, None, None)
