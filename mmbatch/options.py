"""Options shared by commands: environment-variable defaults and common argument types.

Every option ``--some-name`` also reads ``MMBATCH_SOME_NAME`` (contract.md), so containers and Airflow tasks can
configure a stage without building a command line. An explicit command-line flag wins over the environment.
"""

from __future__ import annotations

import argparse
import os

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def environment_variable(option: str) -> str:
    """``--max-new-tokens`` -> ``MMBATCH_MAX_NEW_TOKENS``."""
    return "MMBATCH_" + option.lstrip("-").upper().replace("-", "_")


def apply_environment_defaults(parser: argparse.ArgumentParser) -> None:
    """Set each long option's default from its ``MMBATCH_<OPTION>`` variable, when that is set."""
    for action in parser._actions:
        long_names = [s for s in action.option_strings if s.startswith("--")]
        if not long_names or isinstance(action, argparse._HelpAction | argparse._VersionAction):
            continue
        value = os.environ.get(environment_variable(long_names[0]))
        if value is None:
            continue
        if action.nargs == 0:  # store_true / store_false / BooleanOptionalAction
            action.default = _parse_bool(value, environment_variable(long_names[0]))
            if isinstance(action, argparse._StoreFalseAction):
                action.default = not action.default
        elif action.nargs in ("+", "*"):
            action.default = [action.type(v) if action.type else v for v in value.split()]
        else:
            action.default = value  # argparse applies ``type`` to string defaults
        action.required = False
        if action.help and action.help != argparse.SUPPRESS:
            action.help += f" [env {environment_variable(long_names[0])}]"


def _parse_bool(value: str, name: str) -> bool:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise SystemExit(f"mmbatch: error: {name}={value!r} is not a boolean (use 1/0, true/false)")


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value

