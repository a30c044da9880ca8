"""Arithmetic on a backend's row counts (:class:`~mmbatch.backends.base.CountsRows`): nested dicts of numbers.

A backend counts over every row it ran since it was loaded. The predictions file records the counts of the rows this
run committed, so the runs take differences (what a backend counted while making some results) and add them up
(what several backends, or several result lists, counted together). Anything that is not a number (a reason's text)
is carried as the latest value.
"""

from __future__ import annotations

from typing import Any


def counts_since(now: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """``now`` minus ``before``, number by number through nested dicts (what a backend counted since ``before``)."""
    since: dict[str, Any] = {}
    for key, value in now.items():
        earlier = before.get(key)
        if isinstance(value, dict):
            since[key] = counts_since(value, earlier if isinstance(earlier, dict) else {})
        elif _is_number(value) and _is_number(earlier):
            since[key] = value - earlier
        else:
            since[key] = value
    return since


def counts_added(total: dict[str, Any], counts: dict[str, Any]) -> dict[str, Any]:
    """``total`` with the numbers of ``counts`` added (nested dicts added key by key; anything else replaced)."""
    merged = dict(total)
    for key, value in counts.items():
        before = merged.get(key)
        if isinstance(value, dict):
            merged[key] = counts_added(before if isinstance(before, dict) else {}, value)
        elif _is_number(value) and _is_number(before):
            merged[key] = before + value
        else:
            merged[key] = value
    return merged


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
