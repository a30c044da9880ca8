"""A real HTTP file server on 127.0.0.1 for download tests: ``GET /<name>`` with ``Range: bytes=N-`` support.

Files are served from memory under any names (the bundled examples under the official file names). A name in
``cut_first`` has its first transfer cut after that many bytes (the headers promise the whole file, then the
connection closes), as a dropped connection does; later requests are answered in full, so a resumed download
completes. Every request is recorded with its ``Range`` header.
"""

from __future__ import annotations

import re
from http.server import BaseHTTPRequestHandler

from tests.support.background_server import BackgroundServer


class FilesServer(BackgroundServer):
    """The server, on a free port, in a background thread; a context manager."""

    def __init__(self, files: dict[str, bytes], *, cut_first: dict[str, int] | None = None) -> None:
        self.files = files
        self.cut_first = dict(cut_first or {})
        self.requests: list[tuple[str, str | None]] = []
        """(path, Range header) of every request, in order."""
        super().__init__(_Handler)

    @property
    def base_url(self) -> str:
        return self.origin


class _Handler(BaseHTTPRequestHandler):
    state: FilesServer

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the tests read :attr:`FilesServer.requests` instead."""

    def do_GET(self) -> None:
        name = self.path.lstrip("/")
        wanted = self.headers.get("Range")
        with self.state.lock:
            self.state.requests.append((self.path, wanted))
            cut = self.state.cut_first.pop(name, None)
        data = self.state.files.get(name)
        if data is None:
            self.send_error(404, "Not Found")
            return
        start = 0
        if wanted:
            found = re.fullmatch(r"bytes=(\d+)-", wanted.strip())
            start = int(found.group(1)) if found else 0
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        body = data[start:]
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if cut is not None:
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)
