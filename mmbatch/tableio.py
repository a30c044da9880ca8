"""Reading and writing stage files: TSV, Parquet (and xlsx for reading), with metadata, atomically.

One rule makes TSV and Parquet lossless both ways: an empty cell is null, except in the columns where an empty text
is a value (a model's empty answer, :data:`~mmbatch.schema.columns.EMPTY_TEXT_KEPT`), which TSV writes as ``""``
(quoted) and reads back as it is. Declared columns get their declared type
(:mod:`mmbatch.schema.columns`), list columns travel as JSON text in TSV, and every other column is text, so option
texts such as ``None`` or ``NA`` stay text. Metadata (the settings that produced the file) lives in the Parquet
key-value metadata under ``mmbatch``, or for TSV in a sidecar ``FILE.tsv.meta.json``.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch import __version__
from mmbatch.atomic_files import (  # noqa: F401  (stages import atomic_path and check_writable from here)
    atomic_path,
    check_name_fits,
    check_writable,
    locked_beside,
    through_link,
)
from mmbatch.errors import BadInputError
from mmbatch.json_text import parse_json
from mmbatch.schema.columns import EMPTY_TEXT_KEPT
from mmbatch.schema.types import restore_types
from mmbatch.secret_values import scrub_value
from mmbatch.table_writing import METADATA_KEY, Batches, while_writing, write_parquet, write_tsv
from mmbatch.tsv_checks import (
    MAX_LINE_BYTES,
    check_line_lengths,
    check_room_to_read,
    check_unique_columns,
    check_utf8,
    line_with_extra_fields,
    unquoted,
)
from mmbatch.xlsx_limits import check_xlsx

READ_FORMATS = (".tsv", ".parquet", ".xlsx")
MAX_COLUMNS = 10_000
"""Most columns a TSV may have (stage files have ~30; a million-column file took 339 s and 7.9 GB in prepare)."""
MAX_HEADER_BYTES = 4 << 20
"""Longest TSV header line read."""
WRITE_FORMATS = (".tsv", ".parquet")

@dataclass
class Table:
    """A stage file in memory: its rows and the metadata recorded by the stages that made it."""

    frame: pl.DataFrame
    """The rows."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Settings of every stage so far, e.g. ``{"stage": "predictions", "prepare": {...}, "infer": {...}}``."""


def file_format(path: str | Path, *, writing: bool = False) -> str:
    """The format of ``path`` from its extension; a usage error for anything else."""
    suffix = Path(path).suffix.lower()
    allowed = WRITE_FORMATS if writing else READ_FORMATS
    if suffix not in allowed:
        verb = "write" if writing else "read"
        raise BadInputError(f"cannot {verb} '{suffix or 'no extension'}' files; use one of {', '.join(allowed)}",
                            path=path)
    if writing:
        check_name_fits(Path(path), *([metadata_sidecar(path)] if suffix == ".tsv" else []))
    return suffix


# ----------------------------------------------------------------------------------------------------- reading


def read_table(path: str | Path) -> Table:
    """Read a stage file (or any MMBench-style TSV/xlsx) with declared columns typed.

    Raises:
        BadInputError: the file is missing, empty, not UTF-8, unparsable, or a typed column holds a bad value.
    """
    table = read_raw(path)
    if file_format(path) != ".parquet":
        table.frame = restore_types(table.frame, path=path)
    return table


def read_raw(path: str | Path) -> Table:
    """Read a file as it is: Parquet typed as stored, TSV and xlsx as text (empty cells null)."""
    path = Path(path)
    fmt = file_format(path)
    if not path.is_file():
        raise BadInputError("no such file", path=path)
    if path.stat().st_size == 0:
        raise BadInputError("the file is empty", path=path)
    if fmt == ".parquet":
        return _read_parquet(path)
    frame = _read_tsv(path) if fmt == ".tsv" else _read_xlsx(path)
    if frame.height == 0 and frame.width <= 1:
        raise BadInputError("the file has no rows", path=path)
    # A TSV cell "" (quoted) is an empty text where empty text is a value; xlsx cells have no such distinction.
    return Table(empty_text_as_null(frame, keep=EMPTY_TEXT_KEPT if fmt == ".tsv" else ()), _read_sidecar(path))


def _read_parquet(path: Path) -> Table:
    try:
        raw = pl.read_parquet_metadata(path)
        frame = pl.read_parquet(path, glob=False)  # a path is a name: "x[12].parquet" must not match x1.parquet
    except Exception as exc:  # polars raises many types for a corrupt file
        raise BadInputError(f"not a readable Parquet file ({exc})", path=path) from exc
    return Table(frame, parse_metadata(raw.get(METADATA_KEY), path))


def _read_tsv(path: Path) -> pl.DataFrame:
    with path.open("rb") as handle:
        header = handle.readline(MAX_HEADER_BYTES + 1)
        try:
            header.decode("utf-8")
        except UnicodeDecodeError:
            check_utf8(path)  # polars reads column names lossily, so a bad header must be caught here
    columns = header.count(b"\t") + 1
    if len(header) > MAX_HEADER_BYTES or columns > MAX_COLUMNS:
        raise BadInputError(f"the header holds {'over ' if len(header) > MAX_HEADER_BYTES else ''}{columns:,} "
                            f"columns or {len(header):,} bytes, over the limits of {MAX_COLUMNS:,} columns "
                            f"(MAX_COLUMNS) and {MAX_HEADER_BYTES:,} bytes", path=path)
    check_unique_columns([unquoted(name) for name in header.rstrip(b"\r\n").decode("utf-8").split("\t")], path)
    if path.stat().st_size > MAX_LINE_BYTES:  # a smaller file cannot hold a longer line
        check_line_lengths(path)
    check_room_to_read(path)
    try:
        return pl.read_csv(path, separator="\t", infer_schema=False, quote_char='"', glob=False)
    except pl.exceptions.ComputeError:
        # polars checks UTF-8 itself but only says "invalid utf-8 sequence": scan for the line only then, since a
        # scan of every file costs as much as reading it (~1 s for a 400 MB MMBench file).
        check_utf8(path)
        # A stray quote at the start of an unquoted field breaks quoted parsing (docs/rules.md §1).
        try:
            return pl.read_csv(path, separator="\t", infer_schema=False, quote_char=None, glob=False)
        except Exception as exc:
            raise BadInputError(f"not a readable TSV file ({_first_line(exc)}{line_with_extra_fields(path)})",
                                path=path) from exc
    except pl.exceptions.NoDataError as exc:
        raise BadInputError("the file is empty", path=path) from exc


def _read_xlsx(path: Path) -> pl.DataFrame:
    check_xlsx(path)  # what the zip really unpacks to, before the reader trusts its directory
    try:
        frame = pl.read_excel(path, infer_schema_length=0)
        if any(_RENAMED.fullmatch(name) for name in frame.columns):  # the reader renames a repeated name "A_1"
            header = pl.read_excel(path, has_header=False, read_options={"n_rows": 1}, infer_schema_length=0)
            check_unique_columns(["" if v is None else str(v) for v in header.row(0)], path)
    except BadInputError:
        raise
    except BaseException as exc:  # the Rust reader panics (PanicException derives from BaseException) on bad files
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise BadInputError(f"not a readable xlsx file ({_first_line(exc)})", path=path) from exc
    return frame.with_columns(pl.col(c).cast(pl.String) for c in frame.columns)


_RENAMED = re.compile(r".+_\d+")
"""How the xlsx reader names the second of two columns named alike (``A`` -> ``A_1``)."""


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _read_sidecar(path: Path) -> dict[str, Any]:
    """The metadata of a TSV file; refused when the sidecar was written for another version of the file."""
    sidecar = metadata_sidecar(path)
    if not sidecar.is_file():
        return {}
    metadata = parse_metadata(sidecar.read_bytes(), sidecar)
    written_for = metadata.pop(SIDECAR_FILE_KEY, None)
    if isinstance(written_for, dict) and written_for.get("bytes") != path.stat().st_size:
        raise BadInputError(
            f"the metadata sidecar {sidecar.name} was written for a {written_for.get('bytes')}-byte file, but the file "
            f"has {path.stat().st_size} bytes: it belongs to another version of the file (an interrupted write or a "
            "partial copy); restore the matching pair, or remove the sidecar to use the file without metadata",
            path=path)
    return metadata


STAGE_SECTIONS = ("prepare", "infer", "extract", "score", "import", "export", "resume")
"""Metadata keys that hold a section (a JSON object) wherever they appear at the top level."""


def parse_metadata(raw: str | bytes | None, where: Path) -> dict[str, Any]:
    """The mmbatch metadata as a dict, or a clear error for metadata that is not JSON or not shaped as written: the
    one reader of every file's metadata (stage files, their sidecars, metrics tables)."""
    if raw is None:
        return {}
    try:
        metadata = parse_json(raw, finite_numbers=False)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadInputError(f"unreadable mmbatch metadata ({_first_line(exc)})", path=where) from exc
    if not isinstance(metadata, dict):
        raise BadInputError(f"the mmbatch metadata is a JSON {type(metadata).__name__}, not an object", path=where)
    if metadata.get("stage") is not None and not isinstance(metadata["stage"], str):
        raise BadInputError(f"the mmbatch metadata key 'stage' holds a {type(metadata['stage']).__name__}, not a "
                            "name (the file was edited or written by another tool)", path=where)
    for key in STAGE_SECTIONS:
        if key in metadata and metadata[key] is not None and not isinstance(metadata[key], dict):
            raise BadInputError(f"the mmbatch metadata key {key!r} holds a {type(metadata[key]).__name__}, not an "
                                "object (the file was edited or written by another tool)", path=where)
    return metadata


def metadata_sidecar(path: str | Path) -> Path:
    """Where the metadata of a TSV file lives."""
    path = Path(path)
    return path.with_name(path.name + ".meta.json")


def read_metadata(path: str | Path) -> dict[str, Any]:
    """Only the metadata of a stage file, without reading its rows."""
    path = Path(path)
    if file_format(path) == ".parquet":
        try:
            raw = pl.read_parquet_metadata(path)
        except Exception as exc:  # polars raises several types for a damaged file
            raise BadInputError(f"not a readable Parquet file ({_first_line(exc)})", path=path) from exc
        return parse_metadata(raw.get(METADATA_KEY), path)
    return _read_sidecar(path)


# ----------------------------------------------------------------------------------------------------- writing


def canonical(frame: pl.DataFrame) -> pl.DataFrame:
    """The canonical form every writer stores: empty text is null (but where it is a value, :data:`EMPTY_TEXT_KEPT`),
    so TSV and Parquet round-trip exactly."""
    return empty_text_as_null(frame, keep=EMPTY_TEXT_KEPT)


def empty_text_as_null(frame: pl.DataFrame, *, keep: tuple[str, ...]) -> pl.DataFrame:
    """``frame`` with the empty strings of its text columns made null, but in the columns named in ``keep``."""
    text = pl.col(pl.String).exclude(*keep) if keep else pl.col(pl.String)
    # only the columns that hold an empty text are rewritten: rewriting every text column copied all of them (+250
    # MiB at a million MMBench rows) to change none
    found = frame.select((text == "").any())
    holding = [name for name in found.columns if found[name][0]]
    return frame.with_columns(pl.col(holding).replace("", None)) if holding else frame


def write_table(frame: pl.DataFrame, path: str | Path, metadata: dict[str, Any] | None = None, *,
                alongside: Callable[[], None] | None = None) -> Path:
    """Write ``frame`` to ``path`` (format from the extension) under a temporary name, then rename it.

    A crash or a bad row never leaves a half-written file at ``path``. The metadata is scrubbed of the API keys in
    use; the cells are data, written as they are (server replies are scrubbed where they arrive).

    Args:
        frame: the rows.
        path: the file to write.
        metadata: the settings to record beside the rows.
        alongside: work to do while polars writes (in another thread: its writer releases the GIL), such as checks
            that change no row; the file is put in place only when it returns, and what it raises is raised.
    """
    recorded = metadata or {}
    return write_batches(Batches.of(frame), path, lambda: recorded, alongside=alongside)


def write_batches(batches: Batches, path: str | Path, metadata: Callable[[], dict[str, Any]], *,
                  alongside: Callable[[], None] | None = None) -> Path:
    """Write a table made batch by batch (:class:`~mmbatch.table_writing.Batches`) as :func:`write_table` writes a
    frame: atomically, in the canonical form, with ``metadata()`` (asked for once every batch is made: a stage may
    record what it totalled over them) scrubbed of the API keys in use."""
    path = through_link(Path(path))
    fmt = file_format(path, writing=True)
    path.parent.mkdir(parents=True, exist_ok=True)

    def recorded() -> dict[str, Any]:
        return scrub_value({"mmbatch_version": __version__, **metadata()})

    if fmt == ".parquet":
        with atomic_path(path) as tmp:
            while_writing(lambda: write_parquet(batches.each(canonical), tmp, recorded), alongside)
    else:
        _write_tsv_pair(batches, path, recorded, alongside)
    return path


SIDECAR_FILE_KEY = "written_for"
"""Sidecar key recording the byte size of the TSV it was written with, so a mismatched pair is detected."""


def _write_tsv_pair(batches: Batches, path: Path, metadata: Callable[[], dict[str, Any]],
                    alongside: Callable[[], None] | None = None) -> None:
    """Write a TSV and its sidecar so that no interruption leaves a file beside a sidecar that is not its own.

    Both are written in full under temporary names first (a full disk fails here, changing nothing). Then the old
    sidecar is removed, the TSV renamed into place, and the new sidecar last: a kill in between leaves a TSV without
    metadata, which no stage resumes from, never the old rows under new metadata. The sidecar also records the TSV's
    size, checked on every read.
    """
    sidecar = metadata_sidecar(path)
    rows = [0]
    counting = threading.Lock()  # the writer may make batches from several threads

    def text(frame: pl.DataFrame) -> pl.DataFrame:
        with counting:
            rows[0] += frame.height
        return tsv_text_frame(canonical(frame))

    with locked_beside(path) as table_tmp, locked_beside(sidecar) as sidecar_tmp:
        while_writing(lambda: write_tsv(batches.each(text), table_tmp), alongside)
        recorded = {**metadata(), SIDECAR_FILE_KEY: {"bytes": table_tmp.stat().st_size, "rows": rows[0]}}
        sidecar_tmp.write_text(json.dumps(recorded, indent=2, ensure_ascii=False, default=str) + "\n",
                               encoding="utf-8")
        sidecar.unlink(missing_ok=True)
        os.replace(table_tmp, path)
        os.replace(sidecar_tmp, sidecar)


def tsv_text_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with list columns as JSON text, ready for a TSV writer."""
    lists = [name for name, dtype in frame.schema.items() if isinstance(dtype, pl.List)]
    if not lists:
        return frame
    return frame.with_columns(
        pl.when(pl.col(name).is_null()).then(None).otherwise(
            pl.col(name).map_elements(lambda v: json.dumps(list(v)), return_dtype=pl.String)
        ).alias(name)
        for name in lists
    )
