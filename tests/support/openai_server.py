"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests, the demo and the benchmark.

It serves ``POST /v1/chat/completions`` and ``GET /v1/models`` over real sockets (stdlib ``ThreadingHTTPServer``),
so the client code under test runs unchanged: connection handling, timeouts, status codes and headers are real.
It can be scripted to answer with a fixed text or a function of the prompt, to wait before answering, and to inject
faults (429 with ``Retry-After``, 500, a hang past the client's timeout, a garbage body). It records every request
body it receives, with its arrival time.

Run it on its own (the demo and ``bench/bench_extract.py`` do)::

    python tests/support/openai_server.py --port 0 --delay 0.05 --reply judge
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | Callable[[str, dict[str, Any]], str]
"""A fixed reply text, or a function of (prompt text, request body) giving the reply text."""
Extra = Callable[[dict[str, Any]], dict[str, Any]]
"""A function of the request body giving more top-level fields of the completion (e.g. ``prompt_logprobs``)."""


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour, used for one request."""

    kind: str
    """``status`` (an HTTP error), ``hang`` (answer nothing for ``seconds``), ``garbage`` (a 200 that is not JSON),
    ``echo-headers`` (a 200 echoing the request headers as text) or ``drop-after`` (answer normally, then close the
    connection without saying so, as a server does when an idle keep-alive connection times out)."""
    status: int = 500
    """HTTP status for ``status`` faults."""
    message: str | None = None
    """The error message of a ``status`` fault (default: ``scripted <status>``)."""
    retry_after: str | None = None
    """``Retry-After`` header value for ``status`` faults, if any."""
    seconds: float = 30.0
    """How long a ``hang`` lasts (the client should time out first)."""


def status(code: int, retry_after: str | float | None = None, message: str | None = None) -> Fault:
    """A fault answering ``code`` (with ``Retry-After`` and an error ``message`` when given)."""
    return Fault("status", status=code, retry_after=None if retry_after is None else str(retry_after),
                 message=message)


def hang(seconds: float = 30.0) -> Fault:
    """A fault that reads the request and answers nothing for ``seconds``."""
    return Fault("hang", seconds=seconds)


GARBAGE = Fault("garbage")
"""A fault answering 200 with a body that is not a chat completion."""
DROP_AFTER = Fault("drop-after")
"""A fault answering normally, then closing the connection without a ``Connection: close`` header."""
ECHO_HEADERS = Fault("echo-headers")
"""A fault answering 200 with a plain-text body that echoes the request's headers (an API key among them), as a
misconfigured proxy does."""


@dataclass
class Received:
    """One request the server received."""

    path: str
    """The request path."""
    body: dict[str, Any]
    """The JSON body (empty for GET)."""
    raw: bytes
    """The exact body bytes."""
    headers: dict[str, str]
    """Request headers, lower-cased names."""
    at: float
    """``time.monotonic()`` on arrival."""

    @property
    def prompt(self) -> str:
        """The text of the last user message (all text parts joined)."""
        return message_text(self.body)


def message_text(body: dict[str, Any]) -> str:
    """The text parts of the last message of a chat request body."""
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content", "")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


@dataclass
class ServerScript:
    """What the server does; tests change it between runs."""

    reply: Reply = "A"
    """The reply text, or a function of (prompt, body)."""
    delay_s: float = 0.0
    """Seconds to wait before each chat answer."""
    faults: list[Fault] = field(default_factory=list)
    """Faults used one per chat request, in order, before normal answers resume."""
    models: list[str] = field(default_factory=lambda: ["gpt-4o-mini", "gpt-3.5-turbo-0125", "local-model"])
    """Model ids listed by ``/v1/models``."""
    models_status: int = 200
    """Status of ``/v1/models`` (e.g. 401 to play a server that refuses the key)."""
    fail_always: Fault | None = None
    """A fault used for every chat request (a server that is down for good)."""
    extra: Extra | None = None
    """Adds fields to every chat completion (see :mod:`support.logprob_model`, which adds vLLM's prompt log-probs)."""


class OpenAIServer:
    """The server, started on a free port of 127.0.0.1 in a background thread. Use as a context manager."""

    def __init__(self, script: ServerScript | None = None, *, port: int = 0) -> None:
        self.script = script or ServerScript()
        self.received: list[Received] = []
        self.connections = 0
        """TCP connections accepted so far (a keep-alive client opens one per request in flight)."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        handler = type("Handler", (_Handler,), {"server_state": self})
        self.httpd = _Server(("127.0.0.1", port), handler)
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The ``--base-url`` / ``--judge-base-url`` to use."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def chat_requests(self) -> list[Received]:
        """The chat completion requests received so far."""
        with self._lock:
            return [r for r in self.received if r.path.endswith("/chat/completions")]

    def reset(self) -> None:
        """Forget the received requests."""
        with self._lock:
            self.received.clear()

    def start(self) -> OpenAIServer:
        """Start serving."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging handlers are released."""
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _record(self, received: Received) -> Fault | None:
        with self._lock:
            self.received.append(received)
            if not received.path.endswith("/chat/completions"):
                return None
            if self.script.fail_always is not None:
                return self.script.fail_always
            return self.script.faults.pop(0) if self.script.faults else None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the benchmark opens 32+ connections at once; the default backlog is 5


class _Handler(BaseHTTPRequestHandler):
    server_state: OpenAIServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as two writes: Nagle + delayed ACK would add 40 ms

    def setup(self) -> None:
        super().setup()
        with self.server_state._lock:
            self.server_state.connections += 1

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read stderr of the CLI, not of this
        pass

    def do_GET(self) -> None:
        state = self.server_state
        state._record(Received(self.path, {}, b"", _headers(self), time.monotonic()))
        if self.path.rstrip("/").endswith("/stats"):
            self._send_json(200, {"chat_requests": len(state.chat_requests)})
            return
        if not self.path.rstrip("/").endswith("/models"):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        if state.script.models_status != 200:
            self._send_json(state.script.models_status, {"error": {"message": "Incorrect API key provided"}})
            return
        data = [{"id": name, "object": "model", "owned_by": "test"} for name in state.script.models]
        self._send_json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:
        state = self.server_state
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            self._send_json(400, {"error": {"message": "body is not JSON"}})
            return
        fault = state._record(Received(self.path, body, raw, _headers(self), time.monotonic()))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        if fault is not None and fault.kind != "drop-after" and self._play(fault):
            return
        if state.script.delay_s:
            time.sleep(state.script.delay_s)
        reply = state.script.reply
        text = reply(message_text(body), body) if callable(reply) else reply
        completion = _completion(body, text)
        if state.script.extra is not None:
            try:
                completion.update(state.script.extra(body))
            except ValueError as exc:  # a request the scripted model cannot serve, as a real server answers it
                self._send_json(400, {"error": {"message": str(exc)}})
                return
        self._send_json(200, completion)
        if fault is not None and fault.kind == "drop-after":
            self.close_connection = True

    def _play(self, fault: Fault) -> bool:
        """Act out ``fault``; True when the request has been answered (or abandoned)."""
        if fault.kind == "status":
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            message = fault.message if fault.message is not None else f"scripted {fault.status}"
            self._send_json(fault.status, {"error": {"message": message}}, headers)
            return True
        if fault.kind == "hang":
            self.server_state._stop.wait(fault.seconds)
            self.close_connection = True
            return True
        if fault.kind == "echo-headers":
            # Authorization first, as a proxy's error page would show it: within any snippet of the body.
            headers = sorted(self.headers.items(), key=lambda item: item[0].lower() != "authorization")
            echoed = "".join(f"{name}: {value}\n" for name, value in headers)
            self._send_bytes(200, echoed.encode(), "text/plain")
            return True
        if fault.kind == "garbage":
            self._send_bytes(200, b"<html>502 Bad Gateway</html>\x00\xff", "application/json")
            return True
        return False

    def _send_json(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send_bytes(code, json.dumps(payload).encode(), "application/json", headers)

    def _send_bytes(self, code: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout); nothing to answer


def _headers(handler: BaseHTTPRequestHandler) -> dict[str, str]:
    return {name.lower(): value for name, value in handler.headers.items()}


def _completion(body: dict[str, Any], text: str) -> dict[str, Any]:
    prompt_tokens = max(1, len(message_text(body).split()))
    completion_tokens = max(1, len(text.split()))
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "unknown"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


# ------------------------------------------------------------------------------------------- scripted judges

_OPTION_LINE = re.compile(r"^([A-Z])\. (.*)$", re.M)


def word_overlap_judge(prompt: str, body: dict[str, Any] | None = None) -> str:
    """A deterministic stand-in judge: the option of the last example sharing most words with the answer, else Z.

    Works on the English and Chinese MCQ judge prompts, answers ``Yes``/``No``/``Unknown`` to the yes/no prompt, and
    grades an MM-Vet grader prompt by the share of the ground truth's words the prediction holds (any part of an
    ``<OR>`` truth), in tenths.
    """
    if "Just complete the last space of the correctness score." in prompt:
        return _overlap_grade(prompt)
    if "The options are only Yes / No." in prompt:
        answer = prompt.rsplit("Answer: ", 1)[-1].lower()
        words = set(re.findall(r"\w+", answer))
        return "Yes" if "yes" in words else "No" if "no" in words or "not" in words else "Unknown"
    last = re.split(r"Example 3: \n|例 3: \n", prompt)[-1]
    answer_part = re.split(r"\nAnswer: |\n答案: ", last)[-1]
    answer_words = set(re.findall(r"\w+", answer_part.lower()))
    best, best_overlap = "Z", 0
    for letter, text in _OPTION_LINE.findall(last):
        overlap = len(answer_words & set(re.findall(r"\w+", text.lower())))
        if overlap > best_overlap:
            best, best_overlap = letter, overlap
    return best


def _overlap_grade(prompt: str) -> str:
    """The grade of the row an MM-Vet grader prompt ends with (``question | truth | prediction | ``)."""
    cells = prompt.rstrip().removesuffix("|").rsplit("\n", 1)[-1].split(" | ")
    truth, prediction = (cells[1], cells[2]) if len(cells) >= 3 else ("", "")
    said = set(re.findall(r"\w+", prediction.lower()))
    best = 0.0
    for part in truth.split(" <OR> "):
        words = set(re.findall(r"\w+", part.replace(" <AND> ", " ").lower()))
        if words:
            best = max(best, len(words & said) / len(words))
    return f"{round(best, 1):.1f}"


def main(argv: list[str] | None = None) -> int:
    """Serve until interrupted; prints ``PORT <n>`` once listening (for scripts to read)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each chat answer")
    parser.add_argument("--reply", default="judge", help="'judge' (word-overlap judge) or a fixed reply text")
    parser.add_argument("--exit-with-parent", action="store_true",
                        help="stop when the process that started this one is gone (a script killed with kill -9 "
                             "cannot run its exit trap; the server must not outlive it)")
    args = parser.parse_args(argv)
    reply: Reply = word_overlap_judge if args.reply == "judge" else args.reply
    parent = os.getppid()
    server = OpenAIServer(ServerScript(reply=reply, delay_s=args.delay), port=args.port).start()
    print(f"PORT {server.httpd.server_address[1]}", flush=True)
    try:
        # A dead parent's children are handed to another process, so the parent id changing means it is gone.
        while not args.exit_with_parent or os.getppid() == parent:
            time.sleep(0.2 if args.exit_with_parent else 3600)
    except KeyboardInterrupt:
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
