"""Resumable progress: finished rows committed durably, keyed by ``index``, at a cost per row that stays flat.

A stage that may be killed at any moment (``infer``, ``extract``) commits each finished batch to ``OUTPUT.partial/``:

- each process appends its commits to its own segment file (:mod:`mmbatch.journal_segments`): one ``write`` per
  commit, whatever the number of rows already done;
- every :data:`ROTATE_COMMITS` commits (or :data:`ROTATE_BYTES`), the process writes the rows of its segment as one
  Parquet part (fsynced, renamed into place) and removes the segment, so a rerun reads a few large parts, and each
  row is rewritten at most once: the total cost is linear in the rows;
- a segment left by a killed process (its lock is free) is adopted by the next run the same way.

Only progress this tool recorded for the same settings is resumed. ``settings.json`` holds the settings of the
progress; a finished output counts only when its metadata records the same settings. An output or a progress folder
without recorded settings (copied, rewritten by another tool, made by ``mmbatch import``) is refused unless forced.
A part or segment that cannot be read is moved to ``OUTPUT.partial/quarantine/`` and its rows are run again; a
progress folder whose settings file is unreadable is set aside whole.

Sharded runs share one progress folder while each writes its own output, so rows finished under one shard count are
found again by a later run with another count. Concurrent processes never write the same file, each compacts only
its own (or dead) segments, and a reader whose file was compacted away while it read lists the folder again.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.atomic_files import check_name_fits
from mmbatch.errors import BadInputError, ProgressRefusedError
from mmbatch.journal_segments import SEGMENT_GLOB, SegmentWriter, lock_if_dead, read_segment, records_frames
from mmbatch.tableio import atomic_path, read_metadata, read_table

SETTINGS_FILE = "settings.json"
PART_GLOB = "part-*.parquet"
QUARANTINE_DIR = "quarantine"
ROTATE_COMMITS = 4096
"""Commits after which a process turns its segment into a Parquet part."""
ROTATE_BYTES = 64 << 20
"""Segment size after which it is turned into a part whatever the number of commits."""
READ_ATTEMPTS = 50
"""Times a reader lists the folder again when a file it listed was compacted away meanwhile."""


def partial_dir(output: str | Path) -> Path:
    """The folder of committed progress for ``output``."""
    output = Path(output)
    return output.with_name(output.name + ".partial")


class RowJournal:
    """The committed rows of one resumable run.

    Args:
        output: the stage's final output path.
        settings: everything that changes results (input fingerprint, model, generation settings...).
        force: start afresh instead of refusing when recorded settings differ or are missing.
        settings_key: the metadata key under which a finished output records ``settings``; a dotted key
            (``infer.resume``) reaches into nested metadata.
        progress_dir: the folder of progress; ``OUTPUT.partial`` by default. Shards of one run pass the same folder.
        finished: other finished files whose rows count as done when their recorded settings match (e.g. the
            unsharded output, for a sharded rerun); files with other or no settings are ignored.
        columns: the columns the stage commits; only these are read from finished outputs (None: all).
        schema: the types of the rows committed as records (:meth:`commit_records`); None infers them.
    """

    def __init__(self, output: str | Path, settings: dict[str, Any], *, force: bool = False,
                 settings_key: str = "resume", progress_dir: str | Path | None = None,
                 finished: tuple[str | Path, ...] = (), columns: tuple[str, ...] | None = None,
                 schema: Mapping[str, pl.DataType] | None = None) -> None:
        self.output = Path(output)
        self.dir = Path(progress_dir) if progress_dir is not None else partial_dir(self.output)
        check_name_fits(self.output, self.dir)
        self.settings = json.loads(json.dumps(settings, default=str))
        self.settings_key = settings_key
        self.finished = tuple(Path(p) for p in finished if Path(p) != self.output)
        self.columns = columns
        self.schema = dict(schema) if schema is not None else None
        self.notices: list[str] = []
        """What was found wrong and set aside (quarantined files), for the stage to print."""
        self._writer: SegmentWriter | None = None
        self._segment: list[pl.DataFrame | list[Mapping[str, Any]]] = []
        """This process's commits since its segment was opened: frames, and records as committed."""
        self._open(force)

    # ------------------------------------------------------------------------------------------------- opening

    def _open(self, force: bool) -> None:
        for where, recorded in self._recorded_settings():
            if recorded == self.settings:
                continue
            if not force:
                raise self._refusal(where, recorded)
            # Discard only what was made with other settings: another shard's output or the shared progress of
            # runs that already use the new settings stay.
            if where == self.dir:
                shutil.rmtree(self.dir, ignore_errors=True)
            else:
                self.output.unlink(missing_ok=True)
        self.dir.mkdir(parents=True, exist_ok=True)
        settings_file = self.dir / SETTINGS_FILE
        if not settings_file.is_file():
            with atomic_path(settings_file) as tmp:
                tmp.write_text(json.dumps(self.settings, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        self._adopt_dead_segments()

    def _refusal(self, where: Path, recorded: dict[str, Any] | None) -> ProgressRefusedError:
        if recorded is None:
            return ProgressRefusedError(where, None, path=self.output)
        keys = set(recorded) | set(self.settings)
        changed = tuple(sorted(k for k in keys if recorded.get(k) != self.settings.get(k)))
        return ProgressRefusedError(where, changed, path=self.output)

    def _recorded_settings(self) -> list[tuple[Path, dict[str, Any] | None]]:
        """(where, settings or None when none are recorded) for the progress folder and the finished output."""
        recorded: list[tuple[Path, dict[str, Any] | None]] = []
        if self.dir.is_dir():
            from_dir = self._settings_of_dir()
            if from_dir is not None or self._has_progress_files():
                recorded.append((self.dir, from_dir))
        if self.output.is_file():
            recorded.append((self.output, self._settings_of(self.output)))
        return recorded

    def _settings_of_dir(self) -> dict[str, Any] | None:
        """The recorded settings of the folder; an unreadable settings file sets the whole folder aside."""
        settings_file = self.dir / SETTINGS_FILE
        if not settings_file.is_file():
            return None
        try:
            recorded = json.loads(settings_file.read_text(encoding="utf-8"))
            if not isinstance(recorded, dict):
                raise ValueError("not a JSON object")
            return recorded
        except (ValueError, UnicodeDecodeError, OSError) as exc:
            aside = self.dir.with_name(f"{self.dir.name}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
            os.replace(self.dir, aside)
            self._notice(f"the progress settings {settings_file} are unreadable ({type(exc).__name__}); "
                         f"that progress was moved to {aside} and its rows will be run again")
            return None

    def _has_progress_files(self) -> bool:
        return any(self.dir.glob(PART_GLOB)) or any(self.dir.glob(SEGMENT_GLOB))

    def _settings_of(self, path: Path) -> dict[str, Any] | None:
        try:
            value: Any = read_metadata(path)
        except (BadInputError, ValueError, OSError):
            return None
        for key in self.settings_key.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        return dict(value) if isinstance(value, dict) and value else None

    def _adopt_dead_segments(self) -> None:
        """Turn segments of killed processes into parts, so reruns after many kills still read few files."""
        for segment in sorted(self.dir.glob(SEGMENT_GLOB)):
            fd = lock_if_dead(segment)
            if fd is None:
                continue  # a live process's segment, or already adopted by another
            try:
                contents = read_segment(segment, self.schema)
                if contents.frames:
                    self._write_part(pl.concat(contents.frames, how="diagonal_relaxed"))
                if contents.corruption is not None:
                    self._quarantine(segment, contents.corruption)
                else:
                    segment.unlink(missing_ok=True)
            finally:
                os.close(fd)

    def _quarantine(self, path: Path, reason: str) -> None:
        target = self.dir / QUARANTINE_DIR
        target.mkdir(exist_ok=True)
        try:
            os.replace(path, target / path.name)
        except FileNotFoundError:
            return
        self._notice(f"progress file {path.name} is damaged ({reason}); moved to {target}, its unreadable rows "
                     "will be run again")

    def _notice(self, line: str) -> None:
        from mmbatch.console import error_console

        self.notices.append(line)
        error_console.print(f"warning: {line}", markup=False, highlight=False, soft_wrap=True)

    # ------------------------------------------------------------------------------------------------- reading

    def rows(self, *, only: pl.Series | None = None, columns: Sequence[str] | None = None) -> pl.DataFrame | None:
        """Every committed row, one per index: finished files first, then parts and segments in commit order.

        The last copy of each index wins, except that a copy without an error beats one with an error (a row that
        succeeded in one shard run stays done whatever another run recorded for it). ``only``: the rows of these
        indices alone, the others left out as each file is read (which copy wins is decided per index, so it is the
        same choice); ``columns``: these columns alone (those present), instead of the journal's.
        """
        frames = [self._finished_rows(path, only, columns) for path in self._finished_files()]
        frames.extend(_narrowed(frame, only, columns) for frame in self._progress_frames())
        if not frames:
            return None
        rows = frames[0] if len(frames) == 1 else pl.concat(frames, how="diagonal_relaxed")
        if rows["index"].n_unique() == rows.height:  # one copy of each row (a finished output alone): no choice
            return rows
        if "error" not in rows.columns:
            return rows.unique("index", keep="last", maintain_order=True)
        return (rows.with_columns(pl.int_range(pl.len()).alias("_commit_order"))
                .sort(pl.col("error").is_null(), "_commit_order")
                .unique("index", keep="last", maintain_order=True)
                .sort("_commit_order")
                .drop("_commit_order"))

    def _finished_rows(self, path: Path, only: pl.Series | None, columns: Sequence[str] | None) -> pl.DataFrame:
        wanted = columns if columns is not None else self.columns
        if wanted is not None and path.suffix.lower() == ".parquet":
            present = set(pl.read_parquet_schema(path))
            # filtered as it is read: a rerun over a finished output of a million rows wants the few the rules
            # leave to the judge, not all of them (+60 MiB of TextVQA's notes)
            scan = pl.scan_parquet(path, glob=False).select([c for c in wanted if c in present])
            return (scan if only is None else scan.filter(pl.col("index").is_in(only.implode()))).collect()
        return _narrowed(read_table(path).frame, only, wanted)

    def _progress_frames(self) -> list[pl.DataFrame]:
        """The frames of every part and segment; lists again when a file vanishes (compacted by its owner)."""
        for _ in range(READ_ATTEMPTS):
            frames: list[pl.DataFrame] = []
            try:
                for part in sorted(self.dir.glob(PART_GLOB)):
                    frames.extend(self._read_part(part))
                for segment in sorted(self.dir.glob(SEGMENT_GLOB)):
                    contents = read_segment(segment, self.schema)
                    frames.extend(contents.frames)
            except FileNotFoundError:
                continue
            return frames
        raise RuntimeError(f"the progress folder {self.dir} kept changing while it was read")

    def _read_part(self, part: Path) -> list[pl.DataFrame]:
        try:
            return [pl.read_parquet(part, glob=False)]  # the folder's name holds the output's: it may hold "["
        except FileNotFoundError:
            raise
        except Exception as exc:  # polars/pyarrow raise many types for a damaged file
            if not part.exists():
                raise FileNotFoundError(part) from exc
            self._quarantine(part, f"unreadable Parquet: {type(exc).__name__}")
            return []

    def _finished_files(self) -> list[Path]:
        files = [path for path in self.finished if path.is_file() and self._settings_of(path) == self.settings]
        if self.output.is_file() and self._settings_of(self.output) == self.settings:
            files.append(self.output)
        return files

    def done_indices(self, *, error_column: str = "error") -> set[int]:
        """Indices of committed rows that did not fail (``error_column`` null)."""
        rows = self.rows()
        if rows is None:
            return set()
        if error_column in rows.columns:
            rows = rows.filter(pl.col(error_column).is_null())
        return set(rows["index"].to_list())

    # ------------------------------------------------------------------------------------------------- writing

    def commit(self, rows: pl.DataFrame) -> None:
        """Record finished ``rows`` durably: one append to this process's segment.

        Every :data:`ROTATE_COMMITS` commits the segment becomes one Parquet part: the part is written and synced before
        the segment is removed, so a kill in between leaves duplicates, which :meth:`rows` drops.
        """
        if rows.height == 0:
            return
        writer = self._open_writer()
        writer.append(rows)
        self._segment.append(rows)
        self._rotate_if_full(writer)

    def commit_records(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Record finished rows given as plain records (column -> value), as :meth:`commit` records a frame.

        The cheap way for a stage that commits a row or two at a time: no frame is built until the segment becomes
        a Parquet part, when all its records make one frame (typed by the journal's ``schema``).

        Raises:
            ValueError: a record holds a column the journal's ``schema`` does not declare (building the frame would
                drop it silently).
        """
        if not records:
            return
        if self.schema is not None:
            for record in records:
                if not record.keys() <= self.schema.keys():
                    unknown = sorted(set(record) - set(self.schema))
                    raise ValueError(f"committed record has columns the journal does not declare: {unknown}")
        kept = list(records)  # a copy: later records extend this list in the segment
        writer = self._open_writer()
        writer.append_records(kept)
        if self._segment and isinstance(self._segment[-1], list):
            self._segment[-1].extend(kept)
        else:
            self._segment.append(kept)
        self._rotate_if_full(writer)

    def _open_writer(self) -> SegmentWriter:
        if self._writer is None:
            self._writer = SegmentWriter(self.dir)
        return self._writer

    def _rotate_if_full(self, writer: SegmentWriter) -> None:
        if writer.commits >= ROTATE_COMMITS or writer.size >= ROTATE_BYTES:
            self.seal()

    def seal(self) -> None:
        """Turn this process's segment into a part and close it (a later commit opens a new segment)."""
        if self._writer is None:
            return
        writer, pieces = self._writer, self._segment
        self._writer, self._segment = None, []
        frames = [frame for piece in pieces
                  for frame in (records_frames(piece, self.schema) if isinstance(piece, list) else [piece])]
        # No frames when the segment was opened by a commit that never finished (a SIGTERM, or a value the encoder
        # refused, between opening the file and appending to it): there is no part to write, only the file to remove.
        if frames:
            self._write_part(pl.concat(frames, how="diagonal_relaxed"))
        writer.close()
        writer.path.unlink(missing_ok=True)

    def _write_part(self, rows: pl.DataFrame) -> Path:
        path = self.dir / f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
        with atomic_path(path) as tmp:
            rows.write_parquet(tmp)
            with tmp.open("rb") as handle:
                os.fsync(handle.fileno())
        _sync_directory(self.dir)
        return path

    def discard_if_empty(self) -> None:
        """Remove the progress folder when nothing was ever committed to it (a run refused before its first row)."""
        if self._writer is None and not self._has_progress_files():
            shutil.rmtree(self.dir, ignore_errors=True)

    def close(self) -> None:
        """Remove the progress once the final output has been written."""
        if self._writer is not None:
            self._writer.close()
            self._writer, self._segment = None, []
        shutil.rmtree(self.dir, ignore_errors=True)


def committed_rows(progress_dir: str | Path, schema: Mapping[str, pl.DataType] | None = None
                   ) -> pl.DataFrame | None:
    """The rows committed under ``progress_dir`` as they are on disk now (every copy), without changing anything.

    For tools and tests watching a run from outside; a run reads its progress through :class:`RowJournal`.
    ``schema`` types rows committed as records (inferred from their values when None).
    """
    directory = Path(progress_dir)
    for _ in range(READ_ATTEMPTS):
        frames: list[pl.DataFrame] = []
        try:
            frames += [pl.read_parquet(part, glob=False) for part in sorted(directory.glob(PART_GLOB))]
            for segment in sorted(directory.glob(SEGMENT_GLOB)):
                frames += read_segment(segment, schema).frames
        except FileNotFoundError:
            continue
        return pl.concat(frames, how="diagonal_relaxed") if frames else None
    return None


def _sync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (the rename itself lives in the folder's own blocks)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _narrowed(frame: pl.DataFrame, only: pl.Series | None, columns: Sequence[str] | None) -> pl.DataFrame:
    """``frame``'s rows of the indices ``only`` (all when None) and its ``columns`` among those it has (all when
    None)."""
    if only is not None:
        frame = frame.filter(pl.col("index").is_in(only.implode()))
    return frame if columns is None else frame.select([c for c in columns if c in frame.columns])
