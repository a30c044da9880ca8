"""Checks of a TSV file that polars' reader cannot make or cannot explain: lines too long to be a row, a column named
twice, a row with more fields than the header, bytes that are not UTF-8. Each reads a buffer at a time and names the
line, so a bad file is refused with where to look, never read wrongly.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import BinaryIO

from mmbatch.errors import BadInputError

MAX_LINE_BYTES = 64 << 20
"""Longest TSV line (a row with its base64 image: MMBench's largest are a few MB). The reader holds ~5x a line: a
2 GB line went over 12 GB."""
READ_ROOM_FACTOR = 4
"""Address space polars takes to read a TSV, per byte of the file (a 68 MB file: 225 MB resident at its peak, and
polars' threads reserve more address space than they use)."""


def check_line_lengths(path: Path) -> None:
    """Refuse a line longer than :data:`MAX_LINE_BYTES`; the message names the line.

    No line is longer when, from the start of any line, a line end comes within the limit: the check maps the next
    :data:`MAX_LINE_BYTES` from a line's start and goes on after the last line end in them (``rfind`` from the end of
    the window), so it reads a few pages per window, not the file (a 425 MB MMBench file: ~1 ms, against 0.09-0.1 s
    to find every line end in the mapped file). Only a refused file is read whole, to count the lines before the
    long one. The window is mapped, not read, so a limit on the address space (``ulimit -v``) still has room for it.

    Raises:
        BadInputError: naming the line and the limit.
    """
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        start = 0  # where a line begins
        while size - start > MAX_LINE_BYTES:
            mapped_from = start - start % mmap.ALLOCATIONGRANULARITY  # where a mapping may begin
            end = start + MAX_LINE_BYTES + 1  # a line of MAX_LINE_BYTES, then its line end
            with mmap.mmap(handle.fileno(), end - mapped_from, offset=mapped_from, access=mmap.ACCESS_READ) as view:
                last_end = view.rfind(b"\n", start - mapped_from)
            if last_end == -1:
                raise BadInputError(f"line {_line_number(handle, start)} is over {MAX_LINE_BYTES:,} bytes long "
                                    "(MAX_LINE_BYTES): a cell that big is no benchmark text or image; check the file",
                                    path=path)
            start = mapped_from + last_end + 1


def _line_number(handle: BinaryIO, offset: int, chunk_size: int = 1 << 24) -> int:
    """The number of the line that begins at ``offset`` of the file (1 for the first)."""
    handle.seek(0)
    breaks = 0
    while offset > 0 and (chunk := handle.read(min(chunk_size, offset))):
        breaks += chunk.count(b"\n")
        offset -= len(chunk)
    return breaks + 1


def check_room_to_read(path: Path) -> None:
    """Refuse, before polars reads it, a TSV the process's address-space limit (``ulimit -v``, ``RLIMIT_AS``) leaves
    no room for: polars aborts the process when some of its allocations are refused (a Rust abort, no message of
    mmbatch's), and returns an error for others, depending on which comes first.

    Reading takes about :data:`READ_ROOM_FACTOR` times the file's size of address space beyond what the process
    holds; without a limit (the usual case, and a container's memory limit is no address-space limit) nothing is
    checked.

    Raises:
        BadInputError: "not enough memory", with the sizes and what to do.
    """
    try:
        import resource
    except ImportError:  # not a Unix: no such limit
        return
    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    held = _address_space_held()
    if limit == resource.RLIM_INFINITY or held is None:
        return
    size = path.stat().st_size
    if held + READ_ROOM_FACTOR * size > limit:
        raise BadInputError(f"not enough memory to read this {size / 2**20:.0f} MB file: reading takes about "
                            f"{READ_ROOM_FACTOR * size / 2**20:.0f} MB beyond the {held / 2**20:.0f} MB the process "
                            f"holds, and the address-space limit (ulimit -v) is {limit / 2**20:.0f} MB; raise the "
                            "limit, or split the file", path=path)


def _address_space_held() -> int | None:
    """The process's address space in use (``VmSize``), in bytes; None where ``/proc`` does not say."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def check_unique_columns(names: list[str], path: Path) -> None:
    """Refuse a header naming a column twice: polars would rename the second (``A_duplicated_0``), and an option
    would silently vanish from the prompts.

    Raises:
        BadInputError: naming the first repeated column and how often it appears.
    """
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    repeated = next((name for name, count in seen.items() if count > 1), None)
    if repeated is not None:
        raise BadInputError(f"the header names this column {seen[repeated]} times; give each column one name",
                            path=path, column=repeated)


def unquoted(name: str) -> str:
    """A header field as the CSV reader reads it: ``"A"`` is ``A`` (a doubled quote inside is one quote)."""
    if len(name) >= 2 and name[0] == name[-1] == '"':
        return name[1:-1].replace('""', '"')
    return name


def line_with_extra_fields(path: Path, chunk_size: int = 1 << 24) -> str:
    """Where the first row with more fields than the header is (``: line 5 holds 9 fields, the header 7 columns``),
    counted as the unquoted reader splits (a tab per field); empty when none does. Read a buffer at a time."""
    expected = line = tabs = 0
    with path.open("rb") as handle:
        while chunk := handle.read(chunk_size):
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                tabs += chunk.count(b"\t", start, end)
                line += 1
                if line == 1:
                    expected = tabs
                elif tabs > expected and chunk[start:end].strip(b"\r"):
                    return f": line {line} holds {tabs + 1} fields, the header {expected + 1} columns"
                tabs, start = 0, end + 1
            tabs += chunk.count(b"\t", start)
    if line and tabs > expected:
        return f": line {line + 1} holds {tabs + 1} fields, the header {expected + 1} columns"
    return ""


def check_utf8(path: Path, chunk_size: int = 1 << 24) -> None:
    """Fail clearly on a file that is not UTF-8, naming the line of the first bad byte."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    with path.open("rb") as handle:
        while chunk := handle.read(chunk_size):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                line += chunk[: exc.start].count(b"\n")
                raise BadInputError(
                    f"the file is not UTF-8 (byte 0x{chunk[exc.start]:02x} on line {line}); re-save it as UTF-8",
                    path=path,
                ) from exc
            line += chunk.count(b"\n")
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:
            raise BadInputError("the file is not UTF-8 (it ends inside a character)", path=path) from exc
