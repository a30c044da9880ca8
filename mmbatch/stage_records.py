"""Typed, versioned records of what a stage did, kept in its output file's metadata and read back by the next stage.

A stage writes its record with :meth:`to_metadata` under its own key (``prepare``, ``infer``); the next stage reads it
with :meth:`from_metadata` and gets typed fields instead of string paths into an untyped dict. ``record_version``
says which layout a file holds: files written before records were versioned read as version 0, with the same keys.
A record carries only what later stages read; everything else a stage records stays beside it under the same key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

RECORD_VERSION = 1
"""The layout :meth:`PrepareRecord.to_metadata` and :meth:`InferRecord.to_metadata` write."""


def _read(cls: type[Any], recorded: object) -> Any:
    """An instance of the record dataclass ``cls`` from its recorded dict (unknown keys ignored, missing ones
    defaulted, so a partial record still reads); None when nothing was recorded."""
    if not isinstance(recorded, Mapping):
        return None
    names = {item.name for item in dataclasses.fields(cls)}
    values = {name: recorded[name] for name in names if name in recorded}
    values.setdefault("record_version", 0)
    return cls(**values)


@dataclass(frozen=True)
class PrepareRecord:
    """What ``prepare`` recorded under ``prepare``: the benchmark and how its prompts were made."""

    benchmark: str | None = None
    """The benchmark's registered name (None only in files another tool wrote with a partial record)."""
    benchmark_version: str | None = None
    """The benchmark's declared version (None in files from before versions were recorded)."""
    template: str | None = None
    """Prompt template of the rows."""
    mode: str | None = None
    """``generate`` or ``likelihood`` (the rows' default; each row has its own ``mode``)."""
    media_root: str | None = None
    """Folder that relative media paths were resolved against (absolute, or relative to the prepared file)."""
    rows: int | None = None
    """Rows written."""
    groups: int | None = None
    """Distinct ``g_index`` values."""
    record_version: int = RECORD_VERSION
    """Layout of this record (0: written before records were versioned)."""

    def to_metadata(self) -> dict[str, Any]:
        """The fields as a plain dict, to merge into the ``prepare`` metadata."""
        return dataclasses.asdict(self)

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> PrepareRecord | None:
        """The record of a file's metadata; None when the file was not written by ``prepare``."""
        record: PrepareRecord | None = _read(cls, metadata.get("prepare"))
        return record


@dataclass(frozen=True)
class InferRecord:
    """What ``infer`` recorded under ``infer`` that later stages read."""

    backend: str | None = None
    """The ``--backend`` that answered (None only in files another tool wrote with a partial record)."""
    model: str | None = None
    """The model that answered."""
    likelihood_target: str = "content"
    """Likelihood rows scored the option texts (``content``) or the letters ``A.``.. (``letter``)."""
    input_fingerprint: str | None = None
    """First 16 hex digits of the prepared file's SHA-256."""
    shard: str | None = None
    """``K/N`` of the shard this file holds, or the whole file."""
    backend_options: dict[str, Any] = field(default_factory=dict)
    """The backend's options class as filled for the run."""
    record_version: int = RECORD_VERSION
    """Layout of this record (0: written before records were versioned)."""

    def to_metadata(self) -> dict[str, Any]:
        """The fields as a plain dict, to merge into the ``infer`` metadata."""
        return dataclasses.asdict(self)

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> InferRecord | None:
        """The record of a file's metadata; None when no ``infer`` wrote the file (an imported file)."""
        record: InferRecord | None = _read(cls, metadata.get("infer"))
        return record
