"""The echo backend's ``answer`` mode is the reference `make demo` puts beside a model: the ground truth as the answer.
Where the truth is a list of accepted answers (TextVQA's ten human answers), it answers the most frequent of them,
not the list's text, so the reference scores 100 % on open-answer benchmarks too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmbatch.backends.echo import ground_truth_answer
from mmbatch.cli import main
from tests.conftest import EXAMPLES


@pytest.mark.parametrize(("cell", "said"), [
    ("B", "B"),
    (" Yes ", "Yes"),
    ("2", "2"),
    (None, ""),
    ("['stop', 'stop', 'stop sign']", "stop"),
    ("['two', '2', '2', 'two']", "two"),          # equals: the first one
    ("['', ' cafe ', 'cafe']", "cafe"),            # blanks are no answer; spaces around one are not part of it
    ("[1, 2]", "[1, 2]"),                          # not text: the cell as it is
    ("[]", "[]"),
    ("['a'] * 3", "['a'] * 3"),                    # only eval() could make it a list: the cell as it is
    ("red <AND> car", "red <AND> car"),
])
def test_answer_mode_says_the_ground_truth(cell: str | None, said: str) -> None:
    assert ground_truth_answer(cell) == said


def test_the_reference_scores_everything_on_the_textvqa_example(tmp_path: Path) -> None:
    prepared, predictions = tmp_path / "prepared.parquet", tmp_path / "predictions.parquet"
    extracted, metrics = tmp_path / "extracted.parquet", tmp_path / "metrics.json"
    assert main(["prepare", "--benchmark", "textvqa", "--input", str(EXAMPLES / "textvqa" / "textvqa_example.tsv"),
                 "--output", str(prepared)]) == 0
    assert main(["infer", "--input", str(prepared), "--output", str(predictions), "--backend", "echo",
                 "--model", "answer"]) == 0
    assert main(["extract", "--input", str(predictions), "--output", str(extracted), "--no-judge"]) == 0
    assert main(["score", "--input", str(extracted), "--output", str(metrics)]) == 0
    accuracy = next(row["value"] for row in json.loads(metrics.read_text()) if row["metric"] == "acc")
    assert accuracy == pytest.approx(100.0)
