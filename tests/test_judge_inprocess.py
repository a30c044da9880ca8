"""The judge inside ``run_extract`` (no subprocess, so no repeated start-up), against a real server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.extract_rows import OPTIONS, judge_rows, mcq_row, mme_row, scripted_judge, write_predictions
from support.openai_server import GARBAGE, OpenAIServer, ServerScript, hang, status

from mmbatch.errors import EXIT_OK, EXIT_ROWS_FAILED
from mmbatch.extract.judge import JudgeStats
from mmbatch.extract.options import ExtractOptions
from mmbatch.extract.stage import run_extract
from mmbatch.extract.summary import run_summary, summary_lines
from mmbatch.tableio import read_table


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("MMBATCH_JUDGE_API_KEY", raising=False)


def extract(inp: Path, out: Path, server: OpenAIServer, **changes):
    values = {"judge_base_url": server.base_url, "retry_backoff_s": 0.01, "request_timeout_s": 5.0, **changes}
    return run_extract(ExtractOptions(input=inp, output=out, **values))


def test_without_group_skipping_every_open_row_is_asked(tmp_path: Path) -> None:
    inp = write_predictions(tmp_path / "pred.tsv", judge_rows()[:6])
    with OpenAIServer(ServerScript(reply=scripted_judge)) as server:
        result = extract(inp, tmp_path / "out.tsv", server, skip_failed_groups=False)
        assert result.exit_code == EXIT_OK
        assert len(server.chat_requests) == 5
    assert read_table(tmp_path / "out.tsv").frame["extracted"].to_list() == ["B", "B", "A", "B", "D", "B"]


def test_failed_calls_are_errors_and_a_rerun_retries_only_them(tmp_path: Path) -> None:
    rows = [mcq_row(1, "A", answer="A"), mcq_row(2, "a vehicle painted like the sky"),
            mcq_row(3, "the crimson automobile", answer="A")]
    inp = write_predictions(tmp_path / "pred.tsv", rows)
    out = tmp_path / "out.tsv"
    with OpenAIServer(ServerScript(reply=scripted_judge, fail_always=status(500))) as server:
        first = extract(inp, out, server, max_retries=1)
        assert first.exit_code == EXIT_ROWS_FAILED
        assert len(server.chat_requests) == 4  # 2 rows x (1 try + 1 retry)
        frame = read_table(out).frame
        assert frame["extract_method"].to_list() == ["rule", "error", "error"]
        assert frame["extracted"].to_list() == ["A", None, None]
        assert frame["error"][1].startswith("judge: HTTP 500") and "after 2 attempts" in frame["error"][1]
        assert first.summary["judge"]["failed_calls"] == 2

        server.script.fail_always = None
        server.reset()
        second = extract(inp, out, server, max_retries=1)
        assert second.exit_code == EXIT_OK
        assert sorted(r.prompt.rsplit("Answer: ", 1)[1] for r in server.chat_requests) == [
            "a vehicle painted like the sky\nYour output: ", "the crimson automobile\nYour output: "]
    frame = read_table(out).frame
    assert frame["extracted"].to_list() == ["A", "B", "A"]
    assert frame["error"].null_count() == 3


def test_faults_are_survived(tmp_path: Path) -> None:
    inp = write_predictions(tmp_path / "pred.tsv", judge_rows()[:3])
    faults = [status(429, retry_after=1), status(500), GARBAGE, hang(20)]
    with OpenAIServer(ServerScript(reply=scripted_judge, faults=faults)) as server:
        result = extract(inp, tmp_path / "out.tsv", server, request_timeout_s=1.0, concurrency=1)
        assert result.exit_code == EXIT_OK
        chats = server.chat_requests
        assert len(chats) == 3 + 4
        retry = next(r for r in chats[1:] if r.prompt == chats[0].prompt)
        assert retry.at - chats[0].at >= 0.95  # the row that got 429 waited for Retry-After: 1
    assert read_table(tmp_path / "out.tsv").frame["extracted"].to_list() == ["B", "B", "A"]


def test_settings_change_is_refused_unless_forced(tmp_path: Path) -> None:
    from mmbatch.errors import BadInputError

    inp = write_predictions(tmp_path / "pred.tsv", judge_rows()[:2])
    out = tmp_path / "out.tsv"
    with OpenAIServer(ServerScript(reply=scripted_judge, models=["judge-a", "judge-b"])) as server:
        extract(inp, out, server, judge_model="judge-a")
        with pytest.raises(BadInputError, match="judge differ"):
            extract(inp, out, server, judge_model="judge-b")
        server.reset()
        forced = extract(inp, out, server, judge_model="judge-b", force=True)
        assert forced.exit_code == EXIT_OK
        assert {r.body["model"] for r in server.chat_requests} == {"judge-b"}
    assert set(read_table(out).frame["judge_model"].drop_nulls()) == {"judge-b"}


def test_metadata_records_the_judge(tmp_path: Path) -> None:
    inp = write_predictions(tmp_path / "pred.tsv", judge_rows()[:2])
    with OpenAIServer(ServerScript(reply=scripted_judge)) as server:
        extract(inp, tmp_path / "out.parquet", server, judge_model="gpt-3.5-turbo-0125")
    meta = read_table(tmp_path / "out.parquet").metadata["extract"]
    assert meta["judge"]["model"] == "gpt-3.5-turbo-0125"
    assert len(meta["judge"]["prompt_template_hash"]) == 16
    assert meta["rule"] == "vlmevalkit-can_infer"
    counts = meta["counts"]
    assert counts["by_method"]["judge"] == 2 and counts["judge"]["calls"] == 2
    # A local server that serves a model under an OpenAI name costs nothing like OpenAI's price: no estimate.
    assert counts["judge"]["estimated_cost_usd"] is None and counts["judge"]["official_api"] is False
    assert "no cost estimate (not the official API)" in "\n".join(summary_lines(counts))
    assert (tmp_path / "mmbatch-judge-cache.sqlite").is_file()  # the default cache lives beside the output


def test_mme_vlmevalkit_rule_asks_the_yes_no_judge_at_rising_temperatures(tmp_path: Path) -> None:
    rows = [mme_row(1, "a.jpg", "It might be.", "Yes"), mme_row(2, "a.jpg", "There is not any dog", "No")]
    inp = write_predictions(tmp_path / "mme.tsv", rows)

    def reply(prompt: str, body: dict) -> str:
        return "No" if "There is not any dog" in prompt else "Unknown"

    with OpenAIServer(ServerScript(reply=reply)) as server:
        result = extract(inp, tmp_path / "out.tsv", server, yes_no_rule="vlmevalkit")
        assert result.exit_code == EXIT_OK
        first_row = [r for r in server.chat_requests if "It might be." in r.prompt]
        assert [r.body["temperature"] for r in first_row] == [0.0, 0.5, 1.0, 1.5, 2.0]
        prompt = first_row[0].prompt
    assert prompt.startswith("You are an AI assistant who will help me to match an answer with two options of a "
                             "question. The options are only Yes / No. ")
    assert prompt.endswith("Example 3: \nQuestion: Is there a dog in a.jpg? Please answer yes or no.?\n"
                           "Answer: It might be.\nYour output: ")
    frame = read_table(tmp_path / "out.tsv").frame
    assert frame["extracted"].to_list() == [None, "No"]
    assert frame["extract_method"].to_list() == ["unmatched", "judge"]
    assert frame["extract_note"][0] == "the judge matched nothing in 5 tries"


def test_options_block_keeps_missing_letters(tmp_path: Path) -> None:
    options = {"A": OPTIONS["A"], "B": OPTIONS["B"], "D": OPTIONS["D"]}
    inp = write_predictions(tmp_path / "pred.tsv", [mcq_row(1, "something unrelated", options=options)])
    with OpenAIServer(ServerScript(reply="D")) as server:
        assert extract(inp, tmp_path / "o.tsv", server).exit_code == EXIT_OK
        assert "Options: There are several options: \nA. red car\nB. blue car\nD. yellow truck\n\nAnswer: " in (
            server.chat_requests[0].prompt)


def test_cache_serves_other_files_and_the_random_fallback(tmp_path: Path) -> None:
    import random

    cache = tmp_path / "cache.sqlite"
    inp = write_predictions(tmp_path / "pred.tsv", judge_rows())
    with OpenAIServer(ServerScript(reply=scripted_judge)) as server:
        extract(inp, tmp_path / "first.tsv", server, judge_cache=cache)
        assert len(server.chat_requests) == 7
        server.reset()
        # Another file holding some of the same rows: no calls, not even a probe.
        other = write_predictions(tmp_path / "other.parquet", [judge_rows()[0], judge_rows()[6]])
        extract(other, tmp_path / "other_out.tsv", server, judge_cache=cache)
        # VLMEvalKit's random fallback, by name: seeded per row, recorded; the cached replies are reused.
        result = extract(inp, tmp_path / "rand.tsv", server, judge_cache=cache, unmatched="random", seed=7)
        assert server.received == []
    assert result.summary["judge"]["cache_hits"] == 7 and result.summary["judge"]["calls"] == 0
    table = read_table(tmp_path / "rand.tsv")
    assert table.frame["extracted"][7] == random.Random("7:5").choice(["A", "B", "C", "D", "Z"])
    assert table.frame["extract_method"][7] == "unmatched"
    assert "random fallback" in table.frame["extract_note"][7]
    assert table.metadata["extract"]["unmatched"] == "random" and table.metadata["extract"]["seed"] == 7
    assert table.frame["extracted"][3] is None  # rows of failed groups are never given a random letter


def test_cost_is_estimated_for_the_official_api_only() -> None:
    stats = JudgeStats(calls=2, prompt_tokens=1_000_000, completion_tokens=0)
    official = run_summary(["judge"], stats, "gpt-4o-mini", 0, 1.0, official_api=True)
    assert official["judge"]["estimated_cost_usd"] == pytest.approx(0.15)
    assert "estimated cost $0.1500" in "\n".join(summary_lines(official))
    local = run_summary(["judge"], stats, "gpt-4o-mini", 0, 1.0, official_api=False)
    assert local["judge"]["estimated_cost_usd"] is None
