"""The end-of-run summary of ``extract``: rows by method, judge calls, cache hits, tokens and estimated cost."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import polars as pl

from mmbatch.schema.columns import EXTRACT_METHODS

if TYPE_CHECKING:  # the judge's client is imported by runs that ask a judge only
    from mmbatch.extract.judge import JudgeStats

PRICES_PER_MILLION_TOKENS: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-3.5-turbo-0125": (0.50, 1.50),
    "gpt-3.5-turbo": (0.50, 1.50),
    "gpt-4-turbo": (10.00, 30.00),
}
"""OpenAI list prices in USD per million (input, output) tokens, for the cost estimate only; unknown models get none."""


def estimated_cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """Estimated price of the tokens used, or None when the model's price is not known."""
    price = PRICES_PER_MILLION_TOKENS.get(model)
    if price is None:
        return None
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000


def method_counts(methods: Iterable[str] | pl.Series) -> dict[str, int]:
    """Rows per extract method, every method listed (zeros included) in the contract's order."""
    if isinstance(methods, pl.Series):
        found = methods.value_counts()
        counts = dict(zip(found[methods.name].to_list(), found["count"].to_list(), strict=True))
    else:
        counts = Counter(methods)
    return {method: int(counts.get(method, 0)) for method in EXTRACT_METHODS}


def run_summary(methods: Iterable[str] | pl.Series, stats: JudgeStats | None, judge_model: str | None,
                skipped_in_failed_groups: int, wall_s: float, *, reused: int = 0,
                answers_naming_empty_option: int = 0, official_api: bool = True) -> dict[str, Any]:
    """The figures recorded in the output metadata and printed at the end.

    ``reused``: rows kept from an earlier run of the same command. ``answers_naming_empty_option``: rows whose
    answer is an option left empty (see :func:`mmbatch.schema.validate.answer_names_empty_option`); they can only
    be counted wrong. ``official_api``: the judge is OpenAI's API; a cost is estimated only then (a local server
    that serves a model under the name gpt-4o-mini costs nothing like it).
    """
    by_method = method_counts(methods)
    summary: dict[str, Any] = {"rows": sum(by_method.values()), "reused": reused, "by_method": by_method,
                               "not_judged_group_failed": skipped_in_failed_groups, "wall_s": round(wall_s, 3),
                               "answers_naming_empty_option": answers_naming_empty_option}
    if stats is not None and judge_model is not None:
        summary["judge"] = {
            **asdict(stats),
            "judge_s": round(stats.judge_s, 3),
            "estimated_cost_usd": estimated_cost_usd(judge_model, stats.prompt_tokens, stats.completion_tokens)
            if official_api else None,
            "official_api": official_api,
        }
    return summary


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The summary as a few plain lines for the terminal or a log."""
    by_method = ", ".join(f"{name} {count}" for name, count in summary["by_method"].items() if count)
    reused = f", {summary['reused']} reused from earlier progress" if summary.get("reused") else ""
    lines = [f"extract: {summary['rows']} rows ({by_method}) in {summary['wall_s']:.1f} s{reused}"]
    if summary["not_judged_group_failed"]:
        lines.append(f"  {summary['not_judged_group_failed']} rows not sent to the judge: their circular group "
                     "had already failed")
    if summary.get("answers_naming_empty_option"):
        lines.append(f"  {summary['answers_naming_empty_option']} rows whose answer names an empty option: no "
                     "answer can be right, they count wrong (as in VLMEvalKit)")
    judge = summary.get("judge")
    if judge is not None:
        cost = judge["estimated_cost_usd"]
        if not judge.get("official_api", True):
            cost_text = "no cost estimate (not the official API)"
        else:
            cost_text = "cost unknown for this model" if cost is None else f"estimated cost ${cost:.4f}"
        lines.append(f"  judge: {judge['calls']} calls in {judge['judge_s']:.1f} s, {judge['cache_hits']} cache hits, "
                     f"{judge['prompt_tokens']} + {judge['completion_tokens']} tokens, {cost_text}"
                     + (f", {judge['failed_calls']} failed" if judge["failed_calls"] else ""))
    return lines
