"""The keep-alive transport to plain-http servers (mmbatch/http_transport.py), against a real server on 127.0.0.1.

Replay of the campaign's throughput finding: through the ``openai`` package every request paid ~1.4 ms of client CPU
in its HTTP stack (bench/bench_openai_transport.py). These tests hold what the leaner transport must keep: one
connection reused, a connection the server dropped replaced without a retry, proxies still honoured (through the
package), and an answer too large to hold never read whole.
"""

from __future__ import annotations

import asyncio

import pytest
from support.openai_server import DROP_AFTER, OpenAIServer, ServerScript, status

from mmbatch.http_transport import MAX_RESPONSE_BYTES, lean_transport_applies
from mmbatch.openai_client import ChatCallError, ChatClient, ClientSettings

BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}], "temperature": 0}


@pytest.fixture(autouse=True)
def _no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)


def _sequential_chats(settings: ClientSettings, count: int) -> tuple[list[int], int]:
    """``count`` chats one after another through one client: each reply's attempts, and the client's retries."""
    async def go() -> tuple[list[int], int]:
        client = ChatClient(settings)
        try:
            return [(await client.chat(BODY)).attempts for _ in range(count)], client.retries
        finally:
            await client.aclose()

    return asyncio.run(go())


def _settings(server: OpenAIServer, **changes: object) -> ClientSettings:
    return ClientSettings(**{"base_url": server.base_url, "timeout_s": 5.0, "max_retries": 0, **changes})


def test_requests_one_after_another_share_one_connection() -> None:
    with OpenAIServer() as server:
        assert _sequential_chats(_settings(server), 5) == ([1] * 5, 0)
        assert server.connections == 1


def test_a_connection_the_server_dropped_is_replaced_without_a_retry() -> None:
    # The server closes the connection after its first answer without saying so (an idle keep-alive timeout): the
    # second request finds it dead and goes out on a new connection, not through the retry loop and its backoff.
    with OpenAIServer(ServerScript(faults=[DROP_AFTER])) as server:
        assert _sequential_chats(_settings(server), 2) == ([1, 1], 0)
        assert server.connections == 2 and len(server.chat_requests) == 2


def test_a_proxy_variable_is_honoured_through_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAIServer() as server:
        origin = server.base_url.removesuffix("/v1")
        monkeypatch.setenv("HTTP_PROXY", origin)  # the test server plays the proxy: it accepts absolute-form paths
        url = "http://mmbatch-test.invalid/v1"  # a name no resolver knows: only the proxy can answer
        assert not lean_transport_applies(url)
        assert _sequential_chats(ClientSettings(base_url=url, timeout_s=5.0, max_retries=0), 1) == ([1], 0)
        assert server.chat_requests[0].path == "http://mmbatch-test.invalid/v1/chat/completions"
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert lean_transport_applies("http://127.0.0.1:8000/v1")
    assert not lean_transport_applies("https://api.openai.com/v1")


def test_an_answer_over_the_limit_is_not_read_whole() -> None:
    # Campaign replay: a 50 MB error body became a 52 MB error cell. Its declared length is over the limit, so the
    # request fails naming the limit and the status; the status says whether a retry may help.
    huge = "e" * (MAX_RESPONSE_BYTES + 1)
    with OpenAIServer(ServerScript(faults=[status(500, message=huge), status(400, message=huge)])) as server:
        for expected in ("HTTP 500", "HTTP 400"):
            with pytest.raises(ChatCallError) as failed:
                _sequential_chats(_settings(server), 1)
            message = str(failed.value)
            assert expected in message and "MAX_RESPONSE_BYTES" in message and len(message) < 300


def test_a_long_error_message_under_the_limit_is_cut_in_the_row() -> None:
    with (OpenAIServer(ServerScript(faults=[status(503, message="x" * 2_000_000)])) as server,
          pytest.raises(ChatCallError) as failed):
        _sequential_chats(_settings(server), 1)
    assert "HTTP 503" in str(failed.value) and "1,999,000 more characters cut" in str(failed.value)
    assert len(str(failed.value)) < 1_200
