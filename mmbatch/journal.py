"""Resumable progress: finished rows committed in small atomic parts, keyed by ``index``.

A stage that may be killed at any moment (``infer``, ``extract``) writes each finished batch as one Parquet part
under ``OUTPUT.partial/`` (written under a temporary name, then renamed, so a part is either whole or absent). A
rerun with the same output path reads the parts, and the finished output itself when it exists, and runs only the
rows that are missing or failed. The settings of the run are recorded in ``settings.json``; a rerun whose settings
differ is refused unless forced.

Sharded runs share one progress folder (``progress_dir``) while each writes its own output, so rows finished under
one shard count are found again by a later run with another count: progress is keyed by ``index`` only. Parts are
named by a nanosecond stamp and a random suffix, so concurrent shard processes never write the same part.
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.tableio import atomic_path, read_metadata, read_table

SETTINGS_FILE = "settings.json"
COMPACT_EVERY = 200
"""Parts a run writes before it combines them into one."""


def partial_dir(output: str | Path) -> Path:
    """The folder of committed parts for ``output``."""
    output = Path(output)
    return output.with_name(output.name + ".partial")


class RowJournal:
    """The committed rows of one resumable run.

    Args:
        output: the stage's final output path.
        settings: everything that changes results (input fingerprint, model, generation settings...).
        force: start afresh instead of refusing when recorded settings differ.
        settings_key: the metadata key under which a finished output records ``settings``; a dotted key
            (``infer.resume``) reaches into nested metadata.
        progress_dir: the folder of parts; ``OUTPUT.partial`` by default. Shards of one run pass the same folder.
        finished: other finished files whose rows count as done when their recorded settings match (e.g. the
            unsharded output, for a sharded rerun); files with other settings are ignored.
    """

    def __init__(self, output: str | Path, settings: dict[str, Any], *, force: bool = False,
                 settings_key: str = "resume", progress_dir: str | Path | None = None,
                 finished: tuple[str | Path, ...] = ()) -> None:
        self.output = Path(output)
        self.dir = Path(progress_dir) if progress_dir is not None else partial_dir(self.output)
        self.settings = json.loads(json.dumps(settings, default=str))
        self.settings_key = settings_key
        self.finished = tuple(Path(p) for p in finished if Path(p) != self.output)
        self._own_parts: list[tuple[Path, pl.DataFrame]] = []
        self._open(force)

    def _open(self, force: bool) -> None:
        for where, recorded in self._recorded_settings():
            if recorded == self.settings:
                continue
            if not force:
                keys = set(recorded) | set(self.settings)
                changed = sorted(k for k in keys if recorded.get(k) != self.settings.get(k))
                raise BadInputError(
                    f"earlier progress for this output ({where}) was made with other settings "
                    f"({', '.join(changed)} differ); use a new --output, or --force to discard it",
                    path=self.output,
                )
            # Discard only what was made with other settings: another shard's output or the shared progress of
            # runs that already use the new settings stay.
            if where == self.dir:
                shutil.rmtree(self.dir, ignore_errors=True)
            else:
                self.output.unlink(missing_ok=True)
        self.dir.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.dir / SETTINGS_FILE) as tmp:
            tmp.write_text(json.dumps(self.settings, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    def _recorded_settings(self) -> list[tuple[Path, dict[str, Any]]]:
        """(where, settings) for the progress folder and the finished output, those that exist."""
        recorded = []
        settings_file = self.dir / SETTINGS_FILE
        if settings_file.is_file():
            recorded.append((self.dir, dict(json.loads(settings_file.read_text(encoding="utf-8")))))
        if self.output.is_file():
            from_output = self._settings_of(self.output)
            if from_output is not None:
                recorded.append((self.output, from_output))
        return recorded

    def _settings_of(self, path: Path) -> dict[str, Any] | None:
        value: Any = read_metadata(path)
        for key in self.settings_key.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        return dict(value) if isinstance(value, dict) and value else None

    def rows(self) -> pl.DataFrame | None:
        """Every committed row, one per index: finished files first, then parts in commit order.

        The last copy of each index wins, except that a copy without an error beats one with an error (a row that
        succeeded in one shard run stays done whatever another run recorded for it).
        """
        frames = [read_table(path).frame for path in self._finished_files()]
        frames.extend(pl.read_parquet(part) for part in sorted(self.dir.glob("part-*.parquet")))
        if not frames:
            return None
        rows = pl.concat(frames, how="diagonal_relaxed")
        if "error" not in rows.columns:
            return rows.unique("index", keep="last", maintain_order=True)
        return (rows.with_columns(pl.int_range(pl.len()).alias("_commit_order"))
                .sort(pl.col("error").is_null(), "_commit_order")
                .unique("index", keep="last", maintain_order=True)
                .sort("_commit_order")
                .drop("_commit_order"))

    def _finished_files(self) -> list[Path]:
        files = [path for path in self.finished if path.is_file() and self._settings_of(path) == self.settings]
        if self.output.is_file():
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

    def commit(self, rows: pl.DataFrame) -> None:
        """Record finished ``rows`` durably (one atomic part file).

        Every :data:`COMPACT_EVERY` commits, this run's own parts are rewritten as one part, so a run that commits
        after every API response does not leave tens of thousands of files to read back. The combined part is
        written before the small ones are removed: a kill in between leaves duplicates, which :meth:`rows` drops.
        Parts of other processes (concurrent shards) are never touched.
        """
        if rows.height == 0:
            return
        self._own_parts.append((self._write_part(rows), rows))
        if len(self._own_parts) >= COMPACT_EVERY:
            parts, self._own_parts = self._own_parts, []
            combined = pl.concat([frame for _, frame in parts], how="diagonal_relaxed")
            self._own_parts.append((self._write_part(combined), combined))
            for path, _ in parts:
                path.unlink(missing_ok=True)

    def _write_part(self, rows: pl.DataFrame) -> Path:
        path = self.dir / f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
        with atomic_path(path) as tmp:
            rows.write_parquet(tmp)
        return path

    def close(self) -> None:
        """Remove the parts once the final output has been written."""
        shutil.rmtree(self.dir, ignore_errors=True)
