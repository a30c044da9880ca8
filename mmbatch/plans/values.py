"""A plan's values as stage option values, checked by the option's own declaration.

Each key of a plan section is a stage option written with underscores (``batch_size`` for ``--batch-size``). Its
value goes through the same ``type`` and ``choices`` as on the command line, so a plan accepts exactly what the
stage accepts; a bad value is a :class:`PlanError` naming the key as a path into the file
(``models[1].backend_args.dtype``).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mmbatch.errors import BadInputError


class PlanError(BadInputError):
    """A plan file's key holds a bad value, or the plan is wrong as a whole (exit 2, naming the key)."""

    def __init__(self, key: str, reason: str, *, path: Path | None = None) -> None:
        super().__init__(f"{key}: {reason}" if key else reason, path=path)
        self.key = key
        """The key's path in the plan (``models[1].backend_args.dtype``)."""
        self.detail = reason
        """What is wrong with it."""


def describe(value: Any) -> str:
    """A value as the plan file wrote it, for messages (text quoted, so an empty one shows)."""
    return repr(value)


def option_value(action: argparse.Action, value: Any, key: str, base: Path) -> Any:
    """``value`` as the option of ``action`` holds it after parsing.

    Args:
        action: The stage option's argparse action (its type, choices and kind).
        value: The plan's value (YAML scalar, list or mapping).
        key: The value's path in the plan, for messages.
        base: Folder that relative paths are read from (the plan file's).

    Raises:
        PlanError: a value the option does not take.
    """
    if action.nargs == 0:  # --flag / --no-flag options take true or false
        if not isinstance(value, bool):
            raise PlanError(key, f"expected true or false, got {describe(value)}")
        return (not value) if isinstance(action, argparse._StoreFalseAction) else value
    if isinstance(action, argparse._AppendAction):
        items = [f"{name}={item}" for name, item in value.items()] if isinstance(value, Mapping) else (
            value if isinstance(value, list) else [value])
        return [_one_value(action, item, f"{key}[{position}]", base) for position, item in enumerate(items)]
    return _one_value(action, value, key, base)


def _one_value(action: argparse.Action, value: Any, key: str, base: Path) -> Any:
    if isinstance(value, Mapping | list):
        raise PlanError(key, f"expected a single value, got {describe(value)}")
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    convert = action.type
    try:
        converted = text if convert is None else convert(text)  # type: ignore[operator]
    except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
        reason = str(exc) if isinstance(exc, argparse.ArgumentTypeError) else \
            f"expected {getattr(convert, '__name__', 'another value')}"
        raise PlanError(key, f"{describe(value)} is not a valid value ({reason})") from None
    if isinstance(converted, Path) and not converted.is_absolute():
        converted = base / converted
    if action.choices is not None and converted not in action.choices:
        choices = ", ".join(str(choice) for choice in action.choices)
        raise PlanError(key, f"{describe(value)} is not one of {choices}")
    return converted


def section_values(section: Any, key: str, actions: Mapping[str, argparse.Action], base: Path,
                   *, what: str) -> dict[str, Any]:
    """A plan section (a mapping of option names to values) as ``dest -> value``; null values are left out.

    Args:
        section: The section as the YAML gave it (a mapping, or null for none).
        key: The section's path in the plan.
        actions: The options the section may set, by ``dest``.
        base: Folder relative paths are read from.
        what: What the section's keys are, for the message naming the accepted ones.

    Raises:
        PlanError: the section is not a mapping, names an option it may not set, or holds a bad value.
    """
    if section is None:
        return {}
    mapping = require_mapping(section, key)
    values: dict[str, Any] = {}
    for name, value in mapping.items():
        dest = str(name).replace("-", "_")
        if dest not in actions:
            raise PlanError(f"{key}.{name}" if key else str(name),
                            f"not {what}; accepted: {', '.join(sorted(actions))}")
        if value is not None:
            values[dest] = option_value(actions[dest], value, f"{key}.{name}" if key else str(name), base)
    return values


def require_mapping(value: Any, key: str) -> Mapping[str, Any]:
    """``value`` when it is a mapping with text keys.

    Raises:
        PlanError: it is not.
    """
    if not isinstance(value, Mapping):
        raise PlanError(key, f"expected a mapping of names to values, got {describe(value)}")
    for name in value:
        if not isinstance(name, str):
            raise PlanError(key, f"key {describe(name)} is not a name")
    return value


def require_text(value: Any, key: str) -> str:
    """``value`` when it is non-empty text (YAML numbers are not names).

    Raises:
        PlanError: it is not.
    """
    if not isinstance(value, str) or not value.strip():
        raise PlanError(key, f"expected text, got {describe(value)}")
    return value.strip()
