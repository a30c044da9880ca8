"""Resumable progress: finished rows committed in small atomic parts, keyed by ``index``.

A stage that may be killed at any moment (``infer``, ``extract``) writes each finished batch as one Parquet part
under ``OUTPUT.partial/`` (written under a temporary name, then renamed, so a part is either whole or absent). A
rerun with the same output path reads the parts, and the finished output itself when it exists, and runs only the
rows that are missing or failed. The settings of the run are recorded in ``settings.json``; a rerun whose settings
differ is refused unless forced.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.tableio import atomic_path, read_metadata, read_table

SETTINGS_FILE = "settings.json"


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
        settings_key: the metadata key under which a finished output records ``settings``.
    """

    def __init__(self, output: str | Path, settings: dict[str, Any], *, force: bool = False,
                 settings_key: str = "resume") -> None:
        self.output = Path(output)
        self.dir = partial_dir(self.output)
        self.settings = json.loads(json.dumps(settings, default=str))
        self.settings_key = settings_key
        self._open(force)

    def _open(self, force: bool) -> None:
        recorded = self._recorded_settings()
        if recorded is not None and recorded != self.settings:
            if not force:
                keys = set(recorded) | set(self.settings)
                changed = sorted(k for k in keys if recorded.get(k) != self.settings.get(k))
                raise BadInputError(
                    f"earlier progress for this output was made with other settings ({', '.join(changed)} differ); "
                    "use a new --output, or --force to discard it",
                    path=self.output,
                )
            shutil.rmtree(self.dir, ignore_errors=True)
            self.output.unlink(missing_ok=True)
        self.dir.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.dir / SETTINGS_FILE) as tmp:
            tmp.write_text(json.dumps(self.settings, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    def _recorded_settings(self) -> dict[str, Any] | None:
        settings_file = self.dir / SETTINGS_FILE
        if settings_file.is_file():
            return dict(json.loads(settings_file.read_text(encoding="utf-8")))
        if self.output.is_file():
            return dict(read_metadata(self.output).get(self.settings_key, {})) or None
        return None

    def rows(self) -> pl.DataFrame | None:
        """Every committed row (finished output first, then parts in commit order), the last copy of each index."""
        frames = []
        if self.output.is_file():
            frames.append(read_table(self.output).frame)
        frames.extend(pl.read_parquet(part) for part in sorted(self.dir.glob("part-*.parquet")))
        if not frames:
            return None
        return pl.concat(frames, how="diagonal_relaxed").unique("index", keep="last", maintain_order=True)

    def done_indices(self, *, error_column: str = "error") -> set[int]:
        """Indices of committed rows that did not fail (``error_column`` null)."""
        rows = self.rows()
        if rows is None:
            return set()
        if error_column in rows.columns:
            rows = rows.filter(pl.col(error_column).is_null())
        return set(rows["index"].to_list())

    def commit(self, rows: pl.DataFrame) -> None:
        """Record finished ``rows`` durably (one atomic part file)."""
        if rows.height == 0:
            return
        name = f"part-{_monotonic_stamp()}-{uuid.uuid4().hex[:8]}.parquet"
        with atomic_path(self.dir / name) as tmp:
            rows.write_parquet(tmp)

    def close(self) -> None:
        """Remove the parts once the final output has been written."""
        shutil.rmtree(self.dir, ignore_errors=True)


def _monotonic_stamp() -> str:
    import time

    return f"{time.time_ns():020d}"
