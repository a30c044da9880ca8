"""What a report must not hide or invent: settings a metrics file does not record show as unknown (with a warning),
and a run scored on fewer rows than the others is marked partial with its coverage (the real MME files)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mmbatch.cli import main
from mmbatch.tableio import metadata_sidecar


@pytest.fixture(scope="module")
def mme_metrics(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """LaVIN (all 2,374 MME questions) and a third-party LLaVA run covering 2,350 of them, imported and scored."""
    folder = tmp_path_factory.mktemp("mme")
    files = {}
    for name, source in (("lavin", "mme/LaVIN"), ("partial", "mme/llava-v1.5-7b_partial_Haoming2000/results_txt")):
        imported, extracted = folder / f"{name}.parquet", folder / f"{name}.extracted.parquet"
        assert main(["import", "--format", "mme-eval-tool", "--input", str(shared_data / source), "--output",
                     str(imported)]) == 0
        assert main(["extract", "--input", str(imported), "--output", str(extracted), "--no-judge"]) == 0
        files[name] = folder / f"{name}.metrics.json"
        assert main(["score", "--input", str(extracted), "--output", str(files[name])]) == 0
    return files


def test_a_partial_run_is_marked_with_its_coverage(mme_metrics: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    assert main(["report", str(mme_metrics["lavin"]), str(mme_metrics["partial"]), "--output", str(out)]) == 0
    text = re.sub(r"\\(.)", r"\1", out.read_text())  # the text a reader sees: Markdown escapes removed
    summary = text.split("## mme", 1)[1].split("\n\n")[1].splitlines()
    assert summary[0].endswith("| unmatched | failed | rows |")
    rows = {line.split("|")[1].strip(): line for line in summary[2:]}
    assert rows["LaVIN"].endswith("| 2374 |")
    assert rows["llava-v1.5-7b_partial_Haoming2000"].endswith("| 2350 (of 2374, partial) |")
    assert "scored on 2,350 rows, 24 fewer than the largest run here (2,374): a partial run" in text


def test_full_runs_are_not_marked(mme_metrics: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(mme_metrics["lavin"]), "--output", str(out)]) == 0
    assert "partial" not in out.read_text()


def test_a_metrics_file_without_its_sidecar_shows_unknown_settings_with_a_warning(
        mme_metrics: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copied = tmp_path / "copied.metrics.json"
    copied.write_bytes(mme_metrics["lavin"].read_bytes())  # the sidecar was not copied with it
    assert not metadata_sidecar(copied).exists()
    out = tmp_path / "report.md"
    capsys.readouterr()
    assert main(["report", str(copied), str(mme_metrics["lavin"]), "--output", str(out)]) == 0
    error = capsys.readouterr().err
    assert f"warning: {copied}: no settings recorded (its sidecar copied.metrics.json.meta.json is missing)" in error
    judge_row = next(line for line in out.read_text().splitlines() if line.startswith("| judge |"))
    assert judge_row.split("|")[2].strip() == "unknown (not recorded)"  # it was "none (rules only)": invented
    assert judge_row.split("|")[3].strip() == "none (rules only)"  # the file that records it
