"""One bundled example per answer kind, for the tests that run every shipped recipe on every kind it offers.

Each case names the benchmark, its example input (relative to the repository root), the media folder the benchmark
reads files from (SEED-Bench), whether a judge grades it, the echo backend's mode and the metrics that mode must give:
a recipe that drops a flag (``--media-root``, the judge's base URL) fails the run or changes a number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer, ServerScript, word_overlap_judge

JUDGE_MODEL = "gpt-4o-mini"
"""A model the local judge server lists (``/v1/models``)."""


@dataclass(frozen=True)
class RecipeCase:
    """One benchmark kind run through a recipe on its bundled example."""

    kind: str
    """The answer kind the case stands for (the test id)."""
    benchmark: str
    """The benchmark's registry name."""
    input: str
    """The example input, relative to the repository root."""
    model: str
    """The echo backend's mode."""
    expected: dict[tuple[str, str, str], float]
    """``(level, group, metric) -> value`` the run must give."""
    media_root: str | None = None
    """The folder the benchmark's media files lie in, relative to the repository root (SEED-Bench)."""
    judged: bool = False
    """Whether a judge grades the answers (the case needs the local judge server)."""


CASES = [
    RecipeCase("mcq", "mmbench", "examples/mmbench/mmbench_example.tsv", "answer",
               {("overall", "Overall", "circular_acc"): 100.0}),
    RecipeCase("yes-no", "mme", "examples/mme", "answer", {("total", "perception", "score"): 800.0}),
    RecipeCase("seed-media", "seedbench", "examples/seed/seed_example.json", "answer",
               {("overall", "Overall", "acc"): 100.0}, media_root="examples/seed/media"),
    # The demo's stand-in: 'stop' is one human answer of some questions (VQA accuracy 10.0, examples/textvqa_demo.sh).
    RecipeCase("vqa", "textvqa", "examples/textvqa/textvqa_example.tsv", "fixed:stop",
               {("overall", "Overall", "acc"): 10.0}),
    RecipeCase("judge-graded", "mmvet", "examples/mmvet/mmvet_example.tsv", "answer",
               {("overall", "Overall", "acc"): 100.0}, judged=True),
]
CASE_IDS = [case.kind for case in CASES]


def case(kind: str) -> RecipeCase:
    """The case of answer kind ``kind``."""
    (found,) = [item for item in CASES if item.kind == kind]
    return found


def metric_values(path: Path) -> dict[tuple[str, str, str], float]:
    """A metrics file as ``(level, group, metric) -> value``."""
    return {(row["level"], row["group"], row["metric"]): row["value"] for row in json.loads(path.read_text())}


def assert_expected_metrics(recipe_case: RecipeCase, metrics_file: Path) -> None:
    """The run's metrics hold the case's expected values."""
    metrics = metric_values(metrics_file)
    for key, value in recipe_case.expected.items():
        assert metrics.get(key) == value, f"{recipe_case.benchmark}: {key} is {metrics.get(key)}, not {value}"


@pytest.fixture(scope="module")
def judge_server():  # type: ignore[no-untyped-def]
    """A local OpenAI-compatible judge on 127.0.0.1 (the word-overlap judge grades MM-Vet answers)."""
    with OpenAIServer(ServerScript(reply=word_overlap_judge)) as server:
        yield server
