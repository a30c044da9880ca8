"""A persistent cache of judge replies: SQLite, keyed by the judge + exact prompt text (+ try and temperature).

The judge is its identity (:func:`judge_identity`): the model name *and* the server that serves it, since two servers
may serve one model name and answer differently (a reply of one must never stand in for the other's). The exact
prompt text carries the prompt template. A rerun, a resumed run, or another file holding the same rows asks the
judge nothing it has already asked. Each reply is committed as soon as it arrives (WAL journal), so even a
``kill -9`` loses no paid-for answer. The key includes the try number because the judge is asked up to 3 times with
the same prompt: the second try must not return the first try's unusable reply.
"""

from __future__ import annotations

import errno
import hashlib
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mmbatch.errors import BadInputError
from mmbatch.secret_values import scrub_text
from mmbatch.server_urls import without_credentials

DEFAULT_CACHE_NAME = "mmbatch-judge-cache.sqlite"
"""The cache's file name beside the output when ``--judge-cache`` is not given (shared by outputs of one folder)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    model TEXT NOT NULL, -- the judge: judge_identity(), the model on its server
    prompt_sha256 TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    temperature REAL NOT NULL,
    prompt TEXT NOT NULL,
    reply TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (model, prompt_sha256, attempt, temperature)
)
"""


_COLUMNS = ["model", "prompt_sha256", "attempt", "temperature", "prompt", "reply", "prompt_tokens",
            "completion_tokens", "created_at"]


@dataclass(frozen=True)
class CachedReply:
    """A judge reply stored earlier."""

    text: str
    """The reply text."""
    prompt_tokens: int
    """Input tokens the original call used."""
    completion_tokens: int
    """Output tokens the original call used."""


def judge_identity(model: str, server: str) -> str:
    """The cache's key for a judge: ``model @ server`` (the server's URL without credentials, which change nothing
    about the replies and must not be stored)."""
    return f"{model} @ {without_credentials(server)}"


def default_cache_path(output: str | Path) -> Path:
    """Where the cache lives when no path is given: beside the output."""
    return Path(output).parent / DEFAULT_CACHE_NAME


class JudgeCache:
    """The judge replies stored in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # committed replies survive a killed process
            self._db.execute(_SCHEMA)
            columns = [row[1] for row in self._db.execute("PRAGMA table_info(replies)")]
        except (sqlite3.Error, OSError) as exc:
            raise BadInputError(f"cannot open the judge cache ({exc})", path=self.path) from exc
        if columns != _COLUMNS:
            self._db.close()
            raise BadInputError("this SQLite file has a 'replies' table that is not an mmbatch judge cache (columns "
                                f"{', '.join(columns)}); give another --judge-cache", path=self.path)

    def get(self, judge: str, prompt: str, attempt: int, temperature: float) -> CachedReply | None:
        """The stored reply of ``judge`` (:func:`judge_identity`) to this exact request, or None.

        Raises:
            OSError: the file system failed the read (see :meth:`_storage`).
        """
        with self._storage():
            row = self._db.execute(
                "SELECT prompt, reply, prompt_tokens, completion_tokens FROM replies "
                "WHERE model = ? AND prompt_sha256 = ? AND attempt = ? AND temperature = ?",
                (judge, _sha256(prompt), attempt, float(temperature)),
            ).fetchone()
        if row is None or row[0] != prompt:  # the stored text must match exactly, not only its hash
            return None
        return CachedReply(row[1], row[2], row[3])

    def put(self, judge: str, prompt: str, attempt: int, temperature: float, reply: str, *,
            prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        """Store a reply (committed at once); an empty reply is not stored, so a rerun asks again.

        Raises:
            OSError: the disk is full or failed the write (see :meth:`_storage`).
        """
        if not reply.strip():
            return
        with self._storage():
            self._db.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (judge, _sha256(prompt), attempt, float(temperature), prompt, scrub_text(reply), prompt_tokens,
                 completion_tokens, time.time()),
            )

    @contextmanager
    def _storage(self) -> Iterator[None]:
        """SQLite's "database or disk is full" and "disk I/O error" as the ``OSError`` (``ENOSPC``, ``EIO``) they
        are, naming the cache file, so that the command ends with one line (exit 2) like any other full disk."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            name = str(getattr(exc, "sqlite_errorname", ""))  # Python 3.11+; the message is the same on 3.10
            if name == "SQLITE_FULL" or "disk is full" in str(exc):
                raise OSError(errno.ENOSPC, f"the judge cache cannot grow ({exc})", str(self.path)) from exc
            if name.startswith("SQLITE_IOERR") or "disk I/O error" in str(exc):
                raise OSError(errno.EIO, f"the judge cache cannot be read or written ({exc})", str(self.path)) \
                    from exc
            raise

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        self._db.close()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
