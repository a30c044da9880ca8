"""What ``mmbatch list`` shows: the benchmarks, backends, rule versions and model families this install knows.

Everything is read from the declarations the stages themselves use (the benchmark and backend registries, the answer
kinds, the choice-rule eras, the family table), so the listing cannot drift from what the commands accept.
"""

from __future__ import annotations

import dataclasses
from typing import Any

SECTIONS = ("benchmarks", "backends", "rules", "families")
YES_NO_SOURCES = {"official": "the benchmark's own rule (MME's eval tool, POPE's script); VLMEvalKit's word rule for "
                              "a benchmark without one",
                  "vlmevalkit": "VLMEvalKit's YOrN_Extraction word rule, then its judge for what stays unknown"}
"""What each ``--yes-no-rule`` applies."""


def list_benchmarks() -> list[dict[str, Any]]:
    """Every registered benchmark (plug-ins included): name, answer kind, version, splits and source files."""
    from mmbatch.benchmarks.registry import BUILT_IN, registered

    built_in = {benchmark.name for benchmark in BUILT_IN}
    rows = []
    for benchmark in registered():
        kind = benchmark.kind()
        rows.append({
            "name": benchmark.name, "aliases": list(benchmark.aliases), "version": benchmark.version,
            "kind": kind.name, "kind_version": kind.version, "mode": benchmark.default_mode,
            "template": benchmark.default_template, "circular": benchmark.circular,
            "origin": "built-in" if benchmark.name in built_in else "plug-in",
            "summary": benchmark.summary,
            "sources": [{"split": source.split, "file": source.file, "url": source.url, "md5": source.md5,
                         "fetched": source.md5 is not None and source.url is not None}
                        for source in benchmark.sources],
        })
    return rows


def list_backends() -> list[dict[str, Any]]:
    """Every ``--backend``: name, what it runs, whether it draws pictures, the settings a rerun must share."""
    from mmbatch.backends.registry import BACKENDS

    return [{"name": backend.name, "summary": backend.summary, "image_generator": backend.image_generator,
             "resume_keys": list(backend.resume_keys)} for backend in BACKENDS]


def list_rules() -> dict[str, Any]:
    """The rule versions extract can apply: choice-rule eras, yes/no rules, and each answer kind's version."""
    from mmbatch.answers.letters import CHOICE_RULES, DEFAULT_CHOICE_RULES
    from mmbatch.answers.yes_no import YES_NO_RULES
    from mmbatch.benchmarks.registry import registered

    kinds: dict[str, dict[str, Any]] = {}
    for benchmark in registered():
        kind = benchmark.kind()
        entry = kinds.setdefault(kind.name, {
            "name": kind.name, "version": kind.version, "binary": kind.binary,
            "judge": kind.judge.label if kind.judge is not None else None,
            "options": {name: list(values) for name, values in kind.options.items()}, "benchmarks": []})
        entry["benchmarks"].append(benchmark.name)
    return {
        "choice_rules": [{"name": name, "source": rules.source, "default": name == DEFAULT_CHOICE_RULES}
                         for name, rules in CHOICE_RULES.items()],
        "yes_no_rules": [{"name": name, "default": name == YES_NO_RULES[0], "source": YES_NO_SOURCES[name]}
                         for name in YES_NO_RULES],
        "kinds": list(kinds.values()),
    }


def list_families() -> list[dict[str, Any]]:
    """The model families the test matrix runs (docs/models.md's "Families tested" table)."""
    from mmbatch.backends.families_tested import FAMILIES_TESTED

    return [dataclasses.asdict(family) for family in FAMILIES_TESTED]


def listing(sections: tuple[str, ...] = SECTIONS) -> dict[str, Any]:
    """The asked sections, by name (the ``--json`` document)."""
    makers = {"benchmarks": list_benchmarks, "backends": list_backends, "rules": list_rules,
              "families": list_families}
    return {section: makers[section]() for section in sections}
