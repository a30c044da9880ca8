"""API keys never leave the process: real subprocesses against a real 127.0.0.1 server that echoes them back.

A misconfigured proxy answering 200 with the request headers as plain text puts the ``Authorization`` header in the
reply; the key must not reach the output cells, the metadata, the progress files, the judge cache or the printed
messages, whatever the key looks like (no ``sk-`` prefix, a newline inside).
"""

from __future__ import annotations

import base64
from pathlib import Path

from tests.conftest import run_cli
from tests.support.openai_server import ECHO_HEADERS, OpenAIServer, ServerScript
from tests.support.prepared_files import prepared_frame, write_prepared

NO_KEYS = {"OPENAI_API_KEY": "", "MMBATCH_JUDGE_API_KEY": ""}


def _all_bytes(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file())


def _assert_absent(key: str, *texts: bytes | str) -> None:
    for text in texts:
        data = text.encode() if isinstance(text, str) else text
        for form in (key, key.replace("\n", "\\n")):
            assert form.encode() not in data
        assert key[3:20].encode() not in data, "a piece of the key survived"


def test_infer_key_echoed_by_a_server_is_scrubbed_everywhere(tmp_path: Path) -> None:
    key = "jk-live-3f9a0c7e5b1d4e2f8a6c"  # no sk- prefix: only its exact value can find it
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(2, copies=1))
    out = tmp_path / "out" / "preds.tsv"
    with OpenAIServer(ServerScript(fail_always=ECHO_HEADERS)) as server:
        result = run_cli("infer", "--input", str(prepared), "--output", str(out), "--backend", "openai",
                         "--model", "local-model", "--base-url", server.base_url, "--max-retries", "0",
                         env={**NO_KEYS, "OPENAI_API_KEY": key})
        assert any(key in r.headers.get("authorization", "") for r in server.chat_requests), "key was not sent"
    assert result.returncode == 3, result.stderr
    assert "not a chat completion" in result.stdout + result.stderr
    _assert_absent(key, result.stdout, result.stderr, _all_bytes(tmp_path / "out"))


def test_judge_key_is_scrubbed_from_rows_cache_and_messages(tmp_path: Path) -> None:
    key = "judge-key-7d2e9f4a1b8c6e3d"
    inp = tmp_path / "pred.tsv"
    inp.write_text("index\tquestion\tA\tB\tanswer\tprediction\n1\tWhich?\tcat\tdog\tA\tI cannot tell\n", "utf-8")
    out = tmp_path / "out" / "extracted.tsv"
    with OpenAIServer(ServerScript(fail_always=ECHO_HEADERS)) as server:
        result = run_cli("extract", "--input", str(inp), "--output", str(out), "--benchmark", "mmbench",
                         "--judge-base-url", server.base_url, "--judge-model", "local-model", "--retry-backoff", "0",
                         env={**NO_KEYS, "MMBATCH_JUDGE_API_KEY": key})
    assert result.returncode == 3, result.stderr
    _assert_absent(key, result.stdout, result.stderr, _all_bytes(tmp_path / "out"))


def test_a_key_with_a_newline_is_not_printed_by_the_probe(tmp_path: Path) -> None:
    key = "first-half-9c8b7a6d\nsecond-half-5e4f3a2b"
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(1, copies=1))
    with OpenAIServer(ServerScript()) as server:
        result = run_cli("infer", "--input", str(prepared), "--output", str(tmp_path / "p.parquet"), "--backend",
                         "openai", "--model", "local-model", "--base-url", server.base_url, "--max-retries", "0",
                         env={**NO_KEYS, "OPENAI_API_KEY": key})
    printed = result.stdout + result.stderr
    assert result.returncode in (2, 3), printed
    for piece in ("first-half-9c8b7a6d", "second-half-5e4f3a2b", base64.b64encode(key.encode()).decode()):
        assert piece not in printed
