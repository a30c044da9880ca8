"""TextVQA_VAL: VLMEvalKit's table prepared with its prompt, predictions scored by the VQA metric (worked out by hand
below), and the rows shown in ``view``, ``compare`` and ``report``."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.tableio import read_metadata, read_table
from mmbatch.view.rows import ViewOptions, gather_rows
from tests.support.vqa_tables import extract_and_score, write_table


def human(*answers: str) -> str:
    return repr(list(answers))


# (question, ten human answers, prediction): the VQA metric with c of 10 answers equal to the prediction is
# (c * min(1, (c-1)/3) + (10-c) * min(1, c/3)) / 10.
ROWS = [
    ("what does the sign say?", human(*["stop"] * 10), "Stop."),                       # c = 10: 1
    ("what brand is it?", human("dakota", *["dakota digital"] * 9), "Dakota"),         # c = 1: 0.3
    ("how many cars?", human("2", "2", *["3"] * 8), "two"),                             # c = 2: 0.6
    ("what is written?", human(*["open"] * 10), "None"),                                 # no answer: 0
]
EXPECTED_OVERALL = (1 + 0.3 + 0.6 + 0) / 4 * 100


def table(folder: Path, name: str, *, predictions: list[str | None] | None = None, answers: list[str] | None = None
          ) -> Path:
    return write_table(folder / name, {"index": [34602 + i for i in range(len(ROWS))],
                                       "question": [row[0] for row in ROWS],
                                       "answer": answers or [row[1] for row in ROWS]}, predictions=predictions)


def test_prepare_renders_vlmevalkits_prompt(tmp_path: Path) -> None:
    prepared = tmp_path / "prepared.parquet"
    assert main(["prepare", "--benchmark", "textvqa", "--input", str(table(tmp_path, "TextVQA_VAL.tsv")),
                 "--output", str(prepared)]) == 0
    frame = read_table(prepared).frame
    assert frame["prompt"][0] == "what does the sign say?\nAnswer the question using a single word or phrase."
    assert set(frame["prompt_template"]) == {"vlmevalkit-vqa"} and set(frame["benchmark"]) == {"textvqa"}
    assert frame["g_index"].to_list() == frame["index"].to_list()
    assert read_metadata(prepared)["prepare"]["benchmark"] == "textvqa"


def test_prepare_refuses_answers_that_are_not_lists_of_human_answers(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    answers = [row[1] for row in ROWS]
    answers[2] = "two"
    source = table(tmp_path, "bad.tsv", answers=answers)
    assert main(["prepare", "--benchmark", "textvqa", "--input", str(source), "--output",
                 str(tmp_path / "p.parquet")]) == 2
    err = capsys.readouterr().err
    assert "bad.tsv: row index=34604: column 'answer'" in err and "'two' is not a list of reference answers" in err
    assert not (tmp_path / "p.parquet").exists()


def test_extract_and_score_give_the_vqa_metric(tmp_path: Path) -> None:
    predictions = table(tmp_path, "model_TextVQA_VAL.tsv", predictions=[row[2] for row in ROWS])
    values, hits = extract_and_score(predictions, tmp_path, "--benchmark", "textvqa")
    assert values[("overall", "Overall", "acc")] == pytest.approx(EXPECTED_OVERALL)
    assert values[("overall", "Overall", "unmatched")] == 1
    assert hits["score"].to_list() == pytest.approx([1.0, 0.3, 0.6, 0.0])
    assert hits["hit"].to_list() == [None] * 4  # a graded kind: no 0/1 verdict
    assert hits["extract_note"][1] == "1 of 10 human answers match 'dakota'"
    metadata = read_metadata(tmp_path / "extracted.parquet")["extract"]
    assert metadata["answer_kinds"]["textvqa"]["kind"] == "vqa-accuracy"
    # The era is recorded even when it is the default: a later default cannot change what this file says.
    assert metadata["answer_kinds"]["textvqa"]["options"] == {"rules": "vlmevalkit"}


def test_view_compare_and_report(tmp_path: Path) -> None:
    runs = {}
    for name, answers in (("a", [row[2] for row in ROWS]), ("b", ["stop", "dakota digital", "3", "open"])):
        folder = tmp_path / name
        folder.mkdir()
        source = table(folder, f"{name}_TextVQA_VAL.tsv", predictions=answers)
        extract_and_score(source, folder, "--benchmark", "textvqa")
        runs[name] = folder
    # b: 1, 1, 1 (c = 8), 1: 100 against a's 47.5.
    hits_a, hits_b = (runs[name] / "metrics.hits.parquet" for name in "ab")
    compared = tmp_path / "compare.json"
    assert main(["compare", str(hits_a), str(hits_b), "--output", str(compared), "--bootstrap", "200"]) == 0
    overall = next(row for row in json.loads(compared.read_text())["comparisons"] if row["metric"] == "acc")
    assert overall["diff"] == pytest.approx(100 - EXPECTED_OVERALL)
    # graded scores have no right-or-wrong pairs: the sign test, never McNemar's. b scores higher on 3 rows, a on
    # none (one row ties): 2 * P(Binomial(3, 1/2) <= 0) = 2 / 8
    assert (overall["test"], overall["a_only"], overall["b_only"]) == ("sign-exact", 0, 3)
    assert overall["p_value"] == pytest.approx(0.25)
    data = gather_rows([hits_a, hits_b], ViewOptions())
    record = next(row for row in data.rows if row["i"] == 34603)
    assert record["a"] == ROWS[1][1]  # the references
    shown = record["m"][0]
    assert (shown["pred"], shown["sc"], shown["em"]) == ("Dakota", pytest.approx(0.3), "text")
    assert shown["note"] == "1 of 10 human answers match 'dakota'"
    report = tmp_path / "report.md"
    assert main(["report", str(runs["a"] / "metrics.json"), str(runs["b"] / "metrics.json"), "--output",
                 str(report)]) == 0
    text = report.read_text()
    assert "VQA accuracy" in text and "100.00" in text and "47.50" in text


def test_a_vlmevalkit_file_is_recognised_by_its_name(tmp_path: Path) -> None:
    output = tmp_path / "imported.parquet"
    source = table(tmp_path, "llava_TextVQA_VAL.tsv", predictions=[row[2] for row in ROWS])
    assert main(["import", "--format", "vlmevalkit", "--input", str(source), "--output", str(output)]) == 0
    frame = read_table(output).frame
    assert set(frame["benchmark"]) == {"textvqa"} and frame["g_index"].to_list() == frame["index"].to_list()
    assert pl.Series(frame["answer"]).to_list() == [row[1] for row in ROWS]
