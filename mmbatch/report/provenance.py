"""Where each model's numbers come from: the settings every stage recorded in the metrics file's metadata.

A leaderboard is only worth comparing when the rows say which model revision, prompt template, judge and rules,
mmbatch version and input files made them; all of it is already in the file, so the report shows it per model.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mmbatch.errors import BadInputError
from mmbatch.row_facts import file_sha256
from mmbatch.stage_records import ExtractRecord, ImportRecord, InferRecord, PrepareRecord

FIELDS = ("model", "revision", "backend", "benchmark version", "prompt template", "system prompt", "decoding",
          "judge", "choice rules", "reasoning traces", "mmbatch", "written (UTC)", "metrics SHA-256", "input SHA-256")
"""The provenance rows shown for every model, in order."""


@dataclass(frozen=True)
class Provenance:
    """The provenance of one metrics file."""

    label: str
    """The model's display name in the report."""
    source: str
    """The metrics file."""
    values: dict[str, str]
    """One text per name of :data:`FIELDS` ("–" when the file does not say)."""
    shown: dict[str, str]
    """Model name as recorded -> name shown in the report (``--label``, or a local folder's name)."""
    hits_sha256: str | None = None
    """SHA-256 of the hits file the metrics were computed with, as ``score`` recorded it (None: not recorded)."""
    warnings: tuple[str, ...] = ()
    """What the file does not record (its settings show as unknown), for the command to print."""


UNKNOWN = "unknown (not recorded)"
"""A setting the metrics file does not record: shown as such, never as a default the run may not have used."""


def provenance(path: Path, label: str, metadata: dict[str, Any], models: list[str],
               shown: dict[str, str]) -> Provenance:
    """Read what ``metadata`` (the metrics file's) records about the run that made ``path``.

    Raises:
        BadInputError: a recorded field has a type no stage writes (an edited file), naming the file.
    """
    try:
        return _provenance(path, label, metadata, models, shown)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        raise BadInputError(f"the mmbatch metadata holds a field of the wrong type ({type(exc).__name__}: {exc}); "
                            "the file was edited or written by another tool", path=path) from None


def _provenance(path: Path, label: str, metadata: dict[str, Any], models: list[str],
                shown: dict[str, str]) -> Provenance:
    prepare = PrepareRecord.from_metadata(metadata) or PrepareRecord()
    infer = InferRecord.from_metadata(metadata) or InferRecord()
    recorded_extract = ExtractRecord.from_metadata(metadata)
    extract = recorded_extract or ExtractRecord()
    imported = ImportRecord.from_metadata(metadata) or ImportRecord()
    backend = infer.backend_settings
    judge = extract.judge
    if recorded_extract is None:  # no record says whether a judge ran: "none" would be invented
        judge_text = UNKNOWN
    else:
        judge_text = "none (rules only)" if judge is None else (
            judge.model + (f" at {judge.base_url}" if judge.base_url else ""))
    rules_text = extract.choice_rules
    if extract.yes_no_rule:
        rules_text = f"{rules_text or '–'}; yes/no {extract.yes_no_rule}"
    templates = prepare.template or ", ".join(infer.prompt_templates)
    values = {
        "model": str(infer.model or imported.model or ", ".join(models) or "–"),
        "revision": str(infer.revision or backend.get("revision") or backend.get("commit") or "–"),
        "backend": str(infer.backend or (imported.format and f"imported ({imported.format})")
                       or extract.input_format or "–"),
        "benchmark version": str(prepare.benchmark_version or "–"),
        "prompt template": str(templates or "–"),
        "system prompt": _system_prompt_text(infer),
        "decoding": _decoding_text(infer),
        "judge": judge_text,
        "choice rules": str(rules_text or "–"),
        "reasoning traces": _reasoning_text(extract),
        "mmbatch": str(metadata.get("mmbatch_version") or infer.mmbatch_version or "–"),
        "written (UTC)": datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "metrics SHA-256": file_sha256(path)[:16],
        "input SHA-256": str(extract.input_sha256 or _resumed_input_digest(metadata) or "–")[:16],
    }
    score = metadata.get("score")
    hits = score.get("hits_sha256") if isinstance(score, dict) else None
    return Provenance(label, str(path), values, shown, hits if isinstance(hits, str) else None,
                      warnings=_missing_records(path, metadata, recorded_extract))


def _missing_records(path: Path, metadata: dict[str, Any], extract: ExtractRecord | None) -> tuple[str, ...]:
    """A warning when the file records no settings at all (a ``.json`` or ``.tsv`` metrics file whose sidecar was
    not copied with it) or no extraction settings."""
    if not metadata:
        sidecar = f" (its sidecar {path.name}.meta.json is missing)" if path.suffix.lower() in (".json", ".tsv") else ""
        return (f"{path}: no settings recorded{sidecar}; which judge, rules and prompts made its numbers is shown "
                "as unknown",)
    if extract is None:
        return (f"{path}: no extraction settings recorded; its judge is shown as unknown",)
    return ()


SHOWN_PROMPT_CHARS = 60
"""A longer system prompt is shown cut, with its length (the full text is in the predictions file's metadata)."""


def _system_prompt_text(infer: InferRecord) -> str:
    """The system prompt (cut to :data:`SHOWN_PROMPT_CHARS`), ``none``, or "–" for files from before the option."""
    if "system_prompt" not in infer.backend_options:
        return "–"
    prompt = infer.backend_options["system_prompt"]
    if not prompt:
        return "none"
    text = str(prompt).replace("\n", " ")
    return text if len(text) <= SHOWN_PROMPT_CHARS else f"{text[:SHOWN_PROMPT_CHARS]}... ({len(text)} characters)"


def _decoding_text(infer: InferRecord) -> str:
    """``greedy`` or ``temperature T``, then the ``--gen-arg`` settings given."""
    options = infer.backend_options
    if "temperature" not in options:
        return "–"
    temperature = float(options["temperature"])
    base = "greedy" if temperature <= 0 else f"temperature {temperature:g}"
    given = {key: value for key, value in (options.get("generation") or {}).items() if value not in (None, [])}
    return ", ".join([base, *(f"{key}={value}" for key, value in given.items())])


def _reasoning_text(extract: ExtractRecord) -> str:
    """The reasoning tags removed before matching, ``kept`` when none were, "–" for files from before."""
    if extract.reasoning_tags is None:
        return "–"
    if not extract.reasoning_tags:
        return "kept"
    return "removed: " + ", ".join(f"{opening}...{closing}" for opening, closing in extract.reasoning_tags)


def _resumed_input_digest(metadata: dict[str, Any]) -> str | None:
    """The extracted input's digest in files written before :class:`ExtractRecord` held it (its resume settings)."""
    resume = metadata.get("extract_resume")
    digest = resume.get("input_sha256") if isinstance(resume, dict) else None
    return digest if isinstance(digest, str) else None
