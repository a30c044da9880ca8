"""The progress bar on a terminal: every number printed whole, at 80 columns as on a wide terminal."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

import mmbatch.progress as progress_module
from mmbatch.progress import bar_layout, progress

DESCRIPTIONS = ("infer llava-hf/llava-1.5-7b-hf", "infer /data/models/Qwen2.5-VL-72B-Instruct-AWQ/",
                "checking SEED-Bench-2 media", "judge")
ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TIME_LEFT = re.compile(r"ETA (-:--:--|\d+:\d\d:\d\d)$")


def last_refresh(width: int, description: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The bar's last line on a terminal ``width`` columns wide, after 12,345 of 19,242 rows."""
    terminal = Console(file=io.StringIO(), width=width, force_terminal=True, color_system=None)
    monkeypatch.setattr(progress_module, "error_console", terminal)
    with progress(description, total=19_242) as bar:
        bar.advance(12_345, tokens=987_654)
    text = ESCAPE.sub("", terminal.file.getvalue())  # type: ignore[attr-defined]
    return [line for line in re.split(r"[\r\n]", text) if line.strip()][-1].rstrip()


@pytest.mark.parametrize("width", [80, 100, 120, 160, 240])
@pytest.mark.parametrize("description", DESCRIPTIONS)
def test_counts_rate_and_time_left_are_whole_at_every_width(width: int, description: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    line = last_refresh(width, description, monkeypatch)
    assert len(line) <= width
    assert "12345/19242" in line, line
    numbers = line.split("12345/19242", 1)[1]
    assert "…" not in numbers, line  # the issue: "2…", "0:…", "ETA 0:…"
    assert re.search(r"\d rows/s", numbers) and TIME_LEFT.search(numbers), line


def test_a_model_path_is_shortened_to_its_name_on_a_narrow_terminal() -> None:
    assert bar_layout("infer /data/models/llava-1.5-7b-hf/", 80)[0] == "infer llava-1.5-7b-hf"
    assert bar_layout("infer /data/models/llava-1.5-7b-hf/", 200)[0] == "infer /data/models/llava-1.5-7b-hf/"
    assert len(bar_layout("clip " + "x" * 100, 80)[0]) == 80 // 3
