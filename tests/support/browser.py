"""Headless Debian chromium for tests that look at pages as a person would.

``make test`` installs chromium (``make browser``), so a missing browser fails the test instead of skipping it: a
skipped browser test is how a page that never rendered once went unnoticed. Pages are opened with a virtual time
budget so their scripts finish; the DOM after the scripts ran, every console message and screenshots come back.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

CONSOLE = re.compile(r":CONSOLE(?:\(\d+\)|:\d+)\] (.*)$", re.MULTILINE)
"""A console message in chromium's stderr log (``[...:INFO:CONSOLE:12] "text", source: ...``)."""


def chromium() -> str:
    """The chromium binary; fails the test (with the command that installs it) when there is none."""
    found = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)
    if found is None:
        pytest.fail("no chromium binary: `make browser` installs Debian's chromium (make test does it first)")
    return found


@dataclass(frozen=True)
class Rendered:
    """A page after its scripts ran."""

    dom: str
    """The serialized DOM."""
    console: list[str]
    """Every console message (errors, warnings and logs): our pages write none."""


def _command(profile: Path) -> list[str]:
    return [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=8000"]


def render(url: str, profile: Path, *, width: int = 1280, height: int = 1000) -> Rendered:
    """Open ``url`` and return its DOM and console messages."""
    done = subprocess.run([*_command(profile), f"--window-size={width},{height}", "--dump-dom", url],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return Rendered(done.stdout, CONSOLE.findall(done.stderr))


def screenshot(url: str, target: Path, profile: Path, *, width: int = 1280, height: int = 1000) -> Path:
    """Save a PNG of ``url`` at the given window size."""
    done = subprocess.run([*_command(profile), f"--window-size={width},{height}", f"--screenshot={target}", url],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", done.stderr[-3000:]
    return target


class Elements(HTMLParser):
    """Collects elements by id, by class and by tag from a DOM dump, with their text."""

    def __init__(self, dom: str) -> None:
        super().__init__()
        self.by_id: dict[str, str] = {}
        self.classes: dict[str, int] = {}
        self.attributes: dict[str, dict[str, str]] = {}
        self.images: list[dict[str, str]] = []
        self._open: list[tuple[str, str | None]] = []
        self._text: dict[str, list[str]] = {}
        self.feed(dom)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {k: v or "" for k, v in attrs}
        for name in attr.get("class", "").split():
            self.classes[name] = self.classes.get(name, 0) + 1
        if tag == "img":
            self.images.append(attr)
            return
        self.attributes.setdefault(tag, attr)
        self._open.append((tag, attr.get("id")))
        if attr.get("id"):
            self._text[attr["id"]] = []

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            open_tag, element_id = self._open.pop()
            if element_id:
                self.by_id[element_id] = "".join(self._text.pop(element_id, []))
            if open_tag == tag:
                break

    def handle_data(self, data: str) -> None:
        for _, element_id in self._open:
            if element_id:
                self._text[element_id].append(data)
