"""Rows the judge skipped (their circular group had already failed) have no verdict: row-level accuracies that
would count them as wrong are left out, the skipped rows are counted, and the report says why (docs/scoring.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.extract_rows import judge_rows, scripted_judge, write_predictions
from support.openai_server import OpenAIServer, ServerScript

from mmbatch.cli import main
from mmbatch.score.metrics_table import read_metrics


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MMBATCH_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def scored(tmp_path: Path, name: str, *flags: str) -> dict[tuple[str, str, str], tuple[float, int]]:
    """Extract the judge rows with the judge (and ``flags``), score them; {(level, group, metric): (value, n)}."""
    predictions = write_predictions(tmp_path / "pred.parquet", judge_rows())
    extracted, metrics = tmp_path / f"{name}.extracted.parquet", tmp_path / f"{name}.metrics.json"
    with OpenAIServer(ServerScript(reply=scripted_judge)) as server:
        assert main(["extract", "--input", str(predictions), "--output", str(extracted), "--judge-base-url",
                     server.base_url, "--retry-backoff", "0.01", *flags]) == 0
    assert main(["score", "--input", str(extracted), "--output", str(metrics)]) == 0
    return {(r["level"], r["group"], r["metric"]): (r["value"], r["n"]) for r in json.loads(metrics.read_text())}


def test_vanilla_accuracy_is_not_computed_over_rows_the_judge_skipped(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    judged = scored(tmp_path, "all", "--no-skip-failed-groups")
    skipping = scored(tmp_path, "skip")
    warning = capsys.readouterr().err
    # Every row judged: 5 of 8 rows right (1, 1000001, 1000002, 1000003 and 4).
    assert judged[("overall", "Overall", "vanilla_acc")] == (62.5, 8)
    assert ("overall", "Overall", "not_judged") not in judged
    # Skipping leaves two rows without a verdict (1000002 and 1000003): counting them wrong gave 37.5 % (3 of 8).
    assert skipping[("overall", "Overall", "not_judged")] == (2.0, 8)
    assert ("overall", "Overall", "vanilla_acc") not in skipping
    assert ("category", "vehicles", "vanilla_acc") not in skipping
    assert skipping[("overall", "Overall", "circ0_acc")] == judged[("overall", "Overall", "circ0_acc")]
    assert skipping[("overall", "Overall", "circular_acc")] == judged[("overall", "Overall", "circular_acc")]
    assert "2 rows were not sent to the judge" in warning and "--no-skip-failed-groups" in warning


def test_the_report_says_why_vanilla_accuracy_is_missing(tmp_path: Path) -> None:
    scored(tmp_path, "skip")
    assert read_metrics(tmp_path / "skip.metrics.json").frame.height > 0
    assert main(["report", str(tmp_path / "skip.metrics.json"), "--output", str(tmp_path / "r.md")]) == 0
    text = (tmp_path / "r.md").read_text()
    assert "not sent to the judge" in text and "--no-skip-failed-groups" in text
