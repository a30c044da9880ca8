"""`import --format llava-jsonl` on LLaVA-1.5-13B's real MMBench and MME answer files."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mmbatch.errors import BadInputError
from mmbatch.interop.llava_jsonl import import_rows
from mmbatch.interop.mme_eval_tool import export_rows
from mmbatch.interop.rows import ImportOptions
from tests.conftest import run_cli


@pytest.fixture(scope="module")
def llava(shared_data: Path) -> Path:
    return shared_data / "llava15_13b"


def test_mmbench_answers_joined_with_the_table(llava: Path) -> None:
    mmbench = llava / "mmbench"
    rows = import_rows(ImportOptions(
        input=mmbench / "mmbench_dev_20230712_llava-v1.5-13b_answers.jsonl",
        questions=(mmbench / "mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx",))).frame
    upload = pl.read_excel(mmbench / "mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx", infer_schema_length=0)
    # LLaVA's convert script copied each answer's text into the upload's prediction column.
    assert rows["prediction"].to_list() == upload["prediction"].to_list()
    assert rows["index"].to_list() == [int(i) for i in upload["index"]]
    assert set(rows["model"]) == {"llava-v1.5-13b"} and set(rows["benchmark"]) == {"mmbench"}
    assert rows["prompt"][0].startswith("The passage below describes an experiment.")
    assert rows["g_index"].n_unique() == 1176


def test_mme_answers_give_the_official_tool_files(llava: Path, shared_data: Path, tmp_path: Path) -> None:
    rows = import_rows(ImportOptions(
        input=llava / "mme" / "llava-v1.5-13b_answers.jsonl",
        questions=(shared_data / "mme" / "questions_template", llava / "mme" / "llava_mme_questions.jsonl"))).frame
    assert rows.height == 2374 and rows["answer"].is_in(["Yes", "No"]).all()
    assert rows.group_by("g_index").len()["len"].unique().to_list() == [2]
    # 7 colour questions keep their double space, found by LLaVA's own fallback.
    assert rows.filter(pl.col("question").str.contains("  Please answer yes or no.")).height == 7
    export_rows(rows, tmp_path / "txt")
    reference = llava / "mme" / "mme_results_txt"
    for path in reference.iterdir():
        assert (tmp_path / "txt" / path.name).read_bytes() == path.read_bytes(), path.name


def test_mme_without_ground_truth_says_so(llava: Path, tmp_path: Path) -> None:
    out = tmp_path / "mme.tsv"
    done = run_cli("import", "--format", "llava-jsonl", "--input", str(llava / "mme" / "llava-v1.5-13b_answers.jsonl"),
                   "--questions", str(llava / "mme" / "llava_mme_questions.jsonl"), "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert "no ground truth" in done.stderr
    rows = pl.read_csv(out, separator="\t", infer_schema=False)
    assert rows["answer"].is_null().all() and rows["question"][0].endswith("? Please answer yes or no.")


def test_bad_answers_are_named(llava: Path, tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"question_id": 999999, "prompt": "p", "text": "A"}\n')
    table = llava / "mmbench" / "mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx"
    with pytest.raises(BadInputError, match="not in the question table"):
        import_rows(ImportOptions(input=answers, questions=(table,)))
    answers.write_text('{"question_id": 241, "prompt": "p"}\n')
    with pytest.raises(BadInputError, match="line 1 has no 'text'"):
        import_rows(ImportOptions(input=answers, questions=(table,)))
    answers.write_text('{"question_id": "count/1.jpg", "prompt": "Is it? Answer the question using a single word '
                       'or phrase.", "text": "Yes"}\n')
    with pytest.raises(BadInputError, match="not in the MME question folder"):
        import_rows(ImportOptions(input=answers, questions=(llava.parent / "mme" / "questions_template",)))
