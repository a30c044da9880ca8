"""`mmbatch report`: leaderboards of several models, tables and one chart per benchmark (Markdown + SVG, HTML)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

from mmbatch.report.inputs import read_metrics_files
from mmbatch.report.leaderboard import build_boards
from mmbatch.tableio import write_table
from tests.conftest import run_cli
from tests.support.browser import render, screenshot

L2 = ("attribute_reasoning", "coarse_perception", "finegrained_perception (cross-instance)",
      "finegrained_perception (instance-level)", "logic_reasoning", "relation_reasoning")
L3_CATEGORIES = 20
SEED_DIMS = ("Scene Understanding", "Instance Identity", "Instance Attributes", "Instance Location",
             "Instances Counting", "Spatial Relation", "Instance Interaction", "Visual Reasoning",
             "Text Understanding", "Action Recognition", "Action Prediction", "Procedure Understanding")
MME_TASKS = ("existence", "count", "position", "color", "posters", "celebrity", "scene", "landmark", "artwork",
             "OCR", "commonsense_reasoning", "numerical_calculation", "text_translation", "code_reasoning")


def row(benchmark: str, model: str, level: str, group: str, metric: str, value: float, *, split: str | None = None,
        ci: tuple[float, float] | None = None) -> dict[str, object]:
    return {"benchmark": benchmark, "model": model, "split": split, "level": level, "group": group,
            "metric": metric, "value": value, "n": 100, "ci_low": ci[0] if ci else None,
            "ci_high": ci[1] if ci else None}


def model_metrics(model: str, skill: float) -> list[dict[str, object]]:
    """Plausible metrics of one model on MMBench (dev), MME and SEED-Bench; ``skill`` shifts every number."""
    rows = [row("mmbench", model, "overall", "Overall", "circular_acc", 60 + skill, split="dev", ci=(57 + skill,
                                                                                                   63 + skill)),
            row("mmbench", model, "overall", "Overall", "vanilla_acc", 70 + skill, split="dev"),
            row("mmbench", model, "overall", "Overall", "unmatched", 3, split="dev"),
            row("mmbench", model, "overall", "Overall", "failed", 0, split="dev")]
    rows += [row("mmbench", model, "l2-category", g, "circular_acc", 40 + 5 * i + skill, split="dev")
             for i, g in enumerate(L2)]
    rows += [row("mmbench", model, "category", f"cat{i}", "circular_acc", 50 + i + skill, split="dev")
             for i in range(L3_CATEGORIES)]
    rows += [row("mme", model, "subtask", t, "score", 100 + 5 * i + skill) for i, t in enumerate(MME_TASKS)]
    rows += [row("mme", model, "total", "perception", "score", 1400 + skill),
             row("mme", model, "total", "cognition", "score", 300 + skill)]
    rows += [row("seedbench", model, "dimension", d, "acc", 30 + 4 * i + skill) for i, d in enumerate(SEED_DIMS)]
    rows += [row("seedbench", model, "overall", "Overall", "acc", 60 + skill),
             row("seedbench", model, "data_type", "image", "acc", 62 + skill),
             row("seedbench", model, "data_type", "video", "acc", 50 + skill)]
    return rows


@pytest.fixture
def metrics_files(tmp_path: Path) -> list[Path]:
    """Three models in the three formats `score` writes."""
    json_file = tmp_path / "alpha.json"
    json_file.write_text(json.dumps(model_metrics("alpha", 0)))
    parquet_file = write_table(pl.DataFrame(model_metrics("beta", 5)), tmp_path / "beta.parquet")
    tsv_file = write_table(pl.DataFrame(model_metrics("gamma", -4)), tmp_path / "gamma.tsv")
    return [json_file, parquet_file, tsv_file]


class Structure(HTMLParser):
    """Collects sections, their svg charts, rects and table rows."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[dict[str, object]] = []
        self.table: str | None = None
        self.in_tbody = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "section":
            self.sections.append({"benchmark": attr["data-benchmark"], "svg": 0, "bar": 0, "cell": 0, "rows": {}})
        elif not self.sections:
            return
        current = self.sections[-1]
        if tag == "svg":
            current["svg"] = int(current["svg"]) + 1  # type: ignore[call-overload]
        elif tag == "rect" and attr.get("class") in ("bar", "cell"):
            current[str(attr["class"])] = int(current[str(attr["class"])]) + 1  # type: ignore[call-overload]
        elif tag == "table":
            self.table = attr.get("class")
            current["rows"][self.table] = 0  # type: ignore[index]
        elif tag == "tbody":
            self.in_tbody = True
        elif tag == "tr" and self.in_tbody:
            current["rows"][self.table] += 1  # type: ignore[index]

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self.in_tbody = False


def test_html_has_one_chart_per_benchmark_and_a_row_per_model(metrics_files: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = run_cli("report", *map(str, metrics_files), "--output", str(out))
    assert done.returncode == 0, done.stderr
    parser = Structure()
    parser.feed(out.read_text(encoding="utf-8"))
    by_benchmark = {s["benchmark"]: s for s in parser.sections}
    assert list(by_benchmark) == ["mmbench", "mme", "seedbench"]
    # MMBench: the L2 bars and the heatmap of its L3 categories; MME and SEED: one heatmap each.
    assert [section["svg"] for section in parser.sections] == [2, 1, 1]
    # A row per model; a table with many columns is transposed (a row per column, a column per model).
    assert by_benchmark["mmbench"]["rows"] == {"summary": 3, "abilities": 3, "detail transposed": L3_CATEGORIES}
    assert by_benchmark["mme"]["rows"] == {"summary": 3, "abilities transposed": len(MME_TASKS)}
    assert by_benchmark["seedbench"]["rows"] == {"summary": 3, "abilities transposed": len(SEED_DIMS)}
    assert by_benchmark["mmbench"]["bar"] == 3 * len(L2) and by_benchmark["mmbench"]["cell"] == 3 * L3_CATEGORIES
    assert by_benchmark["mme"]["cell"] == 3 * len(MME_TASKS)
    assert by_benchmark["seedbench"]["cell"] == 3 * len(SEED_DIMS)
    assert not list(tmp_path.glob("report_*.svg"))


def test_markdown_with_svg_files_beside_it(metrics_files: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "out" / "report.md"
    done = run_cli("report", *map(str, metrics_files), "--output", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    charts = sorted(p.name for p in out.parent.glob("*.svg"))
    assert charts == ["report_mmbench_dev.svg", "report_mmbench_dev_detail.svg", "report_mme.svg",
                      "report_seedbench.svg"]
    for name in charts:
        assert f"]({name})" in text
        assert (out.parent / name).read_text().startswith("<svg")
    summary = text.split("## mmbench (dev)")[1].split("###")[0]
    models = [line.split("|")[1].strip() for line in summary.splitlines() if line.startswith("| ") and
              not line.startswith("| model")]
    assert models == ["beta", "alpha", "gamma"]  # best first
    assert "| beta | 65.00 [62.00, 68.00] | 75.00 | 3 | 0 |" in summary


def test_two_runs_of_one_model_stand_side_by_side(tmp_path: Path) -> None:
    first, second = tmp_path / "run1.json", tmp_path / "run2.json"
    first.write_text(json.dumps(model_metrics("same", 0)))
    second.write_text(json.dumps(model_metrics("same", 2)))
    boards = build_boards(read_metrics_files([first, second])[0])
    assert [model for model, _ in boards[0].summary.rows] == ["same [run2]", "same [run1]"]


def test_few_headline_numbers_only_still_get_a_chart(tmp_path: Path) -> None:
    only = tmp_path / "seed.json"
    only.write_text(json.dumps([r for r in model_metrics("m", 0) if r["benchmark"] == "seedbench"
                                and r["level"] != "dimension"]))
    out = tmp_path / "r.html"
    assert run_cli("report", str(only), "--output", str(out)).returncode == 0
    parser = Structure()
    parser.feed(out.read_text())
    assert [(s["svg"], s["bar"]) for s in parser.sections] == [(1, 3)]


def test_bad_inputs_exit_2(metrics_files: list[Path], tmp_path: Path) -> None:
    done = run_cli("report", str(metrics_files[0]), "--output", str(tmp_path / "r.pdf"))
    assert done.returncode == 2 and ".md, .html, .csv or .tsv" in done.stderr
    not_metrics = write_table(pl.DataFrame({"index": [1], "prediction": ["A"]}), tmp_path / "pred.tsv")
    done = run_cli("report", str(not_metrics), "--output", str(tmp_path / "r.md"))
    assert done.returncode == 2 and "pred.tsv" in done.stderr and "not a metrics table" in done.stderr
    assert not (tmp_path / "r.md").exists()


def test_html_renders_in_headless_chromium(metrics_files: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert run_cli("report", *map(str, metrics_files), "--output", str(out)).returncode == 0
    rendered = render(out.as_uri(), tmp_path / "profile")
    assert rendered.console == []
    parser = Structure()
    parser.feed(rendered.dom)
    assert [s["svg"] for s in parser.sections] == [2, 1, 1]
    shot = screenshot(out.as_uri(), tmp_path / "shot.png", tmp_path / "profile", width=1200, height=2400)
    assert shot.stat().st_size > 20_000


def test_markdown_shows_a_model_name_as_text_never_as_html(tmp_path: Path) -> None:
    from mmbatch.cli import main

    name = "<img src=x onerror=alert(1)>"
    metrics = tmp_path / "m.json"
    metrics.write_text(json.dumps(model_metrics(name, 0)))
    assert main(["report", str(metrics), "--output", str(tmp_path / "r.md")]) == 0
    text = (tmp_path / "r.md").read_text()
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("suffix", [".json", ".parquet"])
def test_a_metric_that_is_not_a_finite_number_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          bad: float, suffix: str) -> None:
    # Campaign replay: NaN and inf values were ranked and drawn (an inf model at the top of the board).
    from mmbatch.cli import main

    rows = model_metrics("alpha", 0)
    rows[5]["ci_low" if suffix == ".parquet" else "value"] = bad
    source = tmp_path / f"alpha{suffix}"
    if suffix == ".json":
        source.write_text(json.dumps(rows))  # Python writes NaN and Infinity, as a hand-made file may hold them
    else:
        pl.DataFrame(rows).write_parquet(source)
    good = tmp_path / "beta.json"
    good.write_text(json.dumps(model_metrics("beta", 3)))
    out = tmp_path / "report.md"
    assert main(["report", str(source), str(good), "--output", str(out)]) == 2
    error = capsys.readouterr().err
    assert "is not a finite number" in error and "mmbench/alpha/l2-category" in error and not out.exists()
