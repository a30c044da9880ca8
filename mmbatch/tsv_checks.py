"""Checks of a TSV file that polars' reader cannot make or cannot explain: lines too long to be a row, a column named
twice, a row with more fields than the header, bytes that are not UTF-8. Each reads a buffer at a time and names the
line, so a bad file is refused with where to look, never read wrongly.
"""

from __future__ import annotations

import mmap
from pathlib import Path

from mmbatch.errors import BadInputError

MAX_LINE_BYTES = 64 << 20
"""Longest TSV line (a row with its base64 image: MMBench's largest are a few MB). The reader holds ~5x a line: a
2 GB line went over 12 GB."""


def check_line_lengths(path: Path) -> None:
    """Refuse a line longer than :data:`MAX_LINE_BYTES`; the message names the line.

    The file is mapped, not read: each line end is found in the page cache (``memchr`` over at most the limit), so
    nothing is copied (reading it a buffer at a time cost 0.22 s of 0.73 for a 425 MB MMBench file).

    Raises:
        BadInputError: naming the line and the limit.
    """
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
        start, line, size = 0, 1, len(view)
        while start < size:
            end = view.find(b"\n", start, start + MAX_LINE_BYTES + 1)
            if end == -1:
                if size - start <= MAX_LINE_BYTES:
                    return  # the last line, without a line break
                raise BadInputError(f"line {line} is over {MAX_LINE_BYTES:,} bytes long (MAX_LINE_BYTES): a cell "
                                    "that big is no benchmark text or image; check the file", path=path)
            start, line = end + 1, line + 1


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
