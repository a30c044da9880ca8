"""``mmbatch extract`` without a judge, through the real CLI: the real LLaVA xlsx, adapters, MME, errors."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from support.extract_rows import mcq_row, mme_row, write_predictions

from mmbatch.tableio import metadata_sidecar, read_table

NO_KEYS = {"OPENAI_API_KEY": "", "MMBATCH_JUDGE_API_KEY": "", "OPENAI_BASE_URL": ""}
LLAVA_XLSX = "llava15_13b/mmbench/mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx"


def circular_accuracy(frame: pl.DataFrame) -> tuple[int, int]:
    """(groups right, groups) under CircularEval, groups without their circ-0 row ignored."""
    scored = frame.with_columns(hit=(pl.col("extracted") == pl.col("answer")).fill_null(False))
    groups = scored.group_by("g_index").agg(pl.col("hit").all(), (pl.col("index") == pl.col("g_index")).any()
                                            .alias("has_original"))
    groups = groups.filter(pl.col("has_original"))
    return int(groups["hit"].sum()), groups.height


def test_llava_xlsx_rules_only_reproduces_circular_eval(cli, shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "llava.parquet"
    result = cli("extract", "--input", str(shared_data / LLAVA_XLSX), "--output", str(out), "--no-judge",
                 "--benchmark", "mmbench", env=NO_KEYS)
    assert result.returncode == 0, result.stderr
    table = read_table(out)
    frame = table.frame
    assert frame.height == 4377
    assert circular_accuracy(frame) == (796, 1176)  # 67.69 %, LLaVA-1.5-13B's published 67.7
    assert set(frame["extract_method"]) == {"rule"}
    assert frame["g_index"].to_list() == [i % 1_000_000 for i in frame["index"].to_list()]
    assert set(frame["benchmark"]) == {"mmbench"}
    assert frame.columns[:9] == ["index", "question", "A", "B", "C", "D", "prediction", "answer", "split"]
    meta = table.metadata
    assert meta["stage"] == "extracted"
    assert meta["extract"]["input_format"] == "vlmevalkit"
    assert meta["extract"]["judge"] is None
    assert meta["extract"]["counts"]["by_method"]["rule"] == 4377
    assert "rule 4377" in result.stderr
    assert not (tmp_path / "llava.parquet.partial").exists()


def test_a_vlmevalkit_file_needs_benchmark(cli, shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.tsv"
    result = cli("extract", "--input", str(shared_data / LLAVA_XLSX), "--output", str(out), "--no-judge",
                 env=NO_KEYS)
    assert result.returncode == 2
    assert "column 'benchmark'" in result.stderr and "--benchmark" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_rules_only_run_keeps_every_column_and_marks_unmatched(cli, tmp_path: Path) -> None:
    rows = [
        mcq_row(1, "B", source="s1"),
        mcq_row(1_000_001, "The answer is C", answer="C", source="s1"),
        mcq_row(2, "I would say the vehicle is azure", source="s2"),
        mcq_row(3, None, source="s3"),
    ]
    inp = write_predictions(tmp_path / "pred.tsv", rows)
    out = tmp_path / "out.tsv"
    result = cli("extract", "--input", str(inp), "--output", str(out), "--no-judge", env=NO_KEYS)
    assert result.returncode == 0, result.stderr
    frame = read_table(out).frame
    assert frame["extracted"].to_list() == ["B", "C", None, None]
    assert frame["extract_method"].to_list() == ["rule", "rule", "unmatched", "unmatched"]
    assert frame["extract_note"][2] == "no rule matched (--no-judge)"
    assert frame["source"].to_list() == ["s1", "s1", "s2", "s3"]
    assert frame["judge_model"].null_count() == 4
    meta = json.loads(metadata_sidecar(out).read_text())
    assert meta["infer"] == {"model": "test-model"}  # the input's metadata is carried
    assert meta["extract"]["input_format"] == "mmbatch"
    assert cli("validate", str(out)).returncode == 0


def test_mme_official_rule_needs_no_judge(cli, tmp_path: Path) -> None:
    rows = [mme_row(1, "a.jpg", "Yes", "Yes"), mme_row(2, "a.jpg", "know", "No"),
            mme_row(3, "b.jpg", "The answer is yes.", "Yes"), mme_row(4, "b.jpg", " no", "No")]
    inp = write_predictions(tmp_path / "mme.parquet", rows)
    out = tmp_path / "out.parquet"
    # No --no-judge and no key: the official rule never needs the judge, so nothing asks for one.
    result = cli("extract", "--input", str(inp), "--output", str(out), env=NO_KEYS)
    assert result.returncode == 0, result.stderr
    frame = read_table(out).frame
    assert frame["extracted"].to_list() == ["Yes", "No", None, "No"]
    assert frame["extract_method"].to_list() == ["yes-no", "yes-no", "unmatched", "yes-no"]
    assert read_table(out).metadata["extract"]["yes_no_rule"] == "official"


def test_mme_vlmevalkit_rule_without_judge(cli, tmp_path: Path) -> None:
    rows = [mme_row(1, "a.jpg", "know", "No"), mme_row(2, "a.jpg", "The answer is yes.", "Yes")]
    inp = write_predictions(tmp_path / "mme.tsv", rows)
    out = tmp_path / "out.tsv"
    result = cli("extract", "--input", str(inp), "--output", str(out), "--yes-no-rule", "vlmevalkit",
                 "--no-judge", env=NO_KEYS)
    assert result.returncode == 0, result.stderr
    frame = read_table(out).frame
    assert frame["extracted"].to_list() == [None, "Yes"]
    assert frame["extract_method"].to_list() == ["unmatched", "yes-no"]


def test_rows_that_failed_in_infer_stay_failed(cli, tmp_path: Path) -> None:
    rows = [mcq_row(1, "A", answer="A"), mcq_row(2, None, error="CUDA out of memory")]
    inp = write_predictions(tmp_path / "pred.tsv", rows)
    out = tmp_path / "out.tsv"
    result = cli("extract", "--input", str(inp), "--output", str(out), "--no-judge", env=NO_KEYS)
    assert result.returncode == 3, result.stderr
    frame = read_table(out).frame
    assert frame["extract_method"].to_list() == ["rule", "error"]
    assert frame["error"].to_list() == [None, "CUDA out of memory"]


def test_likelihood_rows_use_the_reduction(cli, tmp_path: Path) -> None:
    rows = [mcq_row(1, None, answer="A", choice_logprobs=[-6.0, -4.0, -9.0, -9.0], choice_ntokens=[3, 1, 3, 3],
                    mode="likelihood")]
    inp = write_predictions(tmp_path / "pred.parquet", rows)
    picks = {}
    for reduction in ("sum", "mean"):
        out = tmp_path / f"{reduction}.parquet"
        result = cli("extract", "--input", str(inp), "--output", str(out), "--no-judge",
                     "--likelihood-reduction", reduction, env=NO_KEYS)
        assert result.returncode == 0, result.stderr
        table = read_table(out)
        picks[reduction] = table.frame["extracted"][0]
        assert table.frame["extract_method"][0] == "likelihood"
        assert table.metadata["extract"]["likelihood_reduction"] == reduction
    assert picks == {"sum": "B", "mean": "A"}  # -4/1 = -4 vs -6/3 = -2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--unmatched", "random", "--no-judge"], "needs the judge"),
        (["--yes-no-rule", "strict"], "invalid choice"),
    ],
)
def test_bad_options_exit_2(cli, tmp_path: Path, args: list[str], message: str) -> None:
    inp = write_predictions(tmp_path / "pred.tsv", [mcq_row(1, "A")])
    result = cli("extract", "--input", str(inp), "--output", str(tmp_path / "out.tsv"), *args, env=NO_KEYS)
    assert result.returncode == 2 and message in result.stderr
    assert not (tmp_path / "out.tsv").exists()


def test_bad_input_names_file_row_and_column(cli, tmp_path: Path) -> None:
    no_prediction = tmp_path / "prepared.tsv"
    pl.DataFrame({"index": [1], "question": ["q"]}).write_csv(no_prediction, separator="\t")
    result = cli("extract", "--input", str(no_prediction), "--output", str(tmp_path / "o.tsv"), "--no-judge")
    assert result.returncode == 2 and "column 'prediction'" in result.stderr and str(no_prediction) in result.stderr

    bad_logprobs = write_predictions(tmp_path / "lp.parquet", [
        mcq_row(7, None, choice_logprobs=[-1.0, -2.0], choice_ntokens=[1, 1], mode="likelihood")])
    result = cli("extract", "--input", str(bad_logprobs), "--output", str(tmp_path / "o.tsv"), "--no-judge")
    assert result.returncode == 2
    assert "row index=7" in result.stderr and "column 'choice_logprobs'" in result.stderr
    assert "2 log-probabilities for 4 options" in result.stderr
    assert not (tmp_path / "o.tsv").exists()

    result = cli("extract", "--input", str(bad_logprobs), "--output", str(tmp_path / "o.xlsx"))
    assert result.returncode == 2 and "cannot write '.xlsx' files" in result.stderr
