"""Typed, versioned records of what a stage did, kept in its output file's metadata and read back by the next stage.

A stage writes its record with :meth:`~StageRecord.to_metadata` under its own key (``prepare``, ``infer``,
``extract``, ``score``, ``import``); the next stage, ``report`` and ``view`` read it with
:meth:`~StageRecord.from_metadata` and get typed fields instead of string paths into an untyped dict.
``record_version`` says which layout a file holds: files written before records were versioned read as version 0,
with the same keys. A record carries only what later stages read; everything else a stage records stays beside it
under the same key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

RECORD_VERSION = 1
"""The layout every record's :meth:`to_metadata` writes."""
Record = TypeVar("Record", bound="StageRecord")
"""The record class a ``from_metadata`` call reads (``typing.Self`` needs Python 3.11; mmbatch supports 3.10)."""


def _read(cls: type[Any], recorded: object) -> Any:
    """An instance of the record dataclass ``cls`` from its recorded dict (unknown keys ignored, missing ones
    defaulted, so a partial record still reads); None when nothing was recorded."""
    if not isinstance(recorded, Mapping):
        return None
    names = {item.name for item in dataclasses.fields(cls)}
    values = {name: recorded[name] for name in names if name in recorded}
    if "record_version" in names:
        values.setdefault("record_version", 0)
    return cls(**values)


@dataclass(frozen=True)
class StageRecord:
    """What every record shares: the metadata key it lives under, its layout version, how it is written and read."""

    SECTION: ClassVar[str]
    """The metadata key of the stage that writes the record."""
    record_version: int = field(default=RECORD_VERSION, kw_only=True)
    """Layout of this record (0: written before records were versioned)."""

    def to_metadata(self) -> dict[str, Any]:
        """The fields as a plain dict, to merge into the stage's metadata section."""
        return dataclasses.asdict(self)

    @classmethod
    def from_metadata(cls: type[Record], metadata: Mapping[str, Any]) -> Record | None:
        """The record of a file's metadata; None when the stage did not write the file (e.g. an imported file has
        no ``infer`` record)."""
        record: Record | None = _read(cls, metadata.get(cls.SECTION))
        return record


@dataclass(frozen=True)
class PrepareRecord(StageRecord):
    """What ``prepare`` recorded under ``prepare``: the benchmark and how its prompts were made."""

    SECTION = "prepare"

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




@dataclass(frozen=True)
class InferRecord(StageRecord):
    """What ``infer`` recorded under ``infer`` that later stages read."""

    SECTION = "infer"

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
    backend_settings: dict[str, Any] = field(default_factory=dict)
    """What the backend reported about itself: architecture, revision, dtype, decoding and scoring choices."""
    revision: str | None = None
    """``--revision`` as given (the backend's settings hold the revision it resolved)."""
    prompt_templates: list[str] = field(default_factory=list)
    """The prompt templates of the rows answered."""
    mmbatch_version: str | None = None
    """The mmbatch that answered."""




@dataclass(frozen=True)
class JudgeRecord:
    """The judge ``extract`` asked, as recorded under ``extract.judge``."""

    model: str
    """The judge model."""
    base_url: str | None = None
    """Its server (None: the official API)."""


@dataclass(frozen=True)
class ExtractRecord(StageRecord):
    """What ``extract`` recorded under ``extract`` that ``score``, ``report`` and a rerun read."""

    SECTION = "extract"

    input_format: str | None = None
    """``mmbatch`` for predictions from ``infer``, else the foreign format read (``vlmevalkit``...)."""
    input_sha256: str | None = None
    """SHA-256 of the predictions file extracted."""
    choice_rules: str | None = None
    """The era of VLMEvalKit's choice rules used (``--choice-rules``)."""
    yes_no_rule: str | None = None
    """MME's yes/no rule (``--yes-no-rule``)."""
    likelihood_reduction: str | None = None
    """How likelihood rows ranked their options."""
    judge: JudgeRecord | None = None
    """The judge, or None when the rules alone decided (``--no-judge``)."""
    clip: dict[str, Any] | None = None
    """generate-image rows: the CLIP model and how it compared pictures (None: no such rows)."""
    reasoning_tags: list[list[str]] | None = None
    """``[opening, closing]`` pairs of the reasoning traces removed before matching (empty: none removed; None in
    files written before traces were removed)."""

    def to_metadata(self) -> dict[str, Any]:
        """The fields as a plain dict, to merge into the ``extract`` metadata (``choice_rules`` stays a mapping with
        its ``name``, as files have always held it)."""
        recorded = dataclasses.asdict(self)
        recorded["choice_rules"] = {"name": self.choice_rules}
        return recorded

    @classmethod
    def from_metadata(cls: type[Record], metadata: Mapping[str, Any]) -> Record | None:
        """The record of a file's metadata; None when no ``extract`` wrote the file."""
        recorded = metadata.get(cls.SECTION)
        if not isinstance(recorded, Mapping):
            return None
        rules = recorded.get("choice_rules")
        judge = recorded.get("judge")
        record: Record = _read(cls, {
            **recorded,
            "choice_rules": rules.get("name") if isinstance(rules, Mapping) else rules,
            "judge": _read(JudgeRecord, judge) if isinstance(judge, Mapping) and judge.get("model") else None,
        })
        return record


@dataclass(frozen=True)
class ScoreRecord(StageRecord):
    """What ``score`` recorded under ``score`` in the metrics and hits files."""

    SECTION = "score"

    benchmark: str | None = None
    """``--benchmark``: only this benchmark's rows were scored (None: every benchmark of the file)."""
    subset: str = "all"
    """``all`` or ``answered`` (only rows with a ground truth were scored)."""
    bootstrap: int = 0
    """Bootstrap replicates of the intervals (0: none)."""
    coverage: dict[str, Any] | None = None
    """With ``--subset answered``: rows scored and rows left out."""




@dataclass(frozen=True)
class ImportRecord(StageRecord):
    """What ``import`` recorded under ``import``: which foreign file the predictions came from."""

    SECTION = "import"

    format: str | None = None
    """The format read (``vlmevalkit``, ``llava-jsonl``, ``mme-eval-tool``, ``seed-results``)."""
    source: str | None = None
    """The file or folder imported."""
    benchmark: str | None = None
    """The benchmark of its rows."""
    model: str | None = None
    """The model name the rows got."""
    rows: int | None = None
    """Rows imported."""


