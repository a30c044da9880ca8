"""``module:attribute`` references: how declarations (benchmarks, answer kinds, backends, stages) name code that is
imported only when used, so that building the CLI or the registries imports none of it."""

from __future__ import annotations

import importlib
from typing import Any


def load(target: str) -> Any:
    """The object a ``module:attribute`` reference names, importing the module only now."""
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)
