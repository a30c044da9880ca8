"""Append-only segment files: the journal's write-ahead log, one per running process.

A segment is a sequence of framed commits. Each frame is a 16-byte header (magic, payload length, CRC-32 of the
payload) followed by the payload: for magic ``MMJ1`` an Arrow IPC stream holding the committed rows (a frame), for
``MMJ2`` a JSON array of the committed rows as objects (plain records: ``infer`` commits one result at a time, and a
one-row frame plus its IPC stream cost ~10x the record's JSON). A commit is one ``write`` of header and payload
appended to the file, so its cost does not depend on how much is already there.

Reading stops at the first incomplete frame: a process killed in the middle of a write, or one still writing, leaves
a short tail, which is simply not yet committed. A complete frame whose CRC or magic is wrong cannot come from a
kill; it is reported as corruption so the journal can quarantine the file.

The writer holds an exclusive ``flock`` on its segment for as long as it is open, so another process can tell a live
segment (lock refused) from one left by a dead process (lock granted), which it may then adopt and compact.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import struct
import time
import uuid
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

SEGMENT_GLOB = "seg-*.arrows"
MAGIC = b"MMJ1"
"""A frame whose payload is an Arrow IPC stream."""
RECORDS_MAGIC = b"MMJ2"
"""A frame whose payload is a JSON array of row objects."""
HEADER = struct.Struct("<4sQI")
"""magic, payload length in bytes, CRC-32 of the payload."""
FSYNC_INTERVAL_S = 1.0
"""Appends are flushed to the OS at once (a killed process loses nothing written); they are forced to the disk at
most this long after they are made, and whenever the segment is closed, so a power cut loses about a second."""


@dataclass
class SegmentContents:
    """The committed frames of one segment file, as far as they could be read."""

    frames: list[pl.DataFrame] = field(default_factory=list)
    """The complete, intact commits, in order."""
    corruption: str | None = None
    """Why reading stopped before the end, when a complete frame was damaged (None: intact or a short tail)."""


def read_segment(path: Path, schema: Mapping[str, pl.DataType] | None = None) -> SegmentContents:
    """Every intact frame of ``path``; a short last frame is ignored, a damaged complete frame ends the read.

    Consecutive record commits come back as one frame, typed by ``schema`` (inferred from the values when None).

    Raises:
        FileNotFoundError: the file was removed (compacted by its owner) before it could be opened.
    """
    data = path.read_bytes()
    contents = SegmentContents()
    records: list[dict[str, Any]] = []
    offset = 0
    while offset + HEADER.size <= len(data):
        magic, length, crc = HEADER.unpack_from(data, offset)
        if magic not in (MAGIC, RECORDS_MAGIC):
            contents.corruption = f"bad frame header at byte {offset}"
            break
        end = offset + HEADER.size + length
        if end > len(data):
            break  # an append cut short by a kill, or still being written: not committed
        payload = data[offset + HEADER.size:end]
        if zlib.crc32(payload) != crc:
            contents.corruption = f"checksum mismatch in the frame at byte {offset}"
            break
        try:
            if magic == RECORDS_MAGIC:
                records.extend(_records(payload))
            else:
                contents.frames.extend(records_frames(records, schema))
                records = []
                contents.frames.append(pl.read_ipc_stream(io.BytesIO(payload)))
        except Exception as exc:  # polars and json raise several types for a bad payload
            contents.corruption = f"unreadable frame at byte {offset} ({type(exc).__name__})"
            break
        offset = end
    contents.frames.extend(records_frames(records, schema))
    return contents


def _records(payload: bytes) -> list[dict[str, Any]]:
    rows = json.loads(payload)
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ValueError("not a JSON array of objects")
    return rows


def records_frames(records: Sequence[Mapping[str, Any]], schema: Mapping[str, pl.DataType] | None
                   ) -> list[pl.DataFrame]:
    """``records`` as one frame typed by ``schema`` (inferred when None); no frame for no records."""
    if not records:
        return []
    if schema is None:
        return [pl.from_dicts(records, infer_schema_length=None)]
    return [pl.from_dicts(records, schema=schema)]


def frame_bytes(rows: pl.DataFrame) -> bytes:
    """``rows`` as one framed commit."""
    buffer = io.BytesIO()
    rows.write_ipc_stream(buffer)
    payload = buffer.getvalue()
    return HEADER.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload


def record_bytes(records: Sequence[Mapping[str, Any]]) -> bytes:
    """``records`` (rows as objects of str, int, float, None and lists of them) as one framed commit.

    Floats keep every bit (``repr``), including the infinities of impossible options (``-Infinity``); a numpy or
    torch scalar is written as the Python number it holds; any other value is refused (``TypeError``).
    """
    payload = _ENCODER.encode(records).encode("ascii")
    return HEADER.pack(RECORDS_MAGIC, len(payload), zlib.crc32(payload)) + payload


def _plain_number(value: Any) -> Any:
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "ndim", None) == 0:
        return item()
    raise TypeError(f"a committed value must be text, a number, null or a list of them, not {type(value).__name__}")


_ENCODER = json.JSONEncoder(separators=(",", ":"), default=_plain_number)
"""One encoder for every commit (``json.dumps`` with options builds a new one per call)."""


def lock_if_dead(path: Path) -> int | None:
    """An open descriptor holding the lock of ``path`` when no live process holds it, else None.

    The caller owns the descriptor (close it to release the lock). None also when the file is gone.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    if not path.exists():  # compacted and removed between our open and our lock
        os.close(fd)
        return None
    return fd


class SegmentWriter:
    """This process's open segment: appends framed commits, locked against adoption while open."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / f"seg-{time.time_ns():020d}-{os.getpid()}-{uuid.uuid4().hex[:8]}.arrows"
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o666)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        self._last_sync = time.monotonic()
        self.commits = 0
        """Frames appended so far."""
        self.size = 0
        """Bytes appended so far."""

    def append(self, rows: pl.DataFrame) -> None:
        """Append ``rows`` as one frame (one ``write``); synced to disk at most :data:`FSYNC_INTERVAL_S` later."""
        self._append(frame_bytes(rows))

    def append_records(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Append ``records`` as one frame (one ``write``), like :meth:`append`."""
        self._append(record_bytes(records))

    def _append(self, data: bytes) -> None:
        written = 0
        while written < len(data):  # os.write may write less than asked (signals, full pipes); never on a short frame
            written += os.write(self._fd, data[written:])
        self.commits += 1
        self.size += len(data)
        if time.monotonic() - self._last_sync >= FSYNC_INTERVAL_S:
            os.fsync(self._fd)
            self._last_sync = time.monotonic()

    def close(self) -> None:
        """Force the segment to disk and release it."""
        if self._fd < 0:
            return
        try:
            os.fsync(self._fd)
        finally:
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = -1
