"""Circular groups are judged each at its own pace (issue 21 item 5): a group's next copy is asked as soon as its
previous copy is judged, not after every other group's copy of the same rank; which copies are asked is unchanged."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from support.extract_rows import mcq_row, write_predictions
from support.openai_server import OpenAIServer, ServerScript

from mmbatch.extract.options import ExtractOptions
from mmbatch.extract.stage import run_extract
from mmbatch.tableio import read_table

SLOW_S = 1.5


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MMBATCH_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def judge(prompt: str, body: dict[str, Any]) -> str:
    """Group 1's first copy takes long; group 3's first copy is wrong (its group fails); the rest is right."""
    if "slow thing" in prompt:
        time.sleep(SLOW_S)
    return "B" if "wrong thing" in prompt else "A"


def test_a_slow_group_holds_back_no_other_group(tmp_path: Path) -> None:
    rows = [mcq_row(1, "the slow thing", answer="A"), mcq_row(1_000_001, "the slow thing, again", answer="A"),
            mcq_row(2, "the quick thing", answer="A"), mcq_row(1_000_002, "the quick thing, again", answer="A"),
            mcq_row(3, "the wrong thing", answer="A"), mcq_row(1_000_003, "the wrong thing, again", answer="A")]
    predictions = write_predictions(tmp_path / "pred.parquet", rows)
    with OpenAIServer(ServerScript(reply=judge)) as server:
        result = run_extract(ExtractOptions(input=predictions, output=tmp_path / "out.parquet",
                                            judge_base_url=server.base_url, concurrency=8))
        arrivals = {request.prompt.split("Answer: ")[-1].split("\n")[0]: request.at for request in server.chat_requests}
    assert result.exit_code == 0
    # The quick group's second copy went out while the slow group's first copy was still being answered.
    assert arrivals["the quick thing, again"] < arrivals["the slow thing"] + SLOW_S / 2
    assert arrivals["the slow thing, again"] >= arrivals["the slow thing"] + SLOW_S
    # Same copies asked as before: the wrong group's second copy never, and it is left unmatched with the note.
    assert "the wrong thing, again" not in arrivals and len(arrivals) == 5
    frame = read_table(tmp_path / "out.parquet").frame.sort("index")
    assert frame["extract_method"].to_list() == ["judge", "judge", "judge", "judge", "judge", "unmatched"]
    assert "circular group" in frame.filter(frame["index"] == 1_000_003)["extract_note"][0]
