"""What a new user typed and what came back: contradictory or mistyped options are exit 2 with a message that says
what to do (issue 25 items 10, 11, 13, 17), run in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmbatch.benchmarks.registry import registered
from mmbatch.cli import main
from tests.conftest import EXAMPLES

MME = EXAMPLES / "mme"


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example MME folder run through every stage by the echo backend (``run`` into one folder)."""
    out = tmp_path_factory.mktemp("run")
    assert main(["run", "--benchmark", "mme", "--input", str(MME), "--backend", "echo", "--model", "answer",
                 "--no-judge", "--output-dir", str(out)]) == 0
    return out


def test_view_refuses_a_label_for_a_file_it_does_not_show(scored: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    hits = scored / "metrics.hits.parquet"
    assert main(["view", str(hits), "--output", str(tmp_path / "v.html"), "--label", "nothere.parquet=foo"]) == 2
    assert "--label names a file that is not shown: nothere.parquet" in capsys.readouterr().err
    assert not (tmp_path / "v.html").exists()
    assert main(["view", str(hits), "--output", str(tmp_path / "v.html"), "--label", f"{hits}=foo"]) == 0


@pytest.mark.parametrize("judge_flags", [["--judge-model", "gpt-4o"], ["--judge-base-url", "http://127.0.0.1:9/v1"],
                                         ["--judge-cache", "c.sqlite"]])
def test_no_judge_with_a_judge_setting_is_a_contradiction(scored: Path, tmp_path: Path, judge_flags: list[str],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x.parquet"
    assert main(["extract", "--input", str(scored / "predictions.parquet"), "--output", str(out), "--no-judge",
                 *judge_flags]) == 2
    error = capsys.readouterr().err
    assert f"--no-judge contradicts {judge_flags[0]}" in error and not out.exists()


def test_no_judge_with_a_judge_model_in_the_environment_is_a_contradiction_too(
        scored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MMBATCH_JUDGE_MODEL", "gpt-4o")
    assert main(["extract", "--input", str(scored / "predictions.parquet"), "--output", str(tmp_path / "x.parquet"),
                 "--no-judge"]) == 2
    assert "--no-judge contradicts --judge-model" in capsys.readouterr().err


def test_compare_given_a_metrics_table_points_at_the_hits_file(scored: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    hits = scored / "metrics.hits.parquet"
    assert main(["compare", str(scored / "metrics.json"), str(hits)]) == 2
    error = capsys.readouterr().err
    assert "cannot read '.json'" not in error
    assert "this is a metrics table" in error and str(hits) in error


def test_run_names_its_own_output_flag_when_it_refuses_earlier_progress(scored: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    # The same run folder with another model: infer's progress there was made with other settings.
    assert main(["run", "--benchmark", "mme", "--input", str(MME), "--backend", "echo", "--model", "fixed:Yes",
                 "--no-judge", "--output-dir", str(scored)]) == 2
    error = capsys.readouterr().err
    assert "use a new --output-dir, or --force" in error and "new --output," not in error


def test_a_mistyped_benchmark_gets_a_did_you_mean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prepare", "--benchmark", "seedbench-2", "--input", str(MME), "--output",
                 str(tmp_path / "p.parquet")]) == 2
    assert "did you mean 'seedbench2'?" in capsys.readouterr().err
    assert main(["prepare", "--benchmark", "mmbnech", "--input", str(MME), "--output",
                 str(tmp_path / "p.parquet")]) == 2
    assert "did you mean 'mmbench'?" in capsys.readouterr().err


def test_every_benchmark_version_is_major_dot_minor(scored: Path) -> None:
    assert all(len(b.version.split(".")) == 2 and all(p.isdigit() for p in b.version.split("."))
               for b in registered()), {b.name: b.version for b in registered()}
    metadata = json.loads((scored / "metrics.json.meta.json").read_text())
    assert metadata["prepare"]["benchmark_version"] == "1.0"
