"""A real OpenAI-compatible images server on 127.0.0.1 for tests: ``GET /v1/models``, ``POST
/v1/images/generations`` (JSON) and ``POST /v1/images/edits`` (multipart), answering ``b64_json`` pictures.

The picture for a request is looked up by its prompt in :attr:`ImagesServer.pictures` (PNG bytes); the first
``fail_first`` image requests get an HTTP 500 so that retries are exercised. Every request is recorded.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.background_server import BackgroundServer


@dataclass(frozen=True)
class ImageCall:
    """One images request as the server understood it."""

    path: str
    """``/v1/images/generations`` or ``/v1/images/edits``."""
    fields: dict[str, str]
    """The JSON body, or the multipart form fields (as text)."""
    files: list[bytes]
    """Uploaded pictures (edits), in order."""


class ImagesServer(BackgroundServer):
    """The server, on a free port, in a background thread; a context manager."""

    def __init__(self, pictures: dict[str, bytes], *, model: str = "image-model", fail_first: int = 0) -> None:
        self.pictures = pictures
        self.model = model
        self.fail_first = fail_first
        self.calls: list[ImageCall] = []
        super().__init__(_Handler)

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"


class _Handler(BaseHTTPRequestHandler):
    state: ImagesServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": self.state.model, "object": "model"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.endswith("/images/generations"):
            call = ImageCall(self.path, {k: str(v) for k, v in json.loads(raw).items()}, [])
        elif self.path.endswith("/images/edits"):
            call = _multipart(self.path, self.headers.get("Content-Type", ""), raw)
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        with self.state.lock:
            self.state.calls.append(call)
            failing = self.state.fail_first > 0
            self.state.fail_first -= 1 if failing else 0
        if failing:
            self._send(500, {"error": {"message": "scripted 500"}})
            return
        picture = self.state.pictures.get(call.fields.get("prompt", ""))
        if picture is None:
            self._send(400, {"error": {"message": f"no picture for prompt {call.fields.get('prompt')!r}"}})
            return
        self._send(200, {"created": 0, "data": [{"b64_json": base64.b64encode(picture).decode("ascii")}]})

    def _send(self, code: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _multipart(path: str, content_type: str, raw: bytes) -> ImageCall:
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    fields: dict[str, str] = {}
    files: list[bytes] = []
    for part in message.iter_parts():
        payload = part.get_payload(decode=True) or b""
        if part.get_filename():
            files.append(payload)
        else:
            fields[str(part.get_param("name", header="content-disposition"))] = payload.decode()
    return ImageCall(path, fields, files)
