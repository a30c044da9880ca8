"""Options shared by commands: environment-variable defaults and common argument types.

Every option ``--some-name`` also reads ``MMBATCH_SOME_NAME`` (docs/contract.md §1), so containers and Airflow tasks can
configure a stage without building a command line. An explicit command-line flag wins over the environment.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any, NamedTuple

from mmbatch.errors import BadInputError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def environment_variable(option: str) -> str:
    """``--max-new-tokens`` -> ``MMBATCH_MAX_NEW_TOKENS``."""
    return "MMBATCH_" + option.lstrip("-").upper().replace("-", "_")


OTHER_VARIABLES: dict[str, str] = {
    "MMBATCH_NUM_SHARDS": "shard count with JOB_COMPLETION_INDEX (infer)",
    "MMBATCH_JUDGE_API_KEY": "the judge's key (extract)",
    "MMBATCH_ECHO_DELAY_S": "seconds per row of the echo backend (tests)",
    "MMBATCH_BACKEND_ARGS": "KEY=VALUE backend options separated by whitespace (infer), before --backend-arg",
    "MMBATCH_DATA": "the folder of fetched benchmark files (prepare without --input)",
    "MMBATCH_DATA_MIRROR": "a base URL to fetch benchmark files from instead of their publishers",
    "MMBATCH_NO_DOCKER": "examples/pipeline.sh: run the local install",
    "MMBATCH_GPUS": "examples/airflow: GPUs per Docker host",
    "MMBATCH_HOST_DATA": "examples/airflow: the host folder mounted at /data",
    "MMBATCH_IMAGE_LIGHT": "examples/airflow: the light image tag",
    "MMBATCH_IMAGE_FULL": "examples/airflow: the full image tag",
}
"""``MMBATCH_*`` variables that are not an option's: known, so never reported as typos."""


class DeclaredOption(NamedTuple):
    """One ``add_argument`` call of a command, kept as it was made (a named tuple, not a dataclass: every command's
    start imports this module, and ``dataclasses`` costs ~10 ms of a ``--help`` wanted under 0.15 s)."""

    names: tuple[str, ...]
    """The option strings (``--max-new-tokens``)."""
    settings: dict[str, Any]
    """The keyword arguments (``type``, ``default``, ``help``...)."""
    action: argparse.Action
    """The action argparse made of it (its public ``dest`` and ``type``)."""


class DeclaringParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that remembers each option its command declares, in order.

    ``mmbatch run`` offers the stages' own options by declaring them again on its parser from these records, and
    reads each stage's defaults back with :meth:`get_default`, so one list of options per stage serves both.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.declared: list[DeclaredOption] = []
        """The command's options, in declaration order."""
        super().__init__(*args, **kwargs)
        self.declared.clear()  # ``--help``, which ArgumentParser declares itself, is not the command's

    def add_argument(self, *names: Any, **settings: Any) -> argparse.Action:
        """Declare an option as ``ArgumentParser.add_argument`` does, and remember the declaration."""
        action = super().add_argument(*names, **settings)
        self.declared.append(DeclaredOption(tuple(names), dict(settings), action))
        return action

    def declared_defaults(self) -> dict[str, Any]:
        """Each declared option's default, converted by its type when it is a string (an ``MMBATCH_*`` value), as
        argparse converts the default of an option not given."""
        defaults = {}
        for option in self.declared:
            value = self.get_default(option.action.dest)
            if isinstance(value, str) and callable(option.action.type):
                value = option.action.type(value)
            defaults[option.action.dest] = value
        return defaults


def declare_again(parser: argparse.ArgumentParser, option: DeclaredOption, *, help_prefix: str = "") -> None:
    """Declare ``option`` on another parser with no default of its own (``SUPPRESS``: an option not given leaves
    no attribute) and never required, its help behind ``help_prefix``."""
    settings = dict(option.settings)
    settings["default"] = argparse.SUPPRESS
    if "required" in settings:
        settings["required"] = False
    lazy = settings.get("lazy_help")
    if lazy is not None:  # a LazyHelpStore's help, still computed only when shown
        settings["lazy_help"] = lambda: help_prefix + lazy()
    elif settings.get("help") not in (None, argparse.SUPPRESS):
        settings["help"] = help_prefix + settings["help"]
    parser.add_argument(*option.names, **settings)


class LazyHelpStore(argparse._StoreAction):
    """A plain option whose help text comes from ``lazy_help``, a function called only when a help text is shown.

    The ``--benchmark`` help lists every registered benchmark, plug-ins included; finding the plug-ins reads the
    installed packages' entry points, which ``mmbatch --help`` and a stage that never shows this help should not pay.
    """

    def __init__(self, *args: Any, lazy_help: Callable[[], str], **kwargs: Any) -> None:
        self._lazy_help = lazy_help
        super().__init__(*args, **kwargs)

    @property
    def help(self) -> str | None:
        """The help text: ``lazy_help``'s, and whatever was added to it (``[env VARIABLE]``)."""
        return self._help if self._help is not None else self._lazy_help()

    @help.setter
    def help(self, text: str | None) -> None:
        self._help = text


class EnvironmentString(str):
    """An option's default taken from its variable: a ``str`` (argparse converts string defaults with the option's
    ``type``) that remembers the variable, so a bad value is reported under the variable's name."""

    variable: str


def apply_environment_defaults(parser: argparse.ArgumentParser) -> None:
    """Set each long option's default from its ``MMBATCH_<OPTION>`` variable, when that is set.

    A value is checked (type and choices) only when the command that owns the option is parsed, and a bad one is a
    :class:`BadInputError` naming the variable rather than a usage error about the option it stands for.

    Raises:
        BadInputError: a boolean or list variable with a bad value (those are converted here).
    """
    for action in parser._actions:
        long_names = [s for s in action.option_strings if s.startswith("--")]
        if not long_names or isinstance(action, argparse._HelpAction | argparse._VersionAction):
            continue
        variable = environment_variable(long_names[0])
        value = os.environ.get(variable)
        if value is None:
            continue
        if action.nargs == 0:  # store_true / store_false / BooleanOptionalAction
            action.default = _parse_bool(value, variable)
            if isinstance(action, argparse._StoreFalseAction):
                action.default = not action.default
        elif action.nargs in ("+", "*") or isinstance(action, argparse._AppendAction):
            action.default = [_convert(action, variable, v, action.type) for v in value.split()]
        else:
            default = EnvironmentString(value)
            default.variable = variable
            action.default = default
            action.type = _environment_checked(action)
        action.required = False
        if action.help and action.help != argparse.SUPPRESS:
            action.help += f" [env {variable}]"


def _environment_checked(action: argparse.Action) -> Callable[[str], Any]:
    """``action``'s type, checking a value from the environment itself (type and choices) under its name."""
    convert = action.type

    def checked(text: str) -> Any:
        if isinstance(text, EnvironmentString):
            return _convert(action, text.variable, text, convert)
        return text if convert is None else convert(text)  # type: ignore[operator]

    checked.__name__ = getattr(convert, "__name__", "str")
    return checked


def _convert(action: argparse.Action, variable: str, text: str, convert: Any) -> Any:
    """``text`` from ``variable`` through the option's own type ``convert`` (None: as it is), then its choices."""
    option = action.option_strings[-1]
    try:
        value = text if convert is None else convert(text)
    except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
        reason = str(exc) if isinstance(exc, argparse.ArgumentTypeError) else \
            f"expected {getattr(convert, '__name__', 'another value')}"
        raise BadInputError(f"{variable}={text!r} is not a valid {option} ({reason}); fix or unset the variable") \
            from None
    if action.choices is not None and value not in action.choices:
        choices = ", ".join(str(choice) for choice in action.choices)
        raise BadInputError(f"{variable}={text!r} is not a valid {option} (choose from {choices}); fix or unset "
                            "the variable")
    return value


def option_variables(parser: argparse.ArgumentParser) -> set[str]:
    """The ``MMBATCH_*`` variable of every long option of ``parser`` and of its commands."""
    names = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                names |= option_variables(sub)
        names.update(environment_variable(s) for s in action.option_strings if s.startswith("--"))
    return names


def unknown_variable_warnings(parser: argparse.ArgumentParser) -> list[str]:
    """A warning for each set ``MMBATCH_*`` variable that no option or feature reads (a typo is otherwise silent),
    naming the closest known one."""
    known = option_variables(parser) | set(OTHER_VARIABLES)
    warnings = []
    for name in sorted(os.environ):
        if not name.startswith("MMBATCH_") or name in known:
            continue
        import difflib  # only once a variable is unknown

        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        warnings.append(f"warning: {name} is set but no mmbatch option reads it, so it is ignored{hint}")
    return warnings


def _parse_bool(value: str, name: str) -> bool:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise BadInputError(f"{name}={value!r} is not a boolean (use 1/0, true/false); fix or unset the variable")


MAX_OPTION_INT = 2**63 - 1
"""Largest integer option: what every library below takes (a larger ``--limit`` overflowed polars)."""


def non_negative_int(text: str) -> int:
    """An argparse type: an integer >= 0 (retries, seeds), at most :data:`MAX_OPTION_INT`."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not an integer >= 0")
    if value > MAX_OPTION_INT:
        raise argparse.ArgumentTypeError(f"{text[:30]}... is too large (at most {MAX_OPTION_INT})")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0 (timeouts)."""
    value = float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a number > 0")
    return value


def non_negative_float(text: str) -> float:
    """An argparse type: a finite number >= 0 (a retry delay, a sampling temperature); NaN and inf are refused, as
    they would reach a server as invalid JSON or a sampler as a crash."""
    value = float(text)
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number >= 0")
    return value


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1, at most :data:`MAX_OPTION_INT`."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    if value > MAX_OPTION_INT:
        raise argparse.ArgumentTypeError(f"{text[:30]}... is too large (at most {MAX_OPTION_INT})")
    return value

