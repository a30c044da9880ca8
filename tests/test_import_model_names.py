"""The model name of an imported file: the one the file records, else its name without the benchmark and file-kind
words, else the enclosing folder's; ``--model`` always wins. The real files of ../shared/data."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from mmbatch.interop.model_names import model_from_name, model_from_path


@pytest.mark.parametrize(("route", "source", "model"), [
    (["--format", "vlmevalkit"], "vlmevalkit_vila/vila_13b/vila_13b_CCBench.xlsx", "vila_13b"),
    (["--format", "vlmevalkit"], "vlmevalkit_vila/vila_8b/vila_8b_SEEDBench_IMG.xlsx", "vila_8b"),
    (["--format", "vlmevalkit"], "llava15_13b/mmbench/mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx",
     "llava-v1.5-13b"),
    (["--format", "mme-eval-tool"], "mme/llava-v1.5-7b_partial_Haoming2000/results_txt",
     "llava-v1.5-7b_partial_Haoming2000"),
    (["--format", "mme-eval-tool"], "llava15_13b/mme/mme_results_txt", "llava15_13b"),
    (["--format", "mme-eval-tool"], "mme/LaVIN", "LaVIN"),
    (["--format", "seed-results", "--benchmark", "seedbench"], "seed/seedbench1_GPT-4V_results.jsonl", "GPT-4V"),
])
def test_an_imported_file_is_named_after_its_model(shared_data: Path, tmp_path: Path, route: list[str],
                                                   source: str, model: str) -> None:
    out = tmp_path / "imported.parquet"
    assert main(["import", *route, "--input", str(shared_data / source), "--output", str(out)]) == 0
    assert set(pl.read_parquet(out, columns=["model"])["model"]) == {model}
    assert main(["import", *route, "--input", str(shared_data / source), "--output", str(out), "--model",
                 "my-model"]) == 0
    assert set(pl.read_parquet(out, columns=["model"])["model"]) == {"my-model"}


def test_extract_names_a_foreign_file_the_same_way(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "extracted.parquet"
    assert main(["extract", "--input", str(shared_data / "vlmevalkit_vila/vila_13b/vila_13b_CCBench.xlsx"),
                 "--output", str(out), "--benchmark", "ccbench", "--no-judge"]) == 0
    assert set(pl.read_parquet(out, columns=["model"])["model"]) == {"vila_13b"}


@pytest.mark.parametrize(("name", "model"), [
    ("seed_bench_llava-v1.5-13b_upload", "llava-v1.5-13b"), ("vila_8b_MMStar", "vila_8b"),
    ("GPT4o_MINI_MMBench_DEV_EN", "GPT4o_MINI"), ("Qwen2-VL-7B_POPE", "Qwen2-VL-7B"), ("results", ""),
    ("my_model_answers", "my_model"),
])
def test_name_rules(name: str, model: str) -> None:
    assert model_from_name(name) == model


def test_a_name_with_nothing_but_benchmark_words_falls_back_to_itself(tmp_path: Path) -> None:
    lonely = tmp_path / "mme" / "results" / "answers.jsonl"
    lonely.parent.mkdir(parents=True)
    assert model_from_path(lonely) == "answers"
