"""Where each model's numbers come from: the settings every stage recorded in the metrics file's metadata.

A leaderboard is only worth comparing when the rows say which model revision, prompt template, judge and rules,
mmbatch version and input files made them; all of it is already in the file, so the report shows it per model.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mmbatch.row_facts import file_sha256

FIELDS = ("model", "revision", "backend", "benchmark version", "prompt template", "judge", "choice rules",
          "mmbatch", "written (UTC)", "metrics SHA-256", "input SHA-256")
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


def provenance(path: Path, label: str, metadata: dict[str, Any], models: list[str],
               shown: dict[str, str]) -> Provenance:
    """Read what ``metadata`` (the metrics file's) records about the run that made ``path``."""
    prepare = _section(metadata, "prepare")
    infer = _section(metadata, "infer")
    extract = _section(metadata, "extract")
    resume = _section(metadata, "extract_resume")
    backend = _section(infer, "backend_settings")
    judge = extract.get("judge")
    judge_text = "none (rules only)" if not judge else (
        str(judge.get("model")) + (f" at {judge['base_url']}" if judge.get("base_url") else "")
        if isinstance(judge, dict) else str(judge))
    rules = extract.get("choice_rules")
    rules_text = rules.get("name") if isinstance(rules, dict) else rules
    if extract.get("yes_no_rule"):
        rules_text = f"{rules_text or '–'}; yes/no {extract['yes_no_rule']}"
    templates = prepare.get("template") or ", ".join(str(t) for t in infer.get("prompt_templates") or [])
    values = {
        "model": str(infer.get("model") or ", ".join(models) or "–"),
        "revision": str(infer.get("revision") or backend.get("revision") or backend.get("commit") or "–"),
        "backend": str(infer.get("backend") or extract.get("input_format") or "–"),
        "benchmark version": str(prepare.get("benchmark_version") or "–"),
        "prompt template": str(templates or "–"),
        "judge": judge_text,
        "choice rules": str(rules_text or "–"),
        "mmbatch": str(metadata.get("mmbatch_version") or infer.get("mmbatch_version") or "–"),
        "written (UTC)": datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M"),
        "metrics SHA-256": file_sha256(path)[:16],
        "input SHA-256": str(resume.get("input_sha256") or "–")[:16],
    }
    return Provenance(label, str(path), values, shown)


def _section(metadata: dict[str, Any], name: str) -> dict[str, Any]:
    value = metadata.get(name)
    return value if isinstance(value, dict) else {}
