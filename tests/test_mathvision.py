"""MathVision end to end: VLMEvalKit's judge prompt byte for byte, prefetch, a real judge server on 127.0.0.1, the
per-subject table in VLMEvalKit's order, a refused comparison failing its row, the 30 s deadline, and exit 2 with
the install command without latex2sympy2_extended. The rule itself is proved against VLMEvalKit's own verdicts in
tests/test_mathvision_differential.py."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from pathlib import Path

import pytest
from support.extract_rows import judged_benchmark_row, write_predictions
from support.openai_server import OpenAIServer, ServerScript

from mmbatch.benchmarks.mathvision import equality_worker
from mmbatch.benchmarks.mathvision.equality import EQUAL, TIMEOUT
from mmbatch.benchmarks.mathvision.equality_worker import EqualityWorker
from mmbatch.benchmarks.mathvision.prompt import mathvision_prompt
from mmbatch.cli import main
from mmbatch.errors import BadInputError
from mmbatch.extract.options import ExtractOptions
from mmbatch.extract.stage import run_extract
from mmbatch.tableio import read_table

# SHA-256 of VLMEvalKit's build_mathv_gpt4_prompt (e8e78f05) for question "QQQ" and prediction "PPP".
VLMEVALKIT_PROMPT_SHA256 = "514eb045b2a71f5c1c1a9198372084e145739b8cc15c391041f666d2093fe0ca"
FIVE = "['1', '2', '3', '4', '5']"


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MMBATCH_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_judge_prompt_is_vlmevalkits_byte_for_byte() -> None:
    assert hashlib.sha256(mathvision_prompt("QQQ", "PPP").encode()).hexdigest() == VLMEVALKIT_PROMPT_SHA256


def _row(index: int, prediction: str, answer: str, subject: str, choices: str = "[]") -> dict[str, object]:
    return judged_benchmark_row("mathvision", index, prediction, question=f"Q{index}", answer=answer,
                                choices=choices, category=subject)


ROWS = [
    _row(1, "So the ratio is one half.", "0.5", "algebra"),          # judge: \frac{1}{2}; latex2sympy: 1/2 = 0.5
    _row(2, "I pick (C)", "C", "arithmetic", FIVE),                  # prefetched letter C, right
    _row(3, "Hmm.", "D", "algebra", FIVE),                           # judge: (B), wrong
    _row(4, "7", "7", "combinatorics"),                              # prefetched: equal texts
    _row(5, "It is x.", "5", "algebra"),                             # judge: A; eval('a') is the truth's value: right
    _row(6, "No idea.", "3", "arithmetic"),                          # judge: empty reply, compared as 'nan': wrong
]
REPLIES = {"So the ratio is one half.": "\\frac{1}{2}", "Hmm.": "The answer is (B)", "It is x.": "A", "No idea.": ""}


def _judge(prompt: str, body: dict) -> str:
    return REPLIES[prompt.split("Model respone: ", 1)[1].removesuffix("Extracted answer:")]


def test_prefetch_judge_and_the_subject_table(tmp_path: Path) -> None:
    inp = write_predictions(tmp_path / "pred.parquet", ROWS)
    out, metrics = tmp_path / "out.parquet", tmp_path / "m.json"
    with OpenAIServer(ServerScript(reply=_judge)) as server:
        run_extract(ExtractOptions(input=inp, output=out, judge_base_url=server.base_url, retry_backoff_s=0.01,
                                   request_timeout_s=5.0))
        asked = server.chat_requests
    assert sorted(r.prompt for r in asked) == sorted(mathvision_prompt(f"Q{i}", text) for i, text in
                                                     ((1, ROWS[0]["prediction"]), (3, "Hmm."), (5, "It is x."),
                                                      (6, "No idea.")))
    assert {(r.body["max_tokens"], r.body["temperature"]) for r in asked} == {(128, 0)}  # every reply kept
    table = read_table(out)
    frame = table.frame.sort("index")
    recorded = table.metadata["extract"]["answer_kinds"]["mathvision"]["libraries"]  # they can change a verdict
    assert recorded == {name: importlib.metadata.version(name) for name in ("latex2sympy2_extended",
                                                                            "antlr4-python3-runtime", "sympy")}
    assert frame["extract_method"].to_list() == ["judge", "rule", "judge", "rule", "judge", "judge"]
    assert frame["extracted"].to_list() == ["\\frac{1}{2}", "C", "B", "7", "A", "nan"]
    assert frame["score"].to_list() == [1.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    assert main(["score", "--input", str(out), "--output", str(metrics)]) == 0
    table = [(r["group"], r["metric"], r["value"], r["n"]) for r in json.loads(metrics.read_text())
             if r["metric"] in ("acc", "prefetch")]
    # MATH_V_acc: Subject sorted as text (Overall first), tot 6, hit 4, prefetch 2
    assert table == [("Overall", "acc", pytest.approx(400 / 6), 6), ("Overall", "prefetch", 2.0, 6),
                     ("algebra", "acc", pytest.approx(200 / 3), 3), ("algebra", "prefetch", 0.0, 3),
                     ("arithmetic", "acc", 50.0, 2), ("arithmetic", "prefetch", 1.0, 2),
                     ("combinatorics", "acc", 100.0, 1), ("combinatorics", "prefetch", 1.0, 1)]


def test_a_comparison_the_safe_evaluator_refuses_fails_the_row(tmp_path: Path) -> None:
    inp = write_predictions(tmp_path / "pred.parquet", [_row(1, "print(1)", "14", "algebra"),
                                                        _row(2, "14", "14", "algebra")])
    run_extract(ExtractOptions(input=inp, output=tmp_path / "out.parquet", use_judge=False))
    frame = read_table(tmp_path / "out.parquet").frame.sort("index")
    assert frame["extract_method"].to_list() == ["error", "rule"]
    assert "a call of print()" in frame["extract_note"][0] and frame["score"].to_list() == [0.0, 1.0]


def test_past_the_deadline_is_not_equal_and_the_worker_starts_again() -> None:
    worker = EqualityWorker(deadline_s=2.0)
    try:
        # latex2sympy evaluates 9^(9^9): over a billion bits, minutes of work; VLMEvalKit's timeout: not equal
        assert worker.compare("1", "9^{9^{9}}").outcome == TIMEOUT
        assert worker.compare("0.5", "\\frac{1}{2}").outcome == EQUAL
    finally:
        worker.close()


def test_without_latex2sympy_the_command_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(equality_worker.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(BadInputError, match=r"pip install 'mmbatch\[mathvision\]'"):
        EqualityWorker().compare("1", "2")
