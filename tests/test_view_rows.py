"""The viewer in headless chromium, row by row: a SEED-Bench-2 level-3 row shows the picture each model drew, and
option texts keep their line breaks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mmbatch.cli import main
from tests.conftest import EXAMPLES
from tests.support.browser import Elements, render
from tests.support.extract_rows import mcq_row, write_predictions
from tests.support.tiny_clip import tiny_clip


@pytest.fixture(scope="module")
def level3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The level-3 example answered by the echo backend (the right option's picture), extracted by a tiny CLIP into
    ANOTHER folder than the predictions, then scored there."""
    root = tmp_path_factory.mktemp("l3")
    prepared, predictions = root / "prepared.parquet", root / "infer" / "echo.predictions.parquet"
    source = EXAMPLES / "seed" / "seed2_level3_example.json"
    assert main(["prepare", "--benchmark", "seedbench2", "--input", str(source), "--media-root",
                 str(EXAMPLES / "seed" / "media"), "--output", str(prepared)]) == 0
    assert main(["infer", "--input", str(prepared), "--backend", "echo", "--model", "answer", "--media-root",
                 str(EXAMPLES), "--output", str(predictions)]) == 0
    extracted = root / "scores" / "echo.extracted.parquet"
    assert main(["extract", "--input", str(predictions), "--no-judge", "--clip-model", str(tiny_clip()),
                 "--media-root", str(EXAMPLES), "--output", str(extracted)]) == 0
    assert main(["score", "--input", str(extracted), "--output", str(root / "scores" / "echo.metrics.json")]) == 0
    return root


@pytest.mark.parametrize("viewed", ["infer/echo.predictions.parquet", "scores/echo.metrics.hits.parquet"])
def test_a_level3_row_shows_the_generated_picture(level3: Path, tmp_path: Path, viewed: str) -> None:
    page = tmp_path / "view.html"
    assert main(["view", str(level3 / viewed), "--output", str(page), "--media-root", str(EXAMPLES)]) == 0
    rendered = render(page.as_uri() + "#row=seedbench2||0", tmp_path / "profile")
    assert rendered.console == []
    dom = Elements(rendered.dom)
    assert dom.attributes["body"].get("data-error") is None
    generated = re.search(r'<div class="pictures generated"><img alt="picture" src="data:image/[a-z]+;base64,',
                          rendered.dom)
    assert generated is not None, "the picture the model drew is not on the row's page"
    assert dom.attributes["body"].get("data-images-broken") == "0"


def test_option_texts_keep_their_line_breaks(tmp_path: Path) -> None:
    options = {"A": "CROWN EM\n3-seed\n@Utah_Softball", "B": "one line", "C": "x", "D": "y"}
    predictions = write_predictions(tmp_path / "pred.parquet", [mcq_row(7, "A", answer="A", options=options)])
    extracted = tmp_path / "extracted.parquet"
    assert main(["extract", "--input", str(predictions), "--output", str(extracted), "--no-judge"]) == 0
    page = tmp_path / "view.html"
    assert main(["view", str(extracted), "--output", str(page)]) == 0
    dom = render(page.as_uri() + "#row=mmbench|dev|7", tmp_path / "profile").dom
    item = re.search(r'<li class="right">A\. (.*?)</li>', dom, re.DOTALL)
    assert item is not None and item.group(1) == "CROWN EM<br>3-seed<br>@Utah_Softball ✓"
