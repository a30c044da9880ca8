"""``mmbatch extract`` with the judge, through the real CLI against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import re
from pathlib import Path

from support.extract_rows import judge_rows, scripted_judge, write_predictions
from support.openai_server import OpenAIServer, ServerScript

from mmbatch.tableio import read_table

NO_KEYS = {"OPENAI_API_KEY": "", "MMBATCH_JUDGE_API_KEY": "", "OPENAI_BASE_URL": ""}
FAST = ["--retry-backoff", "0.01", "--timeout", "5"]

EXPECTED_EN = (
    "You are an AI assistant who will help me to match an answer with several options of a single-choice "
    "question. You are provided with a question, several options, and an answer, and you need to find which option "
    "is most similar to the answer. If the meaning of all options are significantly different from the answer, "
    "output Z. Your should output a single uppercase character in A, B, C, D (if they are valid options), and Z. \n"
    "Example 1: \nQuestion: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: a cute teddy bear\nYour output: A\nExample 2: \nQuestion: What is the main object in image?\n"
    "Options: A. teddy bear B. rabbit C. cat D. dog\nAnswer: Spider\nYour output: Z\nExample 3: \n"
    "Question: Which vehicle is shown??\n"
    "Options: There are several options: \nA. red car\nB. blue car\nC. green bus\nD. yellow truck\n\n"
    "Answer: a vehicle painted like the sky\nYour output: "
)
EXPECTED_CN = (
    "你是一个帮助我匹配答案与单选题中多个选项的 AI 助手。你会被提供：一个问题，多个选项，一个答案。"
    "你的任务是找到与答案意义最相近的选项。如果所有选项的意义都与答案显著不同，则输出 Z。"
    "你应该输出一个单个的大写字母，例如 A, B, C, D（如果它们是有效选项），或 Z。"
    "例 1:问题: 图中最主要的物体是什么?\n选项: A. 泰迪熊 B. 兔子 C. 猫 D. 狗\n答案: 一只可爱的泰迪熊\n输出: A\n"
    "例 2: \n问题: 图中最主要的物体是什么?\n选项: A. 泰迪熊 B. 兔子 C. 猫 D. 狗\n答案: 蜘蛛\n输出: Z\n"
    "例 3: \n问题: 图中是什么车？?\n选项: There are several options: \nA. 红色轿车\nB. 蓝色轿车\nC. 绿色巴士\n\n"
    "答案: 一辆像天空一样颜色的车\n输出: "
)

def test_judged_run_prompts_groups_and_cache(cli, tmp_path: Path) -> None:
    inp = write_predictions(tmp_path / "pred.tsv", judge_rows())
    cache = tmp_path / "judge.sqlite"
    with OpenAIServer(ServerScript(reply=scripted_judge)) as server:
        base = ["--judge-base-url", server.base_url, "--judge-cache", str(cache), *FAST]
        result = cli("extract", "--input", str(inp), "--output", str(tmp_path / "out.tsv"), *base, env=NO_KEYS)
        assert result.returncode == 0, result.stderr
        chats = server.chat_requests
        prompts = [r.prompt for r in chats]
        assert server.received[0].path == "/v1/models"  # the start-up probe
        assert len(chats) == 7  # rows 1, 1000001, 2, 4 once; row 5 three times
        assert EXPECTED_EN.encode("utf-8") in [p.encode("utf-8") for p in prompts]
        assert EXPECTED_CN.encode("utf-8") in [p.encode("utf-8") for p in prompts]
        assert all(r.body["temperature"] == 0 and r.body["model"] == "gpt-4o-mini" for r in chats)
        assert all(r.body["messages"][0]["role"] == "user" and len(r.body["messages"]) == 1 for r in chats)
        assert sum("Answer: something unrelated" in p for p in prompts) == 3

        frame = read_table(tmp_path / "out.tsv").frame
        assert frame["extracted"].to_list() == ["B", "B", "A", None, "D", None, "B", None]
        assert frame["extract_method"].to_list() == ["judge", "judge", "judge", "unmatched", "rule", "unmatched",
                                                     "judge", "unmatched"]
        assert frame["judge_model"].to_list()[:3] == ["gpt-4o-mini"] * 3
        assert frame["judge_raw"].to_list()[1] == "The answer is B."
        assert "circular group" in frame["extract_note"][3] and "circular group" in frame["extract_note"][5]
        assert frame["extract_note"][7] == "the judge matched nothing in 3 tries"
        assert re.search(r"judge: 7 calls in [\d.]+ s, 0 cache hits", result.stderr)

        # A rerun into another output: every reply comes from the cache, not even a probe is sent.
        server.reset()
        again = cli("extract", "--input", str(inp), "--output", str(tmp_path / "again.parquet"), *base, env=NO_KEYS)
        assert again.returncode == 0, again.stderr
        assert server.received == []
        assert read_table(tmp_path / "again.parquet").frame["extracted"].to_list() == frame["extracted"].to_list()
        assert re.search(r"judge: 0 calls in [\d.]+ s, 7 cache hits", again.stderr)


def test_unreachable_or_misconfigured_judge_stops_at_start_up(cli, tmp_path: Path) -> None:
    inp = write_predictions(tmp_path / "pred.tsv", judge_rows()[:1])
    out = tmp_path / "out.tsv"
    with OpenAIServer() as server:
        url = server.base_url
        wrong_model = cli("extract", "--input", str(inp), "--output", str(out), "--judge-base-url", url,
                          "--judge-model", "no-such-judge", env=NO_KEYS)
        assert wrong_model.returncode == 2
        assert "does not serve model 'no-such-judge'" in wrong_model.stderr
        assert server.chat_requests == []
    down = cli("extract", "--input", str(inp), "--output", str(out), "--judge-base-url", url, env=NO_KEYS)
    assert down.returncode == 2 and "cannot reach" in down.stderr and "Traceback" not in down.stderr
    no_key = cli("extract", "--input", str(inp), "--output", str(out), env=NO_KEYS)
    assert no_key.returncode == 2 and "OPENAI_API_KEY" in no_key.stderr and "--no-judge" in no_key.stderr
    assert not out.exists()
    assert not list(tmp_path.glob("mmbatch-judge-cache.sqlite*")), "a refused judge leaves no cache file"


def test_the_key_is_sent_but_never_written_or_printed(cli, tmp_path: Path) -> None:
    secret = "sk-mmbatch-test-7f3a9c2e51"
    inp = write_predictions(tmp_path / "pred.tsv", judge_rows()[:2])
    with OpenAIServer(ServerScript(reply=scripted_judge)) as server:
        result = cli("extract", "--input", str(inp), "--output", str(tmp_path / "out.tsv"), "--judge-base-url",
                     server.base_url, *FAST, env={**NO_KEYS, "MMBATCH_JUDGE_API_KEY": secret})
        assert result.returncode == 0, result.stderr
        assert {r.headers["authorization"] for r in server.received} == {f"Bearer {secret}"}
    with OpenAIServer(ServerScript(models_status=401)) as server:
        refused = cli("extract", "--input", str(inp), "--output", str(tmp_path / "x.tsv"), "--judge-base-url",
                      server.base_url, "--judge-cache", str(tmp_path / "fresh.sqlite"),
                      env={**NO_KEYS, "OPENAI_API_KEY": secret})
    assert refused.returncode == 2 and "refused the API key" in refused.stderr
    for text in (result.stdout, result.stderr, refused.stdout, refused.stderr):
        assert secret not in text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_a_judge_reply_over_the_limit_is_a_failed_row_and_never_cached(tmp_path: Path) -> None:
    # Campaign replay: 50 MB judge replies were stored whole (630 MB of cache for 12 calls).
    from mmbatch.cli import main
    from mmbatch.extract.judge_cache import JudgeCache
    from mmbatch.openai_replies import MAX_REPLY_CHARS

    inp = write_predictions(tmp_path / "pred.tsv", judge_rows()[:2])
    out = tmp_path / "out.parquet"
    with OpenAIServer(ServerScript(reply="A" * (MAX_REPLY_CHARS + 1))) as server:
        code = main(["extract", "--input", str(inp), "--output", str(out), "--judge-base-url", server.base_url,
                     *FAST])
    assert code == 3
    errors = read_table(out).frame["error"].drop_nulls().to_list()
    assert errors and all("MAX_REPLY_CHARS" in error for error in errors)
    cache = JudgeCache(tmp_path / "mmbatch-judge-cache.sqlite")
    assert len(cache) == 0
    cache.close()
