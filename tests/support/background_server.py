"""A real HTTP server on 127.0.0.1, on a free port, served from a background thread: the lifecycle the tests'
stand-in servers share (each brings its own request handler and state)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class BackgroundServer:
    """Serves ``handler`` (whose instances reach this object as ``self.state``) while used as a context manager."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.lock = threading.Lock()
        bound = type("Handler", (handler,), {"state": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), bound)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
