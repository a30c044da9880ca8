"""The ``openai`` infer backend against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import base64
import io
import time
from pathlib import Path

import pytest
from PIL import Image
from support.openai_server import OpenAIServer, ServerScript, status
from support.prepared_files import prepared_frame, write_prepared

from mmbatch.backends.base import Request
from mmbatch.backends.openai_chat import OpenAIOptions, create_backend
from mmbatch.errors import BadInputError
from mmbatch.tableio import read_table


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _options(server: OpenAIServer, **changes) -> OpenAIOptions:
    return OpenAIOptions(**{"model": "local-model", "base_url": server.base_url, "timeout_s": 5.0,
                             "max_retries": 1, **changes})


def _decode(url: str) -> Image.Image:
    assert url.startswith("data:image/png;base64,")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def test_images_go_first_as_data_urls_and_results_stream(tmp_path: Path) -> None:
    def reply(prompt: str, body: dict) -> str:
        time.sleep(0.4 if prompt == "slow" else 0.0)
        return f"answer to {prompt}"

    red = Image.new("RGB", (5, 3), (255, 0, 0))
    blue = Image.new("RGB", (2, 7), (0, 0, 255))
    requests = [Request(1, "slow", images=[red, blue]), Request(2, "fast", images=[red])]
    with OpenAIServer(ServerScript(reply=reply)) as server:
        backend = create_backend(_options(server, concurrency=4, temperature=0.0))
        batches = list(backend.generate(requests, max_new_tokens=7))
        backend.close()
        bodies = {r.prompt: r.body for r in server.chat_requests}
    assert [len(batch) for batch in batches] == [1, 1]  # one result per response, as each finishes
    assert [batch[0].index for batch in batches] == [2, 1]  # the fast one first
    assert batches[1][0].prediction == "answer to slow" and batches[1][0].error is None
    assert batches[1][0].latency_ms >= 400 and batches[1][0].output_tokens == 3
    parts = bodies["slow"]["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["image_url", "image_url", "text"]
    assert _decode(parts[0]["image_url"]["url"]).tobytes() == red.tobytes()
    assert _decode(parts[1]["image_url"]["url"]).size == (2, 7)
    assert bodies["slow"]["max_tokens"] == 7 and bodies["slow"]["temperature"] == 0.0
    assert bodies["slow"]["model"] == "local-model"


def test_a_photo_arrives_pixel_for_pixel_and_is_encoded_outside_the_event_loop(monkeypatch: pytest.MonkeyPatch
                                                                                 ) -> None:
    import random
    import threading

    from PIL import ImageFilter

    import mmbatch.backends.openai_chat as openai_chat

    rng = random.Random(0)  # blurred noise compresses like a photo: the zlib level matters, the pixels must not
    photo = Image.frombytes("RGB", (64, 48), rng.randbytes(64 * 48 * 3)).filter(ImageFilter.GaussianBlur(2))
    encoded_in: list[str] = []
    image_data_url = openai_chat.image_data_url

    def noted(image: Image.Image) -> str:
        encoded_in.append(threading.current_thread().name)
        return image_data_url(image)

    monkeypatch.setattr(openai_chat, "image_data_url", noted)
    with OpenAIServer(ServerScript(reply="ok")) as server:
        backend = create_backend(_options(server, concurrency=2))
        results = [r for batch in backend.generate([Request(1, "photo", images=[photo]), Request(2, "text only")],
                                                   max_new_tokens=3) for r in batch]
        backend.close()
        bodies = {r.prompt: r.body for r in server.chat_requests}
    assert sorted(r.prediction for r in results) == ["ok", "ok"]
    url = bodies["photo"]["messages"][0]["content"][0]["image_url"]["url"]
    assert _decode(url).tobytes() == photo.tobytes()
    # the event loop runs in the caller's thread (mmbatch.event_loop_runner); the text-only row encodes nothing
    assert len(encoded_in) == 1 and encoded_in[0] != threading.current_thread().name


def test_a_row_that_keeps_failing_gets_its_error() -> None:
    with OpenAIServer(ServerScript(faults=[status(503)], reply="ok")) as server:
        backend = create_backend(_options(server, concurrency=1, max_retries=0))
        results = [r for batch in backend.generate([Request(1, "a"), Request(2, "b")], max_new_tokens=4)
                   for r in batch]
        backend.close()
    by_index = {r.index: r for r in results}
    assert by_index[1].error is not None and "HTTP 503" in by_index[1].error
    assert by_index[1].prediction is None
    assert by_index[2].prediction == "ok"


def test_a_server_without_prompt_logprobs_cannot_score_likelihood_rows() -> None:
    with OpenAIServer() as server:  # answers chat requests, but never with prompt_logprobs (like the OpenAI API)
        backend = create_backend(_options(server))
        refusal = backend.likelihood_refusal()
        results = [r for batch in backend.loglikelihood([Request(1, "q", options=["a", "b"])]) for r in batch]
        backend.close()
        probes = [r.body for r in server.chat_requests]
    assert refusal is not None and "no prompt_logprobs" in refusal and "--backend hf" in refusal
    assert len(probes) == 1 and probes[0]["prompt_logprobs"] == 0 and probes[0]["continue_final_message"] is True
    assert results[0].error == refusal  # called directly (not through the stage), each row says why


def test_start_up_errors() -> None:
    with OpenAIServer() as server:
        with pytest.raises(BadInputError, match="does not serve model 'other'"):
            create_backend(_options(server, model="other"))
        url = server.base_url
    with pytest.raises(BadInputError, match="cannot reach"):
        create_backend(OpenAIOptions(model="local-model", base_url=url, timeout_s=2))
    with pytest.raises(BadInputError, match="OPENAI_API_KEY"):
        create_backend(OpenAIOptions(model="gpt-4o"))


def test_infer_cli_with_the_openai_backend(cli, tmp_path: Path) -> None:
    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(3, copies=2))
    out = tmp_path / "pred.parquet"
    with OpenAIServer(ServerScript(reply=lambda prompt, body: f"B ({len(body['messages'][0]['content'])} parts)")
                      ) as server:
        result = cli("infer", "--input", str(prepared), "--output", str(out), "--backend", "openai", "--model",
                     "local-model", "--base-url", server.base_url, "--concurrency", "4", env={"OPENAI_API_KEY": ""})
        assert result.returncode == 0, result.stderr
        assert len(server.chat_requests) == 6
    frame = read_table(out).frame.sort("index")
    assert frame["prediction"].to_list() == ["B (2 parts)"] * 6  # one image (copies resolve the reference) + text
    assert frame["error"].null_count() == 6


@pytest.mark.parametrize("usage", [{"prompt_tokens": "abc", "completion_tokens": [1]},
                                   {"prompt_tokens": 1e308 * 10, "completion_tokens": True}, "not an object"],
                         ids=["text-and-list", "inf-and-bool", "not-an-object"])
def test_a_reply_whose_usage_counts_are_not_numbers_keeps_its_answer(tmp_path: Path, usage: object) -> None:
    # Campaign replay: usage.prompt_tokens "abc" from a server. The answer is fine, so the row is kept; the counts
    # are unknown, so they are null (not 0, not a failed row, not a crash).
    from mmbatch.cli import main

    prepared = write_prepared(tmp_path / "prepared.parquet", prepared_frame(2, copies=1))
    out = tmp_path / "pred.parquet"
    with OpenAIServer(ServerScript(reply="C", extra=lambda body: {"usage": usage})) as server:
        assert main(["infer", "--input", str(prepared), "--output", str(out), "--backend", "openai", "--model",
                     "local-model", "--base-url", server.base_url]) == 0
    frame = read_table(out).frame
    assert frame["prediction"].to_list() == ["C", "C"] and frame["output_tokens"].to_list() == [None, None]
