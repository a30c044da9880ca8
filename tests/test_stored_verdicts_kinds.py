"""``extract --stored-verdicts`` for every answer kind that keeps its judge's outputs: MathVista's extracted answers
(``res``: no per-row verdict to check), MM-Vet's grades (VLMEvalKit's ``score``; the MM-Vet evaluator's replies and
scores) and LLaVA-Bench's reviews, through the same flag as the multiple-choice and yes/no files
(tests/test_stored_verdicts.py). Without the flag the stored outputs are never used."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from support.extract_rows import mmvet_rows, write_predictions

from mmbatch.cli import main
from mmbatch.interop.stored_replies import STORED_REPLIES, STORED_SCORES, replies_json, scores_json
from mmbatch.tableio import read_metadata, read_table, write_table

UNREACHABLE = ["--judge-base-url", "http://127.0.0.1:9/v1"]
"""A judge no one serves: a run that asked it would fail at start-up."""
FAILED = "All 5 retries failed.\n"

# (prediction, question_type, answer_type, answer, answer_option, choices, VLMEvalKit's res, its log)
MATHVISTA = [
    ("7", "free_form", "integer", "7", None, None, "7", "Prefetch succeed"),
    ("It is the second one.", "multi_choice", "text", "7cm", "B", "['6cm', '7cm']", "B", "Succeed"),
    ("many", "free_form", "integer", "3", None, None, "", FAILED),
]


def _mathvista(tmp_path: Path, rows: list[tuple]) -> Path:
    frame = pl.DataFrame({
        "index": list(range(1, len(rows) + 1)), "question": ["How many?"] * len(rows),
        "prediction": [r[0] for r in rows], "question_type": [r[1] for r in rows],
        "answer_type": [r[2] for r in rows], "answer": [r[3] for r in rows], "answer_option": [r[4] for r in rows],
        "choices": [r[5] for r in rows], "res": [r[6] for r in rows], "log": [r[7] for r in rows],
    })
    path = tmp_path / "m_MathVista_MINI_gpt-4o-mini.tsv"
    frame.write_csv(path, separator="\t")
    return path


def _extract(tmp_path: Path, *args: str, source: Path | None = None) -> int:
    predictions = tmp_path / "p.parquet"
    if source is not None:
        assert main(["import", "--format", "vlmevalkit", "--input", str(source), "--output", str(predictions)]) == 0
    return main(["extract", "--input", str(predictions), "--output", str(tmp_path / "x.parquet"), "--force",
                 *args])


def test_mathvista_judge_answers_are_read_and_nothing_is_claimed_checked(tmp_path: Path) -> None:
    assert _extract(tmp_path, "--stored-verdicts", *UNREACHABLE, source=_mathvista(tmp_path, MATHVISTA)) == 0
    frame = read_table(tmp_path / "x.parquet").frame
    assert frame["extract_method"].to_list() == ["rule", "judge", "unmatched"]
    assert frame["extracted"].to_list() == ["7", "B", None] and frame["score"].to_list() == [1.0, 1.0, 0.0]
    assert frame["judge_model"].to_list() == [None, "gpt-4o-mini (stored)", None]
    assert frame["judge_raw"].to_list() == [None, "B", None] and "retries failed" in frame["extract_note"][2]
    recorded = read_metadata(tmp_path / "x.parquet")["extract"]["stored_verdicts"]
    assert (recorded["judge"], recorded["rows"], recorded["scores_checked"]) == ("gpt-4o-mini", 1, 0)
    assert recorded["scores_not_checked"] == {
        "VLMEvalKit's file records the answer its judge extracted (res), not whether it was right": 3}


def test_without_the_flag_stored_answers_are_ignored(tmp_path: Path) -> None:
    assert _extract(tmp_path, "--no-judge", source=_mathvista(tmp_path, MATHVISTA)) == 0
    frame = read_table(tmp_path / "x.parquet").frame
    assert frame["extract_method"].to_list() == ["rule", "unmatched", "unmatched"]
    assert frame["judge_model"].null_count() == 3
    assert "stored_verdicts" not in read_metadata(tmp_path / "x.parquet")["extract"]


def test_a_row_vlmevalkit_prefetched_but_these_rules_do_not_is_named(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    rows = [MATHVISTA[0], ("It is the second one.", *MATHVISTA[1][1:6], "B", "Prefetch succeed")]
    assert _extract(tmp_path, "--stored-verdicts", *UNREACHABLE, source=_mathvista(tmp_path, rows)) == 2
    err = capsys.readouterr().err
    assert "row index=2" in err and "column 'vlmevalkit_log'" in err and "another era of the rules" in err
    assert not (tmp_path / "x.parquet").exists()


def test_vlmevalkit_mmvet_grades_are_read_and_checked(tmp_path: Path) -> None:
    frame = pl.DataFrame({"index": [1, 2], "question": ["What is number 1?", "What is number 2?"],
                          "answer": ["1", "2"], "category": ["rec", "ocr"], "prediction": ["one", "two"],
                          "score": ["0.5", "1.0"]})
    source = tmp_path / "m_MMVet_gpt4.tsv"
    frame.write_csv(source, separator="\t")
    assert _extract(tmp_path, "--stored-verdicts", *UNREACHABLE, source=source) == 0
    out = read_table(tmp_path / "x.parquet").frame
    assert out["extracted"].to_list() == ["0.5", "1.0"] and out["score"].to_list() == [0.5, 1.0]
    assert out["judge_model"].to_list() == ["gpt4 (stored)"] * 2
    assert read_metadata(tmp_path / "x.parquet")["extract"]["stored_verdicts"]["scores_checked"] == 2


def _replies(tmp_path: Path, scores: list[list[float | None]]) -> None:
    rows = [{**row, STORED_REPLIES: replies_json(["0.4", "0.6"]), STORED_SCORES: scores_json(run_scores)}
            for row, run_scores in zip(mmvet_rows(len(scores)), scores, strict=True)]
    write_predictions(tmp_path / "p.parquet", rows)


def test_a_stored_score_that_differs_from_the_replies_stops_the_run(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _replies(tmp_path, [[0.4, 0.6], [0.4, 0.7]])  # row 2's tool counted 0.7 for a reply that reads 0.6
    assert _extract(tmp_path, "--stored-verdicts", *UNREACHABLE) == 2
    err = capsys.readouterr().err
    assert "p.parquet" in err and "row index=2" in err and "column 'stored_judge_scores'" in err
    assert "extracted '0.4 0.6' by judge" in err and "--reasoning-tags none?" in err
    assert not (tmp_path / "x.parquet").exists()


def test_several_runs_need_a_kind_that_joins_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"index": 1, "g_index": 1, "benchmark": "mmstar", "mode": "generate", "prompt_template": "mmbench",
             "question": "Which?", "A": "north", "B": "south", "answer": "A", "prediction": "hmm", "model": "m",
             "error": None, STORED_REPLIES: replies_json(["A", "B"])}]
    write_predictions(tmp_path / "p.parquet", rows)
    assert _extract(tmp_path, "--stored-verdicts", *UNREACHABLE) == 2
    assert "2 stored judge runs for this row, but the mcq judge reads one per row" in capsys.readouterr().err


def test_the_grader_the_import_recorded_wins_and_may_not_be_contradicted(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # The MM-Vet evaluator reads a grade's first word; VLMEvalKit's grader reads the whole reply as a number.
    rows = [{**mmvet_rows(1)[0], STORED_REPLIES: replies_json(["0.6 because it names the object"]),
             STORED_SCORES: scores_json([0.6])}]
    path = tmp_path / "p.parquet"
    write_predictions(path, rows)
    write_table(read_table(path).frame, path, {**read_metadata(path), "import": {"judged": {
        "source": "m_gpt-4-grade-1runs.json", "judge": "gpt-4", "kind_options": {"grader": "mm-vet"}}}})
    assert _extract(tmp_path, "--stored-verdicts", *UNREACHABLE) == 0
    out = read_table(tmp_path / "x.parquet").frame
    assert (out["extracted"][0], out["judge_model"][0], out["judge_raw"][0]) == (
        "0.6", "gpt-4 (stored)", "0.6 because it names the object")
    recorded = read_metadata(tmp_path / "x.parquet")["extract"]
    assert recorded["kind_options"] == {"grader": "mm-vet"}
    assert recorded["stored_verdicts"]["kind_options"] == {"grader": "mm-vet"}
    assert _extract(tmp_path, "--stored-verdicts", *UNREACHABLE, "--kind-option", "grader=vlmevalkit") == 2
    assert "written under grader=mm-vet" in capsys.readouterr().err


def test_llava_bench_reviews_without_reference_answers(tmp_path: Path) -> None:
    """An imported review file has no reference answers to build the reviewer's prompt from: under the flag none is
    needed; without it the rows have no review and no ground truth."""
    review = "8 9\nAssistant 2 is as good."
    rows = [{"index": 1, "g_index": 1, "benchmark": "llavabench", "mode": "generate", "prompt_template": "mme",
             "question": "What is this?", "prediction": "A red car.", "model": "m", "error": None,
             "category": "conv", STORED_REPLIES: replies_json([review]), STORED_SCORES: scores_json([0.9])}]
    write_predictions(tmp_path / "p.parquet", rows)
    assert _extract(tmp_path, "--stored-verdicts", *UNREACHABLE) == 0
    out = read_table(tmp_path / "x.parquet").frame.row(0, named=True)
    assert (out["extracted"], out["score"], out["judge_raw"]) == ("8.0 9.0", 0.9, review)
    assert _extract(tmp_path, "--no-judge") == 0
    out = read_table(tmp_path / "x.parquet").frame.row(0, named=True)
    assert (out["extract_method"], out["score"], out["judge_raw"]) == ("unmatched", None, None)


# (prediction, answer, choices, category, VLMEvalKit's res, its log): MATH_V_auxeval's outputs
MATHVISION = [
    ("7", "7", "[]", "algebra", "7", "Prefetch succeed"),
    ("So it is one half.", "0.5", "[]", "algebra", "\\frac{1}{2}", "Succeed"),
    ("I think (C).", "C", "['1', '2', '3', '4', '5']", "arithmetic", "C", "Prefetch succeed"),
    ("Hmm.", "D", "['1', '2', '3', '4', '5']", "arithmetic", "The answer is (B)", "Succeed"),
    ("No idea.", "3", "[]", "algebra", "", FAILED),
]


def test_mathvision_judge_answers_are_read_and_compared_by_is_equal(tmp_path: Path) -> None:
    """VLMEvalKit's MathVision judged file: its ``res`` is compared as ``MATH_V_acc`` compares it (hits 1, 2, 3)."""
    frame = pl.DataFrame({
        "index": list(range(1, len(MATHVISION) + 1)), "question": ["Which?"] * len(MATHVISION),
        "prediction": [r[0] for r in MATHVISION], "answer": [r[1] for r in MATHVISION],
        "choices": [r[2] for r in MATHVISION], "category": [r[3] for r in MATHVISION],
        "res": [r[4] for r in MATHVISION], "log": [r[5] for r in MATHVISION],
    })
    source = tmp_path / "m_MathVision_MINI_gpt-4o-mini.tsv"
    frame.write_csv(source, separator="\t")
    assert _extract(tmp_path, "--stored-verdicts", *UNREACHABLE, source=source) == 0
    out = read_table(tmp_path / "x.parquet").frame.sort("index")
    assert out["benchmark"].unique().to_list() == ["mathvision"]
    assert out["extract_method"].to_list() == ["rule", "judge", "rule", "judge", "unmatched"]
    assert out["score"].to_list() == [1.0, 1.0, 1.0, 0.0, 0.0]
