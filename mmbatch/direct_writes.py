"""Large stage files written past the page cache (``O_DIRECT``), where the file system allows it.

A prepared MMBench file is ~400 MB of base64 pictures, written once and read once, often on another machine. Written
the usual way, the kernel copies every byte into page-cache pages it must first find; on the 2-core virtual machine
the benchmarks run on, that cost 0.5-1.2 s of system time for 425 MB whenever the memory had not been touched in the
last second (0.1 s when it had), as long as polars takes to read the whole TSV, on the core the image checks need.
Written with ``O_DIRECT`` the device takes the bytes from the writer's own buffer: 0.27-0.30 s of waiting and 0.03 s
of CPU (docs/benchmarks.md). The cost moves to a reader on the same machine, whose first read fills the cache instead
(docs/prepare.md gives both figures); a stage that writes a small file keeps the cache, which the next stage reads.

:func:`file_for` gives polars' writers either the path (a small file, or a file system without ``O_DIRECT``: tmpfs,
macOS) or a :class:`DirectFile` that gathers what polars writes into a page-aligned buffer and writes it a buffer at a
time. The unaligned end of the file, and all of it where the file system refuses an ``O_DIRECT`` write, is written
the usual way: the bytes on disk are the same either way.
"""

from __future__ import annotations

import errno
import mmap
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, cast

DIRECT_WRITE_BYTES = 64 << 20
"""Files expected to be at least this large are written with ``O_DIRECT``; smaller ones stay in the page cache for
the stage that reads them next (writing 64 MB through the cache costs at most ~0.15 s on the benchmarks' machine)."""
BUFFER_BYTES = 8 << 20
"""The aligned buffer a :class:`DirectFile` fills before each write (polars hands it ~0.5 MB at a time)."""
ALIGNMENT = 4096
"""What ``O_DIRECT`` needs the buffer, the offset and the length aligned to: Linux's page size, the largest logical
block size a device may have."""
_DIRECT_FLAG: int | None = getattr(os, "O_DIRECT", None)
"""None where the platform has no ``O_DIRECT`` (macOS, Windows)."""


class DirectFile:
    """A write-only binary file for polars' writers, written with ``O_DIRECT`` a buffer at a time.

    Use :func:`file_for`; :meth:`close` writes what is left. A refused write (full disk, file-size limit) is raised
    from :meth:`write` to polars, which reports it as its own error, and kept in :attr:`failure` for the caller to
    raise as the ``OSError`` it is.
    """

    def __init__(self, path: Path, *, buffer_bytes: int = BUFFER_BYTES, alignment: int = ALIGNMENT) -> None:
        """Open ``path`` for writing with ``O_DIRECT`` (truncating it).

        Raises:
            OSError: ``EINVAL`` where the file system refuses ``O_DIRECT`` (tmpfs), or why the file cannot be opened.
        """
        if _DIRECT_FLAG is None:
            raise OSError(errno.EINVAL, "O_DIRECT is not available on this platform", str(path))
        self.path = path
        self.alignment = alignment
        self.failure: OSError | None = None
        self._direct = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | _DIRECT_FLAG, 0o666)
        self._buffered: int | None = None  # opened for the tail, or for everything once O_DIRECT is refused
        self._buffer = mmap.mmap(-1, buffer_bytes)  # anonymous memory: page-aligned, as O_DIRECT needs
        self._view = memoryview(self._buffer)
        self._filled = 0
        self._offset = 0  # of the buffer's first byte in the file
        self._lock = threading.Lock()  # polars calls from its own threads
        self._refused = False

    @property
    def direct(self) -> bool:
        """Whether full buffers still go out with ``O_DIRECT`` (False once the file system refused one)."""
        return not self._refused

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    def write(self, data: bytes | bytearray | memoryview) -> int:
        """Append ``data``; full buffers go to the device as they fill.

        Raises:
            OSError: the file system refused a write (also kept in :attr:`failure`).
        """
        chunk = memoryview(data).cast("B")
        with self._lock:
            if self.failure is not None:
                raise self.failure
            taken = 0
            while taken < len(chunk):
                room = len(self._buffer) - self._filled
                part = chunk[taken:taken + room]
                self._view[self._filled:self._filled + len(part)] = part
                self._filled += len(part)
                taken += len(part)
                if self._filled == len(self._buffer):
                    self._write_out(self._filled)
            return len(chunk)

    def flush(self) -> None:
        """Nothing to do: bytes leave in whole buffers, and at :meth:`close`."""

    def close(self, *, abandon: bool = False) -> None:
        """Write what the buffer holds (its aligned part with ``O_DIRECT``, the rest the usual way) and close;
        with ``abandon`` (the writer failed: the file is removed), close without writing.

        Raises:
            OSError: the file system refused the write.
        """
        with self._lock:
            try:
                if self.failure is None and self._filled and not abandon:
                    self._write_out(self._filled - self._filled % self.alignment)
                    self._write_out(self._filled, direct=False)
            finally:
                for fd in (self._direct, self._buffered):
                    if fd is not None:
                        os.close(fd)
                self._view.release()
                self._buffer.close()
            if self.failure is not None and not abandon:
                raise self.failure

    def _write_out(self, length: int, *, direct: bool = True) -> None:
        """Write the buffer's first ``length`` bytes at its offset and keep the rest at its start."""
        written = 0
        try:
            while written < length:
                through_cache = not (direct and self.direct)
                fd = self._buffered_fd() if through_cache else self._direct
                with self._view[written:length] as part:
                    try:
                        written += os.pwrite(fd, part, self._offset + written)
                    except OSError as exc:
                        # A file system that opened with O_DIRECT but refuses to write that way, or an unaligned
                        # part after a short write: the rest goes the usual way, to the same bytes on disk.
                        if exc.errno != errno.EINVAL or through_cache:
                            raise
                        self._refused = True
        except OSError as exc:
            self.failure = exc
            raise
        rest = self._filled - length
        self._view[:rest] = self._view[length:self._filled]
        self._filled = rest
        self._offset += length

    def _buffered_fd(self) -> int:
        if self._buffered is None:
            self._buffered = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
        return self._buffered


@contextmanager
def file_for(path: Path, expected_bytes: int) -> Iterator[Path | IO[bytes]]:
    """What a polars writer should write ``path`` through: a :class:`DirectFile` for a file expected to be at least
    :data:`DIRECT_WRITE_BYTES` where the file system takes ``O_DIRECT``, else ``path`` itself.

    A :class:`DirectFile` is closed on the way out (its last bytes written) when the body succeeds, and its
    :attr:`~DirectFile.failure`, when a write was refused, is raised over whatever the writer raised for it.

    Raises:
        OSError: a write was refused (full disk, file-size limit).
    """
    target = _direct_file(path) if expected_bytes >= DIRECT_WRITE_BYTES else None
    if target is None:
        yield path
        return
    try:
        yield cast("IO[bytes]", target)  # polars' writers call write() and flush(), all a DirectFile has
    except BaseException:
        failure = target.failure
        target.close(abandon=True)
        if failure is not None:  # polars' error for it names no file system error
            raise failure from None
        raise
    target.close()


def _direct_file(path: Path) -> DirectFile | None:
    try:
        return DirectFile(path)
    except OSError as exc:
        if exc.errno == errno.EINVAL:  # tmpfs and some network file systems: written the usual way
            return None
        raise

