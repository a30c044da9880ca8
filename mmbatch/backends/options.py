"""Filling a backend's options class from ``infer``'s flags and ``--backend-arg KEY=VALUE`` pairs.

Every field of the backend's class is taken from the ``infer`` flag of the same name when there is one (the existing
flags keep working), then from a ``--backend-arg`` (or ``MMBATCH_BACKEND_ARGS``) pair, converted to the field's
type. A key the backend does not declare is an error naming the keys it does declare.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from mmbatch.backends.base import BackendOptions
from mmbatch.backends.declaration import BackendDeclaration
from mmbatch.errors import BadInputError
from mmbatch.references import load

ARGS_VARIABLE = "MMBATCH_BACKEND_ARGS"
"""Environment variable holding ``KEY=VALUE`` pairs separated by whitespace; ``--backend-arg`` pairs come after
them, so the command line wins."""
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def options_class(declaration: BackendDeclaration) -> type[BackendOptions]:
    """The backend's options class (its module is imported now)."""
    cls: type[BackendOptions] = load(declaration.options)
    return cls


def parse_pairs(pairs: Sequence[str]) -> dict[str, str]:
    """``["KEY=VALUE", ...]`` as a dict (``-`` in keys read as ``_``; a later pair wins).

    Raises:
        BadInputError: a pair without ``=`` or with an empty key.
    """
    parsed: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise BadInputError(f"--backend-arg {pair!r}: expected KEY=VALUE (also in {ARGS_VARIABLE})")
        parsed[key.strip().replace("-", "_")] = value
    return parsed


def backend_options(declaration: BackendDeclaration, flags: Mapping[str, Any], pairs: Sequence[str]
                    ) -> BackendOptions:
    """The backend's options: flags of the same name as its fields, then the ``KEY=VALUE`` pairs.

    Raises:
        BadInputError: an unknown key (the message lists the backend's keys) or a value of the wrong type.
    """
    cls = options_class(declaration)
    fields = {field.name: field for field in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    values = {name: flags[name] for name in fields if name in flags}
    for key, text in parse_pairs(pairs).items():
        if key not in fields:
            raise BadInputError(f"--backend-arg {key}: the {declaration.name} backend has no such option; its keys "
                                f"are {', '.join(fields)}")
        values[key] = convert(text, hints[key], key)
    options = cls(**values)
    options.generation.refuse_unused(options.temperature)
    return options


def convert(text: str, hint: Any, key: str) -> Any:
    """``text`` as a value of type ``hint`` (``str``, ``int``, ``float``, ``bool``, or one of them ``| None``;
    ``none`` gives None where None is allowed).

    Raises:
        BadInputError: the text is not a value of that type.
    """
    allowed = typing.get_args(hint) if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union \
        else (hint,)
    if type(None) in allowed and text.strip().lower() in ("none", "null", ""):
        return None
    kind = next(t for t in allowed if t is not type(None))
    try:
        if kind is bool:
            lowered = text.strip().lower()
            if lowered not in _TRUE + _FALSE:
                raise ValueError(text)
            return lowered in _TRUE
        if kind in (int, float, str):
            return kind(text.strip() if kind is not str else text)
    except ValueError:
        raise BadInputError(f"--backend-arg {key}={text!r}: expected {kind.__name__}") from None
    raise BadInputError(f"--backend-arg {key}: values of type {hint} cannot be given as text")
