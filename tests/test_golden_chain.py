"""Golden end-to-end chains through the real CLI: import -> extract (rules only) -> score, on the real files.

Each chain must give the numbers the official tools publish (../shared/data/README.md).
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mmbatch.report.provenance import FIELDS
from tests.conftest import run_cli

LAVIN_SUBTASKS = {
    "existence": 185.00, "count": 88.33, "position": 63.33, "color": 75.00, "posters": 79.59, "celebrity": 47.35,
    "scene": 136.75, "landmark": 93.50, "artwork": 87.25, "OCR": 107.50, "commonsense_reasoning": 87.14,
    "numerical_calculation": 65.00, "text_translation": 47.50, "code_reasoning": 50.00,
}


Values = dict[tuple[str, str, str], float]


def chain(tmp_path: Path, import_args: list[str], *extract_args: str) -> Values:
    """Run import, extract --no-judge and score in subprocesses; return {(level, group, metric): value}.

    The metrics table is left at ``tmp_path / "metrics.json"``.
    """
    predictions, extracted, metrics = (tmp_path / n for n in ("pred.parquet", "ext.parquet", "metrics.json"))
    for args in (
        ["import", *import_args, "--output", str(predictions)],
        ["extract", "--input", str(predictions), "--output", str(extracted), "--no-judge", *extract_args],
        ["score", "--input", str(extracted), "--output", str(metrics)],
    ):
        done = run_cli(*args)
        assert done.returncode == 0, f"{args[0]} failed: {done.stderr}"
    rows = json.loads(metrics.read_text(encoding="utf-8"))
    return {(r["level"], r["group"], r["metric"]): r["value"] for r in rows}


@pytest.fixture(scope="module")
def lavin_run(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Values, Path]:
    folder = tmp_path_factory.mktemp("lavin")
    values = chain(folder, ["--format", "mme-eval-tool", "--input", str(shared_data / "mme" / "LaVIN")],
                   "--yes-no-rule", "official")
    return values, folder / "metrics.json"


@pytest.fixture(scope="module")
def llava_mme_run(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Values, Path]:
    folder = tmp_path_factory.mktemp("llava")
    values = chain(folder, ["--format", "mme-eval-tool", "--model", "llava-v1.5-13b", "--input",
                            str(shared_data / "llava15_13b" / "mme" / "mme_results_txt")])
    return values, folder / "metrics.json"


def test_lavin_mme_official_scores(lavin_run: tuple[Values, Path]) -> None:
    values = lavin_run[0]
    assert round(values[("total", "perception", "score")], 4) == 963.6114
    assert round(values[("total", "cognition", "score")], 4) == 249.6429
    for subtask, score in LAVIN_SUBTASKS.items():
        assert round(values[("subtask", subtask, "score")], 2) == score, subtask


def test_llava15_13b_mme_official_scores(llava_mme_run: tuple[Values, Path]) -> None:
    values = llava_mme_run[0]
    assert round(values[("total", "perception", "score")], 4) == 1531.3187
    assert round(values[("total", "cognition", "score")], 4) == 295.3571


def test_gpt4v_seedbench1_all_lines(shared_data: Path, tmp_path: Path) -> None:
    results = shared_data / "seed" / "seedbench1_GPT-4V_results.jsonl"
    values = chain(tmp_path, ["--format", "seed-results", "--input", str(results)])
    assert round(values[("overall", "Overall", "acc")], 2) == 67.28
    assert round(values[("data_type", "image", "acc")], 2) == 69.07
    assert round(values[("data_type", "video", "acc")], 2) == 60.50


def test_llava15_13b_mmbench_circular(shared_data: Path, tmp_path: Path) -> None:
    upload = shared_data / "llava15_13b" / "mmbench" / "mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx"
    values = chain(tmp_path, ["--format", "vlmevalkit", "--input", str(upload)])
    assert round(values[("overall", "Overall", "circular_acc")], 2) == 67.69


class _Counter(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.svgs = 0
        self.heat_cells = 0
        self.row_headers: list[str] = []
        self._in_row_header = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.svgs += tag == "svg"
        self.heat_cells += tag == "rect" and ("class", "cell") in attrs
        self._in_row_header = tag == "th" and ("scope", "row") in attrs

    def handle_data(self, data: str) -> None:
        if self._in_row_header:
            self.row_headers.append(data)
            self._in_row_header = False


def test_report_compares_the_real_runs(lavin_run: tuple[Values, Path], llava_mme_run: tuple[Values, Path],
                                       tmp_path: Path) -> None:
    out = tmp_path / "mme.html"
    done = run_cli("report", str(lavin_run[1]), str(llava_mme_run[1]), "--output", str(out))
    assert done.returncode == 0, done.stderr
    page = _Counter()
    page.feed(out.read_text(encoding="utf-8"))
    assert page.svgs == 1 and page.heat_cells == 2 * 14
    # The summary table comes first (a row per model), then the provenance table (a row per field), then the board
    # ranked by perception score.
    assert page.row_headers[:2] == ["llava-v1.5-13b", "LaVIN"]
    assert page.row_headers[2: 2 + len(FIELDS)] == list(FIELDS)
    assert page.row_headers[2 + len(FIELDS): 4 + len(FIELDS)] == ["llava-v1.5-13b", "LaVIN"]
    assert "1531.32" in out.read_text(encoding="utf-8") and "963.61" in out.read_text(encoding="utf-8")
