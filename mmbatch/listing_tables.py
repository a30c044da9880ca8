"""``mmbatch list`` as tables on the terminal (one rich table per section)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def _table(title: str, columns: list[str], rows: list[list[str]]) -> Table:
    table = Table(title=title, title_justify="left", show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def print_listing(found: dict[str, Any], console: Console) -> None:
    """Print every section of ``found`` (a :func:`mmbatch.listing.listing` document)."""
    if "benchmarks" in found:
        console.print(_table("Benchmarks", ["name", "kind", "version", "mode", "splits: official file (fetched)"], [
            [b["name"] + ("" if b["origin"] == "built-in" else " (plug-in)"), f"{b['kind']} v{b['kind_version']}",
             b["version"], b["mode"] + (", circular" if b["circular"] else ""),
             "; ".join(f"{s['split']}: {s['file']}" + ("" if s["fetched"] else " (placed by hand)")
                       for s in b["sources"]) or "–"]
            for b in found["benchmarks"]]))
    if "backends" in found:
        console.print(_table("Backends", ["name", "runs", "draws pictures", "resume settings"], [
            [b["name"], b["summary"], "yes" if b["image_generator"] else "no", ", ".join(b["resume_keys"]) or "–"]
            for b in found["backends"]]))
    if "rules" in found:
        rules = found["rules"]
        console.print(_table("Choice rules (--choice-rules)", ["era", "reproduces"], [
            [r["name"] + (" (default)" if r["default"] else ""), r["source"]] for r in rules["choice_rules"]]))
        console.print(_table("Yes/no rules (--yes-no-rule)", ["rule", "reads"], [
            [r["name"] + (" (default)" if r["default"] else ""), r["source"]] for r in rules["yes_no_rules"]]))
        console.print(_table("Answer kinds", ["kind", "version", "judge", "options (--kind-option)", "benchmarks"], [
            [k["name"], k["version"], k["judge"] or "–",
             "; ".join(f"{name}={'|'.join(values)}" for name, values in k["options"].items()) or "–",
             ", ".join(k["benchmarks"])] for k in rules["kinds"]]))
    if "families" in found:
        console.print(_table("Model families tested (hf backend)", ["family", "transformers class", "video",
                                                                     "limitations"], [
            [f["family"], f["transformers_class"], f["video"], f["limitations"] or "–"]
            for f in found["families"]]))
