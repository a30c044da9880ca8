"""mmbatch view and the HTML report in a real headless chromium: two models' MMBench runs (one judged through a
real judge server on 127.0.0.1) rendered, filtered and opened row by row, checked on the DOM the browser built."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from tests.conftest import EXAMPLES
from tests.support.browser import Elements, render, screenshot
from tests.support.openai_server import OpenAIServer, ServerScript, word_overlap_judge


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The example MMBench file prepared, answered by two echo 'models' and scored: ``judged`` says a sentence
    that the rules cannot read (the judge decides), ``reference`` answers the ground truth."""
    out = tmp_path_factory.mktemp("view")
    prepared = out / "mmbench.prepared.parquet"
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(EXAMPLES / "mmbench" / "mmbench_example.tsv"),
                 "--output", str(prepared)]) == 0
    for name, model in (("judged", "fixed:I would say the picture shows a cat"), ("reference", "answer")):
        assert main(["infer", "--input", str(prepared), "--output", str(out / f"{name}.predictions.parquet"),
                     "--backend", "echo", "--model", model]) == 0
    with OpenAIServer(ServerScript(reply=word_overlap_judge)) as server:
        assert main(["extract", "--input", str(out / "judged.predictions.parquet"), "--output",
                     str(out / "judged.extracted.parquet"), "--judge-base-url", server.base_url,
                     "--judge-model", "gpt-4o-mini"]) in (0, 3)
    assert main(["extract", "--input", str(out / "reference.predictions.parquet"), "--output",
                 str(out / "reference.extracted.parquet"), "--no-judge"]) == 0
    for name in ("judged", "reference"):
        assert main(["score", "--input", str(out / f"{name}.extracted.parquet"), "--output",
                     str(out / f"{name}.metrics.json"), "--bootstrap", "100"]) == 0
    assert main(["view", str(out / "reference.metrics.hits.parquet"), str(out / "judged.metrics.hits.parquet"),
                 "--images", str(prepared), "--output", str(out / "viewer")]) == 0
    assert main(["compare", str(out / "reference.metrics.hits.parquet"), str(out / "judged.metrics.hits.parquet"),
                 "--output", str(out / "compare.json"), "--bootstrap", "200"]) == 0
    assert main(["report", str(out / "reference.metrics.json"), str(out / "judged.metrics.json"), "--output",
                 str(out / "report.html"), "--compare", str(out / "compare.json"),
                 "--label", f"{out / 'judged.metrics.json'}=Judged model"]) == 0
    return {"out": out, "viewer": out / "viewer" / "index.html", "report": out / "report.html",
            "judged": out / "judged.metrics.hits.parquet"}


def rows_shown(page: Elements) -> int:
    return int(page.by_id["count"])


def test_viewer_lists_every_row_and_filters_change_the_count(runs: dict[str, Path], tmp_path: Path) -> None:
    total = pl.read_parquet(runs["judged"]).height
    url = runs["viewer"].as_uri()
    everything = render(url, tmp_path / "p")
    assert everything.console == []
    page = Elements(everything.dom)
    assert page.attributes["body"].get("data-ready") == "1" and "data-error" not in page.attributes["body"]
    assert rows_shown(page) == total and page.classes["row"] == min(total, 50)
    judged = pl.read_parquet(runs["judged"])
    wrong = judged.filter((pl.col("hit") == 0) & pl.col("extracted").is_not_null()).height
    unmatched = judged.filter(pl.col("extracted").is_null()).height
    assert wrong > 0 and unmatched > 0 and wrong + unmatched < total
    # Model 1 (the judged one): its wrong rows, its unmatched rows; the rows where the two models differ (the
    # reference is always right); a search that matches nothing.
    assert rows_shown(Elements(render(url + "#mi=1&v=wrong", tmp_path / "p").dom)) == wrong
    assert rows_shown(Elements(render(url + "#mi=1&v=unmatched", tmp_path / "p").dom)) == unmatched
    assert rows_shown(Elements(render(url + "#v=disagree", tmp_path / "p").dom)) == wrong + unmatched
    assert rows_shown(Elements(render(url + "#q=no-such-words-anywhere", tmp_path / "p").dom)) == 0


def test_a_row_page_shows_its_pictures_group_and_the_judge_reply(runs: dict[str, Path], tmp_path: Path) -> None:
    judged = pl.read_parquet(runs["judged"]).filter(pl.col("extract_method") == "judge")
    assert judged.height, "the fixture must have judged rows"
    row = judged.filter(pl.col("image").is_not_null() if "image" in judged.columns else pl.lit(True)).row(0, named=True)
    key = f"mmbench|{row['split'] or ''}|{row['index']}"
    rendered = render(runs["viewer"].as_uri() + f"#mi=1&em=judge&row={key}", tmp_path / "p")
    assert rendered.console == []
    page = Elements(rendered.dom)
    detail = page.by_id["detail"]
    assert f"Row {row['index']}" in detail and str(row["judge_raw"]).strip() in detail
    assert page.classes.get("judge-raw") == 1 and page.classes.get("judge-prompt") == 1
    assert "CircularEval group" in detail or row["index"] == row["g_index"]
    body = page.attributes["body"]
    assert int(body["data-images-loaded"]) >= 1 and body["data-images-broken"] == "0"
    assert all(img["src"].startswith("data:image/jpeg;base64,") for img in page.images)
    shot = screenshot(runs["viewer"].as_uri() + f"#mi=1&em=judge&row={key}", tmp_path / "row.png", tmp_path / "p")
    assert shot.stat().st_size > 30_000


def test_report_shows_provenance_labels_and_baseline_deltas(runs: dict[str, Path], tmp_path: Path) -> None:
    rendered = render(runs["report"].as_uri(), tmp_path / "p")
    assert rendered.console == []
    page = Elements(rendered.dom)
    text = re.sub(r"\s+", " ", rendered.dom)
    assert page.classes.get("provenance") == 1 and "prompt template" in text and "vlmevalkit" in text
    assert "Judged model" in text and "judged.metrics" not in text.split("Provenance")[1].split("<section")[0]
    assert page.classes.get("comparison") == page.classes["board"] >= 1 and "vs answer" in text and "baseline" in text
    assert "fixed:I would say" not in text.split("<section")[1]  # the label names the model in the comparison too
    assert re.search(r"Δ [^<]+ vs answer", text)
    shot = screenshot(runs["report"].as_uri(), tmp_path / "report.png", tmp_path / "p", width=1100, height=2200)
    assert shot.stat().st_size > 30_000


def test_viewer_of_the_real_llava_mmbench_dev_file(shared_data: Path, tmp_path: Path) -> None:
    """All 4,377 rows of LLaVA-1.5-13B's real MMBench-dev answers, listed and filtered in the browser."""
    extracted = tmp_path / "llava.extracted.parquet"
    assert main(["extract", "--input", str(shared_data / "llava15_13b/mmbench/"
                                           "mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx"),
                 "--output", str(extracted), "--benchmark", "mmbench", "--no-judge"]) == 0
    viewer = tmp_path / "llava.html"
    assert main(["view", str(extracted), "--output", str(viewer)]) == 0
    rendered = render(viewer.as_uri(), tmp_path / "p")
    assert rendered.console == []
    page = Elements(rendered.dom)
    assert rows_shown(page) == 4377 and page.classes["row"] == 50
    wrong = pl.read_parquet(extracted).filter(pl.col("extracted") != pl.col("answer")).height
    assert rows_shown(Elements(render(viewer.as_uri() + "#v=wrong", tmp_path / "p").dom)) == wrong
    assert rows_shown(Elements(render(viewer.as_uri() + "#v=right&q=python", tmp_path / "p").dom)) > 0
