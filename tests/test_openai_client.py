"""The shared async OpenAI-compatible client against a real HTTP server on 127.0.0.1: retries, faults, probe, keys."""

from __future__ import annotations

import asyncio
import time
from email.utils import formatdate

import pytest
from support.openai_server import GARBAGE, OpenAIServer, ServerScript, hang, status

from mmbatch.errors import BadInputError
from mmbatch.event_loop_runner import EventLoopRunner
from mmbatch.openai_client import ChatCallError, ChatClient, ClientSettings
from mmbatch.retry_policy import parse_retry_after

BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}], "temperature": 0}


def _chat(settings: ClientSettings, body: dict = BODY):
    async def go():
        client = ChatClient(settings)
        try:
            return await client.chat(body), client.retries
        finally:
            await client.aclose()

    return asyncio.run(go())


def _settings(server: OpenAIServer, **changes) -> ClientSettings:
    values = {"base_url": server.base_url, "timeout_s": 5.0, "max_retries": 3, "backoff_s": 0.01, **changes}
    return ClientSettings(**values)


def test_reply_text_and_token_usage() -> None:
    with OpenAIServer(ServerScript(reply="B")) as server:
        reply, retries = _chat(_settings(server))
    assert (reply.text, reply.attempts, retries) == ("B", 1, 0)
    assert reply.prompt_tokens == 1 and reply.completion_tokens == 1
    assert server.chat_requests[0].body == BODY


def test_429_waits_for_retry_after() -> None:
    with OpenAIServer(ServerScript(faults=[status(429, retry_after=1)])) as server:
        reply, retries = _chat(_settings(server, backoff_s=0.001))
        first, second = server.chat_requests
    assert (reply.text, reply.attempts, retries) == ("A", 2, 1)
    assert second.at - first.at >= 0.95  # the computed backoff would have been ~1 ms


def test_500_is_retried_with_backoff() -> None:
    with OpenAIServer(ServerScript(faults=[status(500), status(502)])) as server:
        reply, retries = _chat(_settings(server))
    assert (reply.attempts, retries, len(server.chat_requests)) == (3, 2, 3)


def test_a_hanging_request_times_out_and_is_retried() -> None:
    with OpenAIServer(ServerScript(faults=[hang(10)])) as server:
        started = time.monotonic()
        reply, _ = _chat(_settings(server, timeout_s=0.5))
        elapsed = time.monotonic() - started
    assert reply.attempts == 2 and len(server.chat_requests) == 2
    assert 0.5 <= elapsed < 5


def test_a_garbage_body_is_retried() -> None:
    with OpenAIServer(ServerScript(faults=[GARBAGE, GARBAGE])) as server:
        reply, _ = _chat(_settings(server))
    assert (reply.text, reply.attempts) == ("A", 3)


def test_retries_run_out() -> None:
    with OpenAIServer(ServerScript(fail_always=status(503))) as server:
        with pytest.raises(ChatCallError, match=r"HTTP 503 .* after 3 attempts"):
            _chat(_settings(server, max_retries=2))
        assert len(server.chat_requests) == 3


def test_a_bad_request_is_not_retried() -> None:
    with OpenAIServer(ServerScript(faults=[status(400)])) as server:
        with pytest.raises(ChatCallError, match="HTTP 400"):
            _chat(_settings(server))
        assert len(server.chat_requests) == 1


def test_backoff_doubles_with_jitter() -> None:
    delays: list[float] = []

    async def record(seconds: float) -> None:
        delays.append(seconds)

    async def go(server: OpenAIServer) -> None:
        client = ChatClient(_settings(server, max_retries=4, backoff_s=1.0), sleep=record)
        with pytest.raises(ChatCallError):
            await client.chat(BODY)
        await client.aclose()

    with OpenAIServer(ServerScript(fail_always=status(500))) as server:
        asyncio.run(go(server))
    assert len(delays) == 4
    for attempt, delay in enumerate(delays):
        assert 0.5 * 2**attempt <= delay <= 1.5 * 2**attempt


def test_retry_after_forms() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    in_ten = parse_retry_after(formatdate(time.time() + 10, usegmt=True))
    assert in_ten is not None and 8 <= in_ten <= 11


def test_concurrency_limits_requests_in_flight() -> None:
    with OpenAIServer(ServerScript(delay_s=0.3)) as server:
        runner = EventLoopRunner()
        client = ChatClient(_settings(server, concurrency=4))
        started = time.monotonic()
        replies = list(runner.as_completed(range(8), lambda _: client.chat(BODY), window=16))
        elapsed = time.monotonic() - started
        runner.run(client.aclose())
        runner.close()
    assert len(replies) == 8
    assert 0.55 <= elapsed < 2.0  # two waves of four, not one of eight and not eight in a row (2.4 s)


def test_results_come_as_they_finish() -> None:
    def reply(prompt: str, body: dict) -> str:
        time.sleep(float(prompt))
        return prompt

    with OpenAIServer(ServerScript(reply=reply)) as server:
        runner = EventLoopRunner()
        client = ChatClient(_settings(server))
        bodies = [{**BODY, "messages": [{"role": "user", "content": d}]} for d in ("0.6", "0.0", "0.3")]
        order = [r.text for r in runner.as_completed(bodies, client.chat, window=8)]
        runner.run(client.aclose())
        runner.close()
    assert order == ["0.0", "0.3", "0.6"]


def _probe(settings: ClientSettings, model: str = "gpt-4o-mini") -> None:
    async def go():
        client = ChatClient(settings)
        try:
            await client.probe(model)
        finally:
            await client.aclose()

    asyncio.run(go())


def test_probe_accepts_a_served_model() -> None:
    with OpenAIServer() as server:
        _probe(_settings(server))
        assert [r.path for r in server.received] == ["/v1/models"]


def test_probe_errors_are_clear_and_keyless() -> None:
    secret = "sk-test-SECRET-1234567890"
    with OpenAIServer(ServerScript(models_status=401)) as server:
        with pytest.raises(BadInputError, match="refused the API key") as refused:
            _probe(_settings(server, api_key=secret))
        assert server.received[0].headers["authorization"] == f"Bearer {secret}"
    assert secret not in str(refused.value)
    with OpenAIServer() as server:
        with pytest.raises(BadInputError, match=r"does not serve model 'gpt-5'.*gpt-4o-mini"):
            _probe(_settings(server), "gpt-5")
        url = server.base_url
    with pytest.raises(BadInputError, match="cannot reach"):
        _probe(ClientSettings(base_url=url, timeout_s=2))


def test_key_is_scrubbed_and_not_in_repr() -> None:
    secret = "sk-proj-abcdefSECRET"
    settings = ClientSettings(base_url="http://127.0.0.1:1/v1", api_key=secret)
    assert secret not in repr(settings)
    client = ChatClient(settings)
    assert secret not in client.scrub(f"Incorrect API key provided: {secret}")
    assert "SECRET" not in client.scrub("Incorrect API key provided: sk-proj-abc***RET")
    asyncio.run(client.aclose())


def test_an_oversized_reply_fails_once_naming_the_limit() -> None:
    from mmbatch.openai_replies import MAX_REPLY_CHARS

    with OpenAIServer(ServerScript(reply="x" * (MAX_REPLY_CHARS + 1))) as server:
        with pytest.raises(ChatCallError, match="MAX_REPLY_CHARS"):
            _chat(_settings(server))
        assert len(server.chat_requests) == 1  # not retried: the same prompt would get the same reply


def test_a_huge_error_message_is_cut() -> None:
    from mmbatch.openai_replies import MAX_MESSAGE_CHARS, server_error_message

    said = server_error_message(b'{"error": {"message": "' + b"e" * 50_000 + b'"}}')
    assert len(said) < MAX_MESSAGE_CHARS + 60 and "49,000 more characters cut" in said
